"""A safe evaluator for the NumPy expressions of ``expression`` exercises.

Instructors write ``answer: inv(A) @ b`` or ``require: [det(A) != 0]``; this module evaluates such
text without ``eval``: it parses with Python's ``ast`` in ``eval`` mode (one expression, no
statements) and walks an explicit allow-list of node types:

- numbers (int, float), ``True``/``False``, names of the exercise's variables and of the constants
  ``pi`` and ``e``; list displays ``[1, 2]`` (built into float arrays);
- ``+ - * / ** @ %``, unary ``- + not``, comparisons (chains allowed), ``and``/``or``, ``x if c
  else y``;
- indexing and slicing ``A[0, 1]``, ``A[:, 0]``, ``x[-1]`` (integer indices and slices only);
- the attribute ``.T`` (transpose) and nothing else: no dunder, no method, no other attribute;
- calls of the functions in ``FUNCTIONS`` only, by bare name, with the keyword arguments each one
  documents (``axis=``, ``decimals=``).

Everything else (attribute access such as ``().__class__``, ``__import__``, lambdas,
comprehensions, strings, f-strings, starred arguments, walrus) is rejected *before* evaluation
with a message naming the construct.  Sizes are bounded: text up to ``MAX_LENGTH`` characters,
arrays up to ``MAX_ELEMENTS`` elements (checked before a broadcast, a matrix product, an outer
product, ``eye``/``zeros``/``ones`` allocate), exponents computed in floating point with overflow
reported, and every result must be finite.

``inv``, ``solve``, ``det``, ``softmax``, ``scores``, ``attention`` and ``self_attention`` call
``quizapp.linalg`` (the project's single source of truth for expected answers).
"""

from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from quizapp import linalg

MAX_LENGTH = 2000


MAX_NODES = 400


MAX_ELEMENTS = 10_000


MAX_DIM = 100


#: Largest exponent of ``**``: a literal one is refused when the expression is compiled (at the
#: exercise's line, by ``quizapp validate``), a computed one when it is evaluated.  64 is far
#: above any power a student computes by hand; ``A ** 1000`` overflowed for most seeds.
MAX_EXPONENT = 64


CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}


class ExpressionError(ValueError):
    """An expression that is not allowed, does not parse, or fails to evaluate.

    ``message`` says what is wrong; ``column`` is the 1-based column in the expression text
    when known.
    """

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


# --- functions -------------------------------------------------------------------------------


def _arr(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=float)


def _square(name: str, a: np.ndarray) -> None:
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ExpressionError(f"{name}() needs a square matrix, got shape {a.shape}")


