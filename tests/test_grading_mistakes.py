"""Mistake detectors: the generic four, the registry, and their messages."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from quizapp.grading import Mistake, Tolerance, grade, register_detector, registered_detectors
from quizapp.grading.mistakes import GENERIC, format_factor

A = [[1.0, 2.0], [3.0, 4.0]]


def messages(verdict: Any) -> dict[str, str]:
    return {m.code: m.message for m in verdict.mistakes}


def test_generic_detectors_are_registered() -> None:
    assert GENERIC == ("transpose", "sign", "scale", "rounding")
    assert set(GENERIC) <= set(registered_detectors())


def test_transpose_square_and_non_square() -> None:
    v = grade(A, "[[1, 3], [2, 4]]")
    assert v.status == "incorrect" and v.score == 0.0
    assert "transposed the matrix" in messages(v)["transpose"]
    v = grade([[1, 2, 3], [4, 5, 6]], "[[1, 4], [2, 5], [3, 6]]")
    assert "2×3" in v.message and "3×2" in v.message
    assert v.mistake_codes == ["transpose"]


def test_transpose_of_a_column_is_named_as_row_for_column() -> None:
    v = grade([[1], [2], [3]], "[[1, 2, 3]]")
    assert v.status == "incorrect"
    assert messages(v)["transpose"] == "You wrote a row where a column is asked for (transposed)."


def test_symmetric_matrix_is_never_called_transposed() -> None:
    v = grade([[1, 2], [2, 5]], "[[1, 2], [2, 6]]")
    assert "transpose" not in v.mistake_codes


def test_sign_all_and_some_cells() -> None:
    assert messages(grade(A, "[[-1,-2],[-3,-4]]"))["sign"] == "Every entry has the wrong sign."
    v = grade(A, "[[1, 2], [-3, 4]]")
    assert v.status == "partial" and v.score == pytest.approx(0.75)
    assert messages(v)["sign"] == "Row 2, column 1 has the wrong sign."
    v = grade(A, "[[1, -2], [-3, 4]]")
    assert messages(v)["sign"] == "Row 1, column 2 and row 2, column 1 have the wrong sign."
    assert messages(grade("-5.5", "5.5"))["sign"] == "Your answer has the wrong sign."
    assert messages(grade("[1, 2, 3]", "[1, -2, 3]"))["sign"] == "Entry 2 has the wrong sign."


def test_sign_needs_every_wrong_cell_to_be_negated() -> None:
    v = grade(A, "[[1, 2], [-3, 5]]")
    assert "sign" not in v.mistake_codes


@pytest.mark.parametrize(
    ("answer", "factor"),
    [
        ("[[2,4],[6,8]]", "2"),
        ("[[0.5,1],[1.5,2]]", "1/2"),
        ("[[-3,-6],[-9,-12]]", "-3"),
        ("[[sqrt(2), 2sqrt(2)], [3sqrt(2), 4sqrt(2)]]", "√2"),
        ("[[1/sqrt(8), 2/sqrt(8)], [3/sqrt(8), 4/sqrt(8)]]", "1/√8"),
        ("[[1.5,3],[4.5,6]]", "3/2"),
        ("[[10,20],[30,40]]", "10"),
    ],
)
def test_scale_reports_the_factor(answer: str, factor: str) -> None:
    v = grade(A, answer)
    assert messages(v)["scale"] == f"Every entry is {factor} times the right value."
    assert "sign" not in v.mistake_codes


@pytest.mark.parametrize(
    "answer",
    [
        "[[1.2345,2.469],[3.7035,4.938]]",  # 1.2345: no factor a student applies
        "[[0.9972,1.9944],[2.9916,3.9888]]",  # rounding noise (issue 16), not a factor
        "[[3.14159,6.28318],[9.42477,12.56636]]",  # pi
    ],
)
def test_scale_names_only_factors_a_student_could_have_applied(answer: str) -> None:
    v = grade(A, answer, tolerance=Tolerance(rtol=0, atol=1e-3))
    assert "scale" not in v.mistake_codes, v.mistakes


def test_applied_factors_cover_sqrt_d_and_its_reciprocal() -> None:
    from quizapp.grading.mistakes import applied_factor

    for d in range(2, 65):
        assert applied_factor(math.sqrt(d)) == pytest.approx(math.sqrt(d))
        assert applied_factor(1 / math.sqrt(d)) == pytest.approx(1 / math.sqrt(d))
    assert applied_factor(0.9972) is None
    assert applied_factor(-2.01) == -2.0


def test_applied_factor_is_the_nearest_of_all_factors() -> None:
    """The neighbours-only search (bisect) picks what a scan of every factor picks: around
    each factor and both 2 % edges, and over random values of both signs and many magnitudes."""
    import random

    from quizapp.grading.mistakes import APPLIED_FACTORS, applied_factor

    def scan(c: float) -> float | None:
        best = min(APPLIED_FACTORS, key=lambda f: abs(c / f - 1.0))
        return best if abs(c / best - 1.0) <= 0.02 else None

    rng = random.Random(11)
    offsets = (-0.03, -0.02, -0.0199, -0.005, 0.0, 1e-9, 0.005, 0.0199, 0.02, 0.03)
    values = [f * (1 + d) for f in APPLIED_FACTORS for d in offsets]
    values += [rng.choice((-1, 1)) * 10 ** rng.uniform(-8, 8) for _ in range(20_000)]
    values += [1e-300, -1e300, 1.0, -1.0]
    for c in values:
        assert applied_factor(c) == scan(c), c
    assert applied_factor(0.0) is None and applied_factor(math.nan) is None


def test_scale_of_a_single_number_only_for_powers_of_ten() -> None:
    assert "100 times" in messages(grade("0.25", "25"))["scale"]
    assert "0.001 times" in messages(grade("2", "0.002"))["scale"]
    assert "scale" not in grade("2", "3").mistake_codes
    assert "scale" not in grade("2", "-2").mistake_codes


def test_format_factor() -> None:
    assert format_factor(2.0) == "2"
    assert format_factor(0.25) == "1/4"
    assert format_factor(math.sqrt(3)) == "√3"
    assert format_factor(-1 / math.sqrt(2)) == "-1/√2"
    assert format_factor(math.pi) == "3.142"


def test_rounding_relabs_says_how_many_figures() -> None:
    v = grade("1/3", "0.3")
    assert v.status == "incorrect"
    # 1/3 to 2 significant figures (0.33) is within 1 %: 2 figures are needed.
    assert messages(v)["rounding"] == (
        "Your answer is rounded to too few digits: keep at least 2 significant figures."
    )
    tight = Tolerance("relabs", rtol=1e-4, atol=0.0)
    assert (
        "at least 4 significant figures"
        in messages(grade("1/3", "0.333", tolerance=tight))["rounding"]
    )


def test_rounding_in_digit_modes() -> None:
    v = grade("1.234", "1.2", tolerance=Tolerance("sigfig", digits=3))
    assert messages(v)["rounding"].endswith("give 3 significant figures.")
    v = grade("0.2689", "0.27", tolerance=Tolerance("decdig", digits=3))
    assert messages(v)["rounding"].endswith("give 3 decimal places.")
    # Wrongly rounded (1.24 is not 1.234 rounded) is not a rounding mistake.
    assert grade("1.234", "1.24", tolerance=Tolerance("sigfig", digits=3)).mistakes == []
    assert grade("0.2689", "0.26", tolerance=Tolerance("decdig", digits=2)).mistakes == []


def test_rounding_in_a_matrix() -> None:
    expected = np.array([[1 / 3, 2 / 3], [0.5, 0.25]])
    tol = Tolerance("relabs", rtol=1e-3, atol=0.0)
    v = grade(expected, "[[0.33, 0.67], [0.5, 0.25]]", tolerance=tol)
    assert v.status == "partial"
    assert messages(v)["rounding"] == (
        "Some entries are rounded to too few digits: keep at least 3 significant figures."
    )


def test_detectors_never_run_on_correct_answers_and_never_change_the_score() -> None:
    calls: list[str] = []

    @register_detector("test_always")
    def always(answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]) -> Mistake:
        calls.append("called")
        return Mistake("test_always", "Always.")

    assert grade(A, "[[1,2],[3,4]]", detectors=["test_always"]).mistakes == []
    assert calls == []
    with_detector = grade(A, "[[1,2],[3,5]]", detectors=["test_always"])
    without = grade(A, "[[1,2],[3,5]]")
    assert calls == ["called"]
    assert with_detector.mistake_codes == ["test_always"]
    assert (with_detector.status, with_detector.score, with_detector.cells) == (
        without.status,
        without.score,
        without.cells,
    )


def test_kind_detector_gets_context_tolerance_and_mask() -> None:
    seen: dict[str, Any] = {}

    @register_detector("test_context")
    def spy(answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]) -> None:
        seen.update(context)
        seen["shape"] = answer.shape

    tol = Tolerance("sigfig", digits=3)
    mask = np.array([[False, True], [True, True]])
    grade(A, "[1 2; 3 5]", tolerance=tol, mask=mask, detectors=["test_context"], context={"d": 4})
    assert seen["d"] == 4 and seen["tolerance"] == tol and seen["shape"] == (2, 2)
    assert (seen["mask"] == mask).all()


def test_a_failing_detector_is_skipped() -> None:
    @register_detector("test_broken")
    def broken(answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]) -> None:
        raise RuntimeError("bug in a kind")

    v = grade(A, "[[1,2],[3,5]]", detectors=["test_broken"])
    assert v.status == "partial" and v.mistakes == []


def test_unknown_detector_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no mistake detector is registered for nope"):
        grade(A, "[[1,2],[3,5]]", detectors=["nope"])


def test_registering_a_code_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="registered twice"):

        @register_detector("sign")
        def other(answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]) -> None:
            return None


def test_transpose_in_a_partly_filled_matrix() -> None:
    expected = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    mask = np.array([[False, True, True], [False, False, True], [False, False, False]])
    # The student filled the three blanks with the transposed values; the given cells are empty.
    v = grade(expected, [["", "4", "7"], ["", "", "8"], ["", "", ""]], mask=mask)
    assert v.status == "incorrect" and v.score == 0.0
    assert "transpose" in v.mistake_codes


@pytest.mark.parametrize(
    ("expected", "answer", "tolerance"),
    [
        ("1", "1.00000000001", Tolerance(rtol=0, atol=0)),  # more digits than needed
        ("1", "1.000000000000001", Tolerance(rtol=0, atol=0)),
        ("2.5", "2.50001", Tolerance(rtol=0, atol=0)),
        ("1/3", "0.3334", Tolerance(rtol=1e-6, atol=0)),  # 4 digits, but not 1/3 rounded
    ],
)
def test_rounding_never_fires_for_an_answer_with_enough_digits(
    expected: str, answer: str, tolerance: Tolerance
) -> None:
    v = grade(expected, answer, tolerance=tolerance)
    assert v.status == "incorrect"
    assert "rounding" not in v.mistake_codes


def test_rounding_half_up_and_trailing_zeros() -> None:
    # 0.25 to 1 significant figure: 0.3 (half up, as taught) and 0.2 (half to even) both count.
    for typed in ("0.3", "0.2"):
        v = grade("0.25", typed, tolerance=Tolerance("sigfig", digits=2))
        assert messages(v)["rounding"].endswith("give 2 significant figures.")
    # "100" for 100.4 is 100.4 rounded to 1, 2 or 3 figures; 4 are needed at rtol 1e-4.
    v = grade("100.4", "100", tolerance=Tolerance(rtol=1e-4, atol=0))
    assert messages(v)["rounding"].endswith("keep at least 4 significant figures.")


def test_read_as_shows_the_digits_that_differ() -> None:
    tight = Tolerance(rtol=0, atol=0)
    v = grade("1", "1.000000000000001", tolerance=tight)
    assert v.message == "Incorrect: your answer was read as 1.000000000000001."
    v = grade("0.1", "0.1+1e-16", tolerance=tight)
    assert v.message == f"Incorrect: your answer was read as {0.1 + 1e-16!r}."
    assert grade("1", "2").message == "Incorrect: your answer was read as 2."


@pytest.mark.parametrize(
    ("c", "text"),
    [
        (1e-200, "1e-200"),
        (1e300, "1e+300"),
        (-1e300, "-1e+300"),
        (5e-324, "4.941e-324"),
        (1000.0, "1000"),
        (1e6, "1000000"),
        (1234567.0, "1.235e+06"),
        (1001 / 3, "333.7"),
        (1 / 3, "1/3"),
        (math.sqrt(1e-8), "0.0001"),
        (math.sqrt(20001), "141.4"),
    ],
)
def test_format_factor_at_extremes(c: float, text: str) -> None:
    assert format_factor(c) == text


def test_scale_factor_message_at_extremes() -> None:
    assert messages(grade("1", "1e-200"))["scale"].startswith("Your answer is 1e-200 times")
    assert messages(grade("1", "1e300"))["scale"].startswith("Your answer is 1e+300 times")


@pytest.mark.parametrize(
    ("expected", "answer", "tolerance"),
    [
        ("2.046", "2.00", Tolerance("decdig", digits=2)),  # issue 16: two decimals were given
        ("2.046", "$2.00$", Tolerance("decdig", digits=2)),
        ("-2.046", "−2.00", Tolerance("decdig", digits=2)),  # Unicode minus
        ("0.2689", "0.30", Tolerance("decdig", digits=2)),
        ("[0.2689, 2.046]", "[0.27, 2.00]", Tolerance("decdig", digits=2)),
        ("[[0.2689], [2.046]]", [["0.27"], ["2.00"]], Tolerance("decdig", digits=2)),
    ],
)
def test_rounding_judges_the_digits_as_typed(expected: str, answer: Any, tolerance: Tolerance):
    v = grade(expected, answer, tolerance=tolerance)
    assert v.status in ("incorrect", "partial")
    assert "rounding" not in v.mistake_codes, v.mistakes


def test_rounding_still_named_for_too_few_typed_digits() -> None:
    v = grade("2.046", "2.0", tolerance=Tolerance("decdig", digits=2))
    assert messages(v)["rounding"].endswith("give 2 decimal places.")
    v = grade("[0.2689, 2.046]", [["0.3", "2.0"]], tolerance=Tolerance("decdig", digits=2))
    assert messages(v)["rounding"].endswith("give 2 decimal places.")


@pytest.mark.parametrize(
    ("text", "digits"),
    [("2.00", 3), ("0.30", 2), ("100", 1), ("100.", 3), (".50", 2), ("-2.5e3", 2), ("7", 1)],
)
def test_typed_significant_digits(text: str, digits: int) -> None:
    from quizapp.grading.mistakes import typed_significant_digits

    assert typed_significant_digits(text) == digits
    assert typed_significant_digits("1/7") is None
