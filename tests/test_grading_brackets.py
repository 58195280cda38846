"""Commas and brackets students bring from other notations: thousands separators, ( ) and { }."""

from __future__ import annotations

import time

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


# ---------------------------------------------------------------- transpose marks, trailing commas


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[2 5]'", [[2.0], [5.0]]),  # MATLAB
        ("[2, 5]’", [[2.0], [5.0]]),  # a phone's typographic apostrophe
        ("[2, 5]^T", [[2.0], [5.0]]),
        ("[2, 5]^{T}", [[2.0], [5.0]]),
        ("[2, 5]ᵀ", [[2.0], [5.0]]),
        ("[2, 5]^⊤", [[2.0], [5.0]]),
        ("[2, 5].T", [[2.0], [5.0]]),  # NumPy
        ("[[1, 2], [3, 4]]^T", [[1.0, 3.0], [2.0, 4.0]]),
        ("[1 2 3; 4 5 6]'", [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]),
    ],
)
def test_transpose_marks_transpose(text: str, expected: list[list[float]]) -> None:
    got = parse_answer(text)
    np.testing.assert_array_equal(got, np.array(expected))
    assert grade(np.array(expected), text).status == "correct"


def test_transposed_row_answers_a_column_exercise() -> None:
    assert grade("[15; 16]", "[15 16]'").status == "correct"
    v = grade("[15; 16]", "[[15, 16]]")  # no mark: a 1x2 row, named as transposed
    assert v.status == "incorrect" and v.mistake_codes == ["transpose"]


def test_transpose_mark_without_brackets_is_explained() -> None:
    with pytest.raises(InvalidAnswer, match="not allowed"):
        parse_number("5'")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[1,2],[3,4],]", [[1.0, 2.0], [3.0, 4.0]]),
        ("[[1, 2,], [3, 4,],]", [[1.0, 2.0], [3.0, 4.0]]),
        ("[1, 2, 3,]", [1.0, 2.0, 3.0]),
        ("[1 2; 3 4;]", [[1.0, 2.0], [3.0, 4.0]]),
    ],
)
def test_trailing_commas_inside_brackets(text: str, expected: list[float]) -> None:
    np.testing.assert_array_equal(parse_answer(text), np.array(expected))


def test_empty_entries_are_still_reported() -> None:
    with pytest.raises(InvalidAnswer, match="Entry 2 is empty"):
        parse_answer("[1, , 3]")
    with pytest.raises(InvalidAnswer, match="Entry 2 is empty"):
        parse_answer("[1, ,]")


# ---------------------------------------------------------------- Markdown, messages, x for times


@pytest.mark.parametrize(
    "text",
    [
        "```\n1.5\n```",
        "```text\n1.5\n```\n",
        "~~~\n1.5\n~~~",
        "`1.5`",
        "```1.5```",
        "\n```\n1.5\n```",
    ],
)
def test_markdown_fences_and_backticks_are_dropped(text: str) -> None:
    assert grade("1.5", text).status == "correct"


def test_fenced_matrix() -> None:
    v = grade([[1, 2], [3, 4]], "```\n1 2\n3 4\n```")
    assert v.status == "correct"


@pytest.mark.parametrize("text", ["¹", "2+¹", " ²", "(²)"])
def test_lone_superscript_is_explained_in_the_students_own_text(text: str) -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_number(text)
    assert "superscript" in err.value.message and "^(" not in err.value.message


def test_messages_quote_what_was_typed_not_its_rewrite() -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_number("π+")
    assert "'π+'" in err.value.message and "pi" not in err.value.message
    with pytest.raises(InvalidAnswer) as err:
        parse_number("10² @")
    assert "'10² @'" in err.value.message and "^(" not in err.value.message


@pytest.mark.parametrize("text", ["2x3", "2 x 3", "2X3", "(1+1)x3"])
def test_x_as_times_says_use_star(text: str) -> None:
    with pytest.raises(InvalidAnswer, match=r"Use \* for multiplication"):
        parse_number(text)
    assert parse_number("1.5x10^3") == 1500.0


@pytest.mark.parametrize(
    "text",
    [
        "(" * 5000 + "1" + ",1)" * 5000,
        "{" * 5000 + "1" + ",1}" * 5000,
        "(((1,2),(3,4)),((1,2),(3,4)))",
    ],
    ids=["round-5000", "curly-5000", "three-levels"],
)
def test_deeply_nested_lists_are_refused_fast_without_recursion(text: str) -> None:
    start = time.perf_counter()
    v = grade([[1, 2], [3, 4]], text)
    assert v.status == "invalid"
    assert v.message.startswith("Too many brackets: a matrix has at most two levels")
    assert time.perf_counter() - start < 2.0  # ms normally; generous for a loaded CI host
