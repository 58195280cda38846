"""SQLAlchemy 2 typed models (Flask-SQLAlchemy 3.1).  The Alembic history is in ``migrations/``.

Tables and what they guarantee:

- ``users``: one row per person; ``username_key`` (NFKC + casefold of the username) is unique, so
  ``Ana``/``ana`` and composed/decomposed ``é`` cannot both register; ``session_version`` is in
  every session cookie of the user, raising it signs them out everywhere.
- ``api_tokens``: bearer tokens for the JSON API, stored as SHA-256 hex digests; revocable.
- ``quizzes``, ``exercises``: the bank as last synced; removed ones are archived, never deleted.
- ``exercise_versions``: every distinct YAML text an exercise ever had (content hash = version).
- ``variants``: a student's concrete instance of an exercise: (user, exercise, variant number) ->
  seed, the exercise version it was generated from, and, stored at creation and never
  regenerated, what was drawn (``record``) and what the student is shown (``page``).
- ``variant_failures``: seeds that could not produce a variant (a fallback seed was used).
- ``submissions``: append-only, one row per answer posted, with the verdict it got.
- ``progress``: one row per (user, exercise), updated in the transaction that stores a
  submission; scoreboards and gradebooks read these rows, never scan submissions.
- ``score_totals``: per student, their progress summed per quiz and over the course (live,
  non-excused exercises), updated in the same transaction as the progress rows; the scoreboard
  ranks these rows (``quizapp.services.totals``).  ``score_totals_state`` holds the fingerprint
  of the live exercises the totals were computed for.

All timestamps are timezone-aware UTC (``UTCDateTime`` restores the zone SQLite drops).
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from flask_login import UserMixin
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship
from werkzeug.security import check_password_hash, generate_password_hash

#: Constraint names Alembic can find again (SQLite batch migrations need named constraints).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ROLES = ("student", "instructor")
#: Werkzeug's password hashing method: scrypt with its defaults (n=2**15, r=8, p=1), a memory-hard
#: KDF (RFC 7914).  Hashes carry their parameters, so changing this never breaks stored ones.
PASSWORD_METHOD = "scrypt"
USERNAME_MAX = 64
#: Verdict statuses, as in ``quizapp.grading.types.Status``.
STATUSES = ("correct", "partial", "incorrect", "invalid")


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A ``DateTime(timezone=True)`` that always returns aware UTC datetimes.

    SQLite stores no zone; values read back naive are UTC by construction and get ``tzinfo=UTC``.
    Naive values written are taken as UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    """Declarative base with a naming convention for constraints."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)

    if TYPE_CHECKING:
        # Every model here is mapped to one ``Table`` (none to a join or a select), so Core
        # ``insert``/``update``/``delete`` take ``Model.__table__`` (SQLAlchemy types it as the
        # wider ``FromClause``).
        __table__: ClassVar[Table]


db = SQLAlchemy(model_class=Base)

if TYPE_CHECKING:
    # What ``db.Model`` is to a type checker: Flask-SQLAlchemy builds it at run time as a subclass
    # of ``Base`` (adding ``query`` and the table-name default), which mypy cannot follow as a base
    # class.  Models subclass ``Model``; at run time it is ``db.Model`` itself.
    Model = Base
else:
    Model = db.Model


def current_session() -> Session:
    """The database session of the current app context, typed as SQLAlchemy's ``Session``.

    ``db.session`` is Flask-SQLAlchemy's ``scoped_session``: a proxy that forwards each call to the
    session of the current app context, and is itself no ``sqlalchemy.orm.Session``.  Calling it,
    ``db.session()``, returns that session (the very object the proxy forwards to, created on first
    use and removed when the app context ends), so the web and CLI layers pass
    ``current_session()`` to the service functions, which take a plain ``Session`` and know
    nothing of Flask.  Call it inside the app context that does the work (a request, a CLI
    command, a streamed response under ``stream_with_context``); a session taken in one app
    context must not be used after it ends.

    Raises ``RuntimeError`` outside an app context (as ``db.session`` does).
    """
    return db.session()


