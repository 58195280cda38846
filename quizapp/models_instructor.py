"""Tables of the instructor's side (issue 5), on the same declarative base as ``quizapp.models``.

- ``excusals``: a student excused from an exercise; the exercise leaves that student's points
  available (gradebook totals, scoreboard) until the excusal is removed.
- ``regrades``: one row per regrade run of an exercise (who, when, the version graded against,
  the summary of what changed, including each student's previous progress values).
- ``verdict_history``: the verdict a submission had before a regrade replaced it (status, score,
  points, mistakes, verdict JSON, the version it was graded against).  Together with
  ``regrades.summary`` nothing a regrade changes is lost.
- ``password_resets``: one-time password-reset links (roster import, "new link" button).  Only the
  SHA-256 of the token is stored; a link expires and works once.
- ``incidents``: an exercise that could not be shown to a student (503): the incident id the
  student was given, and the details (seed, file and line, the error) kept for the instructor's
  exercise page and the log, never shown to the student.
- ``extensions``: one student's own closing time for one quiz (issue 17); the late periods of the
  quiz follow it (``quizapp.services.deadlines``).
- ``grade_audit``: every extension and score override set or removed: who, when, what (before and
  after), why.  Rows are only ever added.

The Alembic revisions creating them are in ``migrations/versions/`` (``instructor_0001_*.py``,
``deadlines_0001_*.py`` for extensions and the audit, ``hardening_0001_*.py`` for incidents).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from quizapp.models import Exercise, Model, Quiz, Submission, User, UTCDateTime, utcnow


class Excusal(Model):
    """``user`` is excused from ``exercise``: it counts neither earned nor available points."""

    __tablename__ = "excusals"
    __table_args__ = (UniqueConstraint("user_id", "exercise_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    exercise_id: Mapped[str] = mapped_column(ForeignKey("exercises.id"), index=True)
    reason: Mapped[str] = mapped_column(String(500), default="")
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    user: Mapped[User] = relationship(foreign_keys=[user_id])
    exercise: Mapped[Exercise] = relationship()


class Regrade(Model):
    """One regrade run of an exercise against its version ``version_id``.

    ``summary`` (JSON) holds the counts and, per changed submission and per changed progress row,
    the old and new values (see ``quizapp.instructor.RegradeSummary.to_dict``).
    """

    __tablename__ = "regrades"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    exercise_id: Mapped[str] = mapped_column(ForeignKey("exercises.id"), index=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("exercise_versions.id"))
    started_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    submissions_regraded: Mapped[int] = mapped_column(Integer, default=0)
    submissions_changed: Mapped[int] = mapped_column(Integer, default=0)
    summary: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class VerdictHistory(Model):
    """The verdict ``submission`` had before regrade ``regrade_id`` replaced it."""

    __tablename__ = "verdict_history"
    __table_args__ = (Index("ix_verdict_history_submission", "submission_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    regrade_id: Mapped[int] = mapped_column(ForeignKey("regrades.id"), index=True)
    #: the version the submission's variant was drawn from (``submissions.version_id``); the
    #: key that gave this old verdict is that version's, or the one of the regrade before
    #: (``regrades.version_id`` of the previous run that changed it), if there was one
    version_id: Mapped[int] = mapped_column(ForeignKey("exercise_versions.id"))
    status: Mapped[str] = mapped_column(String(16))
    score: Mapped[float] = mapped_column(Float)
    points: Mapped[float] = mapped_column(Float)
    mistakes: Mapped[list[str]] = mapped_column(JSON, default=list)
    verdict: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    submission: Mapped[Submission] = relationship()
    regrade: Mapped[Regrade] = relationship()


class PasswordReset(Model):
    """A one-time password-reset link.  ``token_hash`` is the SHA-256 hex of the token."""

    __tablename__ = "password_resets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    note: Mapped[str] = mapped_column(Text, default="")

    user: Mapped[User] = relationship()


class Incident(Model):
    """An exercise page or API call that failed for a student with a 503 (the exercise could not
    be shown or graded).  ``id`` is what the student was told; ``detail`` is the error with its
    seed, file and line, for the instructor (``quizapp.web.errors``)."""

    __tablename__ = "incidents"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    exercise_id: Mapped[str | None] = mapped_column(
        ForeignKey("exercises.id"), index=True, default=None
    )
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), default=None)
    path: Mapped[str] = mapped_column(String(500), default="")
    detail: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Extension(Model):
    """Student ``user`` closes quiz ``quiz`` at ``until`` instead of the quiz's ``closes``;
    answers after the quiz's own closing time and before ``until`` earn ``credit``, and the quiz's
    late periods follow ``until`` (``quizapp.services.deadlines``)."""

    __tablename__ = "extensions"
    __table_args__ = (UniqueConstraint("user_id", "quiz_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    quiz_id: Mapped[str] = mapped_column(ForeignKey("quizzes.id"), index=True)
    until: Mapped[datetime] = mapped_column(UTCDateTime)
    credit: Mapped[float] = mapped_column(Float, default=1.0)
    reason: Mapped[str] = mapped_column(String(500), default="")
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    user: Mapped[User] = relationship(foreign_keys=[user_id])
    quiz: Mapped[Quiz] = relationship()


class AuditEntry(Model):
    """One change of a deadline or a score by an instructor: ``action`` is ``extend``,
    ``remove-extension``, ``override`` or ``remove-override``; ``before`` / ``after`` the values
    (JSON, None when there was none); ``actor`` who did it (their username, or ``command line``
    and the system user), ``reason`` why."""

    __tablename__ = "grade_audit"
    __table_args__ = (Index("ix_grade_audit_user", "user_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), default=None)
    actor: Mapped[str] = mapped_column(String(200), default="")
    action: Mapped[str] = mapped_column(String(32))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    quiz_id: Mapped[str | None] = mapped_column(String(100), default=None)
    exercise_id: Mapped[str | None] = mapped_column(String(200), default=None)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    reason: Mapped[str] = mapped_column(Text, default="")

    user: Mapped[User] = relationship(foreign_keys=[user_id])


__all__ = [
    "AuditEntry",
    "Excusal",
    "Extension",
    "Incident",
    "PasswordReset",
    "Regrade",
    "VerdictHistory",
]
