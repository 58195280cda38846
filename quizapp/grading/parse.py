"""Parse what students type: one number (a small arithmetic expression) or a vector/matrix.

Safety: a hand-written tokenizer and recursive-descent parser over an explicit grammar; nothing is
ever passed to ``eval`` or Python's ``ast``.  Every input is bounded before any work is done: the
whole answer (``MAX_ANSWER_CHARS``), one cell (``MAX_CELL_CHARS``), the number of cells
(``MAX_CELLS``) and the nesting of parentheses, signs and powers (``MAX_NESTING``).  All arithmetic
is IEEE double precision with every intermediate result checked: NaN, infinity, division by zero and
overflow (``9^9^9``, ``10^10000``, ``exp(1000)``) are *invalid* with a message, never an exception
other than :class:`InvalidAnswer`.

Grammar of one number (a *cell*)::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/") unary | <implicit> power)*
    unary   := ("+" | "-") unary | power
    power   := primary ("^" unary)?            # right-associative: 2^3^2 = 2^9; -2^2 = -4
    primary := NUMBER | CONSTANT | FUNCTION "(" expr ")" | "(" expr ")" | "√" primary

- NUMBER: ``3``, ``-0.0``, ``.5``, ``5.``, ``1e-3``, ``2.5E4``; ``1.5*10^3``, ``1.5×10^3``,
  ``1.5x10^3``, ``1.5·10³`` are ordinary arithmetic.  A space inside a number (``1 e10``,
  ``1 000``) is invalid, never silently joined.  A decimal comma (``1,5``) is invalid with "use a
  point for decimals"; commas grouping digits in threes (``1,234.5``, ``1,000,000``) get "remove the
  thousands separators".
- Operators: ``+ - * / ^ **``; ``×``, ``·``, ``⋅`` mean ``*``; ``÷`` means ``/``; the Unicode
  minus, en dash, em dash and other dashes mean ``-``; superscript digits mean a power
  (``10⁻³`` = ``10^(-3)``); ``{ }`` group like parentheses (LaTeX habits: ``10^{-3}``).
- CONSTANT: ``e``, ``pi`` (or ``π``).  FUNCTION: ``sqrt``, ``exp``, ``ln``, ``log`` (the
  *natural* logarithm, as in NumPy, Python and WeBWorK), ``log10``, ``sin``, ``cos``, ``tan``
  (radians), ``abs``.  Names are case-insensitive.  A function needs parentheses: ``sqrt(2)``;
  ``√2`` is the one prefix form.
- Implicit multiplication only *without* a space, after a number or ``)``: ``2pi``, ``2sqrt(2)``,
  ``2(3+1)``, ``(1+2)(3+4)``.  With a space it is invalid (``2 pi``: write ``2*pi``), because in a
  matrix a space separates entries.  After a ``/`` it is refused as ambiguous (``1/2pi``).

Vectors and matrices (:func:`parse_answer`):

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
- NumPy's printed arrays, ``array([[1., 2.],\n       [3., 4.]])`` (also ``np.array(...)``, with
  an optional ``dtype=...``), read as the list inside them;
- a trailing comma is allowed inside brackets (``[[1, 2], [3, 4],]``, ``[1, 2,]``), and Markdown
  code fences (```` ``` ```` lines) or backticks around the answer are dropped.
- ``( )`` and ``{ }`` around a comma-separated list are brackets: ``(2, 5)`` and ``{2, 5}`` read
  like ``[2, 5]`` (points are written ``(1, 10)`` in the slides), ``((1,2),(3,4))`` and
  Mathematica's ``{{1,2},{3,4}}`` like ``[[1,2],[3,4]]``; without a top-level comma they group as
  in arithmetic (``(1+2)`` is 3).

Cells in a row are separated by tabs if the row has a tab (spreadsheets; a leading or trailing
column that is empty in every row, from a selection one column too wide, is dropped; other empty
cells are reported), else by commas if it has a comma (so ``1,5`` is *two* cells in a matrix; a space inside
a comma-separated cell is an error), else by spaces with MATLAB's rule: a space before a sign that is
directly followed by its operand starts a new entry (``[1 -2]`` is two entries, ``[1 - 2]`` and
``[1-2]`` are one entry, ``-1``), and a space next to ``* / ^`` or after an operator joins.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from quizapp.grading.latex import LatexError, latex_to_plain, looks_like_latex

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


# --------------------------------------------------------------------------- normalization

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2796\ufe58\ufe63\uff0d"
_TIMES = "\u00d7\u00b7\u22c5\u2217\u2219\u2715\u2716\u2a09"
_DIVIDE = "\u00f7\u2215\u2044\u2236"
_SUPERSCRIPTS = {
    "\u2070": "0",
    "\u00b9": "1",
    "\u00b2": "2",
    "\u00b3": "3",
    "\u2074": "4",
    "\u2075": "5",
    "\u2076": "6",
    "\u2077": "7",
    "\u2078": "8",
    "\u2079": "9",
    "\u207a": "+",
    "\u207b": "-",
}
_SUPERSCRIPT_RUN = re.compile("[" + "".join(_SUPERSCRIPTS) + "]+")
_TRANSLATE = {ord(c): "-" for c in _DASHES}
_TRANSLATE.update({ord(c): "*" for c in _TIMES})
_TRANSLATE.update({ord(c): "/" for c in _DIVIDE})
#: Circumflex look-alikes phone and desktop keyboards produce for "^": the modifier letter
#: circumflex (U+02C6, iOS), the modifier up arrowhead (U+02C4), the caret (U+2038) and the up
#: arrowhead (U+2303).  (The full-width circumflex U+FF3E becomes "^" by NFKC.)
_CARETS = "\u02c6\u02c4\u2038\u2303"
_TRANSLATE.update({ord(c): "^" for c in _CARETS})
_TRANSLATE.update({ord("\u03c0"): "pi", ord("\u221e"): "inf", ord("\r"): "\n"})
_TRANSLATE.update({ord("\u2028"): "\n", ord("\u2029"): "\n"})
# "1.5x10^3" / "1.5 X 10^3": the letter x used as a times sign before a power of ten.
_X_TIMES_TEN = re.compile(r"(?<=[0-9.])\s*[xX]\s*(?=10\s*(\^|\*\*))")


_SUBSCRIPT = re.compile("[\u2080-\u208e]")
# "1·5" is a decimal in older British typography and a product elsewhere; "1.5·10^3" is fine.
_MIDDLE_DOT_DECIMAL = re.compile(
    r"(?<=[0-9])\u00b7(?=[0-9])(?!10\s*(\^|\*\*|[\u00b2\u00b3\u00b9\u2070-\u207b]))"
)
_VULGAR = re.compile("[\u00bc-\u00be\u2150-\u215e\u2189]")


def _vulgar_fraction(m: re.Match[str]) -> str:
    """``½`` -> ``(1/2)``; refuse ``1½`` (NFKC would make it 11/2, a product would make it 1/2)."""
    fraction = unicodedata.normalize("NFKC", m[0]).replace("\u2044", "/")
    if m.start() > 0 and m.string[m.start() - 1].isdigit():
        whole = m.string[m.start() - 1]
        raise InvalidAnswer(
            f"Write a mixed number such as {whole}{m[0]} as {whole}+{fraction} (or as a decimal)."
        )
    return "(" + fraction + ")"


def _superscript_power(m: re.Match[str]) -> str:
    """``10⁻³`` -> ``10^(-3)``; a superscript with nothing before it to raise is refused."""
    before = m.string[: m.start()].rstrip()
    if not before or not (before[-1].isalnum() or before[-1] in ")}]"):
        raise InvalidAnswer(
            f"A superscript ({m[0]}) must follow the number it raises to a power, as in 10³; "
            "type plain digits otherwise."
        )
    return "^(" + "".join(_SUPERSCRIPTS[c] for c in m[0]) + ")"


def _normalize(text: str) -> str:
    """Map the Unicode look-alikes students type to the ASCII grammar; drop invisible characters.

    Raises :class:`InvalidAnswer` for subscript digits and mixed numbers such as ``1½``, which
    Unicode normalization would silently turn into other numbers.
    """
    if text.isascii():  # fast path: nothing to map but line ends and "1.5x10^3"
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return _X_TIMES_TEN.sub("*", text) if "x" in text or "X" in text else text
    if _MIDDLE_DOT_DECIMAL.search(text):
        raise InvalidAnswer(
            "A raised dot between digits is ambiguous: write 1.5 for a decimal, or 1*5 for a product."
        )
    if _SUBSCRIPT.search(text):
        raise InvalidAnswer("Subscript digits are not allowed in an answer; type plain digits.")
    text = _VULGAR.sub(_vulgar_fraction, text)
    text = _SUPERSCRIPT_RUN.sub(_superscript_power, text)
    text = text.replace("\r\n", "\n")
    text = unicodedata.normalize("NFKC", text)
    out = []
    for ch in text.translate(_TRANSLATE):
        cat = unicodedata.category(ch)
        if ch in "\t\n":
            out.append(ch)
        elif cat == "Cf":  # zero-width spaces, byte-order marks, direction marks: invisible
            continue
        elif cat == "Zs":
            out.append(" ")
        elif ch.isdecimal() and not ch.isascii():
            out.append(str(unicodedata.decimal(ch)))
        else:
            out.append(ch)
    return _X_TIMES_TEN.sub("*", "".join(out))


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


# --------------------------------------------------------------------------- tokenizer


@dataclass(frozen=True)
class _Token:
    kind: str  # NUM NAME OP LP RP ROOT COMMA END
    text: str
    pos: int
    space_before: bool
    value: float = 0.0


_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_PLAIN_NUMBER = re.compile(r"[+-]?" + _NUMBER.pattern)
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_CONSTANTS = {"e": math.e, "pi": math.pi}
# "1,234.5", "1,000,000", "-12,345": commas grouping digits in threes (group 2: a decimal part).
_THOUSANDS = re.compile(r"[+-]?[1-9][0-9]{0,2}((?:,[0-9]{3})+)(\.[0-9]*)?")


def _sqrt(x: float) -> float:
    if x < 0:
        raise InvalidAnswer("The square root of a negative number is not a real number.")
    return math.sqrt(x)


def _ln(x: float) -> float:
    if x <= 0:
        raise InvalidAnswer("The logarithm of zero or of a negative number is not defined.")
    return math.log(x)


def _log10(x: float) -> float:
    if x <= 0:
        raise InvalidAnswer("The logarithm of zero or of a negative number is not defined.")
    return math.log10(x)


def _exp(x: float) -> float:
    if x > 709.0:  # math.exp overflows just above 709.78
        raise InvalidAnswer("The result is too large to be a number.")
    return math.exp(x)


_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "sqrt": _sqrt,
    "exp": _exp,
    "ln": _ln,
    "log": _ln,  # natural logarithm, like numpy.log and WeBWorK's default
    "log10": _log10,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "abs": abs,
}
_NOT_NUMBERS = {
    "nan": "'NaN' (not a number) is not accepted: give a number.",
    "inf": "Infinity is not accepted: give a finite number.",
    "infinity": "Infinity is not accepted: give a finite number.",
}


def _tokenize(text: str, shown: str | None = None) -> list[_Token]:
    """Tokens of normalized ``text``; messages quote ``shown`` (what the student typed)."""
    tokens: list[_Token] = []
    i, n = 0, len(text)
    space = False
    while i < n:
        ch = text[i]
        if ch in " \t\n":
            space = True
            i += 1
            continue
        m = _NUMBER.match(text, i)
        if m:
            tokens.append(_Token("NUM", m[0], i, space, float(m[0])))
            i = m.end()
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            m = _NAME.match(text, i)
            assert m is not None
            tokens.append(_Token("NAME", m[0], i, space))
            i = m.end()
        elif text.startswith("**", i):
            tokens.append(_Token("OP", "^", i, space))
            i += 2
        elif ch in "+-*/^":
            tokens.append(_Token("OP", ch, i, space))
            i += 1
        elif ch in "({":
            tokens.append(_Token("LP", ch, i, space))
            i += 1
        elif ch in ")}":
            tokens.append(_Token("RP", ch, i, space))
            i += 1
        elif ch == "\u221a":
            tokens.append(_Token("ROOT", ch, i, space))
            i += 1
        elif ch == ",":
            tokens.append(_Token("COMMA", ch, i, space))
            i += 1
        elif ch == "%":
            raise InvalidAnswer("'%' is not accepted: write 50% as 0.5.")
        elif ch == "=":
            raise InvalidAnswer("Type only the value, without '=' or the name of the unknown.")
        else:
            raise InvalidAnswer(
                f"{_describe_char(ch)} is not allowed in a number "
                f"(in {_show(text if shown is None else shown)})."
            )
        space = False
    tokens.append(_Token("END", "", n, space))
    return tokens


# --------------------------------------------------------------------------- expression parser


def _finite(value: float) -> float:
    if math.isnan(value):
        raise InvalidAnswer("The expression has no numeric value.")
    if math.isinf(value):
        raise InvalidAnswer("The result is too large to be a number.")
    return value


def _power(base: float, exponent: float) -> float:
    try:
        return _finite(math.pow(base, exponent))
    except OverflowError:
        raise InvalidAnswer("The result is too large to be a number.") from None
    except ValueError:
        if base == 0:
            raise InvalidAnswer("Division by zero (0 to a negative power).") from None
        raise InvalidAnswer(
            "A negative number to a fractional power is not a real number."
        ) from None


class _Parser:
    def __init__(self, text: str, shown: str | None = None) -> None:
        self.text = text
        self.shown = text if shown is None else shown  # quoted in messages: the student's text
        self.tokens = _tokenize(text, self.shown)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def fail(self, what: str) -> InvalidAnswer:
        shown = _show(self.shown)
        if shown in what:  # "Unknown name 'x'" for the answer "x": say it once
            return InvalidAnswer(f"{what}.")
        return InvalidAnswer(f"{what} (in {shown}).")

    def parse(self) -> float:
        if self.tok.kind == "END":
            raise InvalidAnswer("The answer is empty.")
        value = self.expr()
        if self.tok.kind != "END":
            raise self.unexpected()
        return value

    def unexpected(self) -> InvalidAnswer:
        tok = self.tok
        prev = self.tokens[self.i - 1] if self.i > 0 else None
        if tok.kind == "END":
            return self.fail("The expression ends too early")
        if tok.kind == "COMMA":
            grouped = _THOUSANDS.fullmatch(self.text)
            if grouped and (grouped[1].count(",") > 1 or grouped[2]):
                plain = self.text.replace(",", "")
                return InvalidAnswer(
                    f"Remove the thousands separators: write {plain}, not {self.text}."
                )
            if grouped:  # "1,000": a thousands separator, or a decimal comma
                plain = self.text.replace(",", "")
                point = self.text.replace(",", ".")
                return InvalidAnswer(
                    f"Use a point for decimals ({point}) and no thousands separators ({plain}): "
                    f"{self.text} could mean either."
                )
            nxt = self.tokens[self.i + 1]
            if (
                prev is not None
                and prev.kind == "NUM"
                and nxt.kind == "NUM"
                and not tok.space_before
                and not nxt.space_before
            ):
                return InvalidAnswer(
                    f"Use a point for decimals: write {prev.text}.{nxt.text}, not "
                    f"{prev.text},{nxt.text} (and write no thousands separators)."
                )
            return self.fail(
                "A ',' cannot appear in a single number; separate entries of a "
                "vector or matrix inside brackets, as in [1, 2]"
            )
        if tok.kind == "RP":
            return self.fail(f"'{tok.text}' has no matching opening parenthesis")
        if prev is not None and prev.kind == "NUM" and tok.space_before and tok.kind == "NUM":
            return self.fail("There is a space inside a number; remove it")
        return self.fail(f"'{tok.text}' is not expected here")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise InvalidAnswer(
                f"The expression is nested too deeply (more than {MAX_NESTING} levels)."
            )

    def expr(self) -> float:
        value = self.term()
        while self.tok.kind == "OP" and self.tok.text in "+-":
            op = self.tok.text
            self.i += 1
            rhs = self.term()
            value = _finite(value + rhs if op == "+" else value - rhs)
        return value

    def term(self) -> float:
        value = self.unary()
        divided = False
        while True:
            tok = self.tok
            if tok.kind == "OP" and tok.text in "*/":
                self.i += 1
                rhs = self.unary()
                if tok.text == "*":
                    value = _finite(value * rhs)
                else:
                    if rhs == 0:
                        raise InvalidAnswer("Division by zero.")
                    value = _finite(value / rhs)
                    divided = True
            elif tok.kind in ("LP", "NAME", "ROOT", "NUM"):
                prev = self.tokens[self.i - 1]
                self.check_implicit(prev, tok, divided)
                value = _finite(value * self.power())
            else:
                return value

    def check_implicit(self, prev: _Token, tok: _Token, divided: bool) -> None:
        """Allow ``2pi``, ``2(3)``, ``(1)(2)``, ``2sqrt(2)``; refuse everything else clearly."""
        if tok.kind == "NAME" and re.fullmatch(r"[xX][0-9.]*", tok.text):
            raise self.fail("Use * for multiplication, not x: write 2*3 for two times three")
        if prev.kind == "NUM" and tok.kind == "NAME" and re.fullmatch(r"[eE][0-9]*", tok.text):
            raise self.fail(
                f"'{prev.text}{' ' if tok.space_before else ''}{tok.text}' is not a number: write "
                "scientific notation without spaces, as 1e10 or 1*10^10 (and 2*e for 2 times e)"
            )
        if tok.kind == "NUM":
            if prev.kind == "NUM" and tok.space_before:
                raise self.fail("There is a space inside a number; remove it")
            raise self.fail(f"Put an operator such as '*' before '{tok.text}'")
        if tok.space_before:
            raise self.fail(
                f"Put '*' between the factors before '{tok.text}' (a space does not multiply)"
            )
        if prev.kind not in ("NUM", "RP"):
            raise self.fail(f"Put an operator such as '*' before '{tok.text}'")
        if divided:
            raise self.fail(
                "Multiplying without '*' after a '/' is ambiguous: use parentheses, as 1/(2*pi)"
            )

    def unary(self) -> float:
        self.enter()
        tok = self.tok
        if tok.kind == "OP" and tok.text in "+-":
            self.i += 1
            value = self.unary()
            result = -value if tok.text == "-" else value
        else:
            result = self.power()
        self.depth -= 1
        return result

    def power(self) -> float:
        base = self.primary()
        if self.tok.kind == "OP" and self.tok.text == "^":
            self.i += 1
            if self.tok.kind == "OP" and self.tok.text == "^":
                raise self.fail("Two powers '^^' in a row")
            exponent = self.unary()
            return _power(base, exponent)
        return base

    def primary(self) -> float:
        tok = self.tok
        if tok.kind == "NUM":
            self.i += 1
            return _finite(tok.value)
        if tok.kind == "LP":
            self.i += 1
            return self.parenthesized("Empty parentheses '()'")
        if tok.kind == "ROOT":
            self.i += 1
            self.enter()
            value = _sqrt(self.primary())
            self.depth -= 1
            return value
        if tok.kind == "NAME":
            return self.name()
        if tok.kind == "END":
            raise self.fail("The expression ends too early")
        raise self.unexpected()

    def parenthesized(self, if_empty: str) -> float:
        """The expression after an opening parenthesis, through its closing one."""
        if self.tok.kind == "RP":
            raise self.fail(if_empty)
        value = self.expr()  # nesting is counted in unary()
        if self.tok.kind != "RP":
            if self.tok.kind == "END":
                raise self.fail("A parenthesis is not closed")
            raise self.unexpected()
        self.i += 1
        return value

    def name(self) -> float:
        tok = self.tok
        key = tok.text.lower()
        self.i += 1
        if key in _NOT_NUMBERS:
            raise InvalidAnswer(_NOT_NUMBERS[key])
        if key in _CONSTANTS:
            return _CONSTANTS[key]
        if key in _FUNCTIONS:
            if self.tok.kind != "LP":
                raise self.fail(f"Write {key}(...) with parentheses around its argument")
            self.i += 1
            arg = self.parenthesized(f"{key}() needs an argument")
            return _finite(_FUNCTIONS[key](arg))
        m = re.fullmatch(r"([a-z]+?)([0-9.]+)", key)
        if m and m[1] in _FUNCTIONS:
            raise self.fail(f"Write {m[1]}({m[2]}) with parentheses")
        if re.fullmatch(r"e[0-9]+", key):
            raise self.fail(
                f"'{tok.text}' is not a number: write the exponent right after the number, as "
                f"1{tok.text}, or write e^{key[1:]}"
            )
        known = ", ".join(sorted([*_CONSTANTS, *_FUNCTIONS]))
        raise self.fail(f"Unknown name '{tok.text[:20]}'; the names allowed are {known}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_text(text: str) -> None:
    """Refuse text holding lone surrogates: bytes that were not valid UTF-8, smuggled into a
    ``str`` (a terminal's ``surrogateescape``, a broken form post)."""
    if not text.isascii() and _SURROGATE.search(text):
        raise InvalidAnswer("The answer is not valid text (invalid UTF-8); type it again.")


def _from_latex(text: str) -> str:
    """The answer syntax for LaTeX input (:mod:`quizapp.grading.latex`), else ``text``."""
    if not looks_like_latex(text):
        return text
    try:
        return latex_to_plain(text, MAX_NESTING)
    except LatexError as exc:
        raise InvalidAnswer(exc.message) from None


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

    ``text`` may be an arithmetic expression (grammar in this module's docstring).  Returns a
    finite float; ``-0.0`` is returned as typed (it compares equal to ``0``).

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


# --------------------------------------------------------------------------- structure


@dataclass
class Cells:
    """The raw cells of an answer before evaluation: ``rows`` of cell strings and its ``ndim``.

    ``ndim`` 0 has one row of one cell; ndim 1 has one row.
    """

    ndim: int
    rows: list[list[str]]


def _where(ndim: int, r: int, c: int) -> tuple[str, int | None, int | None]:
    if ndim == 0:
        return "the answer", None, None
    if ndim == 1:
        return f"entry {c}", None, c
    return f"row {r}, column {c}", r, c


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
    if "array(" in text:
        text = _numpy_array(text)
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


def _check_rectangular(rows: Sequence[Sequence[object]]) -> None:
    width = len(rows[0])
    for r, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            raise InvalidAnswer(
                f"Row {r} has {len(row)} {'entry' if len(row) == 1 else 'entries'}, "
                f"row 1 has {width}.",
                row=r,
            )


def _grid_cells(grid: Sequence[Sequence[object]]) -> Cells:
    """Validate a posted grid (list of rows of strings); ``None`` is a blank cell."""
    if not isinstance(grid, Sequence) or isinstance(grid, str | bytes):
        raise InvalidAnswer("The answer must be text or a grid of cells.")
    if len(grid) == 0:
        raise InvalidAnswer("The answer is empty.")
    if len(grid) > MAX_CELLS:
        raise InvalidAnswer(f"The answer has too many entries (at most {MAX_CELLS:,}).")
    rows: list[list[str]] = []
    count = chars = 0
    for r, row in enumerate(grid, start=1):
        if not isinstance(row, Sequence) or isinstance(row, str | bytes):
            raise InvalidAnswer(f"Row {r} is not a list of cells.", row=r)
        count += len(row)
        if count > MAX_CELLS:
            raise InvalidAnswer(f"The answer has too many entries (at most {MAX_CELLS:,}).")
        cells = []
        for c, cell in enumerate(row, start=1):
            if cell is None:
                cell = ""
            if not isinstance(cell, str):
                raise InvalidAnswer(f"Row {r}, column {c} is not text.", row=r, column=c)
            chars += len(cell)
            if chars > MAX_ANSWER_CHARS:
                raise InvalidAnswer(
                    f"The answer is too long (at most {MAX_ANSWER_CHARS:,} characters)."
                )
            cells.append(cell)
        if not cells:
            raise InvalidAnswer(f"Row {r} is empty.", row=r)
        rows.append(cells)
    _check_rectangular(rows)
    return Cells(2, rows)


def evaluate_cells(cells: Cells, *, allow_blank: bool = False) -> np.ndarray:
    """Evaluate every cell with :func:`parse_number`; blank cells become NaN if ``allow_blank``.

    Returns a float array of ``cells.ndim`` dimensions.  Raises :class:`InvalidAnswer` naming the
    cell ("row 2, column 1 is empty", "row 1, column 2: Division by zero.").
    """
    width = len(cells.rows[0])
    flat = _plain_values(cells.rows)
    if flat is not None:
        result = np.array(flat, dtype=float).reshape(len(cells.rows), width)
    else:
        result = _evaluate_rows(cells, allow_blank)
    if cells.ndim == 0:
        return result.reshape(())
    if cells.ndim == 1:
        return result.reshape(-1)
    return result


#: Cells joined by ``|`` holding only digits, points, e/E, signs and ``/``: see _plain_values.
_PLAIN_CELLS = re.compile(r"[0-9eE.+\-/|]+")


def _plain_values(rows: list[list[str]]) -> list[float] | None:
    """The values of a rectangular grid of cells, flat (C order), when every cell is a plain
    number or an ``a/b`` fraction without padding; else None.

    One character-class check over all cells replaces a regex per cell: on text made only of
    digits, ``.``, ``e``/``E``, signs and ``/``, Python's ``float`` accepts exactly the plain
    numbers of :data:`_FAST_NUMBER` (``inf``, ``nan``, ``_`` and spaces cannot occur), and an
    unsigned denominator is required as there.  So the same floats as :func:`_fast_number` cell
    by cell (``tests/test_perf_grading.py``).  None (the caller evaluates cell by cell, with its
    messages) for any other cell, a zero denominator or a value that is not finite.
    """
    flat = [cell for row in rows for cell in row]
    if len(flat) != len(rows) * len(rows[0]):
        return None
    joined = "|".join(flat)
    if joined.count("|") != len(flat) - 1 or not _PLAIN_CELLS.fullmatch(joined):
        return None  # a cell holding "|" would shift the cells against the matches
    out = []
    try:
        for cell in flat:
            num, slash, den = cell.partition("/")
            value = float(num)
            if slash:
                if den[:1] in "+-":  # "1/-2" (and "1/" : "" is in every string) is the parser's
                    return None
                d = float(den)
                if d == 0.0:
                    return None
                value /= d
            if value - value != 0.0:  # infinity: an overflow in the text or in the division
                return None
            out.append(value)
    except ValueError:  # "1.2.3", "1e", "1/2/3", "": the parser gives the message
        return None
    return out


def _evaluate_rows(cells: Cells, allow_blank: bool) -> np.ndarray:
    """:func:`evaluate_cells`' general path: each cell on its own, errors naming the cell."""
    values: list[list[float]] = []
    for r, row in enumerate(cells.rows, start=1):
        out: list[float] = []
        for c, cell in enumerate(row, start=1):
            fast = _fast_number(cell)
            if fast is not None:  # the common case: no message to prepare
                out.append(fast)
                continue
            out.append(_slow_cell(cell, cells.ndim, r, c, allow_blank))
        values.append(out)
    return np.array(values, dtype=float)


def _slow_cell(cell: str, ndim: int, r: int, c: int, allow_blank: bool) -> float:
    """One cell that is not a plain number: blank (NaN if ``allow_blank``) or parsed in full;
    an error names the cell (1-based ``r``, ``c``)."""
    where, rr, cc = _where(ndim, r, c)
    if not cell.strip():
        if allow_blank:
            return math.nan
        if ndim == 0:
            raise InvalidAnswer("The answer is empty.")
        raise InvalidAnswer(f"{where[0].upper()}{where[1:]} is empty.", rr, cc)
    try:
        return parse_number(cell)
    except InvalidAnswer as exc:
        if ndim == 0:
            raise
        raise InvalidAnswer(f"{where[0].upper()}{where[1:]}: {exc.message}", rr, cc) from None


def parse_answer(
    answer: str | bytes | Sequence[Sequence[str]], *, allow_blank: bool = False
) -> np.ndarray:
    """Read a whole answer: text (any form in the module docstring) or a grid of cell strings.

    Returns a float ndarray: 0-D for one number, 1-D for one row of entries (``[1, 2, 3]``), 2-D
    for several rows, for ``[[...]]`` and for every grid.  With ``allow_blank`` (partly filled
    matrices), blank cells are NaN instead of an error.  Bytes are decoded as UTF-8.

    Note that without brackets ``1,5`` is a 1-D vector of two entries here; :func:`grade` reads an
    answer to a scalar exercise with :func:`parse_number`, where ``1,5`` is a decimal comma error.

    Raises :class:`InvalidAnswer` with a message naming the cell where it can.
    """
    return parse_answer_cells(answer, allow_blank=allow_blank)[0]


def parse_answer_cells(
    answer: str | bytes | Sequence[Sequence[str]], *, allow_blank: bool = False
) -> tuple[np.ndarray, Cells]:
    """:func:`parse_answer`, also returning the :class:`Cells` as split (each cell's text as
    typed, after normalization), so that a grader can judge what was typed (e.g. the digits of
    ``2.00``, which the float ``2.0`` has lost).  Same errors as :func:`parse_answer`."""
    if isinstance(answer, bytes):
        try:
            answer = answer.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidAnswer("The answer is not valid UTF-8 text.") from None
    cells = split_cells(answer) if isinstance(answer, str) else _grid_cells(answer)
    return evaluate_cells(cells, allow_blank=allow_blank), cells
