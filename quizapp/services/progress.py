"""Progress: a student's standing per exercise and quiz, rebuilt or summarized."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from quizapp.models import (
    Exercise,
    Progress,
    Quiz,
    Submission,
    User,
    Variant,
    utcnow,
)

if TYPE_CHECKING:
    pass


from quizapp.services.errors import NotFound
from quizapp.services.totals import refresh_user_totals

log = logging.getLogger(__name__)


def recompute_progress(session: Session, user_id: int, exercise_id: str) -> Progress | None:
    """Rebuild the (user, exercise) progress row from its submissions; flush, do not commit.

    For regrades and integrity checks: the result equals what :func:`submit` maintains
    incrementally (best score/points over graded attempts of variant 1, ``best_reached_at`` = the
    first graded attempt reaching that best, ``attempts_used``, ``solved_at`` = first correct,
    ``submissions_count`` and ``last_activity`` over all rows).  Points use the exercise's current
    ``points``.  Returns None (and changes nothing) when there are no submissions and no row.
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
    best = max((sub.score for sub in graded), default=0.0)
    progress.best_score = best
    progress.best_points = round(best * float(exercise.points), 6)
    progress.attempts_used = len(graded)
    progress.best_reached_at = next((sub.created_at for sub in graded if sub.score == best), None)
    progress.solved_at = next((sub.created_at for sub in graded if sub.status == "correct"), None)
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


@dataclass
class ExerciseSummary:
    """One exercise as a student sees it in lists.  ``status``: ``not_started``, ``started``,
    ``solved``, ``out_of_attempts``."""

    exercise: Exercise
    progress: Progress | None

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
        if p is None or not p.submissions_count:
            return "not_started"
        if p.solved_at is not None:
            return "solved"
        if p.attempts_used >= self.exercise.attempts:
            return "out_of_attempts"
        return "started"

    def to_dict(self) -> dict[str, Any]:
        ex = self.exercise
        return {
            "id": ex.id,
            "title": ex.title,
            "points": ex.points,
            "attempts": ex.attempts,
            "status": self.status,
            "best_score": self.best_score,
            "best_points": self.best_points,
            "attempts_used": self.attempts_used,
            "last_activity": self.last_activity.isoformat() if self.last_activity else None,
        }


@dataclass
class QuizSummary:
    """A quiz with its (non-archived) exercises and the student's points."""

    quiz: Quiz
    exercises: list[ExerciseSummary]

    @property
    def points_available(self) -> float:
        return float(sum(e.exercise.points for e in self.exercises))

    @property
    def points_earned(self) -> float:
        return float(sum(e.best_points for e in self.exercises))

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
        q = self.quiz
        return {
            "id": q.id,
            "title": q.title,
            "description": q.description,
            "opens": q.opens_at.isoformat() if q.opens_at else None,
            "closes": q.closes_at.isoformat() if q.closes_at else None,
            "open": q.is_open(),
            "points_available": self.points_available,
            "points_earned": self.points_earned,
            "exercises": [e.to_dict() for e in self.exercises],
        }


def quiz_summaries(
    session: Session, user: User, quiz_ids: Sequence[str] | None = None
) -> list[QuizSummary]:
    """The visible quizzes (not archived; opened, unless ``user`` is an instructor), in order,
    with the student's progress on each exercise.  Two queries, whatever the number of quizzes."""
    now = utcnow()
    stmt = select(Quiz).where(Quiz.archived.is_(False)).order_by(Quiz.position, Quiz.id)
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
    by_quiz: dict[str, list[ExerciseSummary]] = {q.id: [] for q in quizzes}
    for ex in exercises:
        by_quiz[ex.quiz_id].append(ExerciseSummary(ex, progress.get(ex.id)))
    return [QuizSummary(q, by_quiz[q.id]) for q in quizzes]
