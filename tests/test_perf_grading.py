"""The grading fast path (plain numbers and ``a/b`` fractions, added for issue 7's benchmark)
gives exactly what the full tokenizer + parser gives, and leaves every error to the full path."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quizapp.grading import (
    InvalidAnswer,
    Tolerance,
    cells_close,
    check_tolerance,
    engine,
    grade,
    parse_answer,
    parse_number,
    register_detector,
)
from quizapp.grading.parse.brackets import _split_top_level
from quizapp.grading.parse.evaluate import _plain_values
from quizapp.grading.parse.expression import _Parser
from quizapp.grading.parse.normalize import _normalize
from quizapp.grading.parse.number import _fast_number
from quizapp.grading.parse.rows import _split_row, _split_spaced
from quizapp.grading.parse.wrappers import _TRANSPOSE_MARK, _may_mark

_number_text = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.decimals(allow_nan=False, allow_infinity=False, places=4).map(str),
)


def _slow(text: str) -> float:
    """The full path: the tokenizer and recursive-descent parser, bypassing the fast path."""
    return _Parser(_normalize(text.strip())).parse()


@given(_number_text, st.one_of(st.none(), _number_text), st.sampled_from(["", " ", "\t"]))
def test_fast_path_equals_parser(num: str, den: str | None, pad: str) -> None:
    text = pad + (num if den is None else f"{num}/{den.lstrip('+-')}") + pad
    fast = _fast_number(text)
    try:
        slow = _slow(text)
    except InvalidAnswer:
        assert fast is None  # errors are the full path's business
        return
    if fast is not None:
        assert fast == slow and math.copysign(1, fast) == math.copysign(1, slow)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("-7/4", -1.75),
        ("3/6", 0.5),
        ("+2", 2.0),
        (" 0.25 ", 0.25),
        ("1e-3/2", 0.0005),
        ("-0", -0.0),
    ],
)
def test_fast_path_values(text: str, value: float) -> None:
    assert _fast_number(text) == value
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["1/0", "1e400", "1e300/1e-300", "7 / 4", "1,5", "2pi", "1/2/3"])
def test_fast_path_declines(text: str) -> None:
    """Zero denominators, overflow and anything beyond ``a/b`` go to the full path."""
    assert _fast_number(text) is None


def test_errors_unchanged() -> None:
    with pytest.raises(InvalidAnswer, match="Division by zero"):
        parse_number("1/0")
    with pytest.raises(InvalidAnswer, match="too large"):
        parse_number("1e300/1e-300")


# --------------------------------------------------------------------------- comparison


@pytest.mark.parametrize(
    ("a", "e", "tol", "close"),
    [
        (39.2, 4 * 28 / 20 * 7, Tolerance(rtol=0.0, atol=0.0), True),  # 39.199999999999996
        (0.4, 0.3, Tolerance(rtol=0.0, atol=0.1), True),  # 0.10000000000000003 apart
        (0.41, 0.3, Tolerance(rtol=0.0, atol=0.1), False),
        (-0.0, 0.0, Tolerance(rtol=0.0, atol=0.0), True),
        (1.0 + 2**-52 * 5, 1.0, Tolerance(rtol=0.0, atol=0.0), False),  # 5 ulps: beyond the slack
        (1.0 + 2**-52 * 4, 1.0, Tolerance(rtol=0.0, atol=0.0), True),
    ],
)
def test_cells_close_documented_boundaries(a: float, e: float, tol: Tolerance, close: bool) -> None:
    """The boundary cases of compare's docstring."""
    assert cells_close(np.array([a]), np.array([e]), tol).tolist() == [close]


@pytest.mark.parametrize(
    "tol",
    [Tolerance(rtol=float("nan")), Tolerance(atol=-1e-9), Tolerance(rtol=float("inf"))],
)
def test_invalid_relabs_still_refused(tol: Tolerance) -> None:
    with pytest.raises(ValueError, match="finite number >= 0"):
        check_tolerance(tol)
    with pytest.raises(ValueError, match="finite number >= 0"):
        grade(1.0, "1", tolerance=tol)


# --------------------------------------------------------------------------- grade() fast path


def test_correct_answer_runs_no_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    """Detectors run only for wrong answers: a correct one never reaches run_detectors."""
    calls: list[object] = []
    monkeypatch.setattr(engine, "run_detectors", lambda *a, **k: calls.append(a) or [])
    assert grade(np.array([[1.0, 2.0], [3.0, 4.0]]), "1 2\n3 4").status == "correct"
    assert calls == []
    assert grade(np.array([[1.0, 2.0], [3.0, 4.0]]), "1 2\n3 5").status == "partial"
    assert len(calls) == 1


