"""Turning variants, verdicts and solutions into what the templates show.

- numbers and matrices as MathML (LaTeX ``pmatrix`` through ``quizapp.render.render_markdown``),
- attention weights as a server-rendered SVG heatmap (no JS, no inline style: CSP-safe),
- the answer form of a variant (grid, pasted text, choices, single input) with the student's last
  values and the per-cell marks of its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from markupsafe import Markup

from quizapp.page import (
    markdown_html,
)

#: Cell input names: ``cell-<row>-<column>``, 0-based.
CELL_NAME = "cell-{r}-{c}"
#: Choices are posted as their 1-based number in ``AnswerForm.choices`` (what
#: ``quizapp.bank.grade_answer`` reads for ``choice``: a letter or a 1-based number).
CHOICE_BASE = 1


def showable(value: Any) -> Any:
    """Jinja ``finalize``: a text with its unshowable characters replaced (see
    ``quizapp.services.printable_text``: lone surrogates -> U+FFFD, NUL -> U+2400 '␀', ...);
    ``Markup`` stays ``Markup``, other values (and None, printed as Jinja always did) unchanged."""
    if isinstance(value, str):
        from quizapp.services import printable_text

        shown = printable_text(value)
        if shown is not value and isinstance(value, Markup):
            return Markup(shown)
        return shown
    return value


# --------------------------------------------------------------------------------------------
# Answer forms


@dataclass
class GridCell:
    """One input of an answer grid."""

    name: str
    id: str
    label: str
    value: str = ""
    given: bool = False
    mark: bool | None = None  # True right, False wrong, None not graded / unknown
    invalid: bool = False  # the cell an invalid answer's problem is in


@dataclass
class ChoiceView:
    value: str
    id: str
    html: Markup
    checked: bool = False


@dataclass
class FormView:
    """What the exercise page's answer form shows.

    ``mode``: ``grid`` (grid of inputs and a paste box), ``text`` (paste box only), ``single``
    (one input: scalar or index), ``choice`` (radio buttons).
    """

    mode: str
    type: str
    grid: list[list[GridCell]] = field(default_factory=list)
    row_labels: list[str] = field(default_factory=list)
    col_labels: list[str] = field(default_factory=list)
    text: str = ""
    choices: list[ChoiceView] = field(default_factory=list)
    shape_text: str = ""
    #: Every unreadable cell of an invalid grid answer: "row 1, column 2: message".
    cell_problems: list[str] = field(default_factory=list)


def grid_shape(form: Any) -> tuple[int, int] | None:
    """(rows, columns) of the input grid for an ``AnswerForm``, or None when it has no grid
    (``quizapp.services.answer_grid_shape``; the API refuses grids of another shape)."""
    from quizapp.services import answer_grid_shape

    return answer_grid_shape(form)


def _flat_marks(cells: Any, rows: int, cols: int) -> list[list[bool | None]] | None:
    if not isinstance(cells, list):
        return None
    arr = np.asarray(cells, dtype=object)
    if arr.size != rows * cols:
        return None
    flat = [bool(v) if isinstance(v, bool | np.bool_) else None for v in arr.reshape(-1).tolist()]
    return [flat[r * cols : (r + 1) * cols] for r in range(rows)]


def choice_letter(index: int) -> str:
    """The letter of choice ``index`` (0-based): ``a``, ``b``, ... ``z``, then ``27``, ..."""
    return "abcdefghijklmnopqrstuvwxyz"[index] if 0 <= index < 26 else str(index + 1)


def extra_mistake_messages(verdict: Any, messages: Any) -> list[str]:
    """The mistake sentences not already part of the verdict's ``message`` (some graders append
    the first mistake to the message; showing it again below would say it twice)."""
    message = str((verdict or {}).get("message") or "")
    return [m for m in (messages or []) if m and str(m) not in message]


def _grid_from_parsed(parsed: Any, rows: int, cols: int) -> list[list[str]] | None:
    """``parsed`` as rows x cols cell strings (full precision, ``.15g``), or None unless it is a
    rows x cols matrix (or, for a one-row / one-column grid, a list of that many numbers) of
    finite numbers: an answer of another shape is never rearranged to fit."""
    try:
        arr = np.asarray(parsed, dtype=float)
    except (TypeError, ValueError):
        return None
    vector = arr.ndim == 1 and 1 in (rows, cols) and arr.size == rows * cols
    if not (arr.shape == (rows, cols) or vector) or not np.isfinite(arr).all():
        return None
    flat = [format(float(v), ".15g") for v in arr.reshape(-1)]
    return [flat[r * cols : (r + 1) * cols] for r in range(rows)]


def build_form_view(
    form: Any,
    *,
    answer: str | list[list[str]] | None = None,
    cells: Any = None,
    invalid_cell: Any = None,
    check_cells: bool = False,
    parsed: Any = None,
    choices_html: list[Markup] | None = None,
) -> FormView:
    """The form for ``AnswerForm`` ``form``, pre-filled with ``answer`` (the last posted one) and
    marked with ``cells`` (its verdict's boolean grid); ``invalid_cell`` (1-based ``[row, column]``,
    row None for a vector entry) highlights the cell an invalid answer's problem is in.  With
    ``check_cells`` (the answer was invalid), every posted cell is read with
    ``quizapp.grading.parse_number``, so ALL unreadable cells are marked and listed in
    ``FormView.cell_problems`` (the grading engine reports only the first).
    ``parsed`` (the stored parsed answer: number or nested lists) fills the grid when the answer
    was pasted as text and has the grid's size, so the marks sit next to the numbers they judge.
    ``choices_html``: the choices as stored with the variant's page (rendered when it was created);
    without it they are rendered now (the instructor's preview of a seed)."""
    text_value = answer if isinstance(answer, str) else ""
    if form.type == "choice":
        choices = [
            ChoiceView(
                value=str(i + CHOICE_BASE),
                id=f"choice-{i}",
                # The letter the prompt refers to ("answer with its letter"), as in the bank's
                # option list: (a), (b), ...
                html=Markup('<span class="choice-letter">(')
                + choice_letter(i)
                + Markup(")</span> ")
                + (choices_html[i] if choices_html else markdown_html(c)),
                checked=(text_value.strip() == str(i + CHOICE_BASE)),
            )
            for i, c in enumerate(form.choices or [])
        ]
        return FormView(mode="choice", type=form.type, choices=choices)
    shape = grid_shape(form)
    if shape is None:
        if form.type in ("scalar", "index"):
            return FormView(mode="single", type=form.type, text=text_value)
        return FormView(mode="text", type=form.type, text=text_value)
    rows, cols = shape
    if form.type == "point_on_line":
        col_labels = list(form.unknowns or ["x", "y"])
        row_labels = [f"Point {i + 1}" for i in range(rows)] if rows > 1 else ["Point"]
    else:
        col_labels = list(form.col_labels or []) if form.col_labels else []
        row_labels = list(form.row_labels or []) if form.row_labels else []
        if form.type == "vector" and not row_labels and form.unknowns:
            row_labels = list(form.unknowns)
    if len(col_labels) != cols:
        col_labels = [f"column {j + 1}" for j in range(cols)] if cols > 1 else [""]
    if len(row_labels) != rows:
        row_labels = [f"row {i + 1}" for i in range(rows)]
    posted = answer if isinstance(answer, list) else None
    if posted is None and parsed is not None:
        posted = _grid_from_parsed(parsed, rows, cols)
    marks = _flat_marks(cells, rows, cols)
    bad: tuple[int, int] | None = None
    if posted is not None and isinstance(invalid_cell, list | tuple) and len(invalid_cell) == 2:
        r_, c_ = invalid_cell
        if r_ is None and isinstance(c_, int):
            bad = (c_ - 1, 0) if cols == 1 else (0, c_ - 1)
        elif isinstance(r_, int) and isinstance(c_, int):
            bad = (r_ - 1, c_ - 1)
    given = form.given if form.type == "partial_matrix" else None
    grid: list[list[GridCell]] = []
    for r in range(rows):
        row_cells = []
        for c in range(cols):
            g = None
            if given is not None and r < len(given) and c < len(given[r]):
                g = given[r][c]
            value = ""
            if g is not None:
                value = str(g)
            elif posted is not None and r < len(posted) and c < len(posted[r]):
                value = str(posted[r][c])
            label_parts = [p for p in (row_labels[r], col_labels[c]) if p]
            row_cells.append(
                GridCell(
                    name=CELL_NAME.format(r=r, c=c),
                    id=f"cell-{r}-{c}",
                    label=", ".join(label_parts) or "value",
                    value=value,
                    given=g is not None,
                    mark=None if (marks is None or g is not None) else marks[r][c],
                    invalid=bad == (r, c),
                )
            )
        grid.append(row_cells)
    problems: list[str] = []
    if check_cells and posted is not None:
        from quizapp.grading import InvalidAnswer, parse_number

        for row_cells in grid:
            for cell in row_cells:
                if cell.given:
                    continue
                try:
                    parse_number(cell.value)
                except InvalidAnswer as err:
                    cell.invalid = True
                    problems.append(f"{cell.label}: {err.message}")
    shape_text = f"{rows} × {cols}" if form.type != "vector" else f"{rows} entries"
    return FormView(
        mode="grid",
        type=form.type,
        grid=grid,
        row_labels=row_labels,
        col_labels=col_labels,
        text=text_value,
        shape_text=shape_text,
        cell_problems=problems,
    )


def read_posted_answer(form: Any, data: Any) -> str | list[list[str]] | None:
    """The answer in posted form ``data`` (a MultiDict) for ``AnswerForm`` ``form``.

    ``answer`` (text) wins when the paste box was submitted (``data["via"] == "text"``) or the form
    has no grid; otherwise the grid's ``cell-r-c`` fields, with given cells of a partly filled
    matrix taken from the exercise, not from the request.  Missing cells are empty strings.
    Returns None when no answer field was posted at all.
    """
    shape = grid_shape(form) if form.type != "choice" else None
    if shape is None or data.get("via") == "text":
        value = data.get("answer")
        return None if value is None else str(value)
    rows, cols = shape
    given = form.given if form.type == "partial_matrix" else None
    grid: list[list[str]] = []
    any_field = False
    for r in range(rows):
        row = []
        for c in range(cols):
            g = None
            if given is not None and r < len(given) and c < len(given[r]):
                g = given[r][c]
            raw = data.get(CELL_NAME.format(r=r, c=c))
            if raw is not None:
                any_field = True
            row.append(str(g) if g is not None else (raw or ""))
        grid.append(row)
    return grid if any_field else None
