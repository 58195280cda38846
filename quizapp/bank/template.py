"""Prompt templates: ``{{ name }}`` placeholders rendered by a sandboxed Jinja environment.

Values render for LaTeX, since placeholders sit inside ``$...$``: NumPy matrices as
``\\begin{pmatrix} ... \\end{pmatrix}``, vectors as column ``pmatrix`` (``{{ x | row }}`` for a
row), numbers compactly (``3`` not ``3.0``, floats to 6 significant digits, trailing zeros
trimmed).  The environment is Jinja's ``ImmutableSandboxedEnvironment`` with ``StrictUndefined``
(an unknown name is an error, never an empty string); on NumPy values only the attributes
``T``, ``shape``, ``ndim``, ``size`` are reachable.

Every render has a budget, so that no template (an instructor's typo or a hostile file) can hang
or exhaust memory: at most ``MAX_STEPS`` loop iterations, calls (macros included) and intercepted
operators in total; at most ``MAX_WORK`` characters of output produced (counting each loop
iteration's literal text); a ``MAX_SECONDS`` wall-clock deadline; ``*``/``**``/``+``/``~``/``%``
bounded so no single value exceeds ``MAX_OUTPUT`` characters or ``MAX_INT_BITS`` bits; only a
short list of filters and string methods that cannot allocate without bound; ``range`` of at most
``MAX_STEPS`` items; and a macro recursion depth error reported as such.  Jinja's sandbox
documents ``intercepted_binops``/``call_binop`` and ``call`` as the hooks for such limits
(https://jinja.palletsprojects.com/en/3.1.x/sandbox/#operator-intercepting).
"""

from __future__ import annotations

import contextvars
import math
import numbers
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2
import numpy as np
from jinja2 import meta, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

#: Longest rendered text, and longest string/list any template operation may build.
MAX_OUTPUT = 100_000
#: Loop iterations + calls + intercepted operators per render.
MAX_STEPS = 20_000
#: Characters of output a render may produce in total (loop bodies included) before it stops.
MAX_WORK = 1_000_000
#: Wall-clock seconds per render.
MAX_SECONDS = 2.0
#: Magnitudes below this display as 0 (floating-point noise such as ``-3.98552e-18``).
NOISE = 1e-12
#: Largest integer (in bits) a template's arithmetic may build.
MAX_INT_BITS = 4_000
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
    large or small magnitudes in ``1.5e-07`` notation.  Booleans as ``true``/``false``.

    For display only: floating-point noise is cleaned first (magnitudes below ``1e-12`` show as
    ``0``, values are rounded to 12 significant digits), so ``R^T R`` of a rotation shows ``0``
    rather than ``-3.98552e-18``.  Graded expected values are never changed by this."""
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    v = float(x)
    if not math.isfinite(v):  # v is a Python float: same test, no NumPy scalar call
        return str(v)
    v = 0.0 if abs(v) < NOISE else float(f"{v:.12g}")
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
    text = value if isinstance(value, str) else latex(value)
    budget = _BUDGET.get()
    if budget is not None:
        budget.charge(0, len(text))
    return text


@dataclass
class _Budget:
    steps: int = MAX_STEPS
    work: int = MAX_WORK
    deadline: float = 0.0

    def charge(self, steps: int = 1, work: int = 0) -> None:
        self.steps -= steps
        self.work -= work
        if self.steps < 0:
            raise SecurityError(
                f"the template does more than {MAX_STEPS} loop iterations, calls and operations"
            )
        if self.work < 0:
            raise SecurityError(f"the template produces more than {MAX_WORK} characters")
        if time.monotonic() > self.deadline:
            raise SecurityError(f"the template takes longer than {MAX_SECONDS} seconds to render")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "template_budget", default=None
)


def _budget() -> _Budget:
    budget = _BUDGET.get()
    if budget is None:  # rendered outside ``render()``: a budget for this thread of rendering
        budget = _Budget(deadline=time.monotonic() + MAX_SECONDS)
        _BUDGET.set(budget)
    return budget


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple, dict)) else 0


def _check_size(value: Any) -> Any:
    if _sized(value) > MAX_OUTPUT:
        raise SecurityError(f"a value longer than {MAX_OUTPUT} characters/items")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise SecurityError(f"a number larger than 2**{MAX_INT_BITS}")
    return value


def _budgeted(iterable: Iterable[Any], literal: int = 0) -> Iterator[Any]:
    """A ``{% for %}`` loop's iterable, charging one step and the body's literal text per item."""
    budget = _budget()
    for item in iterable:
        budget.charge(1, literal)
        yield item


def _range(*args: Any) -> range:
    """Python's ``range`` of at most ``MAX_STEPS`` items (iterating it is charged per item)."""
    r = range(*args)
    if len(r) > MAX_STEPS:
        raise SecurityError(f"range of {len(r)} items (at most {MAX_STEPS})")
    return r


