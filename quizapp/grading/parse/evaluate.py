"""Every cell of an answer evaluated into a float array (:func:`evaluate_cells`): one
character-class check for a grid of plain numbers, else cell by cell, errors naming the cell."""

from __future__ import annotations

import math
import re

import numpy as np

from quizapp.grading.parse.cells import Cells
from quizapp.grading.parse.errors import InvalidAnswer
from quizapp.grading.parse.number import _fast_number, parse_number


def _where(ndim: int, r: int, c: int) -> tuple[str, int | None, int | None]:
    if ndim == 0:
        return "the answer", None, None
    if ndim == 1:
        return f"entry {c}", None, c
    return f"row {r}, column {c}", r, c


def evaluate_cells(cells: Cells, *, allow_blank: bool = False) -> np.ndarray:
    """Evaluate every cell with :func:`parse_number`; blank cells become NaN if ``allow_blank``.

    Returns a float array of ``cells.ndim`` dimensions.  Raises :class:`InvalidAnswer` naming the
    cell ("row 2, column 1 is empty", "row 1, column 2: Division by zero.").
    """
    width = len(cells.rows[0])
    flat = _plain_values(cells.rows)
    if flat is not None:
        result = np.array(flat, dtype=float).reshape(len(cells.rows), width)
    else:
        result = _evaluate_rows(cells, allow_blank)
    if cells.ndim == 0:
        return result.reshape(())
    if cells.ndim == 1:
        return result.reshape(-1)
    return result


#: Cells joined by ``|`` holding only digits, points, e/E, signs and ``/``: see _plain_values.
_PLAIN_CELLS = re.compile(r"[0-9eE.+\-/|]+")


def _plain_values(rows: list[list[str]]) -> list[float] | None:
    """The values of a rectangular grid of cells, flat (C order), when every cell is a plain
    number or an ``a/b`` fraction without padding; else None.

    One character-class check over all cells replaces a regex per cell: on text made only of
    digits, ``.``, ``e``/``E``, signs and ``/``, Python's ``float`` accepts exactly the plain
    numbers of :data:`_FAST_NUMBER` (``inf``, ``nan``, ``_`` and spaces cannot occur), and an
    unsigned denominator is required as there.  So the same floats as :func:`_fast_number` cell
    by cell (``tests/test_perf_grading.py``).  None (the caller evaluates cell by cell, with its
    messages) for any other cell, a zero denominator or a value that is not finite.
    """
    flat = [cell for row in rows for cell in row]
    if len(flat) != len(rows) * len(rows[0]):
        return None
    joined = "|".join(flat)
    if joined.count("|") != len(flat) - 1 or not _PLAIN_CELLS.fullmatch(joined):
        return None  # a cell holding "|" would shift the cells against the matches
    out = []
    try:
        for cell in flat:
            num, slash, den = cell.partition("/")
            value = float(num)
            if slash:
                if den[:1] in "+-":  # "1/-2" (and "1/" : "" is in every string) is the parser's
                    return None
                d = float(den)
                if d == 0.0:
                    return None
                value /= d
            if value - value != 0.0:  # infinity: an overflow in the text or in the division
                return None
            out.append(value)
    except ValueError:  # "1.2.3", "1e", "1/2/3", "": the parser gives the message
        return None
    return out


def _evaluate_rows(cells: Cells, allow_blank: bool) -> np.ndarray:
    """:func:`evaluate_cells`' general path: each cell on its own, errors naming the cell."""
    values: list[list[float]] = []
    for r, row in enumerate(cells.rows, start=1):
        out: list[float] = []
        for c, cell in enumerate(row, start=1):
            fast = _fast_number(cell)
            if fast is not None:  # the common case: no message to prepare
                out.append(fast)
                continue
            out.append(_slow_cell(cell, cells.ndim, r, c, allow_blank))
        values.append(out)
    return np.array(values, dtype=float)


def _slow_cell(cell: str, ndim: int, r: int, c: int, allow_blank: bool) -> float:
    """One cell that is not a plain number: blank (NaN if ``allow_blank``) or parsed in full;
    an error names the cell (1-based ``r``, ``c``)."""
    where, rr, cc = _where(ndim, r, c)
    if not cell.strip():
        if allow_blank:
            return math.nan
        if ndim == 0:
            raise InvalidAnswer("The answer is empty.")
        raise InvalidAnswer(f"{where[0].upper()}{where[1:]} is empty.", rr, cc)
    try:
        return parse_number(cell)
    except InvalidAnswer as exc:
        if ndim == 0:
            raise
        raise InvalidAnswer(f"{where[0].upper()}{where[1:]}: {exc.message}", rr, cc) from None
