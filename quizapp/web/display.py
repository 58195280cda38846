"""Turning variants, verdicts and solutions into what the templates show.

- numbers and matrices as MathML (LaTeX ``pmatrix`` through ``quizapp.render.render_markdown``),
- attention weights as a server-rendered SVG heatmap (no JS, no inline style: CSP-safe),
- the answer form of a variant (grid, pasted text, choices, single input) with the student's last
  values and the per-cell marks of its verdict.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from markupsafe import Markup, escape

from quizapp.page import (
    format_number,
    inline_markdown_html,
    markdown_html,
)
from quizapp.services.answer_input import grid_text
from quizapp.services.text import printable_text

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

    name: str  # the form field (``cell-<row>-<column>``, 0-based); the box needs no id
    label: str
    value: str = ""
    given: bool = False
    mark: bool | None = None  # True right, False wrong, None not graded / unknown
    invalid: bool = False  # the cell an invalid answer's problem is in


#: What a cell's mark class says in words, after the cell's label (screen readers) or value.
MARK_WORDS = {
    "given": "given",
    "mark-invalid": "cannot be read",
    "mark-right": "right",
    "mark-wrong": "wrong",
}


@dataclass(frozen=True)
class GridLayout:
    """How the ``answer_grid`` macro lays out one grid (see :func:`grid_layout`).

    ``common``: ``"right"`` or ``"wrong"`` when a marked answer's cells are all graded and the
    mark is said once, on the table (its class ``all-<common>`` and ``caption``), else None.
    ``rows``: per row, its label (``""`` without one) and per cell the :class:`GridCell`, its
    class (``given``, ``mark-invalid``, ``mark-right``, ``mark-wrong`` or ``""``) and that
    class in words (:data:`MARK_WORDS`, ``""`` for none)."""

    common: str | None
    caption: str
    has_row_labels: bool
    has_col_labels: bool
    rows: list[tuple[str, list[tuple[GridCell, str, str]]]]


def grid_layout(
    grid: list[list[GridCell]], row_labels: list[str], col_labels: list[str], marked: bool
) -> GridLayout:
    """The layout of an answer grid: ``grid`` is rows x columns of cells, ``row_labels`` and
    ``col_labels`` their headers (a list without a non-empty label shows no header; a missing
    row label shows as empty).  ``marked`` is True for a marked answer (text in the cells, not
    inputs): when it has at least two graded cells and every one is right or wrong, the more
    common mark (right on a tie) is said once on the table ("Every entry wrong unless marked
    right"; "Every entry you filled in is ..." when some cells were given) and only the other
    cells carry a mark.  A form's boxes (``marked`` False) each
    carry their own mark.  Raises nothing."""
    common: str | None = None
    caption = ""
    if marked:
        marks = [cell.mark for row in grid for cell in row if not cell.given]
        n_right = sum(1 for m in marks if m is True)
        n_wrong = sum(1 for m in marks if m is False)
        if len(marks) >= 2 and n_right + n_wrong == len(marks):
            common = "right" if n_right >= n_wrong else "wrong"
            # Given cells are not the student's: the caption speaks of the entries they typed.
            given = any(cell.given for row in grid for cell in row)
            caption = f"Every entry you filled in is {common}" if given else f"Every entry {common}"
            if n_right and n_wrong:
                caption += f" unless marked {'wrong' if common == 'right' else 'right'}"
    most = True if common == "right" else False if common == "wrong" else None

    def mark_class(cell: GridCell) -> str:
        if cell.given:
            return "given"
        if common and cell.mark is most:
            return ""
        if cell.invalid:
            return "mark-invalid"
        return "mark-right" if cell.mark is True else "mark-wrong" if cell.mark is False else ""

    rows = []
    for r, row in enumerate(grid):
        cells = []
        for cell in row:
            cls = mark_class(cell)
            cells.append((cell, cls, MARK_WORDS.get(cls, "")))
        rows.append((row_labels[r] if r < len(row_labels) else "", cells))
    return GridLayout(
        common=common,
        caption=caption,
        has_row_labels=any(row_labels),
        has_col_labels=any(col_labels),
        rows=rows,
    )


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
    the first mistake to the message; showing it again below would say it twice), each once
    (mistakes that give the same answer share one sentence)."""
    message = str((verdict or {}).get("message") or "")
    return list(dict.fromkeys(str(m) for m in (messages or []) if m and str(m) not in message))


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
    matrix taken from the exercise, not from the request.  Missing cells are empty strings.  A
    post with no box but an ``answer`` (a ``via`` missing or unknown) is that text.  Returns None
    when no answer field was posted at all.
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
    if any_field:
        return grid
    value = data.get("answer")  # no box posted: the text, whatever ``via`` says (or if none)
    return None if value is None else str(value)


# --------------------------------------------------------------------------------------------
# Wide math on narrow screens

_DISPLAY_BLOCK = re.compile(
    r'<div class="math-display">(<math\b[^>]*>)<mrow>(.*?)</mrow></math></div>', re.S
)
_INLINE_MATH = re.compile(r'(<math\b[^>]*display="inline"[^>]*>)<mrow>(.*?)</mrow></math>', re.S)
_TAG = re.compile(r"<(/?)([a-zA-Z][\w:-]*)([^>]*?)(/?)>")
_WIDE_SPACE = re.compile(r'width="([0-9.]+)em"')
_BARE_TABLE = re.compile(r"(?<!<div class=\"table-wrap\">)<table>(.*?)</table>", re.S)
#: Inline formulas may break after a top-level comma or relation, as in print (TeX breaks
#: after relations too).
_BREAK_AFTER_MO = {",", "=", "≈", "≠", "≤", "≥"}
#: An inline formula shorter than this (its text, in characters) is never split.
_LONG_INLINE = 20
_OPEN = {"(", "[", "{", "⟨", "|"}
_CLOSE = {")", "]", "}", "⟩"}


def _top_level_pieces(body: str, *, at_comma: bool) -> list[str]:
    """Split the children of a formula's top ``<mrow>`` (MathML as ``render_latex`` writes it)
    into pieces: at each top-level space of at least 1em (``\\quad``, ``\\qquad``, dropped), or,
    with ``at_comma``, after each top-level comma or relation (``<mo>,</mo>``, ``<mo>=</mo>``)
    outside brackets.  ``[body]`` when there is nothing to split at."""
    pieces: list[str] = []
    depth = 0
    brackets = 0
    start = 0
    pos = 0
    skip = 0  # the end of a dropped space element: its closing tag is not counted
    for m in _TAG.finditer(body):
        if m.start() < skip:
            continue
        closing, name, attrs, selfclosing = m.group(1), m.group(2), m.group(3), m.group(4)
        if closing:
            depth -= 1
            if depth == 0 and name == "mo":
                text = body[pos : m.start()]
                if text in _OPEN:
                    brackets += 1
                elif text in _CLOSE:
                    brackets = max(0, brackets - 1)
                elif at_comma and text in _BREAK_AFTER_MO and brackets == 0:
                    pieces.append(body[start : m.end()])
                    start = m.end()
            continue
        if depth == 0 and name == "mspace" and not at_comma:
            width = _WIDE_SPACE.search(attrs)
            if width and float(width.group(1)) >= 1:
                end = body.find("</mspace>", m.end())
                end = m.end() if selfclosing or end < 0 else end + len("</mspace>")
                pieces.append(body[start : m.start()])
                start = skip = end
                continue
        if not selfclosing:
            depth += 1
        pos = m.end()
    pieces.append(body[start:])
    return [p for p in pieces if p.strip()]


def _split_display(m: re.Match[str]) -> str:
    head, body = m.group(1), m.group(2)
    pieces = _top_level_pieces(body, at_comma=False)
    if len(pieces) < 2:
        return m.group(0)
    parts = "".join(f"{head}<mrow>{p}</mrow></math>" for p in pieces)
    return f'<div class="math-display math-row">{parts}</div>'


def _split_inline(m: re.Match[str]) -> str:
    head, body = m.group(1), m.group(2)
    if "<mtable" not in body and len(_TAG.sub("", body)) < _LONG_INLINE:
        return m.group(0)  # short: never wider than a phone
    pieces = _top_level_pieces(body, at_comma=True)
    if len(pieces) < 2:
        return m.group(0)
    return " ".join(f"{head}<mrow>{p}</mrow></math>" for p in pieces)


#: The MathML namespace attribute: the HTML parser puts ``<math>`` in that namespace anyway, so
#: in a page it is 42 bytes per formula for nothing (a worked solution has dozens).
_MATHML_XMLNS = ' xmlns="http://www.w3.org/1998/Math/MathML"'


@lru_cache(maxsize=2048)
def _reflow(html: str) -> str:
    html = html.replace(_MATHML_XMLNS, "")
    html = _DISPLAY_BLOCK.sub(_split_display, html)
    html = _INLINE_MATH.sub(_split_inline, html)
    return _BARE_TABLE.sub(r'<div class="table-wrap"><table>\1</table></div>', html)


def reflow(html: Any) -> Markup:
    """Rendered Markdown (a prompt, hint or solution step) laid out to fit narrow screens, the
    text and formulas unchanged (Jinja filter ``reflow``; works on stored HTML as well):

    - a display formula listing several parts separated by ``\\quad`` / ``\\qquad``
      (``W_Q = ..., \\quad W_K = ...``) becomes one formula per part in a row that wraps onto
      lines (``.math-row``), instead of one line wider than the page;
    - a long inline formula (one holding a matrix, or of 20 characters or more) becomes one
      formula per part, split after its top-level commas and relations (``b_1 = (...), b_2 =
      (...)``, ``T(x, y) = (...)``), so the line can break between them as in print;
    - a table is wrapped in ``div.table-wrap``, which scrolls sideways by itself when wider
      than the page (app.js makes such a box focusable and labels it);
    - ``<math>`` loses its redundant ``xmlns`` attribute (HTML puts it in the MathML namespace).

    Input is trusted HTML from ``quizapp.render`` (already sanitized); returns ``Markup``.
    """
    text = str(html or "")
    if "<math" not in text and "<table" not in text:
        return Markup(text)
    return Markup(_reflow(text))


# --------------------------------------------------------------------------------------------
# The answer preview and the answer as shown after grading


def _precise_number(x: float) -> str:
    """A number as read, to 10 significant digits (the preview must not round what the student
    typed the way the 4-digit display does): ``0.12345`` -> ``0.12345``, ``1/3`` ->
    ``0.3333333333``."""
    text = format(float(x), ".10g")
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text


def _read_latex(value: Any) -> str:
    """LaTeX of a value as read: a number, a vector (a column), a matrix; None cells (a blank
    given cell) as ``?``."""
    if isinstance(value, int | float):
        return _precise_number(value)
    rows = value if value and isinstance(value[0], list) else [[v] for v in value]
    body = " \\\\ ".join(
        " & ".join("?" if v is None else _precise_number(v) for v in row) for row in rows
    )
    return "\\begin{pmatrix} " + body + " \\end{pmatrix}"


def preview_html(preview: Any, form: Any, choices_html: Any = None) -> Markup:
    """How an answer was read (a ``quizapp.bank.AnswerPreview``), as HTML for the page and the
    API's ``read_as_html``: display MathML of the number, vector or matrix (10 significant
    digits), the point(s) as ``(x, y)``, the chosen option's letter and text; empty when the
    answer is invalid.  ``choices_html``: a choice form's options as stored with the variant's
    page (rendered from their Markdown when not given)."""
    from quizapp.render import render_markdown

    value = preview.read_as
    if preview.status != "valid" or value is None:
        return Markup("")
    if form.type == "choice":
        k = int(value)
        return (
            Markup('<span class="choice-letter">(')
            + choice_letter(k - 1)
            + Markup(")</span> ")
            + _option_html(form, k - 1, choices_html)
        )
    if form.type == "index":
        return Markup(render_markdown(f"$${int(value)}$$"))
    if form.type == "point_on_line":
        points = value if value and isinstance(value[0], list) else [value]
        tex = ", \\quad ".join("(" + ", ".join(_precise_number(v) for v in p) + ")" for p in points)
        return Markup(render_markdown(f"$${tex}$$"))
    return Markup(render_markdown(f"$${_read_latex(value)}$$"))


@dataclass(frozen=True)
class _Pick:
    """A form and a context, as :func:`quizapp.bank.answers.parse_pick` reads a variant."""

    answer_form: Any
    context: Any


def _pick(form: Any, answer: Any, context: Any = None) -> int | None:
    """The 1-based option (choice) or position (index) ``answer`` picks, or None; ``context``
    is the variant's (an index form without labels takes its count from there)."""
    from quizapp.bank.answers import parse_pick
    from quizapp.grading import InvalidAnswer

    if form.type not in ("choice", "index"):
        return None
    try:
        return parse_pick(_Pick(form, context or {}), answer)
    except (InvalidAnswer, TypeError, ValueError):
        return None


def pick_text(form: Any, answer: Any, context: Any = None) -> str | None:
    """A choice or index answer as the page shows it: ``(b)`` for option b (posted as ``2``, or
    typed ``b`` / ``(B)``), the number for an index; None when it is not a readable pick."""
    k = _pick(form, answer, context)
    if k is None:
        return None
    return f"({choice_letter(k - 1)})" if form.type == "choice" else str(k)


def answer_text(form: Any, answer: Any, context: Any = None) -> str:
    """A submitted answer (text, or grid of cell strings) as the submissions table shows it:
    a pick as ``(b)``, a grid one row per line with its cells two spaces apart, text as typed."""
    pick = pick_text(form, answer, context)
    if pick is not None:
        return pick
    if isinstance(answer, str):
        return answer
    return grid_text(answer)


_BREAK_AFTER = re.compile(r"(?<=[,;\]])(?=\S)")


def breakable(text: str) -> Markup:
    """``text`` escaped, with a line-break opportunity (``<wbr>``) after each comma, semicolon and
    closing bracket, so a narrow table cell wraps a long answer between numbers, never inside
    one (``-0.7`` is never split into ``-0.`` / ``7``)."""
    return Markup("<wbr>").join(escape(part) for part in _BREAK_AFTER.split(str(text)))


def _unwrap_paragraph(html: Any) -> Markup:
    """Stored option HTML (one Markdown paragraph) without its ``<p>``, to sit in a line."""
    text = str(html).strip()
    if text.startswith("<p>") and text.endswith("</p>") and text.count("<p>") == 1:
        text = text[3:-4]
    return Markup(text)


def _option_html(form: Any, k: int, choices_html: Any = None) -> Markup:
    """Option ``k`` (0-based) of a choice form as inline HTML: the stored rendering
    (``choices_html``, from the variant's page) when given, else rendered from its Markdown."""
    if choices_html and 0 <= k < len(choices_html):
        return _unwrap_paragraph(choices_html[k])
    choices = form.choices or []
    return inline_markdown_html(choices[k]) if 0 <= k < len(choices) else Markup("")


def expected_pick_html(form: Any, expected: Any, choices_html: Any = None) -> Markup:
    """The right answer of a choice exercise as its letter and text (``(b) T(x, y) = ...``),
    of an index exercise as its number and label; ``expected`` is the variant's (0-based option
    for a choice, 1-based position for an index); ``choices_html``: the options as stored with
    the variant's page."""
    if form.type == "choice":
        k = int(expected)
        return (
            Markup('<span class="choice-letter">(')
            + choice_letter(k)
            + Markup(")</span> ")
            + _option_html(form, k, choices_html)
        )
    k = int(expected)
    labels = list(form.choices or form.col_labels or [])
    label = labels[k - 1] if 0 < k <= len(labels) else ""
    return Markup("<strong>") + str(k) + Markup("</strong>") + (f" ({label})" if label else "")


def empty_answer_message(form: Any) -> str:
    """What the page says when Submit is pressed with no answer (nothing is stored)."""
    if form.type == "choice":
        return "Choose one of the options before submitting."
    return "Type an answer before submitting."


@dataclass
class MarkedAnswer:
    """The last answer with its marks, shown once the variant is finished (no form any more).

    ``kind``: ``pick`` (a choice or index: ``html`` and ``right``), ``grid`` (``grid`` of
    :class:`GridCell` with values and marks, ``row_labels``, ``col_labels``)."""

    kind: str
    html: Markup = Markup("")
    right: bool | None = None
    grid: list[list[GridCell]] = field(default_factory=list)
    row_labels: list[str] = field(default_factory=list)
    col_labels: list[str] = field(default_factory=list)


def marked_answer(
    form: Any,
    answer: Any,
    parsed: Any,
    cells: Any,
    status: str,
    context: Any = None,
    choices_html: Any = None,
) -> MarkedAnswer | None:
    """The graded ``answer`` (as posted; ``parsed`` and ``cells`` from its verdict) with its
    marks, or None for an invalid answer or one with nothing to show.  A grid exercise shows the
    grid as posted (or the pasted text's numbers in it, as the form does); a text-only exercise
    shows the numbers as read, each marked when the answer had the right shape."""
    if status == "invalid":
        return None
    if form.type in ("choice", "index"):
        k = _pick(form, answer, context)
        if k is None:
            return None
        html = expected_pick_html(form, k - 1 if form.type == "choice" else k, choices_html)
        return MarkedAnswer(kind="pick", html=html, right=status == "correct")
    if grid_shape(form) is not None:
        view = build_form_view(
            form, answer=answer, cells=cells, parsed=parsed if isinstance(answer, str) else None
        )
        if not any(c.value for row in view.grid for c in row if not c.given):
            return None
        return MarkedAnswer(
            kind="grid", grid=view.grid, row_labels=view.row_labels, col_labels=view.col_labels
        )
    if parsed is None:
        return None
    try:
        arr = np.asarray(parsed, dtype=float)
    except (TypeError, ValueError):
        return None
    if arr.ndim > 2:
        return None
    grid2 = arr.reshape(-1, 1) if arr.ndim == 1 else arr.reshape(1, 1) if arr.ndim == 0 else arr
    rows, cols = grid2.shape
    marks = _flat_marks(cells, rows, cols)
    out = [
        [
            GridCell(
                name="",
                label=f"row {r + 1}, column {c + 1}" if grid2.size > 1 else "your answer",
                value=format_number(grid2[r, c]) if math.isfinite(grid2[r, c]) else "",
                mark=None if marks is None else marks[r][c],
            )
            for c in range(cols)
        ]
        for r in range(rows)
    ]
    return MarkedAnswer(kind="grid", grid=out, row_labels=[""] * rows, col_labels=[""] * cols)


_CELL_FIELD = re.compile(r"cell-(\d{1,3})-(\d{1,3})")


def stray_cell(form: Any, data: Any, prefix: str = "") -> tuple[int, int] | None:
    """The first posted grid field (``<prefix>cell-r-c``, 0-based) outside the grid that
    ``form`` shows, as (row, column) counting from 1, or None.  The page's own form never posts
    one: a hand-made or stale form does, and its answer is refused, not graded without the
    extra cells (the API refuses a grid of another shape the same way)."""
    shape = grid_shape(form) if form.type != "choice" else None
    rows, cols = shape if shape is not None else (0, 0)
    for key in data.keys():
        if not key.startswith(prefix):
            continue
        m = _CELL_FIELD.fullmatch(key[len(prefix) :])
        if m and (int(m.group(1)) >= rows or int(m.group(2)) >= cols):
            return int(m.group(1)) + 1, int(m.group(2)) + 1
    return None


_PART_FIELD = re.compile(r"part-(.+?)-(answer|cell-\d{1,3}-\d{1,3})")


def typed_answer(data: Any) -> list[tuple[str, str]]:
    """What a student typed in an exercise's answer form, recovered from posted form ``data`` (a
    MultiDict) without the exercise: for the error page of a post that was not graded (an expired
    form token, a withdrawn exercise), so the answer is not lost.

    Returns (label, text) pairs: one with an empty label for a one-answer form (the paste box's
    ``answer``, or the grid's ``cell-r-c`` fields written as ``[a, b; c, d]`` with ``?`` for an
    empty cell, whichever the form's ``via`` says was submitted), or one per part of a multi-part
    form (``part-<name>-...`` fields, labelled ``Part <name>``).  Blank answers are left out.
    """
    flat: dict[str, str] = {k: str(v) for k, v in data.items()}
    by_part: dict[str, dict[str, str]] = {}
    for key, value in flat.items():
        m = _PART_FIELD.fullmatch(key)
        if m:
            by_part.setdefault(m.group(1), {})[m.group(2)] = value
    if by_part:
        out = []
        for name, fields in by_part.items():
            text = _typed_one(fields, fields.get("via", flat.get(f"part-{name}-via")))
            if text:
                out.append((f"Part {name}", text))
        return out
    text = _typed_one(flat, flat.get("via"))
    return [("", text)] if text else []


def answer_field_words(name: str) -> str | None:
    """A posted field's name as a message says it when it is one of an answer form's boxes:
    ``cell-r-c`` (0-based) as "the box in row r+1, column c+1", ``answer`` as "the answer box",
    each with its part for ``part-<name>-...`` (and the instructor preview's ``part-<name>``);
    None for any other field (the token, the variant, a button)."""
    part = _PART_FIELD.fullmatch(name)
    own = part.group(2) if part else name
    where = f"part {part.group(1)}, " if part else ""
    cell = _CELL_FIELD.fullmatch(own)
    if cell:
        return f"the box in {where}row {int(cell.group(1)) + 1}, column {int(cell.group(2)) + 1}"
    if own == "answer":
        return f"part {part.group(1)}'s answer box" if part else "the answer box"
    preview = _PREVIEW_PART_FIELD.fullmatch(name)
    return f"part {preview.group(1)}'s answer box" if preview else None


#: The instructor preview's box of one part ("Try an answer" of a multi-part exercise).
_PREVIEW_PART_FIELD = re.compile(r"part-([^-]{1,40})")


def _typed_one(fields: dict[str, str], via: str | None) -> str:
    """One answer's text from its fields (``answer`` and ``cell-r-c``), as :func:`typed_answer`."""
    cells: dict[tuple[int, int], str] = {}
    for key, value in fields.items():
        m = _CELL_FIELD.fullmatch(key)
        if m:
            cells[int(m.group(1)), int(m.group(2))] = value.strip()
    text = fields.get("answer", "").strip()
    if via == "text" or not any(cells.values()):
        return text
    rows = 1 + max(r for r, _ in cells)
    cols = 1 + max(c for _, c in cells)
    grid = [[cells.get((r, c)) or "?" for c in range(cols)] for r in range(rows)]
    return grid_text(grid, one_line=True)
