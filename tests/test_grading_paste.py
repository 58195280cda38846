"""Pasted input: spreadsheet selections, byte-order marks, Windows line ends."""

from __future__ import annotations

import time

import numpy as np
import pytest

from quizapp.grading import InvalidAnswer, grade, parse_answer, parse_number
from quizapp.grading.parse import MAX_ANSWER_CHARS

M = [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize(
    "text",
    [
        "1\t2\t\r\n3\t4\t\r\n",  # one column too wide on the right, Windows line ends
        "\t1\t2\n\t3\t4\n",  # one column too wide on the left
        "\t1\t2\t\n\t3\t4\t",  # both
        "1\t2\t\t\n3\t4\t\t\n",  # two empty columns
        "\ufeff1\t2\t\r\n3\t4\t\r\n",  # byte-order mark from a UTF-8 export
        "\ufeff1\t2\r3\t4\r",  # old Mac line ends
        "1\t2\t\n\t\t\n3\t4\t\n",  # a row of nothing but tabs is a blank line
    ],
)
def test_spreadsheet_selection_one_column_too_wide(text: str) -> None:
    np.testing.assert_array_equal(parse_answer(text), M)
    assert grade(M, text).status == "correct"


def test_trimmed_row_and_scalar() -> None:
    np.testing.assert_array_equal(parse_answer("1\t2\t3\t\n"), [1.0, 2.0, 3.0])
    assert grade("5", "5\t\r\n").status == "correct"
    assert grade("5", "\ufeff5").status == "correct"


@pytest.mark.parametrize(
    ("text", "message", "row", "column"),
    [
        ("1\t\t2\n3\t4\t5", "Row 1, column 2 is empty.", 1, 2),  # blank in the middle
        ("1\t2\t\n3\t4\t5", "Row 1, column 3 is empty.", 1, 3),  # edge blank in one row only
        ("\t2\n3\t4", "Row 1, column 1 is empty.", 1, 1),
    ],
)
def test_blank_cells_that_are_not_a_whole_edge_column_stay_invalid(
    text: str, message: str, row: int, column: int
) -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_answer(text)
    assert err.value.message == message
    assert (err.value.row, err.value.column) == (row, column)


# ---------------------------------------------------------------- limits name the real problem


def test_padding_does_not_count_towards_the_length_limit() -> None:
    padded = " " * 2000 + "1" + "\n" * 2000 + "\t "
    assert parse_number(padded) == 1.0
    assert grade("1", padded).status == "correct"
    assert grade("[1, 2]", "\n" * (MAX_ANSWER_CHARS + 10) + "[1, 2]").status == "correct"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(" * 5000 + "1" + ")" * 5000, "nested too deeply (5,000 levels"),
        ("sqrt(" * 300 + "1" + ")" * 300, "nested too deeply (300 levels"),
        ("{" * 600 + "1" + "}" * 600, "nested too deeply (600 levels"),
        (" ".join(["1"] * 3000), "too many entries for one number: 3,000 numbers"),
        ("1+" * 600 + "1", "The number is too long (1,201 characters; at most 1,000)"),
    ],
    ids=["parens", "sqrt", "braces", "spaces", "long-sum"],
)
def test_over_long_cells_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_number(text)
    assert message in err.value.message
    v = grade("1", text)
    assert v.status == "invalid" and message in v.message


def test_over_long_cell_inside_a_vector_is_named() -> None:
    v = grade("[1, 2]", "[" + "(" * 5000 + "1" + ")" * 5000 + ", 2]")
    assert v.status == "invalid"
    assert v.message.startswith("Entry 1: The expression is nested too deeply")
    assert v.invalid_cell == (None, 1)


def test_hard_cap_is_fast_for_huge_input() -> None:
    start = time.perf_counter()
    for text in ("1" * 1_000_000, " " * 5_000_000, "(" * 1_000_000):
        assert grade("1", text).status == "invalid"
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "text",
    [
        "array([[1., 2.],\n       [3., 4.]])",  # NumPy
        "np.array([[1, 2], [3, 4]], dtype=float64)",
        "matrix([[1, 2],\n        [3, 4]])",  # NumPy's matrix
        "tensor([[1., 2.],\n        [3., 4.]])",  # PyTorch, the course's transformer code
        "torch.tensor([[1, 2], [3, 4]])",
        "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)",
        "tensor([[1., 2.], [3., 4.]], requires_grad=True)",
        "tensor([[1., 2.], [3., 4.]], device='cuda:0', grad_fn=<AddBackward0>)",
        "Array([[1., 2.],\n       [3., 4.]], dtype=float32)",  # JAX
        "tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)",  # TensorFlow
        "Matrix([[1, 2], [3, 4]])",  # SymPy
        "```\ntensor([[1., 2.], [3., 4.]])\n```",  # from a notebook cell, fenced
    ],
)
def test_an_array_as_a_library_prints_it_is_read(text: str) -> None:
    np.testing.assert_array_equal(parse_answer(text), M)
    assert grade(M, text).status == "correct"


def test_a_vector_as_pytorch_prints_it_is_read() -> None:
    np.testing.assert_array_equal(parse_answer("tensor([0.2689, 0.7311])"), [0.2689, 0.7311])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Once "The brackets do not match", which they do.
        ("foo([[1, 2], [3, 4]])", "foo(...) is not read: write the vector or matrix itself"),
        ("softmax([1, 2])", "softmax(...) is not read"),
        ("tensor([[1, 2], [3, 4]]) + 1", "brackets do not match"),
        ("tensor([[1, 2], [3, 4]], (2, 2))", "This tensor(...) cannot be read: only its list"),
        ("array([1, 2] * 2)", "This array(...) cannot be read"),
    ],
)
def test_another_call_around_a_list_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(InvalidAnswer, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_answer(text)


def test_printed_arrays_are_read_in_linear_time() -> None:
    # Each of these took hours with a regular expression that could match the same spaces two
    # ways (quadratic on a run of spaces or of keyword arguments); read in linear time they are
    # a few milliseconds each.
    n = MAX_ANSWER_CHARS
    texts = [
        "tensor([1], a=b" + " " * (n - 30) + "x",
        "tensor([" + "], a=b" * (n // 6 - 2),
        "tensor([1]" + ", a=b" * (n // 6 - 3) + "x",
        "tensor([1]" + ", a=(" * (n // 5 - 3) + ")",
        "tensor(" + "[" * (n // 2 - 5),
    ]
    start = time.perf_counter()
    for text in texts:
        assert grade("1", text).status == "invalid"
    assert time.perf_counter() - start < 2.0
