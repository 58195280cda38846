"""Flask's CLI conventions under ``quizapp`` (and ``flask --app quizapp.web:create_app``): the
maintainers' ``db`` commands of Flask-Migrate, ``routes`` and ``shell``; the application is built
once per command, only by commands that need it; logging is configured once (text or JSON lines)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from click.testing import CliRunner

from quizapp.cli import main
from quizapp.resources import migrations_dir

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    return tmp_path


def _head() -> str:
    script = ScriptDirectory.from_config(
        Config(str(migrations_dir() / "alembic.ini"), attributes={})
    )
    heads = script.get_heads()
    assert len(heads) == 1, heads
    return heads[0]


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def _subprocess(env: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command in a fresh interpreter: alembic prints to the ``sys.stdout`` it found when it
    was imported, which a CliRunner cannot capture."""
    environ = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        list(args), capture_output=True, text=True, cwd=env, env=environ, timeout=120
    )


def test_db_upgrade_keeps_its_output_and_flask_migrate_commands_work(env: Path) -> None:
    code, out = run("db", "upgrade")
    assert (code, out) == (
        0,
        f"Database at sqlite:///{env / 'instance' / 'quizapp.sqlite'} upgraded from base (no "
        f"tables) to revision {_head()}.\n",
    )
    before = sorted(p.name for p in (migrations_dir() / "versions").glob("*.py"))
    script = (
        "from quizapp.cli import main\n"
        "for args in (['db', 'current'], ['db', 'heads'], ['db', 'check'],\n"
        "             ['db', 'migrate', '-m', 'nothing']):\n"
        "    print('$', *args, flush=True)\n"
        "    main(args, standalone_mode=False)\n"
    )
    done = _subprocess(env, sys.executable, "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"$ db current\n{_head()} (head)\n$ db heads\n{_head()} (head)\n"
        # the models and the migrations agree: nothing to migrate, no revision written
        "$ db check\nNo new upgrade operations detected.\n$ db migrate -m nothing\n"
    )
    assert sorted(p.name for p in (migrations_dir() / "versions").glob("*.py")) == before
    assert "init" not in main.commands["db"].commands  # a second migration history: no
    # upgrade and downgrade are quizapp's own (they say what changes; downgrade asks first)
    assert main.commands["db"].commands["downgrade"].callback.__module__ == "quizapp.cli.server"


def test_flask_cli_with_the_app_factory_runs_the_same_db_commands(env: Path) -> None:
    flask = shutil.which("flask")
    assert flask is not None, "the flask command (from Flask) is not on PATH"
    base = [flask, "--app", "quizapp.web:create_app"]
    for args, expected in ((["db", "upgrade"], ""), (["db", "current"], f"{_head()} (head)\n")):
        done = _subprocess(env, *base, *args)
        assert (done.returncode, done.stdout) == (0, expected), done.stderr
    assert (env / "instance" / "quizapp.sqlite").is_file()


def test_routes_lists_the_api(env: Path) -> None:
    code, out = run("routes")
    assert code == 0
    assert "api.openapi" in out and "/api/v1/openapi.json" in out
    assert "instructor.scoreboard" in out


def test_the_pure_commands_never_build_the_app(env: Path) -> None:
    assert run("grade", "--expected", "1/3", "--answer", "0.333")[0] == 0
    assert run("--help")[0] == 0
    assert not (env / "instance").exists()


def test_one_command_builds_the_app_once(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import quizapp.web

    built = []
    real = quizapp.web.create_app

    def counting(config=None):  # noqa: ANN001, ANN202
        built.append(1)
        return real(config)

    monkeypatch.setattr(quizapp.web, "create_app", counting)
    assert run("db", "upgrade")[0] == 0
    assert built == [1]


# ---------------------------------------------------------------------------------------------
# Logging


def test_log_records_are_json_lines_with_the_setting(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from quizapp.web import create_app

    monkeypatch.setenv("QUIZAPP_LOG_FORMAT", "json")
    create_app()
    capsys.readouterr()
    logging.getLogger("quizapp.services.tokens").warning("could not record token %s", 7)
    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError:
        logging.getLogger("quizapp.web.errors").exception("unexpected error on GET /x")
    lines = capsys.readouterr().err.splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["level"], r["logger"], r["message"]) for r in records] == [
        ("WARNING", "quizapp.services.tokens", "could not record token 7"),
        ("ERROR", "quizapp.web.errors", "unexpected error on GET /x"),
    ]
    assert "ZeroDivisionError: division by zero" in records[1]["exception"]
    assert records[0]["time"].endswith("+00:00")


def test_text_logs_by_default_and_one_handler_however_many_apps(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from quizapp.web import create_app

    monkeypatch.delenv("QUIZAPP_LOG_FORMAT", raising=False)
    monkeypatch.setenv("QUIZAPP_LOG_LEVEL", "warning")
    create_app()
    create_app()
    capsys.readouterr()
    logging.getLogger("quizapp.services.sync").info("not shown at WARNING")
    logging.getLogger("quizapp.services.sync").warning("shown once")
    err = capsys.readouterr().err
    assert err.count("shown once") == 1 and "not shown" not in err
    assert " WARNING quizapp.services.sync: shown once" in err
    assert len(logging.getLogger("quizapp").handlers) == 1
    monkeypatch.delenv("QUIZAPP_LOG_LEVEL")
    create_app()  # back to the default level for the other tests


@pytest.mark.parametrize(
    "setting,value", [("QUIZAPP_LOG_FORMAT", "xml"), ("QUIZAPP_LOG_LEVEL", "loud")]
)
def test_a_bad_log_setting_is_one_line(env: Path, monkeypatch, setting: str, value: str) -> None:
    monkeypatch.setenv(setting, value)
    code, out = run("sync")
    assert code == 1 and out.startswith(f"Error: configuration: {setting} must be one of")
    assert len(out.splitlines()) == 1
