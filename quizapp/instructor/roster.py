"""The roster: CSV import creating student accounts with one-time password-reset links, export,
and the reset links themselves (stored hashed, expiring, single use)."""

from __future__ import annotations

import csv
import hashlib
import io
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.instructor._scope import all_students
from quizapp.instructor.gradebook_export import FORMULA_TRIGGERS, write_csv
from quizapp.models import (
    User,
    username_key,
    utcnow,
)
from quizapp.models_instructor import PasswordReset

#: How long a password-reset link works.
RESET_LINK_VALID = timedelta(days=14)
ROSTER_COLUMNS = ("username", "display_name", "email")
_HEADER_ALIASES = {
    "username": "username",
    "user": "username",
    "login": "username",
    "display_name": "display_name",
    "display name": "display_name",
    "name": "display_name",
    "full name": "display_name",
    "email": "email",
    "e-mail": "email",
    "mail": "email",
}
#: Largest roster file accepted (rows).
MAX_ROSTER_ROWS = 5000


class RosterError(services.BadRequest):
    """The roster file has problems; ``problems`` lists them (``line N: message``).  Nothing
    was imported."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("The roster was not imported: " + "; ".join(problems[:20]))
        self.problems = problems


@dataclass
class RosterEntry:
    """One valid row of a roster file (``line`` is 1-based, counting the header)."""

    line: int
    username: str
    display_name: str
    email: str


@dataclass
class RosterImport:
    """The outcome of :func:`import_roster`: accounts created (with their reset token, shown
    once) and rows skipped because the username exists."""

    created: list[tuple[RosterEntry, int, str]] = field(default_factory=list)
    skipped: list[tuple[RosterEntry, str]] = field(default_factory=list)
    expires_at: datetime | None = None


def _strip_neutralizer(text: str) -> str:
    """Undo :func:`csv_cell`'s apostrophe so an exported roster imports back unchanged."""
    if text.startswith("'") and text[1:].startswith(FORMULA_TRIGGERS):
        return text[1:]
    return text


def parse_roster_csv(text: str) -> list[RosterEntry]:
    """Parse a roster CSV: columns ``username, display name, email`` (a header row naming them,
    in any order and case, is recognized; otherwise that order is assumed).

    Raises ``RosterError`` listing every problem of every bad row (``line N: message``, several
    per line when a line has several): an invalid username, display name (control or bidi
    characters, too long) or e-mail, a username twice in the file, too many columns, more than
    ``MAX_ROSTER_ROWS`` rows.
    """
    if text.startswith("\ufeff"):
        text = text[1:]  # Excel's UTF-8 byte order mark
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as err:
        raise RosterError([f"the file is not valid CSV: {err}"]) from None
    problems: list[str] = []
    columns = list(ROSTER_COLUMNS)
    start = 0
    if rows:
        names = [_HEADER_ALIASES.get(c.strip().lower()) for c in rows[0]]
        if "username" in names:
            columns = [n or "" for n in names]
            start = 1
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(rows[start:], start=start + 1):
        if not any(c.strip() for c in row):
            continue
        if len(entries) >= MAX_ROSTER_ROWS:
            problems.append(f"more than {MAX_ROSTER_ROWS} students; split the file")
            break
        line: list[str] = []  # every problem of this line, not only the first
        if len(row) > len(columns) and any(c.strip() for c in row[len(columns) :]):
            line.append(
                f"{len(row)} columns, expected at most {len(columns)} "
                f"({', '.join(c for c in columns if c)})"
            )
        values = {
            col: _strip_neutralizer(row[i].strip())
            for i, col in enumerate(columns)
            if col and i < len(row)
        }
        username = ""
        try:
            username = services.validate_username(values.get("username", ""))
        except services.BadRequest as err:
            line.append(f"{err.message} (got {values.get('username', '')!r})")
        email = values.get("email", "")
        try:
            email = services.validate_email(email) or ""
        except services.BadRequest as err:
            line.append(err.message)
        display = values.get("display_name", "")
        try:
            display = services.validate_display_name(display)
        except services.BadRequest as err:
            line.append(err.message)
        if username:
            key = username_key(username)
            if key in seen:
                line.append(f"username {username!r} already on line {seen[key]}")
            else:
                seen[key] = index
        if line:
            problems.extend(f"line {index}: {p}" for p in line)
            continue
        entries.append(RosterEntry(index, username, display, email))
    if problems:
        raise RosterError(problems)
    return entries


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(32)
    return token, hashlib.sha256(token.encode("ascii")).hexdigest()


def _unusable_password() -> str:
    """A password hash no password matches (the account is reached through its reset link)."""
    return "!unusable$" + secrets.token_hex(16)


