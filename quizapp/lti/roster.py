"""Roster sync (LTI Names and Role Provisioning Services 2.0): ``quizapp lti sync-roster`` and
the instructor page's button create and update accounts from an LMS course's member list.

The memberships URL of a course is known from a launch (the NRPS claim).  Every member gets an
account (see ``quizapp.lti.accounts``: created from ``user_id``, name, email and roles, name and
email updated, instructors never demoted) and a membership row; a member the LMS lists as
``Inactive`` or ``Deleted``, or who is no longer listed at all, keeps their account and grades
but is marked inactive in that course (no grades are sent for them there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import requests
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.names_roles import NamesRolesProvisioningService
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.lti.accounts import name_from_claims, provision, set_membership
from quizapp.lti.failures import cause_in_words, host_of, lms_message
from quizapp.lti.http import Connector, TokenError
from quizapp.lti.keys import ToolKey
from quizapp.lti.models import LtiContext, LtiMember, LtiRegistration
from quizapp.lti.registry import DatabaseToolConf
from quizapp.models import User


def explain_roster_failure(exc: BaseException, *, client_id: str = "") -> str:
    """Why the LMS's member list could not be read, in words, with what to do (nothing was
    changed; the sync can simply be run again).  Covers the LMS unreachable, its token endpoint
    refusing the tool's credentials or the NRPS scope, and the member list's own HTTP errors
    (LTI NRPS 2.0: 401 token, 403 not allowed for this course, 404 no such list)."""
    again = "Nothing was changed; run the sync again once it is fixed."
    if isinstance(exc, TokenError):
        if exc.response is None:
            return (
                f"The LMS's token endpoint ({exc.url}) could not be reached "
                f"({cause_in_words(exc.cause)}). {again}"
            )
        status, said = exc.response.status_code, lms_message(exc.response)
        if status >= 500:
            advice = "The LMS had an error."
        elif "scope" in said.lower():
            advice = (
                "The LMS did not grant the tool the roster scope: enable the Names and Role "
                "Provisioning Services for the tool (Canvas: the developer key's scope 'Can "
                "retrieve user data associated with the context the tool is installed in'; "
                "Moodle: 'IMS LTI Names and Role Provisioning' set to use this service)."
            )
        else:
            advice = (
                f"The LMS refused the tool's credentials: check that the LMS has client id "
                f"{client_id or '(see quizapp lti list)'} and the tool's public key URL."
            )
        return f"The LMS's token endpoint answered HTTP {status}: {said}. {advice} {again}"
    if isinstance(exc, requests.RequestException):
        url = getattr(exc.request, "url", None) if exc.request is not None else None
        return f"The LMS ({host_of(url)}) could not be reached ({cause_in_words(exc)}). {again}"
    if isinstance(exc, LtiServiceException):
        status, said = exc.response.status_code, lms_message(exc.response)
        advice = {
            401: "The LMS refused the access token; a new one is requested at the next sync.",
            403: "The LMS does not let the tool read this course's members: enable the Names "
            "and Role Provisioning Services for the tool in this course.",
            404: "The LMS has no member list at that address any more: launch the tool from "
            "the course once more (the launch tells the tool the current address).",
        }.get(status, "The LMS had an error." if status >= 500 else "")
        return f"The LMS's member list answered HTTP {status}: {said}. {advice} {again}".replace(
            ".  ", ". "
        )
    if isinstance(exc, LtiException):
        return f"{exc}. {again}"
    return f"{type(exc).__name__}: {exc}. {again}"


NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"


@dataclass
class RosterSync:
    """What a sync of one course did: accounts ``created``, ``updated`` (name, email, role or
    membership changed), ``unchanged``, memberships made ``inactive``; or ``error`` (the LMS's
    answer in words) when the member list could not be read (nothing changed then)."""

    course: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    inactive: list[str] = field(default_factory=list)
    error: str | None = None

    def summary(self) -> str:
        """One line: ``<course>: N created, N updated, N unchanged, N inactive`` or the error."""
        if self.error:
            return f"{self.course}: not synced: {self.error}"
        return (
            f"{self.course}: {len(self.created)} created, {len(self.updated)} updated, "
            f"{self.unchanged} unchanged, {len(self.inactive)} inactive"
        )


def syncable_contexts(session: Session) -> list[LtiContext]:
    """The courses whose launches offered a memberships URL, by title."""
    return list(
        session.scalars(
            select(LtiContext)
            .where(LtiContext.memberships_url.is_not(None))
            .order_by(LtiContext.title, LtiContext.id)
        )
    )


def find_context(session: Session, context: str) -> LtiContext:
    """The course by its LMS context id, or its title; raises ``services.NotFound`` listing the
    known ones."""
    rows = session.scalars(
        select(LtiContext).where((LtiContext.context_id == context) | (LtiContext.title == context))
    ).all()
    if len(rows) == 1:
        return rows[0]
    known = ", ".join(f"{c.context_id} ({c.title})" for c in syncable_contexts(session))
    why = "several courses have that title; give the context id" if rows else "no such course"
    raise services.NotFound(f"{context!r}: {why}. Known courses: {known or 'none yet'}.")


def sync_roster(
    session: Session, context_row: int, key: Callable[[], ToolKey], http: requests.Session
) -> RosterSync:
    """Read the member list of course row ``context_row`` from the LMS and create/update the
    accounts and memberships; commits.  An LMS that refuses or cannot be reached gives a
    :class:`RosterSync` with ``error`` set (nothing written); never raises for the LMS's answer.
    Raises ``services.NotFound`` for an unknown course row and ``services.Conflict`` when the
    course's launches offered no memberships URL."""
    ctx = session.get(LtiContext, context_row)
    if ctx is None:
        raise services.NotFound("There is no such LMS course.")
    result = RosterSync(course=ctx.title or ctx.context_id)
    if not ctx.memberships_url:
        raise services.Conflict(
            f"The LMS offered no member list for course '{result.course}': enable the Names and "
            "Role Provisioning Services for the tool in the LMS and launch it once more."
        )
    reg = session.get(LtiRegistration, ctx.registration_id)
    assert reg is not None  # foreign key
    connector = Connector(DatabaseToolConf(session, key).to_registration(reg), http)
    url, reg_id, client_id = ctx.memberships_url, reg.id, reg.client_id
    session.rollback()
    try:
        members = NamesRolesProvisioningService(
            connector, {"context_memberships_url": url}
        ).get_members()
    except Exception as exc:  # the LMS's answer, explained
        result.error = explain_roster_failure(exc, client_id=client_id)
        return result
    for attempt in range(2):
        services.begin_write(session)
        try:
            _apply(session, result, context_row, reg_id, members)
            session.commit()
            return result
        except IntegrityError:
            session.rollback()  # a launch created one of these accounts meanwhile: once more
            result.created.clear()
            result.updated.clear()
            result.inactive.clear()
            result.unchanged = 0
            if attempt:
                raise
        except BaseException:
            session.rollback()
            raise
    return result  # pragma: no cover  (the loop returns or raises)


