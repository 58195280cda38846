"""Excusals: an instructor excuses a student from an exercise (left out of the points available to
that student), or takes the excusal back; both refresh the student's totals."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.models import (
    User,
)
from quizapp.models_instructor import Excusal
from quizapp.services import totals
from quizapp.services.audit import reason_text


@services.retry_conflicts
def excuse(
    session: Session,
    user_id: int,
    exercise_id: str,
    *,
    reason: str = "",
    by: User | None = None,
) -> Excusal:
    """Excuse student ``user_id`` from ``exercise_id`` (idempotent; updates the reason); commit.

    Raises ``services.NotFound`` for an unknown student or exercise and
    ``services.BadRequest`` for a reason over 500 characters or holding NUL or a lone surrogate.
    """
    user = session.get(User, user_id)
    if user is None or user.role != "student":
        raise services.NotFound("There is no such student.")
    exercise = services.get_exercise(session, exercise_id, include_archived=True)
    reason = reason_text(reason)
    ex_id, by_id = exercise.id, by.id if by is not None else None
    services.begin_write(session)
    row = session.scalar(
        select(Excusal).where(Excusal.user_id == user_id, Excusal.exercise_id == ex_id)
    )
    if row is None:
        row = Excusal(user_id=user_id, exercise_id=ex_id, created_by_id=by_id)
        session.add(row)
    row.reason = reason
    totals.refresh_user_totals(session, user_id)
    session.commit()
    return row


@services.retry_conflicts
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
    totals.refresh_user_totals(session, user_id)
    session.commit()
    return True


def excused_exercises(session: Session, user_id: int) -> dict[str, Excusal]:
    """Exercise id -> excusal, for one student."""
    return {
        e.exercise_id: e for e in session.scalars(select(Excusal).where(Excusal.user_id == user_id))
    }
