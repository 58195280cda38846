"""Variants: find, create and generate a student's variant of an exercise; where they stand on it."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from sqlalchemy import and_, bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Load, Session, joinedload, undefer_group

from quizapp import coursetime
from quizapp.models import (
    Exercise,
    Progress,
    Submission,
    User,
    Variant,
    VariantFailure,
    utcnow,
)

if TYPE_CHECKING:
    from quizapp.bank import AnswerForm
    from quizapp.bank import Exercise as BankExercise
    from quizapp.bank import Variant as BankVariant
    from quizapp.bank.stored import PartForm


from quizapp.services.errors import BadRequest, Conflict, Forbidden, NotFound, Unavailable
from quizapp.services.schedules import QuizTimes
from quizapp.services.transactions import begin_write, commit_keeping_loaded, retry_conflicts

log = logging.getLogger(__name__)

EXERCISE_ID_RE = re.compile(r"^[a-z0-9_-]+/[a-z0-9_-]+$")


@lru_cache(maxsize=512)
def _load_source(exercise_id: str, content_hash: str, source: str) -> BankExercise:
    from quizapp.bank import load_exercise_source

    return load_exercise_source(exercise_id, source)


@lru_cache(maxsize=1024)
def _generate(exercise_id: str, content_hash: str, source: str, seed: int) -> BankVariant:
    return _load_source(exercise_id, content_hash, source).generate(seed)


def bank_exercise(exercise_id: str, content_hash: str, source: str) -> BankExercise:
    """The bank's exercise of one stored YAML version (loaded once per process and version).
    Raises ``quizapp.bank.BankError`` when the text no longer loads."""
    return _load_source(exercise_id, content_hash, source)


@dataclass(frozen=True)
class Drawn:
    """A variant ready to be stored: ``record`` (``quizapp.bank.stored.freeze``), ``page``
    (``quizapp.page.render_page``), the ``seed`` that produced it, the ``failures`` (seed,
    message) of the seeds tried before it, and the ``generator`` that made it."""

    record: dict[str, Any]
    page: dict[str, Any]
    seed: int
    failures: list[tuple[int, str]]
    generator: str


def draw_variant(exercise: BankExercise, seed: int, revision: int | None = None) -> Drawn:
    """Draw, freeze and render ``exercise``'s variant for ``seed``, falling back to the next
    derived seed (``quizapp.bank.seeds.first_working_seed``) while a seed fails: a seed that
    cannot produce a variant never locks a student out.  Pure (no database).

    ``revision``: the kind's draw revision (default: its current one; see
    ``quizapp.bank.types.Kind.revision``), recorded in ``generator``.

    Raises ``Unavailable`` when every seed fails (the exercise itself is broken).
    """
    from quizapp import __version__
    from quizapp.bank.seeds import NoWorkingSeed, first_working_seed
    from quizapp.bank.stored import freeze
    from quizapp.page import render_page

    def make(candidate: int) -> tuple[dict[str, Any], dict[str, Any]]:
        drawn = exercise.generate(candidate, revision)
        return {**freeze(drawn), "kind": exercise.spec.kind}, render_page(drawn)

    try:
        (record, page), used, failures = first_working_seed(make, int(seed))
    except NoWorkingSeed as exc:
        tried = ", ".join(str(s) for s, _ in exc.failures[:5])
        raise Unavailable(
            f"No variant of {exercise.id} could be drawn: {exc} (seeds {tried}"
            f"{', ...' if len(exc.failures) > 5 else ''}); fix the exercise and sync it",
            exercise_id=exercise.id,
        ) from exc
    for failed_seed, message in failures:
        log.warning(
            "seed %s of %s does not generate (%s); used %s", failed_seed, exercise.id, message, used
        )
    rev = exercise.kind.revision if revision is None else int(revision)
    generator = f"quizapp {__version__}, kind {exercise.spec.kind} revision {rev}"
    return Drawn(record, page, used, failures, generator)


class StoredRecord(Protocol):
    """What :func:`stored_variant` reads of a variant: a ``Variant`` row, or the columns of one
    selected alone (a regrade reads no ORM objects)."""

    @property
    def id(self) -> int: ...
    @property
    def variant_number(self) -> int: ...
    @property
    def exercise_id(self) -> str: ...
    @property
    def record(self) -> dict[str, Any]: ...


def stored_variant(variant: StoredRecord) -> BankVariant:
    """The variant as it was drawn when created (``variants.record``, thawed): what every submit
    and regrade grades against.  Never regenerates.  Raises ``Unavailable`` (logged) if the stored
    record cannot be read (a database edited by hand)."""
    from quizapp.bank.stored import thaw

    try:
        return thaw(variant.record)
    except ValueError as exc:
        raise _unreadable(variant, exc) from exc


def stored_answer_form(variant: StoredRecord) -> AnswerForm:
    """The answer form of the stored variant (what the page's inputs need), decoded alone.
    Raises ``Unavailable`` like :func:`stored_variant`."""
    from quizapp.bank.stored import thaw_answer_form

    try:
        return thaw_answer_form(variant.record)
    except ValueError as exc:
        raise _unreadable(variant, exc) from exc


def stored_part_forms(variant: StoredRecord) -> list[PartForm]:
    """The parts of a stored multi-part variant as its page shows them (name, points, the parts
    it uses, answer form: ``quizapp.bank.stored.PartForm``), decoded without the rest of the
    record; ``[]`` without parts.  Raises ``Unavailable`` like :func:`stored_variant`."""
    from quizapp.bank.stored import thaw_part_forms

    try:
        return thaw_part_forms(variant.record)
    except ValueError as exc:
        raise _unreadable(variant, exc) from exc


def _unreadable(variant: StoredRecord, exc: ValueError) -> Unavailable:
    """The error for a stored record that cannot be read (a database edited by hand)."""
    return Unavailable(
        f"The stored variant {variant.id} (variant {variant.variant_number} of "
        f"{variant.exercise_id}) cannot be read: {exc}",
        exercise_id=variant.exercise_id,
    )


def generate_preview(exercise: Exercise, seed: int) -> BankVariant:
    """The variant of ``exercise``'s current version for ``seed`` (instructor preview: drawn now,
    not a student's variant).  Raises ``NotFound`` without a synced version, ``Unavailable`` when
    that seed does not generate."""
    version = exercise.current_version
    if version is None:
        raise NotFound(f"Exercise {exercise.id} has no synced version.")
    try:
        return _generate(exercise.id, version.content_hash, version.source, int(seed))
    except Exception as exc:
        raise Unavailable(f"Seed {seed} does not generate a variant: {exc}") from exc


def get_exercise(session: Session, exercise_id: str, *, include_archived: bool = False) -> Exercise:
    """The exercise ``exercise_id``; raises ``NotFound`` if unknown, malformed or archived."""
    check_exercise_id(exercise_id)
    # The quiz comes in the same statement (every caller checks it is open); an exercise the
    # session already holds (the submit after the page's read) is used as is.
    exercise = session.get(Exercise, exercise_id, options=[joinedload(Exercise.quiz)])
    return live_exercise(exercise, include_archived)


def get_exercise_and_variant(
    session: Session, exercise_id: str, user: User
) -> tuple[Exercise, Variant | None]:
    """The exercise ``exercise_id`` (as :func:`get_exercise`, archived ones refused) with the
    student's current variant and what it stores, or None when they have none yet (then
    :func:`get_or_create_variant` creates it): one statement for what the exercise page reads
    first.  Raises ``NotFound`` as :func:`get_exercise`."""
    check_exercise_id(exercise_id)
    row = session.execute(_EXERCISE_AND_VARIANT, {"eid": exercise_id, "uid": user.id}).first()
    exercise = live_exercise(row[0] if row is not None else None, False)
    assert row is not None  # no row: live_exercise raised NotFound
    return exercise, row[1]


def check_exercise_id(exercise_id: object) -> None:
    """Raise ``NotFound`` unless ``exercise_id`` is a well-formed ``<quiz>/<name>`` id
    (``EXERCISE_ID_RE``): a malformed one is no exercise, and is never sent to the database."""
    if not isinstance(exercise_id, str) or not EXERCISE_ID_RE.fullmatch(exercise_id):
        raise NotFound("There is no such exercise.")


class _Archivable(Protocol):
    @property
    def archived(self) -> bool: ...


class Reachable(Protocol):
    """What :func:`live_exercise` reads: an ORM ``Exercise`` or the page's ``ExerciseRow``."""

    @property
    def archived(self) -> bool: ...
    @property
    def quiz(self) -> _Archivable: ...


