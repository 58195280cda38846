"""Read one number: the tokenizer and recursive-descent parser of a small arithmetic expression.

Nothing is ever passed to ``eval`` or Python's ``ast``; the nesting of parentheses, signs and
powers is bounded (``MAX_NESTING``) and every intermediate result is checked (``_finite``).

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
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from quizapp.grading.parse.errors import MAX_NESTING, InvalidAnswer, _describe_char, _show


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
