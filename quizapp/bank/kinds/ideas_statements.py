"""True or false, and why: a statement about matrices or about softmax, tried on random
matrices or scores shown with it (the course's second edition, issue 16).

- ``matrix_statements``: ``AB = BA``, ``(AB)^T = A^TB^T``, ``(AB)^T = B^TA^T``,
  ``(AB)C = A(BC)``, ``A^TA = I``, "``AB = 0`` only if a factor is 0", ``A^{-1}A = I``.
- ``softmax_statements``: shift invariance, scaling, order, positivity, the sum, the exponential.

Four options each (shuffled): the right verdict with the right reason, a wrong reason for it,
and wrong verdicts with their reasons; every wrong option names its mistake.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import field_validator

from quizapp import linalg
from quizapp.bank.formula import significant_latex
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import Generated, Kind, KindParams, SolutionStep

from ._choice import Option, choice_variant, frac_matrix
from ._util import (
    IntRange,
    draw,
    ints,
    latex_matrix,
    latex_row,
    num,
)


def _p(kind: Kind, params: KindParams) -> Any:
    return params if isinstance(params, kind.Params) else kind.Params.model_validate(params)


def _row(values: Any, digits: int = 2) -> str:
    """A vector as a LaTeX row ``(0.12, 0.88)`` with ``digits`` decimals."""
    return "(" + ", ".join(f"{v:.{digits}f}" for v in np.asarray(values, dtype=float)) + ")"


# --- statements about products --------------------------------------------------------------


def _statement(
    kind: str, rng: np.random.Generator, entries: IntRange
) -> tuple[str, str, list[Option], str]:
    """(statement LaTeX, the matrices as LaTeX, options, lead text) for one statement kind."""
    L = latex_matrix

    def pair(n: int = 2) -> tuple[np.ndarray, np.ndarray]:
        def make():
            A, B = (ints(rng, entries, (n, n)).astype(float) for _ in range(2))
            if np.allclose(A @ B, B @ A) or np.allclose((A @ B).T, A.T @ B.T):
                return None
            if not A.any() or not B.any():
                return None
            return A, B

        return draw(rng, make, "two matrices that do not commute")

    if kind == "commute":
        A, B = pair()
        AB, BA = A @ B, B @ A
        given = f"A = {L(A)}, \\quad B = {L(B)}"
        return (
            "AB = BA",
            given,
            [
                Option(
                    "False: here $AB \\ne BA$; matrix products do not commute in general",
                    True,
                    f"$AB = {L(AB)}$ but $BA = {L(BA)}$.",
                ),
                Option(
                    "True: multiplication of numbers commutes, so that of matrices does too",
                    False,
                    "numbers commute, matrices do not.",
                    "commutes_like_numbers",
                    "Numbers commute, matrices do not: here AB ≠ BA.",
                ),
                Option(
                    "True: both products are $2 \\times 2$ matrices",
                    False,
                    "the same shape does not make them the same matrix.",
                    "same_shape_same_matrix",
                    "Having the same shape does not make them equal: compare the entries.",
                ),
                Option(
                    "False: $BA$ is not defined for these matrices",
                    False,
                    "both are $2 \\times 2$, so $BA$ is defined: it is simply another matrix.",
                    "undefined",
                    "Both are 2 × 2, so BA is defined; it is just a different matrix.",
                ),
            ],
            "Compute both products.",
        )
    if kind == "transpose_same_order":
        A, B = pair()
        given = f"A = {L(A)}, \\quad B = {L(B)}"
        return (
            "(AB)^T = A^TB^T",
            given,
            [
                Option(
                    "False: the order reverses, $(AB)^T = B^TA^T$",
                    True,
                    f"$(AB)^T = {L((A @ B).T)}$, while $A^TB^T = {L(A.T @ B.T)}$.",
                ),
                Option(
                    "True: the transpose of a product is the product of the transposes, in the "
                    "same order",
                    False,
                    "the order reverses.",
                    "order_not_reversed",
                    "The transpose of a product reverses the order: (AB)ᵀ = BᵀAᵀ, and here "
                    "AᵀBᵀ is another matrix.",
                ),
                Option(
                    "True: transposing swaps the rows and columns of each factor, so it does so "
                    "in the product",
                    False,
                    "transposing each factor does not transpose the product in the same order.",
                    "transpose_each_factor",
                    "Compute both sides: (AB)ᵀ ≠ AᵀBᵀ here. The rule is (AB)ᵀ = BᵀAᵀ.",
                ),
                Option(
                    "False: $(AB)^T$ is only defined when $A$ and $B$ are symmetric",
                    False,
                    "every matrix has a transpose.",
                    "transpose_undefined",
                    "Every matrix has a transpose; the point is the order: (AB)ᵀ = BᵀAᵀ.",
                ),
            ],
            "Compute both sides.",
        )
    if kind == "transpose_reversed":
        A, B = pair()
        given = f"A = {L(A)}, \\quad B = {L(B)}"
        return (
            "(AB)^T = B^TA^T",
            given,
            [
                Option(
                    "True: it holds for any two matrices that can be multiplied",
                    True,
                    f"here both sides are ${L((A @ B).T)}$; entry $(i, j)$ of $(AB)^T$ is row $j$ "
                    "of $A$ times column $i$ of $B$, which is row $i$ of $B^T$ times column $j$ "
                    "of $A^T$.",
                ),
                Option(
                    "False: it holds only when $A$ and $B$ commute",
                    False,
                    "no commuting is needed.",
                    "needs_commuting",
                    "It holds for all A and B that can be multiplied: here AB ≠ BA, and still "
                    "(AB)ᵀ = BᵀAᵀ.",
                ),
                Option(
                    "False: the transpose of a product is $A^TB^T$",
                    False,
                    f"$A^TB^T = {L(A.T @ B.T)} \\ne (AB)^T$.",
                    "order_not_reversed",
                    "AᵀBᵀ is another matrix here: the order reverses, (AB)ᵀ = BᵀAᵀ.",
                ),
                Option(
                    "True: because $AB = BA$ for these matrices",
                    False,
                    f"$AB \\ne BA$ here ($BA = {L(B @ A)}$).",
                    "commutes_like_numbers",
                    "AB ≠ BA here; the rule holds without any commuting.",
                ),
            ],
            "Compute both sides.",
        )
    if kind == "associative":
        A = ints(rng, entries, (2, 3)).astype(float)
        B = ints(rng, entries, (3, 2)).astype(float)
        C = ints(rng, entries, (2, 2)).astype(float)
        given = f"A = {L(A)}, \\quad B = {L(B)}, \\quad C = {L(C)}"
        return (
            "(AB)C = A(BC)",
            given,
            [
                Option(
                    "True: matrix multiplication is associative",
                    True,
                    f"$(AB)C = {L(A @ B)}C = {L(A @ B @ C)}$ and "
                    f"$A(BC) = A{L(B @ C)} = {L(A @ (B @ C))}$.",
                ),
                Option(
                    "False: $AB$ and $BC$ are different matrices, so the results differ",
                    False,
                    "different intermediate products, the same result.",
                    "grouping_changes_result",
                    "AB and BC differ, but (AB)C and A(BC) are the same matrix: the product is "
                    "associative.",
                ),
                Option(
                    "False: only $(AB)C$ is defined",
                    False,
                    "$BC$ is $3 \\times 2$, so $A(BC)$ is defined too.",
                    "undefined",
                    "Both groupings are defined: AB is 2 × 2 and BC is 3 × 2.",
                ),
                Option(
                    "True: because matrix multiplication is commutative",
                    False,
                    "it is associative, not commutative ($BA$ is even $3 \\times 3$ here).",
                    "commutes_like_numbers",
                    "It is associative, not commutative: here BA is 3 × 3, AB is 2 × 2.",
                ),
            ],
            "Compute both groupings.",
        )
    if kind == "ata":

        def make_a():
            A = ints(rng, entries, (2, 2)).astype(float)
            return (
                A
                if abs(round(np.linalg.det(A))) >= 1 and not np.allclose(A.T @ A, np.eye(2))
                else None
            )

        A = draw(rng, make_a, "an invertible matrix that is no rotation")
        given = f"A = {L(A)}"
        return (
            "A^TA = I",
            given,
            [
                Option(
                    "False: $A^TA = I$ only when the columns of $A$ are perpendicular unit "
                    "vectors (a rotation or reflection)",
                    True,
                    f"here $A^TA = {L(A.T @ A)}$.",
                ),
                Option(
                    "True: the transpose is the inverse of every matrix",
                    False,
                    "only of rotations and reflections.",
                    "transpose_is_inverse",
                    "The transpose is the inverse only when AᵀA = I (a rotation or reflection); "
                    "compute AᵀA here.",
                ),
                Option(
                    "True: transposing twice gives $A$ back",
                    False,
                    "$(A^T)^T = A$ is true but says nothing about $A^TA$.",
                    "double_transpose",
                    "(Aᵀ)ᵀ = A is true, but it says nothing about the product AᵀA.",
                ),
                Option(
                    "False: $A^TA$ is not defined for a square matrix",
                    False,
                    "it is defined for every matrix.",
                    "undefined",
                    "AᵀA is defined for every matrix (n × m times m × n).",
                ),
            ],
            "Compute $A^TA$.",
        )
    if kind == "zero_product":

        def make_zero():
            u, v, z = (ints(rng, (-2, 2), 2).astype(float) for _ in range(3))
            w = np.array([-v[1], v[0]]) * float(rng.choice([-1, 1, 2]))
            A, B = np.outer(u, v), np.outer(w, z)
            if not A.any() or not B.any():
                return None
            return A, B

        A, B = draw(rng, make_zero, "non-zero matrices with AB = 0")
        given = f"A = {L(A)}, \\quad B = {L(B)}"
        return (
            "\\text{if } AB = 0 \\text{ then } A = 0 \\text{ or } B = 0",
            given,
            [
                Option(
                    "False: here $A \\ne 0$ and $B \\ne 0$, yet $AB = 0$",
                    True,
                    f"$AB = {L(A @ B)}$.",
                ),
                Option(
                    "True: as with numbers, a product is 0 only when a factor is",
                    False,
                    "matrices are not numbers.",
                    "zero_product_like_numbers",
                    "For matrices it fails: here A ≠ 0 and B ≠ 0, yet AB = 0.",
                ),
                Option(
                    "True: because $\\det(AB) = \\det A \\det B$",
                    False,
                    "that only makes one factor singular, not zero.",
                    "determinant_argument",
                    "det(AB) = 0 only says det A = 0 or det B = 0: a singular factor, not a zero "
                    "matrix.",
                ),
                Option(
                    "False: $AB$ is never $0$ for non-zero matrices, so the statement says nothing",
                    False,
                    "here it is $0$.",
                    "never_zero",
                    "Here AB = 0 with A ≠ 0 and B ≠ 0.",
                ),
            ],
            "Compute $AB$.",
        )

    def make_inv():
        A = ints(rng, entries, (2, 2)).astype(float)
        return A if abs(round(np.linalg.det(A))) in (1, 2, 4, 5) and np.any(A < 0) else None

    A = draw(rng, make_inv, "an invertible matrix with a negative entry")
    det = round(np.linalg.det(A))
    given = f"A = {L(A)}"
    return (
        "A^{-1}A = I",
        given,
        [
            Option(
                "True: that is what the inverse means, and $A$ has one",
                True,
                f"$\\det A = {det} \\ne 0$, so $A^{{-1}} = {frac_matrix(np.linalg.inv(A))}$ "
                "exists and $A^{-1}A = AA^{-1} = I$.",
            ),
            Option(
                "False: only $AA^{-1} = I$; on the other side the order matters",
                False,
                "for a square matrix the inverse works on both sides.",
                "one_sided_inverse",
                "For a square matrix the inverse works on both sides: A⁻¹A = AA⁻¹ = I.",
            ),
            Option(
                "True: because $A^{-1} = A^T$",
                False,
                f"$A^T = {L(A.T)}$ is not $A^{{-1}}$ here.",
                "transpose_is_inverse",
                "Aᵀ is the inverse only of rotations and reflections, not of this A; A⁻¹A = I "
                "is the definition of the inverse.",
            ),
            Option(
                "False: a matrix with a negative entry has no inverse",
                False,
                "the signs of the entries do not matter; $\\det A \\ne 0$ does.",
                "negative_entries",
                f"The signs of the entries do not matter: det A = {det} ≠ 0.",
            ),
        ],
        "Look at $\\det A$.",
    )


STATEMENTS = (
    "commute",
    "transpose_same_order",
    "transpose_reversed",
    "associative",
    "ata",
    "zero_product",
    "inverse",
)


@register_kind
class MatrixStatements(Kind):
    """A statement about matrices (``AB = BA``, ``(AB)^T = A^TB^T``, ``(AB)^T = B^TA^T``,
    ``(AB)C = A(BC)``, ``A^TA = I``, "``AB = 0`` only if a factor is 0", ``A^{-1}A = I``), for
    random matrices shown with it: true or false, and why.  Four options (shuffled): one right,
    a wrong reason for the right verdict, and wrong verdicts with their reasons.  Values:
    ``statement``, ``matrices`` (LaTeX), ``options``.  ``statements`` limits the pool.
    """

    name = "matrix_statements"

    class Params(KindParams):
        entries: IntRange = (-3, 3)
        statements: list[str] = list(STATEMENTS)

        @field_validator("statements")
        @classmethod
        def _known(cls, v: list[str]) -> list[str]:
            unknown = [s for s in v if s not in STATEMENTS]
            if unknown or not v:
                raise ValueError(
                    f"statements must be a non-empty list of {', '.join(STATEMENTS)}; "
                    f"got {', '.join(unknown) or 'none'}"
                )
            return v

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        kind = p.statements[int(rng.integers(len(p.statements)))]
        statement, given, options, how = _statement(kind, rng, p.entries)
        lead = [SolutionStep("Try it on the matrices", f"${given}$. {how}")]
        return choice_variant(
            options,
            rng,
            {"statement": statement, "matrices": given},
            lead,
            context={"statement_kind": kind},
        )


def _softmax_statement(kind: str, rng: np.random.Generator) -> tuple[str, Any, list[Option]]:
    """(statement as LaTeX, the example x, options) for one property of softmax."""

    def distinct_x(n: int, lo: int, hi: int, negative: bool = False) -> np.ndarray:
        def make():
            x = ints(rng, (lo, hi), n).astype(float)
            if len(set(x.tolist())) < n or (negative and not np.any(x < 0)):
                return None
            if negative and abs(x.sum()) < 1:
                return None
            return x

        return draw(rng, make, "distinct scores")

    sm = linalg.softmax
    if kind == "shift":
        c = int(rng.choice([2, 3, 5, 10]))
        x = distinct_x(3, -2, 3)
        return (
            f"\\mathrm{{softmax}}(x + {c}) = \\mathrm{{softmax}}(x)",
            x,
            [
                Option(
                    f"True: $e^{{x_i + {c}}} = e^{{{c}}} e^{{x_i}}$, and the factor $e^{{{c}}}$ "
                    "cancels between each weight and the sum",
                    True,
                    f"Here both are ${_row(sm(x))}$.",
                ),
                Option(
                    f"False: every score grows by {c}, so every weight grows too",
                    False,
                    "The weights always sum to 1: they cannot all grow.",
                    "shift_changes_weights",
                    f"The weights always sum to 1, so they cannot all "
                    f"grow: the factor e^{c} cancels.",
                ),
                Option(
                    "True: softmax depends only on the order of the scores",
                    False,
                    "The order alone does not decide: softmax(2x) keeps the order but differs.",
                    "order_is_enough",
                    "It is true, but not because of the order: softmax(2x) "
                    "keeps the order and still differs. Adding a constant works because the "
                    "common factor cancels.",
                ),
                Option(
                    f"False: $e^{{x_i + {c}}}$ may be too large to compute",
                    False,
                    "A large exponent is a problem for a calculator, not for the identity: "
                    "subtracting the maximum first is exactly this shift.",
                    "overflow_is_undefined",
                    "Large exponents trouble a calculator, not the "
                    "identity: subtracting the largest score is the same shift.",
                ),
            ],
        )
    if kind == "scale":
        x = distinct_x(3, -1, 3)
        return (
            "\\mathrm{softmax}(2x) = \\mathrm{softmax}(x)",
            x,
            [
                Option(
                    "False: doubling the scores sharpens the weights",
                    True,
                    f"$\\mathrm{{softmax}}(x) = {_row(sm(x))}$ but "
                    f"$\\mathrm{{softmax}}(2x) = {_row(sm(2 * x))}$.",
                ),
                Option(
                    "True: softmax depends only on the order of the scores",
                    False,
                    "Doubling keeps the order but spreads the scores apart.",
                    "order_is_enough",
                    "Doubling keeps the order but changes the weights: the larger scores gain.",
                ),
                Option(
                    "True: the factor 2 cancels between each weight and the sum",
                    False,
                    "$e^{2x_i} = (e^{x_i})^2$: squaring does not cancel; a shift would.",
                    "scaling_cancels",
                    "e^(2x) is (e^x)², which does not cancel: only adding a constant cancels.",
                ),
                Option(
                    "False: $\\mathrm{softmax}(2x)$ is twice $\\mathrm{softmax}(x)$",
                    False,
                    "The weights always sum to 1, so they cannot all double.",
                    "weights_scale",
                    "The weights always sum to 1, so they cannot all double.",
                ),
            ],
        )
    if kind == "order":
        x = distinct_x(4, -3, 3, negative=True)
        return (
            "\\text{a larger score always gets a larger weight}",
            x,
            [
                Option(
                    "True: $e^t$ is increasing, and every weight is divided by the same sum",
                    True,
                    f"Here $x = {latex_row(x)}$ gives ${_row(sm(x))}$: the same order.",
                ),
                Option(
                    "False: each weight depends on all the scores, so the order can change",
                    False,
                    "All weights share one denominator, so the order cannot change.",
                    "order_not_kept",
                    "Every weight is divided by the same sum, so the order of "
                    "the e^{x_i}, the order of the scores, is kept.",
                ),
                Option(
                    "True: each weight is proportional to its score",
                    False,
                    "It is proportional to $e^{x_i}$, not to $x_i$: a negative score still "
                    "gets a positive weight.",
                    "proportional_to_score",
                    "The weight is proportional to e^score, not to the score: a negative score "
                    "still gets a positive weight.",
                ),
                Option(
                    "False: only the largest score gets any weight; the others get 0",
                    False,
                    "That would be the argmax (one-hot); softmax gives every score a positive "
                    "weight.",
                    "argmax_not_softmax",
                    "That is the argmax; softmax gives every score a positive weight.",
                ),
            ],
        )
    if kind == "zero":
        x = np.array(
            [
                float(rng.choice([-12, -10, -9])),
                float(rng.integers(0, 2)),
                float(rng.integers(2, 4)),
            ]
        )
        w = sm(x)
        return (
            "\\text{a softmax weight can be exactly } 0",
            x,
            [
                Option(
                    "False: $e^{x_i} > 0$ for every score, so every weight is positive (it may "
                    "round to 0.00)",
                    True,
                    f"Here the smallest weight is about ${significant_latex(w.min())}$: tiny, but positive.",
                ),
                Option(
                    "True: a very negative score gets weight 0",
                    False,
                    "Its weight is tiny and rounds to 0.00, but $e^{x_i}$ is never 0.",
                    "weight_can_be_zero",
                    "e^x is never 0: the weight is tiny and rounds to 0.00, but it is positive.",
                ),
                Option(
                    "True: every negative score gets weight 0",
                    False,
                    "$e^{-1} \\approx 0.37$: negative scores get positive weights.",
                    "negative_scores_zero",
                    "Negative scores get positive weights: e^(-1) is about 0.37.",
                ),
                Option(
                    "False: every weight is at least $1/n$",
                    False,
                    "Weights can be far below $1/n$; positive, but tiny.",
                    "at_least_uniform",
                    "A weight can be far below 1/n: positive, but tiny.",
                ),
            ],
        )
    if kind == "sum":
        x = distinct_x(3, -2, 4, negative=True)
        return (
            "\\text{the weights sum to 1, whatever the scores}",
            x,
            [
                Option(
                    "True: each weight is $e^{x_i}$ divided by the sum of all the $e^{x_j}$",
                    True,
                    f"Here ${' + '.join(f'{v:.2f}' for v in sm(x))} = 1$ (up to rounding).",
                ),
                Option(
                    "False: they sum to the sum of the scores",
                    False,
                    f"The scores sum to ${num(x.sum())}$; the weights, by construction, to 1.",
                    "sum_of_scores",
                    f"The scores sum to {num(x.sum())}; the weights always sum to 1.",
                ),
                Option(
                    "True: because the scores sum to 1",
                    False,
                    f"The scores need not sum to 1 (here ${num(x.sum())}$).",
                    "scores_sum_to_one",
                    f"The scores need not sum to 1 (here {num(x.sum())}); "
                    "the weights do, by construction.",
                ),
                Option(
                    "False: only when every score is positive",
                    False,
                    "Negative scores get positive weights too, and the sum is still 1.",
                    "positive_scores_needed",
                    "With negative scores too: e^x is positive, and "
                    "dividing by the sum makes them add up to 1.",
                ),
            ],
        )
    x = distinct_x(3, -2, 4, negative=True)
    naive = x / x.sum()
    return (
        "\\mathrm{softmax}(x)_i = x_i / \\textstyle\\sum_j x_j",
        x,
        [
            Option(
                "False: softmax exponentiates first, $e^{x_i} / \\sum_j e^{x_j}$",
                True,
                f"Here $x_i / \\sum_j x_j$ gives ${_row(naive)}$ (negative entries, not weights), "
                f"softmax ${_row(sm(x))}$.",
            ),
            Option(
                "True: that is how scores are normalized into weights",
                False,
                "Dividing by the sum can give negative or infinite weights; softmax uses "
                "$e^{x_i}$.",
                "softmax_no_exp",
                "That forgets the exponential: softmax is "
                "e^{x_i} / Σ e^{x_j} (x_i / Σ x_j can be negative here).",
            ),
            Option(
                "True, for positive scores",
                False,
                "Even for positive scores the numbers differ: softmax uses $e^{x_i}$.",
                "no_exp_for_positive",
                "Even for positive scores x_i / Σ x_j differs from softmax, which uses e^{x_i}.",
            ),
            Option(
                "False: $\\mathrm{softmax}(x)_i = e^{x_i} / e^{\\sum_j x_j}$",
                False,
                "The denominator is the sum of the exponentials, not the exponential of the sum.",
                "exp_of_sum",
                "The denominator is Σ e^{x_j}, the sum of the exponentials, not e^{Σ x_j}.",
            ),
        ],
    )


SOFTMAX_STATEMENTS = ("shift", "scale", "order", "zero", "sum", "no_exp")


@register_kind
class SoftmaxStatements(Kind):
    """A property of softmax (shift invariance, scaling, order, positivity, sum, the
    exponential), true or false, and why, with an example ``x`` to try it on.  Four options
    (shuffled): one right, the others a wrong verdict or a wrong reason.  Values:
    ``statement``, ``x`` (a row), ``options``.
    """

    name = "softmax_statements"

    class Params(KindParams):
        pass

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        kind = SOFTMAX_STATEMENTS[int(rng.integers(len(SOFTMAX_STATEMENTS)))]
        statement, x, options = _softmax_statement(kind, rng)
        lead = [
            SolutionStep(
                "Try it",
                f"For $x = {latex_row(x)}$: $\\mathrm{{softmax}}(x) = {_row(linalg.softmax(x))}$.",
            )
        ]
        return choice_variant(
            options,
            rng,
            {"statement": statement, "x": latex_row(x)},
            lead,
            context={"statement_kind": kind, "x": x},
        )
