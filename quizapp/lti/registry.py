"""Registrations of the tool in platforms (``quizapp lti register / list / remove``), and the
pylti1p3 tool configuration that reads them from the database.

A registration is what the LMS administrator gets when adding the tool (Canvas: a developer
key; Moodle: an external tool type): the platform's ``issuer``, the ``client_id`` it gave the
tool, its OIDC authorization URL, OAuth2 token URL and JWKS URL, and the deployment ids (one per
installation of the tool in an account or course).  Registering again with the same issuer and
client id updates the URLs and adds deployment ids, so the administrator can register before
the tool is installed in a course and add the deployment id afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pylti1p3.deployment import Deployment
from pylti1p3.registration import Registration
from pylti1p3.tool_config import ToolConfAbstract
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, selectinload

from quizapp import services
from quizapp.lti.keys import ToolKey
from quizapp.lti.models import (
    LTI_ID_MAX,
    LtiContext,
    LtiDeployment,
    LtiGrade,
    LtiLineItem,
    LtiLink,
    LtiMember,
    LtiRegistration,
    LtiUser,
)
from quizapp.models import utcnow


def check_url(value: Any, what: str) -> str:
    """``value`` stripped if it is an absolute ``https://`` or ``http://`` URL with a host;
    raises ``services.BadRequest`` naming ``what`` otherwise."""
    text = value.strip() if isinstance(value, str) else ""
    parts = urlsplit(text)
    if parts.scheme not in ("https", "http") or not parts.netloc or any(c.isspace() for c in text):
        raise services.BadRequest(
            f"{what} must be an absolute https:// (or http://) URL, got {value!r}"
        )
    return text


def check_id(value: Any, what: str) -> str:
    """``value`` stripped if it is 1 to 255 printable characters; raises
    ``services.BadRequest`` naming ``what`` otherwise."""
    text = value.strip() if isinstance(value, str) else ""
    if not text or len(text) > LTI_ID_MAX or not text.isprintable():
        raise services.BadRequest(
            f"{what} must be 1 to {LTI_ID_MAX} printable characters, got {value!r}"
        )
    return text


@dataclass
class RegisterResult:
    """What :func:`register` did: the registration, whether it is new, the deployment ids
    added now and the URLs that changed (name -> (old, new))."""

    registration: LtiRegistration
    created: bool
    added_deployments: list[str] = field(default_factory=list)
    changed: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)


def register(
    session: Session,
    *,
    issuer: str,
    client_id: str,
    auth_url: str,
    token_url: str,
    jwks_url: str,
    deployment_ids: Sequence[str] = (),
    audience: str | None = None,
) -> RegisterResult:
    """Create or update the registration (``issuer``, ``client_id``) and add ``deployment_ids``;
    commits.  The issuer must be a URL (LTI 1.3 section 5.1.2); URLs must be absolute http(s).
    Raises ``services.BadRequest`` naming the bad option (``--issuer``, ``--auth-url``, ...).
    """
    issuer = check_url(issuer, "--issuer")
    client_id = check_id(client_id, "--client-id")
    urls = {
        "auth_login_url": check_url(auth_url, "--auth-url"),
        "auth_token_url": check_url(token_url, "--token-url"),
        "key_set_url": check_url(jwks_url, "--jwks-url"),
        "auth_audience": check_id(audience, "--audience") if audience else None,
    }
    wanted = [check_id(d, "--deployment-id") for d in deployment_ids]
    services.begin_write(session)
    try:
        reg = session.scalar(
            select(LtiRegistration)
            .where(LtiRegistration.issuer == issuer, LtiRegistration.client_id == client_id)
            .options(selectinload(LtiRegistration.deployments))
        )
        created = reg is None
        if reg is None:
            reg = LtiRegistration(issuer=issuer, client_id=client_id, **urls)
            session.add(reg)
            changed: dict[str, tuple[str | None, str | None]] = {}
        else:
            changed = {k: (getattr(reg, k), v) for k, v in urls.items() if getattr(reg, k) != v}
            for k, (_, v) in changed.items():
                setattr(reg, k, v)
            if "key_set_url" in changed:
                reg.platform_jwks = None  # fetched again from the new URL
                reg.jwks_fetched_at = None
            reg.updated_at = utcnow()
        have = {d.deployment_id for d in reg.deployments}
        added = []
        for dep in wanted:
            if dep not in have:
                reg.deployments.append(LtiDeployment(deployment_id=dep))
                have.add(dep)
                added.append(dep)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return RegisterResult(reg, created, added, changed)


def list_registrations(session: Session) -> list[LtiRegistration]:
    """Every registration with its deployments, by issuer then client id."""
    return list(
        session.scalars(
            select(LtiRegistration)
            .options(selectinload(LtiRegistration.deployments))
            .order_by(LtiRegistration.issuer, LtiRegistration.client_id)
        )
    )


def find_registration(
    session: Session, issuer: str, client_id: str | None = None
) -> LtiRegistration | None:
    """The registration of ``issuer`` with ``client_id``; with ``client_id`` None, the only
    registration of the issuer (None when it has none or several)."""
    stmt = select(LtiRegistration).where(LtiRegistration.issuer == issuer)
    if client_id is not None:
        return session.scalar(stmt.where(LtiRegistration.client_id == client_id))
    rows = session.scalars(stmt.limit(2)).all()
    return rows[0] if len(rows) == 1 else None


@dataclass
class RemoveResult:
    """What :func:`remove_registration` deleted (counts of rows per kind)."""

    issuer: str
    client_id: str
    counts: dict[str, int]


def remove_registration(
    session: Session, issuer: str, client_id: str | None = None
) -> RemoveResult:
    """Delete a registration and everything that hangs on it (deployments, the platform-user
    links, courses seen, links, line items and queued or sent grades); quizapp's users, their
    submissions and progress stay.  ``client_id`` may be omitted when the issuer has one
    registration.  Commits.  Raises ``services.NotFound`` naming what is registered instead."""
    reg = find_registration(session, issuer, client_id)
    if reg is None:
        known = ", ".join(f"{r.issuer} (client {r.client_id})" for r in list_registrations(session))
        which = f"{issuer} with client id {client_id}" if client_id else issuer
        several = (
            " (it has several client ids: give --client-id)"
            if client_id is None
            and session.scalar(
                select(func.count())
                .select_from(LtiRegistration)
                .where(LtiRegistration.issuer == issuer)
            )
            else ""
        )
        raise services.NotFound(f"No registration {which}{several}. Registered: {known or 'none'}.")
    reg_id, result = reg.id, RemoveResult(reg.issuer, reg.client_id, {})
    services.begin_write(session)
    try:
        contexts = select(LtiContext.id).where(LtiContext.registration_id == reg_id)
        lineitems = select(LtiLineItem.id).where(LtiLineItem.context_id.in_(contexts))
        steps: list[tuple[str, Any]] = [
            ("grades", delete(LtiGrade).where(LtiGrade.lineitem_id.in_(lineitems))),
            ("line items", delete(LtiLineItem).where(LtiLineItem.context_id.in_(contexts))),
            ("links", delete(LtiLink).where(LtiLink.context_id.in_(contexts))),
            ("memberships", delete(LtiMember).where(LtiMember.context_id.in_(contexts))),
            ("courses", delete(LtiContext).where(LtiContext.registration_id == reg_id)),
            ("platform users", delete(LtiUser).where(LtiUser.registration_id == reg_id)),
            (
                "deployments",
                delete(LtiDeployment).where(LtiDeployment.registration_id == reg_id),
            ),
            ("registration", delete(LtiRegistration).where(LtiRegistration.id == reg_id)),
        ]
        for name, stmt in steps:
            result.counts[name] = session.execute(stmt).rowcount or 0  # type: ignore[attr-defined]  # DML gives a CursorResult; Session.execute is typed as Result
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return result


class DatabaseToolConf(ToolConfAbstract):
    """pylti1p3's tool configuration over ``lti_registrations`` / ``lti_deployments``.

    ``key`` gives the tool's key pair (called only when a registration object is built, i.e.
    during a launch or a service call).  Registrations of an issuer are told apart by client
    id; an issuer with a single registration is found without one (the OIDC login request may
    omit ``client_id``).
    """

    def __init__(self, session: Session, key: Callable[[], ToolKey]) -> None:
        self._session = session
        self._key = key
        self.issuers_relation_types = {}

    def check_iss_has_one_client(self, iss: str) -> bool:
        count = self._session.scalar(
            select(func.count()).select_from(LtiRegistration).where(LtiRegistration.issuer == iss)
        )
        return count == 1

    def check_iss_has_many_clients(self, iss: str) -> bool:
        return not self.check_iss_has_one_client(iss)

    def registration_row(self, iss: str, client_id: str | None) -> LtiRegistration | None:
        """The stored registration behind :meth:`find_registration_by_params`."""
        return find_registration(self._session, iss, client_id)

    def to_registration(self, row: LtiRegistration) -> Registration:
        """The pylti1p3 ``Registration`` of ``row``, with the tool's key pair."""
        key = self._key()
        reg = (
            Registration()
            .set_issuer(row.issuer)
            .set_client_id(row.client_id)
            .set_auth_login_url(row.auth_login_url)
            .set_auth_token_url(row.auth_token_url)
            .set_key_set_url(row.key_set_url)
            .set_tool_private_key(key.private_pem)
            .set_tool_public_key(key.public_pem)
        )
        if row.auth_audience:
            reg.set_auth_audience(row.auth_audience)
        if row.platform_jwks:
            reg.set_key_set(row.platform_jwks)  # type: ignore[arg-type]  # pylti1p3 types a JWKS as its TypedDict; ours is the stored JSON object
        return reg

    def find_registration_by_issuer(self, iss: str, *args: Any, **kwargs: Any) -> Any:
        row = self.registration_row(iss, None)
        return self.to_registration(row) if row is not None else None

    def find_registration_by_params(
        self, iss: str, client_id: str, *args: Any, **kwargs: Any
    ) -> Any:
        row = self.registration_row(iss, client_id or None)
        return self.to_registration(row) if row is not None else None

    def _deployment(self, iss: str, deployment_id: str, client_id: str | None) -> Any:
        stmt = (
            select(LtiDeployment.id)
            .join(LtiRegistration, LtiRegistration.id == LtiDeployment.registration_id)
            .where(LtiRegistration.issuer == iss, LtiDeployment.deployment_id == deployment_id)
        )
        if client_id is not None:
            stmt = stmt.where(LtiRegistration.client_id == client_id)
        found = self._session.scalar(stmt.limit(1))
        return Deployment().set_deployment_id(deployment_id) if found is not None else None

    def find_deployment(self, iss: str, deployment_id: str) -> Any:
        return self._deployment(iss, deployment_id, None)

    def find_deployment_by_params(
        self, iss: str, deployment_id: str, client_id: str, *args: Any, **kwargs: Any
    ) -> Any:
        return self._deployment(iss, deployment_id, client_id)


def deployment_ids(rows: Iterable[LtiDeployment]) -> list[str]:
    """The deployment ids of ``rows`` as text, in order."""
    return [d.deployment_id for d in rows]


__all__ = [
    "DatabaseToolConf",
    "RegisterResult",
    "RemoveResult",
    "check_id",
    "check_url",
    "deployment_ids",
    "find_registration",
    "list_registrations",
    "register",
    "remove_registration",
]
