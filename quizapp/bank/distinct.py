"""Named mistakes told apart: the pairs of a variant's named mistakes that give one answer.

A variant whose two named mistakes give the same answer cannot tell the student which slip they
made (the verdict says "either of these slips"); issue 16 asks that every named mistake be
distinguishable in every variant.  ``quizapp check`` warns of such seeds, and a kind whose
:attr:`~quizapp.bank.types.Kind.redraw_coinciding` revision is reached draws such a variant again
(:meth:`quizapp.bank.loader.Exercise.generate`).  Pure: NumPy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quizapp.bank.types import Variant


def finite(value: Any) -> bool:
    """Whether every entry of ``value`` is a finite number; True for a non-numeric value (a
    choice label: the kind's business)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return True
    return bool(np.all(np.isfinite(arr)))


def coinciding_mistakes(v: Variant) -> list[tuple[str, str]]:
    """The pairs of named mistakes of variant ``v`` that give the same answer (within its
    tolerance, on its graded cells), so a student giving it is told "either of these slips"
    (:func:`quizapp.grading.mistakes.reconcile_mistakes`), never which one they made.

    Compares the values the variant's value mistakes produce (``mistaken_value`` of each code
    in ``detectors``) and an ``expression`` exercise's authored mistakes (computed when the
    variant was drawn), for a single-answer variant and for each part of a multi-part one
    (pairs of a part are named ``part.code``).  A mistake whose value is the right answer is
    never named, so it is left out.  ``swapped_unknowns`` is compared as each of the swaps it
    names (:func:`quizapp.bank.detectors.unknown_swaps`; pairs named ``code, swapped_unknowns``); the
    observation ``rows_dont_sum_to_one`` and the generic detectors have no single value and are
    not compared.  Pure; a few small NumPy computations per code (about 15 % of a seed's check).
    """
    from quizapp.bank.detectors import matches, unknown_swaps
    from quizapp.bank.kinds._mistakes import MISTAKES, mistaken_value

    value_codes = {code for _, code in MISTAKES}
    pairs: list[tuple[str, str]] = []
    graded = [("", v.expected, v.answer_form, v.tolerance, v.detectors, v.context)]
    if v.parts:
        graded = [
            (f"{p.name}.", p.expected, p.answer_form, p.tolerance or v.tolerance, p.detectors,
             p.context or v.context)
            for p in v.parts
        ]  # fmt: skip
    for prefix, expected, form, tolerance, detectors, context in graded:
        if form.type not in ("scalar", "vector", "matrix", "partial_matrix"):
            continue
        exp = np.asarray(expected, dtype=float)
        mask = context.get("mask")
        if mask is None and form.given is not None:
            mask = [[cell is None for cell in row] for row in form.given]
        ctx = {**context, "tolerance": tolerance, "mask": mask}
        targets: list[tuple[str, Any]] = []
        for code in detectors:
            if code in value_codes:
                value = mistaken_value(code, context)
                if value is not None:
                    targets.append((code, value))
        if "authored" in detectors:
            targets += [(str(c), value) for c, value, _ in context.get("authored_mistakes") or ()]
        named = [
            (code, value)
            for code, value in targets
            if finite(value) and not (np.shape(value) == exp.shape and matches(exp, value, ctx))
        ]
        for i, (a, va) in enumerate(named):
            for b, vb in named[i + 1 :]:
                if np.shape(va) == np.shape(vb) and matches(va, vb, ctx):
                    pairs.append((prefix + a, prefix + b))
        if "swapped_unknowns" in detectors:
            _, swaps = unknown_swaps(exp, ctx)
            for a, va in named:
                if any(matches(va, swapped, ctx) for _, _, swapped in swaps):
                    pairs.append((prefix + a, prefix + "swapped_unknowns"))
    return pairs
