"""HTTP to the platform: timeouts on every request, OAuth2 access tokens cached per process.

pylti1p3's ``ServiceConnector`` makes its requests without a timeout (a platform that accepts
the connection and never answers would hold the grade worker forever) and keeps access tokens
only for the life of one connector object.  :class:`TimeoutSession` puts a timeout on every
request; :class:`Connector` keeps each token until a minute before its ``expires_in``, for all
connectors of the process, and forgets it when the platform answers 401 (revoked or expired).
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

import requests
from pylti1p3.exception import LtiServiceException
from pylti1p3.registration import Registration
from pylti1p3.service_connector import ServiceConnector

#: Seconds to wait for the platform to accept a connection and to send each part of an answer.
DEFAULT_TIMEOUT = (5.0, 20.0)
#: A token is used until this many seconds before it expires.
TOKEN_MARGIN = 60
USER_AGENT = "quizapp-lti"


class TimeoutSession(requests.Session):
    """A ``requests.Session`` whose every request has ``timeout`` unless the call gives one."""

    def __init__(self, timeout: float | tuple[float, float] = DEFAULT_TIMEOUT) -> None:
        super().__init__()
        self.timeout = timeout
        self.headers["User-Agent"] = USER_AGENT

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", self.timeout)
        return super().request(method, url, *args, **kwargs)


class TokenError(Exception):
    """The token endpoint refused (``response`` set) or could not be reached (``cause`` set)."""

    def __init__(
        self,
        url: str,
        response: requests.Response | None = None,
        cause: Exception | None = None,
        scopes: Sequence[str] = (),
    ) -> None:
        self.url = url
        self.response = response
        self.cause = cause
        self.scopes = list(scopes)
        what = f"HTTP {response.status_code}" if response is not None else repr(cause)
        super().__init__(f"token request to {url} failed: {what}")


_TOKENS: dict[str, tuple[str, float]] = {}
_TOKENS_LOCK = threading.Lock()


def forget_tokens() -> None:
    """Drop every cached access token (tests; after a key rotation)."""
    with _TOKENS_LOCK:
        _TOKENS.clear()


class Connector(ServiceConnector):
    """pylti1p3's service connector with process-wide token caching and clear token errors.

    The client assertion is the IMS Security Framework's (section 4.1): a JWT signed with the
    tool's private key, ``iss`` = ``sub`` = client id, ``aud`` = the token URL (or the
    registration's audience), lifetime 60 s, a fresh ``jti``, the key id in its header.
    """

    def __init__(self, registration: Registration, session: requests.Session) -> None:
        super().__init__(registration, session)

    def _cache_key(self, scopes: Sequence[str]) -> str:
        reg = self._registration
        raw = "\0".join(
            [
                str(reg.get_issuer()),
                str(reg.get_client_id()),
                str(reg.get_auth_token_url()),
                str(reg.get_kid()),
                *sorted(scopes),
            ]
        )
        return hashlib.sha256(raw.encode()).hexdigest()

    def get_access_token(self, scopes: Sequence[str]) -> str:
        """An access token for ``scopes`` (cached); raises :class:`TokenError`."""
        key = self._cache_key(scopes)
        now = time.time()
        with _TOKENS_LOCK:
            cached = _TOKENS.get(key)
        if cached is not None and cached[1] > now:
            return cached[0]
        reg = self._registration
        client_id = str(reg.get_client_id())
        url = str(reg.get_auth_token_url())
        claims: dict[str, str | int] = {
            "iss": client_id,
            "sub": client_id,
            "aud": str(reg.get_auth_audience() or url),
            "iat": int(now) - 5,
            "exp": int(now) + 60,
            "jti": "quizapp-" + str(uuid.uuid4()),
        }
        kid = reg.get_kid()
        assertion = self.encode_jwt(
            claims, str(reg.get_tool_private_key()), {"kid": kid} if kid else {}
        )
        body = {
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
            "scope": " ".join(scopes),
        }
        try:
            resp = self._requests_session.post(url, data=body)
        except requests.RequestException as exc:
            raise TokenError(url, cause=exc, scopes=scopes) from exc
        if not resp.ok:
            raise TokenError(url, response=resp, scopes=scopes)
        try:
            answer = resp.json()
            token = str(answer["access_token"])
            lifetime = float(answer.get("expires_in") or 3600)
        except (ValueError, KeyError, TypeError) as exc:
            raise TokenError(url, response=resp, cause=exc, scopes=scopes) from exc
        with _TOKENS_LOCK:
            _TOKENS[key] = (token, now + max(0.0, lifetime - TOKEN_MARGIN))
        return token

    def make_service_request(
        self, scopes: Sequence[str], url: str, *args: Any, **kwargs: Any
    ) -> Any:
        """pylti1p3's request; a 401 drops the cached token so that the next try gets a new one."""
        try:
            return super().make_service_request(scopes, url, *args, **kwargs)
        except LtiServiceException as exc:
            if exc.response.status_code == 401:
                with _TOKENS_LOCK:
                    _TOKENS.pop(self._cache_key(scopes), None)
            raise


__all__ = [
    "DEFAULT_TIMEOUT",
    "Connector",
    "TimeoutSession",
    "TokenError",
    "forget_tokens",
]
