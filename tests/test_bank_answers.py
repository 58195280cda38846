"""grade_answer for every answer form, and expected_answer_text grading as correct."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from test_bank_kinds_helpers import exercise_specs, make_variant, text, tolerance_from_yaml

from quizapp.bank.answers import (
    _as_asked,
    denoised,
    expected_answer_text,
    grade_answer,
    parse_points,
    shown_answer_text,
)
from quizapp.bank.kinds._util import num_apart
from quizapp.grading import Tolerance

SPECS = exercise_specs()

DECK_LINE = {"kind": "line_points", "params": {"fixed": [5, 1, 15]}}
DECK_TWO = {"kind": "line_points", "params": {"fixed": [5, 1, 15], "count": 2}}


@pytest.mark.parametrize("ex_id,data", SPECS, ids=[s[0] for s in SPECS])
def test_expected_answer_text_is_correct(ex_id: str, data: dict) -> None:
    for seed in range(100):
        v = make_variant(data, seed, ex_id)
        verdict = grade_answer(v, expected_answer_text(v))
        assert verdict.status == "correct", (seed, verdict.message)
        assert verdict.score == 1.0
        assert verdict.mistakes == []


# ------------------------------------------------------------------ point on a line


@pytest.mark.parametrize(
    "answer",
    ["(1, 10)", "1, 10", "x = 2, y = 5", "[3; 0]", "(0.5, 12.5)", "(1/3, 40/3)", " (2,5) \n"],
)
def test_any_point_on_the_decks_line_is_correct(answer: str) -> None:
    v = make_variant(DECK_LINE, 0)
    verdict = grade_answer(v, answer)
    assert verdict.status == "correct", verdict.message
    assert verdict.score == 1.0


def test_a_point_off_the_line_is_incorrect_and_says_why() -> None:
    v = make_variant(DECK_LINE, 0)
    verdict = grade_answer(v, "(1, 2)")
    assert verdict.status == "incorrect"
    assert "5x + y = 15" in verdict.message and "7" in verdict.message


def test_a_point_just_off_the_line_shows_the_two_sides_apart() -> None:
    """An exact exercise refuses a point a hair off the line; its message writes the left side
    with enough digits to differ from the right side (not "-54, not -54")."""
    data = dict(SPECS)["01-linear-systems/04-two-solutions"]
    v = make_variant(data, 1, "01-linear-systems/04-two-solutions")
    v = dataclasses.replace(v, tolerance=tolerance_from_yaml({"rtol": 1e-9, "atol": 1e-12}))
    A = np.asarray(v.context["coefficients"], float)
    c = np.asarray(v.context["rhs"], float)
    x0 = 1 / 3  # a point on the line with x = 1/3, given with x rounded to 4 decimals
    y0 = (c[0] - A[0, 0] * x0) / A[0, 1]
    lhs = A[0, 0] * 0.3333 + A[0, 1] * y0
    verdict = grade_answer(v, f"(0.3333, {float(y0)!r}), (0, {float(c[0] / A[0, 1])!r})")
    assert verdict.status != "correct"
    m = re.search(r"the left side is (\S+), not (\S+?)\.", verdict.message)
    assert m is not None, verdict.message
    assert m.group(1) != m.group(2)
    assert float(m.group(1)) == pytest.approx(lhs, rel=1e-4)
    assert float(m.group(2)) == c[0]


def test_num_apart_adds_digits_until_the_numbers_differ() -> None:
    assert num_apart(-53.9998, -54.0) == ("-53.9998", "-54")
    assert num_apart(14.0, 15.0) == ("14", "15")
    assert num_apart(1 / 3, 0.3334) == ("0.3333", "0.3334")
    assert num_apart(2.0, 2.0) == ("2", "2")


def test_swapped_point_is_named() -> None:
    v = make_variant(DECK_LINE, 0)
    verdict = grade_answer(v, "(10, 1)")  # (1, 10) is on the line
    assert verdict.status == "incorrect"
    assert "swapped_unknowns" in verdict.mistake_codes


def test_tolerance_applies_to_the_predicate() -> None:
    v = make_variant(DECK_LINE, 0)
    assert grade_answer(v, "(0.333, 13.333)").status == "correct"  # x = 1/3 rounded
    assert grade_answer(v, "(0.333, 13.5)").status == "incorrect"


def test_two_distinct_points() -> None:
    v = make_variant(DECK_TWO, 0)
    assert grade_answer(v, "(1, 10)\n(2, 5)").status == "correct"
    assert grade_answer(v, "(1, 10), (3, 0)").status == "correct"
    assert grade_answer(v, [["1", "10"], ["2", "5"]]).status == "correct"
    same = grade_answer(v, "(1, 10)\n(1, 10)")
    assert same.status == "partial" and same.score == 0.5
    assert "same_point" in same.mistake_codes
    one_bad = grade_answer(v, "(1, 10)\n(2, 6)")
    assert one_bad.status == "partial" and one_bad.score == 0.5
    assert one_bad.cells == [[True, True], [False, False]]


@pytest.mark.parametrize(
    "answer,words",
    [
        ("", "empty"),
        ("abc", ""),
        ("(1, 10, 3)", "2 coordinates"),
        ("(1, 10) hello", "brackets"),
        ("(1, )", "empty"),
    ],
)
def test_unreadable_points_are_invalid(answer: str, words: str) -> None:
    v = make_variant(DECK_LINE, 0)
    verdict = grade_answer(v, answer)
    assert verdict.status == "invalid"
    assert words in verdict.message
    assert not verdict.used_attempt


def test_one_point_when_two_are_asked_is_invalid() -> None:
    v = make_variant(DECK_TWO, 0)
    verdict = grade_answer(v, "(1, 10)")
    assert verdict.status == "invalid" and "2 points" in verdict.message


def test_parse_points_shapes() -> None:
    assert parse_points("(1, 2)\n(3, 4)", 2, 2).tolist() == [[1, 2], [3, 4]]
    assert parse_points([["1", "2", "3", "4"]], 2, 2).tolist() == [[1, 2], [3, 4]]


# ------------------------------------------------------------------ choice and index


def test_choice_by_letter_or_number() -> None:
    v = make_variant({"kind": "linearity_choice", "params": {}}, 4)
    right = int(v.expected)
    letter = "abcd"[right]
    for answer in (letter, letter.upper(), f"({letter})", f"{letter})", str(right + 1)):
        assert grade_answer(v, answer).status == "correct", answer
    wrong = (right + 1) % 4
    verdict = grade_answer(v, "abcd"[wrong])
    assert verdict.status == "incorrect" and verdict.score == 0
    assert verdict.mistake_codes == ["not_linear"]
    assert "not linear" in verdict.message


@pytest.mark.parametrize("answer", ["e", "5", "0", "", "maybe", "a b"])
def test_choice_out_of_range_is_invalid(answer: str) -> None:
    v = make_variant({"kind": "linearity_choice", "params": {}}, 4)
    assert grade_answer(v, answer).status == "invalid"


def test_index_by_number_or_label() -> None:
    v = make_variant({"kind": "retrieval_rank", "params": {}}, 2)
    k = int(v.expected)
    assert grade_answer(v, str(k)).status == "correct"
    assert grade_answer(v, v.answer_form.col_labels[k - 1]).status == "correct"
    assert grade_answer(v, [[str(k)]]).status == "correct"
    assert grade_answer(v, "0").status == "invalid"
    assert grade_answer(v, str(len(v.answer_form.col_labels) + 1)).status == "invalid"
    wrong = 1 if k != 1 else 2
    assert grade_answer(v, str(wrong)).status == "incorrect"


def test_index_names_reading_the_column() -> None:
    for seed in range(200):
        v = make_variant({"kind": "attention_argmax", "params": {}}, seed)
        picks = {
            k: code
            for k, (code, _) in v.context["index_mistakes"].items()
            if code == "softmax_axis"
        }
        if picks:
            k = next(iter(picks))
            verdict = grade_answer(v, str(k))
            assert verdict.status == "incorrect"
            assert verdict.mistake_codes == ["softmax_axis"]
            return
    pytest.fail("no variant where the column's argmax differs from the row's")


# ------------------------------------------------------------------ partly filled matrices


def fill_variant(seed: int = 0):
    return make_variant(
        {"kind": "attention_fill", "params": {"blanks": 3}, "tolerance": {"decdig": 2}}, seed
    )


def test_partial_matrix_grades_only_the_blanks() -> None:
    v = fill_variant()
    e = np.asarray(v.expected)
    mask = v.context["mask"]
    blanks_only = [
        [f"{e[i, j]:.2f}" if mask[i, j] else "" for j in range(e.shape[1])]
        for i in range(e.shape[0])
    ]
    verdict = grade_answer(v, blanks_only)
    assert verdict.status == "correct", verdict.message
    typed_over = [
        [f"{e[i, j]:.2f}" if mask[i, j] else "999" for j in range(e.shape[1])]
        for i in range(e.shape[0])
    ]
    assert grade_answer(v, typed_over).status == "correct"
    assert grade_answer(v, text(e)).status == "correct"


def test_partial_matrix_one_wrong_blank() -> None:
    v = fill_variant(1)
    e = np.asarray(v.expected)
    mask = v.context["mask"]
    cells = [
        [f"{e[i, j]:.2f}" if mask[i, j] else "" for j in range(e.shape[1])]
        for i in range(e.shape[0])
    ]
    i, j = map(int, np.argwhere(mask)[0])
    cells[i][j] = f"{e[i, j] + 0.2:.2f}"
    verdict = grade_answer(v, cells)
    assert verdict.status == "partial"
    assert verdict.score == pytest.approx(2 / 3)


def test_partial_matrix_blank_left_empty_is_invalid() -> None:
    v = fill_variant(2)
    e = np.asarray(v.expected)
    cells = [["" for _ in range(e.shape[1])] for _ in range(e.shape[0])]
    assert grade_answer(v, cells).status == "invalid"


# ------------------------------------------------------------------ plain forms delegate


def test_matrix_form_uses_tolerance_and_partial_credit() -> None:
    v = make_variant({"kind": "matrix_product", "params": {}}, 0)
    e = np.asarray(v.expected, dtype=float)
    assert grade_answer(v, text(e)).status == "correct"
    bad = e.copy()
    bad[0, 0] += 1
    verdict = grade_answer(v, text(bad))
    assert verdict.status == "partial" and verdict.score == pytest.approx(0.75)
    assert grade_answer(v, "[[1, 2], [3").status == "invalid"


def test_vector_typed_as_column() -> None:
    v = make_variant(
        {"kind": "linear_system", "params": {"fixed": {"A": [[5, 1], [3, 2]], "y": [15, 16]}}}, 0
    )
    assert grade_answer(v, "[2; 5]").status == "correct"
    assert grade_answer(v, "2 5").status == "correct"
    assert grade_answer(v, [["2"], ["5"]]).status == "correct"


# ------------------------------------------------------------------ the answer as shown


@pytest.mark.parametrize("ex_id,data", SPECS, ids=[s[0] for s in SPECS])
def test_shown_answer_text_is_correct_and_without_float_noise(ex_id: str, data: dict) -> None:
    """What the finished page and the instructor's variant view show "as typed" grades correct
    with full score, and is the full-precision text only when its rounding would not."""
    for seed in range(30):
        v = make_variant(data, seed, ex_id)
        full, shown = expected_answer_text(v), shown_answer_text(v)
        verdict = grade_answer(v, shown)
        assert verdict.status == "correct" and verdict.score == 1.0, (seed, verdict.message)
        asked = _as_asked(full, v.tolerance)
        assert shown in {asked, denoised(full), full}, seed
        if shown == full and full != denoised(full):  # neither shorter text grades correct
            for text_ in {asked, denoised(full)} - {None, full}:
                assert (
                    grade_answer(v, text_).status != "correct" or grade_answer(v, text_).score < 1
                )
        if asked is not None and shown != asked:  # the text as asked did not grade correct
            assert grade_answer(v, asked).status != "correct" or asked == full
        for number in re.findall(r"\d+\.\d+", shown if shown != full else ""):
            assert len(number.replace(".", "").lstrip("0")) <= 12, (seed, number)


def test_a_solve_of_an_exact_system_is_shown_as_the_exact_answer() -> None:
    """``np.linalg.solve`` gives ``[2.9999999999999973, 3.999999999999996]`` for (3, 4) and
    ``8.9e-16`` for 0: the page shows ``[3, 4]`` and ``[0, 0]`` (the tester's report)."""
    ex_id, data = next((i, d) for i, d in SPECS if d.get("kind") == "linear_system")
    v = make_variant(data, 0, ex_id)
    noisy = dataclasses.replace(v, expected=np.array([2.9999999999999973, 3.999999999999996]))
    assert expected_answer_text(noisy) == "[2.9999999999999973, 3.999999999999996]"
    assert shown_answer_text(noisy) == "[3, 4]"
    zero = dataclasses.replace(v, expected=np.array([8.881784197001252e-16, -1.3e-15]))
    assert shown_answer_text(zero) == "[0, 0]"
    assert denoised("x = 0.1 + 1.23456789012345678e-5") == "x = 0.1 + 1.23456789012e-5"


def test_the_shown_answer_is_written_as_the_exercise_asks() -> None:
    """An exercise that asks for 2 decimals (``decdig: 2``) shows ``0.18``, not
    ``0.178370154728``; one that asks for 3 significant digits shows ``1230``."""
    ex_id, data = next((i, d) for i, d in SPECS if d.get("kind") == "linear_system")
    v = make_variant(data, 0, ex_id)
    weights = dataclasses.replace(
        v,
        expected=np.array([0.178370154728, 0.821629845272]),
        tolerance=Tolerance(mode="decdig", digits=2),
    )
    assert shown_answer_text(weights) == "[0.18, 0.82]"
    big = dataclasses.replace(
        v, expected=np.array([1234.5, -0.0012345]), tolerance=Tolerance(mode="sigfig", digits=3)
    )
    assert shown_answer_text(big) == "[1230, -0.00123]"
    # Every bundled exercise that asks for decimals shows its answer with that many.
    for ex_id, data in SPECS:
        one = make_variant(data, 1, ex_id)
        if one.tolerance.mode == "decdig" and not one.parts:
            shown = shown_answer_text(one)
            d = one.tolerance.digits
            assert all(len(n.split(".")[1]) == d for n in re.findall(r"\d+\.\d+", shown)), (
                ex_id,
                shown,
            )


def test_the_shown_answer_keeps_full_precision_when_rounding_it_would_grade_wrong() -> None:
    ex_id, data = next((i, d) for i, d in SPECS if d.get("kind") == "linear_system")
    v = make_variant(data, 0, ex_id)
    exact = dataclasses.replace(
        v, expected=np.array([1 / 3, 2.0]), tolerance=Tolerance(rtol=0.0, atol=0.0)
    )
    assert shown_answer_text(exact) == "[0.3333333333333333, 2.0]"
    assert grade_answer(exact, denoised("[0.3333333333333333, 2.0]")).status != "correct"
