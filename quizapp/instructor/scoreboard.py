"""The scoreboard: one ranked query over the students' totals rows (``score_totals``, the
per-student aggregate of their progress rows kept by ``quizapp.services.totals``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Numeric, and_, cast, func, select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.instructor._scope import get_quiz, live_exercises
from quizapp.models import ScoreTotal, User
from quizapp.services import totals

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
    """The ranked scoreboard as one SELECT: every student LEFT JOIN their ``score_totals`` row of
    the scope (the course, or ``quiz_id``), ranked by a window function (points desc, then the
    time the total was reached asc, then username).

    The totals rows are the per-student aggregate of the live, non-excused progress rows
    (``quizapp.services.totals``), so this reads one row per student (index
    ``uq_score_totals_scope_user_id``) instead of aggregating all their progress rows.
    """
    scope = totals.COURSE if quiz_id is None else quiz_id
    # Rounded to 6 decimals so that float sums in a different order still tie; NUMERIC because
    # PostgreSQL has round(numeric, int) only.
    points = func.round(cast(func.coalesce(ScoreTotal.points, 0.0), Numeric(24, 8)), 6)
    agg = (
        select(
            User.id.label("user_id"),
            User.username.label("username"),
            User.username_key.label("username_key"),
            User.display_name.label("display_name"),
            points.label("points"),
            func.coalesce(ScoreTotal.solved, 0).label("solved"),
            func.coalesce(ScoreTotal.attempts, 0).label("attempts"),
            ScoreTotal.reached_at.label("reached_at"),
        )
        .select_from(User)
        .outerjoin(ScoreTotal, and_(ScoreTotal.user_id == User.id, ScoreTotal.scope == scope))
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
    """One page of the scoreboard: one SQL query over the students' totals rows (no progress or
    submission scan; ``totals.ensure_current`` first rebuilds them, committing, if the live
    exercises changed since they were computed).

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
    live = live_exercises(session)
    if totals.ensure_current(session, live):
        live = live_exercises(session)  # reloaded after the rebuild's commit
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
    available = sum(e.points for e in live if quiz_id is None or e.quiz_id == quiz_id)
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
