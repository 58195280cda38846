"""Compare an answer with the expected value under a :class:`~quizapp.grading.types.Tolerance`.

The three modes have PrairieLearn's meanings (``prairielearn/python/prairielearn/misc_utils``
functions ``is_correct_scalar_ra``, ``is_correct_scalar_sf``, ``is_correct_scalar_dd``):

- ``relabs``: ``|a - e| <= atol + rtol * |e|``, exactly ``numpy.isclose(a, e, rtol, atol)``.
  Defaults ``rtol=1e-2``, ``atol=1e-8`` (PrairieLearn's ``pl-number-input``/``pl-matrix-input``).
  An expected value of 0 gets no relative room (``rtol * 0 = 0``): only ``atol`` admits answers
  near 0, which is why the default ``atol`` is not 0.  With ``atol=0`` an expected 0 is still
  reachable, by typing 0 (or ``-0``) exactly.
- ``sigfig`` N: let ``n = N - 1 - floor(log10 |e|)`` (``n = N - 1`` when ``e = 0``; ``|e|`` is
  read ``SLACK_ULPS`` ulps larger, so 0.9999999999999999 counts as 1); accepted when
  ``|a - e| <= 0.51 * 10**-n``, i.e. within half a unit in the N-th significant digit of ``e``.
- ``decdig`` N: accepted when ``|a - e| <= 0.51 * 10**-N``: half a unit in the N-th decimal place.

(PrairieLearn compares with ``<``; we use ``<=`` in every mode, so boundaries are inclusive.  At 0.51
units no answer typed with N digits lies on the boundary, so the two never disagree there.)

PrairieLearn's factor 0.51 (not 0.5) keeps an answer correctly rounded to N digits inside even when
``e`` sits right at a rounding boundary; we use it too.

On top of every mode, binary floating point never decides a verdict: the bound is widened by
``SLACK_ULPS`` units in the last place of the largest magnitude involved (``4 * 2**-52 * max(|a|,
|e|, bound)``).  So a key computed as ``4*28/20*7 = 39.199999999999996`` equals a typed ``39.2`` at
zero tolerance, and ``0.4`` against ``0.3`` with ``atol=0.1`` (``0.4 - 0.3 = 0.10000000000000003``
in binary) is on the boundary, which is inclusive.  ``-0.0 == 0``.
"""

from __future__ import annotations

import math

import numpy as np

from quizapp.grading.types import Tolerance

#: Units in the last place added to every bound so that binary rounding never decides.
SLACK_ULPS = 4
_EPS = float(np.finfo(float).eps)  # 2**-52
#: PrairieLearn's factor for ``sigfig`` and ``decdig`` (half a unit, plus 2 % of a unit).
DIGITS_FACTOR = 0.51


def check_tolerance(tolerance: Tolerance) -> None:
    """Raise ``ValueError`` unless ``tolerance`` is usable (finite non-negative rtol/atol for
    ``relabs``; an integer ``digits`` >= 1 for ``sigfig``, in [-15, 15] for ``decdig``)."""
    if tolerance.mode == "relabs":
        for name in ("rtol", "atol"):
            v = getattr(tolerance, name)
            if not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
                raise ValueError(f"tolerance {name} must be a finite number >= 0, not {v!r}")
    elif tolerance.mode in ("sigfig", "decdig"):
        d = tolerance.digits
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"tolerance {tolerance.mode} needs an integer number of digits")
        if tolerance.mode == "sigfig" and not 1 <= d <= 17:
            raise ValueError("tolerance sigfig must be between 1 and 17")
        if tolerance.mode == "decdig" and not -15 <= d <= 15:
            raise ValueError("tolerance decdig must be between -15 and 15")
    else:
        raise ValueError(f"unknown tolerance mode {tolerance.mode!r}")


