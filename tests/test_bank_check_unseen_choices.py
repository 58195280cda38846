"""``quizapp check`` warns when a ``choice`` variable never takes one of its values over many
seeds: an edit that rules out a whole class of variants (a tester's edited answer key of
15-transpose-is-not-the-inverse made two named mistakes coincide for every orthogonal A, so the
redraw removed them all, and part P's answer became always 0)."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from quizapp.bank.check import check_exercise, unseen_choices
from quizapp.bank.loader import load_bank
from quizapp.cli import main

ROOT = Path(__file__).resolve().parent.parent
PREDICT = "03-transpose-and-products/15-transpose-is-not-the-inverse"


def test_a_value_expected_often_but_never_drawn_is_named() -> None:
    choices = {"form": [0.0, 0.0, 1.0, 2.0], "s": [-1.0, 1.0]}
    drawn = {"form": {0.0}, "s": {-1.0, 1.0}}
    (message,) = unseen_choices(choices, drawn, 200)
    assert message.startswith("variable form never took 1, 2 in 200 variants")
    # Too few variants to tell a constraint from chance: nothing said (50 x 1/4 = 12.5 >= 10).
    assert unseen_choices(choices, drawn, 30) == []
    assert unseen_choices(choices, {"form": {0.0, 1.0, 2.0}, "s": {1.0, -1.0}}, 200) == []


def test_the_bundled_exercise_draws_every_form_and_the_edited_key_is_warned_of(
    tmp_path: Path,
) -> None:
    bank = load_bank(ROOT / "exercises")
    assert not [f for f in check_exercise(bank.exercises[PREDICT], range(120)) if f.warning]
    folder = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises", folder)
    path = folder / f"{PREDICT}.yaml"
    text = path.read_text(encoding="utf-8")
    edited = "    answer: 2 * (transpose(A) @ (A @ x))\n"
    path.write_text(text.replace("    answer: transpose(A) @ (A @ x)\n", edited), encoding="utf-8")
    warnings = [
        f for f in check_exercise(load_bank(folder).exercises[PREDICT], range(120)) if f.warning
    ]
    assert any("variable form never took 1, 2 in 120 variants" in w.message for w in warnings)
    quiz = folder / "03-transpose-and-products"
    for other in quiz.glob("*.yaml"):
        if other.name not in ("quiz.yaml", path.name):
            other.unlink()
    quiz_yaml = quiz / "quiz.yaml"
    lines = quiz_yaml.read_text(encoding="utf-8").splitlines()
    kept = [ln for ln in lines if not ln.lstrip().startswith("- ") or path.stem in ln]
    quiz_yaml.write_text("\n".join(kept) + "\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["check", str(quiz.parent), "--seeds", "120"])
    assert res.exit_code == 0, res.output
    assert "variable form never took 1, 2" in res.output
