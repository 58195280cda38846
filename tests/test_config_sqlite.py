"""``QUIZAPP_SQLITE_SYNCHRONOUS``: SQLite's ``PRAGMA synchronous`` on every connection (NORMAL by
default, FULL on request), read back from the database itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_web_support import make_app

from quizapp.config import build_config, sqlite_synchronous
from quizapp.models import db

# SQLite's numbering of the levels (PRAGMA synchronous returns the number).
LEVELS = {"OFF": 0, "NORMAL": 1, "FULL": 2, "EXTRA": 3}


def _levels_of_two_connections(app) -> tuple[int, int, str]:
    """``PRAGMA synchronous`` of two connections held at once (so two distinct DBAPI connections
    of the pool), and the journal mode of the first."""
    with app.app_context():
        engine = db.engine
        with engine.connect() as a, engine.connect() as b:
            assert a.connection.dbapi_connection is not b.connection.dbapi_connection
            first = a.exec_driver_sql("PRAGMA synchronous").scalar()
            second = b.exec_driver_sql("PRAGMA synchronous").scalar()
            journal = a.exec_driver_sql("PRAGMA journal_mode").scalar()
        engine.dispose()
    return int(first), int(second), str(journal)


def test_default_is_normal_in_wal_on_every_connection(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("QUIZAPP_SQLITE_SYNCHRONOUS", raising=False)
    app = make_app(tmp_path)
    assert app.config["QUIZAPP_SQLITE_SYNCHRONOUS"] == "NORMAL"
    assert _levels_of_two_connections(app) == (LEVELS["NORMAL"], LEVELS["NORMAL"], "wal")


def test_full_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("QUIZAPP_SQLITE_SYNCHRONOUS", " full ")
    app = make_app(tmp_path)
    assert app.config["QUIZAPP_SQLITE_SYNCHRONOUS"] == "FULL"
    assert _levels_of_two_connections(app) == (LEVELS["FULL"], LEVELS["FULL"], "wal")


def test_config_mapping_wins_over_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("QUIZAPP_SQLITE_SYNCHRONOUS", "FULL")
    app = make_app(tmp_path, QUIZAPP_SQLITE_SYNCHRONOUS="normal")
    assert app.config["QUIZAPP_SQLITE_SYNCHRONOUS"] == "NORMAL"
    assert _levels_of_two_connections(app)[:2] == (LEVELS["NORMAL"], LEVELS["NORMAL"])


def test_two_apps_keep_their_own_level(tmp_path: Path, monkeypatch) -> None:
    """The level is registered per engine, so one process may hold apps with different levels."""
    monkeypatch.delenv("QUIZAPP_SQLITE_SYNCHRONOUS", raising=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    full = make_app(tmp_path / "a", QUIZAPP_SQLITE_SYNCHRONOUS="FULL")
    normal = make_app(tmp_path / "b")
    assert _levels_of_two_connections(full)[:2] == (LEVELS["FULL"], LEVELS["FULL"])
    assert _levels_of_two_connections(normal)[:2] == (LEVELS["NORMAL"], LEVELS["NORMAL"])


@pytest.mark.parametrize("bad", ["OFF", "extra", "2", "NORMAL; DROP TABLE users", 1])
def test_other_values_are_refused_with_the_setting_named(tmp_path: Path, bad) -> None:
    with pytest.raises(ValueError, match="QUIZAPP_SQLITE_SYNCHRONOUS must be one of NORMAL, FULL"):
        build_config(tmp_path, {"QUIZAPP_SQLITE_SYNCHRONOUS": bad, "SECRET_KEY": "k",
                                "QUIZAPP_SEED_SECRET": "s"})  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "level"),
    [(None, "NORMAL"), ("", "NORMAL"), ("  ", "NORMAL"), ("normal", "NORMAL"), ("Full", "FULL")],
)
def test_accepted_spellings(raw, level) -> None:
    assert sqlite_synchronous(raw) == level


def test_the_sqlite_database_and_its_wal_and_shm_files_are_private(tmp_path: Path) -> None:
    """sqlite3 created them with the umask's mode (0644: any user of the machine could read
    every answer and password hash) beside the 0600 secrets; now 0600, also for a database
    created world-readable before."""
    import os
    import stat

    from quizapp import services

    old = os.umask(0o022)
    try:
        app = make_app(tmp_path)
        with app.app_context():
            services.create_user(db.session, "ana", "correct horse battery")
            files = [tmp_path / f"quizapp.sqlite{s}" for s in ("", "-wal", "-shm")]
            assert all(f.exists() for f in files)
            for f in files:
                assert stat.S_IMODE(f.stat().st_mode) == 0o600, (f, oct(f.stat().st_mode))
            assert stat.S_IMODE((tmp_path / "instance" / "secret_key").stat().st_mode) == 0o600
            db.engine.dispose()
        for f in files:
            if f.exists():
                f.chmod(0o644)  # an older installation's files
        app = make_app(tmp_path)
        with app.app_context():
            assert services.find_user(db.session, "ana") is not None
            for f in files:
                if f.exists():
                    assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
            db.engine.dispose()
    finally:
        os.umask(old)
