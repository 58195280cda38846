"""The answer preview reads an answer exactly as grading does: ``preview_answer`` is invalid
exactly when ``grade_answer`` is, with the same message and cell, for every bundled exercise and
a spread of answers; a valid preview's numbers are the grader's; nothing in it depends on the
expected answer.  Also: NumPy's printed arrays are read, and a message says its cell once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizapp.bank import load_bank, preview_answer
from quizapp.bank.answers import grade_answer
from quizapp.grading import InvalidAnswer, parse_answer, parse_number, read_answer

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")


def _answers(variant) -> list:
    """Readable and unreadable answers of every kind for ``variant``'s form."""
    form = variant.answer_form
    out: list = ["", "   ", "x", "1,5", "[[1, 2], [3", "1 e10", "2 pi", "(1, 2), 3", "nan", "1/0"]
    if variant.parts:
        # Text that is no "name = ..." answer per part, and parts answered one by one.
        names = [p.name for p in variant.parts]
        return out + [
            {names[0]: "1"},
            {n: "x" for n in names},
            "\n".join(f"{n} = 1" for n in names),
        ]
    # Answers by part to an exercise with one answer (a choice once read this as option a).
    out += [{"a": "1"}, {"x": [["1"]]}]
    if form.type in ("choice", "index"):
        return out + ["a", "b", "(B)", "2", "99", "zz", "1"]
    exp = np.asarray(variant.expected, dtype=float)
    flat = exp.ravel()
    rows = exp.reshape(-1, exp.shape[-1]) if exp.ndim == 2 else exp.reshape(1, -1)
    text = "\n".join(" ".join(repr(float(v)) for v in row) for row in rows)
    out += [text, text + " 1", "[" + text.replace("\n", "; ") + "]", repr(float(flat[0]))]
    out.append("array([" + ", ".join(repr(float(v)) for v in flat) + "])")
    if exp.ndim == 2:
        grid = [[repr(float(v)) for v in row] for row in exp]
        out.append(grid)
        bad = [row[:] for row in grid]
        bad[0][0] = "x"
        out.append(bad)
        blank = [row[:] for row in grid]
        blank[-1][-1] = ""
        out.append(blank)
    if form.type == "point_on_line":
        out += ["(1, 2)", "x = 1, y = 2", "(1, 2)\n(3, 4)", [["1", "2"]], [["1", ""]]]
    return out


@pytest.mark.parametrize("exercise_id", sorted(BANK.exercises))
def test_the_preview_is_invalid_exactly_when_the_grade_is(exercise_id: str) -> None:
    from quizapp.bank.parts import part_variant

    whole = BANK.exercises[exercise_id].generate(3)
    # a multi-part variant's answer is read part by part, each as a single answer
    for variant in [part_variant(whole, p) for p in whole.parts] or [whole]:
        _preview_agrees(variant)


def _preview_agrees(variant) -> None:
    for answer in _answers(variant):
        verdict = grade_answer(variant, answer)
        preview = preview_answer(variant, answer)
        assert (preview.status == "invalid") == (verdict.status == "invalid"), (answer, verdict)
        if verdict.status == "invalid":
            if variant.parts and isinstance(answer, dict):
                # An unreadable part: the preview says "Part x cannot be read: WHY." where the
                # verdict says "Part x could not be read: WHY. Nothing was graded, ...".
                assert preview.message.split(": ", 1)[1] in verdict.message, answer
            else:
                assert preview.message == verdict.message, answer
            assert preview.invalid_cell == verdict.invalid_cell, answer
            assert preview.read_as is None
        elif variant.parts:  # read part by part ("Read: x, r."), each as its own form reads it
            assert preview.message.startswith("Read: ") and preview.parts, answer
        else:
            assert preview.message.startswith("Read as"), answer
            # An answer of another shape: the preview says what the verdict will (one rule,
            # quizapp.grading.shape_mismatch) and that it would be marked incorrect.
            if verdict.message and " is asked for." in verdict.message:
                mismatch = verdict.message.removeprefix("Your answer is ")
                assert preview.message == (
                    f"Read as {mismatch} Submitted as it is, it would be marked incorrect."
                ), answer
            else:
                assert "would be marked incorrect" not in preview.message, answer
            if verdict.parsed is not None and variant.answer_form.type != "partial_matrix":
                assert np.allclose(
                    np.asarray(preview.read_as, dtype=float),
                    np.asarray(verdict.parsed, dtype=float),
                ), answer


