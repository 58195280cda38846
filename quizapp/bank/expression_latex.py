"""An allowed expression written as LaTeX, for the worked solutions of ``expression`` exercises
(:func:`expression_latex`): ``inv(A) @ b`` is shown as ``A^{-1} b``, not as code.  It reads the
tree :func:`quizapp.bank.expression.compile_expression` checked, and parenthesizes by Python's
operator precedence."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from quizapp.bank.expression import ExpressionError, compile_expression, evaluate

#: Operator precedence for parenthesizing (higher binds tighter), as in Python's grammar.
_PREC: dict[type[ast.AST], int] = {
    ast.Or: 1,
    ast.And: 2,
    ast.Not: 3,
    ast.Compare: 4,
    ast.Add: 6,
    ast.Sub: 6,
    ast.Mult: 7,
    ast.Div: 7,
    ast.Mod: 7,
    ast.MatMult: 7,
    ast.USub: 8,
    ast.UAdd: 8,
    ast.Pow: 9,
}


_ATOM = 10


_LATEX_CMP = {
    ast.Eq: "=",
    ast.NotEq: r"\neq",
    ast.Lt: "<",
    ast.LtE: r"\le",
    ast.Gt: ">",
    ast.GtE: r"\ge",
}


#: Functions written as operators (``\sqrt{x}``, ``x^T``, ``A^{-1}``, ``|x|``) or LaTeX's own
#: operator names; the others are upright names, ``\mathrm{softmax}(x)``.
_LATEX_NAMED = {"exp": r"\exp", "log": r"\ln", "det": r"\det", "max": r"\max", "min": r"\min"}


_GREEK = frozenset(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
    "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega".split()
)


def _latex_name(name: str) -> str:
    """A variable name as LaTeX: ``x`` -> ``x``, ``W_Q`` -> ``W_{Q}``, ``alpha`` -> ``\\alpha``,
    ``scores`` -> ``\\mathrm{scores}``."""
    base, _, sub = name.partition("_")
    numbered = re.fullmatch(r"([A-Za-z]+?)([0-9]+)", base)
    if numbered is not None and not sub:  # H1 -> H_{1}, as a prompt writes it
        base, sub = numbered[1], numbered[2]
    if not base:
        return r"\mathrm{" + name.replace("_", r"\_") + "}"
    head = "\\" + base if base in _GREEK else base if len(base) == 1 else r"\mathrm{" + base + "}"
    return head + ("_{" + _latex_name(sub) + "}" if sub else "")


def _latex_number(value: Any) -> str:
    if isinstance(value, bool):
        return r"\mathrm{" + str(value) + "}"
    text = repr(value) if isinstance(value, float) else str(value)
    if "e" in text or "E" in text:
        mant, _, exp = text.lower().partition("e")
        return f"{mant} \\times 10^{{{int(exp)}}}"
    return text


def _is_call(node: ast.AST, *names: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def _is_one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == 1


class _Latex:
    """Expression tree -> LaTeX, parenthesizing by precedence.  With ``values`` (the variables)
    it knows each subexpression's number of dimensions, to write ``q @ k`` of two vectors as a
    dot product and a list of vectors as the matrix whose rows they are."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self.values = values
        self._ndims: dict[str, int | None] = {}

    def ndim(self, node: ast.AST) -> int | None:
        """The number of dimensions of ``node``'s value (0, 1 or 2), None when unknown."""
        if self.values is None:
            return None
        text = ast.unparse(node)
        if text not in self._ndims:
            try:
                self._ndims[text] = int(np.ndim(evaluate(compile_expression(text), self.values)))
            except Exception:  # noqa: BLE001 - unknown shape: written as in the generic case
                self._ndims[text] = None
        return self._ndims[text]

    def __call__(self, node: ast.AST, parent: int = 0) -> str:
        text, prec = self.node(node)
        return f"\\left({text}\\right)" if prec < parent else text

    def node(self, node: ast.AST) -> tuple[str, int]:
        if isinstance(node, ast.Expression):
            return self.node(node.body)
        if isinstance(node, ast.Constant):
            return _latex_number(node.value), _ATOM
        if isinstance(node, ast.Name):
            if node.id == "pi":
                return r"\pi", _ATOM
            if len(node.id) == 1 and self.ndim(node) == 1:  # a vector, bold as the prompts write it
                return r"\mathbf{" + node.id + "}", _ATOM
            return _latex_name(node.id), _ATOM
        if isinstance(node, ast.Attribute):  # only .T passes the check
            return self.transposed(node.value)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.UnaryOp):
            prec = _PREC[type(node.op)]
            sign = {ast.USub: "-", ast.UAdd: "+", ast.Not: r"\lnot "}[type(node.op)]
            return sign + self(node.operand, prec), prec
        if isinstance(node, ast.BoolOp):
            prec = _PREC[type(node.op)]
            joiner = r" \land " if isinstance(node.op, ast.And) else r" \lor "
            return joiner.join(self(v, prec + 1) for v in node.values), prec
        if isinstance(node, ast.Compare):
            parts = [self(node.left, _PREC[ast.Compare] + 1)]
            for op, comp in zip(node.ops, node.comparators, strict=True):
                parts += [_LATEX_CMP[type(op)], self(comp, _PREC[ast.Compare] + 1)]
            return " ".join(parts), _PREC[ast.Compare]
        if isinstance(node, ast.IfExp):
            return (
                self(node.body, 1)
                + r" \text{ if } "
                + self(node.test, 1)
                + r" \text{ else } "
                + self(node.orelse, 1),
                0,
            )
        if isinstance(node, ast.Subscript):
            return self(node.value, _ATOM) + "[" + self.index(node.slice) + "]", _ATOM
        if isinstance(node, ast.List):
            return self.listed(node, transposed=False), _ATOM
        if isinstance(node, ast.Call):
            return self.call(node)
        return r"\mathtt{" + ast.unparse(node).replace("_", r"\_") + "}", _ATOM

    def listed(self, node: ast.List, transposed: bool) -> str:
        """A list literal as the array it builds: numbers as a column vector (a vector is a
        column, as ``quizapp.bank.formula`` writes values); vectors as the rows of a matrix, or,
        transposed, as its columns."""
        vectors = bool(node.elts) and all(self.ndim(e) == 1 for e in node.elts)
        if vectors and transposed:
            cells = " & ".join(self(e) for e in node.elts)
        elif vectors:
            cells = r" \\ ".join(self(e, _ATOM) + "^{T}" for e in node.elts)
        else:
            cells = r" \\ ".join(self(e) for e in node.elts)
        return r"\begin{pmatrix} " + cells + r" \end{pmatrix}"

    def transposed(self, node: ast.AST) -> tuple[str, int]:
        """``node`` transposed: ``X^{T}``; a list literal as the matrix with those columns."""
        if isinstance(node, ast.List):
            return self.listed(node, transposed=True), _ATOM
        return self(node, _ATOM) + "^{T}", _PREC[ast.Pow]

    def index(self, node: ast.AST) -> str:
        if isinstance(node, ast.Tuple):
            return ", ".join(self.index(e) for e in node.elts)
        if isinstance(node, ast.Slice):
            parts = ["" if p is None else self(p) for p in (node.lower, node.upper, node.step)]
            return ":".join(parts[:2] if node.step is None else parts)
        return self(node)

    def binop(self, node: ast.BinOp) -> tuple[str, int]:
        op = type(node.op)
        if op is ast.Div:
            return r"\frac{" + self(node.left) + "}{" + self(node.right) + "}", _ATOM
        prec = _PREC[op]
        if op is ast.Pow:  # right-associative: the base needs brackets at equal precedence
            return self(node.left, prec + 1) + "^{" + self(node.right) + "}", prec
        if op is ast.Add and _is_call(node.left, "argmax", "argmin") and _is_one(node.right):
            position = self.position(node.left)  # argmax(x) + 1: the 1-based position itself
            if position is not None:
                return position, _PREC[ast.Add]
        left = self(node.left, prec)
        right = self(node.right, prec + 1)
        if op is ast.MatMult:
            if self.ndim(node.left) == 1 and self.ndim(node.right) == 1:
                return left + r" \cdot " + right, prec  # two vectors: their dot product
            return left + " " + right, prec
        symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: r"\cdot", ast.Mod: r"\bmod"}[op]
        return f"{left} {symbol} {right}", prec

    def position(self, node: ast.AST) -> str | None:
        """``argmax(x)`` / ``argmin(x)`` of a vector as the position (counted from 1) of its
        largest / smallest entry, ``\\operatorname{arg\\,max}_{i} x_{i}``; None for other
        calls (an ``axis``)."""
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        if node.keywords or len(node.args) != 1:
            return None
        arg = node.args[0]
        entry = self(arg, _ATOM)
        entry = entry if isinstance(arg, ast.Name) else r"\left(" + self(arg) + r"\right)"
        word = "max" if node.func.id == "argmax" else "min"
        return rf"\operatorname{{arg\,{word}}}_{{i}} {entry}_{{i}}"

    def call(self, node: ast.Call) -> tuple[str, int]:
        assert isinstance(node.func, ast.Name)
        name = node.func.id
        args = node.args
        if name == "transpose" and len(args) == 1 and not node.keywords:
            return self.transposed(args[0])
        if name == "solve" and len(args) == 2:  # the x with A x = b
            return self(args[0], _ATOM) + "^{-1} " + self(args[1], _PREC[ast.MatMult] + 1), _PREC[
                ast.MatMult
            ]
        if name == "norm" and len(args) == 1:
            return r"\lVert " + self(args[0]) + r" \rVert", _ATOM
        if name in ("hstack", "vstack") and args and not node.keywords:  # a block matrix
            joiner = " & " if name == "hstack" else r" \\ "
            return r"\begin{bmatrix} " + joiner.join(
                self(a) for a in args
            ) + r" \end{bmatrix}", _ATOM
        if name in ("argmax", "argmin"):
            position = self.position(node)  # counted from 1; the 0-based index is one less
            if position is not None:
                return position + " - 1", _PREC[ast.Sub]
            word = "max" if name == "argmax" else "min"
            name = rf"\operatorname{{arg\,{word}}}"
        if name == "outer" and len(args) == 2:
            return self(args[0], _ATOM) + " " + self(args[1], _ATOM) + "^{T}", _PREC[ast.MatMult]
        if name == "trace" and len(args) == 1:
            return r"\operatorname{tr}\left(" + self(args[0]) + r"\right)", _ATOM
        if name == "rank" and len(args) == 1:
            return r"\operatorname{rank}\left(" + self(args[0]) + r"\right)", _ATOM
        if name == "eye" and len(args) == 1:
            return "I_{" + self(args[0]) + "}", _ATOM
        if name == "inv" and len(args) == 1:
            return self(args[0], _ATOM) + "^{-1}", _PREC[ast.Pow]
        if name == "sqrt" and len(args) == 1:
            return r"\sqrt{" + self(args[0]) + "}", _ATOM
        if name == "abs" and len(args) == 1:
            return r"\left|" + self(args[0]) + r"\right|", _ATOM
        head = (
            name
            if name.startswith("\\")
            else _LATEX_NAMED.get(name, r"\mathrm{" + name.replace("_", r"\_") + "}")
        )
        parts = [self(a) for a in args]
        parts += [
            r"\mathrm{" + str(kw.arg) + "}=" + self(kw.value) for kw in node.keywords if kw.arg
        ]
        return head + r"\left(" + ", ".join(parts) + r"\right)", _ATOM


