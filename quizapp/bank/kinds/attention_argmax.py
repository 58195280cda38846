"""The kind ``attention_argmax``: which token a token attends to most (answer form ``index``, no
ties)."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._attention import _p, attention_steps
from ._util import (
    IntRange,
    clean,
    draw,
    ints,
    not_saturated,
    pick_tokens,
)


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
