"""Prompt templates: ``{{ name }}`` placeholders rendered by a sandboxed Jinja environment.

Values render for LaTeX, since placeholders sit inside ``$...$``: NumPy matrices as
``\\begin{pmatrix} ... \\end{pmatrix}``, vectors as column ``pmatrix`` (``{{ x | row }}`` for a
row), numbers compactly (``3`` not ``3.0``, floats to 6 significant digits, trailing zeros
trimmed).  The environment is Jinja's ``ImmutableSandboxedEnvironment`` with ``StrictUndefined``
(an unknown name is an error, never an empty string); on NumPy values only the attributes
``T``, ``shape``, ``ndim``, ``size`` are reachable, and ``*``/``**``/``+`` are bounded so a
template cannot allocate huge strings or numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jinja2
import numpy as np
from jinja2 import meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_OUTPUT = 100_000
_ARRAY_ATTRS = {"T", "shape", "ndim", "size"}


class TemplateError(ValueError):
    """A template that does not parse or render; ``line`` is 1-based within the template."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def format_number(x: Any, digits: int = 6) -> str:
    """A number as short plain text: integral values without ``.0``; others to ``digits``
    decimals with trailing zeros trimmed (``0.25``, ``-1.5``, ``0.333333``); very
    large or small magnitudes in ``1.5e-07`` notation.  Booleans as ``true``/``false``."""
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    v = float(x)
    if not np.isfinite(v):
        return str(v)
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if 1e-4 <= abs(v) < 1e15:
        text = np.format_float_positional(v, precision=digits, fractional=True, trim="-")
        return text.rstrip(".")
    return np.format_float_scientific(v, precision=digits - 1, trim="-", exp_digits=1)


def _latex_number(x: Any) -> str:
    text = format_number(x)
    if "e" in text and not text.startswith(("inf", "-inf", "nan")):
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text


def latex(value: Any, *, row: bool = False) -> str:
    """``value`` as LaTeX: arrays as ``pmatrix`` (a 1-D array as a column, or a row with
    ``row=True``), numbers via ``format_number``, other values as ``str``."""
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return ", ".join(latex(v) for v in value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _latex_number(value.item())
        if value.ndim == 1:
            cells = [_latex_number(v) for v in value]
            body = " & ".join(cells) if row else r" \\ ".join(cells)
            return f"\\begin{{pmatrix}} {body} \\end{{pmatrix}}"
        if value.ndim == 2:
            body = r" \\ ".join(" & ".join(_latex_number(v) for v in r) for r in value)
            return f"\\begin{{pmatrix}} {body} \\end{{pmatrix}}"
        raise TemplateError(f"cannot show a {value.ndim}-dimensional array")
    if isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)):
        return _latex_number(value)
    return str(value)


def _finalize(value: Any) -> str:
    if isinstance(value, str):
        return value
    return latex(value)


class _Sandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, (np.ndarray, np.generic)):
            return attr in _ARRAY_ATTRS
        return super().is_safe_attribute(obj, attr, value)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        for side in (left, right):
            if isinstance(side, (str, list, tuple)) and len(side) > MAX_OUTPUT:
                raise jinja2.sandbox.SecurityError("value too large")
        if operator == "**":
            if abs(float(np.max(np.abs(right)))) > 100:
                raise jinja2.sandbox.SecurityError("exponent too large in a template")
            return left**right
        if operator == "*":
            for a, b in ((left, right), (right, left)):
                if (
                    isinstance(a, (str, list, tuple))
                    and isinstance(b, int)
                    and b * len(a) > MAX_OUTPUT
                ):
                    raise jinja2.sandbox.SecurityError("repetition too large in a template")
            return left * right
        return left + right


def _row(value: Any) -> str:
    return latex(np.asarray(value, dtype=float), row=True)


def _num(value: Any, digits: int = 6) -> str:
    return format_number(value, int(digits))


_ENV = _Sandbox(undefined=jinja2.StrictUndefined, finalize=_finalize, autoescape=False)
_ENV.filters["latex"] = lambda v: latex(v)
_ENV.filters["row"] = _row
_ENV.filters["num"] = _num
_ENV.globals.clear()
_ENV.globals["range"] = jinja2.sandbox.safe_range  # at most MAX_RANGE items


@lru_cache(maxsize=4096)
def compile_template(source: str) -> jinja2.Template:
    """Compile (and cache by text) a prompt/hint template.  Raises ``TemplateError`` with the
    template-relative line for syntax errors."""
    try:
        return _ENV.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message}", exc.lineno) from None


#: A template whose only Jinja syntax is ``{{ name }}``: its placeholders are read by a regular
#: expression, without Jinja's parser and code generator (~2 ms per template).
_SIMPLE_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _simple_placeholders(source: str) -> set[str] | None:
    """``placeholders(source)`` when the only Jinja syntax is ``{{ name }}``, else None."""
    if "{%" in source or "{#" in source:
        return None
    rest = _SIMPLE_PLACEHOLDER.sub("", source)
    if "{{" in rest or "}}" in rest:
        return None  # expressions, filters, or stray delimiters: Jinja decides
    return {m[1] for m in _SIMPLE_PLACEHOLDER.finditer(source)} - set(_ENV.globals)


def placeholders(source: str) -> set[str]:
    """The names a template reads (``{{ A }}``, ``{% if n > 2 %}``...) that it does not define
    itself.  Raises ``TemplateError`` for syntax errors."""
    simple = _simple_placeholders(source)
    if simple is not None:
        return simple
    try:
        return set(meta.find_undeclared_variables(_ENV.parse(source))) - set(_ENV.globals)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message}", exc.lineno) from None


def placeholder_line(source: str, name: str) -> int:
    """The 1-based line of ``source`` where ``name`` is first used inside ``{{ }}``/``{% %}``
    (1 if it cannot be found)."""
    pattern = re.compile(r"\{[{%][^}]*\b" + re.escape(name) + r"\b")
    for i, line in enumerate(source.splitlines(), start=1):
        if pattern.search(line):
            return i
    return 1


def render(source: str, values: Mapping[str, Any]) -> str:
    """Render a template with ``values`` (placeholder name -> value).

    Raises ``TemplateError`` naming an undefined placeholder or any other rendering error.
    """
    template = compile_template(source)
    try:
        out = template.render(**values)
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"unknown placeholder: {exc.message}") from None
    except jinja2.sandbox.SecurityError as exc:
        raise TemplateError(f"not allowed in a template: {exc}") from None
    except Exception as exc:  # any other failure inside the sandbox is the template's fault
        raise TemplateError(f"the template failed to render: {exc}") from None
    if len(out) > MAX_OUTPUT:
        raise TemplateError(f"the rendered text is longer than {MAX_OUTPUT} characters")
    return out
