"""What surrounds an answer copied from elsewhere, taken off before it is read: Markdown code
fences and backticks (chat, notebooks), arrays as NumPy or PyTorch print them, LaTeX from the
slides (through :mod:`quizapp.grading.latex`), and a transpose mark after a bracketed vector or
matrix (``[1 2]'``, ``[1, 2]^T``, ``.T``)."""

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


#: How array libraries print an array: NumPy's ``array(...)`` and ``matrix(...)`` (also
#: ``np.``/``numpy.``), JAX's ``Array(...)``, PyTorch's ``tensor(...)`` (``torch.tensor``), SymPy's
#: ``Matrix(...)``, TensorFlow's ``tf.Tensor(...)`` / ``tf.constant(...)``: the name and ``(``,
#: then the list (found by counting brackets), then keyword arguments (:data:`_KEYWORDS`).
#: (NumPy's documented ``repr``; PyTorch, JAX and TensorFlow print the same way.)
_ARRAY_CALL = re.compile(
    r"(?:(?:np|numpy|jnp|torch|tf|sympy|sp)\.)?"
    r"(?:array|Array|matrix|Matrix|tensor|Tensor|constant)\(\s*"
)
#: What may follow the list: ``, dtype=float64``, ``, dtype=torch.float64``, ``, dtype='float32'``,
#: ``, requires_grad=True``, ``, device='cuda:0'``, ``, grad_fn=<AddBackward0>``, ``, shape=(2,
#: 2)``, then ``)``.  Each value is one run of characters without spaces, commas or parentheses
#: (or one parenthesized group), and no two parts can match the same spaces, so the match is
#: linear in the text's length (``\\s*,?\\s*`` was quadratic on a long run of spaces).
_KEYWORDS = re.compile(r"(?:\s*,\s*[A-Za-z_]\w*\s*=\s*(?:\([^()]*\)|[^\s,()]+))*\s*(?:,\s*)?\)\s*")
#: A name called on a list that is none of those: ``foo([1, 2])``, ``vec([1, 2])``.
_CALLED = re.compile(r"([A-Za-z_][\w.]{0,40})\(\s*\[")


def _closing_bracket(text: str, start: int) -> int | None:
    """The index of the ``]`` that closes the ``[`` at ``text[start]``, or None."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
    return None


def _printed_array(text: str) -> str:
    """An array as an array library prints it (see :data:`_ARRAY_CALL`: ``array([[1., 2.],
    [3., 4.]])``, ``tensor([[1., 2.], [3., 4.]], dtype=torch.float64)``, ``Matrix([[1, 2], [3,
    4]])``) -> the list inside; any other text unchanged.  Raises :class:`InvalidAnswer` for
    another name called on a list (``foo([1, 2])``), which would otherwise be read as ill-matched
    brackets.  Linear in the length of ``text``."""
    stripped = text.strip()
    call = _ARRAY_CALL.match(stripped)
    if call and stripped[call.end() : call.end() + 1] == "[":
        end = _closing_bracket(stripped, call.end())
        if end is not None and _KEYWORDS.fullmatch(stripped, end + 1):
            return stripped[call.end() : end + 1]
    called = _CALLED.match(stripped)
    if called is None or not stripped.endswith(")"):
        return text
    if call:  # a known name, with something else than a list and keywords inside
        raise InvalidAnswer(
            f"This {called[1]}(...) cannot be read: only its list and keywords such as "
            "dtype=... may be inside the parentheses. Or write the list itself, as "
            "[[1, 2], [3, 4]]."
        )
    raise InvalidAnswer(
        f"{called[1]}(...) is not read: write the vector or matrix itself, as [1, 2] or "
        "[[1, 2], [3, 4]] (NumPy's array(...) and PyTorch's tensor(...) are read too)."
    )
