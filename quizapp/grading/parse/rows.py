"""The rows of a vector or matrix typed as text, and the cells of one row.

Cells in a row are separated by tabs if the row has a tab (spreadsheets; a leading or trailing
column that is empty in every row, from a selection one column too wide, is dropped; other empty
cells are reported), else by commas if it has a comma (so ``1,5`` is *two* cells in a matrix; a space inside
a comma-separated cell is an error), else by spaces with MATLAB's rule: a space before a sign that is
directly followed by its operand starts a new entry (``[1 -2]`` is two entries, ``[1 - 2]`` and
``[1-2]`` are one entry, ``-1``), and a space next to ``* / ^`` or after an operator joins.
"""

from __future__ import annotations

import re

from quizapp.grading.parse.brackets import _split_top_level
from quizapp.grading.parse.errors import InvalidAnswer, _describe_char

_DIGIT_COMMA_DIGIT = re.compile(r"[0-9],[0-9]")
_SPACED_DIGITS = re.compile(r"[0-9.]\s+[0-9.]")
_ENDS_DIGIT = re.compile(r"[0-9.]\Z")
_EXP_START = re.compile(r"[eE][+-]?[0-9]")
# Rows of digits, points, e/E, signs, '/' and spaces only ("-7/4 3/4 1e-3"): see _split_row.
_SPACED_ROW = re.compile(r"[0-9eE.+\-/ ]*")


def _split_row(line: str) -> list[str]:
    """Split one row into cell strings (rules in the module docstring)."""
    if "\t" in line:
        return [cell.strip() for cell in line.split("\t")]
    if "," in line:
        cells = [cell.strip() for cell in _split_top_level(line, ",")]
        if _DIGIT_COMMA_DIGIT.search(line) and any(_SPACED_DIGITS.search(cell) for cell in cells):
            raise InvalidAnswer(
                "Use a point for decimals (1.5, not 1,5), and separate entries with spaces or "
                "with ', '."
            )
        return cells
    if _SPACED_ROW.fullmatch(line):
        # Without brackets, '*' and '^', the rule below joins a part to the one before only when
        # that one ends in '+', '-' or '/', or this one starts with '/' or is a lone sign; and it
        # refuses a part starting with 'e' ("1 e10").  None of these: every part is an entry.
        parts = line.split()
        if parts and all(p[0] not in "/eE" and p[-1] not in "+-/" for p in parts):
            return parts
    return _split_spaced(line)


def _split_spaced(line: str) -> list[str]:
    """Split a row without tabs or commas at spaces, by MATLAB's rule (module docstring)."""
    # MATLAB rule for spaces: a space separates entries unless it is inside parentheses, next to
    # an operator, or before a sign that is itself followed by a space ("1 - 2").
    cells: list[str] = []
    current = ""
    depth = 0
    for part in line.split():
        if not current:
            current = part
        elif depth > 0 or current[-1] in "+-*/^(" or part[0] in "*/^)" or part in ("+", "-"):
            current += " " + part
        else:
            cells.append(current)
            current = part
        if "(" in part or "{" in part or ")" in part or "}" in part:
            depth += part.count("(") + part.count("{") - part.count(")") - part.count("}")
    cells.append(current)
    for before, after in zip(cells, cells[1:], strict=False):
        # "1 e10", "1.5 E-3": a space inside scientific notation, not two entries.
        if after[:1] in ("e", "E") and _ENDS_DIGIT.search(before) and _EXP_START.match(after):
            raise InvalidAnswer(
                f"'{before} {after}' is not a number: write scientific notation without spaces, "
                f"as {before}{after}."
            )
    return cells


def _rows_of(body: str) -> list[str]:
    """Rows separated by newlines or ';'; blank rows dropped."""
    rows: list[str] = []
    for line in body.split("\n"):
        rows.extend(part for part in _split_top_level(line, ";") if part.strip())
    return rows


def _nested_rows(inner: str) -> list[str]:
    """The bodies of ``[...]`` groups in ``[...], [...]`` (commas and spaces between)."""
    rows: list[str] = []
    i, n = 0, len(inner)
    while i < n:
        ch = inner[i]
        if ch.isspace() or (ch == "," and rows):
            i += 1
            continue
        if ch != "[":
            raise InvalidAnswer(
                f"Unexpected {_describe_char(ch)} between rows; write rows as [1, 2], [3, 4]."
            )
        end = inner.find("]", i + 1)
        if end < 0:
            raise InvalidAnswer("A '[' is not closed.")
        body = inner[i + 1 : end]
        if "[" in body:
            raise InvalidAnswer(
                "Too many brackets: a matrix has at most two levels, [[1, 2], [3, 4]]."
            )
        rows.append(body)
        i = end + 1
    return rows