def tolerance_bound(expected: np.ndarray, tolerance: Tolerance) -> np.ndarray:
    """The largest accepted ``|answer - expected|`` for each cell, before the ULP slack.

    ``expected``: float array of any shape; returns a float array of the same shape.
    """
    e = np.abs(np.asarray(expected, dtype=float))
    check_tolerance(tolerance)
    if tolerance.mode == "relabs":
        return tolerance.atol + tolerance.rtol * e
    digits = tolerance.digits
    assert isinstance(digits, int)  # check_tolerance: the digit modes have an integer
    if tolerance.mode == "decdig":
        return np.full(e.shape, DIGITS_FACTOR * 10.0**-digits)
    # The magnitude of e, read as if e were a few ulps larger: a key computed as
    # 0.3*3 + 0.1 = 0.9999999999999999 has the magnitude of 1 (binary rounding never decides).
    with np.errstate(over="ignore"):
        widened = np.minimum(e * (1.0 + SLACK_ULPS * _EPS), np.finfo(float).max)
    with np.errstate(divide="ignore"):
        magnitude = np.where(e > 0, np.floor(np.log10(np.where(e > 0, widened, 1.0))), 0.0)
    n = digits - 1 - magnitude
    return DIGITS_FACTOR * np.power(10.0, -n)


def cells_close(answer: np.ndarray, expected: np.ndarray, tolerance: Tolerance) -> np.ndarray:
    """Elementwise: is each answer cell within ``tolerance`` of the expected cell?

    ``answer`` and ``expected`` are float arrays of the same (or broadcastable) shape; returns a
    bool array of the broadcast shape.  NaN cells (blanks) are never close.  Rules and sources in
    this module's docstring.  Raises ``ValueError`` for an unusable tolerance.

    Answers of at most :data:`SMALL` cells (every answer a student types here) are compared cell
    by cell on Python floats, the same IEEE operations in the same order as the array path
    (NumPy's per-call overhead is ~15-50 us, several times the arithmetic; grading calls this a
    few times per answer, the mistake detectors more): the two paths agree on every input
    (``tests/test_grading_compare_paths.py``).
    """
    a = np.asarray(answer, dtype=float)
    e = np.asarray(expected, dtype=float)
    if a.shape == e.shape and a.size <= SMALL:
        check_tolerance(tolerance)
        exp = e.ravel().tolist()
        if all(map(math.isfinite, exp)):
            close = [
                _cell_close(x, y, tolerance) for x, y in zip(a.ravel().tolist(), exp, strict=True)
            ]
            return np.array(close, dtype=bool).reshape(a.shape)
    bound = tolerance_bound(e, tolerance)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e)
        scale = np.maximum(np.maximum(np.abs(a), np.abs(e)), bound)
        ok = diff <= bound + SLACK_ULPS * _EPS * scale
    return np.asarray(ok & np.isfinite(a), dtype=bool)


#: The largest answer (cells) :func:`cells_close` compares on Python floats.
SMALL = 64


def _cell_close(a: float, e: float, tolerance: Tolerance) -> bool:
    """:func:`cells_close` of one cell: ``a`` any float, ``e`` finite; the tolerance checked."""
    if not math.isfinite(a):
        return False
    m = abs(e)
    if tolerance.mode == "relabs":
        bound = tolerance.atol + tolerance.rtol * m
    elif tolerance.mode == "decdig":
        bound = DIGITS_FACTOR * 10.0 ** -int(tolerance.digits or 0)
    else:  # sigfig, as tolerance_bound
        widened = min(m * (1.0 + SLACK_ULPS * _EPS), _MAX)
        magnitude = float(math.floor(math.log10(widened))) if m > 0 else 0.0
        bound = DIGITS_FACTOR * math.pow(10.0, -(int(tolerance.digits or 0) - 1 - magnitude))
    scale = max(max(abs(a), m), bound)
    return abs(a - e) <= bound + SLACK_ULPS * _EPS * scale


_MAX = float(np.finfo(float).max)
