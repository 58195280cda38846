"""Score overrides: the points an instructor gives a student on an exercise in place of the
graded ones (:func:`quizapp.services.points.exercise_points`), set or removed, every change
audited and told to the LMS grade queue (``quizapp.signals.score_changed``)."""

from __future__ import annotations

import math
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp.models import Progress, User, utcnow
from quizapp.services.audit import Actor, _audit, _exercise, _student, reason_text
from quizapp.services.errors import BadRequest
from quizapp.services.points import exercise_points
from quizapp.services.totals import refresh_user_totals
from quizapp.services.transactions import begin_write
from quizapp.services.variants import ensure_progress


def _override_values(progress: Progress | None) -> dict[str, Any] | None:
    if progress is None or progress.override_points is None:
        return None
    return {"points": float(progress.override_points), "reason": progress.override_reason}


def parse_points(value: Any, most: float, field: str = "points") -> float:
    """Override points: a number from 0 to ``most`` (the exercise's points).  Raises
    ``BadRequest`` naming ``field``."""
    text = str(value).strip() if value is not None else ""
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or not 0.0 <= number <= float(most):
        shown = int(most) if float(most).is_integer() else most
        raise BadRequest(
            f"{field}: must be a number from 0 to {shown} (the exercise's points), got {text!r}"
        )
    return number


def _score_changed(session: Session, user_id: int, exercise_id: str) -> None:
    """Tell the receivers of ``quizapp.signals.score_changed`` (the LMS grade queue) that the
    student's points on ``exercise_id`` changed, after the commit."""
    from quizapp import signals

    quiz_id = exercise_id.split("/", 1)[0]
    signals.score_changed.send(session, user_id=user_id, exercise_id=exercise_id, quiz_id=quiz_id)


def set_override(
    session: Session,
    exercise_id: str,
    username: str,
    points: Any,
    reason: str,
    *,
    by: User | None = None,
) -> Progress:
    """Set student ``username``'s points on ``exercise_id`` to ``points`` by hand, for
    ``reason`` (required).  The override wins over every computed score (later attempts and
    regrades change the computed best, not the points) until removed; the scoreboard totals are
    refreshed in the same transaction.  Audited; commits.

    Raises ``NotFound`` (unknown exercise or student) or ``BadRequest`` (points not a number
    from 0 to the exercise's points, an empty reason), one line naming the field; nothing is
    changed then.
    """
    exercise = _exercise(session, exercise_id)
    user = _student(session, username)
    number = parse_points(points, exercise.points)
    text = reason_text(reason, required=True)
    actor = Actor.of(by)
    ex_id, user_id, ex_points = exercise.id, user.id, float(exercise.points)
    begin_write(session)
    progress = ensure_progress(session, user, exercise, lock=True)
    before = _override_values(progress)
    progress.override_points = number
    progress.override_reason = text
    progress.override_by_id = actor.user_id
    progress.override_at = utcnow()
    progress.best_points = exercise_points(progress.best_score, ex_points, number)
    if progress.best_reached_at is None:
        progress.best_reached_at = progress.override_at
    _audit(
        session,
        actor,
        "override",
        user_id,
        exercise_id=ex_id,
        before=before,
        after=_override_values(progress),
        reason=text,
    )
    refresh_user_totals(session, user_id)
    session.commit()
    _score_changed(session, user_id, ex_id)
    return progress


def remove_override(
    session: Session,
    exercise_id: str,
    username: str,
    *,
    reason: str = "",
    by: User | None = None,
) -> bool:
    """Remove the override of ``username`` on ``exercise_id``: their points are computed from
    their attempts again.  True if there was one.  Audited; commits.  Raises ``NotFound``."""
    exercise = _exercise(session, exercise_id)
    user = _student(session, username)
    actor = Actor.of(by)
    ex_id, user_id, ex_points = exercise.id, user.id, float(exercise.points)
    begin_write(session)
    progress = session.scalar(
        select(Progress)
        .where(Progress.user_id == user_id, Progress.exercise_id == ex_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if progress is None or progress.override_points is None:
        session.rollback()
        return False
    before = _override_values(progress)
    if progress.best_reached_at == progress.override_at and not progress.attempts_used:
        progress.best_reached_at = None
    progress.override_points = None
    progress.override_reason = None
    progress.override_by_id = None
    progress.override_at = None
    progress.best_points = exercise_points(progress.best_score, ex_points, None)
    _audit(
        session,
        actor,
        "remove-override",
        user_id,
        exercise_id=ex_id,
        before=before,
        after=None,
        reason=reason_text(reason),
    )
    refresh_user_totals(session, user_id)
    session.commit()
    _score_changed(session, user_id, ex_id)
    return True


__all__ = [
    "parse_points",
    "remove_override",
    "set_override",
]
