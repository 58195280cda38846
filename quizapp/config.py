"""Application configuration: environment variables, the instance folder, generated secrets.

Every setting has one source of truth, in this order: the ``config`` mapping given to
``create_app`` (tests), then the environment, then a default.  Secrets are never hard-coded: when
``QUIZAPP_SECRET_KEY`` / ``QUIZAPP_SEED_SECRET`` are not set, a random one is generated once into
the instance folder (file mode 0600) and reused on every later start, so sessions and students'
variants survive restarts.  Several hosts behind a load balancer must share them: set both
variables (or share the instance folder).

The environment is read and checked by pydantic-settings (:class:`EnvironmentSettings`); a value
the app cannot use is a :class:`ConfigError` naming the variable.  Environment variables:

- ``DATABASE_URL``: SQLAlchemy URL; default ``sqlite:///<instance>/quizapp.sqlite``.  For
  PostgreSQL use ``postgresql+psycopg://user:password@host/dbname`` (``postgres://`` and
  ``postgresql://`` are rewritten to the psycopg 3 driver).
- ``QUIZAPP_SECRET_KEY``: Flask's session-signing key.
- ``QUIZAPP_SEED_SECRET``: the key ``derive_seed`` uses to derive each student's variant seed.
- ``QUIZAPP_EXERCISES``: the exercise bank folder; default ``./exercises`` when it exists, else the
  bundled course (the checkout's ``exercises/``, or the copy an installed wheel ships).
- ``QUIZAPP_JOIN_CODE``: when set, registering requires this course join code.
- ``QUIZAPP_REGISTRATION``: ``0`` disables self-registration (default ``1``).
- ``QUIZAPP_HTTPS``: ``1`` marks cookies ``Secure`` (set it when served over HTTPS).
- ``QUIZAPP_INSTANCE``: the instance folder; default ``./instance``.
- ``QUIZAPP_TRUSTED_HOSTS``: comma-separated host names the app answers to (Flask's
  ``TRUSTED_HOSTS``); a request with another ``Host`` header gets 400.  Default: any.
- ``QUIZAPP_MAX_CONTENT_LENGTH``: largest accepted request body in bytes (default 256 KiB).
- ``QUIZAPP_LIMIT_REGISTER`` / ``_SUBMIT``: rate limits (default 10/min per address, 30/min per
  user or token).  Wrong passwords (sign-in page or API token; ``quizapp.web.auth.sign_in_limits``):
  ``QUIZAPP_LIMIT_LOGIN_FAILURES`` per account and address, or per account and browser for a
  browser that signed in to it before (default 10 per 15 minutes; the right password is refused
  too until the window passes, then works), ``QUIZAPP_LIMIT_LOGIN_ACCOUNT`` per account from all
  addresses (default 20 per 15 minutes), ``QUIZAPP_LIMIT_LOGIN`` per address (default 60 per
  minute); ``QUIZAPP_LIMIT_PREVIEW``: answer previews (the page asks for one as the student
  types; default 240/min); ``QUIZAPP_RATELIMIT=0`` disables them;
  ``QUIZAPP_RATELIMIT_STORAGE_URI`` (or ``QUIZAPP_RATELIMIT_STORAGE``) shares counts between
  workers and hosts (e.g. ``redis://host``; default in-process ``memory://``).
- ``QUIZAPP_PROXY_FIX``: the number of reverse proxies in front (0 to 10, default 0) whose
  ``X-Forwarded-*`` headers are trusted (Werkzeug's ``ProxyFix``).
- ``QUIZAPP_STUDENT_LEADERBOARD``: on/off, the anonymous student leaderboard (default off).
- ``QUIZAPP_LOG_FORMAT``: ``text`` (default) or ``json`` (JSON lines) for the app's log records
  on standard error; ``QUIZAPP_LOG_LEVEL``: ``DEBUG``, ``INFO`` (default), ``WARNING``, ``ERROR``
  (see :mod:`quizapp.logs`).
- ``QUIZAPP_COMPRESS``: ``0`` turns off compressing responses (HTML, CSS, JS, JSON) with zstd,
  brotli or gzip, as the browser accepts (default on; turn it off when a proxy in front
  compresses).
- ``QUIZAPP_TIMEZONE``: the course's time zone, an IANA name such as ``America/Chicago``
  (default ``UTC``).  The times of ``quiz.yaml`` (``opens``, ``closes``, late periods) and of
  extensions are wall-clock times there, and every time shown is written there with its
  abbreviation (``quizapp.coursetime``; see docs/deadlines.md).  An unknown name is refused.
- ``QUIZAPP_SQLITE_SYNCHRONOUS``: SQLite's ``PRAGMA synchronous`` on every connection, ``NORMAL``
  (default) or ``FULL``.  The database runs in WAL mode, where NORMAL is safe from corruption
  and loses nothing when the server process crashes or is killed; only a power loss or an
  operating-system crash may roll back the last few commits (submissions the students were
  already shown).  FULL makes every commit durable against that too, at the cost of an fsync
  per commit (a few milliseconds each; SQLite has one writer, so every submit of the server
  waits for them in turn).  Sources: SQLite's documentation of ``PRAGMA synchronous`` ("WAL
  mode is safe from corruption with synchronous=NORMAL"); Rails 8 uses NORMAL for SQLite by
  default.  Ignored for PostgreSQL.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import ValidationError, ValidationInfo, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from quizapp.logs import LOG_FORMATS, LOG_LEVELS
from quizapp.resources import bundled_folder

#: Largest request body accepted (bytes).  A 64 x 64 grid of 30-character cells is ~125 KB of form
#: data, far beyond any exercise; anything larger is answered with 413.
DEFAULT_MAX_CONTENT_LENGTH = 256 * 1024

#: SQLite busy timeout (milliseconds): how long a writer waits for the write lock before failing.
SQLITE_BUSY_TIMEOUT_MS = 30_000

#: Accepted values of ``QUIZAPP_SQLITE_SYNCHRONOUS`` (SQLite's ``PRAGMA synchronous`` levels
#: this app supports) and the default (see the module docstring for the trade-off).
SQLITE_SYNCHRONOUS_VALUES = ("NORMAL", "FULL")
DEFAULT_SQLITE_SYNCHRONOUS = "NORMAL"


class ConfigError(ValueError):
    """A setting (environment variable or ``create_app`` config) has a value the app cannot use;
    the message names the setting, what it accepts and what it got.  The CLI prints it as one
    line and exits with status 1."""


#: What an on/off setting accepts (any case); anything else is a :class:`ConfigError`, so a typo
#: such as ``QUIZAPP_RATELIMIT=enabled`` cannot silently turn a protection off.
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def flag(setting: str, value: str | None, default: bool = False) -> bool:
    """The on/off setting ``setting`` from its text ``value``: ``TRUE_WORDS`` / ``FALSE_WORDS``
    (any case, spaces ignored); None or blank gives ``default``.  Raises :class:`ConfigError`
    naming the setting for anything else."""
    if value is None or value.strip() == "":
        return default
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ConfigError(f"{setting} must be 1/true/yes/on or 0/false/no/off, got {value!r}")


#: Rate limits by default (Flask-Limiter's syntax), per user, token or address.
DEFAULT_LIMITS = {
    "QUIZAPP_LIMIT_LOGIN": "60 per minute",
    "QUIZAPP_LIMIT_LOGIN_ACCOUNT": "20 per 15 minutes",
    "QUIZAPP_LIMIT_REGISTER": "10 per minute",
    "QUIZAPP_LIMIT_SUBMIT": "30 per minute",
    "QUIZAPP_LIMIT_PREVIEW": "240 per minute",
    "QUIZAPP_LIMIT_LOGIN_FAILURES": "10 per 15 minutes",
}


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


class EnvironmentSettings(BaseSettings):
    """The settings the environment gives, read and checked by pydantic-settings.

    Field names are the variables of the module docstring (``DATABASE_URL``, ``QUIZAPP_...``;
    case-sensitive).  A blank variable counts as unset, except a rate limit, which must parse.
    A value the app cannot use raises :class:`ConfigError` naming the variable (see
    :func:`environment_settings`); every field is read again on each call (tests change the
    environment between apps).
    """

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", frozen=True)

    DATABASE_URL: str | None = None
    QUIZAPP_SECRET_KEY: str | None = None
    QUIZAPP_SEED_SECRET: str | None = None
    QUIZAPP_EXERCISES: str | None = None
    QUIZAPP_INSTANCE: str | None = None
    QUIZAPP_JOIN_CODE: str | None = None
    QUIZAPP_REGISTRATION: bool = True
    QUIZAPP_HTTPS: bool = False
    QUIZAPP_TRUSTED_HOSTS: Annotated[list[str] | None, NoDecode] = None  # comma-separated
    QUIZAPP_MAX_CONTENT_LENGTH: int = DEFAULT_MAX_CONTENT_LENGTH
    QUIZAPP_SQLITE_SYNCHRONOUS: str = DEFAULT_SQLITE_SYNCHRONOUS
    QUIZAPP_RATELIMIT_STORAGE_URI: str | None = None
    QUIZAPP_RATELIMIT_STORAGE: str | None = None
    QUIZAPP_RATELIMIT: bool = True
    QUIZAPP_LIMIT_LOGIN: str = DEFAULT_LIMITS["QUIZAPP_LIMIT_LOGIN"]
    QUIZAPP_LIMIT_LOGIN_ACCOUNT: str = DEFAULT_LIMITS["QUIZAPP_LIMIT_LOGIN_ACCOUNT"]
    QUIZAPP_LIMIT_REGISTER: str = DEFAULT_LIMITS["QUIZAPP_LIMIT_REGISTER"]
    QUIZAPP_LIMIT_SUBMIT: str = DEFAULT_LIMITS["QUIZAPP_LIMIT_SUBMIT"]
    QUIZAPP_LIMIT_PREVIEW: str = DEFAULT_LIMITS["QUIZAPP_LIMIT_PREVIEW"]
    QUIZAPP_LIMIT_LOGIN_FAILURES: str = DEFAULT_LIMITS["QUIZAPP_LIMIT_LOGIN_FAILURES"]
    QUIZAPP_COMPRESS: bool = True
    QUIZAPP_TIMEZONE: str = "UTC"
    QUIZAPP_PROXY_FIX: int = 0
    QUIZAPP_STUDENT_LEADERBOARD: bool = False
    QUIZAPP_LOG_FORMAT: str = "text"
    QUIZAPP_LOG_LEVEL: str = "INFO"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the environment (no dotenv or secrets files): what the module docstring lists."""
        return (env_settings,)

    @field_validator(
        "DATABASE_URL", "QUIZAPP_SECRET_KEY", "QUIZAPP_SEED_SECRET", "QUIZAPP_EXERCISES",
        "QUIZAPP_INSTANCE", "QUIZAPP_JOIN_CODE", "QUIZAPP_RATELIMIT_STORAGE_URI",
        "QUIZAPP_RATELIMIT_STORAGE", mode="before",
    )  # fmt: skip
    @classmethod
    def _text(cls, value: Any) -> Any:
        return None if _blank(value) else value

    @field_validator(
        "QUIZAPP_REGISTRATION", "QUIZAPP_HTTPS", "QUIZAPP_RATELIMIT", "QUIZAPP_STUDENT_LEADERBOARD",
        "QUIZAPP_COMPRESS", mode="before",
    )  # fmt: skip
    @classmethod
    def _on_off(cls, value: Any, info: ValidationInfo) -> bool:
        name = str(info.field_name)
        default = cls.model_fields[name].default
        return value if isinstance(value, bool) else flag(name, value, default)

    @field_validator("QUIZAPP_TRUSTED_HOSTS", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> list[str] | None:
        return trusted_hosts(value)

    @field_validator("QUIZAPP_MAX_CONTENT_LENGTH", mode="before")
    @classmethod
    def _max_length(cls, value: Any) -> int:
        return max_content_length(value)

    @field_validator("QUIZAPP_SQLITE_SYNCHRONOUS", mode="before")
    @classmethod
    def _synchronous(cls, value: Any) -> str:
        return sqlite_synchronous(value)

    @field_validator("QUIZAPP_TIMEZONE", mode="before")
    @classmethod
    def _timezone(cls, value: Any) -> str:
        return course_timezone(value)

    @field_validator("QUIZAPP_PROXY_FIX", mode="before")
    @classmethod
    def _proxies(cls, value: Any) -> int:
        return proxy_fix(value)

    @field_validator("QUIZAPP_LOG_FORMAT", "QUIZAPP_LOG_LEVEL", mode="before")
    @classmethod
    def _logging(cls, value: Any, info: ValidationInfo) -> str:
        name = str(info.field_name)
        if _blank(value):
            return str(cls.model_fields[name].default)
        choices = LOG_FORMATS if name == "QUIZAPP_LOG_FORMAT" else LOG_LEVELS
        text = str(value).strip()
        text = text.lower() if name == "QUIZAPP_LOG_FORMAT" else text.upper()
        if text not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return text

    @field_validator(*DEFAULT_LIMITS, mode="after")
    @classmethod
    def _limit(cls, value: str, info: ValidationInfo) -> str:
        check_rate_limit(str(info.field_name), value)
        return value

    @property
    def ratelimit_storage_uri(self) -> str:
        """Where the rate limiter counts: ``QUIZAPP_RATELIMIT_STORAGE_URI``, else its other name
        ``QUIZAPP_RATELIMIT_STORAGE``, else in-process ``memory://``."""
        return self.QUIZAPP_RATELIMIT_STORAGE_URI or self.QUIZAPP_RATELIMIT_STORAGE or "memory://"


def environment_settings() -> EnvironmentSettings:
    """The environment's settings, validated.  Raises :class:`ConfigError` (one line naming the
    variable, what it accepts and what it got) for the first value the app cannot use."""
    try:
        return EnvironmentSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        original = (first.get("ctx") or {}).get("error")
        if isinstance(original, ConfigError):
            raise ConfigError(str(original)) from None
        name = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"{name}: {first['msg']}, got {first.get('input')!r}") from None


