"""``quizapp db upgrade``, ``create-user``, ``sync`` and ``serve`` (gunicorn on loopback)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_web_support import EXERCISES, REPO, set_listed

from quizapp.cli import main


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("QUIZAPP_SECRET_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_db_upgrade_and_create_user(env: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["db", "upgrade"])
    assert res.exit_code == 0, res.output
    assert (env / "instance" / "quizapp.sqlite").exists()
    assert (env / "instance" / "secret_key").exists()
    res = runner.invoke(
        main,
        ["create-user", "Prof", "--role", "instructor", "--password-stdin"],
        input="a long password\n",
    )
    assert res.exit_code == 0 and "Created instructor 'Prof'" in res.output
    res = runner.invoke(main, ["create-user", "prof", "--password-stdin"], input="another one\n")
    assert res.exit_code == 1 and "That username is taken." in res.output
    res = runner.invoke(main, ["create-user", "stu"], input="short\nshort\n")
    assert res.exit_code == 1 and "at least 8 characters" in res.output
    res = runner.invoke(main, ["create-user", "stu"], input="long enough\nlong enough\n")
    assert res.exit_code == 0 and "Created student 'stu'" in res.output

    from quizapp import services
    from quizapp.models import db
    from quizapp.web import create_app

    app = create_app()
    with app.app_context():
        prof = services.authenticate(db.session, "PROF", "a long password")
        assert prof is not None and prof.is_instructor


def test_sync_reports_and_exits_1_on_errors(env: Path) -> None:
    bank = env / "bank"
    shutil.copytree(EXERCISES, bank)
    runner = CliRunner()
    res = runner.invoke(main, ["sync", str(bank)])
    assert res.exit_code == 0, res.output
    assert "exercises added" in res.output and "0 errors" in res.output
    broken = next((bank / "01-linear-systems").glob("0*.yaml"))
    broken.write_text("title: [unclosed\n")
    res = runner.invoke(main, ["sync", str(bank)])
    assert res.exit_code == 1
    assert broken.name in res.output and "(1 kept its previous version)" in res.output
    assert "1 error" in res.output and "1 errors" not in res.output


def _live_exercises() -> set[str]:
    from sqlalchemy import select

    from quizapp.models import Exercise, db
    from quizapp.web import create_app

    with create_app().app_context():
        return set(db.session.scalars(select(Exercise.id).where(Exercise.archived.is_(False))))


def test_sync_of_another_folder_or_of_an_emptied_bank_archives_nothing_unless_asked(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizapp.bank import load_bank

    bank = env / "bank"
    shutil.copytree(EXERCISES, bank)
    monkeypatch.setenv("QUIZAPP_EXERCISES", str(bank))
    everything = set(load_bank(bank).exercises)
    runner = CliRunner()
    assert runner.invoke(main, ["sync"]).exit_code == 0
    assert _live_exercises() == everything

    # Another folder holding one quiz: its exercises are synced, the rest stay live (said so).
    other = env / "other"
    shutil.copytree(bank / "01-linear-systems", other / "01-linear-systems")
    res = runner.invoke(main, ["sync", str(other)])
    assert res.exit_code == 0, res.output
    assert "0 archived" in res.output and "Left live, not in" in res.output
    assert "--archive-missing" in res.output
    assert _live_exercises() == everything
    # Asked to, it archives them.
    res = runner.invoke(main, ["sync", str(other), "--archive-missing"])
    assert res.exit_code == 0, res.output
    one_quiz = {e for e in everything if e.startswith("01-linear-systems/")}
    assert f"{len(everything) - len(one_quiz)} archived" in res.output
    assert _live_exercises() == one_quiz
    assert runner.invoke(main, ["sync"]).exit_code == 0  # back: every exercise restored
    assert _live_exercises() == everything

    # The course's own bank emptied (a wrong checkout): refused, nothing written, exit 1.
    moved = env / "moved"
    bank.rename(moved)
    bank.mkdir()
    res = runner.invoke(main, ["sync"])
    assert res.exit_code == 1
    assert f"holds none of the course's {len(everything)} live exercises" in res.output
    assert "nothing was synced" in res.output
    assert _live_exercises() == everything
    res = runner.invoke(main, ["sync", "--archive-missing"])
    assert res.exit_code == 0 and f"{len(everything)} archived" in res.output, res.output
    assert _live_exercises() == set()
    # --keep-missing leaves live what is missing, whatever the folder.
    bank.rmdir()
    moved.rename(bank)
    assert runner.invoke(main, ["sync"]).exit_code == 0
    (bank / "05-attention" / "01-attention-weights.yaml").unlink()
    set_listed(bank / "05-attention", "01-attention-weights", False)
    res = runner.invoke(main, ["sync", "--keep-missing"])
    assert res.exit_code == 0 and "Left live, not in" in res.output, res.output
    assert _live_exercises() == everything


@pytest.mark.slow
def test_serve_starts_gunicorn_and_answers(env: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    environ = dict(os.environ, PYTHONPATH=str(REPO), QUIZAPP_EXERCISES=str(EXERCISES))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from quizapp.cli import main; main()",
            "serve",
            "--port",
            str(port),
            "--workers",
            "1",
        ],
        cwd=env,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.time() + 60
        body = ""
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/login", timeout=2) as r:
                    assert r.status == 200
                    assert r.headers["X-Frame-Options"] == "DENY"
                    body = r.read().decode()
                    break
            except OSError:
                time.sleep(0.3)
        assert "Sign in" in body
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert "Synced" in out and "0 errors" in out
    assert "serving on http://127.0.0.1:" in out


def test_serve_disables_the_gunicorn_control_socket() -> None:
    from gunicorn.config import Config

    from quizapp.cli.server import gunicorn_options

    options = gunicorn_options("127.0.0.1", 5000, 2, 4, 30)
    cfg = Config()
    for key, value in options.items():
        cfg.set(key, value)
    assert cfg.control_socket_disable is True  # no shared ~/.gunicorn/gunicorn.ctl
    assert cfg.workers == 2 and cfg.bind == ["127.0.0.1:5000"]


def test_serve_defaults_to_two_workers_of_two_threads(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2 threads per worker, not 4: fewer threads per process hold SQLite's single writer for
    less time (docs/deploying.md, "Workers and threads"); the options reach gunicorn as given."""
    import quizapp.cli.server as server

    seen: list[dict] = []

    class Captured:
        def __init__(self, app: object, options: dict) -> None:
            seen.append(options)

        def run(self) -> None:
            pass

    monkeypatch.setattr(server, "_GunicornApp", Captured)
    runner = CliRunner()
    res = runner.invoke(main, ["serve", "--no-sync"])
    assert res.exit_code == 0, res.output
    assert (seen[-1]["workers"], seen[-1]["threads"]) == (2, 2)
    assert "(2 workers x 2 threads; Ctrl+C to stop)" in res.output  # the log says what runs
    res = runner.invoke(main, ["serve", "--no-sync", "--workers", "3", "--threads", "4"])
    assert res.exit_code == 0, res.output
    assert (seen[-1]["workers"], seen[-1]["threads"]) == (3, 4)
    assert "(3 workers x 4 threads; Ctrl+C to stop)" in res.output