AnyExercise = TypeVar("AnyExercise", bound=Reachable)


def live_exercise(exercise: AnyExercise | None, include_archived: bool = False) -> AnyExercise:
    """``exercise`` when students may reach it; raises ``NotFound`` when it is None (unknown),
    or archived or in an archived quiz (unless ``include_archived``: instructor views)."""
    if exercise is None or (exercise.archived and not include_archived):
        raise NotFound("There is no such exercise.")
    if not include_archived and exercise.quiz.archived:
        raise NotFound("There is no such exercise.")
    return exercise


def check_quiz_visible(quiz: QuizTimes, user: User, now: datetime | None = None) -> None:
    """Raise ``Forbidden`` if ``quiz`` has not opened yet (instructors always see it)."""
    now = now or utcnow()
    if user.is_instructor:
        return
    if quiz.opens_at is not None and now < quiz.opens_at:
        opens = coursetime.show(quiz.opens_at, coursetime.parse_zone(quiz.timezone or "UTC"))
        raise Forbidden(f"The quiz '{quiz.title}' opens on {opens}.")


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
_FIND_VARIANT = (
    select(Variant)
    .options(undefer_group("stored"))
    .where(
        Variant.user_id == bindparam("uid"),
        Variant.exercise_id == bindparam("eid"),
        Variant.variant_number == bindparam("num"),
    )
)
#: The number of the student's current variant: the one in their progress row, 1 without one.
CURRENT_NUMBER = func.coalesce(
    select(Progress.current_variant)
    .where(Progress.user_id == bindparam("uid"), Progress.exercise_id == bindparam("eid"))
    .scalar_subquery(),
    1,
)
#: The current variant with what it stores.
_CURRENT_VARIANT = (
    select(Variant)
    .options(undefer_group("stored"))
    .where(
        Variant.user_id == bindparam("uid"),
        Variant.exercise_id == bindparam("eid"),
        Variant.variant_number == CURRENT_NUMBER,
    )
)
#: The exercise with its quiz and, when it exists, the student's current variant.
_EXERCISE_AND_VARIANT = (
    select(Exercise, Variant)
    .outerjoin(
        Variant,
        and_(
            Variant.exercise_id == Exercise.id,
            Variant.user_id == bindparam("uid"),
            Variant.variant_number == CURRENT_NUMBER,
        ),
    )
    .options(joinedload(Exercise.quiz), Load(Variant).undefer_group("stored"))
    .where(Exercise.id == bindparam("eid"))
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
    created = create_progress(session, user.id, exercise.id)
    if created is not None:
        return created
    row = session.scalar(stmt, params)  # created concurrently
    assert row is not None
    return row


def create_progress(session: Session, user_id: int, exercise_id: str) -> Progress | None:
    """Inside a write transaction: insert the (user, exercise) progress row (variant 1 current,
    nothing used) and return it, or None when it exists already (created concurrently).  A row
    inserted is the transaction's, locked until commit."""
    params = {"uid": user_id, "eid": exercise_id}
    dialect = session.get_bind().dialect
    if dialect.name in ("sqlite", "postgresql") and dialect.insert_returning:
        # One statement: the unique (user_id, exercise_id) constraint guards the insert (no
        # savepoint needed).
        return session.scalar(_insert_progress(dialect.name), params)
    try:
        with session.begin_nested():
            row = Progress(user_id=user_id, exercise_id=exercise_id, current_variant=1)
            session.add(row)
    except IntegrityError:
        return None
    return row


@lru_cache(maxsize=2)
def _insert_progress(dialect_name: str) -> Any:
    """``INSERT INTO progress ... ON CONFLICT (user_id, exercise_id) DO NOTHING RETURNING *`` for
    dialect ``dialect_name`` (``sqlite`` or ``postgresql``), built once; parameters ``uid``,
    ``eid``."""
    if dialect_name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]  # the dialects' Insert classes differ, both with on_conflict_do_nothing
    return (
        insert(Progress)
        .values(user_id=bindparam("uid"), exercise_id=bindparam("eid"), current_variant=1)
        .on_conflict_do_nothing(index_elements=["user_id", "exercise_id"])
        .returning(Progress)
        .execution_options(populate_existing=True)
    )


