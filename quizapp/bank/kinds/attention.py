"""Kinds for retrieval scores and scaled dot-product attention (the second half of the deck).

- ``retrieval_scores``: ``QK^T`` (or ``QK^T / sqrt(d)``) with named queries ("dog", "cat") and
  keywords ("food blog", "pet tips").
- ``retrieval_rank``: which keyword ranks first for a query (answer form ``index``).
- ``attention``: ``softmax(QK^T / sqrt(d)) V`` (or only the scaled scores, or the weights).
- ``self_attention``: from token embeddings ``X`` and ``W_Q``, ``W_K``, ``W_V``.
- ``attention_argmax``: which token a token attends to most (``index``, no ties).
- ``multi_head_attention``: split ``W_Q``/``W_K``/``W_V`` into heads, attend per head, concatenate,
  multiply by ``W_O``.
- ``attention_fill``: fill in the blanks of the attention weights or output (``partial_matrix``).

Conventions as in ``quizapp.linalg``: one query/key/value/token per row; softmax along rows.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._mistakes import (
    MistakeCache,
    constant_column,
    credit_ok,
    credit_ok_as_typed,
    distinguishable_codes,
)
from ._steps import attention_parts, multi_head_parts, self_attention_parts
from ._util import (
    KEYWORD_WORDS,
    QUERY_WORDS,
    Decimals,
    ImpossibleParams,
    IntRange,
    clean,
    draw,
    given_grid,
    ints,
    latex_matrix,
    markdown_table,
    not_saturated,
    num,
    pick_tokens,
    pick_words,
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


@register_kind
class RetrievalScores(Kind):
    """Retrieval scores ``QK^T`` (``ask: scores``) or ``QK^T / sqrt(d)`` (``ask: scaled``) with named
    queries and keywords, as in the deck.

    ``show_scores: true`` (with ``ask: scaled``) gives ``QK^T`` in the prompt, so only the scaling
    is asked.  Values: ``Q``, ``K``, ``S`` (``QK^T``), ``Q_table``, ``K_table``, ``queries``,
    ``keywords``, ``d``, ``sqrt_d``.  Expected ``(n_q, n_k)`` with row/column labels.  Detectors:
    ``scores_transposed`` and, when scaled, ``missing_scale``, ``scale_by_d``.
    """

    name = "retrieval_scores"

    class Params(_AttentionInputs):
        queries: int = Field(2, ge=1, le=6)
        keywords: int = Field(3, ge=1, le=6)
        d: int = Field(4, ge=2, le=9)
        entries: IntRange = (0, 3)
        ask: Literal["scores", "scaled"] = "scores"
        show_scores: bool = False

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        want = ("scores_transposed",) + (
            ("missing_scale", "scale_by_d") if p.ask == "scaled" else ()
        )

        def make():
            Q = ints(rng, p.entries, (p.queries, p.d)).astype(float)
            K = ints(rng, p.entries, (p.keywords, p.d)).astype(float)
            if np.any(np.all(Q == 0, axis=1)) or np.any(np.all(K == 0, axis=1)):
                return None
            ctx: dict[str, Any] = {"family": "attention", "Q": Q, "K": K, "ask": p.ask}
            exp = _expected(Q, K, None, p.ask)
            codes = distinguishable_codes(exp, ctx, want, p.decimals)
            if codes != want:
                return None
            return Q, K, ctx, codes

        Q, K, ctx, codes = draw(rng, make, "scores that are not symmetric")
        qs = pick_words(rng, QUERY_WORDS, p.queries)
        ks = pick_words(rng, KEYWORD_WORDS, p.keywords)
        expected = _expected(Q, K, None, p.ask)
        feats = _feature_labels(p.d)
        S = Q @ K.T
        return Generated(
            values={
                "Q": clean(Q),
                "K": clean(K),
                "S": clean(S),
                "Q_table": markdown_table(Q, qs, feats),
                "K_table": markdown_table(K, ks, feats),
                "S_table": markdown_table(S, qs, ks),
                "queries": _quoted(qs),
                "keywords": _quoted(ks),
                "d": p.d,
                "sqrt_d": num(np.sqrt(p.d)) if np.sqrt(p.d) == round(np.sqrt(p.d)) else f"√{p.d}",
            },
            expected=expected,
            answer_form=AnswerForm(
                type="matrix", shape=expected.shape, row_labels=qs, col_labels=ks
            ),
            solution=attention_steps(Q, K, None, p.ask, qs, ks, p.decimals),
            context={**ctx, "row_labels": qs, "col_labels": ks},
            detectors=codes,
        )


@register_kind
class RetrievalRank(Kind):
    """Which keyword ranks first (highest score in ``QK^T``) for one named query?

    Answer form ``index`` (1-based position in the keyword list).  Guarantee: the top score beats
    the runner-up by at least ``margin`` (integer scores: no ties).  Values: ``Q_table``,
    ``K_table``, ``Q``, ``K``, ``query``, ``keyword_list`` (numbered Markdown list).
    Expected: the 1-based index.  A wrong pick that is the best keyword of another query, or the
    lowest score, is named (context ``index_mistakes``).
    """

    name = "retrieval_rank"

    class Params(KindParams):
        queries: int = Field(3, ge=1, le=6)
        keywords: int = Field(4, ge=2, le=6)
        d: int = Field(3, ge=2, le=9)
        entries: IntRange = (0, 3)
        margin: float = Field(1.0, gt=0, le=100)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)

        def make():
            Q = ints(rng, p.entries, (p.queries, p.d)).astype(float)
            K = ints(rng, p.entries, (p.keywords, p.d)).astype(float)
            if np.any(np.all(K == 0, axis=1)) or np.any(np.all(Q == 0, axis=1)):
                return None  # an all-zero keyword or query scores 0 with everything
            qi = int(rng.integers(p.queries))
            row = (Q @ K.T)[qi]
            top2 = np.sort(row)[-2:]
            if top2[1] - top2[0] < p.margin:
                return None
            return Q, K, qi

        Q, K, qi = draw(rng, make, f"a top score that beats the runner-up by {p.margin}")
        qs = pick_words(rng, QUERY_WORDS, p.queries)
        ks = pick_words(rng, KEYWORD_WORDS, p.keywords)
        S = linalg.matmul(Q, linalg.transpose(K))
        best = int(np.argmax(S[qi]))
        mistakes: dict[int, tuple[str, str]] = {}
        low = int(np.argmin(S[qi]))
        if low != best:
            mistakes[low + 1] = (
                "lowest_score",
                f"“{ks[low]}” has the LOWEST score for “{qs[qi]}”; the question asks for the highest.",
            )
        for other in range(p.queries):
            j = int(np.argmax(S[other]))
            if other != qi and j != best and (j + 1) not in mistakes:
                mistakes[j + 1] = (
                    "wrong_row",
                    f"“{ks[j]}” ranks first for “{qs[other]}”, another query: read the row of “{qs[qi]}”.",
                )
        feats = _feature_labels(p.d)
        steps = attention_steps(Q, K, None, "scores", qs, ks, 2)
        steps.append(
            SolutionStep(
                f"Row “{qs[qi]}”",
                "The scores of “"
                + qs[qi]
                + "” are "
                + ", ".join(f"{ks[j]}: {num(S[qi, j])}" for j in range(p.keywords))
                + f"; the highest is “{ks[best]}” (number {best + 1}).",
                value=clean(S[qi]),
            )
        )
        return Generated(
            values={
                "Q": clean(Q),
                "K": clean(K),
                "Q_table": markdown_table(Q, qs, feats),
                "K_table": markdown_table(K, ks, feats),
                "query": qs[qi],
                "keyword_list": "\n".join(f"{j + 1}. {k}" for j, k in enumerate(ks)),
            },
            expected=best + 1,
            answer_form=AnswerForm(type="index", shape=None, choices=ks, col_labels=ks),
            solution=steps,
            context={
                "family": "index",
                "index_mistakes": mistakes,
                "count": p.keywords,
                "query_row": qi,
                "Q": Q,
                "K": K,
            },
        )


@register_kind
class Attention(Kind):
    """Scaled dot-product attention ``softmax(QK^T / sqrt(d)) V`` (Vaswani et al. 2017, eq. 1).

    ``ask``: ``scaled`` (``QK^T/sqrt(d)``), ``weights`` (row softmax) or ``output``.  ``d_v``
    defaults to the number of keys so that "forgot ·V" gives an answer of the same shape (and is
    recognised).  Guarantees: no weight rounds to 0 or 1 at ``decimals`` places, and every named
    mistake gives a different answer.  Values: ``Q``, ``K``, ``V``, ``d``, ``queries``,
    ``keywords``.  Detectors: ``missing_scale``, ``scale_by_d``, ``softmax_axis``,
    ``missing_softmax``, ``scores_transposed``, ``missing_values``, ``rows_dont_sum_to_one``.
    ``steps: true`` asks for each matrix of the pipeline as a part (``S``, ``Z``, ``W``, ``O``
    up to ``ask``), each later one graded with follow-through (``_steps.attention_parts``).
    """

    name = "attention"

    class Params(_AttentionInputs):
        queries: int = Field(2, ge=1, le=5)
        keys: int = Field(3, ge=2, le=5)
        d: int = Field(4, ge=2, le=9)
        d_v: int | None = Field(None, ge=1, le=5)
        entries: IntRange = (-1, 2)
        value_entries: IntRange = (-2, 4)
        ask: Literal["scaled", "weights", "output"] = "output"
        labels: bool = True
        #: Ask for each intermediate matrix as a part of its own (S, Z, W, O up to ``ask``),
        #: graded with follow-through (``_steps.attention_parts``); the draw is the same.
        steps: bool = False

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        d_v = p.d_v or p.keys
        Q, K, V, ctx, codes = _draw_attention(
            rng, p.queries, p.keys, p.d, d_v, p.entries, p.value_entries, p.ask, p.decimals
        )
        qs = pick_words(rng, QUERY_WORDS, p.queries) if p.labels else None
        ks = pick_words(rng, KEYWORD_WORDS, p.keys) if p.labels else None
        expected = _expected(Q, K, V, p.ask)
        generated = Generated(
            values={
                "Q": clean(Q),
                "K": clean(K),
                "V": clean(V),
                "d": p.d,
                "queries": _quoted(qs) if qs else "",
                "keywords": _quoted(ks) if ks else "",
            },
            expected=expected,
            answer_form=AnswerForm(
                type="matrix",
                shape=expected.shape,
                row_labels=qs,
                col_labels=ks if p.ask != "output" else None,
            ),
            solution=attention_steps(Q, K, V, p.ask, qs, ks, p.decimals),
            context=ctx,
            detectors=codes,
        )
        if p.steps:
            return attention_parts(generated, Q, K, V, p.ask, generated.solution, qs, ks)
        return generated


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


@register_kind
class SelfAttention(Kind):
    """Self-attention from token embeddings: ``Q = XW_Q``, ``K = XW_K``, ``V = XW_V``, then attention.

    ``ask``: ``weights`` or ``output``.  Values: ``X``, ``W_Q``, ``W_K``, ``W_V``, ``tokens``,
    ``X_table``, ``d_k``.  Context has the projected ``Q``, ``K``, ``V``.  Detectors as ``attention``.
    ``steps: true`` asks for ``Q``, ``K``, ``V``, then ``Z``, ``W`` (and ``O``) as parts graded
    with follow-through (``_steps.self_attention_parts``).
    """

    name = "self_attention"

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


@register_kind
class AttentionArgmax(Kind):
    """Which token does a given token attend to most?  (Answer form ``index``, 1-based.)

    Given ``Q`` and ``K`` for a short sentence's tokens, the weights are row ``i`` of
    ``softmax(QK^T / sqrt(d))``.  Guarantee (no ties): the top weight beats the runner-up by at least
    ``margin`` (default 0.05, well above the asked precision), and no weight rounds to 0 or 1 at
    2 decimals.  Values: ``Q``, ``K``, ``tokens``,
    ``token`` (the asking token), ``token_list``, ``d``.  A wrong pick that is the token attending
    most TO it (the column instead of the row), or its least attended token, is named.
    """

    name = "attention_argmax"

    class Params(KindParams):
        tokens: int = Field(4, ge=2, le=5)
        d: int = Field(4, ge=2, le=9)
        entries: IntRange = (-1, 2)
        margin: float = Field(0.05, gt=0, lt=1)

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        n = p.tokens

        def make():
            Q = ints(rng, p.entries, (n, p.d)).astype(float)
            K = ints(rng, p.entries, (n, p.d)).astype(float)
            i = int(rng.integers(n))
            W = linalg.softmax(linalg.scaled_scores(Q, K))
            top2 = np.sort(W[i])[-2:]
            if top2[1] - top2[0] < p.margin or not not_saturated(W, 2):
                return None
            return Q, K, i, W

        Q, K, i, W = draw(rng, make, f"a top weight that beats the runner-up by {p.margin}")
        toks = pick_tokens(rng, n)
        best = int(np.argmax(W[i]))
        mistakes: dict[int, tuple[str, str]] = {}
        col = int(np.argmax(W[:, i]))
        if col != best:
            mistakes[col + 1] = (
                "softmax_axis",
                f"“{toks[col]}” is the token that attends most TO “{toks[i]}” (its column); the "
                f"question asks what “{toks[i]}” attends to: its row.",
            )
        low = int(np.argmin(W[i]))
        if low != best and (low + 1) not in mistakes:
            mistakes[low + 1] = (
                "lowest_score",
                f"“{toks[low]}” gets the SMALLEST weight from “{toks[i]}”.",
            )
        steps = attention_steps(Q, K, None, "weights", toks, toks, 2)
        steps.append(
            SolutionStep(
                f"Row “{toks[i]}”",
                ", ".join(f"{toks[j]}: {W[i, j]:.3f}" for j in range(n))
                + f". The largest weight goes to “{toks[best]}” (number {best + 1}).",
                value=np.round(W[i], 4),
            )
        )
        return Generated(
            values={
                "Q": clean(Q),
                "K": clean(K),
                "d": p.d,
                "tokens": ", ".join(f"“{t}”" for t in toks),
                "token": toks[i],
                "token_list": "\n".join(f"{j + 1}. {t}" for j, t in enumerate(toks)),
            },
            expected=best + 1,
            answer_form=AnswerForm(type="index", shape=None, choices=toks, col_labels=toks),
            solution=steps,
            context={"family": "index", "index_mistakes": mistakes, "count": n},
        )


#: Multi-head mistakes named when a variant tells them apart from the right answer (the kind does
#: not redraw for them): each head's softmax down the columns, one head over all the columns.
GuardCode = Literal["softmax_axis", "single_head", "single_head_sqrt_dk"]
OPTIONAL_MULTI_HEAD: tuple[str, ...] = get_args(GuardCode)


@register_kind
class MultiHeadAttention(Kind):
    """Multi-head self-attention (Vaswani et al. 2017, section 3.2.2).

    ``W_Q``, ``W_K`` are ``(d_model, heads * d_k)`` and ``W_V`` is ``(d_model, heads * d_v)``; head
    ``i`` uses column block ``i`` (the split).  Each head computes attention with its own ``d_k``,
    the heads are concatenated side by side and multiplied by ``W_O`` ``(heads * d_v, d_out)``.
    ``ask``: ``concat`` (the concatenated heads) or ``output``.  Values: ``X``, ``W_Q``, ``W_K``,
    ``W_V``, ``W_O``, ``heads``, ``d_k``, ``d_v``, ``tokens``.  Detectors: ``missing_output_projection``,
    ``missing_scale``, ``heads_swapped`` (every variant tells them apart), and
    ``OPTIONAL_MULTI_HEAD`` (``softmax_axis``, ``single_head``, ``single_head_sqrt_dk``): those
    listed in the ``guard`` param on every variant (redrawn until it tells them apart and they
    earn at most half the credit as typed), the others when the variant happens to.
    ``steps: true`` asks for each head's output ``H1``..., their concatenation ``C`` (and
    ``O = C W_O``) as parts graded with follow-through (``_steps.multi_head_parts``).
    """

    name = "multi_head_attention"
    #: Revision 2: an exercise that leaves ``guard`` unset guards every optional mistake (with
    #: 2 or more heads); revision 1 (release 0.1) guarded none.
    revision = 2
    revision_defaults = {
        2: lambda p: {"guard": list(OPTIONAL_MULTI_HEAD)} if p.heads >= 2 else {},
    }

    class Params(_AttentionInputs):
        tokens: int = Field(2, ge=2, le=4)
        d_model: int = Field(3, ge=2, le=6)
        heads: int = Field(2, ge=1, le=3)
        d_k: int = Field(4, ge=1, le=4)
        d_v: int = Field(1, ge=1, le=3)
        d_out: int | None = Field(None, ge=1, le=6)
        entries: IntRange = (-1, 1)
        ask: Literal["concat", "output"] = "output"
        #: Optional mistakes every variant must also tell apart and punish (at most half the
        #: credit, as typed to ``decimals``): variants are redrawn until they do.  Unset, it
        #: means all of them with 2 or more heads (draw revision 2, see ``params_at``); ``[]``
        #: guards none (what revision 1 did).
        guard: list[GuardCode] = Field(default_factory=list)
        #: Redraw until ``W_O`` has full rank and no zero column, so that every output column
        #: depends on the heads (a zero column is 0 for any attention; rank 1 makes the columns
        #: multiples of each other).  False (the default) keeps the older exercises' draws.
        w_o_full_rank: bool = False
        #: Ask for each head's output, their concatenation (and the product with W_O) as parts,
        #: graded with follow-through (``_steps.multi_head_parts``); the draw is the same.
        steps: bool = False

        @model_validator(mode="after")
        def _sizes(self) -> MultiHeadAttention.Params:
            if self.heads == 1 and self.ask == "concat":
                raise ValueError("ask: concat needs at least 2 heads")
            return self

        @field_validator("guard")
        @classmethod
        def _guard_heads(cls, guard: list[str], info: ValidationInfo) -> list[str]:
            if guard and info.data.get("heads") == 1:  # reported at guard's own line
                raise ValueError("the multi-head mistakes need at least 2 heads (heads: 1)")
            return guard

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        h, n = p.heads, p.tokens
        d_out = p.d_out or h * p.d_v
        want = ("missing_scale",) + (("heads_swapped",) if h > 1 else ())
        if p.ask == "output" and d_out == h * p.d_v:
            want += ("missing_output_projection",)
        guard = tuple(dict.fromkeys(p.guard))

        def make():
            X = ints(rng, p.entries, (n, p.d_model)).astype(float)
            WQ = ints(rng, p.entries, (p.d_model, h * p.d_k)).astype(float)
            WK = ints(rng, p.entries, (p.d_model, h * p.d_k)).astype(float)
            WV = ints(rng, p.entries, (p.d_model, h * p.d_v)).astype(float)
            WO = ints(rng, p.entries, (h * p.d_v, d_out)).astype(float)
            wq = [WQ[:, i * p.d_k : (i + 1) * p.d_k] for i in range(h)]
            wk = [WK[:, i * p.d_k : (i + 1) * p.d_k] for i in range(h)]
            wv = [WV[:, i * p.d_v : (i + 1) * p.d_v] for i in range(h)]
            if constant_column(X @ WV):
                return None  # that head's output column would be right for any weights
            if p.w_o_full_rank and (
                np.linalg.matrix_rank(WO) < min(WO.shape) or np.any(np.all(WO == 0, axis=0))
            ):
                return None
            out, heads, weights = linalg.multi_head_attention(X, wq, wk, wv, WO)
            if any(not not_saturated(w, p.decimals) for w in weights):
                return None
            if any(np.any(np.ptp(w, axis=1) < 10.0**-p.decimals) for w in weights):
                return None
            ctx: dict[str, Any] = {
                "family": "multi_head",
                "X": X,
                "W_Q": wq,
                "W_K": wk,
                "W_V": wv,
                "W_O": WO,
                "ask": p.ask,
            }
            exp = out if p.ask == "output" else np.concatenate(heads, axis=1)
            cache: MistakeCache = {}
            codes = distinguishable_codes(exp, ctx, want, p.decimals, cache)
            if codes != want:
                return None
            if not credit_ok(exp, ctx, codes, p.decimals, cache=cache):
                return None  # a named mistake would earn more than half the credit
            if guard:
                if distinguishable_codes(exp, ctx, guard, p.decimals) != guard:
                    return None
                if not credit_ok_as_typed(exp, ctx, guard, p.decimals):
                    return None
                codes = codes + guard
            return X, WQ, WK, WV, WO, ctx, codes, out, heads, weights

        X, WQ, WK, WV, WO, ctx, codes, out, heads, weights = draw(
            rng, make, "non-saturated heads with recognisable mistakes"
        )
        # Named too when this variant tells them apart, without redrawing for them (the draws,
        # and so every existing seed's variant, stay as they were).
        # Only those that earn at most half the credit: a named mistake must not score well.
        exp = out if p.ask == "output" else np.concatenate(heads, axis=1)
        optional = tuple(c for c in OPTIONAL_MULTI_HEAD if c not in codes)
        extra = distinguishable_codes(exp, ctx, optional, p.decimals)
        codes = codes + tuple(c for c in extra if credit_ok_as_typed(exp, ctx, (c,), p.decimals))
        toks = pick_tokens(rng, n)
        concat = np.concatenate(heads, axis=1)
        expected = out if p.ask == "output" else concat
        steps = [
            SolutionStep(
                "Split into heads",
                f"Head $i$ uses columns ${{(i-1)d_k + 1}}$ to ${{i\\,d_k}}$ of $W_Q$ and $W_K$ "
                f"($d_k = {p.d_k}$) and the matching ${p.d_v}$ column(s) of $W_V$.",
            )
        ]
        for i in range(h):
            Qi, Ki, Vi = X @ ctx["W_Q"][i], X @ ctx["W_K"][i], X @ ctx["W_V"][i]
            steps.append(
                SolutionStep(
                    f"Head {i + 1}",
                    f"$Q_{i + 1} = {latex_matrix(Qi)}$, $K_{i + 1} = {latex_matrix(Ki)}$, "
                    f"$V_{i + 1} = {latex_matrix(Vi)}$; weights "
                    f"$\\mathrm{{softmax}}(Q_{i + 1}K_{i + 1}^T/\\sqrt{{{p.d_k}}}) = "
                    f"{latex_matrix(np.round(weights[i], 4))}$; output "
                    f"$= {latex_matrix(np.round(heads[i], 4))}$.",
                    value=np.round(weights[i], 4),
                    heatmap=True,
                    row_labels=toks,
                    col_labels=toks,
                )
            )
        steps.append(
            SolutionStep(
                "Concatenate",
                f"Side by side: ${latex_matrix(np.round(concat, 4))}$.",
                value=np.round(concat, 4),
                row_labels=toks,
            )
        )
        if p.ask == "output":
            steps.append(
                SolutionStep(
                    "Multiply by W_O",
                    f"$\\mathrm{{concat}}(\\ldots)W_O = {latex_matrix(np.round(out, 4))}$.",
                    value=np.round(out, 4),
                    row_labels=toks,
                )
            )
        generated = Generated(
            values={
                "X": clean(X),
                "W_Q": clean(WQ),
                "W_K": clean(WK),
                "W_V": clean(WV),
                "W_O": clean(WO),
                "heads": h,
                "d_k": p.d_k,
                "d_v": p.d_v,
                "tokens": ", ".join(f"“{t}”" for t in toks),
            },
            expected=expected,
            answer_form=AnswerForm(type="matrix", shape=expected.shape, row_labels=toks),
            solution=steps,
            context=ctx,
            detectors=codes,
        )
        if p.steps:
            return multi_head_parts(generated, ctx, heads, concat, out, p.ask, steps, toks)
        return generated


#: ``attention_fill``: draws of Q, K, V tried before giving up when none admits a mask.
MATRIX_REDRAWS = 20


@register_kind
class AttentionFill(Kind):
    """Fill in the blanks of the attention weights or output (answer form ``partial_matrix``).

    Some cells are given (rounded to ``decimals``), ``blanks`` cells are left for the student; only
    the blanks are graded.  ``target``: ``weights`` or ``output``.  The given grid is in
    ``answer_form.given``; the context holds ``mask`` (True = blank, graded).  Values as
    ``attention`` plus ``given`` (the partly filled matrix as LaTeX, blanks shown as ``?``).
    Detectors as ``attention``, compared on the blanks only.
    """

    name = "attention_fill"

    class Params(_AttentionInputs):
        queries: int = Field(3, ge=2, le=5)
        keys: int = Field(3, ge=2, le=5)
        d: int = Field(4, ge=2, le=9)
        entries: IntRange = (-1, 2)
        value_entries: IntRange = (-2, 4)
        target: Literal["weights", "output"] = "weights"
        blanks: int = Field(3, ge=1, le=10)

        @model_validator(mode="after")
        def _some_given(self) -> AttentionFill.Params:
            cells = self.queries * self.keys
            if self.blanks >= cells:
                raise ValueError(
                    f"blanks ({self.blanks}) must be fewer than the {cells} cells "
                    f"({self.queries} queries x {self.keys} keys), so some are given"
                )
            return self

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = _p(self, params)
        cells = p.queries * p.keys
        # Some draws of Q, K, V admit no mask at all (forgetting the scale shows in too few
        # cells): then Q, K, V are drawn again.  A draw that admits a mask is kept as it always
        # was (the first draw's masks are tried as before), so existing seeds draw the same.
        for redraw in range(MATRIX_REDRAWS):
            Q, K, V, ctx, codes = _draw_attention(
                rng,
                p.queries,
                p.keys,
                p.d,
                p.keys,
                p.entries,
                p.value_entries,
                p.target,
                p.decimals,
                required=(),
                distinct_rows=True,
            )
            expected = _expected(Q, K, V, p.target)
            cache: MistakeCache = {}  # no mistake reads the mask: one cache serves every mask tried

            # (this draw's matrices bound as defaults: the closure is called in this iteration)
            def pick_mask(expected=expected, ctx=ctx, codes=codes, cache=cache):
                idx = rng.choice(cells, size=p.blanks, replace=False)
                mask = np.zeros(cells, dtype=bool)
                mask[idx] = True
                mask = mask.reshape(expected.shape)
                ctx_m = {**ctx, "mask": mask}
                if p.target == "weights" and np.any(mask.sum(axis=1) == 1):
                    return None  # a lone blank in a row would just be 1 minus the given weights
                kept = _masked_codes(expected, ctx_m, codes, mask, p.decimals, cache)
                if "missing_scale" not in kept:
                    return None
                if not credit_ok(expected, ctx_m, kept, p.decimals, mask, cache):
                    return None  # a named mistake would fill more than half the blanks right
                return mask, kept

            try:
                mask, codes = draw(rng, pick_mask, "blanks where forgetting the scale shows")
                break
            except ImpossibleParams:
                if redraw == MATRIX_REDRAWS - 1:
                    raise
        given = given_grid(expected, mask, p.decimals)
        shown = " \\\\ ".join(" & ".join("?" if c is None else c for c in row) for row in given)
        # Rows of weights sum to 1: a blank worked out from that is graded with follow-through
        # (quizapp.bank.answers), against the given cells as shown.
        ctx = {**ctx, "mask": mask, "rows_sum_to_one": p.target == "weights"}
        steps = attention_steps(Q, K, V, p.target, None, None, p.decimals)
        steps.append(
            SolutionStep(
                "The blanks",
                ", ".join(
                    f"row {i + 1}, column {j + 1}: {expected[i, j]:.{p.decimals}f}"
                    for i, j in zip(*np.nonzero(mask), strict=True)
                )
                + ".",
            )
        )
        return Generated(
            values={
                "Q": clean(Q),
                "K": clean(K),
                "V": clean(V),
                "d": p.d,
                "given": r"\begin{pmatrix} " + shown + r" \end{pmatrix}",
                "blanks": p.blanks,
            },
            expected=expected,
            answer_form=AnswerForm(type="partial_matrix", shape=expected.shape, given=given),
            solution=steps,
            context=ctx,
            detectors=codes,
        )


def _masked_codes(
    expected: np.ndarray,
    ctx: dict[str, Any],
    codes: tuple[str, ...],
    mask: np.ndarray,
    decimals: int,
    cache: MistakeCache | None = None,
) -> tuple[str, ...]:
    from ._mistakes import mistaken_value
    from ._util import distinct

    kept = []
    for c in codes:
        if c == "rows_dont_sum_to_one":
            kept.append(c)
            continue
        v = mistaken_value(c, ctx, cache)
        if (
            v is not None
            and v.shape == expected.shape
            and distinct(expected[mask], v[mask], decimals)
        ):
            kept.append(c)
    return tuple(kept)
