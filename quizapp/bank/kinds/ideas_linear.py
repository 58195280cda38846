"""Conceptual kinds for the first half of the deck: what a system, a basis, a transpose and an
inverse *mean*, asked as choices with reasons (the course's second edition, issue 16).

- ``solution_count``: does a 2x2 system have one, no or infinitely many solutions?
- ``basis_check``: do three vectors form a basis of R^3 (a det = 0 case included)?
- ``transpose_rule``: which expression equals ``(AB)^T`` (or ``(ABC)^T``, ``(A^T B)^T``)?
- ``orthogonal_choice``: for which matrix does ``A^T(Ax) = x`` hold for every ``x``?

Every kind answers in the ``choice`` form (``quizapp.bank.kinds._choice``): each wrong option
names its mistake, and the worked solution says of every option why.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import Generated, Kind, KindParams, SolutionStep

from ._choice import Option, choice_variant, frac_matrix, frac_text
from ._util import IntRange, draw, ints, latex_matrix, linear_combination, num, paren


def _p(kind: Kind, params: KindParams) -> Any:
    return params if isinstance(params, kind.Params) else kind.Params.model_validate(params)


def _system_latex(rows: list[tuple[int, int, int]]) -> str:
    lines = [f"{linear_combination([a, b], ['x', 'y'])} &= {num(e)}" for a, b, e in rows]
    return r"\begin{aligned} " + r" \\ ".join(lines) + r" \end{aligned}"


@register_kind
class SolutionCount(Kind):
    """Two linear equations in two unknowns: exactly one solution, none, or infinitely many?

    The case is drawn first (each a third of the time): one solution (``det A != 0``, an integer
    solution), the same line twice (the second equation ``k`` times the first), or parallel
    lines (left sides proportional, right sides not).  The equations are shown in a random order.
    Values: ``system`` (LaTeX), ``options``.  Expected: the option (choice); options in a fixed
    order (one, none, infinitely many, two).  Wrong picks name why.
    """

    name = "solution_count"

    class Params(KindParams):
        coefficients: IntRange = (-5, 5)
        solution: IntRange = (-5, 5)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        case = ("one", "none", "many")[int(rng.integers(3))]

        def make():
            a, b = ints(rng, p.coefficients), ints(rng, p.coefficients)
            if a == 0 or b == 0 or math.gcd(a, b) != 1:
                return None
            x, y = ints(rng, p.solution), ints(rng, p.solution)
            e = a * x + b * y
            if case == "one":
                c, d = ints(rng, p.coefficients), ints(rng, p.coefficients)
                if c == 0 or d == 0 or a * d - b * c == 0:
                    return None
                return (a, b, e), (c, d, c * x + d * y), None, (x, y)
            k = int(rng.choice([-3, -2, 2, 3]))
            shift = 0 if case == "many" else int(rng.choice([-3, -2, -1, 1, 2, 3]))
            return (a, b, e), (k * a, k * b, k * e + shift), k, None

        first, second, k, point = draw(rng, make, "a system of the drawn case")
        rows = [first, second]
        if rng.random() < 0.5:
            rows = rows[::-1]
        (a, b, _), (c, d, _) = rows
        det = a * d - b * c
        system = _system_latex(rows)
        base, multiple = (first, second)
        if case == "one":
            x, y = point
            lead = [
                SolutionStep(
                    "The determinant",
                    f"$\\det A = {paren(a)} \\cdot {paren(d)} - {paren(b)} \\cdot {paren(c)} = {det} \\ne 0$: "
                    "the two lines have different slopes and cross at exactly one point, "
                    f"$(x, y) = ({x}, {y})$.",
                    value=det,
                )
            ]
        else:
            same = case == "many"
            lead = [
                SolutionStep(
                    "The determinant",
                    f"$\\det A = {paren(a)} \\cdot {paren(d)} - {paren(b)} \\cdot {paren(c)} = 0$: the left "
                    f"side of ${linear_combination(multiple[:2], ['x', 'y'])} = {num(multiple[2])}$ "
                    f"is ${k}$ times that of ${linear_combination(base[:2], ['x', 'y'])} = "
                    f"{num(base[2])}$, so the lines are parallel or the same.",
                    value=0,
                ),
                SolutionStep(
                    "The right-hand sides",
                    (
                        f"${k} \\cdot {paren(base[2])} = {num(k * base[2])}$, which is the "
                        "other right-hand side too: the second equation says the same as the "
                        "first. Every point of that line is a solution."
                        if same
                        else f"${k} \\cdot {paren(base[2])} = {num(k * base[2])} \\ne "
                        f"{num(multiple[2])}$: the lines are parallel and never meet."
                    ),
                ),
            ]
        messages = {
            "one": (
                "exactly_one",
                "det A = 0 here (one left side is a multiple of the other): the lines are parallel "
                "or the same, so there is not exactly one solution.",
            ),
            "none": (
                "no_solution",
                f"det A = {det} ≠ 0: the lines cross, so there is a solution."
                if case == "one"
                else "The second equation is a multiple of the first, right-hand side included: it "
                "is the same line, and every point on it is a solution.",
            ),
            "many": (
                "infinitely_many",
                f"det A = {det} ≠ 0: the lines cross at exactly one point."
                if case == "one"
                else "The left sides are proportional but the right-hand sides are not: the lines "
                "are parallel and never meet.",
            ),
        }
        texts = {
            "one": "exactly one solution",
            "none": "no solution",
            "many": "infinitely many solutions",
        }
        why = {
            "one": "the lines cross once ($\\det A \\ne 0$)",
            "none": "parallel lines ($\\det A = 0$, right-hand sides not in proportion)",
            "many": "the same line twice ($\\det A = 0$, right-hand sides in proportion)",
        }
        options = [
            Option(
                texts[c],
                c == case,
                ("This is the case: " if c == case else "That would need ") + why[c] + ".",
                *messages[c],
            )
            for c in ("one", "none", "many")
        ]
        options.append(
            Option(
                "exactly two solutions",
                False,
                "two different lines meet at most once; two common points would make them the "
                "same line, with infinitely many.",
                "exactly_two",
                "Two lines that share two points are the same line: a linear system has 0, 1 or "
                "infinitely many solutions, never exactly 2.",
            )
        )
        return choice_variant(
            options, None, {"system": system}, lead, context={"rows": rows, "case": case}
        )


def _parallel(u: np.ndarray, v: np.ndarray) -> bool:
    return bool(np.linalg.matrix_rank(np.column_stack([u, v])) < 2)


@register_kind
class BasisCheck(Kind):
    """Do three vectors form a basis of R^3?  Half of the variants have ``det = 0`` (the third
    a combination ``a v1 + b v2`` with non-zero integers), half ``det != 0``; no vector is ever a
    multiple of another, so the tempting reason "no vector is a multiple of another" decides
    nothing.  Values: ``vectors`` (LaTeX list), ``options``.  Expected: the option (choice,
    shuffled).  Options: a basis (det != 0), not a basis (dependent), "a basis because no vector
    is a multiple of another" (always wrong: ``pairwise_not_enough``), "not a basis: only the
    standard vectors are" (always wrong: ``only_standard_basis``).
    """

    name = "basis_check"

    class Params(KindParams):
        entries: IntRange = (-2, 3)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        dependent = bool(rng.random() < 0.5)

        def make():
            v1, v2 = ints(rng, p.entries, 3), ints(rng, p.entries, 3)
            if not v1.any() or not v2.any() or _parallel(v1, v2):
                return None
            if dependent:
                a, b = (int(rng.choice([-2, -1, 1, 2])) for _ in range(2))
                v3 = a * v1 + b * v2
                if np.abs(v3).max() > 6:
                    return None
                combo = (a, b)
            else:
                v3 = ints(rng, p.entries, 3)
                if round(abs(np.linalg.det(np.column_stack([v1, v2, v3])))) == 0:
                    return None
                combo = None
            if not v3.any() or _parallel(v1, v3) or _parallel(v2, v3):
                return None
            if sum(np.count_nonzero(v) for v in (v1, v2, v3)) < 7:
                return None  # mostly non-zero entries, so the relation is not seen at a glance
            return [v1, v2, v3], combo

        vectors, combo = draw(rng, make, "three pairwise non-parallel vectors")
        order = [int(i) for i in rng.permutation(3)]
        shown = [vectors[i] for i in order]
        B = np.column_stack(shown)
        det = round(linalg.determinant(B))
        names = [f"\\mathbf{{v}}_{j + 1}" for j in range(3)]
        listed = ", \\quad ".join(
            f"{n} = {latex_matrix(v)}" for n, v in zip(names, shown, strict=True)
        )
        lead = [
            SolutionStep(
                "The determinant",
                f"With the vectors as the columns of $B = {latex_matrix(B)}$, $\\det B = {det}$"
                + (
                    " $\\ne 0$: no vector is a combination of the others, so the three span "
                    "$\\mathbb{R}^3$ and form a basis."
                    if det
                    else ": they are linearly dependent and span only a plane."
                ),
                value=det,
            )
        ]
        relation = ""
        if combo is not None:
            # the drawn v3 is a v1 + b v2; say it in the shown names
            i1, i2, i3 = (order.index(k) for k in range(3))
            a, b = combo
            relation = f"${names[i3]} = {linear_combination([a, b], [names[i1], names[i2]])}$"
            lead.append(
                SolutionStep("The relation", f"Indeed {relation}: check it entry by entry.")
            )
        options = [
            Option(
                "They form a basis of $\\mathbb{R}^3$: the matrix $B$ with them as its columns "
                "has $\\det B \\ne 0$, so none of them is a combination of the others",
                not dependent,
                f"$\\det B = {det}$" + (" $\\ne 0$." if det else f", and {relation}."),
                "dependent_called_basis",
                "det B = 0: one vector is a combination of the other two, so the three span only "
                "a plane.",
            ),
            Option(
                "They do not form a basis: they are linearly dependent (the matrix $B$ with them "
                "as its columns has $\\det B = 0$)",
                dependent,
                f"{relation}, so $\\det B = 0$." if dependent else f"$\\det B = {det} \\ne 0$.",
                "basis_called_dependent",
                f"det B = {det} ≠ 0: no vector is a combination of the others, so they are a "
                "basis.",
            ),
            Option(
                "They form a basis, because no vector is a multiple of another",
                False,
                "that is not enough: three vectors, no two of them parallel, can still lie in "
                "one plane (as $(1, 0, 0)$, $(0, 1, 0)$ and $(1, 1, 0)$ do).",
                "pairwise_not_enough",
                (
                    "No vector is a multiple of another here, yet one is a combination of the "
                    "other two: the three lie in one plane."
                    if dependent
                    else "They are a basis, but not for that reason: three vectors, no two "
                    "parallel, can still lie in one plane. What decides is det B ≠ 0."
                ),
            ),
            Option(
                "They do not form a basis: a basis of $\\mathbb{R}^3$ must be "
                "$\\mathbf{e}_1, \\mathbf{e}_2, \\mathbf{e}_3$",
                False,
                "any three independent vectors are a basis; the standard one is only one of "
                "infinitely many.",
                "only_standard_basis",
                "Any three independent vectors form a basis of R^3; the standard basis is only "
                "one of them.",
            ),
        ]
        return choice_variant(options, rng, {"vectors": listed}, lead, context={"B": B})


# --- (AB)^T ---------------------------------------------------------------------------------


def _shape_text(r: int, c: int) -> str:
    return f"{r} \\times {c}"


@register_kind
class TransposeRule(Kind):
    """Which expression equals the transpose of a product?  One of ``(AB)^T`` (``A`` m x k,
    ``B`` k x n), ``(ABC)^T`` or ``(A^T B)^T`` (``A`` k x m, ``B`` k x n), with distinct random
    sizes so that shapes alone refute some options.  Options (shuffled): the right one (the
    factors transposed in reverse order) and three mistakes: the order not reversed, the
    factors reversed but not transposed, the product not transposed (or, for ``(A^T B)^T``, a
    transpose of a transpose kept).  The worked solution checks the rule on small random
    integer matrices.  Values: ``question`` (LaTeX), ``shapes`` (text), ``options``.
    """

    name = "transpose_rule"

    class Params(KindParams):
        entries: IntRange = (-2, 3)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        form = int(rng.integers(3))
        m, k, n, q = (int(v) for v in rng.permutation([2, 3, 4, 5])[:4])

        def mats(*shapes: tuple[int, int]) -> list[np.ndarray]:
            return [ints(rng, p.entries, s).astype(float) for s in shapes]

        if form == 0:
            A, B = mats((m, k), (k, n))
            question = "(AB)^T"
            shapes = f"$A$ is ${_shape_text(m, k)}$ and $B$ is ${_shape_text(k, n)}$"
            target = (A @ B).T
            right = ("B^T A^T", B.T @ A.T)
            wrong = [
                (
                    "A^T B^T",
                    "order_not_reversed",
                    f"A^T B^T is a {k} x {m} times a {n} x {k} matrix, which is not even defined. "
                    "Transposing a product reverses the order: (AB)^T = B^T A^T.",
                ),
                (
                    "BA",
                    "factors_not_transposed",
                    f"BA reverses the order but forgets to transpose each factor (and a {k} x {n} "
                    f"times a {m} x {k} matrix is not even defined).",
                ),
                (
                    "AB",
                    "product_not_transposed",
                    f"AB is {m} x {n}; (AB)^T is its transpose, {n} x {m}.",
                ),
            ]
            rule = "(AB)^T = B^TA^T"
        elif form == 1:
            A, B, C = mats((m, k), (k, q), (q, n))
            question = "(ABC)^T"
            shapes = (
                f"$A$ is ${_shape_text(m, k)}$, $B$ is ${_shape_text(k, q)}$ and $C$ is "
                f"${_shape_text(q, n)}$"
            )
            target = (A @ B @ C).T
            right = ("C^T B^T A^T", C.T @ B.T @ A.T)
            wrong = [
                (
                    "A^T B^T C^T",
                    "order_not_reversed",
                    "A^T B^T C^T keeps the order; transposing a product reverses it: "
                    "(ABC)^T = C^T B^T A^T (and the shapes here do not even fit).",
                ),
                (
                    "C^T A^T B^T",
                    "order_partly_reversed",
                    "Only the last factor moved to the front; the whole order reverses: "
                    "(ABC)^T = ((AB)C)^T = C^T (AB)^T = C^T B^T A^T.",
                ),
                (
                    "CBA",
                    "factors_not_transposed",
                    "CBA reverses the order but forgets to transpose each factor (and the shapes "
                    "do not fit).",
                ),
            ]
            rule = "(ABC)^T = C^T(AB)^T = C^TB^TA^T"
        else:
            A, B = mats((k, m), (k, n))
            question = "(A^T B)^T"
            shapes = f"$A$ is ${_shape_text(k, m)}$ and $B$ is ${_shape_text(k, n)}$"
            target = (A.T @ B).T
            right = ("B^T A", B.T @ A)
            wrong = [
                (
                    "B^T A^T",
                    "double_transpose_kept",
                    "The transpose of A^T is A again: (A^T B)^T = B^T (A^T)^T = B^T A.",
                ),
                (
                    "A B^T",
                    "order_not_reversed",
                    "A B^T keeps the order of the factors; the transpose of a product reverses it: "
                    "(A^T B)^T = B^T (A^T)^T = B^T A.",
                ),
                (
                    "A^T B",
                    "product_not_transposed",
                    f"A^T B is {m} x {n}; its transpose is {n} x {m}.",
                ),
            ]
            rule = "(A^TB)^T = B^T(A^T)^T = B^TA"
        assert np.allclose(target, right[1])
        options = [
            Option(
                f"${right[0]}$",
                True,
                f"the factors, each transposed, in reverse order: ${rule}$.",
            )
        ] + [
            Option(f"${text}$", False, message.replace(" x ", " × "), code, message)
            for text, code, message in wrong
        ]
        lead = [
            SolutionStep(
                "The rule",
                "Entry $(i, j)$ of $(AB)^T$ is entry $(j, i)$ of $AB$: row $j$ of $A$ times "
                "column $i$ of $B$, which is row $i$ of $B^T$ times column $j$ of $A^T$. So "
                f"$(AB)^T = B^TA^T$: the order reverses. Here ${rule}$.",
            )
        ]
        close = [
            SolutionStep(
                "A check with numbers",
                f"For example with the random integer matrices of these shapes drawn for "
                f"this check, ${question} = {latex_matrix(target)}$, and ${right[0]}$ gives the "
                "same matrix.",
                value=np.round(target, 9) + 0.0,
            )
        ]
        drawn = {"A": A, "B": B} if form != 1 else {"A": A, "B": B, "C": C}
        return choice_variant(
            options,
            rng,
            {"question": question, "shapes": shapes},
            lead,
            close,
            context={"question": question, **drawn},
        )


# --- A^T A = I ------------------------------------------------------------------------------

_TRIPLES = [(3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29)]


def _ata_text(M: np.ndarray) -> str:
    return f"A^TA = {frac_matrix(M.T @ M, 1000)}"


@register_kind
class OrthogonalChoice(Kind):
    """For which of four 2x2 matrices does ``A^T(Ax) = x`` hold for every ``x``, i.e. ``A^T A =
    I`` (the transpose undoes ``A``)?  The right one is a rotation (or, a third of the time, a
    reflection) with entries from a Pythagorean triple (``3/5``, ``4/5``), so everything is exact.
    The others (shuffled) are three of: the same matrix scaled to integers (perpendicular
    columns of length ``h``: ``A^TA = h^2 I``), unit columns that are not perpendicular, a shear,
    and a stretch with determinant 1.  Values: ``options``.  Expected: the option (choice).
    """

    name = "orthogonal_choice"

    class Params(KindParams):
        pass

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        a, b, h = _TRIPLES[int(rng.integers(len(_TRIPLES)))]
        if rng.random() < 0.5:
            a, b = b, a
        sc, ss = (1 if rng.random() < 0.5 else -1), (1 if rng.random() < 0.5 else -1)
        c, s = sc * Fraction(a, h), ss * Fraction(b, h)
        reflection = bool(rng.random() < 1 / 3)
        R = np.array([[c, s], [s, -c]] if reflection else [[c, -s], [s, c]], dtype=object)
        Rf = R.astype(float)
        kinds = ["scaled", "unit_not_perpendicular", "shear", "det_one"]
        chosen = [kinds[int(i)] for i in rng.permutation(4)[:3]]
        options = [
            Option(
                f"$A = {frac_matrix(Rf)}$",
                True,
                f"${_ata_text(Rf)}$: its columns are perpendicular and of length 1 "
                f"(${frac_text(float(c))}^2 + {frac_text(float(s))}^2 = 1$). It is a "
                + ("reflection" if reflection else "rotation")
                + ", so $A^T = A^{-1}$ and $A^T(A\\mathbf{x}) = \\mathbf{x}$.",
            )
        ]
        for kind in chosen:
            if kind == "scaled":
                M = Rf * h
                options.append(
                    Option(
                        f"$A = {latex_matrix(M)}$",
                        False,
                        f"${_ata_text(M)} = {h * h}I$: perpendicular columns, but of length {h}.",
                        "scaled_rotation",
                        f"Its columns are perpendicular but have length {h}: AᵀA = {h * h}I, so "
                        f"Aᵀ(Ax) = {h * h}x, not x.",
                    )
                )
            elif kind == "unit_not_perpendicular":
                M = np.array([[float(c), float(s)], [float(s), float(c)]])
                dot = 2 * float(c) * float(s)
                options.append(
                    Option(
                        f"$A = {frac_matrix(M)}$",
                        False,
                        f"${_ata_text(M)}$: each column has length 1, but they are not "
                        f"perpendicular (their dot product is ${frac_text(dot, 1000)}$).",
                        "columns_not_perpendicular",
                        "Each column has length 1, but the columns are not perpendicular, so "
                        "AᵀA ≠ I.",
                    )
                )
            elif kind == "shear":
                t = int(rng.choice([-2, -1, 1, 2]))
                M = np.array([[1.0, t], [0.0, 1.0]])
                options.append(
                    Option(
                        f"$A = {latex_matrix(M)}$",
                        False,
                        f"${_ata_text(M)}$: a shear; its second column has length "
                        f"$\\sqrt{{{1 + t * t}}}$ and is not perpendicular to the first.",
                        "shear",
                        f"A shear: its columns are not perpendicular and the second has length "
                        f"√{1 + t * t}, so AᵀA ≠ I.",
                    )
                )
            else:
                f = int(rng.choice([2, 3]))
                M = np.diag([float(f), 1.0 / f])
                options.append(
                    Option(
                        f"$A = {frac_matrix(M)}$",
                        False,
                        f"${_ata_text(M)}$: $\\det A = 1$, but it stretches one axis by {f} and "
                        f"shrinks the other.",
                        "det_one_not_enough",
                        f"Its determinant is 1, but it stretches x by {f} and shrinks y by {f}: "
                        f"AᵀA ≠ I. Keeping areas is not keeping lengths.",
                    )
                )
        x = np.array([float(v) for v in rng.choice([-3, -2, -1, 1, 2, 3], size=2)])
        Rx = Rf @ x
        lead = [
            SolutionStep(
                "What to check",
                "$A^T(A\\mathbf{x}) = (A^TA)\\mathbf{x}$, which is $\\mathbf{x}$ for every "
                "$\\mathbf{x}$ exactly when $A^TA = I$: the columns of $A$ are perpendicular "
                "unit vectors. Compute $A^TA$ for each option.",
            )
        ]
        close = [
            SolutionStep(
                "A check with numbers",
                f"For $\\mathbf{{x}} = {latex_matrix(x)}$ and the right matrix: "
                f"$A\\mathbf{{x}} = {frac_matrix(Rx, 1000)}$ and "
                f"$A^T(A\\mathbf{{x}}) = {latex_matrix(Rf.T @ Rx)} = \\mathbf{{x}}$.",
                value=np.round(Rf.T @ Rx, 9) + 0.0,
            )
        ]
        return choice_variant(options, rng, {}, lead, close)