def _call_linalg(fn: Callable[..., Any], name: str, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:  # quizapp.linalg.LinalgError is a ValueError
        raise ExpressionError(f"{name}(): {exc}") from None


def _inv(a: Any) -> np.ndarray:
    a = _arr(a)
    _square("inv", a)
    return np.asarray(_call_linalg(linalg.inverse, "inv", a), dtype=float)


def _solve(a: Any, b: Any) -> np.ndarray:
    a, b = _arr(a), _arr(b)
    _square("solve", a)
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ExpressionError(f"solve(): shapes {a.shape} and {b.shape} do not match")
    return np.asarray(_call_linalg(linalg.solve, "solve", a, b), dtype=float)


def _det(a: Any) -> float:
    a = _arr(a)
    _square("det", a)
    return float(_call_linalg(linalg.determinant, "det", a))


def _softmax(x: Any, axis: Any = -1) -> np.ndarray:
    a = _arr(x)
    if a.ndim not in (1, 2):
        raise ExpressionError(f"softmax() needs a vector or a matrix, got shape {a.shape}")
    return np.asarray(_call_linalg(linalg.softmax, "softmax", a, axis=_axis(axis)), dtype=float)


def _matrices(name: str, *arrays: Any) -> list[np.ndarray]:
    out = [_arr(a) for a in arrays]
    if any(a.ndim != 2 for a in out):
        raise ExpressionError(f"{name}() needs matrices, got shapes {[a.shape for a in out]}")
    return out


def _attention(q: Any, k: Any, v: Any) -> np.ndarray:
    out, _weights = _call_linalg(linalg.attention, "attention", *_matrices("attention", q, k, v))
    return np.asarray(out, dtype=float)


def _self_attention(x: Any, wq: Any, wk: Any, wv: Any) -> np.ndarray:
    args = _matrices("self_attention", x, wq, wk, wv)
    _check_size(args[0].shape[0] * max(a.shape[1] for a in args))
    out, _weights = _call_linalg(linalg.self_attention, "self_attention", *args)
    return np.asarray(out, dtype=float)


def _scores(q: Any, k: Any) -> np.ndarray:
    qa, ka = _matrices("scores", q, k)
    _check_size(qa.shape[0] * ka.shape[0])
    return np.asarray(_call_linalg(linalg.scaled_scores, "scores", qa, ka), dtype=float)


def _size(n: Any, name: str) -> int:
    v = float(np.asarray(n))
    if not v.is_integer() or not 0 <= v <= MAX_DIM:
        raise ExpressionError(f"{name}(): the size must be an integer from 0 to {MAX_DIM}")
    return int(v)


def _eye(n: Any) -> np.ndarray:
    return np.eye(_size(n, "eye"))


def _zeros(r: Any, c: Any = None) -> np.ndarray:
    shape = (_size(r, "zeros"),) if c is None else (_size(r, "zeros"), _size(c, "zeros"))
    return np.zeros(shape)


def _ones(r: Any, c: Any = None) -> np.ndarray:
    shape = (_size(r, "ones"),) if c is None else (_size(r, "ones"), _size(c, "ones"))
    return np.ones(shape)


def _outer(a: Any, b: Any) -> np.ndarray:
    a, b = _arr(a), _arr(b)
    _check_size(a.size * b.size)
    return np.outer(a, b)


def _axis(axis: Any) -> int | None:
    if axis is None:
        return None
    v = float(np.asarray(axis))
    if not v.is_integer() or abs(v) > 1:
        raise ExpressionError("axis must be 0, 1 or -1")
    return int(v)


def _reduce(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def run(x: Any, axis: Any = None) -> Any:
        a = np.asarray(x)
        if a.size == 0:
            raise ExpressionError(f"{name}() of an empty array")
        try:
            return fn(a, axis=_axis(axis))
        except np.exceptions.AxisError:
            raise ExpressionError(f"{name}(): axis out of range for shape {a.shape}") from None

    return run


def _round(x: Any, decimals: Any = 0) -> Any:
    d = float(np.asarray(decimals))
    if not d.is_integer() or not -10 <= d <= 15:
        raise ExpressionError("round(): decimals must be an integer from -10 to 15")
    return np.round(_arr(x), int(d))


def _norm(x: Any) -> float:
    return float(np.linalg.norm(_arr(x)))


def _trace(a: Any) -> float:
    a = _arr(a)
    _square("trace", a)
    return float(np.trace(a))


def _rank(a: Any) -> float:
    a = _arr(a)
    if a.ndim != 2:
        raise ExpressionError("rank() needs a matrix")
    return float(np.linalg.matrix_rank(a))


def _diag(x: Any) -> np.ndarray:
    a = _arr(x)
    if a.ndim not in (1, 2):
        raise ExpressionError("diag() needs a vector or a matrix")
    if a.ndim == 1:
        _check_size(a.size * a.size)
    return np.diag(a)


def _stack(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def run(*parts: Any) -> np.ndarray:
        arrays = [_arr(p) for p in parts]
        _check_size(sum(a.size for a in arrays))
        try:
            return fn(arrays)
        except ValueError as exc:
            raise ExpressionError(f"{name}(): {exc}") from None

    return run


def _unary(fn: Callable[[np.ndarray], Any]) -> Callable[[Any], Any]:
    def run(x: Any) -> Any:
        with np.errstate(all="ignore"):  # overflow/log(0) are reported as "not finite"
            return fn(_arr(x))

    return run


@dataclass(frozen=True)
class Function:
    """An allowed function: the callable, its argument count range and allowed keywords."""

    fn: Callable[..., Any]
    min_args: int
    max_args: int
    keywords: tuple[str, ...] = ()
    doc: str = ""


FUNCTIONS: dict[str, Function] = {
    "inv": Function(_inv, 1, 1, doc="matrix inverse"),
    "solve": Function(_solve, 2, 2, doc="solve(A, b): x with A x = b"),
    "det": Function(_det, 1, 1, doc="determinant"),
    "softmax": Function(_softmax, 1, 1, ("axis",), "softmax along axis (default -1: rows)"),
    "scores": Function(_scores, 2, 2, doc="scaled scores Q K^T / sqrt(d)"),
    "attention": Function(_attention, 3, 3, doc="softmax(Q K^T / sqrt(d)) V"),
    "self_attention": Function(_self_attention, 4, 4, doc="attention(X W_Q, X W_K, X W_V)"),
    "transpose": Function(lambda a: _arr(a).T, 1, 1, doc="transpose"),
    "sqrt": Function(_unary(np.sqrt), 1, 1),
    "exp": Function(_unary(np.exp), 1, 1),
    "log": Function(_unary(np.log), 1, 1, doc="natural logarithm"),
    "abs": Function(_unary(np.abs), 1, 1),
    "eye": Function(_eye, 1, 1, doc="identity matrix"),
    "zeros": Function(_zeros, 1, 2),
    "ones": Function(_ones, 1, 2),
    "all": Function(_reduce(np.all, "all"), 1, 1, ("axis",)),
    "any": Function(_reduce(np.any, "any"), 1, 1, ("axis",)),
    "sum": Function(_reduce(np.sum, "sum"), 1, 1, ("axis",)),
    "mean": Function(_reduce(np.mean, "mean"), 1, 1, ("axis",)),
    "max": Function(_reduce(np.max, "max"), 1, 1, ("axis",)),
    "min": Function(_reduce(np.min, "min"), 1, 1, ("axis",)),
    "argmax": Function(_reduce(np.argmax, "argmax"), 1, 1, ("axis",), "0-based index"),
    "argmin": Function(_reduce(np.argmin, "argmin"), 1, 1, ("axis",), "0-based index"),
    "round": Function(_round, 1, 2, ("decimals",)),
    "norm": Function(_norm, 1, 1, doc="Euclidean (Frobenius) norm"),
    "trace": Function(_trace, 1, 1),
    "rank": Function(_rank, 1, 1),
    "diag": Function(_diag, 1, 1),
    "outer": Function(_outer, 2, 2),
    "hstack": Function(_stack(np.hstack, "hstack"), 1, 8),
    "vstack": Function(_stack(np.vstack, "vstack"), 1, 8),
}


# --- checking --------------------------------------------------------------------------------

_BINOPS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.Mod: "%",
}


_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
}


_DESCRIBE: dict[type[ast.AST], str] = {
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment (:=)",
    ast.Starred: "a starred argument",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Await: "await",
    ast.Yield: "yield",
}


@dataclass(frozen=True)
class Compiled:
    """A checked expression: its text, its tree and the variable names it reads."""

    text: str
    tree: ast.Expression
    names: frozenset[str]


def _col(node: ast.AST) -> int | None:
    off = getattr(node, "col_offset", None)
    return off + 1 if off is not None else None


@lru_cache(maxsize=2048)
def compile_expression(text: str) -> Compiled:
    """Parse and check ``text`` against the allow-list, without evaluating anything.

    Returns a ``Compiled`` whose ``names`` are the variables it reads (function names and the
    constants ``pi``/``e`` excluded).  Raises ``ExpressionError`` naming the first construct that
    is not allowed, or the syntax error.  Results are cached by text.
    """
    if not isinstance(text, str):
        raise ExpressionError("an expression must be text")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is longer than {MAX_LENGTH} characters")
    if not text.strip():
        raise ExpressionError("the expression is empty")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore"
            )  # e.g. SyntaxWarning for "1if": not the author's concern
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"syntax error: {exc.msg}", exc.offset) from None
    except (RecursionError, MemoryError, ValueError):
        raise ExpressionError("the expression is nested too deeply") from None
    names: set[str] = set()
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise ExpressionError(f"the expression has more than {MAX_NODES} parts")
    # Names and attributes first, so that `A.__class__.__mro__` is reported as the attribute
    # it reaches for rather than as the call around it.
    nodes.sort(
        key=lambda n: 0 if isinstance(n, ast.Name) else 1 if isinstance(n, ast.Attribute) else 2
    )
    index_tuples = {
        id(n.slice)
        for n in nodes
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Tuple)
    }
    for node in nodes:
        if isinstance(node, ast.Tuple) and id(node) not in index_tuples:
            raise ExpressionError(
                "a tuple is only allowed as an index (A[0, 1]); write a list [a, b] for a vector",
                _col(node),
            )
        _check_node(node, names)
    return Compiled(text.strip(), tree, frozenset(names))


