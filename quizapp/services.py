"""Use cases of the app: sync the bank, open a variant, submit an answer, summarize progress.

Pure of Flask: every function takes a SQLAlchemy ``Session`` and plain values (no request, no
``current_user``), so the web pages, the JSON API, the CLI and tests share one implementation.

Transactions: functions that write end the caller's open (read) transaction and run their writes
in a transaction begun with :func:`begin_write`, which on SQLite is ``BEGIN IMMEDIATE`` (the write
lock is taken up front, so concurrent writers queue on the busy timeout instead of failing with
"database is locked") and on PostgreSQL locks the student's progress row with
``SELECT ... FOR UPDATE``.  Either way, concurrent submits of one (user, exercise) are serialized
and cannot use more than the allowed attempts.  They commit before returning.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, insert, inspect, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload, scoped_session
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.util import identity_key

from quizapp import signals
from quizapp.models import (
    USERNAME_MAX,
    ApiToken,
    Exercise,
    ExerciseVersion,
    Progress,
    Quiz,
    Submission,
    User,
    Variant,
    VerdictView,
    username_key,
    utcnow,
)

if TYPE_CHECKING:
    from quizapp.bank import Bank
    from quizapp.bank import Exercise as BankExercise
    from quizapp.bank import Variant as BankVariant
    from quizapp.grading import Verdict

log = logging.getLogger(__name__)

#: Execution option that makes the SQLite ``begin`` listener emit ``BEGIN IMMEDIATE``.
WRITE_OPTION = "quizapp_write"

#: Limits on one answer (beyond them the answer is refused, not stored): characters of a text
#: answer, rows/columns of a grid, characters of one cell.
MAX_ANSWER_CHARS = 20_000
MAX_GRID = 64
MAX_CELL_CHARS = 200

EXERCISE_ID_RE = re.compile(r"^[a-z0-9_-]+/[a-z0-9_-]+$")
USERNAME_RE = re.compile(r"^[\w.@+-]+$")
USERNAME_BAD_START = ("-", "+", "@")
PASSWORD_MIN = 8
PASSWORD_MAX = 1024


# --------------------------------------------------------------------------------------------
# Errors


class ServiceError(Exception):
    """A request the service refuses.  ``status`` is the matching HTTP status code."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(ServiceError):
    """Malformed input (wrong type, too large, invalid username/password)."""

    status = 400


class NotFound(ServiceError):
    """Unknown or archived exercise/quiz."""

    status = 404


class Forbidden(ServiceError):
    """The quiz is not open (before ``opens`` or after ``closes``)."""

    status = 403


class Unavailable(ServiceError):
    """The exercise's stored YAML no longer generates (e.g. its kind was removed from the code)."""

    status = 503


class Conflict(ServiceError):
    """The state forbids it: no attempts left, variant finished, username taken, no practice."""

    status = 409


# --------------------------------------------------------------------------------------------
# Transactions


def begin_write(session: Session, *, expire: bool = True) -> None:
    """End the session's current transaction (committing it) and begin a write transaction.

    On SQLite the new transaction starts with ``BEGIN IMMEDIATE`` (see
    ``quizapp.web.database``), taking the database's write lock at once; other dialects begin
    normally (rows are locked with ``FOR UPDATE`` where it matters).

    ``expire=False`` keeps the objects loaded so far as they are (no reload on next access): for
    a caller that re-reads, with ``populate_existing``, every row its writes depend on (as
    :func:`submit` does), so the rest (the user, the quiz) need not be read again.
    """
    real = session() if isinstance(session, scoped_session) else session
    if real.in_transaction():
        if expire:
            real.commit()
        else:
            keep = real.expire_on_commit
            real.expire_on_commit = False
            try:
                real.commit()
            finally:
                real.expire_on_commit = keep
    real.connection(execution_options={WRITE_OPTION: True})


# --------------------------------------------------------------------------------------------
# Users and tokens


def validate_username(username: str) -> str:
    """The username stripped and NFC-normalized.

    Raises ``BadRequest`` unless it is 1-64 characters that are (after NFKC normalization) letters,
    digits or ``. @ + - _``, not starting with ``- + @`` (``USERNAME_BAD_START``: a CSV cell
    starting with them is a spreadsheet formula, OWASP "CSV Injection").
    """
    if not isinstance(username, str):
        raise BadRequest("The username must be text.")
    name = unicodedata.normalize("NFC", username.strip())
    if not name:
        raise BadRequest("Choose a username.")
    if len(name) > USERNAME_MAX:
        raise BadRequest(f"The username is too long (at most {USERNAME_MAX} characters).")
    folded = unicodedata.normalize("NFKC", name)
    if not USERNAME_RE.fullmatch(folded) or not folded.isprintable():
        raise BadRequest("A username may contain only letters, digits and . @ + - _ characters.")
    if folded[0] in USERNAME_BAD_START:
        # Spreadsheets read a cell starting with these as a formula; gradebook CSVs would have to
        # neutralize the identifier column, and LMS imports would then not match the account.
        raise BadRequest(
            f"A username may not start with {folded[0]!r} (spreadsheets read it as a formula); "
            "start it with a letter or digit."
        )
    return name