def _prepare(
    exercise: Exercise, user_id: int, number: int, seed_secret: str | bytes
) -> tuple[int, Drawn]:
    """Outside any lock (drawing and rendering take milliseconds): the id of the exercise's
    current version and its variant ``number`` for the student, drawn from
    ``derive_seed(seed_secret, user_id, exercise.id, number)`` (or its first working fallback).
    Raises ``NotFound`` without a synced version, ``Unavailable`` when the version does not load
    or no seed generates."""
    from quizapp.bank import BankError, derive_seed

    version = exercise.current_version
    if version is None:
        raise NotFound(f"Exercise {exercise.id} has no synced version.")
    try:
        source = bank_exercise(exercise.id, version.content_hash, version.source)
    except BankError as exc:
        raise Unavailable(
            f"The current version of {exercise.id} does not load: {exc}", exercise_id=exercise.id
        ) from exc
    seed = derive_seed(seed_secret, user_id, exercise.id, number)
    return version.id, draw_variant(source, seed)


def _insert_variant(
    session: Session, user_id: int, exercise_id: str, number: int, version_id: int, drawn: Drawn
) -> Variant:
    """Inside a write transaction: store the variant ``number`` (with the seeds that failed
    before it, in ``variant_failures``), or return the one created meanwhile."""
    row = _find_variant(session, user_id, exercise_id, number)
    if row is not None:
        return row
    try:
        with session.begin_nested():
            row = Variant(
                user_id=user_id,
                exercise_id=exercise_id,
                variant_number=number,
                seed=int(drawn.seed),
                version_id=version_id,
                record=drawn.record,
                page=drawn.page,
                generator=drawn.generator,
                seed_fallbacks=len(drawn.failures),
            )
            session.add(row)
            for seed, message in drawn.failures:
                session.add(
                    VariantFailure(
                        exercise_id=exercise_id,
                        version_id=version_id,
                        user_id=user_id,
                        variant_number=number,
                        seed=int(seed),
                        error=message[:2000],
                    )
                )
    except IntegrityError:
        row = _find_variant(session, user_id, exercise_id, number)
        assert row is not None
    return row


