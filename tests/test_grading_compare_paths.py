"""``cells_close`` compares small answers cell by cell on Python floats and larger ones with
NumPy arrays (``quizapp.grading.compare``): the two paths give the same verdict on every input,
blanks (NaN), infinities, zeros, subnormals and powers of ten included, in every tolerance mode.
The array path is the reference (the rules of the module docstring, PrairieLearn's)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp.grading import Tolerance, cells_close, compare


def _by_arrays(answer: list[float], expected: list[float], tolerance: Tolerance) -> list[bool]:
    """The array path alone (answers of any size take it above ``SMALL`` cells)."""
    original = compare.SMALL
    compare.SMALL = -1
    try:
        return cells_close(np.array(answer), np.array(expected), tolerance).tolist()
    finally:
        compare.SMALL = original


_TOLERANCES = st.one_of(
    st.builds(
        Tolerance,
        mode=st.just("relabs"),
        rtol=st.sampled_from([0.0, 1e-9, 1e-2, 0.05, 0.5]),
        atol=st.sampled_from([0.0, 1e-8, 1e-3, 0.1, 1.0]),
    ),
    st.builds(Tolerance, mode=st.just("sigfig"), digits=st.integers(1, 17)),
    st.builds(Tolerance, mode=st.just("decdig"), digits=st.integers(-15, 15)),
)
_EXPECTED = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-330, 308).map(lambda k: 10.0**k),
    st.integers(-300, 300).map(lambda k: math.nextafter(10.0**k, 0.0)),
    st.sampled_from([0.0, -0.0, 5e-324, 1.0, -1.0, 0.1, 0.3, 1 / 3]),
)


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[float], list[float], Tolerance]:
    expected = draw(st.lists(_EXPECTED, min_size=1, max_size=6))
    answer = []
    for e in expected:
        near = st.sampled_from([e, math.nextafter(e, math.inf), math.nextafter(e, -math.inf)])
        off = st.floats(-0.6, 0.6).map(lambda f, e=e: e * (1 + f) + f)
        rounded = st.integers(0, 8).map(lambda d, e=e: round(e, d))
        special = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -e])
        answer.append(draw(st.one_of(near, off, rounded, special, st.floats())))
    return answer, expected, draw(_TOLERANCES)


@settings(max_examples=1000, deadline=None)
@given(_cases())
def test_the_cell_path_agrees_with_the_array_path(case) -> None:
    answer, expected, tolerance = case
    fast = cells_close(np.array(answer), np.array(expected), tolerance).tolist()
    assert fast == _by_arrays(answer, expected, tolerance)


def test_boundaries_are_inclusive_on_both_paths() -> None:
    """Hand-picked: 0.4 against 0.3 with atol 0.1 is on the boundary (inclusive); a key computed
    as 39.199999999999996 equals a typed 39.2 at zero tolerance; half a unit (x 1.02) in the
    third significant figure is in, 0.52 units is out; a blank never is."""
    cases = [
        ([0.4], [0.3], Tolerance(rtol=0.0, atol=0.1), [True]),
        ([39.2], [4 * 28 / 20 * 7], Tolerance(rtol=0.0, atol=0.0), [True]),
        ([1.2351], [1.23], Tolerance(mode="sigfig", digits=3), [True]),
        ([1.2352], [1.23], Tolerance(mode="sigfig", digits=3), [False]),
        ([math.nan, 2.0], [1.0, 2.0], Tolerance(), [False, True]),
    ]
    for answer, expected, tolerance, want in cases:
        assert cells_close(np.array(answer), np.array(expected), tolerance).tolist() == want
        assert _by_arrays(answer, expected, tolerance) == want


def test_an_unusable_tolerance_is_refused_on_the_cell_path_too() -> None:
    with pytest.raises(ValueError, match="rtol"):
        cells_close(np.array([1.0]), np.array([1.0]), Tolerance(rtol=-1.0))
    with pytest.raises(ValueError, match="sigfig"):
        cells_close(np.array([1.0]), np.array([1.0]), Tolerance(mode="sigfig", digits=0))