def _check_node(node: ast.AST, names: set[str]) -> None:
    if isinstance(node, ast.Name):
        if node.id.startswith("_"):
            raise ExpressionError(f"the name {node.id!r} is not allowed", _col(node))
        if node.id not in FUNCTIONS and node.id not in CONSTANTS:
            names.add(node.id)
        return
    if isinstance(node, ast.Attribute):
        if node.attr != "T":
            raise ExpressionError(
                f"the attribute .{node.attr} is not allowed (only .T, the transpose)", _col(node)
            )
        return
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            what = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise ExpressionError(
                f"calling {what!r} is not allowed; allowed functions: {', '.join(sorted(FUNCTIONS))}",
                _col(node),
            )
        spec = FUNCTIONS[node.func.id]
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in spec.keywords:
                allowed = ", ".join(spec.keywords) or "none"
                raise ExpressionError(
                    f"{node.func.id}() takes no keyword {kw.arg or '**'!r} (allowed: {allowed})",
                    _col(node),
                )
        if not spec.min_args <= len(node.args) <= spec.max_args:
            want = (
                str(spec.min_args)
                if spec.min_args == spec.max_args
                else f"{spec.min_args} to {spec.max_args}"
            )
            raise ExpressionError(
                f"{node.func.id}() takes {want} argument(s), got {len(node.args)}", _col(node)
            )
        return
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or isinstance(node.value, (int, float)):
            return
        raise ExpressionError(
            f"the constant {node.value!r} is not allowed (numbers only)", _col(node)
        )
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise ExpressionError(
                f"the operator {ast.unparse(node)!r} is not allowed "
                f"(allowed: {' '.join(_BINOPS.values())})",
                _col(node),
            )
        if isinstance(node.op, ast.Pow):
            power = _literal(node.right)
            if power is not None and abs(power) > MAX_EXPONENT:
                raise ExpressionError(
                    f"the exponent {ast.unparse(node.right)} is larger than {MAX_EXPONENT}",
                    _col(node.right),
                )
        return
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
            raise ExpressionError("only unary -, + and not are allowed", _col(node))
        return
    if isinstance(node, ast.Compare):
        for op in node.ops:
            if type(op) not in _CMPOPS:
                raise ExpressionError(
                    "only comparisons == != < <= > >= are allowed (no 'is', no 'in')", _col(node)
                )
        return
    if isinstance(
        node,
        (
            ast.Expression,
            ast.BoolOp,
            ast.And,
            ast.Or,
            ast.IfExp,
            ast.Subscript,
            ast.Slice,
            ast.Tuple,
            ast.List,
            ast.Load,
            ast.operator,
            ast.unaryop,
            ast.cmpop,
            ast.keyword,
        ),
    ):
        return
    what = _DESCRIBE.get(type(node), type(node).__name__)
    raise ExpressionError(f"{what} is not allowed in an expression", _col(node))