_ASSIGNED = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*=(?!=)\s*(.+)\Z", re.S)


def expression_latex(text: str, values: Mapping[str, Any] | None = None) -> str:
    """LaTeX for an allowed expression (or a worked-solution step ``NAME = expression``), for
    showing it as math instead of code: ``q @ K.T / sqrt(4)`` -> ``\\frac{q K^{T}}{\\sqrt{4}}``,
    ``transpose(A)`` -> ``A^{T}``, ``inv(A) @ b`` -> ``A^{-1} b``, ``softmax(x - c)`` ->
    ``\\mathrm{softmax}\\left(x - c\\right)``.  Variable names as in the prompt: one letter
    italic, ``W_Q`` subscripted, Greek names as letters, longer names upright.

    Functions with a notation are written in it: ``solve(A, b)`` -> ``A^{-1} b``, ``norm(q)``
    -> ``\\lVert q \\rVert``, ``hstack(H1, H2)`` -> the block matrix ``[H_1 \\; H_2]``
    (``vstack`` stacked), ``argmax(s) + 1`` -> ``\\operatorname{arg\\,max}_{i} s_{i}`` (the
    position counted from 1; a bare ``argmax(s)``, NumPy's 0-based index, is that minus 1),
    ``outer(a, b)`` -> ``a b^{T}``, ``trace``/``rank`` as operators, ``eye(n)`` -> ``I_{n}``.
    With ``values`` (the variables' values, shapes are read from them) ``q @ k`` of two vectors
    is the dot product ``q \\cdot k`` and ``[a, b]`` of two vectors the matrix with rows ``a^T``
    and ``b^T`` (``transpose([a, b])`` with columns ``a`` and ``b``); a list of numbers is a
    column vector.

    Text that is not an expression of the allowed language is returned as ``\\mathtt{...}``
    (monospace), so a solution step always renders.
    """
    m = _ASSIGNED.fullmatch(text)
    if m is not None:
        return _latex_name(m[1]) + " = " + expression_latex(m[2], values)
    try:
        compiled = compile_expression(text)
    except ExpressionError:
        return r"\mathtt{" + re.sub(r"([_{}$&#%\\^~])", r"\\\1", text) + "}"
    return _Latex(values)(compiled.tree)
