"""The Flask application: ``create_app`` wires config, database, login, CSRF and blueprints.

Blueprints: ``auth`` (register, login, logout), ``student`` (quiz list, exercise pages, progress),
``api`` (JSON API under ``/api/v1``), ``instructor`` (the instructor pages, plus its public
blueprint for password-reset links and the student leaderboard), ``lti`` (the LMS connection:
LTI 1.3 launches under ``/lti``, its settings under ``/instructor/lms``).
"""

from __future__ import annotations

import codecs
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask, request, url_for
from flask import Response as FlaskResponse
from limits.errors import ConfigurationError as LimitsConfigurationError
from sqlalchemy import bindparam, select
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from werkzeug.routing import IntegerConverter

from quizapp.config import ConfigError, build_config, default_instance_path
from quizapp.logs import configure_logging
from quizapp.models import User, db
from quizapp.web import database  # registers the SQLite engine events
from quizapp.web.database import MIGRATIONS_DIR
from quizapp.web.extensions import csrf, limiter, login_manager, migrate


def _replace_unencodable(err: UnicodeError) -> tuple[bytes, int]:
    # The UTF-8 encoder only accepts ASCII text or bytes from an error handler: U+FFFD as bytes.
    if not isinstance(err, UnicodeEncodeError):
        raise err
    return "\ufffd".encode() * (err.end - err.start), err.end


codecs.register_error("quizapp-replace", _replace_unencodable)


class SafeTextResponse(FlaskResponse):
    """A response whose text body always encodes: lone surrogates (an answer posted through the
    JSON API as ``"\\ud800"`` is stored as typed) become U+FFFD, and in text bodies (HTML, CSV)
    NUL becomes U+FFFD too.  Without it, a page showing such an answer raised UnicodeEncodeError
    while building the response (a 500 on every later visit of that exercise)."""

    def set_data(self, value: bytes | str) -> None:
        if isinstance(value, str):
            if self.mimetype and self.mimetype.startswith("text/"):
                value = value.replace("\x00", "\ufffd")
            value = value.encode("utf-8", "quizapp-replace")
        super().set_data(value)


