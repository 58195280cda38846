"""pylti1p3 plumbing, framework-free: the request as plain values (:class:`PlainRequest`), the
cookies collected for the web layer to set (:class:`CookieJar`), and the database storage of
nonces, login states and launches (``lti_launch_data``: :class:`DatabaseStorage`,
:class:`Sessions`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pylti1p3.cookie import CookieService
from pylti1p3.launch_data_storage.base import LaunchDataStorage
from pylti1p3.request import Request
from pylti1p3.session import SessionService
from sqlalchemy import delete
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.lti.claims import LAUNCH_LIFETIME, NONCE_LIFETIME
from quizapp.lti.models import (
    LtiLaunchData,
)
from quizapp.models import utcnow


class PlainRequest(Request):
    """The request as plain values: ``params`` (query or form), ``cookies``, ``secure``."""

    def __init__(self, params: Mapping[str, str], cookies: Mapping[str, str], secure: bool) -> None:
        self._params = dict(params)
        self._cookies = dict(cookies)
        self._secure = secure

    @property
    def session(self) -> dict[str, Any]:
        return {}

    def is_secure(self) -> bool:
        return self._secure

    def get_param(self, key: str) -> Any:
        return self._params.get(key)

    def get_cookie(self, key: str) -> str | None:
        return self._cookies.get(key)


@dataclass(frozen=True)
class SetCookie:
    """A cookie the web layer must set: ``SameSite=None; Secure`` over HTTPS (the launch is a
    cross-site POST), no SameSite over plain HTTP (browsers refuse ``None`` without
    ``Secure``)."""

    name: str
    value: str
    max_age: int | None
    secure: bool

    @property
    def samesite(self) -> str | None:
        return "None" if self.secure else None


class CookieJar(CookieService):
    """pylti1p3's cookies (prefix ``lti1p3-``) read from the request, collected to be set."""

    def __init__(self, request: PlainRequest) -> None:
        self._request = request
        self.to_set: list[SetCookie] = []

    def get_cookie(self, name: str) -> str | None:
        return self._request.get_cookie(f"{self._cookie_prefix}-{name}")

    def set_cookie(self, name: str, value: str | int, exp: int | None = 3600) -> None:
        self.to_set.append(
            SetCookie(f"{self._cookie_prefix}-{name}", str(value), exp, self._request.is_secure())
        )


class DatabaseStorage(LaunchDataStorage):
    """pylti1p3's launch data storage on ``lti_launch_data``: shared by every host, values
    expire, and :meth:`consume` deletes a value as it reads it (single-use nonces).  Keys are
    not tied to a browser cookie (``get_session_cookie_name`` is None): the browser binding is
    the state cookie, and a cookie-less key works in a frame whose cookies are blocked."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self._session = session

    def get_session_cookie_name(self) -> None:
        return None

    def can_set_keys_expiration(self) -> bool:
        return True

    def get_value(self, key: str) -> Any:
        row = self._session.get(LtiLaunchData, self._prepare_key(key))
        if row is None or row.expires_at <= utcnow():
            return None
        return row.value

    def set_value(self, key: str, value: Any, exp: int | None = None) -> None:
        now = utcnow()
        services.begin_write(self._session)
        try:
            self._session.execute(delete(LtiLaunchData).where(LtiLaunchData.expires_at <= now))
            self._session.merge(
                LtiLaunchData(
                    key=self._prepare_key(key),
                    value=value,
                    expires_at=now + timedelta(seconds=exp or LAUNCH_LIFETIME),
                )
            )
            self._session.commit()
        except BaseException:
            self._session.rollback()
            raise

    def check_value(self, key: str) -> bool:
        return self.get_value(key) is not None

    def consume(self, key: str) -> bool:
        """Delete the unexpired value of ``key``; True when there was one (it is gone now for
        every host: the DELETE is atomic)."""
        services.begin_write(self._session)
        try:
            gone = self._session.execute(  # type: ignore[attr-defined]  # DML gives a CursorResult; Session.execute is typed as Result
                delete(LtiLaunchData).where(
                    LtiLaunchData.key == self._prepare_key(key),
                    LtiLaunchData.expires_at > utcnow(),
                )
            ).rowcount
            self._session.commit()
        except BaseException:
            self._session.rollback()
            raise
        return gone == 1


class Sessions(SessionService):
    """pylti1p3's session service on :class:`DatabaseStorage`: nonces and state parameters
    live :data:`NONCE_LIFETIME`, launch data :data:`LAUNCH_LIFETIME`, and checking a nonce
    uses it up."""

    def __init__(self, request: PlainRequest, storage: DatabaseStorage) -> None:
        super().__init__(request)
        self.data_storage = storage
        self._launch_data_lifetime = LAUNCH_LIFETIME

    def save_nonce(self, nonce: str) -> None:
        self.data_storage.set_value(self._get_key("nonce", nonce), True, exp=NONCE_LIFETIME)

    def check_nonce(self, nonce: str) -> bool:
        storage = self.data_storage
        assert isinstance(storage, DatabaseStorage)
        return storage.consume(self._get_key("nonce", nonce))

    def save_state_params(self, state: str, params: dict[str, object]) -> None:
        self.data_storage.set_value(self._get_key(state), params, exp=NONCE_LIFETIME)


__all__ = [
    "DatabaseStorage",
    "PlainRequest",
    "SetCookie",
]
