"""What surrounds an answer copied from elsewhere, taken off before it is read: Markdown code
fences and backticks (chat, notebooks), NumPy's printed ``array(...)``, LaTeX from the slides
(through :mod:`quizapp.grading.latex`), and a transpose mark after a bracketed vector or matrix
(``[1 2]'``, ``[1, 2]^T``, ``.T``)."""

from __future__ import annotations

import re

from quizapp.grading.latex import LatexError, latex_to_plain, looks_like_latex
from quizapp.grading.parse.errors import MAX_NESTING, InvalidAnswer


def _from_latex(text: str) -> str:
    """The answer syntax for LaTeX input (:mod:`quizapp.grading.latex`), else ``text``."""
    if not looks_like_latex(text):
        return text
    try:
        return latex_to_plain(text, MAX_NESTING)
    except LatexError as exc:
        raise InvalidAnswer(exc.message) from None


# After a closing bracket: MATLAB's ' (or a typographic ’), ^T, ^{T}, ^(T), ^⊤, a bare T or ⊤
# (ᵀ is T after NFKC), NumPy's .T.
_TRANSPOSE_MARK = re.compile(
    r"(?<=[\]\)\}])\s*(?:['\u2019]|\^\s*(?:T|\{\s*T\s*\}|\(\s*T\s*\)|\u22a4)|\.T|T|\u22a4)\Z"
)


def _may_mark(s: str) -> bool:
    """False when ``s`` cannot end in a :data:`_TRANSPOSE_MARK`, decided by its last character
    (a mark ends in ', ’, T or ⊤, or in ) or } closing "^(T)" / "^{T}"), so the regex's scan of
    the whole answer is skipped for the usual ``[1, 2]`` or ``(3, -2)``."""
    return s[-1] in "'\u2019T\u22a4" or (s[-1] in ")}" and "T" in s)


_BACKTICKS = re.compile(r"(`+)([^`]+)\1")
_FENCE = re.compile(r"[ \t]*(```+|~~~+)[ \t]*[A-Za-z0-9_+-]*[ \t]*")


def _strip_markdown(text: str) -> str:
    """Drop Markdown code fences (```` ``` ```` or ``~~~`` lines, with an optional language) around
    an answer, and backticks wrapping all of it (`` `0.5` ``), as chat and notebooks copy them."""
    lines = text.split("\n")
    if len(lines) > 1 and _FENCE.fullmatch(lines[0].rstrip("\r")):
        lines = lines[1:]
        if lines and _FENCE.fullmatch(lines[-1].rstrip("\r")):
            lines = lines[:-1]
        text = "\n".join(lines).strip(" \r\n")
    if "`" not in text:
        return text
    m = _BACKTICKS.fullmatch(text.strip())
    return m[2].strip() if m else text


_NUMPY_ARRAY = re.compile(
    r"(?:np\.|numpy\.)?array\(\s*(\[.*\])\s*(?:,\s*dtype\s*=\s*[A-Za-z0-9_.'\"]+\s*)?\)\s*",
    re.S,
)


def _numpy_array(text: str) -> str:
    """``array([[1., 2.], [3., 4.]])`` (NumPy's repr, also ``np.array(...)`` with an optional
    ``dtype=``) -> the list inside; any other text unchanged."""
    m = _NUMPY_ARRAY.fullmatch(text.strip())
    return m[1] if m else text
