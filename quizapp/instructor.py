"""The instructor's use cases: scoreboard, gradebook (CSV), statistics, regrade, roster, excusals.

Pure of Flask like ``quizapp.services``: every function takes a SQLAlchemy ``Session`` and plain
values, so the ``/instructor`` pages, the ``quizapp`` CLI and the tests share one implementation.
Writes use ``services.begin_write`` (``BEGIN IMMEDIATE`` on SQLite) and commit before returning,
or roll back entirely on error.

Definitions used throughout (the words of ``/work/shared/design.md``):

- a student's **points** on an exercise are ``progress.best_points`` (best score of variant 1 x the
  exercise's points); practice variants never count;
- an **excused** exercise (table ``excusals``) counts neither earned nor available points for that
  student, in the scoreboard and in the gradebook;
- only users with the role ``student`` appear in scoreboards, gradebooks and statistics.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import math
import re
import secrets
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import Numeric, and_, case, cast, func, select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.models import (
    USERNAME_MAX,
    Exercise,
    Progress,
    Quiz,
    Submission,
    User,
    Variant,
    username_key,
    utcnow,
)
from quizapp.models_instructor import Excusal, PasswordReset, Regrade, VerdictHistory

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Course configuration (exercises/course.yaml)

COURSE_FILE = "course.yaml"


class CourseConfigError(ValueError):
    """``course.yaml`` is unreadable or invalid; ``str()`` is ``file:line: message``."""


class CourseConfig(BaseModel):
    """The course-wide settings of ``exercises/course.yaml``.

    ``weights`` maps quiz ids (folder names) to non-negative relative weights of the course total,
    e.g. ``{01-linear-systems: 30, 05-attention: 70}``.  Quizzes not listed weigh 0.  Without
    ``weights`` every quiz weighs its points available, i.e. the course total is the student's
    points over the points available (equal weight by points).
    """

    model_config = ConfigDict(extra="forbid")

    title: str | None = None
    weights: dict[str, float] | None = Field(default=None)

    def weight_of(self, quiz_id: str, points_available: float) -> float:
        """The weight of ``quiz_id`` for a student with ``points_available`` on it."""
        if self.weights is None:
            return float(points_available)
        return float(self.weights.get(quiz_id, 0.0))


def parse_course_config(text: str, file: str = COURSE_FILE) -> CourseConfig:
    """Parse the text of ``course.yaml``.

    Raises ``CourseConfigError`` (``file:line: message``) for YAML syntax errors, unknown keys,
    non-numeric or negative weights, or weights summing to 0.
    """
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f"{mark.line + 1}:" if mark is not None else ""
        raise CourseConfigError(f"{file}:{line} invalid YAML: {err}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CourseConfigError(f"{file}: the file must be a mapping (key: value lines)")
    try:
        config = CourseConfig.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        line = _line_of(text, str(first["loc"][0]) if first["loc"] else "")
        raise CourseConfigError(f"{file}:{line}: {where}: {first['msg']}") from None
    if config.weights is not None:
        for quiz_id, weight in config.weights.items():
            if not math.isfinite(weight) or weight < 0:
                line = _line_of(text, quiz_id)
                raise CourseConfigError(
                    f"{file}:{line}: weights.{quiz_id}: a weight must be a number >= 0, "
                    f"not {weight}"
                )
        if config.weights and sum(config.weights.values()) <= 0:
            raise CourseConfigError(f"{file}:{_line_of(text, 'weights')}: the weights sum to 0")
    return config


def _line_of(text: str, key: str) -> int:
    """1-based line of the first ``key:`` in ``text`` (1 when not found)."""
    for i, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith(f"{key}:") or line.strip().startswith(f"{key} :"):
            return i
    return 1


def course_config_warnings(config: CourseConfig, quiz_ids: Iterable[str]) -> list[str]:
    """Problems that do not stop the gradebook: weights of quizzes that do not exist (a typo
    in ``course.yaml`` would otherwise silently weigh nothing), and quizzes left without a weight."""
    if config.weights is None:
        return []
    known = set(quiz_ids)
    out = [
        f"{COURSE_FILE}: weights.{q}: there is no quiz '{q}' (known: {', '.join(sorted(known))})"
        for q in config.weights
        if q not in known
    ]
    out += [
        f"{COURSE_FILE}: quiz '{q}' has no weight, so it does not count in the course total"
        for q in sorted(known - set(config.weights))
    ]
    return out


def load_course_config(root: Path | str | None) -> CourseConfig:
    """``<root>/course.yaml`` parsed; the default (weights by points) when the file is absent.

    Raises ``CourseConfigError`` for an invalid file.
    """
    if root is None:
        return CourseConfig()
    path = Path(root) / COURSE_FILE
    if not path.is_file():
        return CourseConfig()
    return parse_course_config(path.read_text(encoding="utf-8"), str(path))


# --------------------------------------------------------------------------------------------
# Scope helpers


def _live_exercises(session: Session, quiz_id: str | None = None) -> list[Exercise]:
    """Non-archived exercises of non-archived quizzes (of ``quiz_id`` only if given), in order."""
    stmt = (
        select(Exercise)
        .join(Quiz, Quiz.id == Exercise.quiz_id)
        .where(Exercise.archived.is_(False), Quiz.archived.is_(False))
        .order_by(Quiz.position, Quiz.id, Exercise.position, Exercise.id)
    )
    if quiz_id is not None:
        stmt = stmt.where(Exercise.quiz_id == quiz_id)
    return list(session.scalars(stmt))


def live_quizzes(session: Session) -> list[Quiz]:
    """Non-archived quizzes in course order."""
    return list(
        session.scalars(
            select(Quiz).where(Quiz.archived.is_(False)).order_by(Quiz.position, Quiz.id)
        )
    )


def get_quiz(session: Session, quiz_id: str) -> Quiz:
    """The non-archived quiz ``quiz_id``; raises ``services.NotFound``."""
    quiz = session.get(Quiz, quiz_id) if isinstance(quiz_id, str) else None
    if quiz is None or quiz.archived:
        raise services.NotFound(f"There is no quiz '{quiz_id}'.")
    return quiz


def _students(session: Session) -> list[User]:
    return list(
        session.scalars(
            select(User).where(User.role == "student").order_by(User.username_key, User.id)
        )
    )


# --------------------------------------------------------------------------------------------
# Scoreboard

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
    rows = (
        select(
            Progress.user_id,
            Progress.best_points,
            Progress.solved_at,
            Progress.attempts_used,
            Progress.best_reached_at,
        )
        .join(Exercise, Exercise.id == Progress.exercise_id)
        .join(Quiz, Quiz.id == Exercise.quiz_id)
        .outerjoin(
            Excusal,
            and_(Excusal.user_id == Progress.user_id, Excusal.exercise_id == Progress.exercise_id),
        )
        .where(*in_scope)
        .subquery("p")
    )
    # Rounded to 6 decimals so that float sums in a different order still tie; NUMERIC because
    # PostgreSQL has round(numeric, int) only.
    points = func.round(cast(func.coalesce(func.sum(rows.c.best_points), 0.0), Numeric(24, 8)), 6)
    reached = func.max(case((rows.c.best_points > 0, rows.c.best_reached_at), else_=None))
    agg = (
        select(
            User.id.label("user_id"),
            User.username.label("username"),
            User.username_key.label("username_key"),
            User.display_name.label("display_name"),
            points.label("points"),
            func.count(rows.c.solved_at).label("solved"),
            func.coalesce(func.sum(rows.c.attempts_used), 0).label("attempts"),
            reached.label("reached_at"),
        )
        .select_from(User)
        .outerjoin(rows, rows.c.user_id == User.id)
        .where(User.role == "student")
        .group_by(User.id, User.username, User.username_key, User.display_name)
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
    available = sum(e.points for e in _live_exercises(session, quiz_id))
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


# --------------------------------------------------------------------------------------------
# Gradebook


@dataclass
class GradebookCell:
    """One student x exercise cell: ``points`` (None: never attempted), or excused."""

    points: float | None
    excused: bool = False
    score: float | None = None


@dataclass
class QuizTotal:
    """A student's points on one quiz, excused exercises left out of ``available``."""

    earned: float
    available: float

    @property
    def percent(self) -> float | None:
        return 100.0 * self.earned / self.available if self.available > 0 else None