def _join(value: Iterable[Any], sep: str = "") -> str:
    """Jinja's ``join`` filter, refusing to build more than ``MAX_OUTPUT`` characters."""
    n = len(value) if isinstance(value, Sized) else 0
    if len(str(sep)) * max(n - 1, 0) > MAX_OUTPUT:
        raise SecurityError(f"join would build more than {MAX_OUTPUT} characters")
    parts = [str(v) for v in _budgeted(value)]
    size = sum(len(p) for p in parts) + len(str(sep)) * max(len(parts) - 1, 0)
    if size > MAX_OUTPUT:
        raise SecurityError(f"join would build {size} characters (at most {MAX_OUTPUT})")
    return str(sep).join(parts)


_INTEGRAL = numbers.Integral
#: String methods a template may call: none of them can build a longer string than its input.
_STR_METHODS = {
    "lower", "upper", "title", "capitalize", "strip", "lstrip", "rstrip", "startswith",
    "endswith", "split", "count", "find", "index", "isdigit", "isalpha", "islower", "isupper",
}  # fmt: skip
#: Jinja's built-in filters kept: none can build output much longer than its input.
_SAFE_FILTERS = {
    "abs", "round", "int", "float", "length", "count", "first", "last", "lower", "upper",
    "title", "capitalize", "trim", "default", "d", "e", "escape", "string", "min", "max",
    "reverse", "sort", "unique", "truncate", "wordcount", "striptags", "list", "sum",
}  # fmt: skip


def _literal_length(node: nodes.Node) -> int:
    return sum(len(str(d.data)) for d in node.find_all(nodes.TemplateData))


class _Sandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%", "//", "/", "-"})

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        """Parse, then route every loop through ``_budgeted`` and every ``~`` through a size
        check (the hooks the sandbox lacks for iteration and string concatenation)."""
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            literal = nodes.Const(_literal_length(loop), lineno=loop.lineno)
            loop.iter = nodes.Filter(
                loop.iter, "_budgeted", [literal], [], None, None, lineno=loop.iter.lineno
            )
        for parent in list(tree.find_all(nodes.Node)):
            for field in parent.fields:
                child = getattr(parent, field, None)
                if isinstance(child, nodes.Concat):
                    setattr(
                        parent,
                        field,
                        nodes.Filter(child, "_bounded", [], [], None, None, lineno=child.lineno),
                    )
                elif isinstance(child, list):
                    for i, c in enumerate(child):
                        if isinstance(c, nodes.Concat):
                            child[i] = nodes.Filter(
                                c, "_bounded", [], [], None, None, lineno=c.lineno
                            )
        return tree

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, (np.ndarray, np.generic)):
            return attr in _ARRAY_ATTRS
        if isinstance(obj, str) and callable(value):
            return attr in _STR_METHODS
        return super().is_safe_attribute(obj, attr, value)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _budget().charge()
        return _check_size(super().call(__context, __obj, *args, **kwargs))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _budget().charge()
        for side in (left, right):
            _check_size(side)
        if operator == "%" and isinstance(left, str):
            raise SecurityError("'%' string formatting is not allowed in a template (use num)")
        if operator == "**":
            if isinstance(right, (str, list, tuple)):
                raise TypeError(f"cannot raise to the power of a {type(right).__name__}")
            if abs(float(np.max(np.abs(right)))) > 100:
                raise SecurityError("exponent too large in a template")
            if isinstance(left, _INTEGRAL) and isinstance(right, _INTEGRAL):
                if int(left).bit_length() * abs(int(right)) > MAX_INT_BITS:
                    raise SecurityError(f"a number larger than 2**{MAX_INT_BITS}")
        if operator == "*":
            for a, b in ((left, right), (right, left)):
                if isinstance(a, (str, list, tuple)) and isinstance(b, _INTEGRAL):
                    if int(b) * len(a) > MAX_OUTPUT:
                        raise SecurityError("repetition too large in a template")
                    return a * int(b)
            if isinstance(left, _INTEGRAL) and isinstance(right, _INTEGRAL):
                if int(left).bit_length() + int(right).bit_length() > MAX_INT_BITS:
                    raise SecurityError(f"a number larger than 2**{MAX_INT_BITS}")
        return _check_size(self.binop_table[operator](left, right))


