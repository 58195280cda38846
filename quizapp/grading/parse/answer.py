"""A whole answer, text or a posted grid, read into a float array (:func:`parse_answer`): the
dispatcher between :func:`~quizapp.grading.parse.text.split_cells` and the grid check, then
:func:`~quizapp.grading.parse.evaluate.evaluate_cells`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from quizapp.grading.parse.cells import Cells, _grid_cells
from quizapp.grading.parse.errors import InvalidAnswer
from quizapp.grading.parse.evaluate import evaluate_cells
from quizapp.grading.parse.text import split_cells


def parse_answer(
    answer: str | bytes | Sequence[Sequence[str]], *, allow_blank: bool = False
) -> np.ndarray:
    """Read a whole answer: text (any form in :mod:`quizapp.grading.parse.text`) or a grid of
    cell strings.

    Returns a float ndarray: 0-D for one number, 1-D for one row of entries (``[1, 2, 3]``), 2-D
    for several rows, for ``[[...]]`` and for every grid.  With ``allow_blank`` (partly filled
    matrices), blank cells are NaN instead of an error.  Bytes are decoded as UTF-8.

    Note that without brackets ``1,5`` is a 1-D vector of two entries here; :func:`grade` reads an
    answer to a scalar exercise with :func:`parse_number`, where ``1,5`` is a decimal comma error.

    Raises :class:`InvalidAnswer` with a message naming the cell where it can.
    """
    return parse_answer_cells(answer, allow_blank=allow_blank)[0]


def parse_answer_cells(
    answer: str | bytes | Sequence[Sequence[str]], *, allow_blank: bool = False
) -> tuple[np.ndarray, Cells]:
    """:func:`parse_answer`, also returning the :class:`Cells` as split (each cell's text as
    typed, after normalization), so that a grader can judge what was typed (e.g. the digits of
    ``2.00``, which the float ``2.0`` has lost).  Same errors as :func:`parse_answer`."""
    if isinstance(answer, bytes):
        try:
            answer = answer.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidAnswer("The answer is not valid UTF-8 text.") from None
    cells = split_cells(answer) if isinstance(answer, str) else _grid_cells(answer)
    return evaluate_cells(cells, allow_blank=allow_blank), cells
