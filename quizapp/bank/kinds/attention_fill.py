"""The kind ``attention_fill``: fill in the blanks of the attention weights or output (answer form
``partial_matrix``)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._attention import _AttentionInputs, _draw_attention, _expected, _p, attention_steps
from ._mistakes import (
    MistakeCache,
    credit_ok,
)
from ._util import (
    ImpossibleParams,
    IntRange,
    clean,
    draw,
    given_grid,
)

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
    #: Revision 2: a draw whose named mistakes give one answer is drawn again.
    revision = 2
    redraw_coinciding = 2

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
