"""The course-content changes of session 10 (06-multi-head's sizes, 15-transpose's graded
prediction) leave every variant drawn from the previous texts as the student saw it: a regrade
keys such a variant with the new version (``Exercise.rekey``) without changing its numbers or
its expected answer, or refuses it ("not regraded") when the new version's parts are not the
variant's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizapp.bank import BankError
from quizapp.bank.loader import Exercise, load_exercise_file, load_exercise_source

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _current(exercise_id: str) -> Exercise:
    exercise, errors = load_exercise_file(REPO / "exercises" / f"{exercise_id}.yaml")
    assert exercise is not None and not errors, errors
    return exercise


def test_an_old_multi_head_variant_keeps_its_numbers_and_key_under_the_new_sizes() -> None:
    old = load_exercise_source(
        "05-attention/06-multi-head", (HERE / "golden" / "06-multi-head-d-model-3.yaml").read_text()
    )
    new = _current("05-attention/06-multi-head")
    for seed in range(5):
        shown = old.generate(seed)
        keyed = new.rekey(shown, old.spec.kind)
        assert keyed.values.keys() == shown.values.keys()
        for name, value in shown.values.items():
            assert np.array_equal(np.asarray(keyed.values[name]), np.asarray(value)), name
        assert np.array_equal(np.asarray(keyed.expected), np.asarray(shown.expected))
        assert keyed.prompt == shown.prompt


def test_an_old_single_answer_transpose_variant_is_not_regraded_by_the_parts_version() -> None:
    eid = "03-transpose-and-products/15-transpose-is-not-the-inverse"
    old = load_exercise_source(
        eid, (HERE / "golden" / "15-transpose-is-not-the-inverse-single.yaml").read_text()
    )
    new = _current(eid)
    assert not old.generate(0).parts and new.generate(0).parts
    with pytest.raises(BankError):
        new.rekey(old.generate(3), old.spec.kind)
