"""Kinds for matrix products and their properties (the deck's "Examples of matrices", "Transpose of a
matrix", "Linear maps are composable", "Some properties of matrices").

- ``row_times_column``: ``(a b c d)(w x y z)^T = aw + bx + cy + dz``.
- ``matrix_vector``: a non-square matrix times a vector.
- ``matrix_product``: ``AB``.
- ``non_commutativity``: ``AB - BA`` (or ``BA`` given ``AB``) for matrices that do not commute.
- ``composition``: the matrix of ``S∘T``; or ``ABC`` showing ``(AB)C = A(BC)``.
- ``transpose``: ``A^T``, ``(A^T)^T``, ``(AB)^T = B^T A^T``, ``R^T R = I`` for a rotation.
- ``inverse``: ``A^{-1}`` of a non-singular integer matrix with short decimal entries.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._elimination import as_fractions, augmented_latex, gauss_jordan
from ._mistakes import distinguishable_codes
from ._util import IntRange, clean, draw, ints, latex_matrix, num, paren, tidy


def _p(kind: Kind, params: KindParams):
    return params if isinstance(params, kind.Params) else kind.Params.model_validate(params)


def _entry_sums(A: np.ndarray, B: np.ndarray, i: int, j: int) -> str:
    terms = " + ".join(f"{paren(A[i, k])} \\cdot {paren(B[k, j])}" for k in range(A.shape[1]))
    return terms


@register_kind
class RowTimesColumn(Kind):
    """A row vector times a column vector: one number, ``sum_k a_k b_k``.

    Values: ``row`` ``(1, n)``, ``column`` ``(n, 1)``, ``n``.  Expected: scalar.
    """

    name = "row_times_column"

    class Params(KindParams):
        length: int = Field(4, ge=2, le=6)
        entries: IntRange = (-5, 5)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        n = p.length

        def make():
            r, c = ints(rng, p.entries, (1, n)), ints(rng, p.entries, (n, 1))
            if np.count_nonzero(r) < n - 1 or np.count_nonzero(c) < n - 1:
                return None
            return r, c

        r, c = draw(rng, make, "mostly non-zero entries")
        expected = linalg.matmul(r, c)[0, 0]
        steps = [
            SolutionStep(
                "Multiply entry by entry and add",
                f"${_entry_sums(r.astype(float), c.astype(float), 0, 0)} = {num(expected)}$.",
                value=clean(expected),
            )
        ]
        return Generated(
            values={"row": clean(r), "column": clean(c), "n": n},
            expected=np.asarray(expected),
            answer_form=AnswerForm(type="scalar", shape=()),
            solution=steps,
        )


@register_kind
class MatrixVector(Kind):
    """A non-square matrix ``A`` ``(m, n)``, ``m != n``, times a vector ``x`` ``(n,)``.

    Values: ``A``, ``x``, ``m``, ``n``.  Expected: ``Ax`` ``(m,)`` (``show_shape`` false by default:
    the length of the result is part of the question).
    """

    name = "matrix_vector"

    class Params(KindParams):
        rows: int = Field(4, ge=1, le=5)
        columns: int = Field(2, ge=1, le=5)
        entries: IntRange = (-4, 4)
        show_shape: bool = False

        @model_validator(mode="after")
        def _non_square(self) -> MatrixVector.Params:
            if self.rows == self.columns:
                raise ValueError(
                    "rows and columns must differ (this kind is about non-square matrices)"
                )
            return self

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)

        def make():
            A = ints(rng, p.entries, (p.rows, p.columns))
            x = ints(rng, p.entries, p.columns)
            if np.count_nonzero(x) < p.columns or np.any(np.all(A == 0, axis=1)):
                return None
            return A, x

        A, x = draw(rng, make, "non-zero rows and vector entries")
        expected = linalg.matvec(A, x)
        Af = A.astype(float)
        xf = x.astype(float).reshape(-1, 1)
        steps = [
            SolutionStep(
                "Shape",
                f"A ${p.rows} \\times {p.columns}$ matrix times a vector of length ${p.columns}$ "
                f"gives a vector of length ${p.rows}$: one entry per row of $A$.",
            ),
            SolutionStep(
                "Row i times x",
                "\n".join(
                    f"- entry {i + 1}: ${_entry_sums(Af, xf, i, 0)} = {num(expected[i])}$"
                    for i in range(p.rows)
                ),
                value=clean(expected),
            ),
        ]
        return Generated(
            values={"A": clean(A), "x": clean(x), "m": p.rows, "n": p.columns},
            expected=expected,
            answer_form=AnswerForm(type="vector", shape=(p.rows,), show_shape=p.show_shape),
            solution=steps,
        )


@register_kind
class MatrixProduct(Kind):
    """The matrix product ``AB`` of ``A`` ``(m, k)`` and ``B`` ``(k, n)``.

    Values: ``A``, ``B``.  Expected: ``AB`` ``(m, n)``.  Detectors: ``wrong_order`` (``BA``, when
    both are square), ``elementwise_product`` (when the shapes agree).
    """

    name = "matrix_product"

    class Params(KindParams):
        shape_a: tuple[int, int] = (2, 3)
        shape_b: tuple[int, int] = (3, 2)
        entries: IntRange = (-3, 3)
        show_shape: bool = True

        @model_validator(mode="after")
        def _chain(self) -> MatrixProduct.Params:
            if self.shape_a[1] != self.shape_b[0]:
                raise ValueError(
                    f"shape_a {list(self.shape_a)} and shape_b {list(self.shape_b)} do not chain: "
                    "A's column count must equal B's row count"
                )
            if min(self.shape_a + self.shape_b) < 1 or max(self.shape_a + self.shape_b) > 5:
                raise ValueError("matrix sizes must be between 1 and 5")
            return self

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)

        def make():
            A, B = ints(rng, p.entries, p.shape_a), ints(rng, p.entries, p.shape_b)
            if np.any(np.all(A == 0, axis=1)) or np.any(np.all(B == 0, axis=0)):
                return None
            ctx = {"family": "product", "A": A.astype(float), "B": B.astype(float), "op": "AB"}
            want = tuple(
                c
                for c in ("wrong_order", "elementwise_product")
                if (c == "wrong_order" and p.shape_a == p.shape_b == p.shape_a[::-1])
                or (c == "elementwise_product" and p.shape_a == p.shape_b)
            )
            codes = distinguishable_codes(A @ B, ctx, want)
            if codes != want:
                return None
            return A, B, ctx, codes

        A, B, ctx, codes = draw(rng, make, "AB distinguishable from BA")
        expected = linalg.matmul(A, B)
        Af, Bf = A.astype(float), B.astype(float)
        steps = [
            SolutionStep(
                "Rows times columns",
                f"Entry $(i, j)$ of $AB$ is row $i$ of $A$ times column $j$ of $B$; e.g. entry "
                f"$(1, 1) = {_entry_sums(Af, Bf, 0, 0)} = {num(expected[0, 0])}$.",
            ),
            SolutionStep("The product", f"$AB = {latex_matrix(expected)}$.", value=clean(expected)),
        ]
        return Generated(
            values={"A": clean(A), "B": clean(B)},
            expected=expected,
            answer_form=AnswerForm(type="matrix", shape=expected.shape, show_shape=p.show_shape),
            solution=steps,
            context=ctx,
            detectors=codes,
        )


@register_kind
class NonCommutativity(Kind):
    """Two square matrices that do not commute: ``ask: AB-BA`` (the commutator, never zero) or
    ``ask: BA`` (given ``AB`` in the prompt).

    Values: ``A``, ``B``, ``AB``.  Expected: ``AB - BA`` or ``BA``.  Detectors: ``wrong_order``
    (for ``BA``), ``elementwise_product``.
    """

    name = "non_commutativity"
    #: Revision 2: with ``ask: BA``, ``guard`` left unset means ``[ab_transposed]``.
    #: Revision 3: a draw whose named mistakes give one answer is drawn again.
    revision = 3
    redraw_coinciding = 3
    revision_defaults = {2: lambda p: {"guard": ["ab_transposed"]} if p.ask == "BA" else {}}

    class Params(KindParams):
        size: int = Field(2, ge=2, le=3)
        entries: IntRange = (-3, 3)
        ask: Literal["AB-BA", "BA"] = "AB-BA"
        #: Named mistakes every variant must also tell apart (redrawn until it does):
        #: ``ab_transposed`` rules out BA = (AB)^T, where answering (AB)^T would be right.  Unset
        #: with ``ask: BA`` means ``[ab_transposed]`` (revision 2); ``[]`` draws as revision 1.
        guard: list[Literal["ab_transposed"]] = Field(default_factory=list)

        @model_validator(mode="after")
        def _guard_needs_ba(self) -> NonCommutativity.Params:
            if self.guard and self.ask != "BA":
                raise ValueError("guard: ab_transposed needs ask: BA")
            return self

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        n = p.size
        guard = tuple(dict.fromkeys(p.guard))

        def make():
            A, B = ints(rng, p.entries, (n, n)), ints(rng, p.entries, (n, n))
            if not linalg_distinct(A @ B, B @ A):
                return None
            ctx = {"family": "product", "A": A.astype(float), "B": B.astype(float), "op": p.ask}
            want = ("wrong_order", "elementwise_product") if p.ask == "BA" else ()
            if p.ask == "BA":
                ctx["op"] = "BA"
            target = B @ A if p.ask == "BA" else A @ B - B @ A
            codes = distinguishable_codes(target, ctx, want)
            if codes != want:
                return None
            if guard and distinguishable_codes(target, ctx, guard) != guard:
                return None
            return A, B, ctx, codes

        A, B, ctx, codes = draw(rng, make, "AB != BA")
        extra = ("ab_transposed",) if p.ask == "BA" else ("assumed_commutative",)
        codes = codes + distinguishable_codes(B @ A if p.ask == "BA" else A @ B - B @ A, ctx, extra)
        AB, BA = linalg.matmul(A, B), linalg.matmul(B, A)
        expected = BA if p.ask == "BA" else AB - BA
        steps = [
            SolutionStep("AB", f"$AB = {latex_matrix(AB)}$.", value=clean(AB)),
            SolutionStep(
                "BA",
                f"$BA = {latex_matrix(BA)}$: row $i$ of $B$ times column $j$ of $A$, a different "
                "computation.",
                value=clean(BA),
            ),
        ]
        if p.ask == "AB-BA":
            steps.append(
                SolutionStep(
                    "The difference",
                    f"$AB - BA = {latex_matrix(expected)} \\ne 0$: matrix multiplication is not "
                    "commutative.",
                    value=clean(expected),
                )
            )
        return Generated(
            values={"A": clean(A), "B": clean(B), "AB": clean(AB)},
            expected=expected,
            answer_form=AnswerForm(type="matrix", shape=(n, n)),
            solution=steps,
            context=ctx,
            detectors=codes,
        )


def linalg_distinct(X: np.ndarray, Y: np.ndarray) -> bool:
    return bool(np.any(np.asarray(X) != np.asarray(Y)))


_MAPS = {
    "rotate90": (np.array([[0, -1], [1, 0]]), "rotates the plane by 90° counter-clockwise"),
    "reflect_x": (np.array([[1, 0], [0, -1]]), "reflects in the $x$-axis"),
    "reflect_diag": (
        np.array([[0, 1], [1, 0]]),
        "reflects in the line $y = x$ (swaps the coordinates)",
    ),
    "shear": (np.array([[1, 1], [0, 1]]), "shears: $(x, y) \\mapsto (x + y, y)$"),
    "stretch": (np.array([[2, 0], [0, 1]]), "stretches $x$ by a factor 2"),
    "stretch_y": (np.array([[1, 0], [0, 3]]), "stretches $y$ by a factor 3"),
}


@register_kind
class Composition(Kind):
    """Composition of linear maps and associativity.

    ``mode: compose``: two geometric maps ``T`` then ``S`` of the plane (rotation, reflection,
    shear, stretch), ask the matrix of ``S∘T = ST`` (apply ``T`` first).  Values: ``S``, ``T``,
    ``S_text``, ``T_text``.  Detector: ``wrong_order`` (``TS``).
    ``mode: associativity``: ``A`` ``(2, 3)``, ``B`` ``(3, 2)``, ``C`` ``(2, 2)``; ask ``ABC``; the
    solution shows ``(AB)C = A(BC)``.  Values: ``A``, ``B``, ``C``.
    """

    name = "composition"
    #: Revision 2: ``nonzero_products`` left unset means true (``mode: associativity``).
    revision = 2
    revision_defaults = {
        2: lambda p: {"nonzero_products": True} if p.mode == "associativity" else {}
    }

    class Params(KindParams):
        mode: Literal["compose", "associativity"] = "compose"
        entries: IntRange = (-2, 3)
        #: ``associativity``: redraw until AB, BC and ABC have no zero row or column, so the
        #: answer is never 0 (or partly 0) for a student to guess.  Unset means true
        #: for new variants (revision 2); ``false`` draws as revision 1.
        nonzero_products: bool = False

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        if p.mode == "compose":

            def make():
                names = list(_MAPS)
                s, t = (names[int(i)] for i in rng.choice(len(names), size=2, replace=False))
                S, T = _MAPS[s][0], _MAPS[t][0]
                ctx = {
                    "family": "product",
                    "A": S.astype(float),
                    "B": T.astype(float),
                    "op": "AB",
                    "order_names": ("S", "T"),
                }
                if not distinguishable_codes(S @ T, ctx, ("wrong_order",)):
                    return None
                return s, t, S, T, ctx

            s, t, S, T, ctx = draw(rng, make, "maps that do not commute")
            expected = linalg.compose(S, T)
            steps = [
                SolutionStep(
                    "The two matrices",
                    f"$T$ {_MAPS[t][1]}: $T = {latex_matrix(T)}$. $S$ {_MAPS[s][1]}: "
                    f"$S = {latex_matrix(S)}$ (columns: the images of $\\mathbf{{e}}_1, \\mathbf{{e}}_2$).",
                ),
                SolutionStep(
                    "Compose",
                    "Applying $T$ first and then $S$ sends $\\mathbf{x}$ to $S(T\\mathbf{x}) = "
                    f"(ST)\\mathbf{{x}}$, so the matrix is $ST = {latex_matrix(expected)}$ "
                    f"(not $TS = {latex_matrix(T @ S)}$).",
                    value=clean(expected),
                ),
            ]
            return Generated(
                values={"S": clean(S), "T": clean(T), "S_text": _MAPS[s][1], "T_text": _MAPS[t][1]},
                expected=expected,
                answer_form=AnswerForm(type="matrix", shape=(2, 2)),
                solution=steps,
                context=ctx,
                detectors=("wrong_order",),
            )

        def make_abc():
            A, B, C = (ints(rng, p.entries, s) for s in ((2, 3), (3, 2), (2, 2)))
            if any(np.any(np.all(M == 0, axis=1)) for M in (A, B, C)):
                return None
            if p.nonzero_products and any(
                np.any(np.all(M == 0, axis=0)) or np.any(np.all(M == 0, axis=1))
                for M in (A @ B, B @ C, A @ B @ C)
            ):
                return None
            return A, B, C

        A, B, C = draw(rng, make_abc, "non-zero rows")
        AB, BC = linalg.matmul(A, B), linalg.matmul(B, C)
        expected = linalg.compose(A, B, C)
        steps = [
            SolutionStep(
                "Left grouping",
                f"$AB = {latex_matrix(AB)}$ (2×2), then $(AB)C = {latex_matrix(AB @ C)}$.",
                value=clean(AB),
            ),
            SolutionStep(
                "Right grouping",
                f"$BC = {latex_matrix(BC)}$ (3×2), then $A(BC) = {latex_matrix(A @ BC)}$.",
                value=clean(BC),
            ),
            SolutionStep(
                "Same result",
                "Matrix multiplication is associative: $(AB)C = A(BC)$, so we may write $ABC$ "
                "and choose the cheaper grouping.",
                value=clean(expected),
            ),
        ]
        return Generated(
            values={"A": clean(A), "B": clean(B), "C": clean(C)},
            expected=expected,
            answer_form=AnswerForm(type="matrix", shape=(2, 2)),
            solution=steps,
            context={"family": "product", "A": A, "B": B, "C": C, "op": "ABC"},
        )


_ANGLES = [30, 45, 60, 90, 120, 135, 150, 180, 210, 225, 240, 270, 300, 315, 330]


@register_kind
class Transpose(Kind):
    """The transpose and its properties.

    - ``property: plain``: ``A^T`` of an ``(m, n)`` matrix, ``m != n``.
    - ``property: double``: ``(A^T)^T`` (which is ``A``).
    - ``property: product``: ``(AB)^T`` for square ``A``, ``B`` (detector ``wrong_order``: ``A^T B^T``).
    - ``property: rotation``: ``R^T R`` for the rotation ``R`` by a given angle (which is ``I``);
      values ``R`` (rounded to 3 decimals for display), ``angle``.
    - ``property: rotation_undo``: ``R`` sends an unknown ``x`` to ``y`` (shown to 3 decimals);
      find ``x = R^{-1}y = R^Ty`` (computed from the ``y`` shown).  Values ``R``, ``angle``,
      ``y``.  Detectors: ``rotation_not_inverted`` (``Ry``: rotated again), ``rotation_ignored``
      (``y`` itself).  Angles other than 180° (where ``R = R^T``).
    Values: ``A`` (and ``B``).  Expected from ``linalg.transpose``/``matmul``/``rotation_matrix``.
    """

    name = "transpose"

    class Params(KindParams):
        property: Literal["plain", "double", "product", "rotation", "rotation_undo"] = "plain"
        rows: int = Field(2, ge=1, le=5)
        columns: int = Field(3, ge=1, le=5)
        entries: IntRange = (-5, 9)

        @model_validator(mode="after")
        def _non_square(self) -> Transpose.Params:
            if self.property in ("plain", "double") and self.rows == self.columns:
                raise ValueError(
                    "rows and columns must differ for property plain/double (a non-square "
                    "matrix shows what transposing does to the shape)"
                )
            return self

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        if p.property == "rotation_undo":
            return _rotation_undo(rng)
        if p.property == "rotation":
            angle = int(rng.choice(_ANGLES))
            R = linalg.rotation_matrix(angle, degrees=True)
            expected = linalg.matmul(linalg.transpose(R), R)
            shown = np.round(R, 3) + 0.0
            steps = [
                SolutionStep(
                    "The rotation",
                    f"$R = \\begin{{pmatrix}} \\cos {angle}° & -\\sin {angle}° \\\\ \\sin {angle}° & "
                    f"\\cos {angle}° \\end{{pmatrix}} \\approx {latex_matrix(shown)}$.",
                    value=shown,
                ),
                SolutionStep(
                    "Multiply",
                    "$R^TR = \\begin{pmatrix} \\cos^2 + \\sin^2 & 0 \\\\ 0 & \\sin^2 + \\cos^2 "
                    "\\end{pmatrix} = I$: a rotation keeps lengths and angles, so its transpose "
                    "undoes it ($R^{-1} = R^T$).",
                    value=clean(np.round(expected, 12)),
                ),
            ]
            return Generated(
                values={"R": shown, "angle": angle},
                expected=expected,
                answer_form=AnswerForm(type="matrix", shape=(2, 2)),
                solution=steps,
                context={"family": "rotation", "R": R},
            )
        if p.property == "product":
            n = p.rows

            def make():
                A, B = ints(rng, p.entries, (n, n)), ints(rng, p.entries, (n, n))
                ctx = {
                    "family": "product",
                    "A": A.astype(float),
                    "B": B.astype(float),
                    "op": "(AB)^T",
                }
                target = (A @ B).T
                if not distinguishable_codes(target, ctx, ("wrong_order",)):
                    return None
                if not linalg_distinct(target, target.T):
                    return None
                return A, B, ctx

            A, B, ctx = draw(rng, make, "(AB)^T distinct from A^T B^T")
            AB = linalg.matmul(A, B)
            expected = linalg.transpose(AB)
            steps = [
                SolutionStep("AB", f"$AB = {latex_matrix(AB)}$.", value=clean(AB)),
                SolutionStep(
                    "Transpose",
                    f"$(AB)^T = {latex_matrix(expected)}$, which equals "
                    f"$B^TA^T = {latex_matrix(B.T)}{latex_matrix(A.T)}$: the order reverses.",
                    value=clean(expected),
                ),
            ]
            return Generated(
                values={"A": clean(A), "B": clean(B)},
                expected=expected,
                answer_form=AnswerForm(type="matrix", shape=(n, n)),
                solution=steps,
                context=ctx,
                detectors=("wrong_order",),
            )

        A = ints(rng, p.entries, (p.rows, p.columns))
        if p.property == "plain":
            expected = linalg.transpose(A)
            steps = [
                SolutionStep(
                    "Rows become columns",
                    f"Row $i$ of $A$ becomes column $i$ of $A^T$, so the "
                    f"${p.rows} \\times {p.columns}$ matrix becomes "
                    f"${p.columns} \\times {p.rows}$: $A^T = {latex_matrix(expected)}$.",
                    value=clean(expected),
                )
            ]
        else:
            expected = linalg.transpose(linalg.transpose(A))
            steps = [
                SolutionStep("Once", f"$A^T = {latex_matrix(A.T)}$.", value=clean(A.T)),
                SolutionStep(
                    "Twice",
                    f"Transposing again swaps rows and columns back: $(A^T)^T = A = "
                    f"{latex_matrix(expected)}$.",
                    value=clean(expected),
                ),
            ]
        return Generated(
            values={"A": clean(A)},
            expected=expected.astype(float),
            answer_form=AnswerForm(type="matrix", shape=expected.shape, show_shape=False),
            solution=steps,
            context={"family": "transpose", "A": A},
        )


def _rotation_undo(rng: np.random.Generator) -> Generated:
    """``Transpose``'s ``property: rotation_undo`` (see its docstring)."""

    def make():
        angle = int(rng.choice([a for a in _ANGLES if a != 180]))
        x = ints(rng, (-4, 4), 2)
        return None if np.any(x == 0) else (angle, x)

    angle, x = draw(rng, make, "a vector with two non-zero entries")
    R = linalg.rotation_matrix(angle, degrees=True)
    y = np.round(linalg.matvec(R, x), 3) + 0.0
    Rt = linalg.transpose(R)
    expected = linalg.matvec(Rt, y)
    shown = np.round(R, 3) + 0.0
    ctx = {"family": "rotation", "R": R, "y": y}
    codes = distinguishable_codes(expected, ctx, ("rotation_not_inverted", "rotation_ignored"))
    steps = [
        SolutionStep(
            "Undo the rotation",
            r"A rotation keeps lengths and angles, so $R^TR = I$ "
            r"($\cos^2\theta + \sin^2\theta = 1$): the transpose is the inverse, "
            rf"$R^{{-1}} = R^T$, the rotation by $-{angle}°$. So "
            r"$\mathbf{x} = R^{-1}\mathbf{y} = R^T\mathbf{y}$.",
        ),
        SolutionStep(
            "Multiply",
            rf"$R^T \approx {latex_matrix(np.round(Rt, 3) + 0.0)}$, so $R^T\mathbf{{y}} \approx "
            rf"{latex_matrix(np.round(expected, 3) + 0.0)}$: the whole-number vector "
            rf"${latex_matrix(x)}$ up to the rounding of $\mathbf{{y}}$.",
            value=np.round(expected, 4) + 0.0,
        ),
        SolutionStep(
            "Check",
            rf"$R{latex_matrix(x)} \approx {latex_matrix(y)} = \mathbf{{y}}$ ✓.",
        ),
    ]
    return Generated(
        values={"R": shown, "angle": angle, "y": clean(y)},
        expected=expected,
        answer_form=AnswerForm(type="vector", shape=(2,)),
        solution=steps,
        context=ctx,
        detectors=codes,
    )


