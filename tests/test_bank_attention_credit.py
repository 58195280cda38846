"""No named attention mistake earns more than half the credit (200 seeds per exercise).

A value column that is constant makes every output in that column right whatever the weights,
so wrong weights (no 1/sqrt(d), KQ^T, softmax by columns) used to earn free partial credit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizapp import linalg
from quizapp.bank.answers import grade_answer
from quizapp.bank.kinds._mistakes import mistaken_value
from quizapp.bank.loader import load_bank

ROOT = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(ROOT)
NAMED = ("missing_scale", "scores_transposed", "softmax_axis", "missing_softmax")
ATTENTION = sorted(
    ex.id
    for ex in BANK.exercises.values()
    if ex.kind.name in ("attention", "self_attention", "attention_fill", "multi_head_attention")
)


def _text(a: np.ndarray) -> str:
    return "[" + ", ".join("[" + ", ".join(repr(float(x)) for x in r) + "]" for r in a) + "]"


@pytest.mark.parametrize("exercise_id", ATTENTION)
def test_no_named_mistake_gets_more_than_half(exercise_id: str) -> None:
    ex = BANK.exercises[exercise_id]
    for seed in range(200):
        v = ex.generate(seed)
        # The attention family guarantees NAMED on every variant; multi-head guarantees the
        # mistakes it names (its detectors).
        guarded = NAMED if v.context.get("family") == "attention" else ()
        codes = set(v.detectors) | set(guarded)
        for code in sorted(codes):
            wrong = mistaken_value(code, v.context)
            if wrong is None or np.shape(wrong) != np.shape(v.expected):
                continue
            score = grade_answer(v, _text(np.asarray(wrong))).score
            assert score <= 0.5, f"{exercise_id} seed {seed}: {code} scores {score}"


def _mistakes_single_query(q: np.ndarray, k: np.ndarray, vv: np.ndarray) -> dict[str, np.ndarray]:
    d = q.shape[1]
    s = q @ k.T
    return {
        "missing_scale": linalg.softmax(s) @ vv,
        "scale_by_d": linalg.softmax(s / d) @ vv,
        "missing_softmax": (s / np.sqrt(d)) @ vv,
    }


def test_expression_attention_has_no_free_credit() -> None:
    ex = BANK.exercises["05-attention/10-attention-expression"]
    for seed in range(200):
        v = ex.generate(seed)
        q, k, vv = (np.asarray(v.values[n]) for n in ("q", "K", "V"))
        assert np.all(np.ptp(vv, axis=0) > 0), f"seed {seed}: V has a constant column"
        for code, wrong in _mistakes_single_query(q, k, vv).items():
            if np.allclose(wrong, v.expected):
                continue
            score = grade_answer(v, _text(wrong)).score
            assert score <= 0.5, f"seed {seed}: {code} scores {score}"
