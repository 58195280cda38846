"""Golden draws: what every kind draws, and the expected answer it computes, for the bank's YAML
texts as they were before the second edition of the course (``tests/golden/bank/``), never change.

Variants shown to students of release 0.1 were generated from those texts, and the upgrade that
stores them (``migrations/versions/0002_stored_variants.py``) draws them again at every kind's
first draw revision (``quizapp.bank.types.FIRST_REVISION``): at that revision they must be the
same ones.  New behaviour goes behind new params, new kinds, new exercises or a new draw revision
(``Kind.revision``, for new variants only).  The digests in
``tests/golden/draws.json`` hash, per exercise and seed (0..39), every drawn value (numbers as
float64 bytes rounded to 8 decimals, text as UTF-8) and the expected answer.  Regenerate them
only for a deliberate, reviewed change of the snapshot itself: ``python tests/test_bank_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from quizapp.bank.kinds import get_kind
from quizapp.bank.loader import load_exercise_source
from quizapp.bank.types import FIRST_REVISION, Variant

HERE = Path(__file__).resolve().parent
SNAPSHOT = HERE / "golden" / "bank"
DIGESTS = HERE / "golden" / "draws.json"
SEEDS = range(40)
#: The decimals a number is compared to (see ``_feed``).
DECIMALS = 8


def _feed(h: Any, value: Any) -> None:
    if isinstance(value, str):
        h.update(b"s" + value.encode("utf-8"))
    elif isinstance(value, (list, tuple)) and not all(
        isinstance(x, (int, float, np.number)) for x in value
    ):
        h.update(b"l%d" % len(value))
        for item in value:
            _feed(h, item)
    else:
        # Rounded to 8 decimals (and -0.0 folded into 0.0): the same draw computes its expected
        # answer to the last bit differently on another CPU, as NumPy's exp and OpenBLAS pick
        # their SIMD kernels by processor (AVX2 and AVX-512 differ in the last ulp).  Drawn
        # numbers are small rationals, so 8 decimals still tell any other draw apart.
        arr = np.round(np.asarray(value, dtype=float), DECIMALS) + 0.0
        h.update(b"a" + repr(arr.shape).encode() + arr.tobytes())


#: The built-in kinds of the snapshot: each one's defaults (``params: {}``) must draw as before.
KINDS = [
    "attention", "attention_argmax", "attention_fill", "basis_coordinates", "composition",
    "inverse", "line_points", "linear_equation", "linear_system", "linearity_choice",
    "linearity_compute", "map_matrix", "matrix_product", "matrix_vector", "multi_head_attention",
    "non_commutativity", "retrieval_rank", "retrieval_scores", "row_times_column",
    "self_attention", "softmax", "system_matrix_form", "transpose",
]  # fmt: skip


def fingerprint(values: dict[str, Any], expected: Any) -> str:
    """SHA-256 (first 16 hex digits) of a variant's drawn values and expected answer."""
    h = hashlib.sha256()
    for key in sorted(values):
        h.update(b"k" + key.encode())
        _feed(h, values[key])
    h.update(b"expected")
    _feed(h, expected)
    return h.hexdigest()[:16]


def snapshot_ids() -> list[str]:
    exercises = sorted(f"{p.parent.name}/{p.stem}" for p in SNAPSHOT.glob("*/*.yaml"))
    return exercises + [f"kind:{name}" for name in KINDS]


def compute(case: str) -> list[str]:
    if case.startswith("kind:"):
        kind = get_kind(case.removeprefix("kind:"))
        params = kind.params_at(kind.Params.model_validate({}), FIRST_REVISION)
        drawn = [kind.generate(params, np.random.default_rng(seed)) for seed in SEEDS]
        return [fingerprint(g.values, g.expected) for g in drawn]
    source = (SNAPSHOT / f"{case}.yaml").read_text(encoding="utf-8")
    exercise = load_exercise_source(case, source)
    variants: list[Variant] = [exercise.generate(seed, FIRST_REVISION) for seed in SEEDS]
    return [fingerprint(v.values, v.expected) for v in variants]


def test_the_snapshot_is_complete() -> None:
    stored = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert sorted(stored) == sorted(snapshot_ids())
    assert len(stored) == 54 + len(KINDS)


@pytest.mark.parametrize("case", snapshot_ids())
def test_old_yaml_texts_draw_what_they_drew(case: str) -> None:
    stored = json.loads(DIGESTS.read_text(encoding="utf-8"))[case]
    got = compute(case)
    changed = [seed for seed in SEEDS if got[seed] != stored[seed]]
    assert not changed, f"{case}: seeds {changed} draw other values or expected answers"


if __name__ == "__main__":  # pragma: no cover - regenerating the digests is a deliberate act
    digests = {case: compute(case) for case in snapshot_ids()}
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(digests)} exercises x {len(SEEDS)} seeds to {DIGESTS}", file=sys.stderr)