@dataclass
class GradebookRow:
    """One student's row of the gradebook."""

    user_id: int
    username: str
    display_name: str
    email: str
    cells: dict[str, GradebookCell]
    quiz_totals: dict[str, QuizTotal]
    course_percent: float | None

    @property
    def earned(self) -> float:
        return sum(t.earned for t in self.quiz_totals.values())

    @property
    def available(self) -> float:
        return sum(t.available for t in self.quiz_totals.values())


@dataclass
class GradebookQuiz:
    id: str
    title: str
    exercises: list[Exercise]
    points: float
    weight: float | None  # from course.yaml; None when weighting by points


@dataclass
class Gradebook:
    """Students x exercises with per-quiz totals and the weighted course total (percent)."""

    quizzes: list[GradebookQuiz]
    rows: list[GradebookRow]
    weighted_by: str  # "course.yaml" or "points"

    @property
    def exercises(self) -> list[Exercise]:
        return [e for q in self.quizzes for e in q.exercises]


def course_percent(
    totals: Mapping[str, QuizTotal], config: CourseConfig | None = None
) -> float | None:
    """The weighted course total in percent: ``sum_q w_q * earned_q / available_q / sum_q w_q``
    over the quizzes with points available to the student (a quiz the student is wholly excused
    from drops out and the other weights are renormalized).  Without ``weights`` in the course
    configuration, ``w_q = available_q`` (so it is total earned / total available).  None when no
    quiz with a positive weight has points available."""
    config = config or CourseConfig()
    num = den = 0.0
    for quiz_id, t in totals.items():
        if t.available <= 0:
            continue
        w = config.weight_of(quiz_id, t.available)
        if w <= 0:
            continue
        num += w * t.earned / t.available
        den += w
    return 100.0 * num / den if den > 0 else None


def gradebook(
    session: Session, *, quiz_id: str | None = None, config: CourseConfig | None = None
) -> Gradebook:
    """The gradebook of every student over the live exercises (of ``quiz_id`` only if given).

    Three queries (exercises, progress rows, excusals) whatever the class size.  A cell is the
    student's ``best_points``; an excused cell counts neither earned nor available points.
    Raises ``services.NotFound`` for an unknown quiz.
    """
    config = config or CourseConfig()
    if quiz_id is not None:
        get_quiz(session, quiz_id)
    exercises = _live_exercises(session, quiz_id)
    quizzes: dict[str, GradebookQuiz] = {}
    for ex in exercises:
        q = quizzes.get(ex.quiz_id)
        if q is None:
            weight = None if config.weights is None else config.weight_of(ex.quiz_id, 0)
            q = quizzes[ex.quiz_id] = GradebookQuiz(ex.quiz_id, ex.quiz.title, [], 0.0, weight)
        q.exercises.append(ex)
        q.points += float(ex.points)
    ids = [e.id for e in exercises]
    progress: dict[tuple[int, str], Progress] = {}
    if ids:
        for p in session.scalars(
            select(Progress)
            .join(User, User.id == Progress.user_id)
            .where(User.role == "student", Progress.exercise_id.in_(ids))
        ):
            progress[(p.user_id, p.exercise_id)] = p
    excused = {
        (e.user_id, e.exercise_id)
        for e in session.scalars(select(Excusal).where(Excusal.exercise_id.in_(ids)))
    }
    rows = []
    for user in _students(session):
        cells: dict[str, GradebookCell] = {}
        totals = {q: QuizTotal(0.0, 0.0) for q in quizzes}
        for ex in exercises:
            p = progress.get((user.id, ex.id))
            attempted = p is not None and (p.attempts_used or 0) > 0
            points = float(p.best_points) if attempted and p is not None else None
            score = float(p.best_score) if attempted and p is not None else None
            if (user.id, ex.id) in excused:
                cells[ex.id] = GradebookCell(points, excused=True, score=score)
                continue
            cells[ex.id] = GradebookCell(points, score=score)
            totals[ex.quiz_id].earned += points or 0.0
            totals[ex.quiz_id].available += float(ex.points)
        for t in totals.values():
            t.earned = round(t.earned, 6)
            t.available = round(t.available, 6)
        rows.append(
            GradebookRow(
                user_id=user.id,
                username=user.username,
                display_name=user.display_name or "",
                email=user.email or "",
                cells=cells,
                quiz_totals=totals,
                course_percent=course_percent(totals, config),
            )
        )
    return Gradebook(
        list(quizzes.values()), rows, "points" if config.weights is None else "course.yaml"
    )


