"""The scoreboard: one ranked SQL aggregate over the progress rows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Numeric, and_, case, cast, func, select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.instructor._scope import get_quiz, live_exercises
from quizapp.models import (
    Exercise,
    Progress,
    Quiz,
    User,
)
from quizapp.models_instructor import Excusal

SCOREBOARD_SORTS = ("rank", "name", "points", "solved", "attempts", "last")


@dataclass
class ScoreboardRow:
    """One student on the scoreboard.

    ``reached_at`` is when the student's current total was reached (the latest
    ``best_reached_at`` among exercises with points): the tie-break, and the "last improvement".
    """

    rank: int
    user_id: int
    username: str
    display_name: str
    points: float
    solved: int
    attempts: int
    reached_at: datetime | None

    @property
    def name(self) -> str:
        return self.display_name or self.username


@dataclass
class Scoreboard:
    """A page of the scoreboard of a quiz (``quiz_id``) or of the course (``quiz_id=None``)."""

    rows: list[ScoreboardRow]
    total: int
    page: int
    per_page: int
    sort: str
    descending: bool
    quiz_id: str | None
    points_available: float

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.per_page)) if self.per_page else 1


def _scoreboard_query(quiz_id: str | None) -> Any:
    """The ranked scoreboard as one SELECT: progress rows aggregated per student, ranked by a
    window function (points desc, then the time the total was reached asc, then username)."""
    in_scope = [
        Exercise.archived.is_(False),
        Quiz.archived.is_(False),
        Excusal.id.is_(None),
    ]
    if quiz_id is not None:
        in_scope.append(Exercise.quiz_id == quiz_id)
    # Aggregate the progress rows per student first (one pass over progress in user order), then
    # join the students: joining students to the raw rows made SQLite build an automatic index over
    # all progress rows on every call.
    per_user = (
        select(
            Progress.user_id.label("user_id"),
            func.sum(Progress.best_points).label("points_sum"),
            func.count(Progress.solved_at).label("solved"),
            func.sum(Progress.attempts_used).label("attempts"),
            func.max(case((Progress.best_points > 0, Progress.best_reached_at), else_=None)).label(
                "reached_at"
            ),
        )
        .join(Exercise, Exercise.id == Progress.exercise_id)
        .join(Quiz, Quiz.id == Exercise.quiz_id)
        .outerjoin(
            Excusal,
            and_(Excusal.user_id == Progress.user_id, Excusal.exercise_id == Progress.exercise_id),
        )
        .where(*in_scope)
        .group_by(Progress.user_id)
        .subquery("p")
    )
    # Rounded to 6 decimals so that float sums in a different order still tie; NUMERIC because
    # PostgreSQL has round(numeric, int) only.
    points = func.round(cast(func.coalesce(per_user.c.points_sum, 0.0), Numeric(24, 8)), 6)
    agg = (
        select(
            User.id.label("user_id"),
            User.username.label("username"),
            User.username_key.label("username_key"),
            User.display_name.label("display_name"),
            points.label("points"),
            func.coalesce(per_user.c.solved, 0).label("solved"),
            func.coalesce(per_user.c.attempts, 0).label("attempts"),
            per_user.c.reached_at.label("reached_at"),
        )
        .select_from(User)
        .outerjoin(per_user, per_user.c.user_id == User.id)
        .where(User.role == "student")
        .subquery("agg")
    )
    rank = func.row_number().over(
        order_by=(
            agg.c.points.desc(),
            agg.c.reached_at.is_(None).asc(),
            agg.c.reached_at.asc(),
            agg.c.username_key.asc(),
            agg.c.user_id.asc(),
        )
    )
    return select(agg, rank.label("rank"), func.count().over().label("total")).subquery("ranked")


def scoreboard(
    session: Session,
    *,
    quiz_id: str | None = None,
    sort: str = "rank",
    descending: bool = False,
    page: int = 1,
    per_page: int = 50,
    only_user_id: int | None = None,
) -> Scoreboard:
    """One page of the scoreboard: one SQL query over the progress rows (no submission scan).

    Rank: points descending; ties go to whoever reached their total first (the latest
    ``progress.best_reached_at`` of their exercises with points, earlier wins), then username.
    ``sort`` is one of ``SCOREBOARD_SORTS`` (``name``: display name/username); the rank does not
    depend on it.  ``page`` is 1-based; ``per_page`` in 1..500.  ``only_user_id`` returns just
    that student's row (with their rank in the whole class).  Students without any progress are
    listed with 0 points.  Raises ``services.BadRequest`` for an unknown sort or bad page size,
    ``services.NotFound`` for an unknown quiz.
    """
    if sort not in SCOREBOARD_SORTS:
        raise services.BadRequest(
            f"Unknown sort '{sort}'; use one of: {', '.join(SCOREBOARD_SORTS)}."
        )
    if not 1 <= per_page <= 500:
        raise services.BadRequest("The page size must be between 1 and 500.")
    page = max(1, int(page))
    if quiz_id is not None:
        get_quiz(session, quiz_id)
    ranked = _scoreboard_query(quiz_id)
    name_col = func.coalesce(func.nullif(ranked.c.display_name, ""), ranked.c.username)
    column = {
        "rank": ranked.c.rank,
        "name": func.lower(name_col),
        "points": ranked.c.points,
        "solved": ranked.c.solved,
        "attempts": ranked.c.attempts,
        "last": ranked.c.reached_at,
    }[sort]
    order = [column.desc() if descending else column.asc()]
    if sort == "last":  # students who never scored last, either way and on every database
        order.insert(0, ranked.c.reached_at.is_(None).asc())
    if sort != "rank":
        order.append(ranked.c.rank.asc())
    stmt = select(ranked).order_by(*order)
    if only_user_id is not None:
        stmt = stmt.where(ranked.c.user_id == only_user_id)
    else:
        stmt = stmt.limit(per_page).offset((page - 1) * per_page)
    result = session.execute(stmt).all()
    total = int(result[0].total) if result else _count_students(session)
    rows = [
        ScoreboardRow(
            rank=int(r.rank),
            user_id=int(r.user_id),
            username=r.username,
            display_name=r.display_name or "",
            points=float(r.points or 0.0),
            solved=int(r.solved or 0),
            attempts=int(r.attempts or 0),
            reached_at=_as_utc(r.reached_at),
        )
        for r in result
    ]
    available = sum(e.points for e in live_exercises(session, quiz_id))
    return Scoreboard(rows, total, page, per_page, sort, descending, quiz_id, float(available))


def _count_students(session: Session) -> int:
    return int(session.scalar(select(func.count(User.id)).where(User.role == "student")) or 0)


def _as_utc(value: Any) -> datetime | None:
    """A datetime read through an aggregate (SQLite gives a string, unzoned) as aware UTC."""
    from datetime import UTC

    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return None
