"""Worked-solution mathematics for ``expression`` exercises: an allowed expression as a LaTeX
formula, and its values written with the precision the prompt asks for.

``to_latex("transpose(A) @ y")`` is ``A^{T} y``; ``to_latex("softmax(Q @ K.T / sqrt(2))")`` is
``\\mathrm{softmax}\\left(\\frac{Q K^{T}}{\\sqrt{2}}\\right)``.  Indices are shown 1-based, as
students count (``A[0, 1]`` is ``A_{1,2}``).  :func:`latex_value` writes a number, vector or
matrix: exact prompts get integers and fractions (``\\frac{2}{9}``, not ``0.222222``), "N decimal
places" prompts N places for the answer and N + 2 for intermediate results (the guard digits the
prompts ask students to keep), "N significant figures" likewise.  Pure: ``ast`` and NumPy only;
the expression must have passed :func:`quizapp.bank.expression.compile_expression`.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from typing import Any

import numpy as np

from quizapp.bank.precision import Precision

#: Names shown as they are in LaTeX: one letter, optionally with a subscript (``W_Q``, ``x_1``).
_PLAIN_NAME = re.compile(r"([A-Za-z])(?:_?([A-Za-z0-9]+))?")
_GREEK = {"alpha", "beta", "gamma", "delta", "theta", "lambda", "mu", "sigma", "tau", "phi"}

# Binding strength, for parentheses: sums < products < unary minus < powers < atoms.
_SUM, _PRODUCT, _UNARY, _POWER, _ATOM = 1, 2, 3, 4, 5


def name_latex(name: str) -> str:
    """A variable name as LaTeX: ``A``, ``W_{Q}``, ``x_{1}``, ``\\theta``, else upright text."""
    if name in _GREEK:
        return "\\" + name
    m = _PLAIN_NAME.fullmatch(name)
    if m and (m.group(2) is None or "_" in name or m.group(2).isdigit()):
        return m.group(1) + (f"_{{{m.group(2)}}}" if m.group(2) else "")
    escaped = name.replace("_", "\\_")
    return f"\\mathrm{{{escaped}}}"


def _number(v: Any) -> str:
    x = float(v)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def _index(node: ast.AST) -> str:
    if isinstance(node, ast.Tuple):
        return ",".join(_index(e) for e in node.elts)
    if isinstance(node, ast.Slice):
        if node.lower is None and node.upper is None and node.step is None:
            return "\\cdot"
        lo = _index(node.lower) if node.lower is not None else "1"
        hi = _to(node.upper)[0] if node.upper is not None else "n"
        return f"{lo}..{hi}"
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return str(node.value + 1 if node.value >= 0 else node.value)
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        return f"-{node.operand.value}"  # counted from the end, as written
    return _to(node)[0] + "+1"


def _wrap(text: str, strength: int, need: int) -> str:
    return f"\\left({text}\\right)" if strength < need else text


def _call(name: str, args: list[ast.AST], keywords: dict[str, ast.AST]) -> tuple[str, int]:
    a = [_to(x)[0] for x in args]
    strong = [_wrap(*_to(x), _ATOM) for x in args]
    if name == "transpose":
        return f"{strong[0]}^{{T}}", _POWER
    if name == "inv":
        return f"{strong[0]}^{{-1}}", _POWER
    if name == "det":
        return f"\\det {strong[0]}", _PRODUCT
    if name == "solve":
        return f"{strong[0]}^{{-1}} {strong[1]}", _PRODUCT
    if name == "sqrt":
        return f"\\sqrt{{{a[0]}}}", _ATOM
    if name == "exp":
        return f"e^{{{a[0]}}}", _POWER
    if name == "log":
        return f"\\ln {strong[0]}", _PRODUCT
    if name == "abs":
        return f"\\left|{a[0]}\\right|", _ATOM
    if name == "norm":
        return f"\\left\\|{a[0]}\\right\\|", _ATOM
    if name == "softmax":
        axis = keywords.get("axis")
        along = ""
        if isinstance(axis, ast.Constant) and axis.value == 0:
            along = "_{\\text{columns}}"
        return f"\\mathrm{{softmax}}{along}\\left({a[0]}\\right)", _ATOM
    if name == "scores":
        return f"\\frac{{{strong[0]} {strong[1]}^{{T}}}}{{\\sqrt{{d}}}}", _ATOM
    if name == "attention":
        q, k, v = strong
        return (
            f"\\mathrm{{softmax}}\\left(\\frac{{{q} {k}^{{T}}}}{{\\sqrt{{d}}}}\\right) {v}",
            _PRODUCT,
        )
    if name == "self_attention":
        x, wq, wk, wv = strong
        return (
            f"\\mathrm{{Attention}}\\left({x}{wq}, {x}{wk}, {x}{wv}\\right)",
            _ATOM,
        )
    if name == "eye":
        return f"I_{{{a[0]}}}", _ATOM
    if name == "outer":
        return f"{strong[0]} {strong[1]}^{{T}}", _PRODUCT
    if name == "hstack":
        return "\\begin{pmatrix} " + " & ".join(a) + " \\end{pmatrix}", _ATOM
    if name == "vstack":
        return "\\begin{pmatrix} " + " \\\\ ".join(a) + " \\end{pmatrix}", _ATOM
    if name == "round":
        digits = keywords.get("decimals")
        extra = f", {_to(digits)[0]}" if digits is not None else ""
        return f"\\operatorname{{round}}\\left({a[0]}{extra}\\right)", _ATOM
    words = {"trace": "tr", "argmax": "argmax", "argmin": "argmin"}
    word = words.get(name, name)
    axis = keywords.get("axis")
    along = ""
    if isinstance(axis, ast.Constant):
        along = "_{\\text{columns}}" if axis.value == 0 else "_{\\text{rows}}"
    return f"\\operatorname{{{word}}}{along}\\left({', '.join(a)}\\right)", _ATOM


def _to(node: ast.AST) -> tuple[str, int]:
    """LaTeX of ``node`` and how strongly it binds (for parentheses)."""
    if isinstance(node, ast.Expression):
        return _to(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return ("\\text{true}" if node.value else "\\text{false}"), _ATOM
        return _number(node.value), _ATOM if float(node.value) >= 0 else _UNARY
    if isinstance(node, ast.Name):
        if node.id == "pi":
            return "\\pi", _ATOM
        return name_latex(node.id), _ATOM
    if isinstance(node, ast.Attribute):  # .T
        return f"{_wrap(*_to(node.value), _ATOM)}^{{T}}", _POWER
    if isinstance(node, ast.List):
        return "\\left(" + ", ".join(_to(e)[0] for e in node.elts) + "\\right)", _ATOM
    if isinstance(node, ast.Subscript):
        return f"{_wrap(*_to(node.value), _ATOM)}_{{{_index(node.slice)}}}", _ATOM
    if isinstance(node, ast.UnaryOp):
        inner = _wrap(*_to(node.operand), _UNARY)
        if isinstance(node.op, ast.USub):
            return f"-{inner}", _UNARY
        if isinstance(node.op, ast.Not):
            return f"\\lnot {inner}", _UNARY
        return inner, _UNARY
    if isinstance(node, ast.BinOp):
        left, right = _to(node.left), _to(node.right)
        op = type(node.op)
        if op is ast.Add:
            return f"{left[0]} + {_wrap(*right, _SUM + 1 if right[1] == _UNARY else _SUM)}", _SUM
        if op is ast.Sub:
            return f"{left[0]} - {_wrap(*right, _PRODUCT)}", _SUM
        if op is ast.Div:
            return f"\\frac{{{left[0]}}}{{{right[0]}}}", _ATOM
        if op is ast.Pow:
            return f"{_wrap(*left, _ATOM)}^{{{right[0]}}}", _POWER
        if op is ast.Mod:
            return f"{_wrap(*left, _PRODUCT)} \\bmod {_wrap(*right, _POWER)}", _PRODUCT
        # products: a number times something with a dot, matrix products by juxtaposition
        lt, rt = _wrap(*left, _PRODUCT), _wrap(*right, _POWER)
        sep = " \\cdot " if op is ast.Mult else " "
        return f"{lt}{sep}{rt}", _PRODUCT
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        return _call(node.func.id, list(node.args), keywords)
    return f"\\texttt{{{ast.unparse(node)}}}", _ATOM


def to_latex(expression: str | ast.AST) -> str:
    """The expression (text, or a node of its tree) as a LaTeX formula (no ``$``)."""
    node = ast.parse(expression.strip(), mode="eval") if isinstance(expression, str) else expression
    return _to(node)[0]


def _cell(x: float, precision: Precision | None, final: bool) -> str:
    v = float(x)
    if abs(v) < 1e-12:
        return "0"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if precision is None or precision.mode == "exact":
        frac = Fraction(v).limit_denominator(1000)
        if abs(float(frac) - v) <= 1e-9 * max(1.0, abs(v)):
            sign = "-" if frac < 0 else ""
            return f"{sign}\\frac{{{abs(frac.numerator)}}}{{{frac.denominator}}}"
        return f"{v:.4g}"
    extra = 0 if final else 2
    if precision.mode == "decimals":
        text = f"{v:.{precision.digits + extra}f}"
        return text if final else (text.rstrip("0").rstrip(".") or "0")
    text = f"{v:.{precision.digits + extra}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text


def rounded(value: Any, precision: Precision | None, final: bool) -> Any:
    """``value`` rounded as :func:`latex_value` shows it (for the step's display value)."""
    arr = np.asarray(value, dtype=float)
    if precision is None or precision.mode == "exact":
        return arr if arr.ndim else float(arr)
    digits = precision.digits + (0 if final else 2)
    if precision.mode == "decimals":
        out = np.round(arr, digits) + 0.0
    else:
        out = np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[float])(arr)
    return out if out.ndim else float(out)


