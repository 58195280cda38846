"""The bounds every answer is held to, the one error a student's answer can raise
(:class:`InvalidAnswer`), and the helpers that quote a piece of the answer in its message."""

from __future__ import annotations

import re

#: Longest accepted answer (whole text, or sum of all cells of a grid), in characters: room for
#: ``MAX_CELLS`` numbers written with full double precision (``repr``), about 25 characters each.
MAX_ANSWER_CHARS = 300_000
#: Longest accepted single cell, in characters.
MAX_CELL_CHARS = 1_000
#: Most cells in one answer (a 100 x 100 matrix).
MAX_CELLS = 10_000
#: Deepest nesting of parentheses, signs and powers in one cell.
MAX_NESTING = 64


class InvalidAnswer(ValueError):  # noqa: N818 (the agreed public name)
    """The answer cannot be read as numbers.  Never scored: an invalid answer uses no attempt.

    ``message`` is a sentence for the student; ``row`` and ``column`` (1-based) name the cell when
    the problem is in one cell (``row`` is ``None`` for an entry of a 1-D vector).
    """

    def __init__(self, message: str, row: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column

    def __str__(self) -> str:
        return self.message


def _show(text: str, limit: int = 40) -> str:
    """Quote a fragment of the answer for a message: printable, short."""
    shown = "".join(
        ch if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF else f"<U+{ord(ch):04X}>"
        for ch in text[: limit + 1]
    )
    if len(text) > limit:
        shown = shown[:limit] + "…"
    return f"'{shown}'"


def _describe_char(ch: str) -> str:
    if ch == "'":
        return 'A quote "\'"'
    if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF:
        return f"'{ch}'"
    return f"The character U+{ord(ch):04X}"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_text(text: str) -> None:
    """Refuse text holding a lone surrogate (U+D800 to U+DFFF, which is no character): a JSON
    ``\\ud800`` escape, or bytes that were not valid UTF-8 smuggled into a ``str`` (a
    terminal's ``surrogateescape``).  The message names the code point and its position
    (1-based), not "invalid UTF-8": a JSON body holding one is valid UTF-8."""
    found = _SURROGATE.search(text) if not text.isascii() else None
    if found is not None:
        raise InvalidAnswer(
            f"The answer holds U+{ord(found.group()):04X} at character {found.start() + 1}, a "
            "lone surrogate code point, which is not a character (a broken escape or paste); "
            "type it again."
        )