def _literal(node: ast.AST) -> float | None:
    """The value of a number written in the text (``5``, ``-2.5``, ``+3``), else None."""
    sign = 1.0
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -sign if isinstance(node.op, ast.USub) else sign
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        if isinstance(node.value, bool):
            return None
        try:
            return sign * float(node.value)
        except OverflowError:
            return math.inf
    return None


# --- evaluation ------------------------------------------------------------------------------

#: ``ast.unparse`` of a node of a compiled (and cached) tree, for messages and trace steps:
#: the same nodes are evaluated on every draw, so each is written out once.
_unparse = lru_cache(maxsize=8192)(ast.unparse)


def _check_size(n: int) -> None:
    if n > MAX_ELEMENTS:
        raise ExpressionError(f"the result would have {n} elements (at most {MAX_ELEMENTS})")


def _finite(value: Any, where: str) -> Any:
    a = np.asarray(value)
    if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
        raise ExpressionError(f"{where} is not finite (overflow, division by zero or log(0)?)")
    if a.size > MAX_ELEMENTS:
        raise ExpressionError(f"{where} has more than {MAX_ELEMENTS} elements")
    return value


def _truth(value: Any, where: str) -> bool:
    a = np.asarray(value)
    if a.size != 1:
        raise ExpressionError(
            f"{where} is an array of shape {a.shape}, not a single true/false: "
            "use all(...) or any(...)"
        )
    return bool(a.reshape(()))


