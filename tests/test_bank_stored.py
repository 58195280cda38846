"""A stored variant (``quizapp.bank.stored``) reads back exactly: same values, same types, same
bits, and every answer grades the same against the thawed variant as against the drawn one."""

from __future__ import annotations

import json
import math
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp.bank import grade_answer, load_bank
from quizapp.bank.stored import decode, encode, freeze, thaw, thaw_part_forms

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")


def same(a: Any, b: Any, where: str = "variant") -> None:
    """Assert ``a`` and ``b`` are equal in type and value, floats bit for bit (NaN == NaN)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert a.tobytes() == b.tobytes(), where
    elif isinstance(a, float | np.floating):
        assert (math.isnan(a) and math.isnan(b)) or a == b, where
        assert math.copysign(1, a) == math.copysign(1, b), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif is_dataclass(a):
        for f in fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    else:
        assert a == b, where


def through_json(record: dict[str, Any]) -> dict[str, Any]:
    # allow_nan=False: the document must be valid JSON (PostgreSQL refuses NaN).
    return json.loads(json.dumps(record, allow_nan=False))


@pytest.mark.parametrize("exercise_id", sorted(BANK.exercises))
def test_every_bundled_exercise_round_trips_exactly(exercise_id: str) -> None:
    exercise = BANK.exercises[exercise_id]
    for seed in range(12):
        drawn = exercise.generate(seed)
        stored = thaw(through_json(freeze(drawn)))
        same(drawn, stored)


@pytest.mark.parametrize("exercise_id", sorted(BANK.exercises))
def test_answers_grade_the_same_against_the_stored_variant(exercise_id: str) -> None:
    from quizapp.bank import expected_answer_text

    exercise = BANK.exercises[exercise_id]
    for seed in range(4):
        drawn = exercise.generate(seed)
        stored = thaw(through_json(freeze(drawn)))
        right = expected_answer_text(drawn)
        assert expected_answer_text(stored) == right
        for answer in (right, "0", "[[1, 2], [3, 4]]", "b", "nonsense"):
            assert grade_answer(stored, answer).to_dict() == grade_answer(drawn, answer).to_dict()


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**62), 2**62)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.builds(np.float64, st.floats())
    | st.builds(np.int64, st.integers(-(2**62), 2**62)),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        | st.dictionaries(st.integers(0, 9), inner, max_size=3)
    ),
    max_leaves=12,
)
arrays = st.sampled_from(["f8", "i8", "bool", "f4", "i4"]).flatmap(
    lambda dt: st.lists(st.integers(-50, 50), min_size=0, max_size=12).map(
        lambda xs: np.array(xs, dtype=dt)
    )
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(values, arrays, st.lists(arrays, max_size=3)))
def test_any_storable_value_round_trips(value: Any) -> None:
    same(value, decode(json.loads(json.dumps(encode(value), allow_nan=False))), "value")


def test_matrices_keep_their_shape_and_special_values() -> None:
    a = np.array([[1.5, np.nan], [np.inf, -0.0]])
    b = decode(through_json({"x": encode(a)})["x"])
    same(a, b)
    same(np.zeros((0, 3)), decode(encode(np.zeros((0, 3)))))


@pytest.mark.parametrize("bad", [object(), np.array(["a"], dtype=object), {1, 2}, len])
def test_values_that_cannot_be_stored_exactly_are_refused(bad: Any) -> None:
    with pytest.raises(TypeError, match="cannot store"):
        encode({"x": bad})


MULTI_PART = sorted(i for i in BANK.exercises if BANK.exercises[i].generate(0).parts)


@pytest.mark.parametrize("exercise_id", MULTI_PART)
def test_the_part_forms_are_those_of_the_whole_thawed_variant(exercise_id: str) -> None:
    """The page decodes a multi-part variant's parts alone (``thaw_part_forms``): each part's
    name, points, uses and answer form, as the whole record thaws them."""
    for seed in (0, 1, 2):
        record = json.loads(json.dumps(freeze(BANK.exercises[exercise_id].generate(seed))))
        whole = thaw(record).parts
        forms = thaw_part_forms(record)
        assert [f.name for f in forms] == [p.name for p in whole]
        for form, part in zip(forms, whole, strict=True):
            same(form.answer_form, part.answer_form, f"{exercise_id} part {part.name}")
            assert (form.points, form.uses) == (part.points, part.uses)


def test_a_variant_without_parts_has_no_part_forms() -> None:
    single = next(i for i in sorted(BANK.exercises) if not BANK.exercises[i].generate(0).parts)
    assert thaw_part_forms(freeze(BANK.exercises[single].generate(0))) == []


def test_a_record_of_another_format_is_refused() -> None:
    record = freeze(BANK.exercises[sorted(BANK.exercises)[0]].generate(1))
    with pytest.raises(ValueError, match="format"):
        thaw({**record, "format": 99})
    with pytest.raises(ValueError, match="format"):
        thaw_part_forms({**record, "format": 99})
    with pytest.raises(ValueError, match="malformed"):
        thaw({k: v for k, v in record.items() if k != "expected"})


def test_a_nan_keeps_its_sign_and_payload() -> None:
    import struct

    for bits in ("7ff8000000000000", "fff8000000000000", "7ff8000000000001"):
        value = struct.unpack(">d", bytes.fromhex(bits))[0]
        back = decode(json.loads(json.dumps(encode(value), allow_nan=False)))
        assert struct.pack(">d", back).hex() == bits
        array = decode(through_json({"x": encode(np.array([value, 1.0]))})["x"])
        assert struct.pack(">d", float(array[0])).hex() == bits