def test_serve_warns_when_rate_limits_are_per_worker() -> None:
    from quizapp.cli.server import rate_limit_warning

    memory = {"RATELIMIT_ENABLED": True, "RATELIMIT_STORAGE_URI": "memory://"}
    warning = rate_limit_warning(memory, 4)
    assert warning is not None and "up to 4 times" in warning
    assert "QUIZAPP_RATELIMIT_STORAGE" in warning
    assert rate_limit_warning(memory, 1) is None
    assert rate_limit_warning({**memory, "RATELIMIT_STORAGE_URI": "redis://h:6379"}, 4) is None
    assert rate_limit_warning({**memory, "RATELIMIT_ENABLED": False}, 4) is None


def test_db_upgrade_says_what_changed_and_refuses_an_older_revision(env: Path) -> None:
    """'db upgrade --revision 0001' on a database at head printed "is up to date" although
    nothing happened; now every outcome says what it did."""
    from quizapp.web.database import script_directory

    head = script_directory().get_current_head()
    runner = CliRunner()
    res = runner.invoke(main, ["db", "upgrade"])
    assert res.exit_code == 0 and f"upgraded from base (no tables) to revision {head}" in res.output
    res = runner.invoke(main, ["db", "upgrade"])
    assert res.exit_code == 0 and f"already at revision {head}: nothing to do" in res.output
    res = runner.invoke(main, ["db", "upgrade", "--revision", "0001"])
    assert res.exit_code == 1
    assert f"is at revision {head}, which is newer than 0001: nothing was done" in res.output
    assert "quizapp db downgrade 0001" in res.output
    res = runner.invoke(main, ["db", "upgrade", "--revision", "nope"])
    assert res.exit_code == 1 and "there is no revision 'nope'" in res.output


def test_db_downgrade_lists_what_it_undoes_and_asks_first(env: Path) -> None:
    import sqlite3

    from quizapp.web.database import revisions_between, script_directory

    head = script_directory().get_current_head()
    runner = CliRunner()
    assert runner.invoke(main, ["db", "upgrade"]).exit_code == 0
    res = runner.invoke(main, ["db", "downgrade", "0001"], input="n\n")
    assert res.exit_code == 1 and "Aborted" in res.output
    undone = revisions_between("0001", head)
    assert undone and all(r in res.output for r in undone)
    assert "dropped, with their data" in res.output
    # Past the stored variants: the students' numbers go with them, and the command says so.
    assert "0002_stored_variants" in undone
    assert "Warning: undoing 0002_stored_variants drops every variant's stored numbers" in (
        res.output
    )
    db_file = env / "instance" / "quizapp.sqlite"
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == head
    res = runner.invoke(main, ["db", "downgrade", "0001"], input="y\n")
    assert res.exit_code == 0 and "downgraded to 0001" in res.output
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0001"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "excusals" not in tables and "users" in tables
    res = runner.invoke(main, ["db", "downgrade", "0001"])
    assert res.exit_code == 0 and "nothing to do" in res.output
    res = runner.invoke(main, ["db", "downgrade", head])
    assert res.exit_code == 1 and "not newer than" in res.output
    res = runner.invoke(main, ["db", "upgrade"])
    assert res.exit_code == 0 and f"upgraded from 0001 to revision {head}" in res.output
