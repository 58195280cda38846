"""docs/deadlines.md: its ``quiz.yaml`` loads as described, and every command of its console
blocks prints exactly what the page shows (on SQLite and PostgreSQL, with
``QUIZAPP_TIMEZONE=America/Chicago`` and students ana, ben and cleo, as the page says)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select
from test_web_support import EXERCISES, make_app

from quizapp import services
from quizapp.bank import load_bank
from quizapp.cli import main
from quizapp.models import Progress, db

DOC = Path(__file__).resolve().parent.parent / "docs" / "deadlines.md"
ZONE = "America/Chicago"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _commands() -> list[tuple[str, str]]:
    """(command line, expected output) of every ``$ `` line of the console blocks."""
    out: list[tuple[str, str]] = []
    for block in _blocks("console"):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, printed = chunk.partition("\n")
            out.append((command, printed))
    return out


@pytest.fixture()
def env(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    bank = tmp_path / "exercises"
    shutil.copytree(EXERCISES / "01-linear-systems", bank / "01-linear-systems")
    (bank / "01-linear-systems" / "quiz.yaml").write_text(_blocks("yaml")[0], encoding="utf-8")
    app = make_app(tmp_path, QUIZAPP_EXERCISES=bank, QUIZAPP_TIMEZONE=ZONE)
    with app.app_context():
        assert services.sync_folder(db.session, bank, ZONE).errors == []
        for name in ("ana", "ben", "cleo"):
            services.create_user(db.session, name, "correct horse")
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv("QUIZAPP_EXERCISES", str(bank))
    monkeypatch.setenv("QUIZAPP_TIMEZONE", ZONE)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "section-b.csv").write_text(_blocks("csv")[0], encoding="utf-8")
    return bank


def test_the_quiz_yaml_of_the_page_reads_as_it_says(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    folder = tmp_path / "b" / "q"
    folder.mkdir(parents=True)
    shutil.copy(EXERCISES / "01-linear-systems" / "05-deck-system.yaml", folder / "x.yaml")
    (folder / "quiz.yaml").write_text(_blocks("yaml")[0], encoding="utf-8")
    bank = load_bank(tmp_path / "b", ZONE)
    assert bank.errors == [] and bank.warnings == []
    quiz = bank.quizzes["q"]
    assert quiz.opens == datetime(2026, 11, 23, 15, 0, tzinfo=UTC)  # 09:00 CST
    assert quiz.closes == datetime(2026, 12, 2, 6, 0, tzinfo=UTC)  # end of 2026-12-01 CST
    assert quiz.late == [
        (datetime(2026, 12, 9, 5, 59, tzinfo=UTC), 0.5),
        (datetime(2026, 12, 16, 6, 0, tzinfo=UTC), 0.25),
    ]


def test_every_command_of_the_page_prints_what_it_shows(env: Path) -> None:
    commands = _commands()
    assert len(commands) >= 10
    assert {c.split()[1] for c, _ in commands} == {"extend", "override"}
    runner = CliRunner()
    for command, printed in commands:
        args = shlex.split(command)
        assert args[0] == "quizapp"
        result = runner.invoke(main, args[1:], catch_exceptions=False)
        assert result.output == printed, command
        assert result.exit_code == (1 if printed.startswith("Error: ") else 0), command


def test_remove_with_new_values_is_refused_and_changes_nothing(env: Path) -> None:
    runner = CliRunner()
    deck, quiz = "01-linear-systems/05-deck-system", "01-linear-systems"
    set_it = ["override", deck, "ana", "--points", "5", "--reason", "answered on paper"]
    assert runner.invoke(main, set_it).exit_code == 0
    both = runner.invoke(main, ["override", deck, "ana", "--points", "7", "--remove"])
    assert both.exit_code == 2 and "--remove takes no --points (nothing changed)" in both.output
    again = runner.invoke(main, ["extend", quiz, "ana", "--until", "2026-12-10 12:00", "--remove"])
    assert again.exit_code == 2 and "--remove takes no --until or --credit" in again.output
    from quizapp.web import create_app

    with create_app().app_context():
        ana = services.find_user(db.session, "ana")
        row = db.session.scalar(
            select(Progress).where(Progress.exercise_id == deck, Progress.user_id == ana.id)
        )
        assert row is not None and row.override_points == 5.0  # the refused command changed nothing
