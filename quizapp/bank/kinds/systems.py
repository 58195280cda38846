"""Kinds for linear equations and systems (the deck's opening: 5x = 15, 5x + y = 15, the 2x2 system).

- ``linear_equation``: one equation, one unknown (``ax = b`` or ``ax + c = b``), integer solution.
- ``line_points``: one equation, two unknowns: infinitely many solutions; give one (or ``count``
  distinct) points on the line (answer form ``point_on_line``).
- ``linear_system``: n equations, n unknowns with a unique integer solution (or the deck's own
  ``fixed`` system).
- ``system_matrix_form``: write a system as ``Ax = y``: give ``A`` or the augmented ``[A | y]``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._elimination import as_fractions, augmented_latex, gauss_jordan
from ._mistakes import distinguishable_codes
from ._util import (
    IntRange,
    clean,
    draw,
    ints,
    latex_matrix,
    latex_row,
    linear_combination,
    num,
    tidy,
    unknown_names,
)


def _aligned(A: np.ndarray, y: np.ndarray, names: list[str]) -> str:
    rows = [f"{linear_combination(r, names)} &= {num(v)}" for r, v in zip(A, y, strict=True)]
    return r"\begin{aligned} " + r" \\ ".join(rows) + r" \end{aligned}"


@register_kind
class LinearEquation(Kind):
    """One linear equation in one unknown, ``ax = b`` (or ``ax + c = b``), with an integer solution.

    Values: ``equation`` (LaTeX), ``a``, ``b``, ``c``.  Expected: ``x`` (scalar, from
    ``linalg.solve``).  Detectors: ``inverted_division`` (``a / b``), ``moved_without_sign``.
    ``guard`` lists mistakes every variant must tell apart from the right answer (redrawn until
    it does): ``inverted_division`` rules out ``x = 0`` (``5x = 0``, guessable, and ``0 / a``
    inverted is no number) and ``x = ±1`` (where ``a / b`` is ``x`` again).
    """

    name = "linear_equation"
    #: Revision 2: ``guard`` left unset means ``inverted_division``, with ``moved_without_sign``
    #: too when the equation has a constant (no x = 0 or ±1, where the mistakes are right).
    #: Revision 3: a draw whose named mistakes give one answer is drawn again.
    revision = 3
    redraw_coinciding = 3
    revision_defaults = {
        2: lambda p: {
            "guard": ["inverted_division", *(["moved_without_sign"] if p.constant else [])]
        }
    }

    class Params(KindParams):
        coefficient: IntRange = (-9, 9)
        solution: IntRange = (-10, 10)
        constant: bool = False
        constant_range: IntRange = (-12, 12)
        #: Named mistakes every variant must tell apart.  Unset means ``inverted_division`` (and
        #: ``moved_without_sign`` with a constant) for new variants (revision 2); ``[]`` draws as
        #: revision 1.
        guard: list[Literal["inverted_division", "moved_without_sign"]] = Field(
            default_factory=list
        )

        @model_validator(mode="after")
        def _moved_needs_constant(self) -> LinearEquation.Params:
            if "moved_without_sign" in self.guard and not self.constant:
                raise ValueError("guard: moved_without_sign needs constant: true")
            return self

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        guard = tuple(dict.fromkeys(p.guard))

        def make() -> tuple[int, int, int] | None:
            a = ints(rng, p.coefficient)
            x = ints(rng, p.solution)
            c = ints(rng, p.constant_range) if p.constant else 0
            if abs(a) < 2 or (p.constant and c == 0):
                return None
            if guard:
                ctx = {"family": "equation", "a": a, "b": a * x + c, "c": c}
                if distinguishable_codes(np.asarray(float(x)), ctx, guard) != guard:
                    return None
            return a, x, c

        a, x, c = draw(rng, make, "a coefficient other than 0 and ±1")
        b = a * x + c
        lhs = linear_combination([a], ["x"]) + (f" {'+' if c > 0 else '-'} {abs(c)}" if c else "")
        equation = f"{lhs} = {b}"
        expected = float(tidy(linalg.solve([[a]], [b - c]))[0])
        steps = []
        if c:
            steps.append(
                SolutionStep(
                    "Move the constant",
                    (f"Subtract ${c}$ from" if c > 0 else f"Add ${-c}$ to")
                    + f" both sides: ${linear_combination([a], ['x'])} = {b - c}$.",
                    value=b - c,
                )
            )
        steps.append(
            SolutionStep(
                "Divide by the coefficient",
                f"Divide both sides by ${a}$: $x = \\frac{{{b - c}}}{{{a}}} = {num(expected)}$.",
                value=expected,
            )
        )
        steps.append(
            SolutionStep(
                "Check",
                f"${a} \\cdot ({num(expected)}){(' + ' if c > 0 else ' - ') + str(abs(c)) if c else ''}"
                f" = {b}$ ✓.",
            )
        )
        ctx = {"family": "equation", "a": a, "b": b, "c": c, "unknowns": ["x"]}
        detectors = distinguishable_codes(
            np.asarray(expected), ctx, ("inverted_division", "moved_without_sign")
        )
        return Generated(
            values={"equation": equation, "a": a, "b": b, "c": c},
            expected=np.asarray(expected),
            answer_form=AnswerForm(type="scalar", shape=(), unknowns=["x"]),
            solution=steps,
            context=ctx,
            detectors=detectors,
        )


@register_kind
class LinePoints(Kind):
    """One equation ``ax + by = c`` in two unknowns: infinitely many solutions, give ``count`` of them.

    The answer form is ``point_on_line``: any point satisfying the equation is correct (checked
    with the exercise's tolerance), and ``count > 1`` asks for that many DISTINCT points.  ``fixed``
    gives the coefficients ``[a, b, c]`` instead of drawing them (the deck's ``[5, 1, 15]``).
    Values: ``equation``, ``a``, ``b``, ``c``, ``count``.  Expected: ``count`` integer points
    (``(2,)`` or ``(count, 2)``), shown in the solution; context ``coefficients`` ``(1, 2)``,
    ``rhs`` ``(1,)``.
    """

    name = "line_points"

    class Params(KindParams):
        coefficients: IntRange = (-6, 6)
        point: IntRange = (-6, 6)
        count: int = Field(1, ge=1, le=3)
        fixed: tuple[int, int, int] | None = None

        @model_validator(mode="after")
        def _fixed_has_both_unknowns(self) -> LinePoints.Params:
            if self.fixed is not None and (self.fixed[0] == 0 or self.fixed[1] == 0):
                raise ValueError("fixed: both coefficients a and b of ax + by = c must be non-zero")
            return self

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        if p.fixed is not None:
            a, b, c = p.fixed
        else:

            def make() -> tuple[int, int, int] | None:
                a, b = (ints(rng, p.coefficients) for _ in range(2))
                x0, y0 = (ints(rng, p.point) for _ in range(2))
                if a == 0 or b == 0 or math.gcd(a, b) != 1:
                    return None
                return a, b, a * x0 + b * y0

            a, b, c = draw(rng, make, "non-zero coprime coefficients")
        g = math.gcd(a, b)
        # integer points: a particular solution plus multiples of (b/g, -a/g), when c % g == 0
        points: list[tuple[float, float]] = []
        if c % g == 0:
            # extended Euclid for a particular integer solution
            x0, y0 = _particular(a, b, c)
            step = (b // g, -a // g)
            # shift towards small numbers: pick the t that makes |x| small
            t0 = -round(x0 / step[0]) if step[0] else 0
            points = [(x0 + (t0 + t) * step[0], y0 + (t0 + t) * step[1]) for t in range(p.count)]
        else:
            points = [(float(t), (c - a * t) / b) for t in range(p.count)]
        pts = np.array(points, dtype=float)
        expected = pts[0] if p.count == 1 else pts
        equation = f"{linear_combination([a, b], ['x', 'y'])} = {c}"
        if p.fixed is not None and rng.random() < 0.5:
            # the given equation with its terms in the other order (same line, same answers)
            equation = f"{linear_combination([b, a], ['y', 'x'])} = {c}"
        if a % b == 0 and c % b == 0:  # y = c/b - (a/b) x with integer coefficients
            k, m = c // b, -a // b
            if k == 0:
                y_of_x = linear_combination([m], ["x"])
            else:  # the deck's form: (x, 15 - 5x)
                y_of_x = f"{k} {'+' if m > 0 else '-'} {'' if abs(m) == 1 else abs(m)}x"
        else:
            numerator = f"{c} {'-' if a > 0 else '+'} {'' if abs(a) == 1 else abs(a)}x"
            y_of_x = f"\\frac{{{numerator}}}{{{b}}}"
        steps = [
            SolutionStep(
                "Solve for y",
                f"From ${equation}$: $y = {y_of_x}$. Every choice of $x$ gives a solution "
                f"$\\left(x, {y_of_x}\\right)$: there are infinitely many, all on one line.",
            ),
            SolutionStep(
                "Pick values of x",
                "For example "
                + ", ".join(f"$x = {num(x)}$ gives ${latex_row((x, y))}$" for x, y in points)
                + ".",
                value=clean(expected),
            ),
        ]
        return Generated(
            values={"equation": equation, "a": a, "b": b, "c": c, "count": p.count},
            expected=expected,
            answer_form=AnswerForm(
                type="point_on_line",
                shape=expected.shape,
                count=p.count,
                unknowns=["x", "y"],
                show_shape=True,
            ),
            solution=steps,
            context={
                "family": "line",
                "coefficients": np.array([[a, b]], dtype=float),
                "rhs": np.array([c], dtype=float),
                "equation": equation,
                "unknowns": ["x", "y"],
            },
            detectors=(),
        )


def _particular(a: int, b: int, c: int) -> tuple[int, int]:
    """Integers ``(x, y)`` with ``ax + by = c`` (extended Euclid); needs ``gcd(a, b) | c``."""

    def egcd(m: int, n: int) -> tuple[int, int, int]:
        if n == 0:
            return (abs(m), 1 if m >= 0 else -1, 0)
        g, s, t = egcd(n, m % n)
        return g, t, s - (m // n) * t

    g, s, t = egcd(a, b)
    k = c // g
    return s * k, t * k


#: Most equations of a system given in the YAML (``fixed``), like the random ones' ``size``.
MAX_FIXED_SIZE = 6


class FixedSystem(KindParams):
    """A system given in the YAML: ``A`` square, ``y`` one entry per row, ``A`` non-singular."""

    A: list[list[float]]
    y: list[float]

    @model_validator(mode="after")
    def _well_posed(self) -> FixedSystem:
        n = len(self.A)
        if n == 0 or any(len(r) != n for r in self.A):
            raise ValueError("fixed.A must be a square matrix (n rows of n numbers)")
        if n > MAX_FIXED_SIZE:
            raise ValueError(
                f"fixed.A is a {n} x {n} matrix; a system has at most {MAX_FIXED_SIZE} equations"
            )
        if any(abs(v) > 1e6 for row in self.A for v in row) or any(abs(v) > 1e6 for v in self.y):
            raise ValueError("fixed: numbers must be within ±1e6")
        if len(self.y) != n:
            raise ValueError(f"fixed.y must have {n} entries, one per equation")
        try:
            linalg.solve(self.A, self.y)
        except linalg.LinalgError as exc:
            raise ValueError(f"fixed.A: {exc}") from None
        return self


@register_kind
class LinearSystem(Kind):
    """``n`` linear equations in ``n`` unknowns with a unique INTEGER solution.

    Built backwards: draw an integer solution and an integer matrix with ``det != 0``, then
    ``y = A x``.  ``fixed`` gives the deck's system instead (``A: [[5, 1], [3, 2]], y: [15, 16]``),
    its equations listed in a random order.
    Values: ``system`` (LaTeX ``aligned``), ``A``, ``y``, ``n``.  Expected: ``x`` ``(n,)``.
    Detector: ``swapped_unknowns``.
    """

    name = "linear_system"

    class Params(KindParams):
        size: int = Field(2, ge=2, le=4)
        coefficients: IntRange = (-6, 6)
        solution: IntRange = (-6, 6)
        fixed: FixedSystem | None = None

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        if p.fixed is not None:
            # The given system, its equations listed in a random order (the same system and
            # answer: variants differ only in how it is presented).
            order = rng.permutation(len(p.fixed.y))
            A = np.array(p.fixed.A, dtype=float)[order]
            y = np.array(p.fixed.y, dtype=float)[order]
        else:
            n = p.size

            def make() -> tuple[np.ndarray, np.ndarray] | None:
                A = ints(rng, p.coefficients, (n, n))
                x = ints(rng, p.solution, n)
                if np.any(np.count_nonzero(A, axis=1) < 2) or len(set(x.tolist())) < 2:
                    return None
                if abs(round(np.linalg.det(A))) < 1:
                    return None
                return A.astype(float), (A @ x).astype(float)

            A, y = draw(rng, make, "a non-singular integer matrix and an integer solution")
        n = A.shape[0]
        names = unknown_names(n)
        x = tidy(linalg.solve(A, y))
        det = linalg.determinant(A)
        steps = [
            SolutionStep(
                "Write it as Ax = y",
                f"$A = {latex_matrix(A)}$, $\\mathbf{{y}} = {latex_matrix(y)}$; "
                f"$\\det A = {num(det)} \\ne 0$, so there is exactly one solution.",
                value=clean(A),
            )
        ]
        if n == 2:
            (a, b), (c, d) = A
            e, f = y
            steps.append(SolutionStep("Eliminate", _eliminate_y(a, b, c, d, e, f, x)))
        else:
            aug = np.column_stack([A, y])
            steps.append(
                SolutionStep(
                    "Row-reduce [A | y]",
                    "Eliminate one unknown at a time: make the pivot of each column 1 and clear "
                    "the rest of its column. Adding a multiple of one equation to another keeps "
                    f"every solution: $$ {augmented_latex(as_fractions(aug), n)} $$",
                )
            )
            for j, (ops, M) in enumerate(gauss_jordan(aug, n)):
                steps.append(
                    SolutionStep(
                        f"Column {j + 1}: {names[j]}",
                        f"${ops}$: $$ {augmented_latex(M, n)} $$",
                    )
                )
        steps.append(
            SolutionStep(
                "Solution",
                ", ".join(f"${nm} = {num(v)}$" for nm, v in zip(names, x, strict=True))
                + f". Check: $A\\mathbf{{x}} = {latex_matrix(A @ x)}$ ✓.",
                value=clean(x),
            )
        )
        ctx = {"family": "system", "A": A, "y": y, "unknowns": names}
        detectors = ("swapped_unknowns",) if len(set(np.round(x, 9).tolist())) > 1 else ()
        return Generated(
            values={"system": _aligned(A, y, names), "A": clean(A), "y": clean(y), "n": n},
            expected=x,
            answer_form=AnswerForm(type="vector", shape=(n,), unknowns=names),
            solution=steps,
            context=ctx,
            detectors=detectors,
        )


def _coef(v: float) -> str:
    return "" if v == 1 else "-" if v == -1 else num(v)


def _eliminate_y(a: float, b: float, c: float, d: float, e: float, f: float, x: Any) -> str:
    """The elimination step for ``ax + by = e``, ``cx + dy = f`` with the smallest integer
    multipliers (``d/g`` and ``b/g``, ``g = gcd(b, d)``): equal y-coefficients are just
    subtracted, opposite ones added, and an equation without ``y`` is used as it is."""
    if b == 0 or d == 0:
        which, (p, q, r) = ("first", (a, b, e)) if b == 0 else ("second", (c, d, f))
        return (
            f"The {which} equation has no $y$: ${_coef(p)}x = {num(r)}$, so "
            f"$x = {num(x[0])}$. Substitute back: $y = {num(x[1])}$."
        )
    g = math.gcd(int(round(abs(b))), int(round(abs(d)))) or 1
    m1, m2 = int(round(d / g)), int(round(b / g))
    if m1 < 0:
        m1, m2 = -m1, -m2
    op, k = ("subtract", m2) if m2 > 0 else ("add", -m2)
    if m1 == 1 and k == 1:
        how = (
            "The $y$-coefficients are equal, so subtract the second equation from the first"
            if op == "subtract"
            else "The $y$-coefficients are opposite, so add the two equations"
        )
    elif m1 == 1:
        how = f"Multiply the second equation by ${num(k)}$ and {op} it {'from' if op == 'subtract' else 'to'} the first"
    elif k == 1:
        how = f"Multiply the first equation by ${num(m1)}$ and {op} the second"
    else:
        how = (
            f"Multiply the first equation by ${num(m1)}$ and the second by ${num(k)}$ and {op} them"
        )
    cx, rhs = m1 * a - m2 * c, m1 * e - m2 * f
    solved = "" if cx == 1 else f", so $x = \\frac{{{num(rhs)}}}{{{num(cx)}}} = {num(x[0])}$"
    return f"{how}: ${_coef(cx)}x = {num(rhs)}${solved}. Substitute back: $y = {num(x[1])}$."


@register_kind
class SystemMatrixForm(Kind):
    """Write a system of linear equations as ``Ax = y``.

    The equations are shown with their terms in a random order and (``rearrange``) some terms
    moved to the right-hand side, so the student has to collect them.  ``ask: A`` asks for the
    coefficient matrix, ``ask: augmented`` for ``[A | y]`` (``n x (n+1)``).
    Values: ``system`` (LaTeX), ``unknowns`` (e.g. ``x, y``), ``n``.
    Detectors: ``moved_without_sign``, ``swapped_unknowns`` (two columns swapped).
    """

    name = "system_matrix_form"

    class Params(KindParams):
        size: int = Field(2, ge=2, le=3)
        coefficients: IntRange = (-6, 6)
        constants: IntRange = (-12, 12)
        ask: Literal["A", "augmented"] = "augmented"
        rearrange: bool = True

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        n = p.size
        names = unknown_names(n)

        def make() -> tuple[np.ndarray, np.ndarray] | None:
            A = ints(rng, p.coefficients, (n, n))
            y = ints(rng, p.constants, n)
            if np.any(np.count_nonzero(A, axis=1) < 2) or abs(round(np.linalg.det(A))) < 1:
                return None
            if len({tuple(col) for col in A.T.tolist()}) < n:
                return None
            return A, y

        A, y = draw(rng, make, "a non-singular coefficient matrix with distinct columns")
        rows: list[str] = []
        moved: list[tuple[int, int]] = []
        for i in range(n):
            cols = [j for j in range(n) if A[i, j] != 0]
            order = [cols[k] for k in rng.permutation(len(cols))]
            right: list[int] = []
            if p.rearrange and len(order) >= 2 and rng.random() < 0.6:
                right = [order.pop()]
                moved.extend((i, j) for j in right)
            lhs = linear_combination([A[i, j] for j in order], [names[j] for j in order])
            rhs = num(y[i]) if (y[i] != 0 or not right) else ""
            for j in right:
                term = linear_combination([-A[i, j]], [names[j]])
                if rhs:
                    rhs += (" - " + term[1:]) if term.startswith("-") else (" + " + term)
                else:
                    rhs = term
            rows.append(f"{lhs} &= {rhs}")
        if p.rearrange and not moved:
            # make sure at least one term was moved, else the exercise is pure copying
            i = 0
            j = next(j for j in range(n) if A[i, j] != 0)
            rest = [k for k in range(n) if A[i, k] != 0 and k != j]
            lhs = linear_combination([A[i, k] for k in rest], [names[k] for k in rest])
            term = linear_combination([-A[i, j]], [names[j]])
            rhs = num(y[i]) if y[i] != 0 else ""
            rhs = (
                (rhs + (" - " + term[1:] if term.startswith("-") else " + " + term))
                if rhs
                else term
            )
            rows[0] = f"{lhs} &= {rhs}"
            moved.append((i, j))
        system = r"\begin{aligned} " + r" \\ ".join(rows) + r" \end{aligned}"
        M = A if p.ask == "A" else np.column_stack([A, y])
        M = M.astype(float)
        steps = [
            SolutionStep(
                "Collect the terms",
                "Bring every unknown to the left, in the order "
                + ", ".join(f"${nm}$" for nm in names)
                + ", and the constants to the right (a term that changes side changes sign):\n\n"
                + "$$"
                + _aligned(A, y, names)
                + "$$",
            ),
            SolutionStep(
                "Read off the matrix" if p.ask == "A" else "Read off A and y",
                f"$A = {latex_matrix(A)}$, $\\mathbf{{y}} = {latex_matrix(y)}$"
                + ("" if p.ask == "A" else f", so $[A \\mid \\mathbf{{y}}] = {latex_matrix(M)}$")
                + ".",
                value=clean(M),
            ),
        ]
        ctx = {"family": "matrix_form", "M": M, "moved": moved, "unknowns": names, "columns": n}
        detectors = distinguishable_codes(M, ctx, ("moved_without_sign",)) + ("swapped_unknowns",)
        return Generated(
            values={"system": system, "unknowns": ", ".join(names), "n": n},
            expected=M,
            answer_form=AnswerForm(type="matrix", shape=M.shape, unknowns=names),
            solution=steps,
            context=ctx,
            detectors=detectors,
        )