#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str | float | int:
    """A value as a CSV cell, safe against formula injection.

    Numbers stay numbers (a negative number is data, not a formula).  A text starting with
    ``= + - @``, a tab or a carriage return gets a leading apostrophe, which spreadsheets show as
    text (OWASP's recommendation for CSV injection).  None becomes an empty cell.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return _number(value)
    text = str(value)
    if text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


def _number(value: float) -> float | int:
    """Round to 4 decimals; integral values as ints (``10`` not ``10.0``)."""
    v = round(float(value), 4)
    return int(v) if v == int(v) else v


def _fmt_points(p: float) -> str:
    v = _number(p)
    return str(v)


#: The cell text of an excused exercise (Canvas's gradebook import reads ``EX`` as excused).
EXCUSED = "EX"


def gradebook_table(gb: Gradebook) -> list[list[Any]]:
    """The gradebook as rows of cells (header first), one row per student.

    Columns: ``username``, ``display_name``, ``email``, one column per exercise
    (``<exercise id> (<points>)``: best points, empty if never attempted, ``EX`` if excused),
    one per quiz (``<quiz id> total (<points>)``: earned points), ``<quiz id> %``, then
    ``course total %`` (weighted, see :func:`course_percent`).
    """
    header: list[Any] = ["username", "display_name", "email"]
    for ex in gb.exercises:
        header.append(f"{ex.id} ({_fmt_points(ex.points)})")
    for q in gb.quizzes:
        header.append(f"{q.id} total ({_fmt_points(q.points)})")
        header.append(f"{q.id} %")
    header.append("course total %")
    table = [header]
    for row in gb.rows:
        out: list[Any] = [row.username, row.display_name, row.email]
        for ex in gb.exercises:
            cell = row.cells[ex.id]
            out.append(EXCUSED if cell.excused else cell.points)
        for q in gb.quizzes:
            t = row.quiz_totals[q.id]
            out.append(t.earned)
            out.append(None if t.percent is None else round(t.percent, 2))
        out.append(None if row.course_percent is None else round(row.course_percent, 2))
        table.append(out)
    return table


def write_csv(table: Iterable[Sequence[Any]]) -> str:
    """CSV text (RFC 4180, CRLF line ends) of ``table``, every cell through :func:`csv_cell`."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    for row in table:
        writer.writerow([csv_cell(v) for v in row])
    return buf.getvalue()


def gradebook_csv(gb: Gradebook) -> str:
    """The gradebook as CSV text (see :func:`gradebook_table` for the columns)."""
    return write_csv(gradebook_table(gb))


# --------------------------------------------------------------------------------------------
# Excusals


def excuse(
    session: Session,
    user_id: int,
    exercise_id: str,
    *,
    reason: str = "",
    by: User | None = None,
) -> Excusal:
    """Excuse student ``user_id`` from ``exercise_id`` (idempotent; updates the reason); commit.

    Raises ``services.NotFound`` for an unknown student or exercise.
    """
    user = session.get(User, user_id)
    if user is None or user.role != "student":
        raise services.NotFound("There is no such student.")
    exercise = services.get_exercise(session, exercise_id, include_archived=True)
    ex_id, by_id = exercise.id, by.id if by is not None else None
    services.begin_write(session)
    row = session.scalar(
        select(Excusal).where(Excusal.user_id == user_id, Excusal.exercise_id == ex_id)
    )
    if row is None:
        row = Excusal(user_id=user_id, exercise_id=ex_id, created_by_id=by_id)
        session.add(row)
    row.reason = (reason or "").strip()[:500]
    session.commit()
    return row


def unexcuse(session: Session, user_id: int, exercise_id: str) -> bool:
    """Remove the excusal of ``user_id`` from ``exercise_id``; True if there was one.  Commits."""
    services.begin_write(session)
    row = session.scalar(
        select(Excusal).where(Excusal.user_id == user_id, Excusal.exercise_id == exercise_id)
    )
    if row is None:
        session.rollback()
        return False
    session.delete(row)
    session.commit()
    return True


def excused_exercises(session: Session, user_id: int) -> dict[str, Excusal]:
    """Exercise id -> excusal, for one student."""
    return {
        e.exercise_id: e for e in session.scalars(select(Excusal).where(Excusal.user_id == user_id))
    }


# --------------------------------------------------------------------------------------------
# Statistics

#: Score distribution bins: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0) and exactly 1 (full marks).
SCORE_BINS = 11


@dataclass
class ParameterValueStats:
    value: str
    students: int
    solved: int
    mean_best_score: float

    @property
    def percent_solved(self) -> float:
        return 100.0 * self.solved / self.students if self.students else 0.0


@dataclass
class ParameterBreakdown:
    """Solve rate by one parameter of the variants (e.g. ``n`` = matrix size, or the answer
    shape), listed only when the class's variants differ in it."""

    name: str
    values: list[ParameterValueStats]


@dataclass
class ExerciseStats:
    """Per-exercise statistics over students (variant 1, graded attempts)."""

    exercise: Exercise
    tried: int
    mean_best_score: float | None
    solved: int
    mean_attempts_to_solve: float | None
    histogram: list[tuple[str, int]]
    mistakes: list[tuple[str, int]]
    wrong_answers: list[tuple[str, int]]
    parameters: list[ParameterBreakdown]
    constant_parameters: dict[str, str]
    submissions: int

    @property
    def percent_solved(self) -> float | None:
        return 100.0 * self.solved / self.tried if self.tried else None


