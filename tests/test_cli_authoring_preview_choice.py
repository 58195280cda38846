"""preview shows a choice/index answer as a student types it, consistent with grade_answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizapp.bank.answers import grade_answer
from quizapp.bank.loader import load_bank
from quizapp.cli import main

ROOT = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(ROOT)
PICKS = sorted(
    ex.id
    for ex in BANK.exercises.values()
    if ex.generate(0).answer_form.type in ("choice", "index")
)


def _expected_block(out: str) -> str:
    return out.split("Expected answer:")[1].split("as typed")[0].strip()


@pytest.mark.parametrize("exercise_id", PICKS)
@pytest.mark.parametrize("seed", [0, 5, 11])
def test_preview_expected_pick_grades_correct(exercise_id: str, seed: int) -> None:
    result = CliRunner().invoke(
        main, ["preview", exercise_id, "--seed", str(seed), "--bank", str(ROOT)]
    )
    assert result.exit_code == 0, result.output
    shown = _expected_block(result.output)
    v = BANK.exercises[exercise_id].generate(seed)
    if v.answer_form.type == "choice":
        m = re.match(r"\(([a-z])\), option (\d+): ", shown)
        assert m, shown
        letter, number = m.group(1), int(m.group(2))
        assert number == int(v.expected) + 1  # 1-based, as the options are listed
        assert ord(letter) - ord("a") + 1 == number
        assert grade_answer(v, letter).status == "correct"
        assert f"({letter}) {v.answer_form.choices[number - 1]}" in result.output
    else:
        number = int(shown.split(":")[0])
    assert grade_answer(v, str(number)).status == "correct"


def test_the_reported_variant_shows_option_3() -> None:
    result = CliRunner().invoke(
        main,
        [
            "preview",
            "02-matrices-and-maps/04-which-is-not-linear",
            "--seed",
            "5",
            "--bank",
            str(ROOT),
        ],
    )
    v = BANK.exercises["02-matrices-and-maps/04-which-is-not-linear"].generate(5)
    assert _expected_block(result.output).startswith(
        f"({'abcd'[int(v.expected)]}), option {int(v.expected) + 1}:"
    )