@retry_conflicts
def get_or_create_variant(
    session: Session,
    user: User,
    exercise: Exercise,
    seed_secret: str | bytes,
    variant_number: int | None = None,
) -> Variant:
    """The student's variant ``variant_number`` (default: their current one) of ``exercise``,
    with what it stores (``record``, ``page``) loaded.

    Created on first use from the exercise's current version (see :func:`_prepare`), stored and
    committed; from then on it is read, never drawn again: a later sync or code change does not
    alter it.  Raises ``NotFound`` if the exercise has no synced version, ``Unavailable`` if it
    cannot be drawn.
    """
    if variant_number is None:
        # One statement: the variant numbered by the progress row (1 when there is none).
        row = _current_variant(session, user.id, exercise.id)
        if row is not None:
            return row
        progress = get_progress(session, user, exercise)
        variant_number = progress.current_variant if progress else 1
    else:
        row = _find_variant(session, user.id, exercise.id, variant_number)
        if row is not None:
            return row
    version_id, drawn = _prepare(exercise, user.id, variant_number, seed_secret)
    user_id, exercise_id = user.id, exercise.id
    begin_write(session)
    row = _insert_variant(session, user_id, exercise_id, variant_number, version_id, drawn)
    commit_keeping_loaded(session)
    return row


@dataclass
class VariantState:
    """Where a student stands on one variant."""

    attempts: int
    attempts_used: int
    solved: bool
    best_score: float
    #: finished for good (``variants.finished_at`` set: its worked solution was shown), even
    #: when the exercise's attempts were raised since
    closed: bool = False

    @property
    def attempts_left(self) -> int:
        if self.closed and not self.solved:
            return 0
        return max(0, self.attempts - self.attempts_used)

    @property
    def finished(self) -> bool:
        """Solved or out of attempts: the worked solution may be shown."""
        return self.solved or self.attempts_left == 0

    @classmethod
    def of(cls, submissions: Iterable[Any], attempts: int, finished_at: Any = None) -> VariantState:
        """The state of a variant allowing ``attempts`` from its ``submissions`` (anything with
        ``used_attempt``, ``status`` and ``score``: ORM rows, ``SubmissionRow``, Core rows) and
        its ``finished_at``.
        THE rule, used by the exercise page, ``submit`` (under its lock) and
        :func:`variant_state`: graded attempts are the submissions that used an attempt; solved
        when one of them is correct; the best score is their highest; a variant finished once
        (``finished_at``: it was out of attempts, and its worked solution was shown) has no
        attempt left, whatever the exercise's attempts became since."""
        graded = [s for s in submissions if s.used_attempt]
        return cls(
            attempts=int(attempts),
            attempts_used=len(graded),
            solved=any(s.status == "correct" for s in graded),
            best_score=max((float(s.score) for s in graded), default=0.0),
            closed=finished_at is not None,
        )


