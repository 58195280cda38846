"""Accounts: usernames, display names, creating users, signing in."""

from __future__ import annotations

import logging
import re
import unicodedata
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quizapp.models import (
    USERNAME_MAX,
    ApiToken,
    User,
    username_key,
    utcnow,
)

if TYPE_CHECKING:
    pass


from quizapp.services.errors import BadRequest, Conflict, NotFound
from quizapp.services.text import DISPLAY_NAME_MAX, db_safe, name_problem
from quizapp.services.transactions import begin_write

log = logging.getLogger(__name__)

USERNAME_RE = re.compile(r"^[\w.@+-]+$")
USERNAME_BAD_START = ("-", "+", "@")
PASSWORD_MIN = 8
PASSWORD_MAX = 1024


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


#: An e-mail address as users type it: one ``@``, a dot in the domain, no spaces (deliverability
#: is the mail server's to judge); at most 254 characters (RFC 5321, section 4.5.3.1.3).
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
EMAIL_MAX = 254


def validate_email(email: Any) -> str | None:
    """The e-mail address stripped, or None when none is given (empty).  Raises ``BadRequest``
    for one that is not text, longer than ``EMAIL_MAX`` characters, not of the form
    ``name@domain.tld`` (``EMAIL_RE``), or holding a control or invisible character
    (:func:`name_problem`; a NUL cannot be stored on PostgreSQL).  The one rule for the
    registration form, ``create_user`` and roster imports."""
    if email is None:
        return None
    if not isinstance(email, str):
        raise BadRequest("The e-mail address must be text.")
    text = email.strip()
    if not text:
        return None
    problem = name_problem(text, "e-mail address")
    if problem:
        raise BadRequest(problem)
    if len(text) > EMAIL_MAX:
        raise BadRequest(f"The e-mail address is too long (at most {EMAIL_MAX} characters).")
    if not EMAIL_RE.fullmatch(text):
        raise BadRequest(f"{text!r} is not an e-mail address (name@example.org).")
    return text


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


def validate_password(password: Any) -> str:
    """``password`` unchanged; raises ``BadRequest`` unless it is text of ``PASSWORD_MIN`` to
    ``PASSWORD_MAX`` characters that can be hashed (no unpaired surrogate)."""
    if not isinstance(password, str) or len(password) < PASSWORD_MIN:
        raise BadRequest(f"The password must have at least {PASSWORD_MIN} characters.")
    if len(password) > PASSWORD_MAX:
        raise BadRequest(f"The password is too long (at most {PASSWORD_MAX} characters).")
    if not db_safe(password.replace("\x00", "")):
        raise BadRequest("The password must be valid text (it holds an unpaired surrogate).")
    return password


def find_user(session: Session, username: str) -> User | None:
    """The user whose username matches ``username`` case- and normalization-insensitively."""
    if not isinstance(username, str) or len(username) > 4 * USERNAME_MAX:
        return None
    if not db_safe(username):  # NUL / lone surrogates: no such user (PostgreSQL cannot compare)
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

    Raises ``BadRequest`` for an invalid username, role, e-mail address (:func:`validate_email`)
    or a password shorter than 8 characters,
    and ``Conflict`` when the username is taken (compared after NFKC normalization and case
    folding, see ``quizapp.models.username_key``).
    """
    name = validate_username(username)
    if role not in ("student", "instructor"):
        raise BadRequest("The role must be 'student' or 'instructor'.")
    validate_password(password)
    display_name = validate_display_name(display_name)
    email = validate_email(email)
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


def revoke_everything(session: Session, user_id: int, *, tokens: bool = True) -> None:
    """In the caller's write transaction (no commit): raise user ``user_id``'s
    ``session_version``, which ends every session and remember-me cookie of theirs (the user
    loader refuses the old version), and with ``tokens`` revoke every live API token of theirs.
    The one rule behind sign-out, "sign out everywhere", a password change and a reset."""
    session.execute(
        update(User)
        .where(User.id == user_id)
        .values(session_version=User.session_version + 1)
        .execution_options(synchronize_session=False)
    )
    if tokens:
        session.execute(
            update(ApiToken)
            .where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
            .values(revoked_at=utcnow())
            .execution_options(synchronize_session=False)
        )
    held = session.get(User, user_id)
    if held is not None:
        session.expire(held, ["session_version"])


def expire_reset_links(session: Session, user_id: int, now: datetime | None = None) -> None:
    """In the caller's write transaction (no commit): every unused password-reset link of user
    ``user_id`` expires ``now``.  A new link replaces the earlier ones, and a password change,
    reset or ``set-password`` ends them (a link issued before a change must not open the
    account after it)."""
    from quizapp.models_instructor import PasswordReset

    now = now or utcnow()
    session.execute(
        update(PasswordReset)
        .where(
            PasswordReset.user_id == user_id,
            PasswordReset.used_at.is_(None),
            PasswordReset.expires_at > now,
        )
        .values(expires_at=now)
        .execution_options(synchronize_session=False)
    )


def end_sessions(session: Session, user_id: int, *, tokens: bool = True) -> None:
    """Sign user ``user_id`` out everywhere and commit: every session and remember-me cookie
    stops working, and (``tokens``) every API token is revoked.  Raises ``NotFound`` for an
    unknown user."""
    begin_write(session)
    if session.get(User, user_id) is None:
        session.rollback()
        raise NotFound("There is no such user.")
    revoke_everything(session, user_id, tokens=tokens)
    session.commit()


def change_password(session: Session, user: User, current: str, new: str) -> User:
    """Set ``user``'s password to ``new`` after checking ``current``; end every session,
    remember-me cookie and API token of theirs (:func:`revoke_everything`); commit.  Returns the
    user with the new ``session_version`` (sign the current browser in again with it).

    Raises ``BadRequest`` when ``current`` is wrong or ``new`` is not a valid password
    (:func:`validate_password`) or equals the current one.
    """
    if (
        not isinstance(current, str)
        or len(current) > PASSWORD_MAX
        or not user.check_password(current)
    ):
        raise BadRequest("The current password is not right.")
    validate_password(new)
    if new == current:
        raise BadRequest("The new password is the same as the current one.")
    user_id = user.id
    begin_write(session)
    row = session.get(User, user_id)
    if row is None:
        session.rollback()
        raise NotFound("There is no such user.")
    row.set_password(new)
    revoke_everything(session, user_id)
    expire_reset_links(session, user_id)
    session.commit()
    return row


def set_password(session: Session, user_id: int, password: str) -> User:
    """Set user ``user_id``'s password without the current one (the server's administrator:
    ``quizapp set-password``) and end every session, remember-me cookie and API token of
    theirs; commit.  Raises ``NotFound`` for an unknown user, ``BadRequest`` for an invalid
    password (:func:`validate_password`)."""
    validate_password(password)
    begin_write(session)
    row = session.get(User, user_id)
    if row is None:
        session.rollback()
        raise NotFound("There is no such user.")
    row.set_password(password)
    revoke_everything(session, user_id)
    expire_reset_links(session, user_id)
    session.commit()
    return row


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The active user with these credentials, or None.  Never raises for bad input."""
    if not isinstance(password, str) or len(password) > PASSWORD_MAX:
        return None
    if not db_safe(password.replace("\x00", "")):  # lone surrogates cannot be hashed (UTF-8)
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
