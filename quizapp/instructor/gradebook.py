"""The gradebook: students x exercises, quiz totals and the weighted course total, read in a
few queries (:func:`gradebook`), and how points are written (:func:`fmt_points`).  Its tables and
CSV export: :mod:`quizapp.instructor.gradebook_export`; excusals:
:mod:`quizapp.instructor.excusals`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.instructor._scope import get_quiz, live_exercises
from quizapp.instructor.course import CourseConfig
from quizapp.models import (
    Exercise,
    Progress,
    User,
)
from quizapp.models_instructor import Excusal


@dataclass(slots=True)
class PartCell:
    """One part of a multi-part exercise in a student's cell: the points its best submission
    earned on it of those ``available``, and whether they came by follow-through."""

    points: float
    available: float
    score: float
    follow_through: bool = False


@dataclass(slots=True)
class GradebookCell:
    """One student x exercise cell: ``points`` (None: never attempted), or excused; ``late``
    and ``credit`` of the attempt that gave the points, ``override`` (the reason) when the
    instructor set them by hand; for a multi-part exercise ``parts`` (part name ->
    :class:`PartCell`) of the best submission (None when the points were set by hand)."""

    points: float | None
    excused: bool = False
    score: float | None = None
    late: bool = False
    credit: float = 1.0
    override: str | None = None
    parts: dict[str, PartCell] | None = None

    @property
    def marker(self) -> str:
        """The cell's note: ``override: REASON``, ``late 50%`` / ``credit 80%``, or ``""``."""
        return cell_marker(self.late, self.credit, self.override, self.points is not None)


def part_cells(
    best_parts: Any, exercise_points: float, credit: float = 1.0
) -> dict[str, PartCell] | None:
    """A progress row's ``best_parts`` as :class:`PartCell` objects, in points of the exercise's
    current ``exercise_points`` (each part's share of them) times the best attempt's late
    ``credit`` (so they add up to the cell's points); None for a single-answer exercise."""
    if not best_parts:
        return None
    out = {}
    for name, figures in best_parts.items():
        share = float(figures.get("share") or 0.0)
        score = float(figures.get("score") or 0.0)
        available = round(share * float(exercise_points), 6)
        out[str(name)] = PartCell(
            round(score * float(credit) * available, 6),
            available,
            score,
            bool(figures.get("follow_through")),
        )
    return out


def cell_marker(late: bool, credit: float, override: str | None, attempted: bool = True) -> str:
    """How the gradebook notes a cell's points: ``override: REASON`` when set by hand, else
    ``late 50%`` (the late credit of the best attempt) or ``credit 80%`` (an extension's reduced
    credit), else ``""``."""
    if override is not None:
        return f"override: {override}"
    if not attempted:
        return ""
    percent = f"{round(100 * float(credit), 2):g}%"
    if late:
        return f"late {percent}"
    if float(credit) < 1:
        return f"credit {percent}"
    return ""


