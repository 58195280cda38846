"""The score sent to the LMS: one function, :func:`lms_score`.

A grade column of the LMS (an AGS line item) is tied to a quiz (``resourceId`` ``quiz:<id>``) or
to one exercise (``exercise:<id>``).  What the LMS gets for a student there is computed here and
nowhere else, from the same rows as the scoreboard and gradebook:

- a student's **points** on an exercise are ``progress.best_points`` (their best credited graded
  attempt on variant 1 times the exercise's points, or an override; practice variants never count, so several variants
  of one exercise are never reported separately, only the graded one's best);
- a quiz's points are the sum over its **live** exercises (exercise and quiz not archived) that
  the student is **not excused** from; excused exercises leave the available points as well,
  exactly as ``score_totals`` (``quizapp.services.totals``) and the gradebook count them;
- ``scoreGiven`` = points earned, ``scoreMaximum`` = points available to this student.  The
  line item's own maximum is the quiz's points (set when it was deep-linked); when an excusal
  lowers ``scoreMaximum``, the LMS scales ``scoreGiven / scoreMaximum`` to its column (AGS 2.0,
  section 3.4), so the student's percentage is the gradebook's.

Nothing is sent (None) while the student has no graded attempt on the resource, or when they are
excused from all of it: an LMS column reading 0 before the student started would be wrong.

Late credit and overrides (``quizapp.services.deadlines``) are stored in the progress rows:
``best_points`` is the best *credited* score times the points, or the instructor's override.  An
overridden exercise counts as graded (and finished) even without an attempt, so the LMS gets the
points the instructor set.  The grade queue notices a change like any other: the next send
compares the new score with the last one the LMS accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.models import Exercise, Progress, Quiz
from quizapp.models_instructor import Excusal

#: Decimal places scores are rounded to (points are stored with 6, see ``services.submit``).
PLACES = 6


def resource_id(*, quiz_id: str | None = None, exercise_id: str | None = None) -> str:
    """The AGS ``resourceId`` of a quiz (``quiz:<id>``) or an exercise (``exercise:<id>``)."""
    if (quiz_id is None) == (exercise_id is None):
        raise ValueError("give exactly one of quiz_id and exercise_id")
    return f"quiz:{quiz_id}" if quiz_id is not None else f"exercise:{exercise_id}"


def parse_resource_id(value: str) -> tuple[str, str]:
    """``("quiz", id)`` or ``("exercise", id)`` from a ``resourceId``; raises ``ValueError``."""
    kind, sep, ident = value.partition(":")
    if not sep or kind not in ("quiz", "exercise") or not ident:
        raise ValueError(f"not a quizapp resourceId: {value!r}")
    return kind, ident


@dataclass(frozen=True)
class LmsScore:
    """One AGS score: ``given`` and ``maximum`` in points, ``activity`` the AGS
    ``activityProgress`` (``InProgress``, or ``Completed`` once every exercise counted is solved
    or out of attempts); ``gradingProgress`` is always ``FullyGraded`` (autograded)."""

    given: float
    maximum: float
    activity: str
    grading: str = "FullyGraded"

    def same_as(self, given: float | None, maximum: float | None, activity: str | None) -> bool:
        """True when this score equals the one described (as last sent)."""
        return (
            given is not None
            and maximum is not None
            and round(given, PLACES) == self.given
            and round(maximum, PLACES) == self.maximum
            and activity == self.activity
        )


def _exercise_points(progress_best_points: float | None) -> float:
    """A student's points on one exercise as the LMS sees them: the progress row's
    ``best_points`` (0 without a row), which holds late credit and overrides already (see the
    module docstring)."""
    return float(progress_best_points or 0.0)


def _rows(session: Session, user_id: int, kind: str, ident: str) -> list[Any]:
    """(points, attempts, best_points, attempts_used, solved, excused, overridden) per live
    exercise of the resource, with the student's progress and excusal."""
    stmt = (
        select(
            Exercise.points,
            Exercise.attempts,
            Progress.best_points,
            Progress.attempts_used,
            Progress.solved_at.is_not(None),
            Excusal.id.is_not(None),
            Progress.override_points.is_not(None),
        )
        .join(Quiz, Quiz.id == Exercise.quiz_id)
        .outerjoin(Progress, and_(Progress.exercise_id == Exercise.id, Progress.user_id == user_id))
        .outerjoin(Excusal, and_(Excusal.exercise_id == Exercise.id, Excusal.user_id == user_id))
        .where(Exercise.archived.is_(False), Quiz.archived.is_(False))
    )
    stmt = stmt.where(Exercise.quiz_id == ident if kind == "quiz" else Exercise.id == ident)
    return list(session.execute(stmt).all())


def lms_score(session: Session, user_id: int, resource: str) -> LmsScore | None:
    """The score the LMS gets for student ``user_id`` on ``resource`` (a ``resourceId``, see
    :func:`resource_id`), or None when there is nothing to send (no graded attempt yet,
    excused from everything, or the quiz/exercise is archived or unknown).

    One query.  Points are rounded to :data:`PLACES` decimals.  Raises ``ValueError`` for a
    ``resource`` that is not a quizapp ``resourceId``.
    """
    kind, ident = parse_resource_id(resource)
    rows = _rows(session, user_id, kind, ident)
    given, maximum = services.quiz_points(
        (points, _exercise_points(best), bool(excused))
        for points, _attempts, best, _used, _solved, excused, _overridden in rows
    )
    counted = [row for row in rows if not row[5]]
    attempted = any(bool(used) or bool(overridden) for _, _, _, used, _, _, overridden in counted)
    finished = all(
        bool(solved) or bool(overridden) or int(used or 0) >= int(attempts)
        for _, attempts, _, used, solved, _, overridden in counted
    )
    if not attempted or maximum <= 0:
        return None
    return LmsScore(
        given=round(given, PLACES),
        maximum=round(maximum, PLACES),
        activity="Completed" if finished else "InProgress",
    )


def resource_points(session: Session, resource: str) -> tuple[str, float] | None:
    """(title, points) of the live quiz or exercise ``resource``: the label and score maximum
    of its line item.  None when it is unknown or archived."""
    kind, ident = parse_resource_id(resource)
    if kind == "exercise":
        ex = session.get(Exercise, ident)
        if ex is None or ex.archived or ex.quiz.archived:
            return None
        return ex.title, float(ex.points)
    quiz = session.get(Quiz, ident)
    if quiz is None or quiz.archived:
        return None
    points = sum(float(e.points) for e in quiz.exercises if not e.archived)
    return quiz.title, round(points, PLACES)


__all__ = [
    "PLACES",
    "LmsScore",
    "lms_score",
    "parse_resource_id",
    "resource_id",
    "resource_points",
]
