"""Pasted input: spreadsheet selections, byte-order marks, Windows line ends."""

from __future__ import annotations

import numpy as np
import pytest

from quizapp.grading import InvalidAnswer, grade, parse_answer

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
