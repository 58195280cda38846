"""The raw cells of an answer before evaluation (:class:`Cells`), and the grid a web form posts
(a list of rows of cell strings) checked into them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quizapp.grading.parse.errors import MAX_ANSWER_CHARS, MAX_CELLS, InvalidAnswer


@dataclass
class Cells:
    """The raw cells of an answer before evaluation: ``rows`` of cell strings and its ``ndim``.

    ``ndim`` 0 has one row of one cell; ndim 1 has one row.
    """

    ndim: int
    rows: list[list[str]]


def _check_rectangular(rows: Sequence[Sequence[object]]) -> None:
    width = len(rows[0])
    for r, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            raise InvalidAnswer(
                f"Row {r} has {len(row)} {'entry' if len(row) == 1 else 'entries'}, "
                f"row 1 has {width}.",
                row=r,
            )


def _grid_cells(grid: Sequence[Sequence[object]]) -> Cells:
    """Validate a posted grid (list of rows of strings); ``None`` is a blank cell."""
    if not isinstance(grid, Sequence) or isinstance(grid, str | bytes):
        raise InvalidAnswer("The answer must be text or a grid of cells.")
    if len(grid) == 0:
        raise InvalidAnswer("The answer is empty.")
    if len(grid) > MAX_CELLS:
        raise InvalidAnswer(f"The answer has too many entries (at most {MAX_CELLS:,}).")
    rows: list[list[str]] = []
    count = chars = 0
    for r, row in enumerate(grid, start=1):
        if not isinstance(row, Sequence) or isinstance(row, str | bytes):
            raise InvalidAnswer(f"Row {r} is not a list of cells.", row=r)
        count += len(row)
        if count > MAX_CELLS:
            raise InvalidAnswer(f"The answer has too many entries (at most {MAX_CELLS:,}).")
        cells = []
        for c, cell in enumerate(row, start=1):
            if cell is None:
                cell = ""
            if not isinstance(cell, str):
                raise InvalidAnswer(f"Row {r}, column {c} is not text.", row=r, column=c)
            chars += len(cell)
            if chars > MAX_ANSWER_CHARS:
                raise InvalidAnswer(
                    f"The answer is too long (at most {MAX_ANSWER_CHARS:,} characters)."
                )
            cells.append(cell)
        if not cells:
            raise InvalidAnswer(f"Row {r} is empty.", row=r)
        rows.append(cells)
    _check_rectangular(rows)
    return Cells(2, rows)