def score_bin(score: float) -> int:
    """The histogram bin of ``score`` in [0, 1]: ``floor(10 * score)`` for scores below 1
    (0-9), and 10 for full marks."""
    s = min(1.0, max(0.0, float(score)))
    if s >= 1.0:
        return 10
    return min(9, int(math.floor(10 * s + 1e-9)))


def score_bin_labels() -> list[str]:
    return [f"{10 * i}–{10 * i + 9}%" for i in range(10)] + ["100%"]


def normalize_answer_value(parsed: Any, digits: int = 4) -> str | None:
    """A parsed answer as comparable text: each number to ``digits`` significant digits.

    ``3.14159 -> "3.142"``; ``[1, 2] -> "(1, 2)"``; ``[[1, 2], [3, 4]] -> "[[1, 2], [3, 4]]"``.
    None when ``parsed`` is not numeric.
    """
    try:
        arr = np.asarray(parsed, dtype=float)
    except (TypeError, ValueError):
        return None
    if arr.ndim > 2 or arr.size > 400:
        return None

    def num(v: float) -> str:
        if not math.isfinite(v):
            return str(v)
        if v == 0:
            return "0"
        text = f"{v:.{digits}g}"
        return "0" if text in ("-0", "0") else text

    if arr.ndim == 0:
        return num(float(arr))
    if arr.ndim == 1:
        return "(" + ", ".join(num(float(v)) for v in arr) + ")"
    return "[" + ", ".join("[" + ", ".join(num(float(v)) for v in r) + "]" for r in arr) + "]"


#: Names of integer prompt values that describe a variant's size (not its random numbers).
SIZE_PARAMETERS = frozenset(
    {"n", "m", "d", "d_k", "d_v", "size", "rows", "cols", "columns", "heads", "count", "tokens"}
)


def variant_parameters(bank_variant: Any) -> dict[str, str]:
    """The parameters of a generated variant worth a breakdown: the answer's shape
    (``"answer shape": "3×3"``) and the integer size values the kind exposes to the prompt
    (names in ``SIZE_PARAMETERS``, e.g. ``n``, ``d``, ``heads``), as text."""
    out: dict[str, str] = {}
    form = getattr(bank_variant, "answer_form", None)
    shape = getattr(form, "shape", None)
    if shape:
        out["answer shape"] = "×".join(str(int(s)) for s in shape)
    for name, value in sorted((getattr(bank_variant, "values", None) or {}).items()):
        if name not in SIZE_PARAMETERS or isinstance(value, bool | np.bool_):
            continue
        if isinstance(value, int | np.integer):
            out[name] = str(int(value))
    return out


def exercise_statistics(session: Session, exercise_id: str, *, top: int = 10) -> ExerciseStats:
    """Statistics of one exercise over the students.

    - ``tried``: students with a graded attempt on variant 1; ``mean_best_score`` over them;
      ``solved`` of them; ``mean_attempts_to_solve``: the mean attempt number of each solver's first
      correct answer (all from progress rows and one aggregate over submissions);
    - ``histogram``: students per best-score bin (:func:`score_bin`);
    - ``mistakes``: named mistakes over graded submissions (identical resubmissions skipped),
      most frequent first; ``wrong_answers``: incorrect/partial answers normalized by
      :func:`normalize_answer_value`, most frequent first;
    - ``parameters``: solve rate per value of each variant parameter that differs between the
      students' variants (see :func:`variant_parameters`).

    Raises ``services.NotFound`` for an unknown exercise.
    """
    exercise = services.get_exercise(session, exercise_id, include_archived=True)
    student = select(User.id).where(User.role == "student").scalar_subquery()
    progress = list(
        session.scalars(
            select(Progress).where(
                Progress.exercise_id == exercise.id,
                Progress.attempts_used > 0,
                Progress.user_id.in_(student),
            )
        )
    )
    tried = len(progress)
    solved_rows = [p for p in progress if p.solved_at is not None]
    histogram_counts = [0] * SCORE_BINS
    for p in progress:
        histogram_counts[score_bin(p.best_score)] += 1
    first_correct = (
        select(
            Submission.user_id,
            func.min(Submission.attempt_number).label("n"),
        )
        .join(Variant, Variant.id == Submission.variant_id)
        .where(
            Submission.exercise_id == exercise.id,
            Submission.used_attempt.is_(True),
            Submission.status == "correct",
            Variant.variant_number == 1,
            Submission.user_id.in_(student),
        )
        .group_by(Submission.user_id)
        .subquery()
    )
    mean_attempts = session.scalar(select(func.avg(first_correct.c.n)))

    mistakes: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    graded = 0
    for status, codes, parsed, raw in session.execute(
        select(
            Submission.status, Submission.mistakes, Submission.parsed, Submission.raw_answer
        ).where(
            Submission.exercise_id == exercise.id,
            Submission.used_attempt.is_(True),
            Submission.duplicate_of_id.is_(None),
            Submission.user_id.in_(student),
        )
    ):
        graded += 1
        for code in codes or []:
            mistakes[str(code)] += 1
        if status in ("incorrect", "partial"):
            key = normalize_answer_value(parsed) if parsed is not None else None
            if key is None:
                key = " ".join(str(raw).split())[:80]
            wrong[key] += 1

    parameters, constant = _parameter_breakdown(session, exercise, {p.user_id: p for p in progress})
    return ExerciseStats(
        exercise=exercise,
        tried=tried,
        mean_best_score=(sum(p.best_score for p in progress) / tried) if tried else None,
        solved=len(solved_rows),
        mean_attempts_to_solve=float(mean_attempts) if mean_attempts is not None else None,
        histogram=list(zip(score_bin_labels(), histogram_counts, strict=True)),
        mistakes=mistakes.most_common(top),
        wrong_answers=wrong.most_common(top),
        parameters=parameters,
        constant_parameters=constant,
        submissions=graded,
    )