@dataclass(slots=True)
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
    """A quiz column group: its live exercises, points available, and its weight from
    ``course.yaml`` (None when the course total is weighted by points)."""

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
    #: paging (HTML page): 1-based page, students per page (None: all), students in all
    page: int = 1
    per_page: int | None = None
    students: int = 0

    @property
    def pages(self) -> int:
        if not self.per_page:
            return 1
        return max(1, -(-self.students // self.per_page))

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


def _student_row(
    student: tuple[int, str, str | None, str | None],
    attempted: Mapping[str, tuple[Any, ...]],
    columns: Sequence[tuple[str, str, float]],
    quizzes: Mapping[str, GradebookQuiz],
    excused: set[tuple[int, str]],
    config: CourseConfig,
) -> GradebookRow:
    """One student's gradebook row from their attempted cells (exercise id -> (best points, best
    score, late, credit, override reason or None[, best parts])); ``columns`` are (exercise id,
    quiz id, points) of the live exercises, in order."""
    user_id, username, display_name, email = student
    cells: dict[str, GradebookCell] = {}
    per_quiz: dict[str, list[tuple[float, float | None, bool]]] = {q: [] for q in quizzes}
    for ex_id, ex_quiz, ex_points in columns:
        points, score, late, credit, override, *more = attempted.get(
            ex_id, (None, None, False, 1.0, None)
        )
        parts = part_cells(more[0], ex_points, credit) if more and override is None else None
        is_excused = bool(excused) and (user_id, ex_id) in excused
        if is_excused:
            cells[ex_id] = GradebookCell(points, excused=True, score=score, parts=parts)
        else:
            cells[ex_id] = GradebookCell(points, False, score, late, credit, override, parts)
        per_quiz[ex_quiz].append((ex_points, points, is_excused))
    totals = {q: QuizTotal(*services.quiz_points(cells_of)) for q, cells_of in per_quiz.items()}
    return GradebookRow(
        user_id=user_id,
        username=username,
        display_name=display_name or "",
        email=email or "",
        cells=cells,
        quiz_totals=totals,
        course_percent=course_percent(totals, config),
    )


def _quiz_groups(exercises: Sequence[Exercise], config: CourseConfig) -> dict[str, GradebookQuiz]:
    quizzes: dict[str, GradebookQuiz] = {}
    for ex in exercises:
        q = quizzes.get(ex.quiz_id)
        if q is None:
            weight = None if config.weights is None else config.weight_of(ex.quiz_id, 0)
            q = quizzes[ex.quiz_id] = GradebookQuiz(ex.quiz_id, ex.quiz.title, [], 0.0, weight)
        q.exercises.append(ex)
        q.points += float(ex.points)
    return quizzes


def _scope(
    session: Session, quiz_id: str | None, config: CourseConfig | None
) -> tuple[CourseConfig, list[Exercise], dict[str, GradebookQuiz]]:
    """The gradebook's columns: the course config (default if None), the live exercises (of
    ``quiz_id`` only if given) and their quiz groups.  Raises ``services.NotFound`` for an
    unknown quiz."""
    config = config or CourseConfig()
    if quiz_id is not None:
        get_quiz(session, quiz_id)
    exercises = live_exercises(session, quiz_id)
    return config, exercises, _quiz_groups(exercises, config)


#: The students, in gradebook order (username key, then id): id and the three text columns.
_ROSTER = (
    select(User.id, User.username, User.display_name, User.email)
    .where(User.role == "student")
    .order_by(User.username_key, User.id)
)


def gradebook(
    session: Session,
    *,
    quiz_id: str | None = None,
    config: CourseConfig | None = None,
    page: int = 1,
    per_page: int | None = None,
) -> Gradebook:
    """The gradebook of every student over the live exercises (of ``quiz_id`` only if given).

    Three queries (exercises, progress rows, excusals) whatever the class size.  A cell is the
    student's ``best_points`` (``services.deadlines.exercise_points``: an override, or the best
    credited score x points) with its late credit and override noted; an excused cell counts
    neither earned nor available points.  With ``per_page``, only the students of page
    ``page`` (1-based, in gradebook order) are read and returned (``Gradebook.students`` counts
    them all).  Raises ``services.NotFound`` for an unknown quiz.
    """
    config, exercises, quizzes = _scope(session, quiz_id, config)
    ids = [e.id for e in exercises]
    students = session.execute(_ROSTER).all()
    total = len(students)
    if per_page:
        page = max(1, min(int(page), max(1, -(-total // per_page))))
        students = students[(page - 1) * per_page : page * per_page]
    student_ids = {row[0] for row in students}
    wanted = set(ids)
    # Plain column tuples, not ORM objects (a class of 10,000 x 40 is 400,000 progress rows), and
    # for the whole course one sequential scan filtered here rather than 40 index range lookups.
    # -> (best points, best score, late, credit, override reason[, best parts (multi-part)])
    attempted: dict[tuple[int, str], tuple[Any, ...]] = {}
    stmt = select(
        Progress.user_id,
        Progress.exercise_id,
        Progress.best_points,
        Progress.best_score,
        Progress.attempts_used,
        Progress.best_late,
        Progress.best_credit,
        Progress.override_points,
        Progress.override_reason,
        Progress.best_parts,
    )
    if quiz_id is not None:
        stmt = stmt.where(Progress.exercise_id.in_(ids))
    if per_page:
        stmt = stmt.where(Progress.user_id.in_(sorted(student_ids)))
    if ids and student_ids:
        for row in session.execute(stmt):
            user_id, exercise_id, best_points, best_score, used, late, credit, over, why, parts = (
                row
            )
            if (used or over is not None) and exercise_id in wanted and user_id in student_ids:
                attempted[(user_id, exercise_id)] = (
                    float(best_points),
                    float(best_score),
                    bool(late),
                    float(credit),
                    (why or "") if over is not None else None,
                    *((parts,) if parts else ()),
                )
    excused = {
        (user_id, exercise_id)
        for user_id, exercise_id in session.execute(
            select(Excusal.user_id, Excusal.exercise_id).where(Excusal.exercise_id.in_(ids))
        )
    }
    columns = [(e.id, e.quiz_id, float(e.points)) for e in exercises]
    rows = []
    for user_id, username, display_name, email in students:
        mine = {
            ex_id: attempted[(user_id, ex_id)] for ex_id in ids if (user_id, ex_id) in attempted
        }
        rows.append(
            _student_row(
                (user_id, username, display_name, email), mine, columns, quizzes, excused, config
            )
        )
    return Gradebook(
        list(quizzes.values()),
        rows,
        "points" if config.weights is None else "course.yaml",
        page=page if per_page else 1,
        per_page=per_page,
        students=total,
    )


def _number(value: float) -> float | int:
    """Round to 4 decimals; integral values as ints (``10`` not ``10.0``)."""
    v = round(float(value), 4)
    return int(v) if v == int(v) else v


def fmt_points(p: float) -> str:
    """Points as short text: ``10`` not ``10.0``, at most 4 decimals."""
    v = _number(p)
    return str(v)
