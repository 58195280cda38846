"""Kinds for retrieval scores (the second half of the deck).

- ``retrieval_scores``: ``QK^T`` (or ``QK^T / sqrt(d)``) with named queries ("dog", "cat") and
  keywords ("food blog", "pet tips").
- ``retrieval_rank``: which keyword ranks first for a query (answer form ``index``).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._attention import _AttentionInputs, _expected, _feature_labels, _p, _quoted, attention_steps
from ._mistakes import (
    distinguishable_codes,
)
from ._util import (
    KEYWORD_WORDS,
    QUERY_WORDS,
    IntRange,
    clean,
    draw,
    ints,
    markdown_table,
    num,
    pick_words,
)


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