#: Characters no page or CSV may carry as is: C0 controls other than tab/newline/CR, DEL, C1
#: controls, and lone UTF-16 surrogates (which cannot be encoded as UTF-8 at all).
_UNSHOWABLE_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def _show_char(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode "Control Pictures": NUL -> U+2400 '␀', ...
    if code == 0x7F:
        return "\u2421"  # '␡'
    return "\ufffd"  # C1 controls and lone surrogates: the replacement character


def printable_text(text: str) -> str:
    """``text`` with every character a page or CSV file cannot show replaced by a visible stand-in.

    C0 controls (except tab, newline, carriage return) become their Unicode Control Picture
    (NUL -> U+2400 '␀', U+0001 -> U+2401, ...), DEL becomes U+2421, C1 controls and lone
    surrogates (``"\\ud800"``, valid in JSON but not encodable as UTF-8) become U+FFFD.  Everything
    else is returned unchanged, so the result always encodes as UTF-8.  Stored answers keep their
    exact text; this is for output only (Jinja's ``finalize`` and the CSV writers use it).
    """
    if not isinstance(text, str) or not _UNSHOWABLE_RE.search(text):
        return text
    return _UNSHOWABLE_RE.sub(_show_char, text)


#: Bidirectional formatting characters (embeddings, overrides, isolates, marks): in a name they
#: reorder the text around it on the page (e.g. a right-to-left override spoofs the next column).
BIDI_CONTROLS = frozenset(
    "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
DISPLAY_NAME_MAX = 120


def name_problem(text: str, what: str) -> str | None:
    """Why ``text`` cannot be a user's ``what`` (a username or display name), or None if it can.

    Refused: control characters (category Cc, e.g. NUL, which some databases silently truncate
    at), lone surrogates, bidirectional controls (``BIDI_CONTROLS``) and other invisible format
    characters (category Cf, e.g. zero-width space), which make one name look like another.
    """
    for i, ch in enumerate(text, start=1):
        cat = unicodedata.category(ch)
        if ch in BIDI_CONTROLS:
            return (
                f"The {what} contains a right-to-left/left-to-right control character "
                f"(U+{ord(ch):04X}, position {i}); remove it."
            )
        if cat in ("Cc", "Cs", "Cf", "Co", "Cn"):
            kind = {
                "Cc": "a control character",
                "Cs": "an invalid character (a lone surrogate)",
                "Cf": "an invisible formatting character",
                "Co": "a private-use character",
                "Cn": "an unassigned character",
            }[cat]
            return f"The {what} contains {kind} (U+{ord(ch):04X}, position {i}); remove it."
    return None


def validate_display_name(display_name: Any) -> str:
    """The display name stripped; raises ``BadRequest`` for one that is not text, longer than
    ``DISPLAY_NAME_MAX`` characters, or holding a character :func:`name_problem` refuses."""
    if display_name is None:
        return ""
    if not isinstance(display_name, str):
        raise BadRequest("The display name must be text.")
    name = display_name.strip()
    if len(name) > DISPLAY_NAME_MAX:
        raise BadRequest(f"The display name is too long (at most {DISPLAY_NAME_MAX} characters).")
    problem = name_problem(name, "display name")
    if problem:
        raise BadRequest(problem)
    return name


def find_user(session: Session, username: str) -> User | None:
    """The user whose username matches ``username`` case- and normalization-insensitively."""
    if not isinstance(username, str) or len(username) > 4 * USERNAME_MAX:
        return None
    if not _db_safe(username):  # NUL / lone surrogates: no such user (PostgreSQL cannot compare)
        return None
    return session.scalar(select(User).where(User.username_key == username_key(username.strip())))


def create_user(
    session: Session,
    username: str,
    password: str,
    *,
    role: str = "student",
    display_name: str = "",
    email: str | None = None,
) -> User:
    """Create and commit a user.

    Raises ``BadRequest`` for an invalid username, role or a password shorter than 8 characters,
    and ``Conflict`` when the username is taken (compared after NFKC normalization and case
    folding, see ``quizapp.models.username_key``).
    """
    name = validate_username(username)
    if role not in ("student", "instructor"):
        raise BadRequest("The role must be 'student' or 'instructor'.")
    if not isinstance(password, str) or len(password) < PASSWORD_MIN:
        raise BadRequest(f"The password must have at least {PASSWORD_MIN} characters.")
    if len(password) > PASSWORD_MAX:
        raise BadRequest(f"The password is too long (at most {PASSWORD_MAX} characters).")
    if not _db_safe(password.replace("\x00", "")):
        raise BadRequest("The password must be valid text (it holds an unpaired surrogate).")
    display_name = validate_display_name(display_name)
    email = (email or "").strip()[:254] or None
    begin_write(session)
    key = username_key(name)
    if session.scalar(select(User.id).where(User.username_key == key)) is not None:
        session.rollback()
        raise Conflict("That username is taken.")
    user = User(username=name, username_key=key, role=role, display_name=display_name, email=email)
    user.set_password(password)
    session.add(user)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise Conflict("That username is taken.") from None
    return user


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The active user with these credentials, or None.  Never raises for bad input."""
    if not isinstance(password, str) or len(password) > PASSWORD_MAX:
        return None
    if not _db_safe(password.replace("\x00", "")):  # lone surrogates cannot be hashed (UTF-8)
        return None
    user = find_user(session, username)
    if user is None or not user.active:
        # Spend the same time as a real check, so response time does not reveal usernames.
        User(password_hash=_DUMMY_HASH).check_password(password)
        return None
    return user if user.check_password(password) else None


_DUMMY_HASH = (
    "scrypt:32768:8:1$0000000000000000$"
    "7d0d9e2a6b5b0c2f5d5d7f1e6f7f2c9b8f1b0a0e3c1d5e7f9a1b3c5d7e9f1a3b"
    "5d7f9a1b3c5d7e9f1a3b5d7f9a1b3c5d7e9f1a3b5d7f9a1b3c5d7e9f1a3b5d7f"
)


def hash_token(token: str) -> str:
    """SHA-256 hex digest of an API token (what the database stores)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def create_api_token(session: Session, user: User, name: str = "") -> str:
    """Create a token for ``user``, commit, and return it (the only time it is visible)."""
    import secrets

    token = "qz_" + secrets.token_urlsafe(32)
    begin_write(session)
    session.add(ApiToken(user_id=user.id, token_hash=hash_token(token), name=name[:120]))
    session.commit()
    return token


def user_for_token(session: Session, token: str) -> User | None:
    """The active user owning the unrevoked ``token`` (and record its use), or None."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    if row is None or row.revoked_at is not None or not row.user.active:
        return None
    now = utcnow()
    user_id, token_id = row.user_id, row.id
    if row.last_used_at is None or (now - row.last_used_at).total_seconds() > TOKEN_TOUCH_SECONDS:
        _touch_token(session, token_id, now)
    return session.get(User, user_id)


#: ``ApiToken.last_used_at`` is written at most once per this many seconds per token.
TOKEN_TOUCH_SECONDS = 60


def _touch_token(session: Session, token_id: int, now: datetime) -> None:
    """Record a token's use, best-effort, in its own short write transaction.

    The caller's read transaction is ended first and the update runs in one begun by
    :func:`begin_write` (``BEGIN IMMEDIATE`` on SQLite): upgrading the read transaction in place
    fails at once with "database is locked" when another connection wrote since it began (SQLite
    returns SQLITE_BUSY without waiting, whatever the busy timeout).  The update is conditional
    (only an older ``last_used_at`` is replaced), so concurrent requests write it once; if the
    write still fails (lock timeout), the request goes on: the timestamp is informational.
    """
    from sqlalchemy.exc import OperationalError

    try:
        begin_write(session)
        cutoff = now - timedelta(seconds=TOKEN_TOUCH_SECONDS)
        session.execute(
            update(ApiToken)
            .where(
                ApiToken.id == token_id,
                (ApiToken.last_used_at.is_(None)) | (ApiToken.last_used_at < cutoff),
            )
            .values(last_used_at=now)
        )
        session.commit()
    except OperationalError:
        session.rollback()
        log.warning("could not record the use of API token %s (database busy)", token_id)


def revoke_api_token(session: Session, token: str) -> bool:
    """Revoke ``token``; True if it existed and was live."""
    begin_write(session)
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    if row is None or row.revoked_at is not None:
        session.rollback()
        return False
    row.revoked_at = utcnow()
    session.commit()
    return True


# --------------------------------------------------------------------------------------------
# Bank sync


@dataclass
class SyncReport:
    """What ``sync_bank`` did.  ``errors`` are ``"file:line:column: message"`` strings."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    kept_previous: list[str] = field(default_factory=list)
    quizzes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        """One line: counts of each outcome."""
        return (
            f"{len(self.quizzes)} quizzes, {len(self.added)} exercises added, "
            f"{len(self.updated)} updated, {len(self.unchanged)} unchanged, "
            f"{len(self.archived)} archived, {len(self.restored)} restored, "
            f"{len(self.errors)} errors"
            + (
                f" ({len(self.kept_previous)} kept their previous version)"
                if self.kept_previous
                else ""
            )
        )


def _error_target(root: Path, error_file: Any) -> tuple[str | None, str | None]:
    """(quiz id, exercise id) a bank error's file belongs to, as far as the path tells."""
    if not error_file:
        return None, None
    try:
        rel = Path(str(error_file)).resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        rel = Path(str(error_file))
    parts = rel.parts
    if len(parts) >= 2:
        quiz_id = parts[-2]
        stem = Path(parts[-1]).stem
        if stem == "quiz":
            return quiz_id, None
        return quiz_id, f"{quiz_id}/{stem}"
    if len(parts) == 1:
        return parts[0], None
    return None, None


def sync_bank(session: Session, bank: Bank, root: Path | None = None) -> SyncReport:
    """Make the database's quizzes and exercises match ``bank`` (from ``load_bank(root)``); commit.

    - A new exercise is added with its first ``ExerciseVersion``; an exercise whose YAML changed
      (different content hash) gets a new version, which new variants use; variants already
      started keep the version they were generated from (and their submissions stay tied to it).
    - An exercise or quiz missing from the bank is archived (hidden), never deleted; it is restored
      if it comes back.
    - A file with errors (``bank.errors``) keeps its exercise's previous version live; the error is
      stored on the exercise (``sync_error``) and reported.
    - When an exercise's points change, ``progress.best_points`` is recomputed from ``best_score``.
    """
    from sqlalchemy import insert  # (imported here: the module's imports are not this part's)

    report = SyncReport()
    root = root or Path(".")
    begin_write(session)
    now = utcnow()

    errored_quizzes: set[str] = set()
    errored_exercises: dict[str, str] = {}
    for err in bank.errors:
        text = str(err)
        report.errors.append(text)
        quiz_id, exercise_id = _error_target(root, getattr(err, "file", None))
        if exercise_id:
            errored_exercises.setdefault(exercise_id, text)
        elif quiz_id:
            errored_quizzes.add(quiz_id)

    existing_quizzes = {q.id: q for q in session.scalars(select(Quiz))}
    for quiz in bank.quizzes.values():
        row = existing_quizzes.get(quiz.id)
        if row is None:
            row = Quiz(id=quiz.id, created_at=now)
            session.add(row)
        if row.archived:
            row.archived = False
        row.title = quiz.title
        row.description = quiz.description or ""
        row.position = int(quiz.order or 0)
        row.opens_at = quiz.opens
        row.closes_at = quiz.closes
        if row.content_hash != quiz.content_hash:
            row.content_hash = quiz.content_hash
            row.updated_at = now
        report.quizzes.append(quiz.id)
    session.flush()

    existing = {e.id: e for e in session.scalars(select(Exercise))}
    # Which (exercise, hash) versions exist: two columns, not every stored YAML source.
    versions: set[tuple[str, str]] = {
        (exercise_id, digest)
        for exercise_id, digest in session.execute(
            select(ExerciseVersion.exercise_id, ExerciseVersion.content_hash)
        )
    }
    repoint: list[tuple[str, float]] = []
    new_versions: list[dict[str, Any]] = []
    new_exercises: list[dict[str, Any]] = []
    positions: dict[str, int] = {}
    for quiz in bank.quizzes.values():
        for i, ex_id in enumerate(quiz.exercise_ids):
            positions[ex_id] = i

    known_quizzes = set(bank.quizzes) | set(existing_quizzes)
    for ex in bank.exercises.values():
        if ex.quiz_id not in known_quizzes:
            report.errors.append(
                f"{ex.path}: its quiz folder {ex.quiz_id!r} has no valid quiz.yaml; not synced"
            )
            continue
        spec = ex.spec
        row = existing.get(ex.id)
        title = str(getattr(spec, "title", ex.id))
        points = float(getattr(spec, "points", 10))
        attempts = int(getattr(spec, "attempts", 3))
        fields: dict[str, Any] = {
            "quiz_id": ex.quiz_id,
            "title": title,
            "kind": str(getattr(spec, "kind", "")),
            "points": points,
            "attempts": attempts,
            "practice": bool(getattr(spec, "practice", True)),
            "concepts": [str(c) for c in (getattr(spec, "concepts", None) or [])],
        }
        if (ex.id, ex.content_hash) not in versions:
            new_versions.append(
                {
                    "exercise_id": ex.id,
                    "content_hash": ex.content_hash,
                    "source": ex.source,
                    "title": title,
                    "points": points,
                    "attempts": attempts,
                    "created_at": now,
                }
            )
            versions.add((ex.id, ex.content_hash))
        if row is None:
            # A new exercise: one row of a single executemany (no ORM object per row).
            new_exercises.append(
                {
                    "id": ex.id,
                    **fields,
                    "position": positions.get(ex.id, 0),
                    "current_hash": ex.content_hash,
                    "archived": False,
                    "sync_error": None,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            report.added.append(ex.id)
            continue
        if row.current_hash != ex.content_hash:
            report.updated.append(ex.id)
        elif row.archived:
            report.restored.append(ex.id)
        else:
            report.unchanged.append(ex.id)
        if row.archived and ex.id not in report.restored:
            report.restored.append(ex.id)
        old_points = row.points
        for name, value in fields.items():
            setattr(row, name, value)
        row.position = positions.get(ex.id, row.position or 0)
        row.archived = False
        row.sync_error = None
        if row.current_hash != ex.content_hash:
            row.current_hash = ex.content_hash
            row.updated_at = now
        if old_points is not None and old_points != points:
            repoint.append((ex.id, points))
    # One flush for the changed exercises instead of one per exercise; then the new exercises
    # and the new versions each in one executemany, in bank order (version ids ascend as
    # before), without loading them back (nothing here needs them as objects).
    session.flush()
    if new_exercises:
        session.execute(insert(Exercise), new_exercises)
    if new_versions:
        session.execute(insert(ExerciseVersion), new_versions)
    for ex_id, points in repoint:
        session.execute(
            update(Progress)
            .where(Progress.exercise_id == ex_id)
            .values(best_points=Progress.best_score * points)
        )

    for ex_id, row in existing.items():
        if ex_id in bank.exercises:
            continue
        if ex_id in errored_exercises:
            row.sync_error = errored_exercises[ex_id]
            report.kept_previous.append(ex_id)
            continue
        if row.quiz_id in errored_quizzes:
            report.kept_previous.append(ex_id)
            continue
        if not row.archived:
            row.archived = True
            row.updated_at = now
            report.archived.append(ex_id)

    for quiz_id, qrow in existing_quizzes.items():
        if quiz_id in bank.quizzes or quiz_id in errored_quizzes:
            continue
        live_children = any(e.quiz_id == quiz_id and not e.archived for e in existing.values())
        if not qrow.archived and not live_children:
            qrow.archived = True
            qrow.updated_at = now
    session.commit()
    # Scoreboard totals follow the live exercises and their points: rebuild them now, at sync,
    # rather than on the next scoreboard view (which still checks, as a safety net).  One
    # fingerprint query when nothing changed.
    from quizapp.instructor.totals import ensure_current

    ensure_current(session)
    return report


def sync_folder(session: Session, root: Path) -> SyncReport:
    """``load_bank(root)`` then :func:`sync_bank`.  A missing folder archives nothing."""
    from quizapp.bank import load_bank

    root = Path(root)
    if not root.is_dir():
        report = SyncReport()
        report.errors.append(f"{root}: the exercises folder does not exist")
        return report
    return sync_bank(session, load_bank(root), root)


# --------------------------------------------------------------------------------------------
# Variants


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
#: Under the write lock: the columns of the variant and of its exercise that the submit decides
#: on, as plain values (SQLAlchemy Core on the tables: no ORM objects built; ``submit`` gives the
#: values to the objects it already holds).
_VARIANT_FOR_SUBMIT = (
    select(
        Variant.__table__.c.variant_number,
        Variant.__table__.c.version_id,
        Variant.__table__.c.finished_at,
        Exercise.__table__.c.attempts,
        Exercise.__table__.c.points,
    )
    .join_from(
        Variant.__table__,
        Exercise.__table__,
        Variant.__table__.c.exercise_id == Exercise.__table__.c.id,
    )
    .where(Variant.__table__.c.id == bindparam("vid"))
)
_INSERT_SUBMISSION = insert(Submission.__table__)
_SUBMISSIONS = (
    select(Submission).where(Submission.variant_id == bindparam("vid")).order_by(Submission.id)
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


def _ensure_progress(session: Session, user: User, exercise: Exercise, *, lock: bool) -> Progress:
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
    progress = _ensure_progress(session, user, exercise, lock=True)
    if progress.current_variant == number:
        progress.current_variant = number + 1
    row = _create_variant(session, user, exercise, progress.current_variant, seed_secret)
    session.commit()
    return row


# --------------------------------------------------------------------------------------------
# Submissions


@dataclass
class SubmitResult:
    """The outcome of :func:`submit`.

    ``verdict`` is the grading contract's dict (status, score, message, cells, mistakes) plus
    ``mistake_messages``.  ``duplicate`` is True when the answer was identical to an earlier graded
    one of the same variant (its verdict is returned and no attempt is used).
    """

    submission: SubmissionRow
    variant: Variant
    verdict: dict[str, Any]
    attempts: int
    attempts_left: int
    used_attempt: bool
    duplicate: bool
    solved: bool
    finished: bool
    points: float
    best_points: float
    #: every submission of the variant, oldest first, this one last (what the exercise page lists;
    #: read under the write lock, so no query is needed to show them).
    submissions: list[SubmissionRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON for the API: the verdict keys plus attempts and points."""
        out = {k: v for k, v in self.verdict.items()}
        out.update(
            {
                "submission_id": self.submission.id,
                "variant_number": self.variant.variant_number,
                "used_attempt": self.used_attempt,
                "duplicate": self.duplicate,
                "attempts": self.attempts,
                "attempts_left": self.attempts_left,
                "points": self.points,
                "best_points": self.best_points,
                "solved": self.solved,
                "finished": self.finished,
            }
        )
        return out


def _db_safe(text: str) -> bool:
    """False if ``text`` holds characters a database text column cannot store (NUL, surrogates)."""
    return "\x00" not in text and not any("\ud800" <= ch <= "\udfff" for ch in text)


def normalize_answer(answer: Any) -> str | list[list[str]]:
    """Check the type and size of a posted answer and return it unchanged.

    ``answer`` is a text, or a grid: a non-empty list of non-empty lists of cell strings.
    Raises ``BadRequest`` (with what is wrong) for anything else, and for answers beyond
    ``MAX_ANSWER_CHARS`` characters, ``MAX_GRID`` rows/columns or ``MAX_CELL_CHARS`` per cell.
    """
    if isinstance(answer, str):
        if len(answer) > MAX_ANSWER_CHARS:
            raise BadRequest(f"The answer is too long (at most {MAX_ANSWER_CHARS} characters).")
        return answer
    if isinstance(answer, list):
        if not answer:
            raise BadRequest("The grid of cells is empty.")
        if len(answer) > MAX_GRID:
            raise BadRequest(f"Too many rows (at most {MAX_GRID}).")
        grid: list[list[str]] = []
        for i, row in enumerate(answer, start=1):
            if not isinstance(row, list):
                raise BadRequest(f"Row {i} of the cells must be a list of texts.")
            if not row or len(row) > MAX_GRID:
                raise BadRequest(f"Row {i} must have between 1 and {MAX_GRID} cells.")
            for j, cell in enumerate(row, start=1):
                if not isinstance(cell, str):
                    raise BadRequest(f"The cell in row {i}, column {j} must be text.")
                if len(cell) > MAX_CELL_CHARS:
                    raise BadRequest(
                        f"The cell in row {i}, column {j} is too long "
                        f"(at most {MAX_CELL_CHARS} characters)."
                    )
            grid.append(list(row))
        return grid
    raise BadRequest("The answer must be a text or a list of rows of cell texts.")


def answer_grid_shape(form: Any) -> tuple[int, int] | None:
    """(rows, columns) of the input grid the page shows for ``AnswerForm`` ``form``, or None when
    it shows no grid (a text box, choices, or a matrix whose shape is part of the question).

    Matrices and partly filled matrices with ``show_shape`` use their shape; a vector of length n
    is a column of n inputs; ``point_on_line`` asks for ``count`` rows of one input per unknown.
    """
    if form.type == "point_on_line":
        unknowns = form.unknowns or ["x", "y"]
        return (max(1, int(form.count or 1)), len(unknowns))
    if form.type not in ("vector", "matrix", "partial_matrix") or not form.show_shape:
        return None
    shape = tuple(form.shape or ())
    if form.type == "vector" and len(shape) == 1:
        return (int(shape[0]), 1)
    if len(shape) == 2:
        return (int(shape[0]), int(shape[1]))
    return None


def check_grid_shape(form: Any, answer: str | list[list[str]]) -> None:
    """Refuse (``BadRequest``) a grid answer whose shape differs from the grid the form shows.

    When the page shows the shape (``answer_grid_shape`` is not None) a grid of another shape is a
    client error, not a wrong answer: it uses no attempt and is not stored.  A vector's cells may
    come as a column (n x 1) or a row (1 x n).  Text answers and forms whose shape is part of the
    question are not checked here: the grader marks a wrong shape incorrect (grading contract).
    """
    shape = answer_grid_shape(form)
    if shape is None or not isinstance(answer, list):
        return
    rows, cols = shape
    ragged = len({len(row) for row in answer}) != 1
    posted = None if ragged else (len(answer), len(answer[0]))
    got = f"{len(answer)} rows of different lengths" if ragged else f"{posted[0]} × {posted[1]}"
    allowed = {(rows, cols)}
    if form.type == "vector":
        allowed.add((cols, rows))
    if posted not in allowed:
        want = f"{rows} entries" if form.type == "vector" else f"{rows} × {cols}"
        raise BadRequest(
            f"The grid of cells must be {want} (rows × columns) for this exercise; got {got}. "
            "It used no attempt."
        )


def _canonical(answer: str | list[list[str]]) -> str:
    """What counts as "identical": whitespace-insensitive at line/cell ends and between tokens."""
    if isinstance(answer, str):
        lines = [" ".join(line.split()) for line in answer.strip().splitlines()]
        return "text:" + "\n".join(line for line in lines if line)
    return "cells:" + json.dumps([[" ".join(c.split()) for c in row] for row in answer])


def encode_raw_answer(answer: str | list[list[str]]) -> tuple[str, str]:
    """(answer_format, raw_answer) to store, losslessly.

    Text is stored as is (format ``text``); a grid as JSON (``cells``).  Text holding NUL or
    unpaired surrogates, which database text columns cannot hold, is stored JSON-escaped with
    format ``json``.  :func:`decode_raw_answer` inverts it.
    """
    if isinstance(answer, str):
        if _db_safe(answer):
            return "text", answer
        return "json", json.dumps(answer)
    safe = all(_db_safe(c) for row in answer for c in row)
    return "cells", json.dumps(answer, ensure_ascii=not safe)


def decode_raw_answer(answer_format: str, raw_answer: str) -> str | list[list[str]]:
    """The answer exactly as posted, from a submission's ``answer_format`` and ``raw_answer``."""
    if answer_format == "text":
        return raw_answer
    return json.loads(raw_answer)


def _grade(bank_variant: BankVariant, answer: str | list[list[str]]) -> Verdict:
    from quizapp.bank import grade_answer
    from quizapp.grading import Verdict

    try:
        return grade_answer(bank_variant, answer)
    except Exception:  # a grader bug must not lose the submission nor cost an attempt
        log.exception("grading failed for %s seed %s", bank_variant.exercise_id, bank_variant.seed)
        return Verdict(
            status="invalid",
            score=0.0,
            message="The grader could not read this answer; it used no attempt. "
            "Please check its format (the instructor has been notified in the log).",
        )


def _verdict_dict(verdict: Verdict) -> dict[str, Any]:
    out = verdict.to_dict()
    out["mistake_messages"] = [m.message for m in verdict.mistakes]
    cell = getattr(verdict, "invalid_cell", None)
    if cell is not None:
        out["invalid_cell"] = list(cell)  # 1-based (row, column); row None for a vector entry
    return out


def _json_safe(value: Any) -> Any:
    """``value`` with NaN/inf replaced by None (JSON columns and responses must be valid JSON)."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return _json_safe(value.tolist())
    return value


def submit(
    session: Session,
    user: User,
    exercise_id: str,
    answer: Any,
    *,
    seed_secret: str | bytes,
    source: str = "web",
    now: datetime | None = None,
    variant: Variant | None = None,
) -> SubmitResult:
    """Grade ``answer`` on the student's current variant of ``exercise_id`` and store it.

    ``variant``: the student's current variant when the caller already loaded it (the web route
    does, to read the posted form), saving its lookup; it is re-read and checked under the write
    lock like any other.  The objects of the result stay loaded after the commit (not expired), so
    the page that shows them issues no further queries for them.

    ``answer`` is the text as typed or a grid (list of rows of cell strings).  In ONE transaction
    (serialized per database on SQLite, per progress row on PostgreSQL): the ``Submission`` is
    appended and the ``Progress`` row updated.  Rules:

    - an invalid answer (unparseable, wrong shape) is stored and uses no attempt;
    - an answer identical (see ``_canonical``) to an earlier graded one of the same variant uses no
      attempt and gets the earlier verdict (stored with ``duplicate_of_id``);
    - on a finished variant (solved, or no attempts left) anything else is refused (``Conflict``)
      and nothing is stored;
    - only variant 1 counts for ``Progress.best_score`` / ``best_points`` / ``attempts_used``;
      after committing such a graded attempt it sends ``quizapp.signals.score_changed``.

    Raises ``BadRequest`` (malformed answer, or a grid whose shape differs from the one the form
    shows: see :func:`check_grid_shape`), ``NotFound`` (unknown exercise), ``Forbidden``
    (quiz not open), ``Conflict`` (finished).
    """
    answer = normalize_answer(answer)
    exercise = get_exercise(session, exercise_id)
    check_quiz_visible(exercise.quiz, user)
    if not user.is_instructor and exercise.quiz.closes_at is not None:
        if (now or utcnow()) >= exercise.quiz.closes_at:
            raise Forbidden(
                f"The quiz '{exercise.quiz.title}' closed on "
                f"{exercise.quiz.closes_at:%Y-%m-%d %H:%M} UTC; answers are no longer accepted."
            )
    # The variant the student was shown (created if this is the first contact, e.g. the API).
    if variant is None or variant.user_id != user.id or variant.exercise_id != exercise.id:
        variant = get_or_create_variant(session, user, exercise, seed_secret, refresh_version=False)
    bank_variant = generate_variant(variant)
    check_grid_shape(bank_variant.answer_form, answer)
    answer_format, raw = encode_raw_answer(answer)
    answer_hash = hashlib.sha256(_canonical(answer).encode("utf-8", "surrogatepass")).hexdigest()
    # Grade outside the lock (pure and possibly slow); the variant's version cannot change once it
    # has submissions, and it is re-checked below.
    verdict = _grade(bank_variant, answer)
    version_id = variant.version_id
    user_id, variant_id = user.id, variant.id

    # Under the write lock, every row the decision depends on is read again from the database:
    # the progress row (locked, populate_existing: it is updated through the ORM), the variant's
    # number, version and finished time with its exercise's attempts and points (Core), and the
    # variant's submissions as plain rows (the attempts used, solved, best score, an identical
    # earlier answer; the page lists them too).  Nothing else is expired or re-read.
    begin_write(session, expire=False)
    progress = _ensure_progress(session, user, exercise, lock=True)
    found = session.execute(_VARIANT_FOR_SUBMIT, {"vid": variant_id}).first()
    if found is None:  # deleted meanwhile (the student's data was erased)
        session.rollback()
        raise Conflict("The exercise changed while you answered; reload it and try again.")
    number, version_now, finished_at, attempts, exercise_points = found
    if progress.current_variant != number or version_now != version_id:
        session.rollback()
        raise Conflict("The exercise changed while you answered; reload it and try again.")
    # The objects held take the values read under the lock, as unchanged database state (what a
    # populate_existing re-read did, without building the objects again).
    set_committed_value(variant, "variant_number", number)
    set_committed_value(variant, "finished_at", finished_at)
    set_committed_value(exercise, "attempts", attempts)
    set_committed_value(exercise, "points", exercise_points)
    now = now or utcnow()
    submissions = submission_rows(session, variant.id)
    graded = [sub for sub in submissions if sub.used_attempt]
    # The same figures as variant_state()'s aggregate, from the rows.
    state = VariantState(
        attempts=int(exercise.attempts),
        attempts_used=len(graded),
        solved=any(sub.status == "correct" for sub in graded),
        best_score=max((float(sub.score) for sub in graded), default=0.0),
    )
    earlier = next((sub for sub in graded if sub.answer_hash == answer_hash), None)
    if earlier is None and state.finished:
        session.rollback()
        if state.solved:
            raise Conflict("You already solved this variant.")
        raise Conflict(f"No attempts left: all {state.attempts} attempts on this variant are used.")

    if earlier is not None:
        vdict = dict(earlier.verdict)
        score, status, mistakes, parsed = (
            earlier.score,
            earlier.status,
            earlier.mistakes,
            earlier.parsed,
        )
        used = False
        vdict["message"] = (
            "You already submitted this answer; it used no attempt. "
            + str(vdict.get("message", ""))
        ).strip()
    else:
        vdict = _json_safe(_verdict_dict(verdict))
        score = float(verdict.score) if verdict.score == verdict.score else 0.0
        score = min(1.0, max(0.0, score))
        status = verdict.status
        mistakes = list(verdict.mistake_codes)
        parsed = _json_safe(verdict.parsed)
        used = verdict.status != "invalid"

    points = round(score * float(exercise.points), 6)
    values = dict(
        variant_id=variant.id,
        user_id=user_id,
        exercise_id=exercise.id,
        version_id=variant.version_id,
        answer_format=answer_format,
        raw_answer=raw,
        answer_hash=answer_hash,
        parsed=parsed,
        verdict=vdict,
        status=status,
        score=score,
        points=points,
        mistakes=mistakes,
        used_attempt=used,
        attempt_number=state.attempts_used + 1 if used else None,
        duplicate_of_id=earlier.id if earlier is not None else None,
        source=source,
        created_at=now,
    )
    # One Core INSERT, executed here in the write transaction: the same row the ORM's unit of work
    # wrote at commit (tests compare every stored column), at a fraction of its cost; the page
    # shows the values written.
    new_id = session.execute(_INSERT_SUBMISSION, values).inserted_primary_key[0]
    row = SubmissionRow(id=int(new_id), **values)

    attempts_used = state.attempts_used + (1 if used else 0)
    solved = state.solved or (used and status == "correct")
    finished = solved or attempts_used >= state.attempts
    progress.submissions_count = (progress.submissions_count or 0) + 1
    progress.last_activity = now
    if not variant.is_practice and used:
        progress.attempts_used = attempts_used
        if score > (progress.best_score or 0.0):
            progress.best_score = score
            progress.best_points = round(score * float(exercise.points), 6)
            progress.best_reached_at = now
        elif progress.best_reached_at is None:
            progress.best_reached_at = now  # first graded attempt, score 0
        if status == "correct" and progress.solved_at is None:
            progress.solved_at = now
    if finished and variant.finished_at is None:
        variant.finished_at = now
    if not variant.is_practice and used:
        refresh_score_totals(session, user_id)
    real = session() if isinstance(session, scoped_session) else session
    keep = real.expire_on_commit
    real.expire_on_commit = False  # the rows are what was just written: no reload for the page
    try:
        session.commit()
    finally:
        real.expire_on_commit = keep
    if not variant.is_practice and used:
        # After the commit: receivers (the LMS grade queue) see the stored attempt.
        signals.score_changed.send(
            session, user_id=user_id, exercise_id=exercise.id, quiz_id=exercise.quiz_id
        )
    return SubmitResult(
        submission=row,
        variant=variant,
        verdict=vdict,
        attempts=state.attempts,
        attempts_left=max(0, state.attempts - attempts_used),
        used_attempt=used,
        duplicate=earlier is not None,
        solved=solved,
        finished=finished,
        points=points,
        best_points=float(progress.best_points or 0.0),
        submissions=[*submissions, row],
    )


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
    refresh_score_totals(session, user_id)
    return progress


def refresh_score_totals(session: Session, user_id: int) -> None:
    """Recompute the student's scoreboard totals (``score_totals``) from their progress rows, in
    the current write transaction (flushes, does not commit): called wherever a progress row's
    points, attempts or solve time change.  See ``quizapp.instructor.totals``."""
    from quizapp.instructor.totals import refresh_user_totals

    refresh_user_totals(session, user_id)


def variant_submissions(session: Session, variant: Variant) -> list[Submission]:
    """The submissions of ``variant``, oldest first."""
    return list(session.scalars(_SUBMISSIONS, {"vid": variant.id}))


@dataclass(frozen=True, slots=True)
class SubmissionRow(VerdictView):
    """A stored submission as plain values, read with SQLAlchemy Core (no ORM object, nothing
    kept in the session): what the exercise page lists and ``submit`` decides on.  Same field
    names, values and ``cells`` / ``message`` / ``mistake_messages`` as ``models.Submission``
    (one field per column of the ``submissions`` table, checked by the tests); read-only."""

    id: int
    variant_id: int
    user_id: int
    exercise_id: str
    version_id: int
    answer_format: str
    raw_answer: str
    answer_hash: str
    parsed: Any
    verdict: dict[str, Any]
    status: str
    score: float
    points: float
    mistakes: list[str]
    used_attempt: bool
    attempt_number: int | None
    duplicate_of_id: int | None
    source: str
    created_at: datetime


_SUBMISSION_ROWS = (
    select(*(Submission.__table__.c[f.name] for f in fields(SubmissionRow)))
    .where(Submission.__table__.c.variant_id == bindparam("vid"))
    .order_by(Submission.__table__.c.id)
)


def submission_rows(session: Session, variant_id: int) -> list[SubmissionRow]:
    """The submissions of variant ``variant_id``, oldest first, as :class:`SubmissionRow` (always
    read from the database: never a stale object of the session).  The same rows and values as
    :func:`variant_submissions`, without building ORM objects (the fixed cost of the ORM read
    goes; decoding the JSON columns, ~0.05 ms per row, remains)."""
    return [SubmissionRow(*row) for row in session.execute(_SUBMISSION_ROWS, {"vid": variant_id})]


# --------------------------------------------------------------------------------------------
# Progress summaries


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
