"""The ``softmax`` kind: softmax of a vector, row-wise softmax of a matrix, and shift invariance.

The deck: ``softmax(x)_i = exp(x_i) / sum_j exp(x_j)``; "want to pick just a few keywords for each
query".
"""

from __future__ import annotations

import numpy as np
from pydantic import Field, field_validator

from quizapp import linalg
from quizapp.bank.kinds import register_kind
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

from ._mistakes import distinguishable_codes
from ._util import Decimals, FloatRange, clean, draw, latex_matrix, not_saturated, num


@register_kind
class Softmax(Kind):
    """``softmax(x)`` of a vector (``shape: [n]``) or row-wise of a matrix (``shape: [m, n]``).

    Inputs are drawn from ``inputs`` with ``input_decimals`` decimals, then ``shift`` is added to
    every entry (e.g. ``shift: 1000`` for the shift-invariance exercise: ``exp(1000)`` overflows a
    calculator, but ``softmax(x + c) = softmax(x)``).  Guarantee: no weight rounds to 0 or 1 at
    ``decimals`` places.  Values: ``x`` (as shown, shift included), ``x_unshifted``, ``shift``.
    Expected: ``linalg.softmax(x, axis=-1)``.  Detectors: ``rows_dont_sum_to_one``,
    ``softmax_no_exp``, ``softmax_axis`` (matrix).
    """

    name = "softmax"

    class Params(KindParams):
        shape: list[int] = [4]
        inputs: FloatRange = (-2, 3)
        input_decimals: int = Field(0, ge=0, le=2)
        shift: int = Field(0, ge=-1000, le=1000)
        decimals: Decimals = 2

        @field_validator("shape")
        @classmethod
        def _shape(cls, v: list[int]) -> list[int]:
            if len(v) not in (1, 2) or any(n < 1 or n > 6 for n in v) or v[-1] < 2:
                raise ValueError(
                    "shape must be [n] (a vector) or [m, n] (a matrix) with sizes 1..6 and n >= 2"
                )
            return v

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        shape = tuple(p.shape)

        def make():
            base = np.round(rng.uniform(p.inputs[0], p.inputs[1], size=shape), p.input_decimals)
            base = base + 0.0
            if np.any(np.ptp(base, axis=-1) == 0):
                return None
            x = base + p.shift
            w = linalg.softmax(x, axis=-1)
            if not not_saturated(w, p.decimals):
                return None
            ctx = {"family": "softmax", "x": x}
            want = ("softmax_axis",) if len(shape) == 2 and shape[0] > 1 else ()
            codes = distinguishable_codes(w, ctx, want, p.decimals)
            if codes != want:
                return None
            codes += distinguishable_codes(w, ctx, ("softmax_no_exp",), p.decimals)
            return base, x, w, ctx, codes

        base, x, w, ctx, codes = draw(rng, make, "softmax weights that do not round to 0 or 1")
        expected = w
        mx = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - mx)
        total = np.sum(e, axis=-1, keepdims=True)
        steps = []
        if p.shift:
            steps.append(
                SolutionStep(
                    "Shift invariance",
                    f"Adding the same constant to every entry does not change the softmax: "
                    f"$\\frac{{e^{{x_i + c}}}}{{\\sum_j e^{{x_j + c}}}} = \\frac{{e^c e^{{x_i}}}}"
                    f"{{e^c \\sum_j e^{{x_j}}}}$. So subtract ${num(p.shift)}$ from every entry "
                    f"first (never compute $e^{{{num(np.max(x))}}}$).",
                    value=clean(base),
                )
            )
        steps.extend(
            [
                SolutionStep(
                    "Subtract the maximum" + (" of each row" if len(shape) == 2 else ""),
                    "For numerical safety use $x_i - \\max_j x_j$ (the same softmax): "
                    f"${latex_matrix(x - mx)}$.",
                    value=clean(np.round(x - mx, 10)),
                ),
                SolutionStep(
                    "Exponentiate",
                    f"$e^{{x_i - \\max}} = {latex_matrix(e)}$.",
                    value=np.round(e, 4),
                ),
                SolutionStep(
                    "Divide by the sum" + (" of each row" if len(shape) == 2 else ""),
                    "Sum"
                    + (
                        f" $= {num(total.ravel()[0])}$"
                        if len(shape) == 1
                        else f"s per row $= {latex_matrix(total.ravel())}$"
                    )
                    + f"; softmax $= {latex_matrix(np.round(expected, p.decimals + 2))}$. "
                    + ("The entries sum to 1." if len(shape) == 1 else "Each row sums to 1."),
                    value=np.round(expected, p.decimals + 2),
                    heatmap=len(shape) == 2,
                ),
            ]
        )
        form = AnswerForm(type="vector" if len(shape) == 1 else "matrix", shape=shape)
        return Generated(
            values={"x": clean(x), "x_unshifted": clean(base), "shift": p.shift},
            expected=expected,
            answer_form=form,
            solution=steps,
            context=ctx,
            detectors=("rows_dont_sum_to_one",) + codes,
        )