@register_kind
class Inverse(Kind):
    """The inverse of a non-singular integer matrix whose inverse has short decimal entries.

    ``determinants`` lists the allowed ``|det A|`` (default 1, 2, 4, 5: ``1/det`` is then a
    terminating decimal of at most 2 places).  Values: ``A``, ``n``.  Expected: ``A^{-1}`` from
    ``linalg.inverse``.  Detectors: ``missing_determinant``, ``inverse_sign`` (2x2).
    """

    name = "inverse"

    class Params(KindParams):
        size: int = Field(2, ge=2, le=3)
        entries: IntRange = (-5, 5)
        determinants: list[int] = [1, 2, 4, 5]

        @model_validator(mode="after")
        def _positive(self) -> Inverse.Params:
            if not self.determinants or any(d <= 0 for d in self.determinants):
                raise ValueError("determinants must be a non-empty list of positive integers")
            if len(self.determinants) > 20 or max(self.determinants) > 1000:
                raise ValueError("determinants: at most 20 values, each at most 1000")
            return self

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        n = p.size
        want = ("missing_determinant", "inverse_sign") if n == 2 else ("missing_determinant",)

        def make():
            A = ints(rng, p.entries, (n, n))
            det = round(np.linalg.det(A))
            if abs(det) not in p.determinants or np.count_nonzero(A) < n * n - 1:
                return None
            inv = linalg.inverse(A)
            if not np.allclose(inv * 100, np.round(inv * 100), atol=1e-9):
                return None
            ctx = {"family": "inverse", "A": A.astype(float)}
            codes = distinguishable_codes(inv, ctx, want)
            if abs(det) == 1:
                codes = tuple(c for c in codes if c != "missing_determinant")
            if "inverse_sign" in want and "inverse_sign" not in codes:
                return None
            return A, inv, ctx, codes

        A, inv, ctx, codes = draw(rng, make, f"|det A| in {p.determinants}")
        det = linalg.determinant(A)
        expected = tidy(inv)
        if n == 2:
            (a, b), (c, d) = A
            adj = np.array([[d, -b], [-c, a]])
            steps = [
                SolutionStep(
                    "Determinant",
                    f"$\\det A = {paren(a)} \\cdot {paren(d)} - {paren(b)} \\cdot {paren(c)} = {num(det)} "
                    "\\ne 0$, so $A$ is invertible.",
                    value=round(det),
                ),
                SolutionStep(
                    "Swap, negate, divide",
                    "For $A = \\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}$, $A^{-1} = "
                    "\\frac{1}{ad - bc}\\begin{pmatrix} d & -b \\\\ -c & a \\end{pmatrix}$: "
                    f"$A^{{-1}} = \\frac{{1}}{{{num(det)}}}{latex_matrix(adj)} = "
                    f"{latex_matrix(expected)}$.",
                    value=clean(np.round(expected, 10)),
                ),
            ]
        else:
            aug = np.column_stack([A, np.eye(n)])
            steps = [
                SolutionStep("Determinant", f"$\\det A = {num(det)} \\ne 0$.", value=round(det)),
                SolutionStep(
                    "Row-reduce [A | I]",
                    "Write $I$ beside $A$ and row-reduce until the left half is $I$: each row "
                    "operation is a multiplication on the left, so the right half becomes "
                    f"$A^{{-1}}$. $$ {augmented_latex(as_fractions(aug), n)} $$",
                ),
            ]
            for j, (ops, M) in enumerate(gauss_jordan(aug, n)):
                steps.append(
                    SolutionStep(f"Column {j + 1}", f"${ops}$: $$ {augmented_latex(M, n)} $$")
                )
            steps.append(
                SolutionStep(
                    "Read off the inverse",
                    f"The right half: $A^{{-1}} = {latex_matrix(expected)}$.",
                    value=clean(np.round(expected, 10)),
                )
            )
        steps.append(
            SolutionStep("Check", "$A^{-1}A = I$ ✓.", value=clean(np.round(expected @ A, 10)))
        )
        return Generated(
            values={"A": clean(A), "n": n},
            expected=expected,
            answer_form=AnswerForm(type="matrix", shape=(n, n)),
            solution=steps,
            context=ctx,
            detectors=codes,
        )