def import_roster(
    session: Session,
    text: str,
    *,
    valid_for: timedelta = RESET_LINK_VALID,
    now: datetime | None = None,
) -> RosterImport:
    """Create a student account for each new username of the roster CSV ``text``, each with a
    one-time password-reset link valid ``valid_for``; existing usernames are skipped.  All in one
    transaction: a bad row imports nothing (``RosterError`` lists every problem).

    The created accounts cannot sign in until the student sets a password through the link
    (``/reset/<token>``).  Tokens are returned once and stored as SHA-256 digests.
    """
    entries = parse_roster_csv(text)
    now = now or utcnow()
    result = RosterImport(expires_at=now + valid_for)
    services.begin_write(session)
    try:
        existing = {
            k
            for (k,) in session.execute(
                select(User.username_key).where(
                    User.username_key.in_([username_key(e.username) for e in entries])
                )
            )
        }
        for e in entries:
            if username_key(e.username) in existing:
                result.skipped.append((e, "the username exists already"))
                continue
            user = User(
                username=e.username,
                username_key=username_key(e.username),
                display_name=e.display_name,
                email=e.email or None,
                role="student",
                password_hash=_unusable_password(),
                created_at=now,
            )
            session.add(user)
            session.flush()
            token, digest = _new_token()
            session.add(
                PasswordReset(
                    user_id=user.id,
                    token_hash=digest,
                    created_at=now,
                    expires_at=now + valid_for,
                    note="roster import",
                )
            )
            result.created.append((e, user.id, token))
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return result


def create_reset_link(
    session: Session, user_id: int, *, valid_for: timedelta = RESET_LINK_VALID, note: str = ""
) -> str:
    """A new one-time password-reset token for student ``user_id`` (earlier unused links stop
    working); commit.  Raises ``services.NotFound`` for an unknown user and
    ``services.Forbidden`` for an instructor: an instructor's link would let any instructor take
    over another's account; the server's administrator resets an instructor's password with
    ``quizapp set-password`` instead."""
    target = session.get(User, user_id)
    if target is None:
        raise services.NotFound("There is no such user.")
    if target.role != "student":
        raise services.Forbidden(
            "Reset links are for students only; an instructor's password is reset on the server "
            "with 'quizapp set-password USERNAME'."
        )
    now = utcnow()
    services.begin_write(session)
    services.expire_reset_links(session, user_id, now)
    token, digest = _new_token()
    session.add(
        PasswordReset(
            user_id=user_id,
            token_hash=digest,
            created_at=now,
            expires_at=now + valid_for,
            note=note,
        )
    )
    session.commit()
    return token


def find_reset(session: Session, token: str) -> PasswordReset | None:
    """The live (unused, unexpired) reset link of ``token``, or None."""
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        return None
    digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    row = session.scalar(select(PasswordReset).where(PasswordReset.token_hash == digest))
    if row is None or row.used_at is not None or row.expires_at <= utcnow():
        return None
    if not row.user.active:
        return None
    return row


def use_reset(session: Session, token: str, password: str) -> User:
    """Set the password of the reset link's user and spend the link; commit.

    Raises ``services.NotFound`` for an unknown, used or expired link (also when another use of
    the same link won the race) and ``services.BadRequest`` for an invalid password
    (``services.validate_password``).  Every session, remember-me cookie and API token of the
    user ends (``services.revoke_everything``).
    """
    services.validate_password(password)
    row = find_reset(session, token)
    if row is None:
        raise services.NotFound(
            "This link is unknown, used or expired; ask your instructor for a new one."
        )
    reset_id, user_id = row.id, row.user_id
    services.begin_write(session)
    # Spend the link with one conditional UPDATE: of two simultaneous uses, only the one whose
    # UPDATE changes the row goes on (on PostgreSQL the second waits for the first's row lock,
    # then finds used_at set; SQLite serializes the two write transactions).  A read then a
    # write let both succeed on PostgreSQL.
    now = utcnow()
    spent = session.execute(  # type: ignore[attr-defined]  # DML gives a CursorResult; Session.execute is typed as Result
        update(PasswordReset)
        .where(
            PasswordReset.id == reset_id,
            PasswordReset.used_at.is_(None),
            PasswordReset.expires_at > now,
        )
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    ).rowcount
    if spent != 1:
        session.rollback()
        raise services.NotFound("This link was used already.")
    user = session.get(User, user_id)
    assert user is not None
    user.set_password(password)
    # A reset ends every session, remember-me cookie and API token of the account (whoever knew
    # the old password, or holds a copied cookie, is out), and any other link of theirs.
    services.revoke_everything(session, user_id)
    services.expire_reset_links(session, user_id, now)
    session.commit()
    return user


def roster_table(session: Session) -> list[list[Any]]:
    """The students as rows ``username, display_name, email`` (header first): the import format."""
    table: list[list[Any]] = [list(ROSTER_COLUMNS)]
    for u in all_students(session):
        table.append([u.username, u.display_name or "", u.email or ""])
    return table


def roster_csv(session: Session) -> str:
    """The roster as CSV text (importable again with :func:`import_roster`)."""
    return write_csv(roster_table(session))
