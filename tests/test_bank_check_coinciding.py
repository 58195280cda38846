"""``quizapp check`` warns of the seeds where two named mistakes of an exercise give one answer.

The bundled kinds draw such a variant again (``Kind.redraw_coinciding``, tests/test_bank_distinct.py),
so these tests draw as before that revision (the ``no_redraws`` fixture) to see the warning:
09-ba-given-ab's AB is then sometimes symmetric."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from quizapp.bank.check import COINCIDE, check_exercise, check_variant, coinciding_mistakes
from quizapp.bank.loader import load_bank
from quizapp.cli import main

ROOT = Path(__file__).resolve().parent.parent
BANK = load_bank(ROOT / "exercises")
BA = "03-transpose-and-products/09-ba-given-ab"
STEPS = "05-attention/06a-multi-head-step-by-step"


pytestmark = pytest.mark.usefixtures("no_redraws")


def _ab_symmetric(seed: int) -> bool:
    v = BANK.exercises[BA].generate(seed)
    ab = np.asarray(v.context["A"], dtype=float) @ np.asarray(v.context["B"], dtype=float)
    return bool(np.allclose(ab, ab.T))


def test_coinciding_mistakes_are_the_pairs_with_one_value() -> None:
    ex = BANK.exercises[BA]
    for seed in range(20):
        pairs = coinciding_mistakes(ex.generate(seed))
        # AB (the wrong order) equals (AB)^T exactly when AB is symmetric.
        assert pairs == ([("wrong_order", "ab_transposed")] if _ab_symmetric(seed) else []), seed


def test_coinciding_mistakes_of_parts_are_named_by_part() -> None:
    ex = BANK.exercises[STEPS]
    pairs = [p for seed in range(12) for p in coinciding_mistakes(ex.generate(seed))]
    assert pairs and all("." in a and a.split(".")[0] == b.split(".")[0] for a, b in pairs)


def test_check_counts_the_seeds_as_one_warning_not_a_failure() -> None:
    seeds = list(range(20))
    symmetric = [s for s in seeds if _ab_symmetric(s)]
    assert symmetric  # seed 1 and 13 and 15 among them
    _, fails = check_variant(BANK.exercises[BA], symmetric[0])
    assert [f.warning for f in fails] == [True]
    assert str(fails[0]).startswith(f"warning: {BA} seed {symmetric[0]}: {COINCIDE}: ")
    failures = check_exercise(BANK.exercises[BA], seeds)
    assert len(failures) == 1 and failures[0].warning
    assert failures[0].count == len(symmetric)
    assert f"in {len(symmetric)} of 20 seeds" in failures[0].message
    assert "wrong_order = ab_transposed" in failures[0].message


def test_the_cli_warns_and_still_passes() -> None:
    path = ROOT / "exercises" / f"{BA}.yaml"
    result = CliRunner().invoke(main, ["check", str(path), "--seeds", "20"])
    assert result.exit_code == 0, result.output
    assert "0 failures in 0 exercises." in result.stdout
    assert COINCIDE not in result.stdout
    assert COINCIDE in result.stderr
    assert "have named mistakes that give the same answer (not a failure)" in result.stderr
