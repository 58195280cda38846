"""OIDC login (LTI 1.3 core, IMS Security Framework 5.1), on pylti1p3.

**Login** (:func:`start_login`, ``/lti/login``): the platform names itself (``iss``), the user
(``login_hint``) and the tool's registration (``client_id``); the tool answers with a redirect to
the platform's authorization URL carrying a fresh ``state`` (also set as a short-lived cookie,
binding the launch to this browser) and ``nonce`` (stored in ``lti_launch_data``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pylti1p3.exception import OIDCException
from pylti1p3.oidc_login import OIDCLogin
from pylti1p3.redirect import Redirect
from sqlalchemy.orm import Session

from quizapp.lti.adapters import CookieJar, DatabaseStorage, PlainRequest, Sessions, SetCookie
from quizapp.lti.claims import LaunchRefused
from quizapp.lti.keys import ToolKey
from quizapp.lti.models import (
    LtiRegistration,
)
from quizapp.lti.registry import DatabaseToolConf, find_registration, list_registrations


class _UrlRedirect(Redirect):
    def __init__(self, url: str) -> None:
        self._url = url

    def do_redirect(self) -> str:
        return self._url

    def do_js_redirect(self) -> str:
        return self._url

    def set_redirect_url(self, location: str) -> None:
        self._url = location

    def get_redirect_url(self) -> str:
        return self._url


class _Login(OIDCLogin):
    def get_redirect(self, url: str) -> _UrlRedirect:
        return _UrlRedirect(url)


#: The OIDC login parameters passed on to a new window (LTI 1.3 section 5.1.1).
LOGIN_PARAMS = (
    "iss",
    "login_hint",
    "target_link_uri",
    "lti_message_hint",
    "lti_deployment_id",
    "client_id",
)


@dataclass
class LoginStart:
    """The answer to a login request: redirect to ``url``, setting ``cookies``."""

    url: str
    cookies: list[SetCookie]


def _registered_list(session: Session) -> str:
    regs = list_registrations(session)
    return ", ".join(f"{r.issuer} (client {r.client_id})" for r in regs) or "none"


def check_login(session: Session, params: Mapping[str, str]) -> LtiRegistration:
    """The registration a login request names; raises :class:`LaunchRefused` naming what is
    missing or unknown (issuer, login hint, client id)."""
    iss = params.get("iss")
    if not iss:
        raise LaunchRefused(
            "The LMS did not send its issuer ('iss') to /lti/login: check that the LMS's "
            "'OpenID Connect login URL' / 'Initiate login URL' for this tool is its /lti/login."
        )
    if not params.get("login_hint"):
        raise LaunchRefused(
            f"The LMS ({iss}) did not send 'login_hint' to /lti/login; start again from the LMS."
        )
    client_id = params.get("client_id") or None
    reg = find_registration(session, iss, client_id)
    if reg is not None:
        return reg
    known = [r.client_id for r in list_registrations(session) if r.issuer == iss]
    if client_id is None and len(known) > 1:
        raise LaunchRefused(
            f"The LMS {iss} did not send 'client_id' and the tool has several registrations "
            f"for it (clients {', '.join(known)}); the LMS must send client_id when it logs in.",
            status=403,
        )
    if known:
        raise LaunchRefused(
            f"The LMS {iss} sent client id {client_id}, which is not registered for it "
            f"(registered: {', '.join(known)}). Register it with `quizapp lti register --issuer "
            f"{iss} --client-id {client_id} ...` (see docs/lms.md).",
            status=403,
        )
    raise LaunchRefused(
        f"The LMS {iss} is not registered with this tool. An administrator registers it with "
        f"`quizapp lti register --issuer {iss} --client-id ID --auth-url URL --token-url URL "
        f"--jwks-url URL` (see docs/lms.md). Registered now: {_registered_list(session)}.",
        status=403,
    )


def start_login(
    session: Session,
    request: PlainRequest,
    launch_url: str,
    key: Callable[[], ToolKey],
) -> LoginStart:
    """Answer an OIDC login request: check it (:func:`check_login`), store a nonce and the
    login parameters (for a new window, should cookies be blocked), and return the redirect to
    the platform's authorization URL with the state cookie.  ``launch_url`` is this tool's
    ``/lti/launch`` as the platform knows it (the ``redirect_uri``)."""
    check_login(session, {k: request.get_param(k) for k in LOGIN_PARAMS if request.get_param(k)})
    storage = DatabaseStorage(session)
    jar = CookieJar(request)
    login = _Login(
        request,
        DatabaseToolConf(session, key),
        Sessions(request, storage),
        jar,
        launch_data_storage=None,
    )
    login.pass_params_to_launch(
        {k: request.get_param(k) for k in LOGIN_PARAMS if request.get_param(k)}
    )
    try:
        url = login.redirect(launch_url)
    except OIDCException as exc:  # after check_login, only pylti1p3's own wording is left
        raise LaunchRefused(f"The login request was refused: {exc}.") from None
    return LoginStart(url=url, cookies=jar.to_set)


def login_params_for_state(session: Session, state: str) -> dict[str, str] | None:
    """The login parameters stored with ``state`` at login (to restart the login in a new
    window), or None when unknown or expired."""
    value = DatabaseStorage(session).get_value(f"lti1p3-{state}")
    session.rollback()
    return dict(value) if isinstance(value, dict) else None


__all__ = [
    "LOGIN_PARAMS",
    "LoginStart",
    "check_login",
    "login_params_for_state",
    "start_login",
]