def _parameter_breakdown(
    session: Session, exercise: Exercise, progress: Mapping[int, Progress]
) -> tuple[list[ParameterBreakdown], dict[str, str]]:
    if not progress:
        return [], {}
    variants = session.scalars(
        select(Variant).where(
            Variant.exercise_id == exercise.id,
            Variant.variant_number == 1,
            Variant.user_id.in_(list(progress)),
        )
    )
    by_param: dict[str, dict[str, list[Progress]]] = defaultdict(lambda: defaultdict(list))
    for v in variants:
        try:
            params = variant_parameters(services.generate_variant(v))
        except Exception:  # a version that no longer loads: no parameters for it
            log.warning("variant %s of %s does not generate", v.id, exercise.id)
            continue
        for name, value in params.items():
            by_param[name][value].append(progress[v.user_id])
    out, constant = [], {}
    for name, groups in sorted(by_param.items()):
        if len(groups) < 2:
            constant[name] = next(iter(groups))
            continue
        values = []
        for value, rows in sorted(groups.items(), key=lambda kv: _natural(kv[0])):
            values.append(
                ParameterValueStats(
                    value=value,
                    students=len(rows),
                    solved=sum(1 for p in rows if p.solved_at is not None),
                    mean_best_score=sum(p.best_score for p in rows) / len(rows),
                )
            )
        out.append(ParameterBreakdown(name, values))
    return out, constant


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


# --------------------------------------------------------------------------------------------
# Regrade


@dataclass
class SubmissionChange:
    submission_id: int
    user_id: int
    username: str
    variant_number: int
    old_status: str
    new_status: str
    old_score: float
    new_score: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ProgressChange:
    user_id: int
    username: str
    old_best_points: float
    new_best_points: float
    old_solved: bool
    new_solved: bool
    old_best_reached_at: str | None = None
    old_solved_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class RegradeSummary:
    """What a regrade changed (or would change, for a dry run)."""

    exercise_id: str
    version_hash: str
    dry_run: bool
    regraded: int = 0
    skipped_invalid: int = 0
    changes: list[SubmissionChange] = field(default_factory=list)
    progress_changes: list[ProgressChange] = field(default_factory=list)
    regrade_id: int | None = None

    @property
    def changed(self) -> int:
        return len(self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "exercise_id": self.exercise_id,
            "version_hash": self.version_hash,
            "dry_run": self.dry_run,
            "regraded": self.regraded,
            "skipped_invalid": self.skipped_invalid,
            "changed": self.changed,
            "changes": [c.to_dict() for c in self.changes],
            "progress_changes": [c.to_dict() for c in self.progress_changes],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], regrade_id: int | None = None) -> RegradeSummary:
        """The summary stored in a ``regrades`` row (inverse of :meth:`to_dict`)."""
        return cls(
            exercise_id=str(data.get("exercise_id", "")),
            version_hash=str(data.get("version_hash", "")),
            dry_run=bool(data.get("dry_run", False)),
            regraded=int(data.get("regraded", 0)),
            skipped_invalid=int(data.get("skipped_invalid", 0)),
            changes=[SubmissionChange(**c) for c in data.get("changes", [])],
            progress_changes=[ProgressChange(**c) for c in data.get("progress_changes", [])],
            regrade_id=regrade_id,
        )

    def text(self) -> str:
        """A human-readable summary (what the CLI prints)."""
        verb = "would change" if self.dry_run else "changed"
        lines = [
            ("Dry run (nothing saved): regrade" if self.dry_run else "Regrade")
            + f" of {self.exercise_id} against version {self.version_hash[:12]}: "
            f"{self.regraded} graded submissions re-run; {verb} {self.changed} verdicts and "
            f"{len(self.progress_changes)} students' points"
            + (
                f"; {self.skipped_invalid} invalid answers left as they were"
                if self.skipped_invalid
                else ""
            )
            + "."
        ]
        for c in self.changes:
            lines.append(
                f"  submission {c.submission_id} ({c.username}, variant {c.variant_number}): "
                f"{c.old_status} {c.old_score:.3g} -> {c.new_status} {c.new_score:.3g}"
            )
        for p in self.progress_changes:
            lines.append(
                f"  {p.username}: {_fmt_points(p.old_best_points)} -> "
                f"{_fmt_points(p.new_best_points)} points"
                + (
                    f" (solved: {'yes' if p.old_solved else 'no'} -> "
                    f"{'yes' if p.new_solved else 'no'})"
                    if p.old_solved != p.new_solved
                    else ""
                )
            )
        return "\n".join(lines)


def _grade_safely(bank_variant: Any, answer: Any) -> Any:
    from quizapp.bank import grade_answer
    from quizapp.grading import Verdict

    try:
        return grade_answer(bank_variant, answer)
    except Exception:
        log.exception(
            "regrade: grading failed for %s seed %s", bank_variant.exercise_id, bank_variant.seed
        )
        return Verdict(
            status="invalid", score=0.0, message="The grader could not read this answer."
        )


def _verdict_payload(verdict: Any) -> tuple[dict[str, Any], float, str, list[str], Any]:
    vdict = _json_safe(verdict.to_dict())
    vdict["mistake_messages"] = [m.message for m in verdict.mistakes]
    score = float(verdict.score) if verdict.score == verdict.score else 0.0
    score = min(1.0, max(0.0, score))
    return vdict, score, verdict.status, list(verdict.mistake_codes), _json_safe(verdict.parsed)


