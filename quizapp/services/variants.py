"""Variants: find, create and generate a student's variant of an exercise; where they stand on it."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, inspect, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.orm.util import identity_key

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
    from quizapp.bank import Exercise as BankExercise
    from quizapp.bank import Variant as BankVariant


from quizapp.services.errors import Conflict, Forbidden, NotFound, Unavailable
from quizapp.services.transactions import begin_write

log = logging.getLogger(__name__)

EXERCISE_ID_RE = re.compile(r"^[a-z0-9_-]+/[a-z0-9_-]+$")


@lru_cache(maxsize=512)
def _load_source(exercise_id: str, content_hash: str, source: str) -> BankExercise:
    from quizapp.bank import load_exercise_source

    return load_exercise_source(exercise_id, source)


@lru_cache(maxsize=4096)
def _generate(exercise_id: str, content_hash: str, source: str, seed: int) -> BankVariant:
    return _load_source(exercise_id, content_hash, source).generate(seed)


def generate_variant(variant: Variant) -> BankVariant:
    """The bank's concrete variant (prompt, expected answer, form, solution) of a stored variant.

    Pure function of (exercise version's YAML, seed); cached.  Raises ``Unavailable`` (logged)
    if the stored YAML no longer loads or generate fails (e.g. a kind was removed from the code).
    """
    version = variant.version
    try:
        return _generate(
            variant.exercise_id, version.content_hash, version.source, int(variant.seed)
        )
    except Exception as exc:
        log.exception("cannot generate %s seed %s", variant.exercise_id, variant.seed)
        raise Unavailable(
            f"This exercise cannot be shown right now ({exc}); please tell your instructor."
        ) from exc


def generate_preview(exercise: Exercise, seed: int) -> BankVariant:
    """The variant of ``exercise``'s current version for ``seed`` (instructor preview)."""
    version = exercise.current_version
    if version is None:
        raise NotFound(f"Exercise {exercise.id} has no synced version.")
    return _generate(exercise.id, version.content_hash, version.source, int(seed))


def get_exercise(session: Session, exercise_id: str, *, include_archived: bool = False) -> Exercise:
    """The exercise ``exercise_id``; raises ``NotFound`` if unknown, malformed or archived."""
    if not isinstance(exercise_id, str) or not EXERCISE_ID_RE.fullmatch(exercise_id):
        raise NotFound("There is no such exercise.")
    # The quiz comes in the same statement (every caller checks it is open).  An exercise the
    # session already holds with its quiz (the submit after the route's read) is used as is, as
    # ``session.get`` would; otherwise one prebuilt SELECT (``session.get`` builds and hashes a
    # new one per call).
    held = session.identity_map.get(identity_key(Exercise, exercise_id))
    if held is not None and not inspect(held).expired and "quiz" in held.__dict__:
        exercise: Exercise | None = held
    else:
        exercise = session.scalar(_EXERCISE_WITH_QUIZ, {"eid": exercise_id})
    if exercise is None or (exercise.archived and not include_archived):
        raise NotFound("There is no such exercise.")
    if not include_archived and exercise.quiz.archived:
        raise NotFound("There is no such exercise.")
    return exercise


def check_quiz_visible(quiz: Quiz, user: User, now: datetime | None = None) -> None:
    """Raise ``Forbidden`` if ``quiz`` has not opened yet (instructors always see it)."""
    now = now or utcnow()
    if user.is_instructor:
        return
    if quiz.opens_at is not None and now < quiz.opens_at:
        raise Forbidden(f"The quiz '{quiz.title}' opens on {quiz.opens_at:%Y-%m-%d %H:%M} UTC.")


# The statements of the exercise page and the submit, built once with bound parameters (``uid``,
# ``eid``, ``num``, ``vid``): building a SELECT costs ~1 ms of Python per request, several times
# running it on SQLite (measured: the current-variant lookup 1.6 ms built per call, 0.5 ms
# prebuilt).  SQLAlchemy statements are immutable, so sharing them between threads is safe.
_PROGRESS = select(Progress).where(
    Progress.user_id == bindparam("uid"), Progress.exercise_id == bindparam("eid")
)
#: Inside a write transaction: read from the database even when the session holds the row.
_PROGRESS_FRESH = _PROGRESS.execution_options(populate_existing=True)
_PROGRESS_LOCKED = _PROGRESS_FRESH.with_for_update()
_FIND_VARIANT = select(Variant).where(
    Variant.user_id == bindparam("uid"),
    Variant.exercise_id == bindparam("eid"),
    Variant.variant_number == bindparam("num"),
)
#: The current variant (numbered by the progress row, 1 without one) with its version.
_CURRENT_VARIANT = (
    select(Variant)
    .options(joinedload(Variant.version))
    .where(
        Variant.user_id == bindparam("uid"),
        Variant.exercise_id == bindparam("eid"),
        Variant.variant_number
        == func.coalesce(
            select(Progress.current_variant)
            .where(Progress.user_id == bindparam("uid"), Progress.exercise_id == bindparam("eid"))
            .scalar_subquery(),
            1,
        ),
    )
)
_EXERCISE_WITH_QUIZ = (
    select(Exercise).options(joinedload(Exercise.quiz)).where(Exercise.id == bindparam("eid"))
)


def get_progress(session: Session, user: User, exercise: Exercise) -> Progress | None:
    """The (user, exercise) progress row, or None when the student never started it."""
    return session.scalar(_PROGRESS, {"uid": user.id, "eid": exercise.id})


def _find_variant(session: Session, user_id: int, exercise_id: str, number: int) -> Variant | None:
    return session.scalar(_FIND_VARIANT, {"uid": user_id, "eid": exercise_id, "num": number})


def _current_variant(session: Session, user_id: int, exercise_id: str) -> Variant | None:
    """The student's current variant (the number in their progress row, 1 without one) with its
    version, in one statement; None when it does not exist yet."""
    return session.scalar(_CURRENT_VARIANT, {"uid": user_id, "eid": exercise_id})


def ensure_progress(session: Session, user: User, exercise: Exercise, *, lock: bool) -> Progress:
    """Inside a write transaction: the progress row, created if absent, locked if ``lock``.

    Always read from the database (``populate_existing``), even when the session already holds
    the row: the values decided on are the ones under the lock."""
    stmt = _PROGRESS_LOCKED if lock else _PROGRESS_FRESH
    params = {"uid": user.id, "eid": exercise.id}
    row = session.scalar(stmt, params)
    if row is not None:
        return row
    dialect = session.get_bind().dialect
    if dialect.name in ("sqlite", "postgresql") and dialect.insert_returning:
        # One statement: the unique (user_id, exercise_id) constraint guards the insert (no
        # savepoint needed); a row we insert is ours and locked until commit.
        created = session.scalar(_insert_progress(dialect.name), params)
        if created is not None:
            return created
    else:
        try:
            with session.begin_nested():
                session.add(Progress(user_id=user.id, exercise_id=exercise.id, current_variant=1))
        except IntegrityError:
            pass  # created concurrently; read it below
    row = session.scalar(stmt, params)  # created concurrently
    assert row is not None
    return row


@lru_cache(maxsize=2)
def _insert_progress(dialect_name: str) -> Any:
    """``INSERT INTO progress ... ON CONFLICT (user_id, exercise_id) DO NOTHING RETURNING *`` for
    dialect ``dialect_name`` (``sqlite`` or ``postgresql``), built once; parameters ``uid``,
    ``eid``."""
    if dialect_name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return (
        insert(Progress)
        .values(user_id=bindparam("uid"), exercise_id=bindparam("eid"), current_variant=1)
        .on_conflict_do_nothing(index_elements=["user_id", "exercise_id"])
        .returning(Progress)
        .execution_options(populate_existing=True)
    )


def _create_variant(
    session: Session, user: User, exercise: Exercise, number: int, seed_secret: str | bytes
) -> Variant:
    """Inside a write transaction: the variant ``number``, created (seeded) if absent."""
    from quizapp.bank import derive_seed

    row = _find_variant(session, user.id, exercise.id, number)
    if row is not None:
        return row
    version = exercise.current_version
    if version is None:
        raise NotFound(f"Exercise {exercise.id} has no synced version.")
    seed = derive_seed(seed_secret, user.id, exercise.id, number)
    try:
        with session.begin_nested():
            row = Variant(
                user_id=user.id,
                exercise_id=exercise.id,
                variant_number=number,
                seed=int(seed),
                version_id=version.id,
            )
            session.add(row)
    except IntegrityError:
        row = _find_variant(session, user.id, exercise.id, number)
        assert row is not None
    return row


def get_or_create_variant(
    session: Session,
    user: User,
    exercise: Exercise,
    seed_secret: str | bytes,
    variant_number: int | None = None,
    *,
    refresh_version: bool = True,
) -> Variant:
    """The student's variant ``variant_number`` (default: their current one) of ``exercise``.

    Created on first use with ``seed = derive_seed(seed_secret, user.id, exercise.id, number)``
    and the exercise's current version, then committed.  With ``refresh_version`` (page views), a
    variant with no submissions yet whose exercise has since changed moves to the current version
    (same seed): nothing was graded against the old one.  ``submit`` passes False, so an answer is
    graded against the numbers the student was shown.  Raises ``NotFound`` if the exercise has no
    synced version.
    """
    if variant_number is None:
        # One statement: the variant numbered by the progress row (1 when there is none), with
        # its version (generating the variant needs its YAML).
        row = _current_variant(session, user.id, exercise.id)
        if row is None:
            progress = get_progress(session, user, exercise)
            variant_number = progress.current_variant if progress else 1
    else:
        row = _find_variant(session, user.id, exercise.id, variant_number)
    if row is not None and (
        not refresh_version or row.version.content_hash == exercise.current_hash
    ):
        # Same version as the exercise's current one (versions are unique per exercise and
        # content hash): nothing to refresh, and no need to load the current version.
        return row
    current = exercise.current_version
    if row is not None and (current is None or row.version_id == current.id or row.submissions):
        return row
    variant_number = row.variant_number if row is not None else variant_number
    assert variant_number is not None
    exercise_id, user_id = exercise.id, user.id
    begin_write(session)
    exercise = session.get(Exercise, exercise_id)
    user = session.get(User, user_id)
    assert exercise is not None and user is not None
    row = _create_variant(session, user, exercise, variant_number, seed_secret)
    current = exercise.current_version
    if refresh_version and current is not None and row.version_id != current.id:
        if not row.submissions:
            row.version_id = current.id
    session.commit()
    return row


@dataclass
class VariantState:
    """Where a student stands on one variant."""

    attempts: int
    attempts_used: int
    solved: bool
    best_score: float

    @property
    def attempts_left(self) -> int:
        return max(0, self.attempts - self.attempts_used)

    @property
    def finished(self) -> bool:
        """Solved or out of attempts: the worked solution may be shown."""
        return self.solved or self.attempts_left == 0


def variant_state(session: Session, variant: Variant) -> VariantState:
    """Attempts used, solved, best score of ``variant`` (from its submissions)."""
    used, solved, best = session.execute(
        select(
            func.count(Submission.id).filter(Submission.used_attempt.is_(True)),
            func.count(Submission.id).filter(
                Submission.used_attempt.is_(True), Submission.status == "correct"
            ),
            func.max(Submission.score).filter(Submission.used_attempt.is_(True)),
        ).where(Submission.variant_id == variant.id)
    ).one()
    return VariantState(
        attempts=int(variant.exercise.attempts),
        attempts_used=int(used or 0),
        solved=bool(solved),
        best_score=float(best or 0.0),
    )


def new_practice_variant(
    session: Session, user: User, exercise: Exercise, seed_secret: str | bytes
) -> Variant:
    """Open the next variant of ``exercise`` for ``user`` ("try a new variant"); commit.

    Allowed only when the exercise allows practice and the current variant is finished (solved or
    out of attempts).  Practice variants are graded and stored like any other, but only variant 1
    counts for the score.  Raises ``Conflict`` otherwise.
    """
    if not exercise.practice:
        raise Conflict("This exercise does not offer new variants.")
    current = get_or_create_variant(session, user, exercise, seed_secret)
    if not variant_state(session, current).finished:
        raise Conflict("Finish this variant first (solve it or use all its attempts).")
    exercise_id, user_id, number = exercise.id, user.id, current.variant_number
    begin_write(session)
    exercise = session.get(Exercise, exercise_id)
    user = session.get(User, user_id)
    assert exercise is not None and user is not None
    progress = ensure_progress(session, user, exercise, lock=True)
    if progress.current_variant == number:
        progress.current_variant = number + 1
    row = _create_variant(session, user, exercise, progress.current_variant, seed_secret)
    session.commit()
    return row