def default_instance_path() -> Path:
    """``$QUIZAPP_INSTANCE`` or ``./instance`` (absolute)."""
    return Path(environment_settings().QUIZAPP_INSTANCE or "instance").resolve()


def default_exercises_path() -> Path:
    """``$QUIZAPP_EXERCISES``, else ``./exercises`` if it exists, else the bundled course.

    The bundled course is the checkout's ``exercises/`` or, for an installed wheel, the copy
    inside the package (:func:`quizapp.resources.bundled_folder`): so ``quizapp serve`` works from
    any directory, an empty one included.  When none exists, ``./exercises`` is returned (syncing
    it reports the missing folder).
    """
    env = environment_settings().QUIZAPP_EXERCISES
    if env:
        return Path(env).resolve()
    here = Path("exercises").resolve()
    if here.is_dir():
        return here
    return bundled_folder("exercises") or here


def normalize_database_url(url: str) -> str:
    """Rewrite ``postgres://`` / ``postgresql://`` URLs to SQLAlchemy's psycopg 3 driver name."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def read_or_create_secret(path: Path, nbytes: int = 32) -> str:
    """The secret stored in ``path``; create it (random, hex, mode 0600) if the file is absent.

    Creation uses ``O_EXCL`` so that several processes starting at once agree on one secret.
    Raises ``OSError`` if the folder cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        value = path.read_text(encoding="ascii").strip()
        if value:
            return value
        # An empty file is left by a crash between create and write: replace it.
        value = secrets.token_hex(nbytes)
        path.write_text(value + "\n", encoding="ascii")
        return value
    value = secrets.token_hex(nbytes)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(value + "\n")
    return value