def _apply(
    session: Session, result: RosterSync, context_row: int, reg_id: int, members: list
) -> None:
    seen: set[int] = set()
    for member in members:
        if not isinstance(member, dict) or not isinstance(member.get("user_id"), str):
            continue
        status = member.get("status", "Active")
        roles = member.get("roles") if isinstance(member.get("roles"), list) else []
        got = provision(
            session,
            registration_id=reg_id,
            sub=member["user_id"][:255],
            name=name_from_claims(member),
            email=member.get("email") if isinstance(member.get("email"), str) else None,
            roles=roles,
        )
        seen.add(got.user.id)
        active = status == "Active"
        moved = set_membership(session, context_row, got.user.id, roles, active)
        if got.created:
            result.created.append(got.user.username)
        elif not active and moved:
            result.inactive.append(got.user.username)
        elif got.changed or moved:
            result.updated.append(got.user.username)
        else:
            result.unchanged += 1
    gone = session.execute(
        select(LtiMember.id, LtiMember.user_id).where(
            LtiMember.context_id == context_row, LtiMember.active.is_(True)
        )
    ).all()
    drop = [row_id for row_id, user_id in gone if user_id not in seen]
    if drop:
        names = session.scalars(
            select(User.username)
            .join(LtiMember, LtiMember.user_id == User.id)
            .where(LtiMember.id.in_(drop))
        ).all()
        session.execute(
            update(LtiMember)
            .where(LtiMember.id.in_(drop))
            .values(active=False)
            .execution_options(synchronize_session=False)
        )
        result.inactive += list(names)


__all__ = ["NRPS_SCOPE", "RosterSync", "find_context", "sync_roster", "syncable_contexts"]
