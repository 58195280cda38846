"""The kind ``attention``: ``softmax(QK^T / sqrt(d)) V`` (or only the scaled scores, or the
weights), from given ``Q``, ``K``, ``V``.

Conventions as in ``quizapp.linalg``: one query/key/value per row; softmax along rows.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams

from ._attention import _AttentionInputs, _draw_attention, _expected, _p, _quoted, attention_steps
from ._steps import attention_parts
from ._util import (
    KEYWORD_WORDS,
    QUERY_WORDS,
    IntRange,
    clean,
    pick_words,
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
