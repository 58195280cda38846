"""Row reduction in exact fractions, written out for worked solutions (Gauss-Jordan elimination).

The kinds use it to show the steps of a 3x3 system (``[A | y]`` reduced until the left part is
``I``) and of a 3x3 inverse (``[A | I]`` reduced until it is ``[I | A^{-1}]``).  Every entry is
a :class:`fractions.Fraction`, so the steps show ``\\frac{1}{2}``, never ``0.4999999``.  Not a
kind module: it registers nothing.  Pure (``fractions`` only).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from quizapp.bank.formula import fraction_latex

Matrix = list[list[Fraction]]


def frac_latex(x: Fraction) -> str:
    """``3``, ``-\\frac{1}{2}``."""
    return fraction_latex(x) or str(x)


def augmented_latex(M: Matrix, left: int) -> str:
    """The augmented matrix as a LaTeX array with a bar after the first ``left`` columns."""
    spec = "c" * left + "|" + "c" * (len(M[0]) - left)
    rows = " \\\\ ".join(" & ".join(frac_latex(v) for v in row) for row in M)
    return f"\\left(\\begin{{array}}{{{spec}}} {rows} \\end{{array}}\\right)"


def _factor(c: Fraction) -> str:
    """A row multiplier as LaTeX: ``2``, ``\\tfrac{3}{5}``."""
    if c.denominator == 1:
        return str(c.numerator)
    sign = "-" if c < 0 else ""
    return f"{sign}\\tfrac{{{abs(c.numerator)}}}{{{c.denominator}}}"


def as_fractions(matrix: Sequence[Sequence[float]] | np.ndarray) -> Matrix:
    """A matrix of floats (integers or short decimals) as exact fractions."""
    return [[Fraction(float(v)).limit_denominator(10**6) for v in row] for row in matrix]


def gauss_jordan(
    matrix: Sequence[Sequence[float]] | np.ndarray, left: int
) -> list[tuple[str, Matrix]]:
    """Reduce ``matrix`` (its first ``left`` columns square and invertible) to ``[I | ...]``.

    Returns one ``(operations, matrix after them)`` per pivot column: the row operations in
    LaTeX (``R_1 \\leftrightarrow R_2``, ``R_1 \\leftarrow \\tfrac{1}{2} R_1``, ``R_2 \\leftarrow
    R_2 - 3R_1``) and the matrix they give.  The pivot of column ``j`` is the first row from
    ``j`` down with a non-zero entry (a swap brings it up).  Raises ``ValueError`` when the left
    part is singular.
    """
    M = as_fractions(matrix)
    n = left
    out: list[tuple[str, Matrix]] = []
    for j in range(n):
        ops: list[str] = []
        pivot = next((i for i in range(j, n) if M[i][j] != 0), None)
        if pivot is None:
            raise ValueError("the matrix is singular")
        if pivot != j:
            M[j], M[pivot] = M[pivot], M[j]
            ops.append(f"R_{j + 1} \\leftrightarrow R_{pivot + 1}")
        p = M[j][j]
        if p != 1:
            M[j] = [v / p for v in M[j]]
            ops.append(f"R_{j + 1} \\leftarrow {_factor(1 / p)} R_{j + 1}")
        for i in range(n):
            c = M[i][j]
            if i == j or c == 0:
                continue
            M[i] = [a - c * b for a, b in zip(M[i], M[j], strict=True)]
            sign, mag = ("-", c) if c > 0 else ("+", -c)
            coef = "" if mag == 1 else _factor(mag)
            ops.append(f"R_{i + 1} \\leftarrow R_{i + 1} {sign} {coef}R_{j + 1}")
        out.append((", ".join(ops) if ops else "nothing to do", [row[:] for row in M]))
    return out