def test_detector_context_mask_is_none_without_mask() -> None:
    """The detectors' context keeps its documented ``mask``: None when every cell is graded."""
    seen: dict[str, object] = {}

    def spy(answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]) -> None:
        seen.update(context)

    register_detector("_perf_spy")(spy)
    grade(np.array([1.0, 2.0]), "[1, 3]", detectors=["_perf_spy"], context={"k": 1})
    assert seen["mask"] is None and seen["k"] == 1 and seen["tolerance"] == Tolerance()
    mask = np.array([[True, False]])
    grade(np.array([[1.0, 2.0]]), [["3", ""]], mask=mask, detectors=["_perf_spy"])
    assert np.array_equal(seen["mask"], mask)


# --------------------------------------------------------------------------- splitting and cells

_row_text = st.text(alphabet="0123456789eE.+-/ *^()x", max_size=30)


@given(_row_text)
def test_split_row_shortcut_equals_matlab_rule(line: str) -> None:
    """A row of digits, signs, '/' and spaces is split at once: the same cells (or the same
    error) as MATLAB's rule applied part by part."""
    try:
        want: object = _split_spaced(line)
    except InvalidAnswer as exc:
        want = exc.message
    try:
        got: object = _split_row(line)
    except InvalidAnswer as exc:
        got = exc.message
    assert got == want


@given(st.text(alphabet="0123456789()[]{},;+ ", max_size=30), st.sampled_from([",", ";"]))
def test_split_top_level_shortcuts(line: str, sep: str) -> None:
    """The shortcuts (no separator; no brackets) split as the bracket-counting loop does."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(line):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == sep and depth <= 0:
            parts.append(line[start:i])
            start = i + 1
    parts.append(line[start:])
    assert _split_top_level(line, sep) == parts


_cell_text = st.one_of(
    _number_text,
    st.tuples(_number_text, _number_text).map(lambda t: f"{t[0]}/{t[1]}"),
    st.text(alphabet="0123456789eE.+-/|", max_size=8),
    st.sampled_from(["", " 1", "1 ", "1/0", "0/0", "1e400", "1e300/1e-300", "1/-2", "1/+2", "2pi"]),
)


@given(st.integers(1, 3).flatmap(lambda w: st.lists(st.lists(_cell_text, min_size=w, max_size=w),
                                                   min_size=1, max_size=3)))  # fmt: skip
def test_plain_values_equal_cell_by_cell(rows: list[list[str]]) -> None:
    """All cells read at once give the floats _fast_number gives cell by cell, or None (then
    every cell goes through the full path, with its messages); never a different value."""
    got = _plain_values(rows)
    each = [_fast_number(c) for row in rows for c in row]
    if got is not None:
        assert got == each
        assert [math.copysign(1, v) for v in got] == [math.copysign(1, v) for v in each]  # type: ignore[arg-type]
    slow = [[parse_number_or_none(c) for c in row] for row in rows]
    if got is not None:
        assert got == [v for row in slow for v in row]


def parse_number_or_none(text: str) -> float | None:
    try:
        return parse_number(text)
    except InvalidAnswer:
        return None


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("-7/4 3/4\n1/2 -1/3", (2, 2)),
        ("(3, -2)", (2,)),
        ("[1 2; 3 4]", (2, 2)),
        ("1e-3 .5 5.", (3,)),
        ("7", ()),
    ],
)
def test_parse_answer_plain_text(text: str, shape: tuple[int, ...]) -> None:
    """Plain texts read on the shortcuts give NumPy's own reading of the same numbers."""
    want = np.array(
        [[float(n) / float(d) if d else float(n) for n, _, d in (c.partition("/") for c in r)]
         for r in [line.replace("(", "").replace(")", "").replace("[", "").replace("]", "")
                   .replace(",", " ").split() for line in text.replace(";", "\n").split("\n")]]
    ).reshape(shape)  # fmt: skip
    got = parse_answer(text)
    assert got.shape == shape and got.tolist() == want.tolist()


@given(st.text(alphabet="[](){}'\u2019T\u22a4^.xt 12,\t", min_size=1, max_size=20))
def test_may_mark_never_hides_a_transpose_mark(text: str) -> None:
    """The last-character shortcut skips the transpose-mark search only where it cannot match."""
    if _TRANSPOSE_MARK.search(text):
        assert _may_mark(text)


@pytest.mark.parametrize("text", ["[1 2]'", "[1, 2]^T", "[1, 2]^{T}", "[1, 2]^( T )", "[1 2].T",
                                  "[1 2]\u22a4", "[1 2]^\u22a4", "[1 2]\u2019"])  # fmt: skip
def test_transpose_marks_still_read(text: str) -> None:
    assert parse_answer(text).tolist() == [[1.0], [2.0]]
