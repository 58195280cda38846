"""quizapp accounts of platform users: created from ``sub``, name, email and roles (at launch
and by roster sync), kept up to date from the LMS.

- **Role**: an LTI role of the context (or of the institution/system) that is Instructor (any
  sub-role, e.g. ``Instructor#TeachingAssistant``) or Administrator makes the account an
  instructor; every other (Learner, Mentor, ...) a student.  The LMS can promote an account
  but never demotes an instructor (an instructor opening a course as a student, or a "student
  view", does not lose access here; demote with ``quizapp import-roster``/the database).
- **Username**: readable and unique: the email's local part, else the name, else ``student``,
  reduced to the characters usernames allow, with ``-2``, ``-3``, ... when taken.  Platform
  users sign in only through the LMS: their password hash is a marker no password matches.
- **Name and email** follow the LMS at every launch and sync (display name cleaned of the
  characters ``services.validate_display_name`` refuses, rather than refusing the launch).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.lti.models import LtiMember, LtiUser
from quizapp.models import USERNAME_MAX, User, username_key, utcnow
from quizapp.services.text import BIDI_CONTROLS, DISPLAY_NAME_MAX

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
#: Role URIs (LTI 1.3 appendix A.2) that make an account an instructor; sub-roles of
#: Instructor (``membership/Instructor#...``) count too.
INSTRUCTOR_ROLES = frozenset(
    {
        LIS + "membership#Instructor",
        LIS + "membership#Administrator",
        LIS + "institution/person#Administrator",
        LIS + "institution/person#Instructor",
        LIS + "institution/person#Faculty",
        LIS + "system/person#Administrator",
        LIS + "system/person#SysAdmin",
        # LTI 1.1 short names some platforms still send in 1.3 launches.
        "Instructor",
        "Administrator",
    }
)
#: The marker stored as a platform user's password hash: it has no ``$``, so Werkzeug's
#: ``check_password_hash`` returns False for every password.
NO_PASSWORD = "!lti"


def role_of(roles: Iterable[str] | None) -> str:
    """``"instructor"`` or ``"student"`` from a list of LTI role URIs (see the module doc)."""
    for role in roles or ():
        if not isinstance(role, str):
            continue
        if role in INSTRUCTOR_ROLES or role.startswith(LIS + "membership/Instructor#"):
            return "instructor"
    return "student"


def clean_display_name(text: Any) -> str:
    """The LMS's name as a display name: characters ``services.name_problem`` refuses dropped,
    spaces collapsed, cut to ``DISPLAY_NAME_MAX``."""
    if not isinstance(text, str):
        return ""
    kept = "".join(
        ch
        for ch in text
        if ch not in BIDI_CONTROLS
        and unicodedata.category(ch) not in ("Cc", "Cs", "Cf", "Co", "Cn")
    )
    return " ".join(kept.split())[:DISPLAY_NAME_MAX]


def platform_email(email: Any) -> str | None:
    """The LMS's ``email`` claim if it is an address ``services.validate_email`` accepts, else
    None: a launch is never refused over it (the student would be locked out), and a NUL or
    garbage in it is not stored (PostgreSQL cannot store a NUL)."""
    try:
        return services.validate_email(email)
    except services.BadRequest:
        return None


def name_from_claims(claims: Mapping[str, Any]) -> str:
    """``name``, else ``given_name family_name``, else empty."""
    name = claims.get("name")
    if isinstance(name, str) and name.strip():
        return clean_display_name(name)
    parts = [claims.get("given_name"), claims.get("family_name")]
    return clean_display_name(" ".join(p for p in parts if isinstance(p, str)))


_NOT_USERNAME = re.compile(r"[^\w.+-]+")


def _username_base(email: str | None, name: str) -> str:
    candidates = []
    if email and "@" in email:
        candidates.append(email.split("@", 1)[0])
    candidates += [name.replace(" ", "."), "student"]
    for cand in candidates:
        text = unicodedata.normalize("NFKC", cand)
        text = _NOT_USERNAME.sub("", text).strip("._-+@")[: USERNAME_MAX - 8]
        if text:
            try:
                return services.validate_username(text)
            except services.BadRequest:
                continue
    return "student"


def _free_username(session: Session, base: str) -> str:
    taken = {
        row
        for row in session.scalars(
            select(User.username_key).where(User.username_key.like(username_key(base) + "%"))
        )
    }
    if username_key(base) not in taken:
        return base
    n = 2
    while username_key(f"{base}-{n}") in taken:
        n += 1
    return f"{base}-{n}"


@dataclass
class Provisioned:
    """The account of a platform user: the user, whether it was created or changed now."""

    user: User
    created: bool
    changed: bool


def provision(
    session: Session,
    *,
    registration_id: int,
    sub: str,
    name: str,
    email: str | None,
    roles: Iterable[str] | None,
    launched: bool = False,
) -> Provisioned:
    """Find or create the account of platform user ``sub`` and bring its name, email and role
    up to date; flushes inside the caller's write transaction (``services.begin_write``), does
    not commit.  ``launched`` records the launch time.  A concurrent creation of the same
    user elsewhere surfaces as ``IntegrityError`` at flush: the caller retries."""
    now = utcnow()
    role = role_of(roles)
    email = platform_email(email)
    link = session.scalar(
        select(LtiUser).where(LtiUser.registration_id == registration_id, LtiUser.sub == sub)
    )
    if link is None:
        username = _free_username(session, _username_base(email, name))
        user = User(
            username=username,
            username_key=username_key(username),
            display_name=name,
            email=email,
            role=role,
            password_hash=NO_PASSWORD,
        )
        session.add(user)
        session.flush()
        session.add(
            LtiUser(
                registration_id=registration_id,
                sub=sub,
                user_id=user.id,
                last_launch_at=now if launched else None,
            )
        )
        session.flush()
        return Provisioned(user, True, True)
    user = session.get_one(User, link.user_id)  # lti_users.user_id is a foreign key
    changed = False
    if name and user.display_name != name:
        user.display_name, changed = name, True
    if email and user.email != email:
        user.email, changed = email, True
    if role == "instructor" and user.role != "instructor":
        user.role, changed = "instructor", True
    if launched:
        link.last_launch_at = now
    session.flush()
    return Provisioned(user, False, changed)


def set_membership(
    session: Session, context_row: int, user_id: int, roles: Iterable[str] | None, active: bool
) -> bool:
    """Create or update the membership of ``user_id`` in context row ``context_row``; flushes.
    Returns True when something changed."""
    roles = [r for r in (roles or []) if isinstance(r, str)]
    row = session.scalar(
        select(LtiMember).where(LtiMember.context_id == context_row, LtiMember.user_id == user_id)
    )
    if row is None:
        session.add(LtiMember(context_id=context_row, user_id=user_id, roles=roles, active=active))
        session.flush()
        return True
    if row.roles == roles and row.active == active:
        return False
    row.roles, row.active, row.updated_at = roles, active, utcnow()
    session.flush()
    return True


__all__ = [
    "INSTRUCTOR_ROLES",
    "NO_PASSWORD",
    "Provisioned",
    "clean_display_name",
    "name_from_claims",
    "provision",
    "role_of",
    "set_membership",
]
