"""Conceptual kinds for retrieval scores and softmax: why √d, how sharply softmax picks, and dot
product versus cosine (the course's second edition, issue 16).

- ``dot_product_scale``: the average square of random dot products is about d (shown by numbers).
- ``softmax_temperature``: which of softmax(x), softmax(4x), softmax(x/4) is which.
- ``similarity_choice``: the most similar key by dot product, or by cosine similarity.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import Field

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._choice import Option, choice_variant
from ._util import (
    IntRange,
    clean,
    draw,
    ints,
    latex_matrix,
    num,
)


def _p(kind: Kind, params: KindParams) -> Any:
    return params if isinstance(params, kind.Params) else kind.Params.model_validate(params)


def _row(values: Any, digits: int = 2) -> str:
    """A vector as a LaTeX row ``(0.12, 0.88)`` with ``digits`` decimals."""
    return "(" + ", ".join(f"{v:.{digits}f}" for v in np.asarray(values, dtype=float)) + ")"


# --- why √d ---------------------------------------------------------------------------------


@register_kind
class DotProductScale(Kind):
    """Why divide by √d, shown by numbers: ``samples`` dot products ``q·k`` of random vectors
    with independent entries +1 or -1 (mean 0, variance 1) in dimension ``d``; what is their
    average square close to: 1, √d, d or d²?  Half of the variants show ``q·k / √d`` instead
    (average square about 1).  Redrawn until the average square of the numbers shown is
    clearly nearest the right option on a log scale and (revision 2) also by plain difference.  Values: ``d``, ``sqrt_d``, ``numbers``
    (a LaTeX row), ``what`` (``q \\cdot k`` or ``q \\cdot k / \\sqrt{d}``), ``scaled``
    (true/false), ``options``.
    """

    name = "dot_product_scale"
    #: Revision 2: ``nearest`` left unset means ``both``: the right option is also the nearest by
    #: plain difference, as a student who computes the average square compares (revision 1
    #: compared on a log scale only: d = 49 with an average square of 27.7 is nearer √d = 7).
    revision = 2
    revision_defaults = {2: lambda p: {"nearest": "both"}}

    class Params(KindParams):
        samples: int = Field(12, ge=6, le=20)
        dimensions: list[Literal[9, 16, 25, 36, 49, 64, 100]] = [16, 25, 36, 49, 64, 100]
        #: How "closest" is judged when the numbers are drawn: ``log`` (clearly nearest on a log
        #: scale; revision 1) or ``both`` (that, and nearest by plain difference too).
        nearest: Literal["log", "both"] = "log"

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        d = int(p.dimensions[int(rng.integers(len(p.dimensions)))])
        root = math.isqrt(d)
        scaled = bool(rng.random() < 0.5)
        targets = [1.0, float(root), float(d), float(d * d)]
        right = 0 if scaled else 2

        def make():
            q = rng.choice([-1, 1], size=(p.samples, d))
            k = rng.choice([-1, 1], size=(p.samples, d))
            dots = (q * k).sum(axis=1).astype(float)
            shown = np.round(dots / root, 2) if scaled else dots
            mean_square = float(np.mean(shown**2))
            if mean_square <= 0:
                return None
            dist = [abs(math.log(mean_square) - math.log(t)) for t in targets]
            others = sorted(x for i, x in enumerate(dist) if i != right)
            if dist[right] > 0.6 * others[0]:
                return None  # the numbers must point clearly at the right option
            plain = [abs(mean_square - t) for t in targets]
            if p.nearest == "both" and min(range(4), key=plain.__getitem__) != right:
                return None  # ... and be nearest the way the prompt asks: by difference
            return shown, mean_square

        shown, mean_square = draw(rng, make, "samples whose average square is clearly near d")
        what = "q \\cdot k / \\sqrt{d}" if scaled else "q \\cdot k"
        numbers = ", \\; ".join(num(v) if not scaled else f"{v:.2f}" for v in shown)
        raw_ms = mean_square * d if scaled else mean_square
        lead = [
            SolutionStep(
                "Average the squares",
                f"The squares average to ${num(round(mean_square, 3))}$.",
                value=round(mean_square, 3),
            ),
            SolutionStep(
                "Why",
                f"$q \\cdot k = q_1k_1 + \\dots + q_dk_d$ adds $d = {d}$ independent products, "
                "each $+1$ or $-1$ with mean 0 and variance 1. Variances of independent terms "
                f"add, so $\\mathrm{{Var}}(q \\cdot k) = d = {d}$: the average square of $q "
                f"\\cdot k$ is about ${d}$ (here ${num(round(raw_ms, 3))}$) and its typical size "
                f"about $\\sqrt{{d}} = {root}$. Dividing by $\\sqrt{{d}}$ divides the square by "
                f"$d$, which brings the average square back to about 1"
                + (f" (here ${num(round(mean_square, 3))}$)" if scaled else "")
                + ". That keeps the scores, and so the softmax, from saturating as $d$ grows.",
            ),
        ]
        texts = ["$1$", f"$\\sqrt{{d}} = {root}$", f"$d = {d}$", f"$d^2 = {d * d}$"]
        why_raw = [
            (
                "forgot_the_sum",
                "1 is the variance of each single product q_i k_i; q·k adds d of "
                f"them, and the variances add up to d = {d}.",
            ),
            (
                "sd_for_variance",
                f"√d = {root} is the typical size of q·k (its standard "
                f"deviation); its average square, the variance, is d = {d}.",
            ),
            ("", ""),
            (
                "variance_squared",
                f"d² = {d * d} would be the square of the largest possible "
                f"value (all {d} products +1); the numbers average far below that, at about d.",
            ),
        ]
        why_scaled = [
            ("", ""),
            (
                "scaled_to_sqrt_d",
                "Dividing q·k by √d divides its square by d: the average "
                f"square goes from about d = {d} down to about 1, not to √d.",
            ),
            (
                "forgot_the_scaling",
                "These numbers are already divided by √d, so their squares "
                f"are divided by d = {d}: the average square is about 1.",
            ),
            (
                "variance_squared",
                "Even before the division the average square is about d; after it, about 1.",
            ),
        ]
        table = why_scaled if scaled else why_raw
        options = [
            Option(
                texts[i],
                i == right,
                f"The average square of these numbers is ${num(round(mean_square, 3))}$."
                if i == right
                else table[i][1].replace("√d", "$\\sqrt{d}$").replace("d²", "$d^2$"),
                table[i][0],
                table[i][1],
            )
            for i in range(4)
        ]
        return choice_variant(
            options,
            None,
            {
                "d": d,
                "sqrt_d": root,
                "numbers": numbers,
                "what": what,
                "scaled": scaled,
                "samples": p.samples,
            },
            lead,
            context={"shown": shown, "d": d, "scaled": scaled},
        )


# --- softmax --------------------------------------------------------------------------------


@register_kind
class SoftmaxTemperature(Kind):
    """softmax(x), softmax(4x) and softmax(x/4), shown (to 2 decimals) in a random order: which
    one is softmax(``target``) (4x, x/4 or x, drawn)?  Redrawn until softmax(4x) is nearly one-hot
    (largest weight at least ``one_hot``) and softmax(x/4) nearly uniform.  A fourth option says
    they are all equal (as if scaling were a shift).  Values: ``x``, ``target``, ``options``.
    """

    name = "softmax_temperature"

    class Params(KindParams):
        length: int = Field(4, ge=3, le=5)
        inputs: IntRange = (-2, 3)
        one_hot: float = Field(0.9, gt=0.5, lt=1)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        factors = {"4x": 4.0, "x": 1.0, "x/4": 0.25}
        target = ("4x", "x/4", "x")[int(rng.integers(3))]

        def make():
            x = ints(rng, p.inputs, p.length).astype(float)
            if len(set(x.tolist())) < p.length:
                return None
            w = {k: linalg.softmax(f * x) for k, f in factors.items()}
            if w["4x"].max() < p.one_hot or w["x/4"].max() > 0.45:
                return None
            shown = {k: np.round(v, 2) for k, v in w.items()}
            if len({tuple(v.tolist()) for v in shown.values()}) < 3:
                return None
            return x, w

        x, w = draw(rng, make, "a sharp softmax(4x) and a flat softmax(x/4)")
        label = {"4x": "softmax(4x)", "x": "softmax(x)", "x/4": "softmax(x/4)"}
        describe = {
            "4x": "the sharpest: multiplying the scores by 4 spreads them apart, so the largest "
            "takes nearly all the weight (nearly one-hot)",
            "x": "in between: the softmax of the scores as they are",
            "x/4": "the flattest: dividing the scores by 4 squeezes them together, so the "
            "weights move towards uniform",
        }
        codes = {
            ("4x", "x/4"): "temperature_reversed",
            ("x/4", "4x"): "temperature_reversed",
            ("4x", "x"): "temperature_ignored",
            ("x/4", "x"): "temperature_ignored",
            ("x", "4x"): "temperature_applied",
            ("x", "x/4"): "temperature_applied",
        }
        options = []
        for key in ("4x", "x", "x/4"):
            right = key == target
            message = (
                f"That is {label[key]}, {describe[key]}. {label[target]} is "
                f"{describe[target].split(':')[0]}."
            )
            options.append(
                Option(
                    f"$\\left({', '.join(f'{v:.2f}' for v in w[key])}\\right)$",
                    right,
                    f"It is {label[key]}: {describe[key]}.",
                    "" if right else codes[(target, key)],
                    "" if right else message,
                )
            )
        options.append(
            Option(
                "They are all the same vector: softmax does not change when the scores change "
                "this way",
                False,
                "Adding a constant to the scores leaves the softmax unchanged; multiplying them "
                "does not: it sharpens or flattens the weights.",
                "scaling_is_shift",
                "Adding a constant leaves the softmax unchanged, but multiplying the scores "
                "changes it: larger factors sharpen it, smaller ones flatten it.",
            )
        )
        lead = [
            SolutionStep(
                "Scaling the scores",
                "$\\mathrm{softmax}(cx)_i = e^{cx_i} / \\sum_j e^{cx_j}$: the ratio of two "
                "weights is $e^{c(x_i - x_j)}$, so a larger $c$ drives the weights apart (towards "
                "one-hot) and a smaller $c$ pulls them together (towards uniform). Here "
                f"$\\mathrm{{softmax}}(x) = {_row(w['x'])}$, "
                f"$\\mathrm{{softmax}}(4x) = {_row(w['4x'])}$ and "
                f"$\\mathrm{{softmax}}(x/4) = {_row(w['x/4'])}$.",
            ),
        ]
        close = [
            SolutionStep(
                "Why it matters",
                "Dividing the scores by $\\sqrt{d}$ is such a factor: without it, scores that "
                "grow with $d$ would make the attention weights nearly one-hot.",
            )
        ]
        return choice_variant(
            options,
            rng,
            {"x": clean(x), "target": target},
            lead,
            close,
            context={"x": x, "target": target},
        )


# --- dot product versus cosine ------------------------------------------------------------


@register_kind
class SimilarityChoice(Kind):
    """Which of three keys is most similar to a query, by dot product or (half the variants) by
    cosine similarity?  Redrawn until the two measures pick different keys (a long key wins the
    dot product, a well-aligned one the cosine), each by a clear margin.  Answer form ``index``
    (the key's number).  Values: ``q``, ``keys`` (LaTeX list), ``measure`` ("dot product" or
    "cosine similarity").  Picking the other measure's winner, or the least similar key, is named.
    """

    name = "similarity_choice"

    class Params(KindParams):
        entries: IntRange = (-1, 4)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        cosine = bool(rng.random() < 0.5)

        def make():
            q = ints(rng, p.entries, 2).astype(float)
            K = ints(rng, p.entries, (3, 2)).astype(float)
            if not q.any() or not np.all(K.any(axis=1)):
                return None
            dots = K @ q
            cos = np.array([linalg.cosine_similarity(q, k) for k in K])
            bd, bc = int(np.argmax(dots)), int(np.argmax(cos))
            if bd == bc:
                return None
            top_d = np.sort(dots)[-2:]
            top_c = np.sort(cos)[-2:]
            if top_d[1] - top_d[0] < 1 or top_c[1] - top_c[0] < 0.05:
                return None
            if top_d[1] <= 0 or top_c[1] <= 0:
                return None  # the most similar key points somewhat the way q does
            return q, K, dots, cos

        q, K, dots, cos = draw(rng, make, "keys ranked differently by the two measures")
        scores = cos if cosine else dots
        best = int(np.argmax(scores))
        other = int(np.argmax(dots if cosine else cos))
        low = int(np.argmin(scores))
        names = [f"\\mathbf{{k}}_{j + 1}" for j in range(3)]
        lengths = np.linalg.norm(K, axis=1)
        mistakes: dict[int, tuple[str, str]] = {
            other + 1: (
                (
                    "dot_not_cosine",
                    f"k{other + 1} has the largest dot product ({num(dots[other])}) "
                    f"because it is long (|k{other + 1}| = {lengths[other]:.2f}); the cosine divides "
                    f"by the lengths and prefers k{best + 1}, which points most nearly the way q does.",
                )
                if cosine
                else (
                    "cosine_not_dot",
                    f"k{other + 1} points most nearly the way q does (the "
                    f"largest cosine), but the dot product also grows with length: "
                    f"q·k{best + 1} = {num(dots[best])} is larger.",
                )
            )
        }
        if low not in (best, other):
            mistakes[low + 1] = (
                "least_similar",
                f"k{low + 1} is the LEAST similar by this measure; the question asks for the most.",
            )
        rows = "\n".join(
            f"| $\\mathbf{{k}}_{j + 1}$ | {num(dots[j])} | {lengths[j]:.3f} | {cos[j]:.3f} |"
            for j in range(3)
        )
        steps = [
            SolutionStep(
                "Both measures",
                f"$\\lVert\\mathbf{{q}}\\rVert = {np.linalg.norm(q):.3f}$.\n\n"
                "| key | $\\mathbf{q} \\cdot \\mathbf{k}$ | $\\lVert\\mathbf{k}\\rVert$ | "
                "$\\cos = \\mathbf{q} \\cdot \\mathbf{k} / (\\lVert\\mathbf{q}\\rVert"
                " \\lVert\\mathbf{k}\\rVert)$ |\n"
                "|---|---|---|---|\n" + rows,
            ),
            SolutionStep(
                "The answer",
                f"By {'cosine similarity' if cosine else 'dot product'} the most similar key is "
                f"${names[best]}$ (number {best + 1}); by the other measure it would be "
                f"${names[other]}$. The dot product grows with the keys' lengths; the cosine "
                "compares directions only.",
            ),
        ]
        return Generated(
            values={
                "q": clean(q),
                "keys": ", \\quad ".join(
                    f"{n} = {latex_matrix(k)}" for n, k in zip(names, K, strict=True)
                ),
                "measure": "cosine similarity" if cosine else "dot product",
            },
            expected=best + 1,
            answer_form=AnswerForm(
                type="index", shape=None, choices=["k1", "k2", "k3"], col_labels=["k1", "k2", "k3"]
            ),
            solution=steps,
            context={
                "family": "index",
                "index_mistakes": mistakes,
                "count": 3,
                "q": q,
                "K": K,
                "measure": "cosine" if cosine else "dot",
            },
        )