def _row(value: Any) -> str:
    return latex(np.asarray(value, dtype=float), row=True)


def _num(value: Any, digits: int = 6) -> str:
    return format_number(value, min(max(int(digits), 0), 17))


_ENV = _Sandbox(undefined=jinja2.StrictUndefined, finalize=_finalize, autoescape=False)
for _name in list(_ENV.filters):
    if _name not in _SAFE_FILTERS:
        del _ENV.filters[_name]
_ENV.filters["latex"] = lambda v: latex(v)
_ENV.filters["row"] = _row
_ENV.filters["num"] = _num
_ENV.filters["join"] = _join
_ENV.filters["_budgeted"] = _budgeted
_ENV.filters["_bounded"] = _check_size
_ENV.tests.clear()
_ENV.tests.update(
    {
        "defined": lambda v: not isinstance(v, jinja2.Undefined),
        "undefined": lambda v: isinstance(v, jinja2.Undefined),
        "number": lambda v: isinstance(v, numbers.Number),
        "string": lambda v: isinstance(v, str),
        "none": lambda v: v is None,
        "odd": lambda v: int(v) % 2 == 1,
        "even": lambda v: int(v) % 2 == 0,
        "divisibleby": lambda v, n: int(v) % int(n) == 0,
    }
)
_ENV.globals.clear()
_ENV.globals["range"] = _range  # at most MAX_STEPS items


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


def _template_line(tb: Any) -> int | None:
    """The template line of the innermost template frame of a traceback (Jinja rewrites
    tracebacks so template frames carry the template's line numbers)."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def render(source: str, values: Mapping[str, Any]) -> str:
    """Render a template with ``values`` (placeholder name -> value), within the budget above.

    Raises ``TemplateError`` (with the template line where known) naming an undefined
    placeholder, a limit that was exceeded, a macro that recurses too deeply, or any other
    rendering error.  A text without any Jinja delimiter (most hints) reads no value, so its
    rendering is done once and cached.
    """
    if "{{" not in source and "{%" not in source and "{#" not in source:
        return _render_constant(source)
    return _render(source, values)


@lru_cache(maxsize=4096)
def _render_constant(source: str) -> str:
    """``_render(source, {})`` for a text without Jinja delimiters: its output is the same for
    any values (Jinja renders it as template data only), so it is computed by Jinja once."""
    return _render(source, {})


def _render(source: str, values: Mapping[str, Any]) -> str:
    template = compile_template(source)
    token = _BUDGET.set(_Budget(deadline=time.monotonic() + MAX_SECONDS))
    try:
        out = template.render(**values)
    except jinja2.UndefinedError as exc:
        raise TemplateError(
            f"unknown placeholder: {exc.message}", _template_line(exc.__traceback__)
        ) from None
    except SecurityError as exc:
        raise TemplateError(
            f"not allowed in a template: {exc}", _template_line(exc.__traceback__)
        ) from None
    except RecursionError as exc:
        raise TemplateError(
            "a macro or recursive loop calls itself too deeply (infinite recursion?)",
            _template_line(exc.__traceback__),
        ) from None
    except MemoryError:
        raise TemplateError("the template needs too much memory") from None
    except Exception as exc:  # any other failure inside the sandbox is the template's fault
        raise TemplateError(
            f"the template failed to render: {exc}", _template_line(exc.__traceback__)
        ) from None
    finally:
        _BUDGET.reset(token)
    if len(out) > MAX_OUTPUT:
        raise TemplateError(f"the rendered text is longer than {MAX_OUTPUT} characters")
    return out