@dataclass
class Step:
    """One intermediate result of an evaluation (for worked solutions)."""

    text: str
    value: Any
    heatmap: bool = False
    note: str = ""


class _Evaluator:
    def __init__(self, variables: Mapping[str, Any], trace: list[Step] | None) -> None:
        self.vars = variables
        self.trace = trace

    def run(self, node: ast.AST) -> Any:
        value = self._eval(node)
        if (
            self.trace is not None
            and isinstance(node, (ast.BinOp, ast.Call, ast.Attribute))
            and not (self.trace and self.trace[-1].text == _unparse(node))
            # constant parts such as sqrt(2) are not steps worth showing
            and any(isinstance(n, ast.Name) and n.id in self.vars for n in ast.walk(node))
        ):
            self.trace.append(Step(_unparse(node), value))
        return value

    def _eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return self.run(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.vars:
                return self.vars[node.id]
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            if node.id in FUNCTIONS:
                raise ExpressionError(f"{node.id} is a function: call it, e.g. {node.id}(...)")
            raise ExpressionError(f"unknown name {node.id!r}", _col(node))
        if isinstance(node, ast.List):
            items = [_arr(self.run(e)) for e in node.elts]
            _check_size(sum(i.size for i in items))
            try:
                return np.array(items, dtype=float)
            except ValueError:
                raise ExpressionError("a list's items must have equal shapes") from None
        if isinstance(node, ast.Attribute):  # only .T passes the check
            return _arr(self.run(node.value)).T
        if isinstance(node, ast.UnaryOp):
            v = self.run(node.operand)
            if isinstance(node.op, ast.Not):
                return not _truth(v, f"the operand of 'not' ({_unparse(node.operand)})")
            return -_arr(v) if isinstance(node.op, ast.USub) else +_arr(v)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.BoolOp):
            is_and = isinstance(node.op, ast.And)
            result: Any = None
            for part in node.values:
                result = self.run(part)
                t = _truth(result, f"'{_unparse(part)}'")
                if is_and and not t:
                    return False
                if not is_and and t:
                    return True
            return _truth(result, "the condition")
        if isinstance(node, ast.Compare):
            left = self.run(node.left)
            result = None
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = self.run(comp)
                a, b = _arr(left), _arr(right)
                _broadcast(a, b, _unparse(node))
                r = _CMPOPS[type(op)](a, b)
                result = r if result is None else np.logical_and(result, r)
                left = right
            return result
        if isinstance(node, ast.IfExp):
            cond = _truth(self.run(node.test), f"the condition '{_unparse(node.test)}'")
            return self.run(node.body if cond else node.orelse)
        if isinstance(node, ast.Subscript):
            base = np.asarray(self.run(node.value))
            index = self._index(node.slice)
            try:
                return base[index]
            except IndexError as exc:
                raise ExpressionError(f"{_unparse(node)}: {exc}") from None
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            spec = FUNCTIONS[node.func.id]
            args = [self.run(a) for a in node.args]
            kwargs = {kw.arg: self.run(kw.value) for kw in node.keywords if kw.arg}
            value = spec.fn(*args, **kwargs)
            if self.trace is not None and node.func.id in _EXPLAIN:
                names = [_unparse(a) for a in node.args]
                self.trace.extend(_EXPLAIN[node.func.id](names, args))
            return value
        raise ExpressionError(f"{type(node).__name__} is not allowed")  # unreachable after check

    def _index(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Tuple):
            return tuple(self._index(e) for e in node.elts)
        if isinstance(node, ast.Slice):
            parts = [
                None if p is None else self._int(p) for p in (node.lower, node.upper, node.step)
            ]
            return slice(*parts)
        return self._int(node)

    def _int(self, node: ast.AST) -> int:
        v = np.asarray(self.run(node))
        if v.size != 1 or not float(v.reshape(())).is_integer():
            raise ExpressionError(f"an index must be an integer, got {_unparse(node)!r}")
        return int(v.reshape(()))

    def _binop(self, node: ast.BinOp) -> Any:
        left = self.run(node.left)
        right = self.run(node.right)
        a, b = _arr(left), _arr(right)
        op = type(node.op)
        where = _unparse(node)
        if op is ast.MatMult:
            if a.ndim == 0 or b.ndim == 0:
                raise ExpressionError(f"{where}: @ needs vectors or matrices, not numbers")
            inner_a = a.shape[-1]
            inner_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
            if a.ndim > 2 or b.ndim > 2 or inner_a != inner_b:
                raise ExpressionError(
                    f"{where}: shapes {a.shape} and {b.shape} do not fit a matrix product"
                )
            rows = a.shape[0] if a.ndim == 2 else 1
            cols = b.shape[1] if b.ndim == 2 else 1
            _check_size(rows * cols)
            return a @ b
        _broadcast(a, b, where)
        with np.errstate(all="ignore"):
            if op is ast.Pow:
                if np.any(np.abs(b) > MAX_EXPONENT):
                    raise ExpressionError(f"{where}: exponent larger than {MAX_EXPONENT}")
                result = np.power(a, b)
            elif op is ast.Add:
                result = a + b
            elif op is ast.Sub:
                result = a - b
            elif op is ast.Mult:
                result = a * b
            elif op is ast.Div:
                if np.any(b == 0):
                    raise ExpressionError(f"{where}: division by zero")
                result = a / b
            else:  # Mod
                if np.any(b == 0):
                    raise ExpressionError(f"{where}: modulo by zero")
                result = np.mod(a, b)
        return _finite(result, where)


