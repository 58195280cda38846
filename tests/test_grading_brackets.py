"""Commas and brackets students bring from other notations: thousands separators, ( ) and { }."""

from __future__ import annotations

import numpy as np
import pytest

from quizapp.grading import InvalidAnswer, grade, parse_answer, parse_number


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("1,234.5", "1234.5"),
        ("1,000,000", "1000000"),
        ("-12,345,678", "-12345678"),
        ("999,999.25", "999999.25"),
    ],
)
def test_thousands_separators_are_named(text: str, plain: str) -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_number(text)
    assert err.value.message == f"Remove the thousands separators: write {plain}, not {text}."
    v = grade(plain, text)
    assert v.status == "invalid" and v.message.startswith("Remove the thousands separators")


def test_one_group_of_three_is_ambiguous_and_says_both() -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_number("1,000")
    assert "1.000" in err.value.message and "(1000)" in err.value.message
    # Not thousands-like: a plain decimal comma.
    with pytest.raises(InvalidAnswer, match=r"write 1\.5, not 1,5"):
        parse_number("1,5")
    with pytest.raises(InvalidAnswer, match=r"Use a point for decimals: write 1\.2345"):
        parse_number("1,2345")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{2,5}", [2.0, 5.0]),
        ("{2, 5}", [2.0, 5.0]),
        ("(2, 5)", [2.0, 5.0]),
        ("(1, 10)", [1.0, 10.0]),  # a point, as the slides write it
        ("(2, 5,)", [2.0, 5.0]),
        ("(1+2, sqrt(4))", [3.0, 2.0]),
        ("{{1,2},{3,4}}", [[1.0, 2.0], [3.0, 4.0]]),
        ("((1,2),(3,4))", [[1.0, 2.0], [3.0, 4.0]]),
        ("( (1, 2), (3, 4) )", [[1.0, 2.0], [3.0, 4.0]]),
        ("{{1,2},{3,4},}", [[1.0, 2.0], [3.0, 4.0]]),
        ("{{1}, {2}}", [[1.0], [2.0]]),
    ],
)
def test_round_and_curly_lists_are_vectors_and_matrices(
    text: str, expected: list[float] | list[list[float]]
) -> None:
    got = parse_answer(text)
    np.testing.assert_array_equal(got, np.array(expected))
    assert grade(np.array(expected), text).status == "correct"


@pytest.mark.parametrize(("text", "value"), [("(1+2)", 3.0), ("{1+2}", 3.0), ("(1)(2)", 2.0)])
def test_groups_without_a_top_level_comma_stay_numbers(text: str, value: float) -> None:
    assert float(parse_answer(text)) == value
    assert grade(str(value), text).status == "correct"


def test_mixed_lists_say_use_square_brackets() -> None:
    v = grade([[1, 2], [3, 4]], "((1,2), 3)")
    assert v.status == "invalid"
    assert v.message.startswith("Use [ ] for vectors and matrices")


def test_scalar_exercise_keeps_the_decimal_comma_error_inside_parentheses() -> None:
    v = grade("1.5", "(1,5)")
    assert v.status == "invalid" and "Use a point for decimals" in v.message
    v = grade("1.5", "(1, 5)")  # clearly a vector: a wrong shape
    assert v.status == "incorrect" and "a vector of 2 entries" in v.message
