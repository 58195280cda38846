"""The kind ``self_attention``: attention from token embeddings ``X`` and ``W_Q``, ``W_K``,
``W_V``."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._attention import ATTENTION_CODES, _AttentionInputs, _p, attention_steps
from ._mistakes import (
    MistakeCache,
    constant_column,
    credit_ok,
    distinguishable_codes,
)
from ._steps import self_attention_parts
from ._util import (
    IntRange,
    clean,
    draw,
    ints,
    latex_matrix,
    markdown_table,
    not_saturated,
    pick_tokens,
)


@register_kind
class SelfAttention(Kind):
    """Self-attention from token embeddings: ``Q = XW_Q``, ``K = XW_K``, ``V = XW_V``, then attention.

    ``ask``: ``weights`` or ``output``.  Values: ``X``, ``W_Q``, ``W_K``, ``W_V``, ``tokens``,
    ``X_table``, ``d_k``.  Context has the projected ``Q``, ``K``, ``V``.  Detectors as ``attention``.
    ``steps: true`` asks for ``Q``, ``K``, ``V``, then ``Z``, ``W`` (and ``O``) as parts graded
    with follow-through (``_steps.self_attention_parts``).
    """

    name = "self_attention"
    #: Revision 2: a draw whose named mistakes give one answer is drawn again.
    revision = 2
    redraw_coinciding = 2

    class Params(_AttentionInputs):
        tokens: int = Field(3, ge=2, le=5)
        d_model: int = Field(3, ge=2, le=5)
        d_k: int = Field(4, ge=1, le=6)
        d_v: int | None = Field(None, ge=1, le=5)
        embedding_entries: IntRange = (-1, 2)
        weight_entries: IntRange = (-1, 1)
        ask: Literal["weights", "output"] = "output"
        #: Ask for each intermediate matrix as a part (Q, K, V, Z, W, O up to ``ask``), graded
        #: with follow-through (``_steps.self_attention_parts``); the draw is the same.
        steps: bool = False

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        n = p.tokens
        d_v = p.d_v or n
        want = tuple(
            c for c in ATTENTION_CODES if not (c == "missing_values" and p.ask != "output")
        )

        def make():
            X = ints(rng, p.embedding_entries, (n, p.d_model)).astype(float)
            WQ = ints(rng, p.weight_entries, (p.d_model, p.d_k)).astype(float)
            WK = ints(rng, p.weight_entries, (p.d_model, p.d_k)).astype(float)
            WV = ints(rng, p.weight_entries, (p.d_model, d_v)).astype(float)
            if len({tuple(r) for r in X.tolist()}) < n:
                return None
            Q, K, V = X @ WQ, X @ WK, X @ WV
            if p.ask == "output" and constant_column(V):
                return None  # that output column would be right for any weights
            out, W = linalg.attention(Q, K, V)  # = self_attention(X, WQ, WK, WV), same bits
            if not not_saturated(W, p.decimals) or np.any(np.ptp(W, axis=1) < 10.0**-p.decimals):
                return None
            ctx: dict[str, Any] = {"family": "attention", "Q": Q, "K": K, "V": V, "ask": p.ask}
            exp = out if p.ask == "output" else W
            cache: MistakeCache = {}
            codes = distinguishable_codes(exp, ctx, want, p.decimals, cache)
            if any(c not in codes for c in ("missing_scale", "softmax_axis", "missing_softmax")):
                return None
            if not credit_ok(exp, ctx, codes, p.decimals, cache=cache):
                return None  # a named mistake would earn more than half the credit
            return X, WQ, WK, WV, ctx, codes

        X, WQ, WK, WV, ctx, codes = draw(rng, make, "non-saturated self-attention weights")
        if p.ask == "weights":
            codes = codes + ("rows_dont_sum_to_one",)
        toks = pick_tokens(rng, n)
        out, W = linalg.self_attention(X, WQ, WK, WV)
        expected = out if p.ask == "output" else W
        Q, K, V = ctx["Q"], ctx["K"], ctx["V"]
        # The weights need no V (and the prompt of such an exercise gives no W_V).
        projected = f"$Q = XW_Q = {latex_matrix(Q)}$, $K = XW_K = {latex_matrix(K)}$" + (
            f", $V = XW_V = {latex_matrix(V)}$." if p.ask == "output" else "."
        )
        steps = [
            SolutionStep(
                "Project the embeddings",
                projected,
                value=clean(Q),
                row_labels=toks,
            ),
            *attention_steps(Q, K, V, p.ask, toks, toks, p.decimals),
        ]
        generated = Generated(
            values={
                "X": clean(X),
                "W_Q": clean(WQ),
                "W_K": clean(WK),
                "W_V": clean(WV),
                "tokens": ", ".join(f"“{t}”" for t in toks),
                "X_table": markdown_table(X, toks, [f"e{j + 1}" for j in range(p.d_model)]),
                "d_k": p.d_k,
            },
            expected=expected,
            answer_form=AnswerForm(
                type="matrix",
                shape=expected.shape,
                row_labels=toks,
                col_labels=toks if p.ask == "weights" else None,
            ),
            solution=steps,
            context={**ctx, "X": X, "W_Q": WQ, "W_K": WK, "W_V": WV},
            detectors=codes,
        )
        if p.steps:
            return self_attention_parts(generated, X, WQ, WK, WV, p.ask, steps[1:], toks)
        return generated
