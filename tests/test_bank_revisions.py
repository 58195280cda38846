"""Draw revisions (``Kind.revision``, ``Kind.params_at``): a kind may give a YAML text that leaves
a param unset a better default for NEW variants, while the draws of the first revision stay
repeatable (the upgrade that stores the variants of an older database draws at it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizapp.bank import load_bank, load_exercise_source
from quizapp.bank.kinds import all_kinds, get_kind
from quizapp.bank.kinds._mistakes import credit_ok_as_typed, distinguishable_codes
from quizapp.bank.kinds.multi_head import OPTIONAL_MULTI_HEAD
from quizapp.bank.stored import freeze
from quizapp.bank.types import FIRST_REVISION
from quizapp.services import draw_variant

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
GUARDED = (EXERCISES / "05-attention" / "06-multi-head.yaml").read_text(encoding="utf-8")
GUARD_LINE = "  guard: [softmax_axis, single_head, single_head_sqrt_dk]\n"
assert GUARD_LINE in GUARDED
UNGUARDED = GUARDED.replace(GUARD_LINE, "")
NONE_GUARDED = GUARDED.replace(GUARD_LINE, "  guard: []\n")


def _exercise(text: str):
    return load_exercise_source("05-attention/98-multi-head", text)


def test_every_kind_has_a_revision_and_its_first_revision_means_the_yaml_as_written() -> None:
    bank = load_bank(EXERCISES)
    for kind in all_kinds().values():
        assert isinstance(kind.revision, int) and kind.revision >= FIRST_REVISION, kind.name
    for exercise in bank.exercises.values():
        params = exercise.params
        assert exercise.kind.params_at(params, FIRST_REVISION) == params, exercise.id


def test_new_multi_head_variants_guard_every_optional_mistake_when_the_yaml_names_none() -> None:
    unguarded = _exercise(UNGUARDED)
    assert unguarded.kind.revision == 3  # 2: these guards; 3: coinciding mistakes drawn again
    for seed in range(12):
        v = unguarded.generate(seed)
        for code in OPTIONAL_MULTI_HEAD:
            assert code in v.detectors, (seed, code)
        # Independently of the kind's bookkeeping: every optional mistake is told apart from the
        # answer and earns at most half the credit as a student would type it.
        codes = tuple(OPTIONAL_MULTI_HEAD)
        assert distinguishable_codes(v.expected, v.context, codes, 2) == codes
        assert credit_ok_as_typed(v.expected, v.context, codes, 2)
        # The same as an exercise that lists them all.
        assert freeze(v) == freeze(_exercise(GUARDED).generate(seed))


def test_the_first_revision_repeats_the_draws_of_a_yaml_that_guards_nothing() -> None:
    unguarded, none = _exercise(UNGUARDED), _exercise(NONE_GUARDED)
    differs = 0
    for seed in range(40):
        first = unguarded.generate(seed, FIRST_REVISION)
        # guard: [] at revision 2 too (revision 3 draws again where two mistakes coincide)
        assert freeze(first) == freeze(none.generate(seed, 2))
        assert freeze(none.generate(seed, FIRST_REVISION)) == freeze(first)
        if not np.array_equal(first.values["X"], unguarded.generate(seed).values["X"]):
            differs += 1
    # The new default changes what new variants draw (else this revision would be pointless).
    assert differs > 0


def test_a_yaml_that_lists_its_guard_draws_the_same_at_every_revision() -> None:
    """... up to the revision that draws again where two named mistakes coincide, and after it
    wherever none coincide (tests/test_bank_distinct.py)."""
    from quizapp.bank.distinct import coinciding_mistakes

    guarded = _exercise(GUARDED)
    for seed in range(10):
        first = guarded.generate(seed, FIRST_REVISION)
        assert freeze(first) == freeze(guarded.generate(seed, 2))
        if not coinciding_mistakes(first):
            assert freeze(first) == freeze(guarded.generate(seed))


def test_the_stored_generator_names_the_revision() -> None:
    unguarded = _exercise(UNGUARDED)
    assert draw_variant(unguarded, 7).generator.endswith("kind multi_head_attention revision 3")
    first = draw_variant(unguarded, 7, FIRST_REVISION)
    assert first.generator.endswith("revision 1")
    assert first.record["values"] == {
        **freeze(unguarded.generate(first.seed, FIRST_REVISION))["values"]
    }


def test_docs_list_every_kind_past_its_first_revision() -> None:
    import re

    doc = (EXERCISES.parent / "docs" / "live-course.md").read_text(encoding="utf-8")
    listed = {m[1]: int(m[2]) for m in re.finditer(r"^\| `(\w+)` \| (\d+) \|", doc, re.M)}
    revised = {k.name: k.revision for k in all_kinds().values() if k.revision > FIRST_REVISION}
    assert listed == revised


def _nonzero_lines(m: np.ndarray) -> bool:
    return bool(np.all(np.any(m != 0, axis=0)) and np.all(np.any(m != 0, axis=1)))


#: Each revised kind's new defaults, checked on what new variants draw, computed here from the
#: drawn values (not from the kind's own bookkeeping).
REVISED = {
    "basis_coordinates": (
        {},
        lambda v, g: (
            not np.array_equal(B := np.column_stack([v["b1"], v["b2"]]), B.T)
        ),  # a symmetric basis matrix would hide "basis as rows"
    ),
    "non_commutativity": (
        {"ask": "BA"},
        lambda v, g: (
            not np.array_equal(np.asarray(v["B"]) @ v["A"], (np.asarray(v["A"]) @ v["B"]).T)
        ),
    ),
    "composition": (
        {"mode": "associativity"},
        lambda v, g: all(
            _nonzero_lines(np.asarray(m, dtype=float))
            for m in (
                np.asarray(v["A"]) @ v["B"],
                np.asarray(v["B"]) @ v["C"],
                np.asarray(v["A"]) @ v["B"] @ v["C"],
            )
        ),
    ),
    "linear_equation": (
        {"constant": True},
        lambda v, g: float(g.expected) not in (0.0, 1.0, -1.0),
    ),
}


@pytest.mark.parametrize("name", sorted(REVISED))
def test_new_variants_of_a_revised_kind_are_never_degenerate(name: str) -> None:
    kind = get_kind(name)
    settings, well_posed = REVISED[name]
    written = kind.Params.model_validate(settings)
    assert kind.params_at(written, FIRST_REVISION) == written
    now = kind.params_at(written, kind.revision)
    assert now != written  # the revision gives the unset param its new default
    for seed in range(60):
        g = kind.generate(now, np.random.default_rng(seed))
        assert well_posed(g.values, g), (name, seed, g.values)
    # Revision 1 drew some degenerate variants (which is why the default changed).
    first = [kind.generate(written, np.random.default_rng(s)) for s in range(300)]
    assert not all(well_posed(g.values, g) for g in first), name


def test_a_rekeyed_variant_keeps_the_form_it_showed_or_says_why_it_cannot() -> None:
    """``rekeyed_form`` (a regrade's rule): the form the student answered stays when the new key
    fits it (labels and wording are display); another type, shape or given cells cannot grade
    those answers; two free text boxes (no grid shown) take the new key's shape."""
    from quizapp.bank.loader import rekeyed_form
    from quizapp.bank.types import AnswerForm

    shown = AnswerForm("matrix", (2, 2), row_labels=["q1", "q2"])
    key = AnswerForm("matrix", (2, 2), row_labels=["a", "b"])
    assert rekeyed_form(shown, key) is shown
    for other, said in [
        (AnswerForm("matrix", (2, 3)), "a 2×3 matrix"),
        (AnswerForm("vector", (2,)), "a vector of 2 entries"),
        (AnswerForm("scalar", ()), "a single number"),
    ]:
        with pytest.raises(ValueError, match=f"this version's answer is {said}, but the student"):
            rekeyed_form(shown, other)
    given = AnswerForm("partial_matrix", (1, 2), given=[["1", None]])
    assert rekeyed_form(given, AnswerForm("partial_matrix", (1, 2), given=[["7", None]])) is given
    with pytest.raises(ValueError, match="with given cells"):
        rekeyed_form(given, AnswerForm("partial_matrix", (1, 2), given=[[None, "1"]]))
    free = AnswerForm("vector", (3,), show_shape=False)
    corrected = AnswerForm("matrix", (3, 1), show_shape=False)
    assert rekeyed_form(free, corrected) is corrected