def latex_value(value: Any, precision: Precision | None, *, final: bool = False) -> str:
    """A number, vector (a column) or matrix as LaTeX, written as the prompt's precision says
    (module docstring); ``final`` marks the answer itself (no guard digits)."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        return _cell(float(arr), precision, final)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    rows = [" & ".join(_cell(v, precision, final) for v in row) for row in arr.tolist()]
    return "\\begin{pmatrix} " + " \\\\ ".join(rows) + " \\end{pmatrix}"


def relation(value: Any, precision: Precision | None, final: bool = False) -> str:
    """``=`` when :func:`latex_value` shows ``value`` exactly, ``\\approx`` when it rounds."""
    arr = np.asarray(value, dtype=float)
    shown = np.asarray(rounded(arr, precision, final), dtype=float)
    if precision is None or precision.mode == "exact":
        exact = all(
            abs(float(Fraction(float(v)).limit_denominator(1000)) - float(v))
            <= 1e-9 * max(1.0, abs(float(v)))
            for v in arr.ravel()
        )
        return "=" if exact else "\\approx"
    return (
        "=" if np.all(np.abs(shown - arr) <= 1e-12 * np.maximum(1.0, np.abs(arr))) else "\\approx"
    )


#: Step titles by the operation at the top of a sub-expression (plain text, as titles are).
_TITLES = {
    ast.Add: "Add",
    ast.Sub: "Subtract",
    ast.Mult: "Multiply",
    ast.Div: "Divide",
    ast.Pow: "Power",
    ast.MatMult: "Matrix product",
    ast.Mod: "Remainder",
}
_CALL_TITLES = {
    "transpose": "Transpose",
    "inv": "Inverse",
    "det": "Determinant",
    "solve": "Solve",
    "softmax": "Softmax of each row",
    "scores": "Scaled scores",
    "attention": "Attention",
    "self_attention": "Self-attention",
    "sqrt": "Square root",
    "exp": "Exponential",
    "norm": "Length",
    "hstack": "Side by side",
    "vstack": "One above the other",
    "outer": "Outer product",
}


def step_title(node: ast.AST) -> str:
    """A short plain-text title for the step that computes ``node``."""
    if isinstance(node, ast.Expression):
        node = node.body
    if isinstance(node, ast.BinOp):
        return _TITLES.get(type(node.op), "Compute")
    if isinstance(node, ast.Attribute):
        return "Transpose"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if name == "softmax":
            axis = {k.arg: k.value for k in node.keywords}.get("axis")
            if isinstance(axis, ast.Constant) and axis.value == 0:
                return "Softmax of each column"
        return _CALL_TITLES.get(name, name.capitalize())
    return "Compute"
