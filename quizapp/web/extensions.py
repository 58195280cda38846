"""Flask extensions, created unbound and attached in ``create_app``."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from flask import Response, current_app, request
from flask_limiter import Limiter
from flask_login import LoginManager, current_user
from flask_migrate import Migrate
from flask_wtf.csrf import CSRFProtect
from limits.storage import MemoryStorage

from quizapp.models import db

login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = "Please sign in to see this page."
login_manager.login_message_category = "info"
login_manager.session_protection = "basic"

csrf = CSRFProtect()


def rate_key() -> str:
    """Who a rate limit counts: the bearer token, else the signed-in user, else the client address."""
    auth = request.headers.get("Authorization")
    if auth:
        return "token:" + hashlib.sha256(auth.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    if current_user and current_user.is_authenticated:
        return f"user:{current_user.get_id()}"
    return "ip:" + (request.remote_addr or "unknown")


def _posted_username() -> str:
    """The ``username`` of a sign-in (form field, or JSON key for ``/api/v1/token``)."""
    name = request.form.get("username") if request.mimetype != "application/json" else None
    if name is None and request.is_json:
        body = request.get_json(silent=True)
        name = body.get("username") if isinstance(body, dict) else None
    return name.strip()[:256] if isinstance(name, str) else ""


def account_digest(username: str) -> str:
    """A short digest naming an account in rate-limit keys and device cookies: SHA-256 of the
    username compared as usernames are (``quizapp.models.username_key``), 24 hex digits."""
    from quizapp.models import username_key

    digest = hashlib.sha256(username_key(username).encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:24]


#: The cookie a browser gets when it signs in: which account it signed in to (a digest) and a
#: random id, signed with the app's secret key.  Sign-in limits treat a browser holding it for
#: the account it tries as a known device (OWASP's "device cookies" against account lockout).
DEVICE_COOKIE = "quizapp_device"
DEVICE_COOKIE_DAYS = 365


def _device_serializer() -> Any:
    from itsdangerous import URLSafeTimedSerializer

    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt="quizapp-device")


def device_cookie_value(username: str, previous: str | None = None) -> str:
    """The device cookie's value for a sign-in to ``username``: the browser's random id is kept
    when it already held a cookie for that account."""
    import secrets

    known = _device_for(previous, account_digest(username)) if previous else None
    return str(
        _device_serializer().dumps(
            {"a": account_digest(username), "d": known or secrets.token_hex(12)}
        )
    )


def _device_for(value: str | None, digest: str) -> str | None:
    """The device id in the signed cookie ``value`` if it is for account ``digest``, else None."""
    from itsdangerous import BadData

    if not value or len(value) > 500:
        return None
    try:
        data = _device_serializer().loads(value, max_age=DEVICE_COOKIE_DAYS * 86400)
    except BadData:
        return None
    if not isinstance(data, dict) or data.get("a") != digest or not isinstance(data.get("d"), str):
        return None
    return str(data["d"])


def known_device() -> str | None:
    """The device id of this sign-in's browser when its device cookie is for the account it
    tries (it signed in to that account before), else None."""
    return _device_for(request.cookies.get(DEVICE_COOKIE), account_digest(_posted_username()))


def account_key() -> str:
    """Who the failed-sign-in limit counts: the account tried plus the client address, or plus
    the browser (its device id) when it holds a device cookie for that account.

    The account is the posted ``username``.  Counting per account *and* address slows down
    guessing one account's password, while someone at another address cannot lock a student
    out; counting a known browser by itself means that not even a classmate behind the same
    address (one classroom NAT) can lock out the student's own browser.
    """
    digest = account_digest(_posted_username())
    device = known_device()
    if device is not None:
        return f"login-device:{device}:{digest}"
    return f"login:{request.remote_addr or 'unknown'}:{digest}"


def account_only_key() -> str:
    """The per-account sign-in limit's key: the account tried, from any address."""
    return "login-account:" + account_digest(_posted_username())


def address_key() -> str:
    """The per-address sign-in limit's key: the client address."""
    return "login-address:" + (request.remote_addr or "unknown")


def is_known_device() -> bool:
    """``exempt_when`` of the per-account and per-address sign-in limits (see
    :func:`account_key`): a known browser is limited by its own failures only."""
    return known_device() is not None


def failed_login(response: Response) -> bool:
    """``deduct_when`` of the sign-in limits: a sign-in whose password was checked and wrong
    (the page re-rendered, 200; the API's 400/401).  Success (a redirect, 201) and refusals
    before any check (429) do not count, so hammering a locked-out account does not extend its
    window: every lockout ends a window after the last wrong password."""
    return response.status_code in (200, 400, 401)


def limit(setting: str):
    """A callable giving the limit string stored in config ``setting`` (read per request)."""
    return lambda: current_app.config[setting]


class ThreadSafeMemoryStorage(MemoryStorage):
    """The ``limits`` library's in-memory storage (``memory://``, the default) with its expiry
    timer replaced under a lock.

    ``MemoryStorage`` (limits 5.8.0, the latest release) replaces and starts that timer without
    one: two threads of a worker counting their first hits at once could start the same timer
    twice, and the second request failed with "RuntimeError: threads can only be started once"
    (a 500 under load, seen in the crash test; fixed upstream in alisaifee/limits pull request
    352, not released yet).  Declaring the ``memory`` scheme again makes ``memory://`` URIs use
    this class (limits registers storages by scheme when the class is created)."""

    STORAGE_SCHEME = ["memory"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._timer_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def _MemoryStorage__schedule_expiry(self) -> None:  # the parent's private __schedule_expiry
        with self._timer_lock:
            if not self.timer.is_alive():
                self.timer = threading.Timer(0.01, self._MemoryStorage__expire_events)  # type: ignore[attr-defined]  # the parent's private __expire_events, by its mangled name
                self.timer.start()


#: Flask-Limiter; storage from ``RATELIMIT_STORAGE_URI`` (default in-process memory: each gunicorn
#: worker counts separately; use ``redis://`` or ``memcached://`` to share counts).
limiter = Limiter(key_func=rate_key, default_limits=[], headers_enabled=True)
migrate = Migrate()

__all__ = [
    "db",
    "login_manager",
    "csrf",
    "migrate",
    "limiter",
    "limit",
    "rate_key",
    "account_key",
    "account_only_key",
    "address_key",
    "account_digest",
    "DEVICE_COOKIE",
    "device_cookie_value",
    "failed_login",
    "is_known_device",
    "known_device",
]
