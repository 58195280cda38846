"""Round and curly brackets around a comma-separated list: ``(2, 5)`` and ``{2, 5}`` read like
``[2, 5]``, ``((1,2),(3,4))`` and Mathematica's ``{{1,2},{3,4}}`` like ``[[1,2],[3,4]]``;
without a top-level comma they group as in arithmetic (``(1+2)`` is 3)."""

from __future__ import annotations

from quizapp.grading.parse.errors import InvalidAnswer


def _closing(text: str) -> int:
    """Index of the bracket closing ``text[0]`` (any of ``( { ) }`` counted), or -1."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _row_list(part: str, *, curly: bool) -> str | None:
    """One entry of a list as a bracketed row, or None; inside ``{ }`` a ``{1}`` is a one-entry
    row (Mathematica's column ``{{1}, {2}}``), while ``(1)`` is only a parenthesized number."""
    if part[:1] not in "({":
        return None
    row = bracketed_list(part, _row=True)
    if row is None and curly and part[0] == "{" and _closing(part) == len(part) - 1:
        return "[" + part[1:-1] + "]"
    return row


def bracketed_list(text: str, *, _row: bool = False) -> str | None:
    """``(2, 5)`` / ``{2, 5}`` -> ``[2, 5]``; ``((1,2),(3,4))`` / ``{{1,2},{3,4}}`` (Mathematica)
    -> ``[[1,2],[3,4]]``; ``{{1}, {2}}`` -> ``[[1], [2]]``; ``None`` when ``text`` is not such a list (``(1+2)`` is a number).

    A list is a group in ``( )`` or ``{ }`` spanning the whole text with a comma at its top level;
    it is a matrix when every entry is itself such a list.  Raises :class:`InvalidAnswer` when some
    entries are lists and others are not (``((1,2), 3)``): only square brackets are unambiguous.
    """
    text = text.strip()
    pairs = {"(": ")", "{": "}"}
    if not text or text[0] not in pairs or _closing(text) != len(text) - 1:
        return None
    if text[-1] != pairs[text[0]]:
        return None
    parts = [p.strip() for p in _split_top_level(text[1:-1], ",")]
    if len(parts) > 1 and parts[-1] == "":  # a trailing comma, as Python allows
        parts.pop()
    if len(parts) < 2 and not (parts and text[1:-1].rstrip().endswith(",")):
        return None
    if _row:  # a row of a matrix: its entries are numbers (a matrix has two levels at most)
        if any(
            p[:1] in pairs
            and _closing(p) == len(p) - 1
            and "," in p
            and len(_split_top_level(p[1:-1], ",")) > 1
            for p in parts
        ):
            raise InvalidAnswer(
                "Too many brackets: a matrix has at most two levels, as ((1, 2), (3, 4))."
            )
        return "[" + ", ".join(parts) + "]"
    rows = [_row_list(p, curly=text[0] == "{") for p in parts]
    if all(r is not None for r in rows):
        return "[" + ", ".join(r for r in rows if r is not None) + "]"
    if any(r is not None for r in rows):
        raise InvalidAnswer(
            "Use [ ] for vectors and matrices, as [1, 2] or [[1, 2], [3, 4]]: some entries here "
            "are lists and others are not."
        )
    return "[" + ", ".join(parts) + "]"


def _split_top_level(line: str, sep: str) -> list[str]:
    if sep not in line:
        return [line]
    if "(" not in line and ")" not in line and "{" not in line and "}" not in line:
        return line.split(sep)  # no brackets: every separator is at the top level
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(line):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == sep and depth <= 0:
            parts.append(line[start:i])
            start = i + 1
    parts.append(line[start:])
    return parts
