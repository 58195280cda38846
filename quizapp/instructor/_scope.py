"""What the instructor views range over: live quizzes and exercises, the students."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.models import (
    Exercise,
    Quiz,
    User,
    quiz_order,
)


def live_exercises(session: Session, quiz_id: str | None = None) -> list[Exercise]:
    """Non-archived exercises of non-archived quizzes (of ``quiz_id`` only if given), in order."""
    stmt = (
        select(Exercise)
        .join(Quiz, Quiz.id == Exercise.quiz_id)
        .where(Exercise.archived.is_(False), Quiz.archived.is_(False))
        .order_by(*quiz_order(), Exercise.position, Exercise.id)
    )
    if quiz_id is not None:
        stmt = stmt.where(Exercise.quiz_id == quiz_id)
    return list(session.scalars(stmt))


def live_quizzes(session: Session) -> list[Quiz]:
    """Non-archived quizzes in course order."""
    return list(
        session.scalars(select(Quiz).where(Quiz.archived.is_(False)).order_by(*quiz_order()))
    )


def get_quiz(session: Session, quiz_id: str) -> Quiz:
    """The non-archived quiz ``quiz_id``; raises ``services.NotFound``."""
    quiz = session.get(Quiz, quiz_id) if isinstance(quiz_id, str) else None
    if quiz is None or quiz.archived:
        raise services.NotFound(f"There is no quiz '{quiz_id}'.")
    return quiz


def all_students(session: Session) -> list[User]:
    """Every user with the role ``student``, ordered by username (case-insensitively)."""
    return list(
        session.scalars(
            select(User).where(User.role == "student").order_by(User.username_key, User.id)
        )
    )