def test_the_preview_of_a_right_and_a_wrong_answer_differ_only_in_the_numbers() -> None:
    variant = BANK.exercises["03-transpose-and-products/05-matrix-product"].generate(5)
    exp = np.asarray(variant.expected, dtype=float)
    right = "\n".join(" ".join(repr(float(v)) for v in row) for row in exp)
    wrong = "\n".join(" ".join(repr(float(v + 1)) for v in row) for row in exp)
    a, b = preview_answer(variant, right).to_dict(), preview_answer(variant, wrong).to_dict()
    assert a["status"] == b["status"] == "valid" and a["message"] == b["message"]
    assert set(a) == set(b) == {"status", "read_as", "message", "cells", "invalid_cell"}
    assert np.allclose(np.asarray(b["read_as"]) - np.asarray(a["read_as"]), 1)


def test_an_answer_of_another_shape_is_flagged_before_it_costs_an_attempt() -> None:
    variant = BANK.exercises["03-transpose-and-products/05-matrix-product"].generate(5)
    assert np.asarray(variant.expected).shape == (2, 2)
    for typed, read in [("1 2 3", "a vector of 3 entries"), ("7", "a single number")]:
        preview = preview_answer(variant, typed)
        assert preview.status == "valid"  # it would be graded (and use an attempt)
        assert preview.message == (
            f"Read as {read}, but a 2×2 matrix is asked for. Submitted as it is, it would be "
            "marked incorrect."
        )
        assert grade_answer(variant, typed).status == "incorrect"
    assert preview_answer(variant, "1 2\n3 4").message == "Read as a 2×2 matrix."


def test_read_answer_is_the_grades_reading() -> None:
    ans, aligned = read_answer("1 2\n3 4", (2, 2))
    assert aligned is not None and aligned.tolist() == [[1, 2], [3, 4]]
    ans, aligned = read_answer("1 2 3", (2, 2))  # another shape: readable, not aligned
    assert aligned is None and ans.tolist() == [1, 2, 3]
    ans, aligned = read_answer("[1; 2]", (2,))  # a column for a vector: aligned
    assert aligned is not None and aligned.tolist() == [1, 2]
    with pytest.raises(InvalidAnswer, match="decimals"):
        read_answer("1,5", ())
    mask = np.array([[True, False]])
    ans, aligned = read_answer([["1", ""]], (1, 2), mask=mask)
    assert np.isnan(aligned[0, 1])
    with pytest.raises(InvalidAnswer, match="Row 1, column 1 is empty") as err:
        read_answer([["", "2"]], (1, 2), mask=mask)
    assert (err.value.row, err.value.column) == (1, 1)


@pytest.mark.parametrize(
    "text",
    [
        "array([[1., 2.],\n       [3., 4.]])",
        "np.array([[1, 2], [3, 4]])",
        "numpy.array([[1, 2], [3, 4]], dtype=float64)",
        "array([[1, 2], [3, 4]], dtype='float32')",
    ],
)
def test_numpy_printed_arrays_are_read(text: str) -> None:
    assert parse_answer(text).tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_numpy_vectors_and_what_is_not_an_array() -> None:
    assert parse_answer("array([0.5, 2. ])").tolist() == [0.5, 2.0]
    with pytest.raises(InvalidAnswer):
        parse_answer("array(1, 2)")  # not a printed array
    with pytest.raises(InvalidAnswer):
        parse_answer("arrays([1, 2])")


def test_a_message_that_quotes_the_whole_cell_does_not_quote_it_again() -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_number("x")
    assert err.value.message.startswith("Unknown name 'x'") and "(in 'x')" not in err.value.message
    with pytest.raises(InvalidAnswer) as err:
        parse_number("2x + y")  # a part of the cell: where it is still helps
    assert "(in '2x + y')" in err.value.message
