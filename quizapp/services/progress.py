"""Progress: a student's standing per exercise and quiz, rebuilt or summarized."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from quizapp.coursetime import iso
from quizapp.models import (
    Exercise,
    Progress,
    Quiz,
    Submission,
    User,
    Variant,
    quiz_order,
    utcnow,
)
from quizapp.models_instructor import Excusal, Extension

if TYPE_CHECKING:
    from quizapp.services.page_rows import ExerciseRow


from quizapp.services.errors import NotFound
from quizapp.services.points import apply_best, best_attempt, credited, shown_score
from quizapp.services.schedules import Schedule, schedule_for
from quizapp.services.totals import refresh_user_totals
from quizapp.services.transactions import retry_conflicts

log = logging.getLogger(__name__)


@retry_conflicts
def recompute_progress(session: Session, user_id: int, exercise_id: str) -> Progress | None:
    """Rebuild the (user, exercise) progress row from its submissions; flush, do not commit.

    For regrades and integrity checks: the result equals what :func:`submit` maintains
    incrementally (best credited score over graded attempts of variant 1, ``best_reached_at`` =
    the first graded attempt reaching that best, ``attempts_used``, ``solved_at`` = first
    correct, ``submissions_count`` and ``last_activity`` over all rows, ``best_parts`` of a
    multi-part exercise from the attempt reaching the best), through
    ``points.best_attempt`` / ``apply_best``: an instructor's override stays and wins.  Points
    use the exercise's current ``points``.  Returns None (and changes nothing) when there are no
    submissions and no row.
    """
    exercise = session.get(Exercise, exercise_id)
    if exercise is None:
        raise NotFound("There is no such exercise.")
    rows = session.execute(
        select(Submission, Variant.variant_number)
        .join(Variant, Submission.variant_id == Variant.id)
        .where(Submission.user_id == user_id, Submission.exercise_id == exercise_id)
        .order_by(Submission.id)
    ).all()
    progress = session.scalar(
        select(Progress).where(Progress.user_id == user_id, Progress.exercise_id == exercise_id)
    )
    if not rows and progress is None:
        return None
    if progress is None:
        progress = Progress(user_id=user_id, exercise_id=exercise_id, current_variant=1)
        session.add(progress)
    graded = [sub for sub, number in rows if sub.used_attempt and number == 1]
    best = best_attempt(graded)
    apply_best(progress, best, float(exercise.points))
    progress.attempts_used = len(graded)
    progress.best_parts = None
    reached = next(
        (s for s in graded if best.score > 0 and credited(s.score, s.credit) == best.score), None
    )  # the attempt best_attempt chose (the first reaching the best score)
    if reached is not None and (reached.verdict or {}).get("parts"):
        from quizapp.services.part_answers import best_parts
        from quizapp.services.variants import stored_variant

        progress.best_parts = best_parts(stored_variant(reached.variant), reached.verdict)
    progress.submissions_count = len(rows)
    progress.last_activity = max((sub.created_at for sub, _ in rows), default=None)
    top = session.scalar(
        select(func.max(Variant.variant_number)).where(
            Variant.user_id == user_id, Variant.exercise_id == exercise_id
        )
    )
    progress.current_variant = max(int(top or 1), 1)
    session.flush()
    refresh_user_totals(session, user_id)
    return progress


def exercise_status(
    submissions_count: int | None,
    solved_at: datetime | None,
    attempts_used: int | None,
    attempts: int,
) -> str:
    """A student's status on an exercise from their progress row's figures (``None`` each when
    they have no row): ``not_started`` (no submission), ``solved``, ``out_of_attempts`` (all
    ``attempts`` used without solving) or ``started``."""
    if not submissions_count:
        return "not_started"
    if solved_at is not None:
        return "solved"
    if (attempts_used or 0) >= attempts:
        return "out_of_attempts"
    return "started"


@dataclass
class ExerciseSummary:
    """One exercise as a student sees it in lists.  ``status``: ``not_started``, ``started``,
    ``solved``, ``out_of_attempts``."""

    exercise: Exercise
    progress: Progress | None
    #: the instructor excused the student from it: it counts neither earned nor available points
    excused: bool = False

    @property
    def attempts_used(self) -> int:
        return self.progress.attempts_used if self.progress else 0

    @property
    def best_score(self) -> float:
        return float(self.progress.best_score) if self.progress else 0.0

    @property
    def best_points(self) -> float:
        return float(self.progress.best_points) if self.progress else 0.0

    @property
    def last_activity(self) -> datetime | None:
        return self.progress.last_activity if self.progress else None

    @property
    def status(self) -> str:
        p = self.progress
        if p is None:
            return "not_started"
        return exercise_status(
            p.submissions_count, p.solved_at, p.attempts_used, self.exercise.attempts
        )

    def to_dict(self, zone: ZoneInfo | None = None) -> dict[str, Any]:
        """JSON; ``last_activity`` as ISO 8601 with the offset of ``zone`` (the course zone;
        UTC when None)."""
        ex = self.exercise
        return {
            "id": ex.id,
            "title": ex.title,
            "points": ex.points,
            "attempts": ex.attempts,
            "status": self.status,
            "best_score": shown_score(self.best_score),
            "best_points": self.best_points,
            "best_late": bool(self.progress.best_late) if self.progress else False,
            "best_credit": shown_score(self.progress.best_credit) if self.progress else 1.0,
            "overridden": self.overridden,
            "excused": self.excused,
            "attempts_used": self.attempts_used,
            "last_activity": iso(self.last_activity, zone or ZoneInfo("UTC")),
        }

    @property
    def overridden(self) -> bool:
        """True when the instructor set these points by hand (an override)."""
        return self.progress is not None and self.progress.override_points is not None


def quiz_points(cells: Iterable[tuple[float, float | None, bool]]) -> tuple[float, float]:
    """(points earned, points available) of a student on a quiz, from one ``(points, best
    points or None when never attempted, excused)`` triple per live exercise of the quiz.

    THE rule, in one place: an exercise the student is excused from counts in neither sum; the
    others count their ``points`` as available and the student's ``best_points`` (late credit
    and any override already applied, see ``services.submissions``) as earned.  Rounded to 6
    decimals (the precision points are stored with).  The student page, the JSON API, the
    exercise page's position, the gradebook and the score sent to the LMS all call it; the
    scoreboard's SQL aggregate (``services.totals``) applies the same rule in SQL, and
    tests/test_points_agree.py checks that all of them agree on random data.
    """
    earned = available = 0.0
    for points, best, excused in cells:
        if excused:
            continue
        available += float(points)
        earned += float(best or 0.0)
    return round(earned, 6), round(available, 6)


def _summary_points(exercises: Iterable[ExerciseSummary]) -> tuple[float, float]:
    return quiz_points((e.exercise.points, e.best_points, e.excused) for e in exercises)


def course_points(summaries: Iterable[QuizSummary]) -> tuple[float, float]:
    """(points earned, points available) of a student over the quizzes of ``summaries``: the
    rule of :func:`quiz_points` over all their exercises, rounded once (a sum of per-quiz
    totals carries float noise, ``20.222222000000002``).  The progress page and
    ``GET /api/v1/progress`` show it."""
    return _summary_points(e for q in summaries for e in q.exercises)


@dataclass
class QuizSummary:
    """A quiz with its (non-archived) exercises, the student's points and their deadlines
    (``schedule``: the quiz's closing time, their extension, the late periods)."""

    quiz: Quiz
    exercises: list[ExerciseSummary]
    schedule: Schedule | None = None

    def accepting(self, now: datetime | None = None) -> bool:
        """True while the student's answers are still graded (on time, extended or late)."""
        schedule = self.schedule or schedule_for(self.quiz)
        return schedule.credit_at(now or utcnow()) is not None

    @property
    def points_available(self) -> float:
        return _summary_points(self.exercises)[1]

    @property
    def points_earned(self) -> float:
        return _summary_points(self.exercises)[0]

    @property
    def percent(self) -> int:
        """Points earned as a whole percentage of points available (0 when none available)."""
        if not self.points_available:
            return 0
        return int(round(100 * self.points_earned / self.points_available))

    @property
    def solved(self) -> int:
        return sum(1 for e in self.exercises if e.status == "solved")

    def to_dict(self) -> dict[str, Any]:
        """JSON: times as ISO 8601 with the course zone's offset; ``closes`` is the quiz's,
        ``my_closes`` the student's own (their extension's), ``late`` the late periods as they
        apply to the student, ``open`` whether their answers are still graded."""
        q = self.quiz
        schedule = self.schedule or schedule_for(q)
        zone = schedule.zone
        return {
            "id": q.id,
            "title": q.title,
            "description": q.description,
            "timezone": zone.key,
            "opens": iso(q.opens_at, zone),
            "closes": iso(q.closes_at, zone),
            "my_closes": iso(schedule.own_closes, zone),
            "extension_credit": schedule.extension_credit,
            "late": [
                {"until": iso(p.end, zone), "credit": p.credit} for p in schedule.late_periods
            ],
            "open": self.accepting(),
            "points_available": self.points_available,
            "points_earned": self.points_earned,
            "exercises": [e.to_dict(zone) for e in self.exercises],
        }


def _excused(session: Session, user_id: int) -> set[str]:
    """The ids of the exercises ``user_id`` is excused from."""
    return set(session.scalars(select(Excusal.exercise_id).where(Excusal.user_id == user_id)))


def quiz_summaries(
    session: Session, user: User, quiz_ids: Sequence[str] | None = None
) -> list[QuizSummary]:
    """The visible quizzes (not archived; opened, unless ``user`` is an instructor), in course
    order (``models.quiz_order``), with the student's progress on each exercise and their
    schedule.  Two queries (three when a quiz closes: the student's extensions), whatever the
    number of quizzes."""
    now = utcnow()
    stmt = select(Quiz).where(Quiz.archived.is_(False)).order_by(*quiz_order())
    if quiz_ids is not None:
        stmt = stmt.where(Quiz.id.in_(list(quiz_ids)))
    quizzes = [
        q
        for q in session.scalars(stmt)
        if user.is_instructor or q.opens_at is None or now >= q.opens_at
    ]
    exercises = session.scalars(
        select(Exercise)
        .where(Exercise.archived.is_(False), Exercise.quiz_id.in_([q.id for q in quizzes]))
        .order_by(Exercise.position, Exercise.id)
    ).all()
    progress = {
        p.exercise_id: p
        for p in session.scalars(select(Progress).where(Progress.user_id == user.id))
    }
    excused = _excused(session, user.id)
    by_quiz: dict[str, list[ExerciseSummary]] = {q.id: [] for q in quizzes}
    for ex in exercises:
        by_quiz[ex.quiz_id].append(ExerciseSummary(ex, progress.get(ex.id), ex.id in excused))
    extensions: dict[str, Extension] = {}
    if not user.is_instructor and any(q.closes_at is not None for q in quizzes):
        extensions = {
            e.quiz_id: e
            for e in session.scalars(select(Extension).where(Extension.user_id == user.id))
        }
    return [QuizSummary(q, by_quiz[q.id], schedule_for(q, extensions.get(q.id))) for q in quizzes]


@dataclass(frozen=True)
class PositionEntry:
    """One exercise of the quiz as the exercise page shows it around the exercise: its id,
    quiz and title (the previous/next links), points and attempts, and the student's best
    points, status (:func:`exercise_status`) and excusal (the quiz's points)."""

    id: str
    quiz_id: str
    title: str
    points: float
    attempts: int
    best_points: float
    status: str
    excused: bool


@dataclass
class QuizPosition:
    """Where an exercise sits in its quiz, for the exercise page: the quiz's live exercises in
    order with the student's progress on each (``exercises``) and the 0-based ``index`` of the
    exercise among them."""

    exercises: list[PositionEntry]
    index: int

    @property
    def number(self) -> int:
        """The exercise's 1-based number in the quiz ("exercise 3 of 9")."""
        return self.index + 1

    @property
    def count(self) -> int:
        return len(self.exercises)

    @property
    def previous(self) -> PositionEntry | None:
        return self.exercises[self.index - 1] if self.index > 0 else None

    @property
    def next(self) -> PositionEntry | None:
        return self.exercises[self.index + 1] if self.index + 1 < self.count else None

    @cached_property
    def solved(self) -> int:
        return sum(1 for e in self.exercises if e.status == "solved")

    @cached_property
    def finished(self) -> int:
        """Exercises solved or out of attempts."""
        return sum(1 for e in self.exercises if e.status in ("solved", "out_of_attempts"))

    @cached_property
    def _points(self) -> tuple[float, float]:
        return quiz_points((e.points, e.best_points, e.excused) for e in self.exercises)

    @property
    def points_earned(self) -> float:
        return self._points[0]

    @property
    def points_available(self) -> float:
        return self._points[1]


#: The columns the exercise page reads of every exercise of the quiz, selected from the tables
#: (SQLAlchemy Core): building ~20 ``Exercise`` and ``Progress`` objects per page cost ~1.3 ms
#: of a ~9 ms GET, the plain rows ~0.5 ms, and the same select written with the ORM's
#: attributes still went through the ORM's result handling (0.32 instead of 0.16 ms; see
#: benchmarks/NOTES.md).
_EX, _PR, _EXC = Exercise.__table__, Progress.__table__, Excusal.__table__
_QUIZ_POSITION = (
    select(
        _EX.c.id,
        _EX.c.quiz_id,
        _EX.c.title,
        _EX.c.points,
        _EX.c.attempts,
        _PR.c.best_points,
        _PR.c.submissions_count,
        _PR.c.solved_at,
        _PR.c.attempts_used,
        _EXC.c.id,
    )
    .select_from(
        _EX.outerjoin(
            _PR, (_PR.c.exercise_id == _EX.c.id) & (_PR.c.user_id == bindparam("uid"))
        ).outerjoin(_EXC, (_EXC.c.exercise_id == _EX.c.id) & (_EXC.c.user_id == bindparam("uid")))
    )
    .where(_EX.c.quiz_id == bindparam("qid"), _EX.c.archived.is_(False))
    .order_by(_EX.c.position, _EX.c.id)
)


def quiz_position(session: Session, user: User, exercise: Exercise | ExerciseRow) -> QuizPosition:
    """The :class:`QuizPosition` of ``exercise`` for ``user``, in one query (the quiz's
    non-archived exercises, ordered as on the quiz list, with the user's progress rows)."""
    rows = session.connection().execute(_QUIZ_POSITION, {"uid": user.id, "qid": exercise.quiz_id})
    entries = [
        PositionEntry(
            ex_id,
            quiz_id,
            title,
            float(points),
            int(attempts),
            float(best or 0.0),
            exercise_status(count, solved_at, used, int(attempts)),
            excusal is not None,
        )
        for ex_id, quiz_id, title, points, attempts, best, count, solved_at, used, excusal in rows
    ]
    index = next((i for i, e in enumerate(entries) if e.id == exercise.id), 0)
    return QuizPosition(entries, index)
