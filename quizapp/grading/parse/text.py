"""An answer typed as text split into rows of cell strings (:func:`split_cells`).

Vectors and matrices (:func:`quizapp.grading.parse.parse_answer`):

- a grid: a list of rows, each a list of cell strings (what the web form posts) -> 2-D;
- ``[[1, 2], [3, 4]]`` (also NumPy's printed ``[[1. 2.]\\n [3. 4.]]``) -> 2-D;
- MATLAB style ``[1 2; 3 4]`` -> 2-D, ``[1 2 3]`` or ``[1, 2, 3]`` -> 1-D, ``[15; 16]`` -> 2-D column;
- no brackets: rows on lines (or separated by ``;``), e.g. pasted from a spreadsheet -> 2-D when
  there are several rows, 1-D for one line of several entries, 0-D for one number.  Blank lines
  are ignored.
- simple LaTeX copied from slides (``$0.5$``, ``\\frac{1}{2}``, ``\\sqrt{2}``, ``\\cdot``,
  ``\\pi``, ``e^{-1}``, ``\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}``): see
  :mod:`quizapp.grading.latex`.  Text with lone surrogates (invalid UTF-8) is invalid.
- a transpose mark after a bracketed vector or matrix transposes it, as in MATLAB and textbooks:
  ``[1 2]'``, ``[1, 2]^T``, ``[[1, 2], [3, 4]]ᵀ``, ``.T``; ``[1 2]'`` is the column ``[1; 2]``.
- arrays as libraries print them, read as the list inside: NumPy's ``array([[1., 2.],\n
  [3., 4.]])`` (also ``np.array(...)``, ``matrix(...)``, with ``dtype=...``), PyTorch's
  ``tensor([[1., 2.], [3., 4.]], dtype=torch.float64)``, SymPy's ``Matrix(...)``, JAX's
  ``Array(...)``, TensorFlow's ``tf.Tensor(..., shape=(2, 2), dtype=int32)``; another name
  called on a list (``foo([1, 2])``) is invalid, with a message saying so;
- a trailing comma is allowed inside brackets (``[[1, 2], [3, 4],]``, ``[1, 2,]``), and Markdown
  code fences (```` ``` ```` lines) or backticks around the answer are dropped.
- ``( )`` and ``{ }`` around a comma-separated list are brackets: ``(2, 5)`` and ``{2, 5}`` read
  like ``[2, 5]`` (points are written ``(1, 10)`` in the slides), ``((1,2),(3,4))`` and
  Mathematica's ``{{1,2},{3,4}}`` like ``[[1,2],[3,4]]``; without a top-level comma they group as
  in arithmetic (``(1+2)`` is 3).
"""

from __future__ import annotations

from quizapp.grading.parse.brackets import bracketed_list
from quizapp.grading.parse.cells import Cells, _check_rectangular
from quizapp.grading.parse.errors import MAX_ANSWER_CHARS, MAX_CELLS, InvalidAnswer, _check_text
from quizapp.grading.parse.normalize import _normalize
from quizapp.grading.parse.rows import _nested_rows, _rows_of, _split_row
from quizapp.grading.parse.wrappers import (
    _TRANSPOSE_MARK,
    _from_latex,
    _may_mark,
    _printed_array,
    _strip_markdown,
)


