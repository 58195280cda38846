"""Read the simple LaTeX students copy from slides into the plain answer syntax.

Accepted (everything else that starts with a backslash is refused with a message naming it):

- math wrappers around the whole answer: ``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``;
- ``\\frac{a}{b}`` (also ``\\dfrac``, ``\\tfrac``, and ``\\frac12``) -> ``((a)/(b))``;
- ``\\sqrt{x}`` -> ``sqrt(x)``, ``\\sqrt[n]{x}`` -> ``((x)^(1/(n)))``;
- ``\\cdot``, ``\\times`` -> ``*``; ``\\div`` -> ``/``; ``\\pi`` -> ``pi``; ``\\exp``, ``\\ln``,
  ``\\log``, ``\\sin``, ``\\cos``, ``\\tan`` -> the functions; ``e^{...}`` already groups (``{ }``
  are parentheses in the answer grammar);
- ``\\left(`` ``\\right)`` (and ``[ ] |`` after them) -> the bracket alone; spacing commands
  ``\\,`` ``\\;`` ``\\:`` ``\\!`` ``\\quad`` and ``\\mathrm{..}``/``\\text{..}`` wrappers are dropped;
- ``\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}`` (``bmatrix``, ``matrix``, ``Bmatrix``,
  ``vmatrix``-free forms, ``array``) -> ``[1, 2; 3, 4]``; ``^T``/``^\\top`` after it transposes.

Bounded: one left-to-right pass; groups nested deeper than ``max_depth`` are refused.
"""

from __future__ import annotations

import re

_WRAPPERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_ENV = re.compile(r"\\(begin|end)\s*\{\s*(pmatrix|bmatrix|Bmatrix|matrix|smallmatrix|array)\s*\}")
_WORDS = {
    "cdot": "*",
    "times": "*",
    "ast": "*",
    "div": "/",
    "pi": "pi",
    "top": "T",
    "intercal": "T",
    "exp": "exp",
    "ln": "ln",
    "log": "log",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "left": "",
    "right": "",
    "quad": " ",
    "qquad": " ",
    "displaystyle": "",
    "mathrm": "",
    "text": "",
    "mathit": "",
    "operatorname": "",
}
_NAME = re.compile(r"[A-Za-z]+")
_AROUND = re.compile(r"\\left\s*[\[(]\s*(\[.*\])\s*\\right\s*[\])](.*)", re.S)
_SPACING = {",": "", ";": "", ":": "", "!": "", " ": " ", "{": "{", "}": "}"}


class LatexError(ValueError):
    """The LaTeX cannot be read; ``message`` is a sentence for the student."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def looks_like_latex(text: str) -> bool:
    """Does ``text`` use LaTeX (a backslash command or a ``$`` wrapper)?"""
    return "\\" in text or "$" in text


def latex_to_plain(text: str, max_depth: int = 64) -> str:
    """Translate the LaTeX forms listed in this module's docstring to the answer syntax.

    Raises :class:`LatexError` for an unknown command, a ``\\frac`` or ``\\sqrt`` without its
    braces, an unclosed group or groups nested deeper than ``max_depth`` (the parser's
    ``MAX_NESTING``).
    """
    s = text.strip()
    for left, right in _WRAPPERS:
        if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
            s = s[len(left) : len(s) - len(right)].strip()
            break
    if "$" in s:
        raise LatexError("Write the answer without '$' signs (or with one pair around all of it).")
    if _ENV.search(s):
        s = _ENV.sub(lambda m: "[" if m[1] == "begin" else "]", s)
        s = re.sub(r"\[\s*\{[lcr|\s]*\}", "[", s)  # \begin{array}{cc}: drop the column spec
        s = s.replace("\\\\", ";").replace("&", ",")
        # \left[ \begin{matrix} ... \end{matrix} \right]: the brackets drawn around a matrix
        m = _AROUND.fullmatch(s)
        if m:
            s = m[1] + m[2]
    return _Converter(s, max_depth).run()


class _Converter:
    def __init__(self, text: str, max_depth: int) -> None:
        self.s = text
        self.i = 0
        self.depth = 0
        self.max_depth = max_depth

    def run(self) -> str:
        return self.until(None)

    def until(self, closer: str | None) -> str:
        """Convert up to (and consuming) ``closer``, or to the end when ``closer`` is None."""
        out: list[str] = []
        s = self.s
        while self.i < len(s):
            ch = s[self.i]
            if closer is not None and ch == closer:
                self.i += 1
                return "".join(out)
            if ch == "\\":
                out.append(self.command())
            elif ch == "{":
                self.i += 1
                out.append("(" + self.group_body() + ")")
            else:
                out.append(ch)
                self.i += 1
        if closer is not None:
            raise LatexError(f"A '{{' in the LaTeX is not closed with '{closer}'.")
        return "".join(out)

    def group_body(self) -> str:
        self.depth += 1
        if self.depth > self.max_depth:
            raise LatexError(f"The LaTeX is nested too deeply (more than {self.max_depth} levels).")
        body = self.until("}")
        self.depth -= 1
        return body

    def argument(self, command: str) -> str:
        """One argument of ``\\frac``/``\\sqrt``: a ``{...}`` group or a single character."""
        s = self.s
        while self.i < len(s) and s[self.i] == " ":
            self.i += 1
        if self.i >= len(s):
            raise LatexError(f"\\{command} needs its arguments in braces, as \\frac{{1}}{{2}}.")
        ch = s[self.i]
        if ch == "{":
            self.i += 1
            return self.group_body()
        if ch.isalnum():
            self.i += 1
            return ch
        if ch == "\\":  # \frac\pi2: a command as the argument, nested like a group
            self.depth += 1
            if self.depth > self.max_depth:
                raise LatexError(
                    f"The LaTeX is nested too deeply (more than {self.max_depth} levels)."
                )
            out = self.command()
            self.depth -= 1
            return out
        raise LatexError(f"\\{command} needs its arguments in braces, as \\frac{{1}}{{2}}.")

    def command(self) -> str:
        s = self.s
        self.i += 1  # the backslash
        if self.i >= len(s):
            raise LatexError("A '\\' ends the answer: remove it.")
        ch = s[self.i]
        if not (ch.isascii() and ch.isalpha()):
            self.i += 1
            if ch in _SPACING:
                return _SPACING[ch]
            raise LatexError(f"The LaTeX '\\{ch}' is not understood here.")
        m = _NAME.match(s, self.i)
        assert m is not None
        name = m[0]
        self.i = m.end()
        if name in ("frac", "dfrac", "tfrac"):
            num = self.argument(name)
            den = self.argument(name)
            return f"(({num})/({den}))"
        if name == "sqrt":
            while self.i < len(s) and s[self.i] == " ":
                self.i += 1
            if self.i < len(s) and s[self.i] == "[":
                end = s.find("]", self.i)
                if end < 0:
                    raise LatexError("\\sqrt[n]{x}: the '[' is not closed.")
                index = _Converter(s[self.i + 1 : end], self.max_depth - self.depth).run()
                self.i = end + 1
                return f"(({self.argument(name)})^(1/({index})))"
            return f"sqrt({self.argument(name)})"
        if name in _WORDS:
            return _WORDS[name]
        raise LatexError(
            f"The LaTeX command \\{name} is not understood; type the value as plain text "
            "(such as 1/2, sqrt(2) or [1, 2; 3, 4])."
        )
