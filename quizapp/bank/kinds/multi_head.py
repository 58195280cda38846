"""The kind ``multi_head_attention``: split ``W_Q``/``W_K``/``W_V`` into heads, attend per head,
concatenate, multiply by ``W_O``."""

from __future__ import annotations

from typing import Any, Literal, get_args

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._attention import _AttentionInputs, _p
from ._mistakes import (
    MistakeCache,
    constant_column,
    credit_ok,
    credit_ok_as_typed,
    distinguishable_codes,
)
from ._steps import multi_head_parts
from ._util import (
    IntRange,
    clean,
    draw,
    ints,
    latex_matrix,
    not_saturated,
    pick_tokens,
)

#: Multi-head mistakes named when a variant tells them apart from the right answer (the kind does
#: not redraw for them): each head's softmax down the columns, one head over all the columns.
GuardCode = Literal["softmax_axis", "single_head", "single_head_sqrt_dk"]


OPTIONAL_MULTI_HEAD: tuple[str, ...] = get_args(GuardCode)


@register_kind
class MultiHeadAttention(Kind):
    """Multi-head self-attention (Vaswani et al. 2017, section 3.2.2).

    ``W_Q``, ``W_K`` are ``(d_model, heads * d_k)`` and ``W_V`` is ``(d_model, heads * d_v)``
    (a file being written must have ``d_k = d_v = d_model / heads``, as the paper does:
    :meth:`authoring_problems`; the defaults are release 0.1's sizes, kept for its texts); head
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
    #: Revision 3: a draw whose named mistakes give one answer is drawn again.
    revision = 3
    redraw_coinciding = 3
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

    def authoring_problems(self, params: KindParams) -> list[tuple[str, str]]:
        """The sizes of the model (Vaswani et al. 2017, section 3.2.2): ``d_k = d_v = d_model /
        heads``, so ``W_Q``, ``W_K``, ``W_V`` are ``d_model x d_model`` (split into ``heads``
        blocks of ``d_k`` columns), and ``W_O`` (``heads * d_v`` rows) maps back to ``d_model``
        columns.  Checked for a file being written or synced only: the texts written before
        (``d_model: 3, heads: 2, d_k: 4``) stay readable where their variants are stored."""
        p = _p(self, params)
        set_ = p.model_fields_set

        def shown(name: str) -> str:
            value = getattr(p, name)
            return f"{name} = {value}" + ("" if name in set_ else " (the default)")

        out: list[tuple[str, str]] = []
        per_head = p.d_model // p.heads if p.d_model % p.heads == 0 else None
        fix = (
            f"write {{}}: {per_head}"
            if per_head is not None
            else f"choose a d_model that heads = {p.heads} divides (e.g. d_model: {2 * p.heads})"
        )
        for name in ("d_k", "d_v"):
            if getattr(p, name) * p.heads != p.d_model:
                out.append(
                    (
                        name,
                        f"{shown(name)} with {shown('heads')} and {shown('d_model')}: each "
                        f"head has {name} = d_model / heads (Vaswani et al. 2017, section "
                        "3.2.2), so that W_Q, W_K and W_V are d_model x d_model and split into "
                        f"heads blocks of {name} columns; {fix.format(name)}",
                    )
                )
        if p.d_out is not None and p.d_out != p.d_model:
            out.append(
                (
                    "d_out",
                    f"{shown('d_out')} with {shown('d_model')}: W_O maps the concatenated heads "
                    "back to d_model columns, so that the output can be added to X; leave d_out "
                    f"out or write d_out: {p.d_model}",
                )
            )
        return out

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