def split_cells(text: str) -> Cells:
    """Split an answer typed as text into rows of cell strings (no evaluation).

    Raises :class:`InvalidAnswer` for an empty answer, text over ``MAX_ANSWER_CHARS``, unbalanced
    brackets, more than ``MAX_CELLS`` cells or ragged rows ("row 2 has 3 entries, row 1 has 2").
    """
    if len(text) > 4 * MAX_ANSWER_CHARS:  # a hard cap before any work, even stripping
        raise InvalidAnswer(
            f"The answer is too long ({len(text):,} characters; at most {MAX_ANSWER_CHARS:,})."
        )
    _check_text(text)
    text = _strip_markdown(text.strip(" \r\n\f\v\u00a0\u3000"))  # keep tabs: empty cells
    if "(" in text and "[" in text and text.lstrip()[:1] not in "[({":
        text = _printed_array(text)
    text = _from_latex(text)
    if len(text) > MAX_ANSWER_CHARS:
        raise InvalidAnswer(
            f"The answer is too long ({len(text):,} characters; at most {MAX_ANSWER_CHARS:,})."
        )
    s = _normalize(text).strip(" \n")  # keep tabs: a leading or trailing tab is an empty cell
    if len(s) > MAX_ANSWER_CHARS:
        raise InvalidAnswer(f"The answer is too long (at most {MAX_ANSWER_CHARS:,} characters).")
    if not s.strip():
        raise InvalidAnswer("The answer is empty.")
    if s.strip()[0] in "[({":
        s = s.strip()
    transposed = False
    mark = _TRANSPOSE_MARK.search(s) if s[0] in "[({" and _may_mark(s) else None
    if mark:  # MATLAB's [1 2]' and the textbook's [1, 2]^T: the transpose of what precedes
        s, transposed = s[: mark.start()].rstrip(), True
    if s[0] in "({" and "[" not in s:
        s = bracketed_list(s) or s
    if transposed and s[0] != "[":
        raise InvalidAnswer(
            "A transpose mark (' or ^T) must follow a vector or matrix in brackets, as [1, 2]^T."
        )
    nested = False
    if s[0] == "[":
        if s[-1] != "]":
            raise InvalidAnswer("A '[' is not closed: end the answer with ']'.")
        inner = s[1:-1].strip()
        if inner.endswith(","):  # [[1, 2], [3, 4],]: a trailing comma, as Python and JSON5 allow
            inner = inner[:-1].rstrip()
        if not inner:
            raise InvalidAnswer("The answer is empty.")
        if inner[0] == "[":
            if inner[-1] != "]":
                raise InvalidAnswer("A '[' is not closed.")
            bodies = _nested_rows(inner)
            ndim, nested = 2, True
        else:
            if "[" in inner or "]" in inner:
                raise InvalidAnswer("The brackets do not match: write [1, 2] or [[1, 2], [3, 4]].")
            bodies = _rows_of(inner)
            ndim = 1 if len(bodies) == 1 else 2
    else:
        if "[" in s or "]" in s:
            raise InvalidAnswer("The brackets do not match: write [1, 2] or [[1, 2], [3, 4]].")
        bodies = _rows_of(s)
        ndim = 2 if len(bodies) > 1 else 1
    if not bodies:
        raise InvalidAnswer("The answer is empty.")
    rows: list[list[str]] = []
    count = 0
    for r, body in enumerate(bodies, start=1):
        if nested and body.rstrip().endswith(",") and body.strip() != ",":
            body = body.rstrip()[:-1]  # [[1, 2,], ...]: a trailing comma inside a row
        cells = _split_row(body) if body.strip() else []
        if not cells:
            raise InvalidAnswer(f"Row {r} is empty.", row=r)
        count += len(cells)
        if count > MAX_CELLS:
            raise InvalidAnswer(f"The answer has too many entries (at most {MAX_CELLS:,}).")
        rows.append(cells)
    if "\t" in s:
        _trim_empty_edge_columns(rows)
    if ndim == 1 and len(rows[0]) == 1 and s[0] != "[":
        ndim = 0
    _check_rectangular(rows)
    if transposed:
        rows = [list(col) for col in zip(*rows, strict=True)]
        ndim = 2
    return Cells(ndim, rows)


def _trim_empty_edge_columns(rows: list[list[str]]) -> None:
    """Drop leading and trailing columns that are empty in *every* row, in place.

    A spreadsheet selection one column too wide pastes as ``1<TAB>2<TAB>`` on every line; that
    empty column is no one's answer.  A blank cell anywhere else (or an edge column blank in only
    some rows) is kept, so it is reported as "row 2, column 2 is empty".
    """
    while all(len(row) > 1 and not row[-1].strip() for row in rows):
        for row in rows:
            row.pop()
    while all(len(row) > 1 and not row[0].strip() for row in rows):
        for row in rows:
            row.pop(0)
