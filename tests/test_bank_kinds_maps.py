"""Multiple-choice linearity exercises: every wrong pick is explained in a whole sentence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quizapp.bank import load_bank

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")
SENTENCE = re.compile(
    r"^Option \([a-d]\) is (not linear: it [a-z]|linear: each component is of the form ax \+ by\.$)"
)


@pytest.mark.parametrize(
    "exercise_id",
    ["02-matrices-and-maps/03-which-is-linear", "02-matrices-and-maps/04-which-is-not-linear"],
)
def test_wrong_choice_messages_read_as_sentences(exercise_id: str) -> None:
    reasons: set[str] = set()
    for seed in range(60):
        variant = BANK.exercises[exercise_id].generate(seed)
        for code, message in variant.context["choice_mistakes"].values():
            assert code in {"not_linear", "is_linear"}
            assert SENTENCE.match(message), message
            reasons.add(message.split(":", 1)[1].split(",")[0])
    assert len(reasons) >= 1
