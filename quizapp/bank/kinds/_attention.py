"""What the attention kinds share: the mistake codes of one attention computation, the worked
steps ``QK^T -> / sqrt(d) -> softmax -> · V``, the draw of ``Q``, ``K``, ``V`` that admits those
mistakes, and the parameters every kind with given inputs takes.

Conventions as in ``quizapp.linalg``: one query/key/value/token per row; softmax along rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quizapp import linalg
from quizapp.bank.types import Kind, KindParams, SolutionStep

from ._mistakes import (
    MistakeCache,
    constant_column,
    credit_ok,
    distinguishable_codes,
)
from ._util import (
    Decimals,
    IntRange,
    clean,
    draw,
    ints,
    latex_matrix,
    not_saturated,
    num,
)

ATTENTION_CODES = (
    "missing_scale",
    "scale_by_d",
    "softmax_axis",
    "missing_softmax",
    "scores_transposed",
    "missing_values",
)


def _p(kind: Kind, params: KindParams):
    return params if isinstance(params, kind.Params) else kind.Params.model_validate(params)


def _sqrt_text(d: int) -> str:
    r = np.sqrt(d)
    return num(r) if r == round(r) else f"\\sqrt{{{d}}} \\approx {r:.4f}"


def attention_steps(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray | None,
    ask: str,
    rows: list[str] | None,
    cols: list[str] | None,
    decimals: int,
) -> list[SolutionStep]:
    """The worked solution of scaled dot-product attention up to ``ask``, with every intermediate
    value: ``QK^T``, ``/ sqrt(d)``, row softmax (drawn as a heatmap), ``· V``."""
    d = K.shape[1]
    S = linalg.matmul(Q, linalg.transpose(K))
    steps = [
        SolutionStep(
            "Scores QKᵀ",
            "Entry $(i, j)$ is query $i$ (row $i$ of $Q$) times key $j$ (row $j$ of $K$): "
            f"$QK^T = {latex_matrix(S)}$.",
            value=clean(S),
            row_labels=rows,
            col_labels=cols,
        )
    ]
    if ask == "scores":
        return steps
    scaled = linalg.scaled_scores(Q, K)
    r = 4
    steps.append(
        SolutionStep(
            "Scale by √d",
            f"The key dimension is $d = {d}$, so divide by $\\sqrt{{d}} = {_sqrt_text(d)}$: "
            f"$\\frac{{QK^T}}{{\\sqrt{{d}}}} = {latex_matrix(np.round(scaled, r), 6)}$.",
            value=clean(np.round(scaled, r)),
            row_labels=rows,
            col_labels=cols,
        )
    )
    if ask == "scaled":
        return steps
    W = linalg.softmax(scaled, axis=-1)
    steps.append(
        SolutionStep(
            "Softmax of each row",
            "Each row becomes weights that are positive and sum to 1: "
            f"$\\mathrm{{softmax}}\\left(\\frac{{QK^T}}{{\\sqrt{{d}}}}\\right) = "
            f"{latex_matrix(np.round(W, decimals + 2), 6)}$.",
            value=np.round(W, decimals + 2),
            heatmap=True,
            row_labels=rows,
            col_labels=cols,
        )
    )
    if ask == "weights" or V is None:
        return steps
    out = W @ V
    steps.append(
        SolutionStep(
            "Multiply by V",
            "Each output row is the weighted average of the rows of $V$ with that row's weights: "
            f"$\\mathrm{{softmax}}\\left(\\frac{{QK^T}}{{\\sqrt{{d}}}}\\right)V = "
            f"{latex_matrix(np.round(out, decimals + 2), 6)}$.",
            value=np.round(out, decimals + 2),
            row_labels=rows,
        )
    )
    return steps


def _expected(Q: np.ndarray, K: np.ndarray, V: np.ndarray | None, ask: str) -> np.ndarray:
    if ask == "scores":
        return linalg.matmul(Q, linalg.transpose(K))
    if ask == "scaled":
        return linalg.scaled_scores(Q, K)
    out, weights = linalg.attention(Q, K, V if V is not None else np.eye(K.shape[0]))
    return weights if ask == "weights" else out


def _feature_labels(d: int) -> list[str]:
    return [f"f{j + 1}" for j in range(d)]


def _quoted(words: list[str]) -> str:
    return ", ".join(f"“{w}”" for w in words)


class _AttentionInputs(KindParams):
    decimals: Decimals = 2

    def check_weights(self, W: np.ndarray) -> bool:
        return not_saturated(W, self.decimals)


def _draw_attention(
    rng: np.random.Generator,
    n_q: int,
    n_k: int,
    d: int,
    d_v: int,
    entries: IntRange,
    value_entries: IntRange,
    ask: str,
    decimals: int,
    *,
    project: tuple[np.ndarray, tuple[int, int], IntRange] | None = None,
    required: tuple[str, ...] = ("missing_scale", "softmax_axis", "missing_softmax"),
    distinct_rows: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any], tuple[str, ...]]:
    """Draw ``Q, K, V`` meeting the attention guarantees; returns them with context and detectors.

    ``required`` mistakes must be distinguishable from the right answer (else resample); the
    others are included when they happen to be.
    """
    want = tuple(c for c in ATTENTION_CODES if not (c == "missing_values" and ask != "output"))
    want = tuple(
        c for c in want if not (ask == "scaled" and c in ("softmax_axis", "missing_softmax"))
    )
    need = tuple(c for c in required if c in want)

    def make():
        Q = ints(rng, entries, (n_q, d)).astype(float)
        K = ints(rng, entries, (n_k, d)).astype(float)
        V = ints(rng, value_entries, (n_k, d_v)).astype(float)
        if ask == "output" and constant_column(V):
            return None  # that output column would be right for any weights
        W = linalg.softmax(linalg.scaled_scores(Q, K))
        if not not_saturated(W, decimals):
            return None
        if n_k > 1 and np.any(np.ptp(W, axis=1) < 10.0**-decimals):
            return None  # uniform rows: scaling and softmax mistakes would not show
        if distinct_rows and any(len(set(np.round(r, decimals).tolist())) < len(r) for r in W):
            return None  # tied weights in a row (at the asked precision)
        ctx: dict[str, Any] = {"family": "attention", "Q": Q, "K": K, "V": V, "ask": ask}
        cache: MistakeCache = {}
        exp = _expected(Q, K, V, ask)
        codes = distinguishable_codes(exp, ctx, want, decimals, cache)
        if any(c not in codes for c in need):
            return None
        if not credit_ok(exp, ctx, codes, decimals, cache=cache):
            return None  # a named mistake would earn more than half the credit
        return Q, K, V, ctx, codes

    Q, K, V, ctx, codes = draw(rng, make, "non-saturated weights with recognisable mistakes")
    if ask in ("weights",):
        codes = codes + ("rows_dont_sum_to_one",)
    return Q, K, V, ctx, codes
