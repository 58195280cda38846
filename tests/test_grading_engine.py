"""grade(): shapes, per-cell marks, partial credit, masks, messages, the JSON contract."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from quizapp.grading import Tolerance, Verdict, grade

A = np.array([[1.0, 2.0], [3.0, 4.0]])


def test_correct_scalar_verdict_and_json_contract() -> None:
    v = grade(3.0, " 3 ")
    assert isinstance(v, Verdict)
    assert (v.status, v.score, v.message, v.cells, v.mistakes) == (
        "correct",
        1.0,
        "Correct.",
        [[True]],
        [],
    )
    assert v.parsed == 3.0
    d = json.loads(json.dumps(v.to_dict()))
    assert set(d) == {"status", "score", "message", "cells", "mistakes"}


def test_incorrect_scalar_says_how_the_answer_was_read() -> None:
    v = grade(2.0, "3/4")
    assert v.status == "incorrect" and v.score == 0.0
    assert v.message == "Incorrect: your answer was read as 0.75."
    assert v.cells == [[False]] and v.used_attempt


def test_invalid_uses_no_attempt() -> None:
    v = grade(1.5, "1,5")
    assert v.status == "invalid" and not v.used_attempt
    assert "Use a point for decimals" in v.message
    assert v.to_dict()["cells"] is None


def test_scalar_with_a_space_or_brackets() -> None:
    assert "space inside a number" in grade(12.0, "1 2").message
    assert grade(5.0, "[5]").status == "correct"
    assert grade(5.0, [["5"]]).status == "correct"
    v = grade(5.0, "[5, 6]")
    assert v.status == "incorrect"
    assert v.message == "Your answer is a vector of 2 entries, but a single number is asked for."


def test_wrong_shape_names_both_shapes() -> None:
    v = grade(A, "[1, 2, 3, 4]")
    assert v.status == "incorrect" and v.score == 0.0 and v.cells is None
    assert v.message == "Your answer is a vector of 4 entries, but a 2×2 matrix is asked for."
    v = grade(A, "[[1, 2, 3], [4, 5, 6]]")
    assert v.message == "Your answer is a 2×3 matrix, but a 2×2 matrix is asked for."


def test_decimal_comma_hint_on_a_wrong_shape() -> None:
    v = grade([1.5, 2.5], "1,5\n2,5")
    assert v.status == "incorrect"
    assert "use a point: 1.5, not 1,5" in v.message
    assert "comma" not in grade(A, "[[1,4],[2,5],[3,6]]").message


@pytest.mark.parametrize(
    "answer",
    ["[15, 16]", "[15 16]", "[15; 16]", "15\n16", "15 16", [["15", "16"]], [["15"], ["16"]]],
)
def test_one_dimensional_expected_accepts_row_or_column(answer: object) -> None:
    v = grade([15.0, 16.0], answer)  # type: ignore[arg-type]
    assert v.status == "correct", v.message
    assert v.cells == [[True, True]]
    assert v.parsed == [15.0, 16.0]


def test_two_dimensional_row_and_column_are_different() -> None:
    v = grade([[15.0], [16.0]], "[[15, 16]]")
    assert v.status == "incorrect" and "transpose" in v.mistake_codes
    assert (
        grade([[15.0], [16.0]], "[15, 16]").status == "correct"
    )  # a 1-D answer has no orientation


def test_per_cell_marks_and_partial_credit() -> None:
    v = grade(A, "[[1,2],[3,5]]")
    assert v.status == "partial" and v.score == 0.75
    assert v.cells == [[True, True], [True, False]]
    assert v.message == "3 of 4 entries are correct."
    v = grade(A, "[[1,2],[3,5]]", partial_credit=False)
    assert v.status == "incorrect" and v.score == 0.0
    assert v.cells == [[True, True], [True, False]]
    assert v.message == "Incorrect: 3 of 4 entries are correct."
    v = grade(A, "[[0,0],[0,0]]")
    assert v.status == "incorrect" and v.score == 0.0


def test_score_is_fraction_of_correct_cells() -> None:
    rng = np.random.default_rng(1)
    expected = rng.integers(-9, 10, size=(3, 4)).astype(float)
    wrong = rng.random((3, 4)) < 0.4
    wrong[0, 0] = True
    answer = np.where(wrong, expected + 100, expected)
    v = grade(expected, [[repr(float(x)) for x in row] for row in answer])
    assert v.score == pytest.approx(1 - wrong.mean())
    assert np.array_equal(np.array(v.cells), ~wrong)


def test_transposed_square_matrix_earns_no_partial_credit() -> None:
    v = grade(A, "[[1,3],[2,4]]")
    assert (v.status, v.score) == ("incorrect", 0.0)
    # The marks agree with the score: the diagonal, though equal, is not shown as counted.
    assert v.cells == [[False, False], [False, False]]
    assert v.mistake_codes == ["transpose"]


def test_transposed_fill_in_marks_only_the_given_cells_as_counted() -> None:
    m = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    mask = np.array([[True, True, False], [True, False, True], [False, True, True]])
    typed = [[repr(float(m.T[i, j])) if mask[i, j] else "" for j in range(3)] for i in range(3)]
    v = grade(m, typed, mask=mask)
    assert (v.status, v.score) == ("incorrect", 0.0)
    assert np.array_equal(np.array(v.cells), ~mask)


def test_mask_grades_only_the_blanks() -> None:
    mask = np.array([[False, True], [True, False]])
    v = grade(A, [["", "2"], ["3", ""]], mask=mask)
    assert v.status == "correct" and v.score == 1.0
    assert v.cells == [[True, True], [True, True]]
    assert v.parsed == [[None, 2.0], [3.0, None]]
    v = grade(A, [["99", "2"], ["7", ""]], mask=mask)  # a wrong given cell is ignored
    assert v.status == "partial" and v.score == 0.5
    assert v.cells == [[True, True], [False, True]]
    v = grade(A, [["1", ""], ["3", "4"]], mask=mask)
    assert v.status == "invalid" and v.message == "Row 1, column 2 is empty."
    v = grade(A, "[[1, 2], [3, 4]]", mask=mask)  # text answers type every cell
    assert v.status == "correct"


def test_mask_must_match_expected_shape() -> None:
    with pytest.raises(ValueError, match="mask shape"):
        grade(A, "1", mask=np.ones((3, 3), dtype=bool))


@pytest.mark.parametrize(
    "expected", [float("nan"), [1.0, float("inf")], np.zeros((2, 2, 2)), [], "1,,"]
)
def test_unusable_expected_is_a_programming_error(expected: object) -> None:
    with pytest.raises(ValueError):
        grade(expected, "1")


def test_negative_zero_equals_zero() -> None:
    assert grade(0.0, "-0").status == "correct"
    assert grade(-0.0, "0").status == "correct"
    assert grade(0.0, "−0.0", tolerance=Tolerance("relabs", rtol=0.0, atol=0.0)).status == "correct"


def test_hostile_answers_are_invalid_fast() -> None:
    for answer in ["9^9^9", "(" * 5000 + ")" * 5000, "x" * 1_000_000, "1," * 200_000]:
        for expected in (1.0, A):
            start = time.perf_counter()
            assert grade(expected, answer).status == "invalid"
            assert time.perf_counter() - start < 0.5


def _forms(m: np.ndarray) -> list[object]:
    cells = [[repr(float(x)) for x in row] for row in m]
    return [
        cells,
        "[" + ", ".join("[" + ", ".join(r) + "]" for r in cells) + "]",
        "[" + "; ".join(" ".join(r) for r in cells) + "]",
        "\n".join("\t".join(r) for r in cells) + "\n\n",
        "\n".join(", ".join(r) for r in cells),
    ]


_MATRICES = hnp.arrays(
    float,
    st.tuples(st.integers(1, 4), st.integers(1, 4)),
    elements=st.floats(-1e12, 1e12, allow_nan=False, allow_subnormal=False),
)


@settings(max_examples=150, deadline=None)
@given(
    _MATRICES,
    st.sampled_from(
        [
            Tolerance(),
            Tolerance("relabs", rtol=0.0, atol=0.0),
            Tolerance("sigfig", digits=3),
            Tolerance("decdig", digits=2),
        ]
    ),
)
def test_any_expected_matrix_graded_against_itself_is_correct(
    m: np.ndarray, tol: Tolerance
) -> None:
    for form in _forms(m):
        v = grade(m, form, tolerance=tol)  # type: ignore[arg-type]
        assert (v.status, v.score) == ("correct", 1.0), (form, v.message)


@settings(max_examples=150, deadline=None)
@given(_MATRICES)
def test_transposed_non_symmetric_matrix_is_diagnosed(m: np.ndarray) -> None:
    tol = Tolerance()
    if m.shape[0] == m.shape[1] and np.allclose(m, m.T, rtol=0.02, atol=1e-7):
        return  # symmetric (within tolerance): its transpose is the right answer
    if m.shape in ((1, 1),):
        return
    cells = [[repr(float(x)) for x in row] for row in m.T]
    v = grade(m, cells, tolerance=tol)
    assert v.status == "incorrect" and v.score == 0.0
    assert "transpose" in v.mistake_codes
    assert v.cells is None or not any(c for row in v.cells for c in row)  # none counted


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([1.0, [1.0, 2.0], A]))
def test_random_bytes_give_invalid_or_a_verdict_never_an_exception(
    data: bytes, expected: object
) -> None:
    for text in (data.decode("latin-1"), data.decode("utf-8", errors="surrogateescape")):
        v = grade(expected, text)
        assert v.status in ("correct", "partial", "incorrect", "invalid")
        json.dumps(v.to_dict())
        if v.status == "invalid":
            assert v.score == 0.0 and v.message


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.text(max_size=12), min_size=1, max_size=3), min_size=1, max_size=3))
def test_random_grids_never_raise(grid: list[list[str]]) -> None:
    v = grade(A, grid)
    assert v.status in ("correct", "partial", "incorrect", "invalid")
    json.dumps(v.to_dict())


def test_a_full_size_matrix_is_graded_quickly() -> None:
    m = np.random.default_rng(0).normal(size=(100, 100))
    text = "\n".join(" ".join(repr(float(x)) for x in row) for row in m)
    start = time.perf_counter()
    assert grade(m, text).status == "correct"
    assert time.perf_counter() - start < 3.0


def test_mask_without_graded_cells_is_trivially_correct() -> None:
    v = grade(A, [["", ""], ["", ""]], mask=np.zeros((2, 2), dtype=bool))
    assert (v.status, v.score) == ("correct", 1.0)


@pytest.mark.parametrize(
    ("answer", "mask", "cell"),
    [
        ("[[1,2],[,4]]", None, (2, 1)),
        ("[[1,2],[3,x]]", None, (2, 2)),
        ([["1", ""], ["3", "4"]], np.array([[False, True], [True, False]]), (1, 2)),
        ("[[1,2],[3]]", None, (2, None)),
        ("9^9^9", None, None),
    ],
)
def test_invalid_verdict_names_the_cell(answer: object, mask: object, cell: object) -> None:
    v = grade(A, answer, mask=mask)  # type: ignore[arg-type]
    assert v.status == "invalid" and v.invalid_cell == cell
    assert set(v.to_dict()) == {"status", "score", "message", "cells", "mistakes"}