def _json_safe(value: Any) -> Any:
    """``value`` with NaN/inf as None and arrays as lists (JSON columns need valid JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return _json_safe(value.tolist())
    return value


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def regrade_exercise(
    session: Session,
    exercise_id: str,
    *,
    dry_run: bool = False,
    started_by: User | None = None,
) -> RegradeSummary:
    """Re-grade every stored submission of ``exercise_id`` against its current version.

    In ONE write transaction (``BEGIN IMMEDIATE`` on SQLite: no submission can slip in between):

    1. each variant is regenerated from its stored seed with the exercise's CURRENT version (the
       variant moves to that version);
    2. every graded submission (one that used an attempt and is not an identical resubmission) is
       graded again with ``quizapp.bank.grade_answer``; identical resubmissions take their
       original's new verdict; invalid answers (which used no attempt) are left as they were.
       Attempts used never change (an answer now unreadable keeps its attempt, with score 0);
    3. a changed submission keeps its previous verdict, score, points, mistakes and version in
       ``verdict_history``;
    4. each student's progress row is recomputed from their variant-1 submissions (best score and
       when it was first reached, solved at), and each variant's ``finished_at`` (solved, or out
       of attempts); the previous values are kept in the ``regrades`` row's summary.

    ``dry_run`` computes the same summary and rolls everything back.  Raises ``services.NotFound``
    for an unknown exercise or one without a synced version.
    """
    from quizapp.services import decode_raw_answer

    exercise = services.get_exercise(session, exercise_id, include_archived=True)
    version = exercise.current_version
    if version is None:
        raise services.NotFound(f"Exercise {exercise.id} has no synced version.")
    ex_id, version_id, version_hash = exercise.id, version.id, version.content_hash
    started_by_id = started_by.id if started_by is not None else None

    services.begin_write(session)
    try:
        exercise = session.get(Exercise, ex_id)
        assert exercise is not None
        points_each = float(exercise.points)
        summary = RegradeSummary(ex_id, version_hash, dry_run)
        regrade = Regrade(
            exercise_id=ex_id, version_id=version_id, started_by_id=started_by_id, summary={}
        )
        if not dry_run:
            session.add(regrade)
            session.flush()
        usernames = dict(
            session.execute(
                select(User.id, User.username).where(
                    User.id.in_(select(Variant.user_id).where(Variant.exercise_id == ex_id))
                )
            ).all()
        )
        variants = list(
            session.scalars(
                select(Variant).where(Variant.exercise_id == ex_id).order_by(Variant.id)
            )
        )
        subs_by_variant: dict[int, list[Submission]] = defaultdict(list)
        for s in session.scalars(
            select(Submission).where(Submission.exercise_id == ex_id).order_by(Submission.id)
        ):
            subs_by_variant[s.variant_id].append(s)

        new_by_id: dict[int, tuple[dict[str, Any], float, str, list[str], Any]] = {}
        for variant in variants:
            subs = subs_by_variant.get(variant.id, [])
            bank_variant = services.generate_preview(exercise, int(variant.seed)) if subs else None
            for s in subs:
                if s.duplicate_of_id is not None:
                    original = new_by_id.get(s.duplicate_of_id)
                    if original is None:
                        continue
                    vdict, score, status, codes, parsed = original
                    vdict = dict(vdict)
                    vdict["message"] = (
                        "You already submitted this answer; it used no attempt. "
                        + str(vdict.get("message", ""))
                    ).strip()
                elif not s.used_attempt:
                    summary.skipped_invalid += 1
                    continue
                else:
                    answer = decode_raw_answer(s.answer_format, s.raw_answer)
                    vdict, score, status, codes, parsed = _verdict_payload(
                        _grade_safely(bank_variant, answer)
                    )
                    new_by_id[s.id] = (vdict, score, status, codes, parsed)
                    summary.regraded += 1
                verdict_changed = (
                    status != s.status
                    or abs(score - float(s.score)) > 1e-12
                    or list(codes) != list(s.mistakes or [])
                )
                if verdict_changed and s.duplicate_of_id is None:
                    summary.changes.append(
                        SubmissionChange(
                            s.id,
                            s.user_id,
                            usernames.get(s.user_id, "?"),
                            variant.variant_number,
                            s.status,
                            status,
                            float(s.score),
                            score,
                        )
                    )
                if verdict_changed or s.version_id != version_id or vdict != s.verdict:
                    if not dry_run:
                        session.add(
                            VerdictHistory(
                                submission_id=s.id,
                                regrade_id=regrade.id,
                                version_id=s.version_id,
                                status=s.status,
                                score=float(s.score),
                                points=float(s.points),
                                mistakes=list(s.mistakes or []),
                                verdict=dict(s.verdict or {}),
                            )
                        )
                    s.verdict = vdict
                    s.status = status
                    s.score = score
                    s.points = round(score * points_each, 6)
                    s.mistakes = codes
                    s.parsed = parsed
                    s.version_id = version_id
            variant.version_id = version_id
            _recompute_finished(variant, subs, int(exercise.attempts))

        for p in session.scalars(select(Progress).where(Progress.exercise_id == ex_id)):
            v1 = next(
                (v for v in variants if v.user_id == p.user_id and v.variant_number == 1), None
            )
            graded = [s for s in subs_by_variant.get(v1.id, []) if s.used_attempt] if v1 else []
            old = (float(p.best_points), p.solved_at is not None, p.best_reached_at, p.solved_at)
            best = max((float(s.score) for s in graded), default=0.0)
            reached = next((s.created_at for s in graded if float(s.score) >= best), None)
            solved_at = next((s.created_at for s in graded if s.status == "correct"), None)
            p.best_score = best
            p.best_points = round(best * points_each, 6)
            p.best_reached_at = reached
            p.solved_at = solved_at
            p.attempts_used = len(graded)
            if abs(old[0] - p.best_points) > 1e-9 or old[1] != (solved_at is not None):
                summary.progress_changes.append(
                    ProgressChange(
                        p.user_id,
                        usernames.get(p.user_id, "?"),
                        old[0],
                        float(p.best_points),
                        old[1],
                        solved_at is not None,
                        _iso(old[2]),
                        _iso(old[3]),
                    )
                )
        if dry_run:
            session.rollback()
            return summary
        regrade.submissions_regraded = summary.regraded
        regrade.submissions_changed = summary.changed
        regrade.summary = summary.to_dict()
        session.commit()
        summary.regrade_id = regrade.id
        return summary
    except BaseException:
        session.rollback()
        raise


def _recompute_finished(variant: Variant, subs: Sequence[Submission], attempts: int) -> None:
    """``finished_at``: the first correct graded answer, else the answer using the last attempt,
    else None (the variant is open again)."""
    graded = [s for s in subs if s.used_attempt]
    correct = next((s for s in graded if s.status == "correct"), None)
    if correct is not None:
        variant.finished_at = correct.created_at
    elif len(graded) >= attempts:
        variant.finished_at = graded[attempts - 1].created_at
    else:
        variant.finished_at = None


def regrade_history(session: Session, exercise_id: str) -> list[Regrade]:
    """The regrade runs of an exercise, newest first."""
    return list(
        session.scalars(
            select(Regrade).where(Regrade.exercise_id == exercise_id).order_by(Regrade.id.desc())
        )
    )


def submission_history(
    session: Session, submission_ids: Sequence[int]
) -> dict[int, list[VerdictHistory]]:
    """Submission id -> its previous verdicts (oldest first)."""
    out: dict[int, list[VerdictHistory]] = defaultdict(list)
    if not submission_ids:
        return out
    for h in session.scalars(
        select(VerdictHistory)
        .where(VerdictHistory.submission_id.in_(list(submission_ids)))
        .order_by(VerdictHistory.id)
    ):
        out[h.submission_id].append(h)
    return out


# --------------------------------------------------------------------------------------------
# One student's page


@dataclass
class StudentExercise:
    exercise: Exercise
    progress: Progress | None
    excusal: Excusal | None
    variants: list[tuple[Variant, list[Submission]]]


def answer_text(submission: Submission) -> str:
    """A submission's answer as typed: the text, or a grid's rows on lines with cells split by
    two spaces (for display; the stored ``raw_answer`` is never changed)."""
    answer = services.decode_raw_answer(submission.answer_format, submission.raw_answer)
    if isinstance(answer, list):
        return "\n".join("  ".join(str(c) for c in row) for row in answer)
    return str(answer)


def student_detail(session: Session, user_id: int) -> tuple[User, list[StudentExercise]]:
    """A user and, per exercise they started (or are excused from), their variants and
    submissions (oldest first).  Raises ``services.NotFound`` for an unknown user."""
    user = session.get(User, user_id)
    if user is None:
        raise services.NotFound("There is no such user.")
    progress = {
        p.exercise_id: p
        for p in session.scalars(select(Progress).where(Progress.user_id == user_id))
    }
    excusals = excused_exercises(session, user_id)
    subs: dict[int, list[Submission]] = defaultdict(list)
    for s in session.scalars(
        select(Submission).where(Submission.user_id == user_id).order_by(Submission.id)
    ):
        subs[s.variant_id].append(s)
    variants: dict[str, list[tuple[Variant, list[Submission]]]] = defaultdict(list)
    for v in session.scalars(
        select(Variant).where(Variant.user_id == user_id).order_by(Variant.variant_number)
    ):
        variants[v.exercise_id].append((v, subs.get(v.id, [])))
    ids = set(variants) | set(excusals) | set(progress)
    exercises = [
        e
        for e in session.scalars(
            select(Exercise)
            .join(Quiz, Quiz.id == Exercise.quiz_id)
            .where(Exercise.id.in_(ids))
            .order_by(Quiz.position, Quiz.id, Exercise.position, Exercise.id)
        )
    ]
    return user, [
        StudentExercise(e, progress.get(e.id), excusals.get(e.id), variants.get(e.id, []))
        for e in exercises
    ]


# --------------------------------------------------------------------------------------------
# Roster and password-reset links

#: How long a password-reset link works.
RESET_LINK_VALID = timedelta(days=14)
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
ROSTER_COLUMNS = ("username", "display_name", "email")
_HEADER_ALIASES = {
    "username": "username",
    "user": "username",
    "login": "username",
    "display_name": "display_name",
    "display name": "display_name",
    "name": "display_name",
    "full name": "display_name",
    "email": "email",
    "e-mail": "email",
    "mail": "email",
}
#: Largest roster file accepted (rows).
MAX_ROSTER_ROWS = 5000


class RosterError(services.BadRequest):
    """The roster file has problems; ``problems`` lists them (``line N: message``).  Nothing
    was imported."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("The roster was not imported: " + "; ".join(problems[:20]))
        self.problems = problems


