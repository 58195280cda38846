"""A posted answer as the services take it: checked, normalized, stored losslessly."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


from quizapp.services.errors import BadRequest
from quizapp.services.text import db_safe

log = logging.getLogger(__name__)


#: Limits on one answer (beyond them the answer is refused, not stored): characters of a text
#: answer, rows/columns of a grid, characters of one cell.
MAX_ANSWER_CHARS = 20_000
MAX_GRID = 64
MAX_CELL_CHARS = 200


def normalize_answer(answer: Any) -> str | list[list[str]]:
    """Check the type and size of a posted answer and return it unchanged.

    ``answer`` is a text, or a grid: a non-empty list of non-empty lists of cell strings.
    Raises ``BadRequest`` (with what is wrong) for anything else, and for answers beyond
    ``MAX_ANSWER_CHARS`` characters, ``MAX_GRID`` rows/columns or ``MAX_CELL_CHARS`` per cell.
    """
    if isinstance(answer, str):
        if len(answer) > MAX_ANSWER_CHARS:
            raise BadRequest(f"The answer is too long (at most {MAX_ANSWER_CHARS} characters).")
        return answer
    if isinstance(answer, list):
        if not answer:
            raise BadRequest("The grid of cells is empty.")
        if len(answer) > MAX_GRID:
            raise BadRequest(
                f"The answer matrix has too many rows: {len(answer)} (at most {MAX_GRID})."
            )
        grid: list[list[str]] = []
        for i, row in enumerate(answer, start=1):
            if not isinstance(row, list):
                raise BadRequest(f"Row {i} of the cells must be a list of texts.")
            if not row or len(row) > MAX_GRID:
                raise BadRequest(
                    f"Row {i} of the answer matrix must have between 1 and {MAX_GRID} cells "
                    f"(it has {len(row)})."
                )
            for j, cell in enumerate(row, start=1):
                if not isinstance(cell, str):
                    raise BadRequest(f"The cell in row {i}, column {j} must be text.")
                if len(cell) > MAX_CELL_CHARS:
                    raise BadRequest(
                        f"The cell in row {i}, column {j} is too long "
                        f"(at most {MAX_CELL_CHARS} characters)."
                    )
            grid.append(list(row))
        return grid
    raise BadRequest("The answer must be a text or a list of rows of cell texts.")


def answer_grid_shape(form: Any) -> tuple[int, int] | None:
    """(rows, columns) of the input grid the page shows for ``AnswerForm`` ``form``, or None when
    it shows no grid (a text box, choices, or a matrix whose shape is part of the question).

    Matrices and partly filled matrices with ``show_shape`` use their shape; a vector of length n
    is a column of n inputs; ``point_on_line`` asks for ``count`` rows of one input per unknown.
    """
    if form.type == "point_on_line":
        unknowns = form.unknowns or ["x", "y"]
        return (max(1, int(form.count or 1)), len(unknowns))
    if form.type not in ("vector", "matrix", "partial_matrix") or not form.show_shape:
        return None
    shape = tuple(form.shape or ())
    if form.type == "vector" and len(shape) == 1:
        return (int(shape[0]), 1)
    if len(shape) == 2:
        return (int(shape[0]), int(shape[1]))
    return None


def check_grid_shape(form: Any, answer: str | list[list[str]]) -> None:
    """Refuse (``BadRequest``) a grid answer whose shape differs from the grid the form shows.

    When the page shows the shape (``answer_grid_shape`` is not None) a grid of another shape is a
    client error, not a wrong answer: it uses no attempt and is not stored.  A vector's cells may
    come as a column (n x 1) or a row (1 x n).  Text answers and forms whose shape is part of the
    question are not checked here: the grader marks a wrong shape incorrect (grading contract).
    """
    shape = answer_grid_shape(form)
    if shape is None or not isinstance(answer, list):
        return
    rows, cols = shape
    ragged = len({len(row) for row in answer}) != 1
    posted = None if ragged else (len(answer), len(answer[0]))
    got = (
        f"{len(answer)} rows of different lengths"
        if posted is None
        else f"{posted[0]} × {posted[1]}"
    )
    allowed = {(rows, cols)}
    if form.type == "vector":
        allowed.add((cols, rows))
    if posted not in allowed:
        want = (
            f"{rows} entries in one column or one row"
            if form.type == "vector"
            else f"{rows} × {cols} (rows × columns)"
        )
        raise BadRequest(
            f"The grid of cells must be {want} for this exercise; got {got}. It used no attempt."
        )


def grid_text(grid: Any, *, one_line: bool = False) -> str:
    """A grid answer (rows of cell texts) written as text the answer box reads back
    (docs/answer-syntax.md): its rows on lines with the cells two spaces apart, or with
    ``one_line`` as ``[a, b; c, d]`` (a multi-part answer's part on one line, the error page's
    typed answer).  Cells are written as given (an empty one stays empty)."""
    rows = [[str(c) for c in row] for row in grid]
    if one_line:
        return "[" + "; ".join(", ".join(row) for row in rows) + "]"
    return "\n".join("  ".join(row) for row in rows)


def canonical_answer(answer: str | list[list[str]] | dict[str, Any]) -> str:
    """What counts as "identical": whitespace-insensitive at line/cell ends and between tokens
    (a multi-part answer: each part's, by part name)."""
    if isinstance(answer, dict):
        return "parts:" + json.dumps(
            {name: canonical_answer(value) for name, value in sorted(answer.items())}
        )
    if isinstance(answer, str):
        lines = [" ".join(line.split()) for line in answer.strip().splitlines()]
        return "text:" + "\n".join(line for line in lines if line)
    return "cells:" + json.dumps([[" ".join(c.split()) for c in row] for row in answer])


def encode_raw_answer(answer: str | list[list[str]] | dict[str, Any]) -> tuple[str, str]:
    """(answer_format, raw_answer) to store, losslessly.

    Text is stored as is (format ``text``); a grid as JSON (``cells``); a multi-part answer
    (part name -> text or grid) as one JSON object (``parts``).  Text holding NUL or unpaired
    surrogates, which database text columns cannot hold, is stored JSON-escaped with format
    ``json`` (inside ``parts`` always escaped).  :func:`decode_raw_answer` inverts it.
    """
    if isinstance(answer, dict):
        return "parts", json.dumps(answer)
    if isinstance(answer, str):
        if db_safe(answer):
            return "text", answer
        return "json", json.dumps(answer)
    safe = all(db_safe(c) for row in answer for c in row)
    return "cells", json.dumps(answer, ensure_ascii=not safe)


def decode_raw_answer(
    answer_format: str, raw_answer: str
) -> str | list[list[str]] | dict[str, Any]:
    """The answer exactly as posted (for ``parts``: the whole answer graded, part name -> text
    or grid), from a submission's ``answer_format`` and ``raw_answer``."""
    if answer_format == "text":
        return raw_answer
    return json.loads(raw_answer)
