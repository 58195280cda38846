"""Which database the current test runs on: SQLite (a file in ``tmp_path``) or PostgreSQL (a fresh
schema of the database named by ``QUIZAPP_TEST_POSTGRES_URL``).  No tests in this module.

``tests/conftest.py`` runs every test of the database-touching modules twice, once per backend
(``sqlite`` and ``postgres``; the latter skips when ``QUIZAPP_TEST_POSTGRES_URL`` is unset), and
tells this module which backend the running test uses.  ``make_app`` (tests/test_web_support.py)
asks :func:`database_url` for the URL, so the tests themselves need no change to run on both.

PostgreSQL isolation: each test gets its own schema ``qt_<session>_<n>``, selected through the URL
(``options=-csearch_path=...``), so unqualified table names, the Alembic version table and
``compare_metadata`` all live in it.  Nothing else in the database is touched: several test
sessions (or developers) may share one database.  The schema and every connection tagged with its
``application_name`` are dropped after the test, whatever the test left open.
"""

from __future__ import annotations

import gc
import os
import secrets
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url

#: Environment variable with the SQLAlchemy URL of a PostgreSQL database the tests may use.
POSTGRES_ENV = "QUIZAPP_TEST_POSTGRES_URL"

BACKENDS = ("sqlite", "postgres")

_SESSION = secrets.token_hex(3)
_counter = 0


def required() -> set[str]:
    """What ``$QUIZAPP_TEST_REQUIRE`` (comma-separated: ``browser``, ``postgres``, ``shared``)
    says must run: .ci/run sets it, so that a missing Chromium, PostgreSQL or ``../shared``
    fails CI instead of skipping."""
    raw = os.environ.get("QUIZAPP_TEST_REQUIRE", "")
    return {part.strip().lower() for part in raw.split(",") if part.strip()}


def skip_or_fail(kind: str, reason: str) -> None:
    """Skip the test with ``reason``, or fail it when ``kind`` is in :func:`required`."""
    if kind in required():
        pytest.fail(f"{reason} (and QUIZAPP_TEST_REQUIRE asks for {kind} tests)", pytrace=False)
    pytest.skip(reason)


def postgres_base_url() -> str | None:
    """``$QUIZAPP_TEST_POSTGRES_URL`` normalised to the psycopg 3 driver, or ``None`` if unset."""
    url = os.environ.get(POSTGRES_ENV, "").strip()
    if not url:
        return None
    from quizapp.config import normalize_database_url

    return normalize_database_url(url)


def _admin_engine(base: str) -> Engine:
    return sa.create_engine(base, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)


@dataclass
class PostgresSchema:
    """A uniquely named schema in the test database; ``url`` selects it for every connection."""

    base: str
    name: str
    created: bool = False

    @property
    def url(self) -> str:
        u = make_url(self.base)
        query = dict(u.query)
        query["options"] = f"-csearch_path={self.name}"
        query["application_name"] = self.name
        return u.set(query=query).render_as_string(hide_password=False)

    def create(self) -> None:
        with _admin_engine(self.base).connect() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{self.name}"')
        self.created = True

    def drop(self) -> None:
        """Close every connection tagged with this schema's name, then drop the schema."""
        if not self.created:
            return
        engine = _admin_engine(self.base)
        with engine.connect() as conn:
            conn.execute(
                sa.text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = :name AND pid <> pg_backend_pid()"
                ),
                {"name": self.name},
            )
            conn.exec_driver_sql("SET lock_timeout = '20s'")
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{self.name}" CASCADE')
        engine.dispose()
        self.created = False


@dataclass
class Backend:
    """The running test's backend; the PostgreSQL schema is created on first use only."""

    name: str = "sqlite"
    schema: PostgresSchema | None = None
    engines: weakref.WeakSet[Engine] = field(default_factory=weakref.WeakSet)


_current = Backend()


def current_backend() -> str:
    """``"sqlite"`` or ``"postgres"``: the backend of the running test."""
    return _current.name


def is_postgres() -> bool:
    return _current.name == "postgres"


def postgres_schema_in_use() -> bool:
    """True once the running PostgreSQL test's schema exists (an app was built on it)."""
    return _current.schema is not None and _current.schema.created