def _explain_attention(names: list[str], args: list[Any]) -> list[Step]:
    q, k, _v = names
    scores = _scores(args[0], args[1])
    d = _arr(args[1]).shape[1]
    weights = _softmax(scores)
    return [
        Step(f"{q} @ {k}.T / sqrt({d})", scores, note="scores of each query (row) for each key"),
        Step(
            f"softmax({q} @ {k}.T / sqrt({d}))",
            weights,
            heatmap=True,
            note="attention weights: softmax of each row, so each row sums to 1",
        ),
    ]


def _explain_self_attention(names: list[str], args: list[Any]) -> list[Step]:
    x, wq, wk, wv = names
    xa, qa, ka, va = (_arr(a) for a in args)
    q, k, v = xa @ qa, xa @ ka, xa @ va
    steps = [
        Step(f"Q = {x} @ {wq}", q),
        Step(f"K = {x} @ {wk}", k),
        Step(f"V = {x} @ {wv}", v),
    ]
    return steps + _explain_attention(["Q", "K", "V"], [q, k, v])


def _explain_det(names: list[str], args: list[Any]) -> list[Step]:
    return [Step(f"det({names[0]})", _det(args[0]), note="non-zero, so the matrix is invertible")]


_EXPLAIN: dict[str, Callable[[list[str], list[Any]], list[Step]]] = {
    "attention": _explain_attention,
    "self_attention": _explain_self_attention,
    "inv": _explain_det,
    "solve": _explain_det,
}


def _broadcast(a: np.ndarray, b: np.ndarray, where: str) -> None:
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ExpressionError(f"{where}: shapes {a.shape} and {b.shape} do not match") from None
    _check_size(math.prod(shape))


def evaluate(
    expression: str | Compiled,
    variables: Mapping[str, Any],
    *,
    trace: list[Step] | None = None,
) -> Any:
    """Evaluate an allowed expression over ``variables`` (name -> number or NumPy array).

    Returns a NumPy scalar/array, a float or a bool.  With ``trace`` (a list), appends a ``Step``
    for every operation and call, innermost first, for worked solutions.  Raises
    ``ExpressionError`` for anything not allowed, unknown names, shape mismatches, singular
    matrices, results that are not finite or too large.
    """
    compiled = expression if isinstance(expression, Compiled) else compile_expression(expression)
    try:
        with np.errstate(all="ignore"):  # overflow etc. surface as "not finite" errors instead
            value = _Evaluator(variables, trace).run(compiled.tree)
    except ExpressionError:
        raise
    except RecursionError:
        raise ExpressionError("the expression is nested too deeply") from None
    except (ValueError, TypeError, ArithmeticError, np.linalg.LinAlgError) as exc:
        raise ExpressionError(f"cannot evaluate {compiled.text!r}: {exc}") from None
    return _finite(value, "the result")


def truth(expression: str | Compiled, variables: Mapping[str, Any]) -> bool:
    """Evaluate a constraint (``require``) to one bool; arrays must be reduced with all/any."""
    compiled = expression if isinstance(expression, Compiled) else compile_expression(expression)
    return _truth(evaluate(compiled, variables), f"the condition {compiled.text!r}")
