"""Worked-solution values for ``expression`` exercises, written with the precision the prompt
asks for (the formulas themselves are ``quizapp.bank.expression_latex``'s).

:func:`latex_value` writes a number, vector or matrix: exact prompts get integers and fractions
(``\\frac{2}{9}``, not ``0.222222``), "N decimal places" prompts N places for every value
(the answer ``1.00``, not ``1``; an intermediate result that is an integer stays exact, ``-6``),
"N significant figures" N figures: never more digits than the prompt states.  Pure: NumPy only.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from quizapp.bank.precision import Precision, simple_fraction


def fraction_latex(x: float | Fraction, limit: int = 1000) -> str | None:
    """``x`` as an integer or a LaTeX fraction (``-\\frac{2}{9}``) when it is one with a
    denominator up to ``limit`` (within ``1e-9``, the noise a computed key may carry), else
    None (``quizapp.bank.precision.simple_fraction``)."""
    frac = simple_fraction(x, limit)
    if frac is None:
        return None
    if frac.denominator == 1:
        return str(frac.numerator)
    sign = "-" if frac < 0 else ""
    return f"{sign}\\frac{{{abs(frac.numerator)}}}{{{frac.denominator}}}"


def _cell(x: float, precision: Precision | None, final: bool) -> str:
    v = float(x)
    if abs(v) < 1e-12:
        v = 0.0
    if precision is not None and precision.mode == "decimals" and (final or not v.is_integer()):
        text = f"{v:.{precision.digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.00"
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if precision is None or precision.mode == "exact":
        return fraction_latex(v) or f"{v:.4g}"
    text = f"{v:.{precision.digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text


def rounded(value: Any, precision: Precision | None, final: bool) -> Any:
    """``value`` rounded as :func:`latex_value` shows it (for the step's display value);
    ``final`` is kept for the callers: the answer and the steps on the way are rounded alike."""
    arr = np.asarray(value, dtype=float)
    if precision is None or precision.mode == "exact":
        return arr if arr.ndim else float(arr)
    digits = precision.digits
    if precision.mode == "decimals":
        out = np.round(arr, digits) + 0.0
    else:
        out = np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[float])(arr)
    return out if out.ndim else float(out)


def latex_value(
    value: Any, precision: Precision | None, *, final: bool = False, row: bool = False
) -> str:
    """A number, vector (a column; with ``row``, a row: ``x E`` of a vector ``x`` on the left)
    or matrix as LaTeX, written as the prompt's precision says (module docstring); ``final``
    marks the answer itself (an integer answer of a "N decimal places" prompt has N places)."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        return _cell(float(arr), precision, final)
    if precision is not None and precision.mode == "decimals" and not np.all(arr == np.round(arr)):
        final = True  # one entry has decimals: every entry has N places, alike (-1.50 and -1.00)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1) if row else arr.reshape(-1, 1)
    rows = [" & ".join(_cell(v, precision, final) for v in row) for row in arr.tolist()]
    return "\\begin{pmatrix} " + " \\\\ ".join(rows) + " \\end{pmatrix}"


def relation(value: Any, precision: Precision | None, final: bool = False) -> str:
    """``=`` when :func:`latex_value` shows ``value`` exactly, ``\\approx`` when it rounds."""
    arr = np.asarray(value, dtype=float)
    shown = np.asarray(rounded(arr, precision, final), dtype=float)
    if precision is None or precision.mode == "exact":
        exact = all(fraction_latex(v) is not None for v in arr.ravel().tolist())
        return "=" if exact else "\\approx"
    return (
        "=" if np.all(np.abs(shown - arr) <= 1e-12 * np.maximum(1.0, np.abs(arr))) else "\\approx"
    )


def significant_latex(x: float, figures: int = 2) -> str:
    """``x`` to ``figures`` significant figures as LaTeX, in scientific notation when it is
    small or large (``2.1 \\times 10^{-7}``, ``0.25``): a tiny positive number written so that
    it reads as one, never as ``0.000000``."""
    text = f"{float(x):.{figures}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text