@dataclass
class RosterEntry:
    line: int
    username: str
    display_name: str
    email: str


@dataclass
class RosterImport:
    """The outcome of :func:`import_roster`: accounts created (with their reset token, shown
    once) and rows skipped because the username exists."""

    created: list[tuple[RosterEntry, int, str]] = field(default_factory=list)
    skipped: list[tuple[RosterEntry, str]] = field(default_factory=list)
    expires_at: datetime | None = None


def _strip_neutralizer(text: str) -> str:
    """Undo :func:`csv_cell`'s apostrophe so an exported roster imports back unchanged."""
    if text.startswith("'") and text[1:].startswith(FORMULA_TRIGGERS):
        return text[1:]
    return text


def parse_roster_csv(text: str) -> list[RosterEntry]:
    """Parse a roster CSV: columns ``username, display name, email`` (a header row naming them,
    in any order and case, is recognized; otherwise that order is assumed).

    Raises ``RosterError`` listing every bad row (``line N: message``): an invalid username or
    e-mail, a username twice in the file, too many columns, more than ``MAX_ROSTER_ROWS`` rows.
    """
    if text.startswith("\ufeff"):
        text = text[1:]  # Excel's UTF-8 byte order mark
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as err:
        raise RosterError([f"the file is not valid CSV: {err}"]) from None
    problems: list[str] = []
    columns = list(ROSTER_COLUMNS)
    start = 0
    if rows:
        names = [_HEADER_ALIASES.get(c.strip().lower()) for c in rows[0]]
        if "username" in names:
            columns = [n or "" for n in names]
            start = 1
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(rows[start:], start=start + 1):
        if not any(c.strip() for c in row):
            continue
        if len(entries) >= MAX_ROSTER_ROWS:
            problems.append(f"more than {MAX_ROSTER_ROWS} students; split the file")
            break
        if len(row) > len(columns) and any(c.strip() for c in row[len(columns) :]):
            problems.append(
                f"line {index}: {len(row)} columns, expected at most {len(columns)} "
                f"({', '.join(c for c in columns if c)})"
            )
            continue
        values = {
            col: _strip_neutralizer(row[i].strip())
            for i, col in enumerate(columns)
            if col and i < len(row)
        }
        try:
            username = services.validate_username(values.get("username", ""))
        except services.BadRequest as err:
            problems.append(f"line {index}: {err.message} (got {values.get('username', '')!r})")
            continue
        email = values.get("email", "")
        if email and (len(email) > 254 or not EMAIL_RE.fullmatch(email)):
            problems.append(f"line {index}: {email!r} is not an e-mail address")
            continue
        display = values.get("display_name", "")
        if len(display) > 120:
            problems.append(f"line {index}: the display name is longer than 120 characters")
            continue
        key = username_key(username)
        if key in seen:
            problems.append(f"line {index}: username {username!r} already on line {seen[key]}")
            continue
        seen[key] = index
        entries.append(RosterEntry(index, username, display, email))
    if problems:
        raise RosterError(problems)
    return entries


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(32)
    return token, hashlib.sha256(token.encode("ascii")).hexdigest()


