"""What every instructor action on a student's grades shares: who acted (:class:`Actor`), the
``grade_audit`` row each change adds, the lookups of the student, quiz or exercise it names, and
the instructor's student page (extensions with their schedules, and the history).

**Audit.**  Every extension and override set or removed adds a ``grade_audit`` row (who, when,
before, after, why); nothing is ever deleted from it.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp.models import Exercise, Progress, Quiz, User, utcnow
from quizapp.models_instructor import AuditEntry, Extension
from quizapp.services.errors import BadRequest, NotFound
from quizapp.services.schedules import Schedule, schedule_for
from quizapp.services.text import db_safe
from quizapp.services.variants import EXERCISE_ID_RE

#: Longest reason kept with an extension, an override, an excusal or their removal (it is shown
#: in the audit history and on the student's page).
REASON_MAX = 500


def reason_text(reason: Any, *, required: bool = False) -> str:
    """An instructor's reason for a change to a student's grades, stripped: the one rule for
    extensions, overrides, excusals and their removal.  Raises ``BadRequest`` naming
    ``reason`` when it is not text, empty while ``required``, longer than ``REASON_MAX``
    characters, or holds a NUL or lone surrogate (PostgreSQL cannot store them)."""
    if reason is None:
        reason = ""
    if not isinstance(reason, str):
        raise BadRequest("reason: must be text")
    text = reason.strip()
    if required and not text:
        raise BadRequest("reason: a reason is required (it is kept in the audit history)")
    if len(text) > REASON_MAX:
        raise BadRequest(f"reason: at most {REASON_MAX} characters, got {len(text):,}")
    if not db_safe(text):
        raise BadRequest(
            "reason: holds a NUL character or an invalid (surrogate) character; remove it"
        )
    return text


@dataclass(frozen=True)
class Actor:
    """Who made a change: a signed-in instructor, or the command line (``name`` then says
    which system user ran it)."""

    user_id: int | None
    name: str

    @classmethod
    def of(cls, user: User | None) -> Actor:
        if user is not None:
            return cls(user.id, user.username)
        try:
            who = getpass.getuser()
        except Exception:  # no login name (a container without one)
            who = "unknown"
        return cls(None, f"command line ({who})")


def _audit(
    session: Session,
    actor: Actor,
    action: str,
    user_id: int,
    *,
    quiz_id: str | None = None,
    exercise_id: str | None = None,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    reason: str,
) -> AuditEntry:
    entry = AuditEntry(
        created_at=utcnow(),
        actor_id=actor.user_id,
        actor=actor.name[:200],
        action=action,
        user_id=user_id,
        quiz_id=quiz_id,
        exercise_id=exercise_id,
        before=before,
        after=after,
        reason=reason,
    )
    session.add(entry)
    return entry


def _student(session: Session, username: str) -> User:
    from quizapp.services.accounts import find_user

    user = find_user(session, username) if isinstance(username, str) else None
    if user is None or user.role != "student":
        raise NotFound(f"username: there is no student {str(username)[:100]!r}")
    return user


def _live_quiz(session: Session, quiz_id: str) -> Quiz:
    quiz = session.get(Quiz, quiz_id) if isinstance(quiz_id, str) and quiz_id else None
    if quiz is None or quiz.archived:
        raise NotFound(f"quiz: there is no quiz {str(quiz_id)[:100]!r}")
    return quiz


def _exercise(session: Session, exercise_id: str) -> Exercise:
    exercise = (
        session.get(Exercise, exercise_id)
        if isinstance(exercise_id, str) and EXERCISE_ID_RE.fullmatch(exercise_id)
        else None
    )
    if exercise is None:
        raise NotFound(f"exercise: there is no exercise {str(exercise_id)[:200]!r}")
    return exercise


def student_progress(session: Session, exercise_id: str, username: str) -> Progress | None:
    """Student ``username``'s progress row on ``exercise_id`` (None when they have none).
    Raises ``NotFound`` for an unknown exercise or student."""
    exercise = _exercise(session, exercise_id)
    user = _student(session, username)
    return session.scalar(
        select(Progress).where(Progress.user_id == user.id, Progress.exercise_id == exercise.id)
    )


def live_quiz(session: Session, quiz_id: str) -> Quiz:
    """The quiz ``quiz_id`` if it is live; raises ``NotFound`` (``quiz: there is no quiz ...``)."""
    return _live_quiz(session, quiz_id)


@dataclass
class StudentDeadlines:
    """What the instructor's student page lists: the student's extensions (with each quiz's
    schedule for them) and the audit history of their extensions and overrides, newest first."""

    extensions: list[tuple[Extension, Schedule]] = field(default_factory=list)
    history: list[AuditEntry] = field(default_factory=list)


def student_deadlines(session: Session, user_id: int) -> StudentDeadlines:
    """The extensions and the audit history of student ``user_id`` (two queries)."""
    rows = session.scalars(
        select(Extension).where(Extension.user_id == user_id).order_by(Extension.quiz_id)
    ).all()
    history = session.scalars(
        select(AuditEntry).where(AuditEntry.user_id == user_id).order_by(AuditEntry.id.desc())
    ).all()
    return StudentDeadlines([(e, schedule_for(e.quiz, e)) for e in rows], list(history))


__all__ = [
    "Actor",
    "StudentDeadlines",
    "live_quiz",
    "student_deadlines",
    "student_progress",
]
