"""Named product mistakes: AB - BA answered as zero, BA answered as (AB)^T."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from quizapp.bank.answers import grade_answer
from quizapp.bank.loader import load_bank

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")


def _text(a: np.ndarray) -> str:
    return "[" + ", ".join("[" + ", ".join(repr(float(x)) for x in r) + "]" for r in a) + "]"


def test_commutator_answered_as_zero_is_named() -> None:
    ex = BANK.exercises["03-transpose-and-products/08-non-commutativity"]
    for seed in range(20):
        v = ex.generate(seed)
        n = np.shape(v.expected)[0]
        verdict = grade_answer(v, _text(np.zeros((n, n))))
        assert verdict.status != "correct"
        assert [m.code for m in verdict.mistakes] == ["assumed_commutative"], seed


def test_ba_answered_as_ab_transposed_is_named() -> None:
    ex = BANK.exercises["03-transpose-and-products/09-ba-given-ab"]
    named = 0
    for seed in range(20):
        v = ex.generate(seed)
        a, b = v.context["A"], v.context["B"]
        wrong = (a @ b).T
        if np.allclose(wrong, b @ a):
            continue
        verdict = grade_answer(v, _text(wrong))
        assert "ab_transposed" in [m.code for m in verdict.mistakes], seed
        named += 1
    assert named > 10
