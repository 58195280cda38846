"""Shared fixtures.

The handed cases (``grading.yaml``, ``bad-yaml/``, ``bad-requests.md``) are copied into
``tests/cases/`` so that every clone runs them (fixture ``cases_dir``);
``tests/test_cases_copy.py`` checks the copies equal ``../shared/cases/`` when that folder is
beside the repository (``$QUIZAPP_SHARED_DIR`` names it when the clone lives elsewhere, e.g. a
git worktree).  Tests that need ``../shared`` itself (fixture ``shared_dir``) skip when it is
absent, or fail under ``QUIZAPP_TEST_REQUIRE=shared`` (``.ci/run``, which has it).

Database backends: every test of the modules in :data:`DATABASE_MODULES` that uses ``tmp_path``
runs twice, on ``sqlite`` and on ``postgres`` (test ids ``[sqlite]`` / ``[postgres]``); the
PostgreSQL run skips, with the reason, when ``QUIZAPP_TEST_POSTGRES_URL`` is unset.  The apps the
tests build (``make_app`` in tests/test_web_support.py) use :func:`database_url`, so a test needs
no change to run on both.  A test that only makes sense on SQLite (PRAGMAs, ``BEGIN IMMEDIATE``)
is marked ``@pytest.mark.sqlite_only``.  Other modules may request the ``db_url`` fixture to be
parametrized the same way (e.g. a server harness started with that URL).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_support import browser_unavailable
from test_postgres_support import (
    BACKENDS,
    POSTGRES_ENV,
    begin_test,
    database_url,
    drop_leftover_schemas,
    end_test,
    postgres_base_url,
    skip_or_fail,
)

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("QUIZAPP_SHARED_DIR") or REPO.parent / "shared")
#: The copies of the handed cases.
CASES = Path(__file__).resolve().parent / "cases"

#: Modules whose tests touch the database and run on every backend.
DATABASE_MODULES = frozenset(
    {
        "test_api",
        "test_cli_instructor",
        "test_deadlines",
        "test_docs_deadlines",
        "test_instructor",
        "test_instructor_web",
        "test_migrations",
        "test_models",
        "test_services",
        "test_services_page_rows",
        "test_stored_variants",
        "test_text_storable",
        "test_web_auth",
        "test_web_parts",
        "test_web_student",
    }
)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``../shared`` folder beside the repository (or ``$QUIZAPP_SHARED_DIR``); skips the
    test when it is absent (fails instead under ``QUIZAPP_TEST_REQUIRE=shared``)."""
    if not SHARED.is_dir():
        skip_or_fail("shared", f"{SHARED} is not present (only CI and developers have it)")
    return SHARED


@pytest.fixture(scope="session")
def cases_dir() -> Path:
    """``tests/cases``: the copies of the handed cases (grading.yaml, bad-yaml/, bad-requests.md)."""
    return CASES


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``browser`` skips (or, with ``QUIZAPP_TEST_REQUIRE=browser``, fails) before
    its fixtures start servers when Chromium or Playwright is missing."""
    if item.get_closest_marker("browser") is not None:
        reason = browser_unavailable()
        if reason is not None:
            skip_or_fail("browser", reason)


def _backend_params() -> list:
    return [
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``database_backend`` for database tests (see the module docstring)."""
    if "database_backend" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("sqlite_only"):
        return
    module = metafunc.module.__name__.rpartition(".")[2]
    wanted = "db_url" in metafunc.fixturenames or (
        module in DATABASE_MODULES and "tmp_path" in metafunc.fixturenames
    )
    if wanted:
        metafunc.parametrize("database_backend", _backend_params(), indirect=True)


@pytest.fixture(autouse=True)
def database_backend(request: pytest.FixtureRequest):
    """The running test's database backend name (``"sqlite"`` unless parametrized)."""
    backend = getattr(request, "param", "sqlite")
    assert backend in BACKENDS
    if backend == "postgres" and postgres_base_url() is None:
        skip_or_fail("postgres", f"{POSTGRES_ENV} is not set: no PostgreSQL to test against")
    begin_test(backend)
    try:
        yield backend
    finally:
        end_test()


@pytest.fixture()
def db_url(database_backend: str, tmp_path: Path) -> str:
    """The SQLAlchemy URL of the running test's database: a SQLite file in ``tmp_path``, or a
    fresh PostgreSQL schema (dropped after the test).  Parametrized over both backends."""
    return database_url(tmp_path)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    drop_leftover_schemas()


@pytest.fixture()
def no_redraws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind draws as before its ``redraw_coinciding`` revision: variants whose named
    mistakes give one answer, as stored variants drawn by an earlier release may have (new ones
    are drawn again: tests/test_bank_distinct.py).  For tests of what the verdict, ``quizapp
    check`` and the statistics say about such a variant."""
    from quizapp.bank.kinds import all_kinds

    for kind in all_kinds().values():
        monkeypatch.setattr(type(kind), "redraw_coinciding", None)
