"""Extreme magnitudes never break grading: no exception, no warning, nothing on stderr."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp.grading import Mistake, Tolerance, grade, register_detector
from quizapp.grading.mistakes import GENERIC, registered_detectors, run_detectors
from quizapp.grading.parse import parse_answer

ROOT = Path(__file__).resolve().parents[1]

EXTREMES = [
    5e-324,
    1e-320,
    2.2e-308,
    1e-200,
    1e-9,
    1.0,
    1e200,
    1e300,
    1e308,
    1.7976931348623157e308,
]

finite = st.one_of(
    st.sampled_from([*EXTREMES, *(-x for x in EXTREMES), 0.0, -0.0]),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _grade_quietly(expected: Any, answer: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return grade(expected, answer, **kw)


def _detect_directly(answer: np.ndarray, expected: np.ndarray, tolerance: Tolerance) -> None:
    """Call each generic detector itself (not through run_detectors, which would hide a raise)."""
    ctx = {"tolerance": tolerance, "mask": None}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for code in GENERIC:
            found = registered_detectors()[code](answer, expected, ctx)
            assert found is None or isinstance(found, Mistake)


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("1", "1e300"),
        ("5e-324", "1"),
        ("1e-320", "1"),
        ("2.2e-308", "1e300"),
        ("[1e308, 1e308]", "[1e308, -1e308]"),
        ("[5e-324, 5e-324]", "[1e308, 1e308]"),
        ("[[1e308, 1e-308], [1, 5e-324]]", "[[-1e308, 1e308], [1e-308, 1e308]]"),
    ],
)
def test_extreme_pairs_give_a_verdict_without_warnings(expected: str, answer: str) -> None:
    v = _grade_quietly(expected, answer)
    assert v.status in ("incorrect", "partial")
    for tolerance in (Tolerance(), Tolerance(rtol=0, atol=0), Tolerance("sigfig", digits=3)):
        _detect_directly(parse_answer(answer), parse_answer(expected), tolerance)


@settings(deadline=None, max_examples=300)
@given(
    st.integers(0, 2).flatmap(
        lambda ndim: st.tuples(
            st.just(ndim),
            st.lists(
                st.tuples(finite, finite), min_size=1 if ndim == 0 else 2, max_size=4 if ndim else 1
            ),
        )
    ),
    st.sampled_from(
        [
            Tolerance(),
            Tolerance(rtol=0, atol=0),
            Tolerance("sigfig", digits=3),
            Tolerance("decdig", digits=2),
        ]
    ),
)
def test_any_finite_floats_grade_without_exception_or_warning(
    case: tuple[int, list[tuple[float, float]]], tolerance: Tolerance
) -> None:
    ndim, pairs = case
    exp = np.array([p[0] for p in pairs])
    ans = np.array([p[1] for p in pairs])
    if ndim == 0:
        exp, ans = exp.reshape(()), ans.reshape(())
    elif ndim == 2:
        exp, ans = exp.reshape(1, -1), ans.reshape(1, -1)
    grid = [[repr(float(x)) for x in np.atleast_1d(ans).ravel()]]
    v = _grade_quietly(exp, grid, tolerance=tolerance)
    assert v.status in ("correct", "partial", "incorrect")
    _detect_directly(ans, exp, tolerance)
    if ans.ndim == 2:
        _detect_directly(ans.T, exp, tolerance)
        _detect_directly(ans, exp.T, tolerance)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_detectors(ans, exp, {"tolerance": tolerance, "mask": None})


@register_detector("_test_broken")
def _broken(answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]) -> Mistake | None:
    raise ZeroDivisionError("a detector bug")


@register_detector("_test_noisy")
def _noisy(answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]) -> Mistake | None:
    np.float64(1e308) * np.float64(1e308)  # noqa: B018 (an overflow warning, on purpose)
    warnings.warn("a detector's own warning", UserWarning, stacklevel=1)
    return Mistake("_test_noisy", "noisy but found it")


def test_a_detector_that_raises_or_warns_is_skipped_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO")
    v = _grade_quietly("[1, 2]", "[1, 3]", detectors=["_test_broken", "_test_noisy"])
    assert v.status == "partial" and v.score == 0.5
    assert "_test_noisy" in v.mistake_codes and "_test_broken" not in v.mistake_codes
    assert not [r for r in caplog.records if r.levelno >= 20]


@pytest.mark.parametrize(
    "args",
    [
        ["--expected", "1", "--answer", "1e300"],
        ["--expected", "5e-324", "--answer", "1"],
        ["--expected", "[1e308,1e308]", "--answer", "[1e308,-1e308]"],
    ],
)
def test_cli_prints_nothing_on_stderr_at_extremes(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "quizapp.cli", "grade", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert proc.stdout.startswith(("incorrect", "partial"))
