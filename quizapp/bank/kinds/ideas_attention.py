"""Conceptual kinds for attention: what the mask and the heads do, what "it" attends to, what an
output can be (the course's second edition, issue 16).

- ``causal_attention``: the output of attention with a causal mask (computed; named mistakes).
- ``causal_choice``: which matrix could be the weights of a causal layer.
- ``it_attends``: "The animal didn't cross the street because it was too tired": what "it"
  attends to, with designed keys.
- ``output_candidates``: which row could be an attention output (a weighted average of V).
- ``attention_shapes``: the shape of a part of multi-head attention.
- ``attention_parameters``: how many parameters a multi-head layer's matrices hold.

Conventions as in ``quizapp.linalg``: one token per row; softmax along rows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import Field

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._choice import Option, choice_variant
from ._mistakes import (
    MistakeCache,
    constant_column,
    credit_ok,
    distinguishable_codes,
    mistaken_value,
)
from ._util import (
    IntRange,
    clean,
    draw,
    ints,
    latex_matrix,
    latex_row,
    markdown_table,
    not_saturated,
    num,
    pick_tokens,
)


def _p(kind: Kind, params: KindParams) -> Any:
    return params if isinstance(params, kind.Params) else kind.Params.model_validate(params)


def _row(values: Any, digits: int = 2) -> str:
    """A vector as a LaTeX row ``(0.12, 0.88)`` with ``digits`` decimals."""
    return "(" + ", ".join(f"{v:.{digits}f}" for v in np.asarray(values, dtype=float)) + ")"


# --- the causal mask ------------------------------------------------------------------------

CAUSAL_CODES = ("no_mask", "mask_after_softmax", "mask_transposed", "missing_scale")


def _masked_latex(S: np.ndarray) -> str:
    n = S.shape[0]
    rows = [
        " & ".join(
            "-\\infty" if j > i else f"{S[i, j]:.3f}".rstrip("0").rstrip(".") for j in range(n)
        )
        for i in range(n)
    ]
    return r"\begin{pmatrix} " + r" \\ ".join(rows) + r" \end{pmatrix}"


def _draw_causal(
    rng: np.random.Generator,
    n: int,
    d: int,
    entries: IntRange,
    decimals: int,
    value_entries: IntRange | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, dict[str, Any]]:
    """``Q``, ``K`` (and, with ``value_entries``, ``V``) for a causal layer whose allowed
    weights (after row 1) are not saturated and whose named mistakes all give other weights;
    with ``V``, they also give other outputs and earn at most half the credit.  Returns
    ``(Q, K, V or None, weights, context)``."""

    def make():
        Q = ints(rng, entries, (n, d)).astype(float)
        K = ints(rng, entries, (n, d)).astype(float)
        V = None
        if value_entries is not None:
            V = ints(rng, value_entries, (n, 2)).astype(float)
            if constant_column(V):
                return None  # that output column would be right for any weights
        _, W = linalg.causal_attention(Q, K)
        allowed = np.tril(np.ones((n, n), dtype=bool))
        allowed[0, 0] = False  # row 1 is always (1, 0, ..., 0)
        if not not_saturated(W[allowed], decimals):
            return None
        ctx: dict[str, Any] = {"family": "causal", "Q": Q, "K": K, "ask": "weights"}
        if distinguishable_codes(W, ctx, CAUSAL_CODES, decimals) != CAUSAL_CODES:
            return None
        if V is not None:
            ctx = {**ctx, "V": V, "ask": "output"}
            out = W @ V
            cache: MistakeCache = {}
            codes = distinguishable_codes(out, ctx, CAUSAL_CODES, decimals, cache)
            if codes != CAUSAL_CODES or not credit_ok(out, ctx, codes, decimals, cache=cache):
                return None
        return Q, K, V, W, ctx

    return draw(rng, make, "unsaturated causal weights with recognisable mistakes")


@register_kind
class CausalAttention(Kind):
    """The output of causal (masked) self-attention: ``softmax(mask(QK^T / sqrt(d))) V`` with
    ``-inf`` above the diagonal, so token ``i`` attends to tokens ``1..i`` (Vaswani et al. 2017,
    section 3.2.3).  Expected from ``linalg.causal_attention``.  (The output, not the weights,
    is asked: the weights' zeros and their last row are the same for several mistakes, which
    would earn them most of the credit.)  Guarantees: the allowed weights (after the first row,
    always ``(1, 0, ...)``) round to neither 0 nor 1, and each named mistake gives other weights
    and outputs and earns at most half the credit.  Values: ``Q``, ``K``, ``V``, ``d``,
    ``tokens``.  Detectors: ``no_mask``, ``mask_after_softmax``, ``mask_transposed``,
    ``missing_scale``.
    """

    name = "causal_attention"
    #: Revision 2: a draw whose named mistakes give one answer is drawn again.
    revision = 2
    redraw_coinciding = 2

    class Params(KindParams):
        tokens: int = Field(3, ge=3, le=4)
        d: int = Field(4, ge=2, le=6)
        entries: IntRange = (-1, 2)
        value_entries: IntRange = (-2, 4)
        decimals: int = Field(2, ge=1, le=3)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        Q, K, V, W, ctx = _draw_causal(rng, p.tokens, p.d, p.entries, p.decimals, p.value_entries)
        assert V is not None
        out, _ = linalg.causal_attention(Q, K, V)
        assert out is not None  # V is given
        toks = pick_tokens(rng, p.tokens)
        S = linalg.scaled_scores(Q, K)
        r = p.decimals + 2
        steps = [
            SolutionStep(
                "Scaled scores",
                f"$\\frac{{QK^T}}{{\\sqrt{{{p.d}}}}} = {latex_matrix(np.round(S, 3) + 0.0)}$.",
                value=np.round(S, 4) + 0.0,
                row_labels=toks,
                col_labels=toks,
            ),
            SolutionStep(
                "Mask the future",
                "Token $i$ may not look at the tokens after it: every score above the diagonal "
                f"becomes $-\\infty$: ${_masked_latex(S)}$.",
            ),
            SolutionStep(
                "Softmax of each row",
                "$e^{-\\infty} = 0$, so each row's softmax spreads its weight over tokens "
                "$1, \\dots, i$ only, and still sums to 1 (the first token attends to itself "
                f"alone): ${latex_matrix(np.round(W, r) + 0.0)}$.",
                value=np.round(W, r) + 0.0,
                heatmap=True,
                row_labels=toks,
                col_labels=toks,
            ),
            SolutionStep(
                "Multiply by V",
                "Each output row is the weighted average of the rows of $V$ it may see: "
                f"${latex_matrix(np.round(out, r) + 0.0)}$.",
                value=np.round(out, r) + 0.0,
                row_labels=toks,
            ),
        ]
        return Generated(
            values={
                "Q": clean(Q),
                "K": clean(K),
                "V": clean(V),
                "d": p.d,
                "tokens": ", ".join(f"“{t}”" for t in toks),
            },
            expected=out,
            answer_form=AnswerForm(type="matrix", shape=out.shape, row_labels=toks),
            solution=steps,
            context=ctx,
            detectors=CAUSAL_CODES,
        )


@register_kind
class CausalChoice(Kind):
    """Which of four weight matrices could come from causal self-attention?  The right one is
    the masked softmax (lower triangular, rows summing to 1); the others (shuffled) are the mask
    transposed (upper triangular), the mask applied after the softmax (rows short of 1) and no
    mask at all, all from the same random ``Q`` and ``K``, shown to 2 decimals.
    Values: ``tokens``, ``options``.
    """

    name = "causal_choice"

    class Params(KindParams):
        tokens: int = Field(3, ge=3, le=4)
        d: int = Field(4, ge=2, le=6)
        entries: IntRange = (-1, 2)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        Q, K, _, W, ctx = _draw_causal(rng, p.tokens, p.d, p.entries, 2)
        toks = pick_tokens(rng, p.tokens)

        M: dict[str, np.ndarray] = {}
        for c in ("no_mask", "mask_after_softmax", "mask_transposed"):
            value = mistaken_value(c, ctx)
            assert value is not None, c  # every causal mistake applies to a causal context
            M[c] = value

        def shown(a: np.ndarray) -> str:
            return latex_matrix(np.round(a, 2) + 0.0)

        sums = ", ".join(f"{v:.2f}" for v in M["mask_after_softmax"].sum(axis=1))
        options = [
            Option(
                f"${shown(W)}$",
                True,
                "Zero above the diagonal (no token sees a later one), and each row sums to 1: "
                "the softmax of the masked scores.",
            ),
            Option(
                f"${shown(M['mask_transposed'])}$",
                False,
                "Zero below the diagonal: each token attends only to the tokens after it, the "
                "opposite of a causal mask.",
                "mask_transposed",
                "It lets each token attend to the tokens AFTER it and hides the earlier ones: a "
                "causal mask hides the later ones.",
            ),
            Option(
                f"${shown(M['mask_after_softmax'])}$",
                False,
                f"Zero above the diagonal, but the rows sum to ${sums}$: the later tokens' "
                "weights were removed after the softmax, not masked before it.",
                "mask_after_softmax",
                "Its rows do not sum to 1: the future weights were set to 0 after the softmax. "
                "Masking before the softmax (scores -∞) keeps every row summing to 1.",
            ),
            Option(
                f"${shown(M['no_mask'])}$",
                False,
                "Nothing is zero: the first token attends to every later token.",
                "no_mask",
                "Its upper triangle is not 0: the first token attends to tokens it has not seen "
                "yet.",
            ),
        ]
        lead = [
            SolutionStep(
                "What a causal mask does",
                "Scores $j > i$ are set to $-\\infty$ before the softmax, so row $i$ has weight "
                "0 on every later token, its weights on tokens $1..i$ sum to 1, and the first row "
                "is $(1, 0, \\dots, 0)$.",
            )
        ]
        return choice_variant(
            options,
            rng,
            {"tokens": ", ".join(f"“{t}”" for t in toks)},
            lead,
            context={"Q": Q, "K": K},
        )


# --- "The animal didn't cross the street because it was too tired" -------------------------

_SENTENCE = ["The", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too"]
_FEATURES = ["living", "place", "noun", "grammar"]


@register_kind
class ItAttends(Kind):
    """The deck's example, designed: "The animal didn't cross the street because it was too
    tired" (or "... too wide").  Every token's key has four named features (living, place,
    noun, grammar), drawn within designed ranges; the query of "it" looks for something living
    (tired) or a place (wide).  Which token does "it" attend to most?  Redrawn until the
    intended noun wins by at least ``margin`` in score, ahead of the other noun.  Answer form
    ``index`` (the token's number).  Values: ``sentence``, ``K_table``, ``q``, ``ending``,
    ``token_list``, ``d``.  Picking the other noun, "it" itself, the last word or the lowest
    score is named.
    """

    name = "it_attends"

    class Params(KindParams):
        margin: float = Field(1.0, gt=0)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        tired = bool(rng.random() < 0.5)
        ending = "tired" if tired else "wide"
        tokens = _SENTENCE + [ending]
        target, other = (1, 5) if tired else (5, 1)  # animal, street

        def r(lo: int, hi: int) -> int:
            return int(rng.integers(lo, hi + 1))

        def make():
            keys = []
            for tok in tokens:
                if tok in ("The", "the"):
                    keys.append([0, 0, r(0, 1), r(1, 2)])
                elif tok == "animal":
                    keys.append([r(2, 3), r(-1, 0), r(1, 2), 0])
                elif tok == "street":
                    keys.append([r(-1, 0), r(2, 3), r(1, 2), 0])
                elif tok == "it":
                    keys.append([r(0, 1), r(0, 1), r(0, 1), r(0, 1)])
                elif tok == "tired":
                    keys.append([r(1, 2), 0, 0, r(0, 1)])
                elif tok == "wide":
                    keys.append([0, r(1, 2), 0, r(0, 1)])
                else:
                    keys.append([r(0, 1), r(0, 1), 0, r(1, 2)])
            K = np.array(keys, dtype=float)
            want, avoid, noun = r(2, 3), r(-1, 0), r(1, 2)
            # "it" looks for something living (tired) or a place (wide), a noun, not grammar
            q = np.array([want, avoid, noun, -1] if tired else [avoid, want, noun, -1], float)
            scores = K @ q
            order = np.argsort(scores)[::-1]
            if order[0] != target or scores[target] - scores[order[1]] < p.margin:
                return None
            if order[1] != other and scores[other] < scores[order[1]] - 2:
                return None  # the other noun should be the tempting runner-up
            return K, q, scores

        K, q, scores = draw(rng, make, f"the intended noun ahead by {p.margin}")
        d = K.shape[1]
        weights = linalg.softmax(scores / math.sqrt(d))
        labels = [t if t != "the" else "the (2nd)" for t in tokens]
        best = int(np.argmax(scores))
        mistakes: dict[int, tuple[str, str]] = {
            other + 1: (
                "other_noun",
                (
                    f"“street” scores {num(scores[other])} against “animal”'s "
                    f"{num(scores[target])}: a street cannot be tired, and the query of “it” "
                    "asks for something living."
                    if tired
                    else f"“animal” scores {num(scores[other])} against “street”'s "
                    f"{num(scores[target])}: an animal is not wide, and the query of “it” asks "
                    "for a place."
                ),
            )
        }
        it = tokens.index("it")
        if it != best:
            mistakes[it + 1] = (
                "attends_to_itself",
                f"“it” scores {num(scores[it])} with its own key; a pronoun's query looks for "
                f"what it refers to, and “{tokens[best]}” scores {num(scores[best])}.",
            )
        last = len(tokens) - 1
        if last != best and last + 1 not in mistakes:
            mistakes[last + 1] = (
                "describing_word",
                f"“{ending}” says something about what “it” refers to, but its key scores only "
                f"{num(scores[last])}.",
            )
        low = int(np.argmin(scores))
        if low + 1 not in mistakes and low != best:
            mistakes[low + 1] = (
                "lowest_score",
                f"“{labels[low]}” gets the LOWEST score from the query of “it”.",
            )
        score_list = ", ".join(f"{lab}: {num(s)}" for lab, s in zip(labels, scores, strict=True))
        steps = [
            SolutionStep(
                "Score every key",
                f"The row of “it” in $QK^T$ is $\\mathbf{{q}}_{{\\text{{it}}}} \\cdot \\mathbf{{k}}_j$ "
                f"for each token $j$: {score_list}.",
                value=clean(scores),
            ),
            SolutionStep(
                "The weights",
                f"Dividing by $\\sqrt{{{d}}} = 2$ and taking the softmax keeps that order: "
                f"“{tokens[best]}” gets the largest weight, {weights[best]:.2f}, so “it” "
                f"attends most to “{tokens[best]}”.",
                value=np.round(weights, 3) + 0.0,
            ),
            SolutionStep(
                "What the features say",
                "The query of “it” here (in a layer where “it” already carries the rest of its "
                f"sentence, “was too {ending}”) is large on “"
                + ("living" if tired else "place")
                + "” and negative on “grammar”: it looks for "
                + ("something that can be tired" if tired else "something that can be wide")
                + ". Change the last word and the same sentence sends “it” to the other noun: "
                "attention resolves what a word refers to.",
            ),
        ]
        return Generated(
            values={
                "sentence": " ".join(tokens[:-1]) + f" {ending}.",
                "K_table": markdown_table(K, labels, _FEATURES),
                "q": clean(q),
                "q_row": latex_row(q),
                "ending": ending,
                "token_list": "\n".join(f"{j + 1}. {t}" for j, t in enumerate(labels)),
                "d": d,
            },
            expected=best + 1,
            answer_form=AnswerForm(type="index", shape=None, choices=labels, col_labels=labels),
            solution=steps,
            context={
                "family": "index",
                "index_mistakes": mistakes,
                "count": len(tokens),
                "K": K,
                "q": q,
                "ending": ending,
            },
        )


# --- outputs are weighted averages ----------------------------------------------------------


@register_kind
class OutputCandidates(Kind):
    """Which of four rows could be a row of ``softmax(QK^T / sqrt(d)) V`` for some ``Q`` and
    ``K``?  The right one is ``w V`` for softmax weights ``w`` (all at least 0.1); the others
    (shuffled) are weights that sum to more than 1, a negative weight (each puts some entry
    outside its column's range in ``V``) and a row of ``V`` itself (weight exactly 1 on one key,
    which a softmax never gives).  Values: ``V``, ``options``.
    """

    name = "output_candidates"

    class Params(KindParams):
        keys: int = Field(3, ge=3, le=4)
        value_entries: IntRange = (-3, 4)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        n = p.keys

        def outside(c: np.ndarray, V: np.ndarray) -> int | None:
            for j in range(V.shape[1]):
                lo, hi = V[:, j].min(), V[:, j].max()
                if c[j] > hi + 0.05 or c[j] < lo - 0.05:
                    return j
            return None

        def make():
            V = ints(rng, p.value_entries, (n, 2)).astype(float)
            if np.any(np.ptp(V, axis=0) < 3) or len({tuple(r) for r in V.tolist()}) < n:
                return None
            w = linalg.softmax(rng.uniform(-1.2, 1.2, size=n))
            if w.min() < 0.1:
                return None
            right = np.round(w @ V, 2)
            over = np.round((1.6 * w) @ V, 2)
            shift = 0.6
            neg = w.copy()
            i, j = (int(v) for v in rng.permutation(n)[:2])
            neg[i] -= shift + w[i]
            neg[j] += shift + w[i]
            negative = np.round(neg @ V, 2)
            row = int(rng.integers(n))
            if outside(over, V) is None or outside(negative, V) is None:
                return None
            cands = [right, over, negative, V[row]]
            if len({tuple(c.tolist()) for c in cands}) < 4:
                return None
            return V, w, right, over, negative, row, neg

        V, w, right, over, negative, row, neg = draw(rng, make, "clearly separated candidates")

        def vec(c: np.ndarray) -> str:
            return "$(" + ", ".join(num(v) for v in c) + ")$"

        def why_out(c: np.ndarray) -> str:
            for j in range(2):
                lo, hi = V[:, j].min(), V[:, j].max()
                if c[j] > hi + 0.05:
                    return (
                        f"its entry {num(c[j])} is larger than every value in column {j + 1} of "
                        f"V (at most {num(hi)})"
                    )
                if c[j] < lo - 0.05:
                    return (
                        f"its entry {num(c[j])} is smaller than every value in column {j + 1} of "
                        f"V (at least {num(lo)})"
                    )
            return ""

        options = [
            Option(
                vec(right),
                True,
                f"The softmax weights ${_row(w, 3)}$ (positive, summing to 1) give exactly "
                f"$\\mathbf{{w}}V = {_row(w @ V)}$.",
            ),
            Option(
                vec(over),
                False,
                f"No: {why_out(over)}. A weighted average stays within each column's range.",
                "weights_not_normalized",
                f"{why_out(over)[0].upper()}{why_out(over)[1:]}: a weighted average with "
                "weights summing to 1 stays between the column's smallest and largest value. "
                "(Weights summing to 1.6 would give this row.)",
            ),
            Option(
                vec(negative),
                False,
                f"No: {why_out(negative)}. Only a negative weight reaches outside the range.",
                "negative_weight",
                f"{why_out(negative)[0].upper()}{why_out(negative)[1:]}: that needs a negative "
                "weight, and softmax weights are positive.",
            ),
            Option(
                vec(V[row]),
                False,
                f"No: that is row {row + 1} of $V$, which needs weight 1 on key {row + 1} and 0 "
                "on the others; softmax weights are never 0.",
                "row_of_v",
                f"That is row {row + 1} of V itself: it needs weight exactly 1 on one key and 0 "
                "on the others, but softmax weights are never 0.",
            ),
        ]
        lead = [
            SolutionStep(
                "What an output row is",
                "Row $i$ of $\\mathrm{softmax}(QK^T/\\sqrt{d})V$ is $\\sum_j w_j \\mathbf{v}_j$ "
                "with weights $w_j > 0$ summing to 1: a weighted average of the rows of $V$. "
                "So each of its entries lies strictly between the smallest and the largest "
                "value of that column of $V$ (here columns from "
                + " and ".join(
                    f"${num(V[:, j].min())}$ to ${num(V[:, j].max())}$" for j in range(2)
                )
                + ").",
            )
        ]
        return choice_variant(options, rng, {"V": clean(V)}, lead, context={"V": V})


# --- shapes and parameter counts ------------------------------------------------------------

_D_MODELS = (8, 12, 16, 24, 32, 48, 64)


def _sizes(rng: np.random.Generator) -> tuple[int, int, int, int]:
    """(n tokens, d_model, heads, d_k) with d_k = d_model / heads and n, d_k, d_model distinct."""

    def make():
        d = int(rng.choice(_D_MODELS))
        h = int(rng.choice([2, 3, 4, 8]))
        if d % h or d // h < 2:
            return None
        n = int(rng.integers(3, 11))
        dk = d // h
        if len({n, dk, d, h * dk}) < 3 or n in (dk, d) or dk == h:
            return None
        return n, d, h, dk

    return draw(rng, make, "sizes with d_model divisible by the heads")


@register_kind
class AttentionShapes(Kind):
    """The shape of one part of multi-head self-attention, for ``n`` tokens, ``d_model``,
    ``h`` heads and ``d_k = d_v = d_model / h``: ``W_Q`` of a head, ``Q_i``, the scores
    ``Q_iK_i^T``, a head's output, the concatenation, ``W_O`` or the layer's output (one drawn).
    Four options (shuffled) from the shapes of the other parts; a wrong pick says which part has
    that shape.  Values: ``n``, ``d_model``, ``heads``, ``d_k``, ``part`` (LaTeX), ``options``.
    """

    name = "attention_shapes"

    class Params(KindParams):
        pass

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        n, d, h, dk = _sizes(rng)
        # part -> (LaTeX, shape, what it is (Markdown), its name in plain text)
        parts = {
            "W_Q": (
                "W_Q^{(i)}",
                (d, dk),
                "head $i$'s query projection: $d_{\\text{model}}$ inputs, $d_k$ outputs",
                "head i's W_Q",
            ),
            "Q": ("Q_i = XW_Q^{(i)}", (n, dk), "head $i$'s queries: a row per token", "Q_i"),
            "scores": (
                "Q_iK_i^T",
                (n, n),
                "the scores: a row and a column per token",
                "the scores Q_i K_iᵀ",
            ),
            "head": (
                "\\mathrm{softmax}(Q_iK_i^T/\\sqrt{d_k})V_i",
                (n, dk),
                "a head's output: a row per token, $d_v$ columns",
                "a head's output",
            ),
            "concat": (
                "\\mathrm{concat}(\\mathrm{head}_1, \\dots, \\mathrm{head}_h)",
                (n, h * dk),
                "the heads side by side: $h \\cdot d_v$ columns",
                "the concatenated heads",
            ),
            "W_O": (
                "W_O",
                (h * dk, d),
                "$W_O$, which maps the $h \\cdot d_v$ concatenated columns back to "
                "$d_{\\text{model}}$",
                "W_O",
            ),
            "output": (
                "\\mathrm{concat}(\\dots)W_O",
                (n, d),
                "the layer's output: a row per token, $d_{\\text{model}}$ columns, like $X$",
                "the layer's output",
            ),
        }
        ask = list(parts)[int(rng.integers(len(parts)))]
        latex, shape, what, _ = parts[ask]
        # candidate shapes: the other parts' shapes and transposes, other than the right one
        pool: list[tuple[int, int]] = []
        for _key, (_, s, _, _) in parts.items():
            for cand in (s, s[::-1]):
                if cand != shape and cand not in pool:
                    pool.append(cand)
        picks = [pool[int(i)] for i in rng.permutation(len(pool))[:3]]
        by_shape: dict[tuple[int, int], tuple[str, str]] = {}
        for _key, (ltx, s, w, plain) in parts.items():
            by_shape.setdefault(s, (f"${ltx}$ ({w})", plain))

        def text(s: tuple[int, int]) -> str:
            return f"${s[0]} \\times {s[1]}$"

        options = [Option(text(shape), True, f"It is the shape of {what}.")]
        for s in picks:
            if s in by_shape:
                reason, plain = by_shape[s]
                why, message = f"That is the shape of {reason}.", f"That is the shape of {plain}."
                code = "shape_of_another_part"
            else:
                reason, plain = by_shape[s[::-1]]
                why = f"That is the transpose of the shape of {reason}."
                message = f"That is the shape of {plain} with rows and columns the other way round."
                code = "shape_transposed"
            options.append(Option(text(s), False, why, code, message))
        lead = [
            SolutionStep(
                "The sizes",
                f"$n = {n}$ tokens, $d_{{\\text{{model}}}} = {d}$, $h = {h}$ heads, so "
                f"$d_k = d_v = {d} / {h} = {dk}$. $X$ is ${n} \\times {d}$; each head projects "
                f"it to ${n} \\times {dk}$ queries, keys and values; the heads' outputs side by "
                f"side are ${n} \\times {h * dk}$, and $W_O$ (${h * dk} \\times {d}$) brings "
                f"them back to ${n} \\times {d}$.",
            )
        ]
        return choice_variant(
            options,
            rng,
            {"n": n, "d_model": d, "heads": h, "d_k": dk, "part": latex},
            lead,
            context={"n": n, "d_model": d, "heads": h, "d_k": dk, "part": ask},
        )


PARAMETER_ASKS = {
    "one_q": "the query projection $W_Q^{(i)}$ of one head",
    "all_q": "the query projections $W_Q^{(1)}, \\dots, W_Q^{(h)}$ of all the heads together",
    "qkv": "all the heads' $W_Q$, $W_K$ and $W_V$ together",
    "layer": "the whole layer: every head's $W_Q$, $W_K$, $W_V$, and $W_O$",
}


@register_kind
class AttentionParameters(Kind):
    """How many numbers (parameters, no biases) do the matrices of a multi-head attention layer
    hold, for ``d_model`` and ``h`` heads with ``d_k = d_v = d_model / h``?  One of: one head's
    ``W_Q`` (``d_model d_k``), all heads' ``W_Q`` (``d_model^2``), all ``W_Q, W_K, W_V``
    (``3 d_model^2``), the whole layer with ``W_O`` (``4 d_model^2``).  Values: ``d_model``,
    ``heads``, ``d_k``, ``what``.  Detectors: ``one_head_only``, ``forgot_w_o``,
    ``d_model_per_head`` (those the question allows, and only when they differ).
    """

    name = "attention_parameters"

    class Params(KindParams):
        pass

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        _, d, h, dk = _sizes(rng)
        ask = list(PARAMETER_ASKS)[int(rng.integers(len(PARAMETER_ASKS)))]
        value = {"one_q": d * dk, "all_q": d * d, "qkv": 3 * d * d, "layer": 4 * d * d}[ask]
        ctx = {"family": "parameters", "d_model": d, "heads": h, "d_k": dk, "ask": ask}
        codes = distinguishable_codes(
            np.asarray(float(value)), ctx, ("one_head_only", "forgot_w_o", "d_model_per_head")
        )
        count = {
            "one_q": f"$W_Q^{{(i)}}$ is $d_{{\\text{{model}}}} \\times d_k = {d} \\times {dk}$: "
            f"${d * dk}$ numbers.",
            "all_q": f"Each of the ${h}$ heads has a ${d} \\times {dk}$ matrix: "
            f"${h} \\cdot {d} \\cdot {dk} = {d * d}$ numbers ($= d_{{\\text{{model}}}}^2$, "
            "since $h d_k = d_{\\text{model}}$).",
            "qkv": f"Per head $3 \\cdot {d} \\cdot {dk}$, for ${h}$ heads "
            f"$3 \\cdot {d} \\cdot {d} = {3 * d * d}$.",
            "layer": f"$W_Q, W_K, W_V$ of all heads: $3 \\cdot {d}^2 = {3 * d * d}$; $W_O$ is "
            f"$h d_v \\times d_{{\\text{{model}}}} = {h * dk} \\times {d}$: ${d * d}$ more; "
            f"${4 * d * d}$ in all.",
        }[ask]
        steps = [
            SolutionStep(
                "The sizes",
                f"$d_k = d_v = d_{{\\text{{model}}}} / h = {d} / {h} = {dk}$.",
            ),
            SolutionStep("Count", count, value=value),
        ]
        return Generated(
            values={"d_model": d, "heads": h, "d_k": dk, "what": PARAMETER_ASKS[ask]},
            expected=np.asarray(float(value)),
            answer_form=AnswerForm(type="scalar", shape=()),
            solution=steps,
            context=ctx,
            detectors=codes,
        )
