"""Kinds for bases and linear maps (the deck's "What is a basis?", "What is a linear map?").

- ``basis_coordinates``: the coordinates of a vector in a (non-standard) basis.
- ``map_matrix``: the matrix of a linear map from the images of the basis vectors.
- ``linearity_choice``: which of these maps is linear (multiple choice)?
- ``linearity_compute``: from ``T(u)`` and ``T(v)`` compute ``T(au + bv)`` (additivity and
  homogeneity).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

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
)


def _unimodular_or_small_det(rng: np.random.Generator, n: int, r: IntRange, max_det: int):
    def make() -> np.ndarray | None:
        B = ints(rng, r, (n, n))
        det = round(np.linalg.det(B))
        if det == 0 or abs(det) > max_det:
            return None
        if np.all(B == np.diag(np.diag(B))):
            return None  # a diagonal basis is too easy
        if np.any(np.all(B == 0, axis=0)):
            return None
        return B

    return draw(rng, make, f"a basis with 0 < |det| <= {max_det}")


@register_kind
class BasisCoordinates(Kind):
    """The coordinates ``c`` of ``v`` in the basis ``b_1, ..., b_n``: ``v = c_1 b_1 + ... + c_n b_n``.

    Built backwards from integer coordinates, so the answer is an integer vector.
    Values: ``b1``, ``b2`` (, ``b3``) column vectors, ``basis`` (LaTeX list), ``v``, ``n``.
    Expected: ``c`` ``(n,)`` from ``linalg.basis_coordinates``.  Detectors: ``basis_as_rows``,
    ``standard_coordinates``, ``swapped_unknowns``.
    """

    name = "basis_coordinates"
    #: Revision 2: ``guard`` left unset means ``[basis_as_rows]`` (no symmetric basis matrix).
    #: Revision 3: a draw whose named mistakes give one answer is drawn again.
    revision = 3
    redraw_coinciding = 3
    revision_defaults = {2: lambda p: {"guard": ["basis_as_rows"]}}

    class Params(KindParams):
        dimension: int = Field(2, ge=2, le=3)
        entries: IntRange = (-3, 3)
        coordinates: IntRange = (-4, 4)
        #: Named mistakes every variant must also tell apart (redrawn until it does):
        #: ``basis_as_rows`` rules out a symmetric basis matrix, which hides that mistake.  Unset
        #: means ``[basis_as_rows]`` for new variants (revision 2); ``[]`` draws as revision 1.
        guard: list[Literal["basis_as_rows"]] = Field(default_factory=list)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        n = p.dimension
        need = tuple(dict.fromkeys(("standard_coordinates", *p.guard)))

        def make():
            B = _unimodular_or_small_det(rng, n, p.entries, 3)
            c = ints(rng, p.coordinates, n)
            if len(set(c.tolist())) < n or np.all(c == 0):
                return None
            v = B @ c
            ctx = {"family": "basis", "basis": B.T.astype(float), "v": v.astype(float)}
            codes = distinguishable_codes(c, ctx, ("basis_as_rows", "standard_coordinates"))
            if any(code not in codes for code in need):
                return None
            return B, c, v, ctx, codes

        B, c, v, ctx, codes = draw(rng, make, "distinct coordinates")
        vectors = [B[:, j] for j in range(n)]
        expected = tidy(linalg.basis_coordinates(vectors, v))
        names = [f"c_{j + 1}" for j in range(n)]
        ctx["unknowns"] = names
        combo = " + ".join(f"c_{j + 1} {latex_matrix(b)}" for j, b in enumerate(vectors))
        steps = [
            SolutionStep(
                "Set up the equations",
                f"We need ${combo} = {latex_matrix(v)}$, that is $B\\mathbf{{c}} = \\mathbf{{v}}$ "
                f"with the basis vectors as the COLUMNS of $B = {latex_matrix(B)}$.",
                value=clean(B),
            ),
            SolutionStep(
                "Solve",
                "$\\mathbf{c} = "
                + latex_matrix(expected)
                + "$. Check: "
                + " + ".join(
                    f"({num(cj)}){latex_row(b)}" for cj, b in zip(expected, vectors, strict=True)
                )
                + f" $= {latex_row(v)}$ ✓.",
                value=clean(expected),
            ),
        ]
        values = {f"b{j + 1}": clean(b) for j, b in enumerate(vectors)}
        values.update(
            {
                "basis": ", ".join(
                    f"\\mathbf{{b}}_{j + 1} = {latex_matrix(b)}" for j, b in enumerate(vectors)
                ),
                "v": clean(v),
                "n": n,
            }
        )
        return Generated(
            values=values,
            expected=expected,
            answer_form=AnswerForm(type="vector", shape=(n,), unknowns=names),
            solution=steps,
            context=ctx,
            detectors=codes + ("swapped_unknowns",),
        )


@register_kind
class MapMatrix(Kind):
    """The matrix of a linear map ``T: R^n -> R^m`` from the images of a basis.

    ``basis: standard``: the images ``T(e_j)`` are given and are the matrix's columns.
    ``basis: other``: the images of a non-standard basis ``b_j`` are given; ``A = W B^{-1}`` (with a
    unimodular ``B`` so ``A`` stays an integer matrix).  Values: ``images`` (LaTeX list of
    ``T(e_j) = ...`` or ``T(b_j) = ...``), ``m``, ``n``.  Expected: ``A`` ``(m, n)`` from
    ``linalg.map_matrix_from_images``.  Detectors: ``images_as_rows``, ``basis_ignored``.
    """

    name = "map_matrix"

    class Params(KindParams):
        inputs: int = Field(2, ge=2, le=3)
        outputs: int = Field(3, ge=1, le=4)
        entries: IntRange = (-4, 4)
        basis: Literal["standard", "other"] = "standard"

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        n, m = p.inputs, p.outputs

        def make():
            A = ints(rng, p.entries, (m, n))
            if np.any(np.all(A == 0, axis=0)):
                return None
            if p.basis == "standard":
                basis = None
                images = A.T
            else:
                Bc = _unimodular_or_small_det(rng, n, (-2, 2), 1)
                basis = Bc.T
                images = (A @ Bc).T
            ctx = {
                "family": "map_matrix",
                "images": images.astype(float),
                "basis": None if basis is None else basis.astype(float),
            }
            codes = distinguishable_codes(
                A, ctx, ("images_as_rows",) if basis is None else ("basis_ignored",)
            )
            if not codes:
                return None
            return A, basis, images, ctx, codes

        A, basis, images, ctx, codes = draw(rng, make, "a map whose matrix is not symmetric")
        expected = tidy(linalg.map_matrix_from_images(images, basis))
        if basis is None:
            listed = ", ".join(
                f"T(\\mathbf{{e}}_{j + 1}) = {latex_matrix(images[j])}" for j in range(n)
            )
            steps = [
                SolutionStep(
                    "Images become columns",
                    "Column $j$ of the matrix is the image of the $j$-th basis vector, because "
                    "$A\\mathbf{e}_j$ picks out column $j$ of $A$.",
                ),
                SolutionStep(
                    "The matrix", f"$A = {latex_matrix(expected)}$.", value=clean(expected)
                ),
            ]
        else:
            listed = ", ".join(
                f"T\\left({latex_matrix(basis[j])}\\right) = {latex_matrix(images[j])}"
                for j in range(n)
            )
            Bm = basis.T
            W = images.T
            steps = [
                SolutionStep(
                    "Write what we know as a matrix equation",
                    f"With the inputs as the columns of $B = {latex_matrix(Bm)}$ and their images as "
                    f"the columns of $W = {latex_matrix(W)}$, the matrix $A$ of $T$ satisfies "
                    "$AB = W$.",
                    value=clean(W),
                ),
                SolutionStep(
                    "Invert B",
                    f"$B^{{-1}} = {latex_matrix(linalg.inverse(Bm))}$.",
                    value=clean(np.round(linalg.inverse(Bm), 10)),
                ),
                SolutionStep(
                    "Multiply",
                    f"$A = WB^{{-1}} = {latex_matrix(expected)}$. Check: $AB = W$ ✓.",
                    value=clean(np.round(expected, 10)),
                ),
            ]
        return Generated(
            values={"images": listed, "m": m, "n": n},
            expected=expected,
            answer_form=AnswerForm(type="matrix", shape=(m, n)),
            solution=steps,
            context=ctx,
            detectors=codes,
        )


#: Why each kind of component breaks linearity: (LaTeX for the worked solution, plain text for
#: the verdict message, which is shown as text).
_WHY = {
    "constant": (
        "it has a constant term, so $T(\\mathbf{0}) \\ne \\mathbf{0}$ (a linear map sends "
        "$\\mathbf{0}$ to $\\mathbf{0}$)",
        "it has a constant term, so T(0) ≠ 0 (a linear map sends 0 to 0)",
    ),
    "product": (
        "it multiplies the unknowns together, so $T(2\\mathbf{u}) \\ne 2T(\\mathbf{u})$",
        "it multiplies the unknowns together, so T(2u) ≠ 2T(u)",
    ),
    "square": (
        "it squares $x$, so doubling the input quadruples that part of the output",
        "it squares x, so doubling the input quadruples that part of the output",
    ),
    "abs": (
        "it takes an absolute value, so $T(-\\mathbf{u}) \\ne -T(\\mathbf{u})$",
        "it takes an absolute value, so T(-u) ≠ -T(u)",
    ),
}


def _fmt_component(kind: str, rng: np.random.Generator) -> str:
    """One output component of a map R^2 -> R^2 as LaTeX: linear, or broken as ``kind`` says."""
    a, b = (int(v) for v in rng.choice([-3, -2, -1, 1, 2, 3], size=2))
    lin = linear_combination([a, b], ["x", "y"])
    ycoef = "" if abs(b) == 1 else str(abs(b))
    if kind == "linear":
        return lin
    if kind == "constant":
        k = int(rng.choice([-3, -2, -1, 1, 2, 3]))
        return f"{lin} {'+' if k > 0 else '-'} {abs(k)}"
    if kind == "product":
        return f"{num(a)}xy" if a != 1 else "xy"
    if kind == "square":
        return f"x^2 {'+' if b > 0 else '-'} {ycoef}y"
    return f"|x| {'+' if b > 0 else '-'} {ycoef}y"


@register_kind
class LinearityChoice(Kind):
    """Which of four maps ``T: R^2 -> R^2`` is linear (``ask: linear``; exactly one is), or which
    is NOT linear (``ask: nonlinear``; exactly one is not).

    Non-linear maps have a constant term, a product ``xy``, a square or an absolute value.
    Values: ``options`` (a Markdown list, one option per item, labelled (a), (b), ...).  Expected: the 0-based index of the right option
    (answer form ``choice``; students answer with the letter or the 1-based number).  Choosing a
    wrong option names why it is (not) linear (context ``choice_mistakes``).
    """

    name = "linearity_choice"

    class Params(KindParams):
        ask: Literal["linear", "nonlinear"] = "linear"
        options: int = Field(4, ge=3, le=4)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        bad_kinds = [str(k) for k in rng.permutation(["constant", "product", "square", "abs"])]
        if p.ask == "linear":
            kinds = ["linear"] + bad_kinds[: p.options - 1]
        else:
            kinds = [bad_kinds[0]] + ["linear"] * (p.options - 1)
        order = rng.permutation(len(kinds))
        options: list[str] = []
        reasons: list[str | None] = []
        kinds_shown: list[str] = []
        right = -1
        for pos, src in enumerate(order):
            kind = kinds[int(src)]
            first = _fmt_component(kind, rng)
            second = _fmt_component("linear", rng)
            why = None if kind == "linear" else _WHY[kind][0]
            kinds_shown.append(kind)
            if rng.random() < 0.5:
                first, second = second, first
            options.append(f"$T(x, y) = ({first},\\ {second})$")
            reasons.append(why)
            is_right = (why is None) == (p.ask == "linear")
            if is_right:
                right = pos
        letters = "abcd"
        steps = []
        for i, (opt, why) in enumerate(zip(options, reasons, strict=True)):
            verdict = (
                "linear: every component is a combination $ax + by$, so additivity and "
                "homogeneity hold"
                if why is None
                else f"not linear: {why}"
            )
            steps.append(SolutionStep(f"Option ({letters[i]})", f"{opt} is {verdict}."))
        mistakes = {}
        for i, kind in enumerate(kinds_shown):
            if i == right:
                continue
            if p.ask == "linear":
                plain = _WHY[kind][1]
                mistakes[i] = ("not_linear", f"Option ({letters[i]}) is not linear: {plain}.")
            else:
                mistakes[i] = (
                    "is_linear",
                    f"Option ({letters[i]}) is linear: each component is of the form ax + by.",
                )
        return Generated(
            values={
                "options": "\n".join(f"- **({letters[i]})** {o}" for i, o in enumerate(options)),
            },
            expected=right,
            answer_form=AnswerForm(type="choice", shape=None, choices=options),
            solution=steps,
            context={"family": "choice", "choice_mistakes": mistakes},
            detectors=(),
        )


@register_kind
class LinearityCompute(Kind):
    """Given a linear ``T`` with ``T(u)`` and ``T(v)``, compute ``T(a u + b v) = a T(u) + b T(v)``.

    Values: ``u``, ``v``, ``Tu``, ``Tv`` (column vectors), ``a``, ``b``, ``combination`` (LaTeX
    ``2\\mathbf{u} - 3\\mathbf{v}``).  Expected: ``(m,)``.  Detector: ``linearity_scalars``.
    """

    name = "linearity_compute"

    class Params(KindParams):
        dimension: int = Field(2, ge=2, le=3)
        outputs: int = Field(2, ge=2, le=4)
        entries: IntRange = (-4, 4)
        scalars: IntRange = (-3, 4)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)

        def make():
            M = ints(rng, p.entries, (p.outputs, p.dimension))
            u, v = ints(rng, p.entries, p.dimension), ints(rng, p.entries, p.dimension)
            a, b = ints(rng, p.scalars), ints(rng, p.scalars)
            if a in (0, 1) or b == 0 or not np.any(u) or not np.any(v):
                return None
            Tu, Tv = M @ u, M @ v
            ctx = {
                "family": "linearity",
                "Tu": Tu.astype(float),
                "Tv": Tv.astype(float),
                "a": a,
                "b": b,
            }
            expected = a * Tu + b * Tv
            codes = distinguishable_codes(expected, ctx, ("linearity_scalars",))
            if not codes or not np.any(Tu) or not np.any(Tv):
                return None
            return u, v, a, b, Tu, Tv, ctx, codes

        u, v, a, b, Tu, Tv, ctx, codes = draw(rng, make, "non-trivial scalars")
        expected = linalg.matmul(np.column_stack([Tu, Tv]), [[a], [b]])[:, 0]
        combo = linear_combination([a, b], ["\\mathbf{u}", "\\mathbf{v}"])
        tcombo = linear_combination([a, b], ["T(\\mathbf{u})", "T(\\mathbf{v})"])
        steps = [
            SolutionStep(
                "Use linearity",
                f"By additivity and homogeneity, $T({combo}) = {tcombo}$: we never need the "
                "formula of $T$.",
            ),
            SolutionStep(
                "Compute",
                f"${num(a)}{latex_matrix(Tu)} + ({num(b)}){latex_matrix(Tv)} = "
                f"{latex_matrix(expected)}$.",
                value=clean(expected),
            ),
        ]
        return Generated(
            values={
                "u": clean(u),
                "v": clean(v),
                "Tu": clean(Tu),
                "Tv": clean(Tv),
                "a": a,
                "b": b,
                "combination": combo,
            },
            expected=expected,
            answer_form=AnswerForm(type="vector", shape=(p.outputs,)),
            solution=steps,
            context=ctx,
            detectors=codes,
        )
