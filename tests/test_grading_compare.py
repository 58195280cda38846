"""Tolerance modes at their boundaries, checked against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp.grading import Tolerance, cells_close, check_tolerance, tolerance_bound

EXACT = Tolerance("relabs", rtol=0.0, atol=0.0)


def close(a: float, e: float, tol: Tolerance) -> bool:
    return bool(cells_close(np.array(a), np.array(e), tol))


def test_relabs_matches_numpy_isclose_away_from_the_boundary() -> None:
    rng = np.random.default_rng(0)
    e = rng.normal(size=2000) * 10.0 ** rng.integers(-5, 5, size=2000)
    a = e * (1 + rng.normal(scale=0.02, size=2000))
    tol = Tolerance("relabs", rtol=1e-2, atol=1e-8)
    ours = cells_close(a, e, tol)
    ref = np.isclose(a, e, rtol=1e-2, atol=1e-8)
    # They may differ only where |a - e| is within a few ULPs of the bound.
    bound = 1e-8 + 1e-2 * np.abs(e)
    far = np.abs(np.abs(a - e) - bound) > 1e-12 * np.maximum(np.abs(a), np.abs(e))
    assert (ours[far] == ref[far]).all()
    assert ours.any() and not ours.all()


def test_binary_floating_point_never_decides() -> None:
    key = 4 * 28 / 20 * 7
    assert key != 39.2  # the premise: 39.199999999999996
    assert close(39.2, key, EXACT)
    assert close(0.4, 0.3, Tolerance("relabs", rtol=0.0, atol=0.1))  # boundary inclusive
    assert close(0.1 + 0.2, 0.3, EXACT)
    assert not close(39.2000000001, key, EXACT)
    assert not close(0.4001, 0.3, Tolerance("relabs", rtol=0.0, atol=0.1))


def test_relabs_boundary_is_inclusive_and_exact_beyond_slack() -> None:
    tol = Tolerance("relabs", rtol=0.01, atol=0.0)
    assert close(101.0, 100.0, tol)
    assert close(99.0, 100.0, tol)
    assert not close(101.0001, 100.0, tol)
    assert not close(98.9999, 100.0, tol)


def test_zero_expected_under_pure_relative_tolerance() -> None:
    tol = Tolerance("relabs", rtol=1e-2, atol=0.0)
    assert close(0.0, 0.0, tol)
    assert close(-0.0, 0.0, tol)
    assert not close(1e-12, 0.0, tol)  # rtol * 0 = 0: only atol admits a nonzero answer
    assert close(1e-12, 0.0, Tolerance())  # default atol 1e-8


def test_default_tolerance_is_prairielearns() -> None:
    t = Tolerance()
    assert (t.mode, t.rtol, t.atol) == ("relabs", 1e-2, 1e-8)


@pytest.mark.parametrize(
    ("expected", "digits", "inside", "outside"),
    [
        # bound 0.51 * 10^-(N-1-floor(log10|e|))
        (1.234, 3, [1.23, 1.2391, 1.2289], [1.24, 1.2285, 1.2392]),
        (1234.0, 2, [1200.0, 1245.0, 1183.0, 1285.0], [1300.0, 1286.0, 1182.0]),
        (0.002689, 2, [0.0027, 0.00264, 0.002638], [0.0026, 0.002637]),
        (-5.5, 1, [-6.0, -5.0, -1.0 * 5.009], [-4.9, -6.1]),
        (0.0, 3, [0.0051, -0.0051], [0.00511, -0.0052]),  # e = 0: n = N - 1
        (1.0, 5, [1.0000, 1.000051, 0.999949], [1.0001, 0.99994]),
    ],
)
def test_sigfig_boundaries(
    expected: float, digits: int, inside: list[float], outside: list[float]
) -> None:
    tol = Tolerance("sigfig", digits=digits)
    for a in inside:
        assert close(a, expected, tol), a
    for a in outside:
        assert not close(a, expected, tol), a


@pytest.mark.parametrize(
    ("expected", "digits", "inside", "outside"),
    [
        (0.2689, 2, [0.27, 0.2638, 0.274], [0.26, 0.2637, 0.2741]),
        (1234.5678, 1, [1234.6, 1234.5627], [1234.5, 1234.6230]),
        (0.0, 3, [0.0, 0.00051], [0.00052]),
        (150.0, -2, [200.0, 100.0, 201.0, 99.0], [98.0, 202.0]),  # negative: tens/hundreds
    ],
)
def test_decdig_boundaries(
    expected: float, digits: int, inside: list[float], outside: list[float]
) -> None:
    tol = Tolerance("decdig", digits=digits)
    for a in inside:
        assert close(a, expected, tol), a
    for a in outside:
        assert not close(a, expected, tol), a


def test_tolerance_bound_formulas() -> None:
    e = np.array([1.234, 0.0, -250.0])
    np.testing.assert_allclose(
        tolerance_bound(e, Tolerance("sigfig", digits=3)), [0.0051, 0.0051, 0.51]
    )
    np.testing.assert_allclose(tolerance_bound(e, Tolerance("decdig", digits=2)), [0.0051] * 3)
    np.testing.assert_allclose(
        tolerance_bound(e, Tolerance("relabs", rtol=0.1, atol=1.0)), [1.1234, 1.0, 26.0]
    )


def test_nan_answer_cells_are_never_close() -> None:
    got = cells_close(np.array([np.nan, 1.0]), np.array([1.0, 1.0]), Tolerance())
    assert got.tolist() == [False, True]


@pytest.mark.parametrize(
    "tol",
    [
        Tolerance("relabs", rtol=-1.0),
        Tolerance("relabs", atol=float("nan")),
        Tolerance("relabs", rtol=float("inf")),
        Tolerance("sigfig", digits=None),
        Tolerance("sigfig", digits=0),
        Tolerance("decdig", digits=99),
        Tolerance("bogus"),  # type: ignore[arg-type]
    ],
)
def test_unusable_tolerances_are_rejected(tol: Tolerance) -> None:
    with pytest.raises(ValueError):
        check_tolerance(tol)
    with pytest.raises(ValueError):
        cells_close(np.array(1.0), np.array(1.0), tol)


@settings(deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_every_value_is_close_to_itself_in_every_mode(x: float) -> None:
    for tol in (EXACT, Tolerance(), Tolerance("sigfig", digits=3), Tolerance("decdig", digits=2)):
        assert close(x, x, tol)
        assert close(-0.0 if x == 0 else x, x, tol)


@pytest.mark.parametrize(
    ("key", "answer", "digits"),
    [(0.3 * 3 + 0.1, 0.998, 3), (0.7 + 0.1 + 0.1 + 0.1, 1.04, 2), (1 - 2**-53, 0.996, 3)],
)
def test_sigfig_reads_a_key_a_few_ulps_below_a_power_of_ten_as_that_power(
    key: float, answer: float, digits: int
) -> None:
    # The key is 1 up to binary rounding, so the unit is that of 1: 10**-(digits - 1).
    assert key < 1.0 and abs(key - 1.0) < 1e-15
    unit = 10.0 ** -(digits - 1)
    assert abs(answer - 1.0) < 0.51 * unit
    assert close(answer, key, Tolerance("sigfig", digits=digits))
    # ... and still not more than half a unit away.
    assert not close(1.0 - 0.6 * unit, key, Tolerance("sigfig", digits=digits))
