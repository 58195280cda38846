"""``mistake_credit``'s plain-Python path for small arrays gives exactly the NumPy formula's shares.

Reference: ``float(np.mean(close))`` with ``close = |v - e| <= 3·10**-decimals + 0.02·|e|``
(restricted to the mask), computed here with NumPy; the rejection draws depend on every share.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from quizapp.bank.kinds import _mistakes
from quizapp.bank.kinds._mistakes import mistake_credit

values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.floats(-3, 3), st.sampled_from([0.0, 1.0])
)


def reference(exp: np.ndarray, mistakes: dict[str, np.ndarray], decimals: int, mask) -> dict:
    out = {}
    for code, v in mistakes.items():
        if v.shape != exp.shape:
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(v - exp) <= 3 * 10.0**-decimals + 0.02 * np.abs(exp)
        if mask is not None:
            close = close[mask]
        out[code] = float(np.mean(close)) if close.size else 1.0
    return out


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_small_path_equals_numpy(data: st.DataObject) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6))
    exp = data.draw(hnp.arrays(float, shape, elements=values))
    decimals = data.draw(st.integers(0, 4))
    mistakes = {}
    for code in ("a", "b", "c"):
        if data.draw(st.booleans()):
            v = data.draw(hnp.arrays(float, shape, elements=values))
        else:
            f = data.draw(st.sampled_from([0.0, 1.0, -1.0, 0.999999, 1.000001]))
            with np.errstate(invalid="ignore", over="ignore"):
                v = exp + f * (3 * 10.0**-decimals + 0.02 * np.abs(exp))
        mistakes[code] = v
    mistakes["d"] = np.zeros((7, 7))  # other shape: skipped
    mask = data.draw(st.one_of(st.none(), hnp.arrays(bool, shape)))
    original = _mistakes.mistaken_value
    _mistakes.mistaken_value = lambda code, ctx, cache=None: mistakes.get(code)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            got = mistake_credit(exp, {}, ("a", "b", "c", "d", "e"), decimals, mask)
    finally:
        _mistakes.mistaken_value = original
    assert got == reference(exp, mistakes, decimals, mask)