def username_key(username: str) -> str:
    """The uniqueness key of a username: Unicode NFKC normalization, then case folding.

    ``"Ana"`` and ``"ana"`` share a key; so do ``"é"`` composed (U+00E9) and decomposed
    (``e`` + U+0301), and full-width ``"Ａｎａ"``.  Follows UAX #15 / Unicode's caseless matching
    (NFKC_Casefold, approximated as NFKC(casefold(NFKC(s)))).
    """
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", username).casefold())


class User(UserMixin, Model):
    """A person: a student or an instructor."""

    __tablename__ = "users"
    __table_args__ = (CheckConstraint("role IN ('student', 'instructor')", name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(USERNAME_MAX))
    username_key: Mapped[str] = mapped_column(String(4 * USERNAME_MAX), unique=True)
    display_name: Mapped[str] = mapped_column(String(120), default="")
    email: Mapped[str | None] = mapped_column(String(254), default=None)
    role: Mapped[str] = mapped_column(String(16), default="student")
    password_hash: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: Part of every session and remember-me cookie of this user (``get_id``); raising it ends
    #: them all (sign-out, password change or reset: ``services.end_sessions``).
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    tokens: Mapped[list[ApiToken]] = relationship(back_populates="user")

    def get_id(self) -> str:
        """Flask-Login's "alternative id": ``"<id>:<session_version>"``, stored in the session
        and in the remember-me cookie; the user loader (``quizapp.web``) accepts it only while the
        version is the stored one (Flask-Login documents alternative tokens for exactly this:
        invalidating sessions without changing the user's id)."""
        return f"{self.id}:{self.session_version or 0}"

    def set_password(self, password: str) -> None:
        """Hash ``password`` with Werkzeug's scrypt (``PASSWORD_METHOD``)."""
        self.password_hash = generate_password_hash(password, method=PASSWORD_METHOD)

    def check_password(self, password: str) -> bool:
        """True if ``password`` matches the stored hash (constant-time comparison)."""
        return check_password_hash(self.password_hash, password)

    @property
    def is_active(self) -> bool:  # Flask-Login
        return bool(self.active)

    @property
    def is_instructor(self) -> bool:
        return self.role == "instructor"

    @property
    def name(self) -> str:
        """What the UI shows: the display name, else the username."""
        return self.display_name or self.username

    def __repr__(self) -> str:
        return f"<User {self.id} {self.username!r} {self.role}>"


class ApiToken(Model):
    """A bearer token of the JSON API.  Only ``sha256(token)`` is stored; the token is shown once."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(120), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)

    user: Mapped[User] = relationship(back_populates="tokens")

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class Quiz(Model):
    """A folder of the bank (``exercises/<id>/quiz.yaml``)."""

    __tablename__ = "quizzes"

    id: Mapped[str] = mapped_column(String(100), primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    #: ``order:`` of quiz.yaml; None when it has none (listed after the ordered quizzes).
    position: Mapped[int | None] = mapped_column(Integer, default=None)
    opens_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    closes_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    #: the late periods after ``closes_at``, in order: ``[{"until": ISO 8601 UTC, "credit": c}]``
    #: (``quizapp.services.deadlines`` reads them).
    late: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    #: the IANA time zone the quiz's wall-clock times were read in (``QUIZAPP_TIMEZONE`` at the
    #: last sync); deadline messages are written in it.
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    content_hash: Mapped[str] = mapped_column(String(64), default="")
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    exercises: Mapped[list[Exercise]] = relationship(
        back_populates="quiz", order_by="Exercise.position"
    )

    def is_open(self, now: datetime | None = None) -> bool:
        """True between ``opens_at`` and ``closes_at`` (either may be unset)."""
        now = now or utcnow()
        if self.opens_at is not None and now < self.opens_at:
            return False
        return not (self.closes_at is not None and now >= self.closes_at)


def quiz_order() -> tuple[Any, ...]:
    """ORDER BY clauses of the course order of quizzes: ``order:`` (quizzes without one after),
    then opening time (quizzes without one after), then id (``quizapp.bank.quiz_sort_key``)."""
    return (
        Quiz.position.is_(None),
        Quiz.position,
        Quiz.opens_at.is_(None),
        Quiz.opens_at,
        Quiz.id,
    )


class Exercise(Model):
    """One exercise of the bank, id ``<quiz-folder>/<file-stem>``; its YAML is versioned."""

    __tablename__ = "exercises"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    quiz_id: Mapped[str] = mapped_column(ForeignKey("quizzes.id"), index=True)
    title: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(64), default="")
    points: Mapped[float] = mapped_column(Float, default=10.0)
    attempts: Mapped[int] = mapped_column(Integer, default=3)
    practice: Mapped[bool] = mapped_column(Boolean, default=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    concepts: Mapped[list[str]] = mapped_column(JSON, default=list)
    #: content hash (sha256 hex of the YAML text) of the version new variants are generated from.
    current_hash: Mapped[str] = mapped_column(String(64), default="")
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    #: the last sync's error for this exercise's file ("file:line:column: message"), or None.
    sync_error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    quiz: Mapped[Quiz] = relationship(back_populates="exercises")
    versions: Mapped[list[ExerciseVersion]] = relationship(
        back_populates="exercise", order_by="ExerciseVersion.id"
    )
    current_version: Mapped[ExerciseVersion | None] = relationship(
        primaryjoin="and_(Exercise.id == foreign(ExerciseVersion.exercise_id), "
        "Exercise.current_hash == foreign(ExerciseVersion.content_hash))",
        viewonly=True,
        uselist=False,
    )


class ExerciseVersion(Model):
    """One distinct YAML text of an exercise.  Variants and submissions point at the version used."""

    __tablename__ = "exercise_versions"
    __table_args__ = (UniqueConstraint("exercise_id", "content_hash"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    exercise_id: Mapped[str] = mapped_column(ForeignKey("exercises.id"), index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(String(200))
    points: Mapped[float] = mapped_column(Float)
    attempts: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    exercise: Mapped[Exercise] = relationship(back_populates="versions")


class Variant(Model):
    """A student's concrete instance of an exercise.

    ``variant_number`` 1 is the graded one (its best score is the exercise's score); 2, 3, ... are
    practice variants opened with "try a new variant" after finishing.  ``seed`` is
    ``derive_seed(seed_secret, user_id, exercise_id, variant_number)``, stored so the variant is
    reproducible even if the secret changes.
    """

    __tablename__ = "variants"
    __table_args__ = (UniqueConstraint("user_id", "exercise_id", "variant_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    exercise_id: Mapped[str] = mapped_column(ForeignKey("exercises.id"), index=True)
    variant_number: Mapped[int] = mapped_column(Integer, default=1)
    seed: Mapped[int] = mapped_column(BigInteger)
    version_id: Mapped[int] = mapped_column(ForeignKey("exercise_versions.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: when the variant was solved or ran out of attempts (its solution became visible), or None.
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    #: The variant as drawn, frozen at creation (``quizapp.bank.stored.freeze``): values, expected
    #: answer, answer form, tolerance, detector data.  Every view, submit and regrade reads it.
    record: Mapped[dict[str, Any]] = mapped_column(JSON, deferred=True, deferred_group="stored")
    #: What the student is shown, rendered once at creation (``quizapp.page.render_page``).
    page: Mapped[dict[str, Any]] = mapped_column(JSON, deferred=True, deferred_group="stored")
    #: What produced it: ``"quizapp <version>, kind <name>"`` (the YAML is ``version_id``'s).
    generator: Mapped[str] = mapped_column(String(120), default="")
    #: How many derived seeds failed before ``seed`` produced the variant (0: the student's own
    #: seed did; see ``quizapp.bank.seeds.first_working_seed`` and ``variant_failures``).
    seed_fallbacks: Mapped[int] = mapped_column(Integer, default=0)
    #: When a regrade last changed the stored answer key (an instructor's corrected ``answer``
    #: or tolerance), else None; a submit graded against the key before that is retried.
    rekeyed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)

    user: Mapped[User] = relationship()
    exercise: Mapped[Exercise] = relationship()
    version: Mapped[ExerciseVersion] = relationship()
    submissions: Mapped[list[Submission]] = relationship(
        back_populates="variant", order_by="Submission.id"
    )

    @property
    def is_practice(self) -> bool:
        return self.variant_number > 1


class VariantFailure(Model):
    """A seed that could not produce a variant (the next derived seed was used instead): logged
    for the instructor (exercise statistics) and ``quizapp check``."""

    __tablename__ = "variant_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    exercise_id: Mapped[str] = mapped_column(ForeignKey("exercises.id"), index=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("exercise_versions.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    variant_number: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    error: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class VerdictView:
    """``cells``, ``message`` and ``mistake_messages`` of a stored verdict (the JSON dict in
    ``self.verdict``, or None): shared by :class:`Submission` and ``services.SubmissionRow``."""

    __slots__ = ()

    if TYPE_CHECKING:
        verdict: dict[str, Any] | None

    @property
    def cells(self) -> list[list[bool]] | None:
        return self.verdict.get("cells") if self.verdict else None

    @property
    def message(self) -> str:
        verdict = self.verdict
        return str(verdict.get("message", "")) if verdict else ""

    @property
    def mistake_messages(self) -> list[str]:
        verdict = self.verdict
        return list(verdict.get("mistake_messages", [])) if verdict else []


class Submission(VerdictView, Model):
    """One answer as posted, with its verdict.  Append-only: rows are never updated or deleted.

    - ``raw_answer``: exactly what was posted: the text, or for a grid the JSON list of rows of
      cell strings (``answer_format`` says which).
    - ``parsed``: the parsed value as JSON (number or nested lists), None when invalid.
    - ``verdict``: ``Verdict.to_dict()`` plus ``"mistake_messages"`` (the sentences shown).
    - ``used_attempt``: False for invalid answers, identical resubmissions and refusals.
    - ``duplicate_of_id``: for an identical resubmission, the earlier graded submission whose
      verdict was returned (statistics should skip these rows).
    """

    __tablename__ = "submissions"
    __table_args__ = (
        Index("ix_submissions_exercise_status", "exercise_id", "status"),
        Index("ix_submissions_user_exercise", "user_id", "exercise_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    variant_id: Mapped[int] = mapped_column(ForeignKey("variants.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    exercise_id: Mapped[str] = mapped_column(ForeignKey("exercises.id"))
    version_id: Mapped[int] = mapped_column(ForeignKey("exercise_versions.id"))
    answer_format: Mapped[str] = mapped_column(String(8), default="text")
    raw_answer: Mapped[str] = mapped_column(Text)
    answer_hash: Mapped[str] = mapped_column(String(64))
    parsed: Mapped[Any | None] = mapped_column(JSON, default=None)
    verdict: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16))
    score: Mapped[float] = mapped_column(Float, default=0.0)
    points: Mapped[float] = mapped_column(Float, default=0.0)
    mistakes: Mapped[list[str]] = mapped_column(JSON, default=list)
    used_attempt: Mapped[bool] = mapped_column(Boolean, default=False)
    #: True when it came after the student's closing time, in a late period.
    late: Mapped[bool] = mapped_column(Boolean, default=False)
    #: the credit its score earned (``quizapp.services.deadlines``): 1 on time, a late period's
    #: (or an extension's) credit otherwise; ``points`` = score x credit x the exercise's points.
    credit: Mapped[float] = mapped_column(Float, default=1.0)
    #: 1-based number of the attempt this submission used on its variant, None if it used none.
    attempt_number: Mapped[int | None] = mapped_column(Integer, default=None)
    duplicate_of_id: Mapped[int | None] = mapped_column(ForeignKey("submissions.id"), default=None)
    #: where it came from: "web" or "api".
    source: Mapped[str] = mapped_column(String(8), default="web")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    variant: Mapped[Variant] = relationship(back_populates="submissions")


class Progress(Model):
    """A student's standing on one exercise; updated with every submission, in its transaction.

    - ``best_score`` in [0, 1]: the best *credited* score (score x late credit) over the graded
      attempts of variant 1 (practice variants never change it); ``best_credit`` and
      ``best_late``: the credit and lateness of the attempt that reached it.
    - ``best_points``: the student's points on the exercise, ``override_points`` when an
      instructor set them (with ``override_reason``, ``override_by_id``, ``override_at``), else
      ``best_score`` x points (``quizapp.services.deadlines.exercise_points``: the one
      definition the pages, the API, the scoreboard and the gradebook read).
    - ``attempts_used``: graded attempts on variant 1.
    - ``solved_at``: first correct answer on variant 1.
    - ``best_reached_at``: when ``best_score`` was first reached (scoreboard tie-break: earlier wins).
    - ``last_activity``: the last submission (any variant, any status).
    - ``current_variant``: the variant number shown on the exercise page.
    - ``best_parts``: for a multi-part exercise, the parts of the submission that reached
      ``best_score``: part name -> ``{"score", "share", "follow_through"}`` (``share`` of the
      exercise's points; see ``quizapp.services.part_answers.best_parts``), else None.
    """

    __tablename__ = "progress"
    __table_args__ = (
        UniqueConstraint("user_id", "exercise_id"),
        Index("ix_progress_exercise_points", "exercise_id", "best_points"),
        Index("ix_progress_user", "user_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    exercise_id: Mapped[str] = mapped_column(ForeignKey("exercises.id"))
    best_score: Mapped[float] = mapped_column(Float, default=0.0)
    best_points: Mapped[float] = mapped_column(Float, default=0.0)
    best_credit: Mapped[float] = mapped_column(Float, default=1.0)
    best_late: Mapped[bool] = mapped_column(Boolean, default=False)
    override_points: Mapped[float | None] = mapped_column(Float, default=None)
    override_reason: Mapped[str | None] = mapped_column(Text, default=None)
    override_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), default=None)
    override_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    attempts_used: Mapped[int] = mapped_column(Integer, default=0)
    submissions_count: Mapped[int] = mapped_column(Integer, default=0)
    solved_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    best_reached_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    last_activity: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    current_variant: Mapped[int] = mapped_column(Integer, default=1)
    best_parts: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)

    user: Mapped[User] = relationship(foreign_keys=[user_id])
    exercise: Mapped[Exercise] = relationship()

    @property
    def overridden(self) -> bool:
        """True when an instructor set the points by hand."""
        return self.override_points is not None


class ScoreTotal(Model):
    """A student's totals over a scope: the course (``scope = ""``) or one quiz (its id).

    Sums over the student's progress rows on the scope's live exercises (exercise and quiz not
    archived) they are not excused from: ``points`` (sum of ``best_points``), ``solved`` (rows
    with ``solved_at``), ``attempts`` (sum of ``attempts_used``), ``reached_at`` (latest
    ``best_reached_at`` among rows with points, the scoreboard's tie-break).  Maintained by
    ``quizapp.services.totals`` in the transaction that changes a progress row; a student with
    no row has 0 / 0 / 0 / None.
    """

    __tablename__ = "score_totals"
    __table_args__ = (
        UniqueConstraint("scope", "user_id"),
        Index("ix_score_totals_user", "user_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    #: "" for the whole course, else a quiz id (no foreign key: "" is no quiz).
    scope: Mapped[str] = mapped_column(String(100))
    points: Mapped[float] = mapped_column(Float, default=0.0)
    solved: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    reached_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class ScoreTotalsState(Model):
    """One row (``id = 1``): the fingerprint (SHA-256 hex) of the live exercises and their points
    that ``score_totals`` was last fully computed for; a different current fingerprint (after a
    bank sync) makes the scoreboard rebuild the totals first."""

    __tablename__ = "score_totals_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    rebuilt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
