"""``distinct``'s plain-Python path for small arrays decides exactly as NumPy's ``isclose``.

The reference is ``np.isclose(b, a, rtol=0.05, atol=3 * 10**-decimals)`` (NumPy's documented
formula ``|b - a| <= atol + rtol * |a|``, with equal infinities close and NaN never close),
computed here directly; rejection sampling depends on every decision, so they must be identical.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from quizapp.bank.kinds._util import _SMALL, distinct


def reference(a: np.ndarray, b: np.ndarray, decimals: int) -> bool:
    with np.errstate(invalid="ignore", over="ignore"):
        return not np.isclose(b, a, rtol=0.05, atol=3 * 10.0**-decimals).all()


values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-10, 10),
    st.integers(-5, 5).map(float),
)


@st.composite
def pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=8))
    a = draw(hnp.arrays(float, shape, elements=values))
    decimals = draw(st.integers(0, 6))
    # b: a copy nudged near the tolerance bound in some cells, or arbitrary values
    if draw(st.booleans()):
        b = draw(hnp.arrays(float, shape, elements=values))
    else:
        factor = draw(st.sampled_from([0.0, 1.0, 0.999999, 1.000001, -1.0]))
        bound = 3 * 10.0**-decimals + 0.05 * np.abs(a)
        with np.errstate(invalid="ignore", over="ignore"):
            b = a + factor * bound
    return a, b, decimals


@settings(max_examples=600, deadline=None)
@given(pairs())
def test_small_path_equals_isclose(case: tuple[np.ndarray, np.ndarray, int]) -> None:
    a, b, decimals = case
    assert a.size <= _SMALL
    assert distinct(a, b, decimals) == reference(a, b, decimals)


def test_large_arrays_and_shapes() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(size=(10, 10))
    assert distinct(a, a) is False
    b = a.copy()
    b[3, 4] += 1.0
    assert distinct(a, b) is True and reference(a, b, 2) is True
    assert distinct(np.zeros((2, 2)), np.zeros((2, 3))) is True
    assert distinct([1.0, 2.0], [1.0, 2.04]) is False  # 0.04 <= 0.03 + 0.05 * 2
    assert distinct([1.0, 2.0], [1.0, 2.2]) is True