def variant_state(session: Session, variant: Variant) -> VariantState:
    """Attempts used, solved, best score of ``variant`` (:meth:`VariantState.of` its
    submissions)."""
    rows = session.execute(
        select(Submission.used_attempt, Submission.status, Submission.score).where(
            Submission.variant_id == variant.id
        )
    ).all()
    return VariantState.of(rows, variant.exercise.attempts, variant.finished_at)


@retry_conflicts
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
    user_id, number = user.id, current.variant_number
    version_id, drawn = _prepare(exercise, user_id, number + 1, seed_secret)
    begin_write(session)
    progress = ensure_progress(session, user, exercise, lock=True)
    if progress.current_variant == number:
        progress.current_variant = number + 1
    target = progress.current_variant
    if target != number + 1:  # moved on meanwhile (another tab): the number the row says
        version_id, drawn = _prepare(exercise, user_id, target, seed_secret)
    row = _insert_variant(session, user_id, exercise.id, target, version_id, drawn)
    commit_keeping_loaded(session)
    return row


#: The largest variant id (the ``variants.id`` column is a signed 64-bit integer on PostgreSQL).
MAX_VARIANT_ID = 2**63 - 1


def answered_variant_id(value: object, field: str) -> int | None:
    """The variant id an answer says it was written for: ``value`` as posted (the exercise
    form's hidden ``variant`` field, a text; the API's ``"variant_id"``, a JSON integer or its
    digits), or None when it was not sent.

    Raises ``BadRequest`` naming ``field`` for anything that is not a positive whole number of
    at most ``MAX_VARIANT_ID``: such an answer is neither graded nor previewed and uses no
    attempt.  (``str.isdigit`` also accepts ``²``, which ``int`` refuses: only ASCII digits are
    read, and at most 19 of them.)"""
    if value is None:
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_VARIANT_ID:
        raise BadRequest(
            f"{field} does not say which variant the answer was written for (it must be the "
            "positive whole number the exercise page sent); it was not graded and used no "
            "attempt. Reload the exercise and answer again."
        )
    return value


def check_answered_variant(variant: Variant, for_variant: int | None) -> None:
    """Refuse an answer written for another variant than the student's current ``variant``.

    ``for_variant`` is the variant id the exercise form or the API sent with the answer (None:
    not said, accepted; read by :func:`answered_variant_id`).  Raises ``Conflict`` naming the
    variant the student works on now (practice variant N or the graded one; ids are not shown
    to a student) when it is not that one (a practice variant was opened in another tab): the
    answer is neither graded nor previewed and uses no attempt.  One message for the submit and
    the preview.
    """
    if for_variant is None or for_variant == variant.id:
        return
    name = f"practice variant {variant.variant_number}" if variant.is_practice else "graded variant"
    raise Conflict(
        "This answer was written for a variant that is not the one you are working on now in "
        f"this exercise (your {name}); it was not graded and used no attempt. Reload the "
        "exercise to see your current variant."
    )