def _unusable_password() -> str:
    """A password hash no password matches (the account is reached through its reset link)."""
    return "!unusable$" + secrets.token_hex(16)


def import_roster(
    session: Session,
    text: str,
    *,
    valid_for: timedelta = RESET_LINK_VALID,
    now: datetime | None = None,
) -> RosterImport:
    """Create a student account for each new username of the roster CSV ``text``, each with a
    one-time password-reset link valid ``valid_for``; existing usernames are skipped.  All in one
    transaction: a bad row imports nothing (``RosterError`` lists every problem).

    The created accounts cannot sign in until the student sets a password through the link
    (``/reset/<token>``).  Tokens are returned once and stored as SHA-256 digests.
    """
    entries = parse_roster_csv(text)
    now = now or utcnow()
    result = RosterImport(expires_at=now + valid_for)
    services.begin_write(session)
    try:
        existing = {
            k
            for (k,) in session.execute(
                select(User.username_key).where(
                    User.username_key.in_([username_key(e.username) for e in entries])
                )
            )
        }
        for e in entries:
            if username_key(e.username) in existing:
                result.skipped.append((e, "the username exists already"))
                continue
            user = User(
                username=e.username,
                username_key=username_key(e.username),
                display_name=e.display_name,
                email=e.email or None,
                role="student",
                password_hash=_unusable_password(),
                created_at=now,
            )
            session.add(user)
            session.flush()
            token, digest = _new_token()
            session.add(
                PasswordReset(
                    user_id=user.id,
                    token_hash=digest,
                    created_at=now,
                    expires_at=now + valid_for,
                    note="roster import",
                )
            )
            result.created.append((e, user.id, token))
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return result


def create_reset_link(
    session: Session, user_id: int, *, valid_for: timedelta = RESET_LINK_VALID, note: str = ""
) -> str:
    """A new one-time password-reset token for ``user_id`` (earlier unused links stop working);
    commit.  Raises ``services.NotFound`` for an unknown user."""
    if session.get(User, user_id) is None:
        raise services.NotFound("There is no such user.")
    now = utcnow()
    services.begin_write(session)
    for old in session.scalars(
        select(PasswordReset).where(
            PasswordReset.user_id == user_id, PasswordReset.used_at.is_(None)
        )
    ):
        old.expires_at = min(old.expires_at, now)
    token, digest = _new_token()
    session.add(
        PasswordReset(
            user_id=user_id,
            token_hash=digest,
            created_at=now,
            expires_at=now + valid_for,
            note=note,
        )
    )
    session.commit()
    return token


def find_reset(session: Session, token: str) -> PasswordReset | None:
    """The live (unused, unexpired) reset link of ``token``, or None."""
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        return None
    digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    row = session.scalar(select(PasswordReset).where(PasswordReset.token_hash == digest))
    if row is None or row.used_at is not None or row.expires_at <= utcnow():
        return None
    if not row.user.active:
        return None
    return row


def use_reset(session: Session, token: str, password: str) -> User:
    """Set the password of the reset link's user and spend the link; commit.

    Raises ``services.NotFound`` for an unknown, used or expired link and
    ``services.BadRequest`` for a password shorter than ``services.PASSWORD_MIN``.
    """
    if not isinstance(password, str) or len(password) < services.PASSWORD_MIN:
        raise services.BadRequest(
            f"The password must have at least {services.PASSWORD_MIN} characters."
        )
    if len(password) > services.PASSWORD_MAX:
        raise services.BadRequest("The password is too long.")
    row = find_reset(session, token)
    if row is None:
        raise services.NotFound(
            "This link is unknown, used or expired; ask your instructor for a new one."
        )
    reset_id = row.id
    services.begin_write(session)
    row = session.get(PasswordReset, reset_id)
    if row is None or row.used_at is not None:
        session.rollback()
        raise services.NotFound("This link was used already.")
    user = row.user
    user.set_password(password)
    row.used_at = utcnow()
    session.commit()
    return user


def roster_table(session: Session) -> list[list[Any]]:
    """The students as rows ``username, display_name, email`` (header first): the import format."""
    table: list[list[Any]] = [list(ROSTER_COLUMNS)]
    for u in _students(session):
        table.append([u.username, u.display_name or "", u.email or ""])
    return table


def roster_csv(session: Session) -> str:
    """The roster as CSV text (importable again with :func:`import_roster`)."""
    return write_csv(roster_table(session))


__all__ = [
    "USERNAME_MAX",
    "CourseConfig",
    "CourseConfigError",
    "ExerciseStats",
    "Gradebook",
    "RegradeSummary",
    "RosterError",
    "Scoreboard",
    "course_percent",
    "create_reset_link",
    "csv_cell",
    "excuse",
    "exercise_statistics",
    "find_reset",
    "gradebook",
    "gradebook_csv",
    "import_roster",
    "load_course_config",
    "parse_course_config",
    "parse_roster_csv",
    "regrade_exercise",
    "roster_csv",
    "scoreboard",
    "student_detail",
    "unexcuse",
    "use_reset",
]
