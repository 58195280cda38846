"""Every named mistake told apart (issue 16): a kind whose ``redraw_coinciding`` revision is
reached draws again a variant in which two named mistakes give one answer; a draw whose mistakes
were told apart keeps its numbers, and the revision before repeats the old draws exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizapp.bank import distinct, load_bank
from quizapp.bank.distinct import coinciding_mistakes
from quizapp.bank.loader import REDRAWS
from quizapp.bank.stored import freeze

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(EXERCISES)
BA = "03-transpose-and-products/09-ba-given-ab"
SEEDS = range(120)

REDRAWING = sorted(
    eid for eid, ex in BANK.exercises.items() if ex.kind.redraw_coinciding is not None
)


def test_the_kinds_that_had_coinciding_mistakes_redraw_them() -> None:
    kinds = {BANK.exercises[eid].kind.name for eid in REDRAWING}
    assert {
        "non_commutativity",
        "multi_head_attention",
        "self_attention",
        "expression",
        "basis_coordinates",
        "attention_fill",
        "causal_attention",
        "linear_equation",
    } <= kinds
    for eid in REDRAWING:
        kind = BANK.exercises[eid].kind
        assert kind.redraw_coinciding is not None and kind.redraw_coinciding <= kind.revision


@pytest.mark.parametrize("exercise_id", REDRAWING)
def test_new_variants_tell_every_named_mistake_apart_and_keep_the_draws_that_did(
    exercise_id: str,
) -> None:
    ex = BANK.exercises[exercise_id]
    before = ex.kind.redraw_coinciding - 1
    for seed in SEEDS:
        new, old = ex.generate(seed), ex.generate(seed, before)
        assert coinciding_mistakes(new) == [], (exercise_id, seed)
        if not coinciding_mistakes(old):
            assert freeze(new) == freeze(old), (exercise_id, seed)  # nothing to tell apart


def test_ba_given_ab_never_shows_a_symmetric_ab() -> None:
    """Computed from the drawn numbers, not by the kind: asked for BA, the wrong order gives AB
    and the transposition (AB)^T; when AB is symmetric the two slips are one answer."""
    ex = BANK.exercises[BA]
    redrawn = 0
    for seed in range(300):
        values = ex.generate(seed).values
        a, b = np.asarray(values["A"], float), np.asarray(values["B"], float)
        assert not np.allclose(a @ b, (a @ b).T), seed
        old = ex.generate(seed, ex.kind.redraw_coinciding - 1).values
        oa, ob = np.asarray(old["A"], float), np.asarray(old["B"], float)
        redrawn += bool(np.allclose(oa @ ob, (oa @ ob).T))
    assert redrawn > 0  # the revision before did show some: the redraw is what removed them


def test_when_every_draw_coincides_the_first_of_the_fewest_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ex = BANK.exercises[BA]
    calls: list[int] = []

    def always(v):  # every draw has a pair: the redraws run out
        calls.append(v.seed)
        return [("wrong_order", "ab_transposed")]

    monkeypatch.setattr(distinct, "coinciding_mistakes", always)
    v = ex.generate(5)
    assert len(calls) == REDRAWS + 1
    # The first draw is kept (none had fewer pairs): what the previous revision draws.
    assert freeze(v) == freeze(ex.generate(5, ex.kind.redraw_coinciding - 1))


def test_a_swap_of_the_unknowns_is_compared_too() -> None:
    """Seed 20 of 01-basis-coordinates drew (before the redraw) b1 = (3, 3), b2 = (1, 0) and
    v = (1, 0): the coordinates are (0, 1), and v's standard coordinates (1, 0) are also the
    coordinates swapped, so one answer was both slips."""
    from quizapp.bank.answers import grade_answer

    ex = BANK.exercises["02-matrices-and-maps/01-basis-coordinates"]
    old = ex.generate(20, ex.kind.redraw_coinciding - 1)
    b = np.column_stack([old.values["b1"], old.values["b2"]]).astype(float)
    v = np.asarray(old.values["v"], float)
    c = np.linalg.solve(b, v)
    assert np.allclose(v, c[::-1])  # the standard coordinates are the swapped coordinates
    assert ("standard_coordinates", "swapped_unknowns") in coinciding_mistakes(old)
    verdict = grade_answer(old, " ".join(map(str, v)))
    assert [m.ambiguous for m in verdict.mistakes] == [True, True]  # "either of these slips"
    new = ex.generate(20)
    b = np.column_stack([new.values["b1"], new.values["b2"]]).astype(float)
    v = np.asarray(new.values["v"], float)
    assert not np.allclose(v, np.linalg.solve(b, v)[::-1])
    assert coinciding_mistakes(new) == []
