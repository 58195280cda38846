"""One number (one cell, or a scalar answer): :func:`parse_number`, with the fast path for the
plain numbers and ``a/b`` fractions students type most, and :func:`typed_text` (the text as the
parser reads it)."""

from __future__ import annotations

import math
import re

from quizapp.grading.latex import LatexError
from quizapp.grading.parse.errors import (
    MAX_ANSWER_CHARS,
    MAX_CELL_CHARS,
    MAX_NESTING,
    InvalidAnswer,
    _check_text,
)
from quizapp.grading.parse.expression import _NUMBER, _PLAIN_NUMBER, _finite, _Parser
from quizapp.grading.parse.normalize import _normalize
from quizapp.grading.parse.wrappers import _from_latex, _strip_markdown


def _too_long(text: str) -> InvalidAnswer:
    """The most useful message for a cell over ``MAX_CELL_CHARS``: what makes it long, found in
    one linear scan (the parser is never run on it)."""
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        return InvalidAnswer(
            f"The expression is nested too deeply ({deepest:,} levels of parentheses; at most "
            f"{MAX_NESTING})."
        )
    parts = text.split()
    if len(parts) > 1 and all(_PLAIN_NUMBER.fullmatch(p) for p in parts[:1000]):
        return InvalidAnswer(
            f"The answer has too many entries for one number: {len(parts):,} numbers separated "
            "by spaces, where a single number is asked for."
        )
    return InvalidAnswer(
        f"The number is too long ({len(text):,} characters; at most {MAX_CELL_CHARS:,})."
    )


#: A plain number or a fraction of two plain numbers ("-7/4", "0.5", "1e-3/2"): the cells students
#: type most.  Read without the tokenizer and parser, with the same result (see _fast_number).
_FAST_NUMBER = re.compile(r"([+-]?" + _NUMBER.pattern + r")(?:/(" + _NUMBER.pattern + r"))?")


def _fast_number(text: str) -> float | None:
    """``parse_number(text)`` for the common plain number or ``a/b`` fraction, or None.

    Gives the parser's result bit for bit: the parser reads ``-a/b`` as ``(-a)/b``, and IEEE
    division is sign-symmetric.  Returns None (the full path decides, with its messages) for
    anything else, for a zero denominator and for values that are not finite.
    """
    if len(text) > MAX_CELL_CHARS:
        return None
    m = _FAST_NUMBER.fullmatch(text) or _FAST_NUMBER.fullmatch(text.strip())
    if m is None:
        return None
    num, den_text = m.groups()
    value = float(num)
    if not math.isfinite(value):
        return None
    if den_text is None:
        return value
    den = float(den_text)
    if den == 0 or not math.isfinite(den):
        return None
    value /= den
    return value if math.isfinite(value) else None


def parse_number(text: str) -> float:
    """Read one number (one cell, or a scalar answer) and return it as a float.

    ``text`` may be an arithmetic expression (grammar in
    :mod:`quizapp.grading.parse.expression`).  Returns a finite float; ``-0.0`` is returned as
    typed (it compares equal to ``0``).

    Raises :class:`InvalidAnswer` (with a message for the student) for empty text, text longer
    than ``MAX_CELL_CHARS``, anything that does not parse, NaN, infinity, division by zero, a
    result too large for a double, nesting deeper than ``MAX_NESTING``, or a decimal comma.
    """
    if not isinstance(text, str):
        raise InvalidAnswer("The answer must be text.")
    fast = _fast_number(text)
    if fast is not None:
        return fast
    if len(text) > MAX_ANSWER_CHARS:  # a hard cap before any work, even stripping
        raise InvalidAnswer(
            f"The answer is too long ({len(text):,} characters; at most {MAX_ANSWER_CHARS:,})."
        )
    _check_text(text)
    text = _strip_markdown(text.strip())  # padding is not part of the number
    if len(text) > MAX_CELL_CHARS:
        raise _too_long(text)
    norm = _normalize(_from_latex(text)).strip()
    if len(norm) > MAX_CELL_CHARS:
        raise _too_long(norm)
    if not norm:
        raise InvalidAnswer("The answer is empty.")
    if _PLAIN_NUMBER.fullmatch(norm):  # fast path, same result as the parser
        return _finite(float(norm))
    return _Parser(norm, text).parse()


def typed_text(text: str) -> str:
    """One number's text as the parser reads it (Markdown, LaTeX and Unicode look-alikes mapped
    to the ASCII grammar: ``$−2.00$`` -> ``-2.00``), for judging what was typed; the text itself
    when it cannot be read (the caller has parsed it already)."""
    try:
        return _normalize(_from_latex(_strip_markdown(text.strip()))).strip()
    except (InvalidAnswer, LatexError):
        return text.strip()