class BoundedIntConverter(IntegerConverter):
    """``<int:...>`` that matches only ids the id columns can hold (``Integer``: 32-bit on
    PostgreSQL, < 2**31): a larger one is a 404.  (PostgreSQL refused the query, a 500: "integer
    out of range"; SQLite's integers are 64-bit, so this bound is the stricter one.)"""

    def __init__(self, map: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max", 2**31 - 1)
        super().__init__(map, *args, **kwargs)


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app.

    ``config`` overrides the environment (see ``quizapp.config``); ``INSTANCE_PATH`` picks the
    instance folder (default ``$QUIZAPP_INSTANCE`` or ``./instance``), where the SQLite database and
    the generated secrets live.  The database is not created here: run ``quizapp db upgrade`` (or
    ``quizapp.web.database.upgrade_database(app)``); ``quizapp serve`` does it.
    """
    config = dict(config or {})
    # Import every exercise kind at start-up (before gunicorn forks its workers), so no request
    # pays for it.  The registry itself is thread-safe (quizapp.bank.kinds loads under a lock).
    from quizapp.bank.kinds import all_kinds

    all_kinds()
    instance = Path(config.pop("INSTANCE_PATH", None) or default_instance_path()).resolve()
    try:
        instance.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"QUIZAPP_INSTANCE: the instance folder {str(instance)!r} cannot be created "
            f"({exc.strerror or exc})"
        ) from None
    app = Flask(__name__, instance_path=str(instance), instance_relative_config=True)
    app.response_class = SafeTextResponse
    app.url_map.converters["int"] = BoundedIntConverter
    app.config.update(build_config(instance, config))
    configure_logging(app.config["QUIZAPP_LOG_FORMAT"], app.config["QUIZAPP_LOG_LEVEL"])
    _trust_proxies(app)
    # Verdict keys in contract order.  app.json is a DefaultJSONProvider, typed as its base.
    app.json.sort_keys = False  # type: ignore[attr-defined]  # Flask types app.json as the base JSONProvider

    try:
        db.init_app(app)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        raise ConfigError(
            f"DATABASE_URL is not a database URL SQLAlchemy can open "
            f"(sqlite:///path or postgresql+psycopg://user:password@host/db): {exc}"
        ) from None
    database.init_app(app)  # SQLite's synchronous level on every connection
    migrate.init_app(app, db, directory=str(MIGRATIONS_DIR), render_as_batch=True)
    login_manager.init_app(app)
    csrf.init_app(app)
    try:
        limiter.init_app(app)
    except LimitsConfigurationError as exc:
        raise ConfigError(
            f"QUIZAPP_RATELIMIT_STORAGE_URI (or QUIZAPP_RATELIMIT_STORAGE) is not a storage the "
            f"rate limiter can use (memory://, redis://host:port, memcached://host:port): {exc}"
        ) from None

    from quizapp.web import api, assets, auth, errors, instructor, lti, security, student

    app.register_blueprint(auth.bp)
    app.register_blueprint(student.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(instructor.bp)
    instructor.init_app(app)
    app.register_blueprint(lti.bp)
    lti.init_app(app)
    csrf.exempt(api.bp)  # the API checks CSRF itself for session-authenticated writes
    # Before every other hook (CSRF parses the form): note whether the form body is valid UTF-8.
    app.before_request_funcs.setdefault(None, []).insert(0, student.check_request_encoding)
    errors.register(app)
    security.register(app)
    assets.init_app(app)  # fingerprinted static URLs, long cache lifetimes, compression
    _register_template_helpers(app)
    return app


def _trust_proxies(app: Flask) -> None:
    """Behind N reverse proxies / load balancers (``QUIZAPP_PROXY_FIX=N`` in the config or the
    environment, checked by :mod:`quizapp.config`; default 0 = none), take the client address,
    scheme, host and port from the ``X-Forwarded-*`` headers the last N proxies set (Werkzeug's
    ``ProxyFix``): rate limits then count per real client, and ``url_for(..., _external=True)``
    / CSRF's referrer check see ``https``.  Never set it without a proxy in front: clients could
    forge their address.
    """
    from werkzeug.middleware.proxy_fix import ProxyFix

    n = int(app.config["QUIZAPP_PROXY_FIX"])
    if n:
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]  # Flask's documented way to wrap the WSGI app
            app.wsgi_app, x_for=n, x_proto=n, x_host=n, x_port=n, x_prefix=n
        )


#: The user loader's statement, built once: ``session.get`` builds and keys a SELECT on every
#: request (~0.2 ms of the ~0.7 ms the loader costs, measured on SQLite); a statement already
#: built is looked up in SQLAlchemy's compiled cache directly.
_USER_BY_ID = select(User).where(User.id == bindparam("uid"))


@login_manager.user_loader
def _load_user(alternative_id: str) -> User | None:
    """The active user of a session or remember-me cookie holding ``User.get_id()``
    (``"<id>:<session_version>"``), or None once that version was raised (sign-out, "sign out
    everywhere", a password change or reset).  A plain ``"<id>"`` (a cookie from before session
    versions) is version 0."""
    uid, _, version = alternative_id.partition(":")
    version = version or "0"
    if not all(p.isascii() and p.isdigit() and len(p) <= 12 for p in (uid, version)):
        return None  # (isdigit alone accepts "²", which int() refuses)
    user = db.session.scalar(_USER_BY_ID, {"uid": int(uid)})
    if user is None or not user.active or (user.session_version or 0) != int(version):
        return None
    return user


def _register_template_helpers(app: Flask) -> None:
    from quizapp import page
    from quizapp.services.text import counted
    from quizapp.web import display

    # Every {{ ... }} output passes through finalize before escaping: lone surrogates (valid in a
    # JSON answer, unencodable as UTF-8) and control characters such as NUL become visible
    # stand-ins instead of a UnicodeEncodeError (500) or a raw NUL in the HTML.
    app.jinja_env.finalize = display.showable
    # Template indentation is for the reader of the template, not sent: a block tag's line and
    # the newline after it are dropped (the exercise page is ~10% lighter).
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    app.jinja_env.filters["num"] = page.format_number
    app.jinja_env.filters["markdown"] = page.markdown_html
    app.jinja_env.filters["mathml"] = page.value_html
    app.jinja_env.filters["reflow"] = display.reflow
    app.jinja_env.filters["breakable"] = display.breakable
    app.jinja_env.filters["counted"] = counted
    app.jinja_env.globals["grid_layout"] = display.grid_layout

    from quizapp import coursetime

    zone = coursetime.parse_zone(app.config["QUIZAPP_TIMEZONE"])
    app.jinja_env.globals["utcnow"] = coursetime.utcnow_aware  # for macros (no context there)

    @app.template_filter("when")
    def _when(value: Any) -> str:
        """An instant in the course zone, with its abbreviation (``2026-12-01 17:00 CST``)."""
        return coursetime.show(value, zone)

    @app.template_filter("deadline")
    def _deadline(value: Any) -> str:
        """A closing time in the course zone (midnight written as 24:00 of the day it ends)."""
        return coursetime.show_deadline(value, zone)

    @functools.lru_cache(maxsize=4096)
    def _built_page_url(
        endpoint: str, script_root: str, values: tuple[tuple[str, str], ...]
    ) -> str:
        path_values: dict[str, Any] = dict(values)
        return url_for(endpoint, **path_values)

    def page_url(endpoint: str, **values: str) -> str:
        """``url_for(endpoint, **values)`` for a page's link, built once per mount point
        (``request.script_root``, which a proxy's ``X-Forwarded-Prefix`` can set) and values, then
        reused: the URL map and its defaults are fixed once the app serves, and each ``url_for``
        costs ~40 us, about 1 % of a page, on the ~10 links every page has and the ~6 an
        exercise page adds (its form, preview, previous and next: benchmarks/NOTES.md).  The
        cache keeps the last 4,096 links (a bank's exercises times their few endpoints).

        ``endpoint`` is a full name (``"student.home"``, not ``".home"``); ``values`` are the
        route's path arguments, as strings (a query string or a static file's URL, which carries
        its content's hash, still takes ``url_for``).  Raises ``ValueError`` for a relative
        endpoint, ``static`` or a value that is not a string, and Werkzeug's ``BuildError`` for an
        unknown endpoint or missing arguments.
        """
        if endpoint.startswith(".") or endpoint == "static":
            raise ValueError(f"page_url takes a full endpoint name, not {endpoint!r}")
        if not all(isinstance(v, str) for v in values.values()):
            raise ValueError(f"page_url takes path values as strings, not {values!r}")
        return _built_page_url(endpoint, request.script_root, tuple(sorted(values.items())))

    app.jinja_env.globals["page_url"] = page_url

    @app.context_processor
    def _helpers() -> dict[str, Any]:
        def has_endpoint(name: str) -> bool:
            return name in app.view_functions

        return {"has_endpoint": has_endpoint}

    @app.template_filter("percent")
    def _percent(value: float) -> str:
        """A percentage with the CSV's precision (2 decimals, no trailing zeros): ``31.25 %``."""
        from quizapp.instructor.gradebook import fmt_points

        return f"{fmt_points(round(float(value), 2))} %"

    @app.template_filter("pct")
    def _pct(value: float) -> str:
        return f"{round(100 * float(value or 0))}%"
