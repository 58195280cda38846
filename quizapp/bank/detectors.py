"""Kind-specific mistake detectors, registered with the grading engine.

Each detector has the grading engine's signature ``fn(answer, expected, context) -> Mistake | None``
(``answer`` and ``expected`` float arrays) and is run on wrong answers when its code is in the
variant's ``detectors``.  A detector recomputes the value its mistake would produce from the
variant's ``context`` (the kinds put ``Q``, ``K``, ``V``, ``A``, ``B``... there; see
``quizapp/bank/kinds/_mistakes.py``) and names the mistake when the answer matches that value
within the exercise's tolerance (``context["tolerance"]``, set by :func:`quizapp.bank.answers.grade_answer`;
compared with :func:`quizapp.grading.cells_close`).  A mistake whose value equals the right answer
is never named.  With ``context["mask"]`` (partly filled matrices) only the graded cells count.

Codes: the value mistakes of ``_mistakes.MISTAKES`` (``missing_scale``, ``scale_by_d``,
``softmax_axis``, ``missing_softmax``, ``scores_transposed``, ``missing_values``,
``missing_output_projection``, ``heads_swapped``, ``single_head``, ``softmax_no_exp``, ``wrong_order``,
``elementwise_product``, ``missing_determinant``, ``inverse_sign``, ``basis_as_rows``,
``standard_coordinates``, ``images_as_rows``, ``basis_ignored``, ``inverted_division``,
``moved_without_sign``, ``linearity_scalars``, ...), two predicates (``rows_dont_sum_to_one`` and
``swapped_unknowns``) and ``authored``, which names the mistakes an expression exercise's author
wrote in its YAML.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from quizapp.bank.kinds._mistakes import MISTAKES, mistake_message, mistaken_value
from quizapp.bank.kinds._util import num
from quizapp.grading import Mistake, Tolerance, cells_close, register_detector

Detector = Callable[[np.ndarray, np.ndarray, Mapping[str, Any]], "Mistake | list[Mistake] | None"]

#: Every code this module registers, with its detector (also used directly by the tests).
DETECTORS: dict[str, Detector] = {}


def _register(code: str, *, explains: bool = True) -> Callable[[Detector], Detector]:
    def deco(fn: Detector) -> Detector:
        DETECTORS[code] = fn
        return register_detector(code, explains=explains)(fn)

    return deco


def _tolerance(ctx: Mapping[str, Any]) -> Tolerance:
    tol = ctx.get("tolerance")
    return tol if isinstance(tol, Tolerance) else Tolerance()


def _aligned(answer: Any, target: np.ndarray) -> np.ndarray | None:
    """``answer`` reshaped like ``target`` when it is the same vector typed as a row or column."""
    a = np.asarray(answer, dtype=float)
    if a.shape == target.shape:
        return a
    if a.size == target.size and (a.ndim <= 1 or target.ndim <= 1 or 1 in a.shape):
        if (a.ndim <= 1 or 1 in a.shape) and (target.ndim <= 1 or 1 in target.shape):
            return a.reshape(target.shape)
    return None


def matches(answer: Any, target: Any, ctx: Mapping[str, Any]) -> bool:
    """True when ``answer`` equals ``target`` cell by cell within the variant's tolerance.

    With ``ctx["mask"]`` (same shape) only the masked (graded) cells are compared.
    """
    t = np.asarray(target, dtype=float)
    a = _aligned(answer, t)
    if a is None:
        return False
    mask = ctx.get("mask")
    graded = (
        np.asarray(mask, dtype=bool)
        if mask is not None and np.shape(mask) == t.shape
        else np.ones(t.shape, dtype=bool)
    )
    if not np.all(np.isfinite(a[graded])):
        return False
    a = np.where(graded, a, t)  # ungraded (given, possibly blank) cells do not count
    close = np.asarray(cells_close(a, t, _tolerance(ctx)), dtype=bool)
    return bool(np.all(close[graded]))


def _value_detector(code: str) -> Detector:
    def detect(
        answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
    ) -> Mistake | None:
        target = mistaken_value(code, context)
        if target is None:
            return None
        exp = np.asarray(expected, dtype=float)
        if target.shape == exp.shape and matches(exp, target, context):
            return None  # the mistake gives the right answer here: nothing to name
        if matches(answer, target, context):
            return Mistake(code, mistake_message(code, context))
        return None

    detect.__name__ = f"detect_{code}"
    detect.__doc__ = f"Names ``{code}`` when the answer equals the value that mistake produces."
    return detect


for _code in sorted({code for _, code in MISTAKES}):
    _register(_code)(_value_detector(_code))


@_register("authored")
def authored_mistakes(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> list[Mistake] | None:
    """The named mistakes an ``expression`` exercise's author wrote (``mistakes:`` in the YAML):
    ``context["authored_mistakes"]`` holds ``(code, value, message)`` per mistake, computed when
    the variant was drawn.  Names every one whose value the answer equals (within tolerance),
    with the author's code and message, in the author's order (two that give the same answer
    are then told as "either", see :func:`quizapp.grading.mistakes.reconcile_mistakes`); None
    when none does."""
    found = [
        Mistake(str(code), str(message))
        for code, value, message in context.get("authored_mistakes") or ()
        if matches(answer, value, context)
    ]
    return found or None


# An observation, not an explanation: it does not reproduce the answer (see
# quizapp.grading.mistakes.reconcile_mistakes).
@_register("rows_dont_sum_to_one", explains=False)
def rows_dont_sum_to_one(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> Mistake | None:
    """Softmax weights: each row (a vector: all entries) must sum to 1.

    Fires when the answer has the expected shape and some row's sum is off by more than the
    rounding the tolerance allows (``decdig``/``sigfig`` digits per entry, else 2 %).
    """
    exp = np.asarray(expected, dtype=float)
    a = _aligned(answer, exp)
    if a is None:
        return None
    mask = context.get("mask")
    if mask is not None and np.shape(mask) == exp.shape:
        a = np.where(np.asarray(mask, dtype=bool), a, exp)  # given cells are the exact values
    if not np.all(np.isfinite(a)):
        return None
    rows = a.reshape(1, -1) if a.ndim == 1 else a
    tol = _tolerance(context)
    if tol.mode in ("decdig", "sigfig") and tol.digits:
        slack = rows.shape[1] * 0.5 * 10.0 ** -(tol.digits - (1 if tol.mode == "sigfig" else 0))
    else:
        slack = 0.0
    slack = max(slack, 0.02)
    sums = rows.sum(axis=1)
    bad = np.nonzero(np.abs(sums - 1.0) > slack)[0]
    if bad.size == 0:
        return None
    i = int(bad[0])
    # The sum as the student adds it up: to the decimals the answer is asked in (the given cells
    # are shown rounded to them), else to 3 significant figures.
    total = f"{sums[i]:.{tol.digits}f}" if tol.mode == "decdig" and tol.digits else num(sums[i], 3)
    if a.ndim == 1:
        return Mistake(
            "rows_dont_sum_to_one",
            f"Your entries sum to {total}, not 1: softmax weights always add up to 1.",
        )
    return Mistake(
        "rows_dont_sum_to_one",
        f"Your rows don't sum to 1 (row {i + 1} sums to {total}): each row of softmax "
        "weights adds up to 1.",
    )


def unknown_swaps(
    expected: Any, context: Mapping[str, Any]
) -> tuple[bool, list[tuple[int, int, np.ndarray]]]:
    """The answers ``swapped_unknowns`` names for ``expected``: ``(by_columns, swaps)``, each swap
    ``(i, j, swapped)``, the answer with two unknowns exchanged, those that differ from it.  With
    ``columns`` in the context and a matrix ``[A | y]``, two of its first ``columns`` columns
    (``by_columns``); else two entries of the flattened answer (a vector: a matrix answer is
    never compared with them)."""
    exp = np.asarray(expected, dtype=float)
    by_columns = bool(exp.ndim == 2 and context.get("columns"))
    swaps = []
    if by_columns:
        k = int(context["columns"])
        for i in range(k):
            for j in range(i + 1, k):
                swapped = exp.copy()
                swapped[:, [i, j]] = swapped[:, [j, i]]
                swaps.append((i, j, swapped))
    else:
        flat = exp.ravel()
        for i in range(flat.size):
            for j in range(i + 1, flat.size):
                swapped = flat.copy()
                swapped[[i, j]] = swapped[[j, i]]
                swaps.append((i, j, swapped))
    target = exp if by_columns else exp.ravel()
    return by_columns, [(i, j, sw) for i, j, sw in swaps if not matches(target, sw, context)]


@_register("swapped_unknowns")
def swapped_unknowns(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> Mistake | None:
    """Two unknowns swapped: a solution vector with two entries exchanged, or (``columns`` in the
    context, for ``[A | y]``) a coefficient matrix with two of its first ``columns`` columns
    exchanged (:func:`unknown_swaps`).  Names the unknowns from ``context["unknowns"]``."""
    names = list(context.get("unknowns") or [])
    by_columns, swaps = unknown_swaps(expected, context)
    for i, j, swapped in swaps:
        if not matches(answer, swapped, context):
            continue
        # an unknown without a name in the context is called by its position
        unnamed = "unknown" if by_columns else "entry"
        ni, nj = (names[k] if k < len(names) else f"{unnamed} {k + 1}" for k in (i, j))
        if by_columns:
            return Mistake(
                "swapped_unknowns",
                f"You swapped the columns of {ni} and {nj}: column j of A holds the "
                "coefficients of the j-th unknown.",
            )
        return Mistake(
            "swapped_unknowns",
            f"You swapped {ni} and {nj}: your value of {ni} belongs to {nj} and the other "
            "way round.",
        )
    return None