def database_url(tmp_path: Path) -> str:
    """The SQLAlchemy URL the running test's apps use.

    SQLite: ``sqlite:///<tmp_path>/quizapp.sqlite``.  PostgreSQL: the test's own schema (created
    now if this is the test's first app); every call within one test returns the same URL, so an
    app built twice (a "restart") sees the same data, as it would on SQLite with the same path.
    """
    if _current.name == "sqlite":
        return f"sqlite:///{tmp_path / 'quizapp.sqlite'}"
    schema = _current.schema
    assert schema is not None, "postgres backend without a schema"
    if not schema.created:
        schema.create()
    return schema.url


def _track(conn: sa.Connection) -> None:
    _current.engines.add(conn.engine)


def begin_test(backend: str) -> None:
    """Called by conftest before each test: select ``backend`` (``"sqlite"`` or ``"postgres"``)."""
    global _counter
    if backend not in BACKENDS:
        raise ValueError(f"unknown database backend {backend!r}; expected one of {BACKENDS}")
    _current.name = backend
    _current.schema = None
    _current.engines = weakref.WeakSet()
    if backend == "postgres":
        base = postgres_base_url()
        if base is None:
            raise RuntimeError(f"{POSTGRES_ENV} is not set")
        _counter += 1
        _current.schema = PostgresSchema(base, f"qt_{_SESSION}_{_counter}")
        event.listen(Engine, "engine_connect", _track)


def _checked_out(engine: Engine) -> bool:
    """Whether ``engine``'s pool has a connection checked out (a ``NullPool`` keeps none)."""
    count = getattr(engine.pool, "checkedout", None)
    return callable(count) and count() > 0


def end_test() -> None:
    """Called by conftest after each test: dispose the test's engines, drop its schema."""
    try:
        engines = list(_current.engines)
        if any(_checked_out(engine) for engine in engines):
            # A connection still checked out belongs to something the test dropped without
            # closing (a streamed response never read to its end): collect it now, while its
            # schema exists, rather than in a later test (where its finalizer's ROLLBACK on a
            # terminated connection logs an error, and can break CPython 3.11's compile()).
            gc.collect()
        for engine in engines:
            engine.dispose()
        if _current.schema is not None:
            _current.schema.drop()
    finally:
        if event.contains(Engine, "engine_connect", _track):
            event.remove(Engine, "engine_connect", _track)
        _current.name = "sqlite"
        _current.schema = None
        _current.engines = weakref.WeakSet()


def drop_leftover_schemas() -> None:
    """Drop schemas this session created and failed to drop (called at the session's end)."""
    base = postgres_base_url()
    if base is None or _counter == 0:
        return
    engine = _admin_engine(base)
    with engine.connect() as conn:
        names = conn.execute(
            sa.text("SELECT nspname FROM pg_namespace WHERE nspname LIKE :p"),
            {"p": f"qt\\_{_SESSION}\\_%"},
        ).scalars()
        for name in list(names):
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    engine.dispose()


_templates: dict[str, PostgresSchema] = {}


def copy_template(app: Any, key: str, build: Callable[[str], None]) -> None:
    """Copy every row of the session's template schema ``key`` into ``app``'s (migrated, empty)
    PostgreSQL schema, building the template first if needed with ``build(url)`` (which must
    migrate and fill the schema at ``url``).  Sequences continue after the copied ids.

    This is the PostgreSQL counterpart of the SQLite template file ``synced_app`` copies: the
    bank is synced once per session instead of once per test.
    """
    from quizapp.models import db

    template = _templates.get(key)
    if template is None:
        base = postgres_base_url()
        assert base is not None
        template = PostgresSchema(base, f"qt_{_SESSION}_tpl_{key}")
        template.create()
        build(template.url)
        _templates[key] = template
    with app.app_context(), db.engine.begin() as conn:
        for table in db.metadata.sorted_tables:
            cols = ", ".join(f'"{c.name}"' for c in table.columns)
            conn.exec_driver_sql(
                f'INSERT INTO "{table.name}" ({cols}) '
                f'SELECT {cols} FROM "{template.name}"."{table.name}"'
            )
        for table in db.metadata.sorted_tables:
            for col in table.primary_key.columns:
                if not isinstance(col.type, sa.Integer):
                    continue
                conn.exec_driver_sql(
                    f"SELECT setval(pg_get_serial_sequence('\"{table.name}\"', '{col.name}'), "
                    f'COALESCE(MAX("{col.name}"), 0) + 1, false) FROM "{table.name}"'
                )