def sqlite_synchronous(value: Any) -> str:
    """``value`` (``QUIZAPP_SQLITE_SYNCHRONOUS``) as ``"NORMAL"`` or ``"FULL"``; None or blank
    gives the default (NORMAL).  Case and surrounding spaces are ignored.  Raises ``ValueError``
    naming the setting and the accepted values for anything else (a :class:`ConfigError`)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_SQLITE_SYNCHRONOUS
    text = value.strip().upper() if isinstance(value, str) else None
    if text not in SQLITE_SYNCHRONOUS_VALUES:
        raise ConfigError(
            f"QUIZAPP_SQLITE_SYNCHRONOUS must be one of {', '.join(SQLITE_SYNCHRONOUS_VALUES)}, "
            f"got {value!r}"
        )
    return text


def trusted_hosts(value: Any) -> list[str] | None:
    """``QUIZAPP_TRUSTED_HOSTS`` (comma-separated host names, or a list) as a list; None (any
    host) when unset or blank.  Raises :class:`ConfigError` for text holding no name (``,,``)."""
    if value is None:
        return None
    if isinstance(value, str):
        hosts = [h.strip() for h in value.split(",") if h.strip()]
        if value.strip() and not hosts:  # e.g. ",,": would mean "any host"
            raise ConfigError(
                f"QUIZAPP_TRUSTED_HOSTS must list host names separated by commas, got {value!r}"
            )
        return hosts or None
    return list(value) or None


def max_content_length(value: Any) -> int:
    """``QUIZAPP_MAX_CONTENT_LENGTH`` in bytes (default :data:`DEFAULT_MAX_CONTENT_LENGTH` when
    unset or blank).  Raises :class:`ConfigError` unless it is a whole number of at least 1024."""
    if _blank(value) or value == 0:
        return DEFAULT_MAX_CONTENT_LENGTH
    try:
        number = int(value)
        if number < 1024:
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(
            f"QUIZAPP_MAX_CONTENT_LENGTH must be a whole number of bytes, at least 1024, "
            f"got {value!r}"
        ) from None
    return number


def proxy_fix(value: Any) -> int:
    """``QUIZAPP_PROXY_FIX``: how many reverse proxies to trust (0 when unset or blank).  Raises
    :class:`ConfigError` for anything but a whole number from 0 to 10."""
    try:
        n = int(str(value).strip() or "0") if value is not None else 0
    except ValueError:
        n = -1
    if not 0 <= n <= 10:
        raise ConfigError(
            f"QUIZAPP_PROXY_FIX must be the number of trusted proxies (0 to 10), got {value!r}"
        )
    return n


def course_timezone(value: Any) -> str:
    """``value`` (``QUIZAPP_TIMEZONE``) checked as an IANA zone name and returned as the zone's
    key (``America/Chicago``); None or blank gives ``UTC``.  Raises :class:`ConfigError` naming
    the setting for a name the zone database does not know."""
    from quizapp.coursetime import TimeError, parse_zone

    try:
        return parse_zone(value, "QUIZAPP_TIMEZONE").key
    except TimeError as err:
        raise ConfigError(str(err)) from None


def build_config(instance_path: Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The Flask configuration for an app whose instance folder is ``instance_path``.

    ``overrides`` (the ``config`` given to ``create_app``) wins over the environment.  Secrets
    missing from both are read from (or generated into) ``instance_path``.
    """
    over = dict(overrides or {})
    env = environment_settings()
    cfg: dict[str, Any] = {}

    url = over.get("SQLALCHEMY_DATABASE_URI") or over.get("DATABASE_URL") or env.DATABASE_URL
    if not url:
        url = f"sqlite:///{instance_path / 'quizapp.sqlite'}"
    cfg["SQLALCHEMY_DATABASE_URI"] = normalize_database_url(str(url))
    cfg["SQLALCHEMY_ENGINE_OPTIONS"] = {"pool_pre_ping": True}
    cfg["QUIZAPP_SQLITE_SYNCHRONOUS"] = (
        sqlite_synchronous(over["QUIZAPP_SQLITE_SYNCHRONOUS"])
        if "QUIZAPP_SQLITE_SYNCHRONOUS" in over
        else env.QUIZAPP_SQLITE_SYNCHRONOUS
    )

    cfg["QUIZAPP_TIMEZONE"] = (
        course_timezone(over["QUIZAPP_TIMEZONE"])
        if "QUIZAPP_TIMEZONE" in over
        else env.QUIZAPP_TIMEZONE
    )

    secret = over.get("SECRET_KEY") or env.QUIZAPP_SECRET_KEY
    if not secret:
        secret = read_or_create_secret(instance_path / "secret_key")
    cfg["SECRET_KEY"] = secret

    seed_secret = over.get("QUIZAPP_SEED_SECRET") or env.QUIZAPP_SEED_SECRET
    if not seed_secret:
        seed_secret = read_or_create_secret(instance_path / "seed_secret")
    cfg["QUIZAPP_SEED_SECRET"] = seed_secret

    exercises = over.get("QUIZAPP_EXERCISES")
    cfg["QUIZAPP_EXERCISES"] = Path(exercises).resolve() if exercises else default_exercises_path()
    cfg["QUIZAPP_JOIN_CODE"] = over.get("QUIZAPP_JOIN_CODE", env.QUIZAPP_JOIN_CODE)
    cfg["QUIZAPP_REGISTRATION"] = over.get("QUIZAPP_REGISTRATION", env.QUIZAPP_REGISTRATION)
    https = over.get("QUIZAPP_HTTPS", env.QUIZAPP_HTTPS)
    cfg["QUIZAPP_HTTPS"] = bool(https)
    cfg["QUIZAPP_STUDENT_LEADERBOARD"] = env.QUIZAPP_STUDENT_LEADERBOARD
    cfg["QUIZAPP_PROXY_FIX"] = env.QUIZAPP_PROXY_FIX
    cfg["QUIZAPP_LOG_FORMAT"] = env.QUIZAPP_LOG_FORMAT
    cfg["QUIZAPP_LOG_LEVEL"] = env.QUIZAPP_LOG_LEVEL

    if "QUIZAPP_TRUSTED_HOSTS" in over:
        cfg["TRUSTED_HOSTS"] = trusted_hosts(over["QUIZAPP_TRUSTED_HOSTS"])
    else:
        cfg["TRUSTED_HOSTS"] = env.QUIZAPP_TRUSTED_HOSTS

    max_len = over.get("MAX_CONTENT_LENGTH")
    cfg["MAX_CONTENT_LENGTH"] = (
        max_content_length(max_len) if max_len else env.QUIZAPP_MAX_CONTENT_LENGTH
    )
    # Form parsing limits (Werkzeug).
    cfg["MAX_FORM_MEMORY_SIZE"] = cfg["MAX_CONTENT_LENGTH"]
    cfg["MAX_FORM_PARTS"] = 5000  # a 64 x 64 grid (services.MAX_GRID) fits

    cfg["SESSION_COOKIE_HTTPONLY"] = True
    cfg["SESSION_COOKIE_SAMESITE"] = "Lax"
    cfg["SESSION_COOKIE_SECURE"] = bool(https)
    cfg["REMEMBER_COOKIE_HTTPONLY"] = True
    cfg["REMEMBER_COOKIE_SAMESITE"] = "Lax"
    cfg["REMEMBER_COOKIE_SECURE"] = bool(https)
    cfg["WTF_CSRF_TIME_LIMIT"] = None  # tokens live as long as the session (forms left open)
    cfg["WTF_CSRF_SSL_STRICT"] = bool(https)

    # Rate limits (Flask-Limiter syntax); answered with 429 and a message.
    cfg["RATELIMIT_STORAGE_URI"] = env.ratelimit_storage_uri
    cfg["RATELIMIT_ENABLED"] = env.QUIZAPP_RATELIMIT
    for key in LIMIT_SETTINGS:
        cfg[key] = getattr(env, key)
    cfg["QUIZAPP_COMPRESS"] = env.QUIZAPP_COMPRESS

    for key, value in over.items():
        if value is None or key in {
            "DATABASE_URL",
            "SQLALCHEMY_DATABASE_URI",
            "QUIZAPP_EXERCISES",
            "QUIZAPP_SQLITE_SYNCHRONOUS",
            "QUIZAPP_TIMEZONE",
        }:
            continue
        cfg[key] = value
    # Overrides are checked as the environment's values are.
    for key in LIMIT_SETTINGS:
        if over.get(key) is not None:
            check_rate_limit(key, cfg[key])
    if over.get("QUIZAPP_PROXY_FIX") is not None:
        cfg["QUIZAPP_PROXY_FIX"] = proxy_fix(over["QUIZAPP_PROXY_FIX"])
    return cfg


#: The rate-limit settings (Flask-Limiter's rate limit strings).
LIMIT_SETTINGS = tuple(DEFAULT_LIMITS)


def check_rate_limit(setting: str, value: Any) -> None:
    """Raise :class:`ConfigError` unless ``value`` is a rate limit string the ``limits`` library
    parses (``"30 per minute"``, ``"10 per 15 minutes"``, ``"3/minute"``, several joined by
    ``;``): checked at start-up, since Flask-Limiter would otherwise only fail on a request."""
    from limits import parse_many

    try:
        items = parse_many(str(value))
    except ValueError:
        items = []
    if not items or any(item.amount < 1 for item in items):  # "0 per minute" locks everyone out
        raise ConfigError(
            f"{setting} must be a rate limit such as '30 per minute' or '10 per 15 minutes' "
            f"(at least 1), got {value!r}"
        )
