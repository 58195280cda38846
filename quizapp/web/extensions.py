"""Flask extensions, created unbound and attached in ``create_app``."""

from __future__ import annotations

import hashlib

from flask import Response, current_app, request
from flask_limiter import Limiter
from flask_login import LoginManager, current_user
from flask_migrate import Migrate
from flask_wtf.csrf import CSRFProtect

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


def account_key() -> str:
    """Who the failed-sign-in limit counts: the client address plus the account tried.

    The account is the posted ``username`` (form field, or JSON key for ``/api/v1/token``),
    compared as usernames are (``quizapp.models.username_key``).  Counting per account *and*
    address means guessing one account's password is slowed down, while someone else cannot lock
    a student out from another address.
    """
    from quizapp.models import username_key

    name = request.form.get("username") if request.mimetype != "application/json" else None
    if name is None and request.is_json:
        body = request.get_json(silent=True)
        name = body.get("username") if isinstance(body, dict) else None
    name = name.strip()[:256] if isinstance(name, str) else ""
    digest = hashlib.sha256(username_key(name).encode("utf-8", "surrogatepass")).hexdigest()
    return f"login:{request.remote_addr or 'unknown'}:{digest[:24]}"


def failed_login(response: Response) -> bool:
    """``deduct_when`` of the failed-sign-in limit: a sign-in that did not succeed (succeeding
    is a redirect for the page, 201 for the API token)."""
    return response.status_code not in (201, 302, 303)


def limit(setting: str):  # type: ignore[no-untyped-def]
    """A callable giving the limit string stored in config ``setting`` (read per request)."""
    return lambda: current_app.config[setting]


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
    "failed_login",
]
