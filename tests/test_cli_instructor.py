"""The instructor commands: ``export-grades``, ``regrade``, ``import-roster``, ``export-roster``,
run through click's runner against the same database a test app uses (configured by the
environment, as ``quizapp`` is in production)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_instructor_support import (
    DECK,
    SEED_SECRET,
    add_user,
    at,
    bank_app,
    stored_submissions,
    submit,
    sync,
    variant_values,
)
from test_web_support import gradebook_column

from quizapp.cli import main
from quizapp.models import User, db
from quizapp.models_instructor import PasswordReset


@pytest.fixture()
def app(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch):
    app = bank_app(tmp_path)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv("QUIZAPP_EXERCISES", str(app.config["QUIZAPP_EXERCISES"]))
    monkeypatch.setenv("QUIZAPP_SEED_SECRET", SEED_SECRET)
    return app


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def test_export_grades_writes_the_gradebook_csv(app, tmp_path: Path) -> None:
    add_user(app, "ana", display_name="-Ana")  # a display name that looks like a formula
    add_user(app, "ben")
    submit(app, "ana", DECK, "2, 5", at(1))
    submit(app, "ben", DECK, "0, 0", at(1))
    out = tmp_path / "grades.csv"
    result = run("export-grades", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "2 students" in result.output
    assert out.read_bytes().startswith(b"\xef\xbb\xbf")  # a byte order mark, as the download
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8-sig"))))
    assert [(r["username"], r["display_name"], r[gradebook_column(DECK)]) for r in rows] == [
        ("ana", "'-Ana", "10"),
        ("ben", "", "0"),
    ]
    quiz_only = run("export-grades", "--quiz", "01-linear-systems", "-o", "-")
    header = next(csv.reader(io.StringIO(quiz_only.output)))
    assert header[:3] == ["username", "display_name", "email"]
    assert all(h.startswith("01-linear-systems") for h in header[3:-3])
    unknown = CliRunner().invoke(main, ["export-grades", "--quiz", "nope", "-o", "-"])
    assert unknown.exit_code == 1 and "no quiz 'nope'" in unknown.output
    missing = CliRunner().invoke(main, ["export-grades"])
    assert missing.exit_code == 2


def test_regrade_command_dry_run_then_real(app) -> None:
    """A loosened tolerance applies to answers already given (dry run first, nothing saved);
    new numbers in the YAML do not: each student is graded on the numbers they saw."""
    add_user(app, "ana")
    submit(app, "ana", DECK, "2, 5.2", at(1))  # y is 0.2 off: wrong when exact
    assert stored_submissions(app)[0]["status"] == "partial"
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{DECK}.yaml"
    # (a looser tolerance must be stated in the prompt: an exact prompt refuses it)
    text = path.read_text().replace("y: [15, 16]", "y: [15, 17]")
    text = text.replace("Give exact values.", "Give each value to 1 significant figure.")
    path.write_text(text + "tolerance: {sigfig: 1}\n", encoding="utf-8")
    sync(app)
    dry = run("regrade", DECK, "--dry-run")
    assert dry.exit_code == 0
    assert "Dry run (nothing saved)" in dry.output and "would change 1 verdict" in dry.output
    assert "ana, variant 1): partial 0.5 -> correct 1" in dry.output
    assert "1 variant graded with a new answer key" in dry.output
    assert stored_submissions(app)[0]["status"] == "partial"
    real = run("regrade", DECK)
    assert real.exit_code == 0
    assert (
        "changed 1 verdict (unchanged: " in real.output and "and 1 student's points" in real.output
    )
    assert "ana: 5 -> 10 points (solved: no -> yes)" in real.output
    assert stored_submissions(app)[0]["status"] == "correct"
    # The student's numbers did not move to the edited YAML's y = (15, 17).
    values = variant_values(app, "ana", DECK)
    assert np.asarray(values["y"]).ravel().tolist() == [15, 16]
    unknown = CliRunner().invoke(main, ["regrade", "01-linear-systems/nope"])
    assert unknown.exit_code == 1 and "no such exercise" in unknown.output


def test_import_and_export_roster(app, tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("username,display name,email\numa,Uma U,uma@example.org\nvic,,\n", "utf-8")
    result = CliRunner().invoke(
        main, ["import-roster", str(roster), "--base-url", "https://quiz.example.org/"]
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith(("uma,", "vic,"))]
    links = dict(line.split(",", 1) for line in lines)
    assert set(links) == {"uma", "vic"}
    assert all(link.startswith("https://quiz.example.org/reset/") for link in links.values())
    assert "2 accounts created, 0 skipped" in result.output
    with app.app_context():
        assert db.session.query(PasswordReset).count() == 2
        assert {u.username for u in db.session.query(User)} == {"uma", "vic"}
    token = links["uma"].rsplit("/", 1)[1]
    assert app.test_client().get(f"/reset/{token}").status_code == 200

    again = CliRunner().invoke(main, ["import-roster", str(roster)])
    assert "0 accounts created, 2 skipped" in again.output

    bad = tmp_path / "bad.csv"
    bad.write_text("username\nfine\nnot fine\n", "utf-8")
    refused = CliRunner().invoke(main, ["import-roster", str(bad)])
    assert refused.exit_code == 1
    assert "line 3:" in refused.output and "nothing changed" in refused.output
    with app.app_context():
        assert db.session.query(User).count() == 2

    out = tmp_path / "export.csv"
    assert run("export-roster", "-o", str(out)).exit_code == 0
    assert list(csv.reader(io.StringIO(out.read_text("utf-8")))) == [
        ["username", "display_name", "email"],
        ["uma", "Uma U", "uma@example.org"],
        ["vic", "", ""],
    ]
    missing = CliRunner().invoke(main, ["import-roster", str(tmp_path / "none.csv")])
    assert missing.exit_code == 1 and "none.csv" in missing.output
