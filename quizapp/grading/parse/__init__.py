"""Parse what students type: one number (a small arithmetic expression) or a vector/matrix.

Safety: a hand-written tokenizer and recursive-descent parser over an explicit grammar; nothing is
ever passed to ``eval`` or Python's ``ast``.  Every input is bounded before any work is done: the
whole answer (``MAX_ANSWER_CHARS``), one cell (``MAX_CELL_CHARS``), the number of cells
(``MAX_CELLS``) and the nesting of parentheses, signs and powers (``MAX_NESTING``).  All arithmetic
is IEEE double precision with every intermediate result checked: NaN, infinity, division by zero and
overflow (``9^9^9``, ``10^10000``, ``exp(1000)``) are *invalid* with a message, never an exception
other than :class:`InvalidAnswer`.

One notation per module, each importing only those above it:

- :mod:`~quizapp.grading.parse.errors`: the bounds, :class:`InvalidAnswer` and how a message
  quotes the answer;
- :mod:`~quizapp.grading.parse.normalize`: Unicode look-alikes mapped to the ASCII grammar;
- :mod:`~quizapp.grading.parse.expression`: the grammar of one number, its tokenizer and parser;
- :mod:`~quizapp.grading.parse.wrappers`: Markdown fences and backticks, NumPy's ``array(...)``,
  LaTeX, transpose marks;
- :mod:`~quizapp.grading.parse.number`: :func:`parse_number` (with its fast path) and
  :func:`typed_text`;
- :mod:`~quizapp.grading.parse.cells`: :class:`Cells` and the grid a web form posts;
- :mod:`~quizapp.grading.parse.brackets`: ``( )`` and ``{ }`` lists (Mathematica's
  ``{{1,2},{3,4}}``);
- :mod:`~quizapp.grading.parse.rows`: rows of a vector or matrix and the cells of a row (tabs,
  commas, MATLAB's rule for spaces);
- :mod:`~quizapp.grading.parse.text`: :func:`split_cells`, every text form of a vector or matrix;
- :mod:`~quizapp.grading.parse.evaluate`: :func:`evaluate_cells`;
- :mod:`~quizapp.grading.parse.answer`: :func:`parse_answer`, text or grid.
"""

from quizapp.grading.parse.answer import parse_answer, parse_answer_cells
from quizapp.grading.parse.brackets import bracketed_list
from quizapp.grading.parse.cells import Cells
from quizapp.grading.parse.errors import (
    MAX_ANSWER_CHARS,
    MAX_CELL_CHARS,
    MAX_CELLS,
    MAX_NESTING,
    InvalidAnswer,
)
from quizapp.grading.parse.evaluate import evaluate_cells
from quizapp.grading.parse.number import parse_number, typed_text
from quizapp.grading.parse.text import split_cells

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_CELLS",
    "MAX_CELL_CHARS",
    "MAX_NESTING",
    "Cells",
    "InvalidAnswer",
    "bracketed_list",
    "evaluate_cells",
    "parse_answer",
    "parse_answer_cells",
    "parse_number",
    "split_cells",
    "typed_text",
]
