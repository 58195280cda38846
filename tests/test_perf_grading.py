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
    compare,
    engine,
    grade,
    parse_answer,
    parse_number,
    register_detector,
    tolerance_bound,
)
from quizapp.grading.compare import SLACK_ULPS, SMALL_CELLS, _plain_relabs, close_list
from quizapp.grading.parse import (
    _TRANSPOSE_MARK,
    _fast_number,
    _may_mark,
    _normalize,
    _Parser,
    _plain_values,
    _split_row,
    _split_spaced,
    _split_top_level,
)

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


# --------------------------------------------------------------------------- comparison fast path

_cell = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(-1e3, 1e3),
    st.integers(-20, 20).map(float),
)
_tol_value = st.one_of(
    st.sampled_from([0.0, 1e-8, 1e-2, 0.1, 1.0, 5e-324]),
    st.floats(0.0, 1e300, allow_nan=False),
)


def _numpy_close(answer: np.ndarray, expected: np.ndarray, tol: Tolerance) -> np.ndarray:
    """The comparison as NumPy computes it (the path every answer above SMALL_CELLS takes),
    written out independently of quizapp.grading.compare."""
    with np.errstate(invalid="ignore", over="ignore"):
        bound = tol.atol + tol.rtol * np.abs(expected)
        diff = np.abs(answer - expected)
        scale = np.maximum(np.maximum(np.abs(answer), np.abs(expected)), bound)
        ok = diff <= bound + SLACK_ULPS * float(np.finfo(float).eps) * scale
    return ok & np.isfinite(answer)


@given(st.lists(st.tuples(_cell, _cell), min_size=1, max_size=SMALL_CELLS), _tol_value, _tol_value)
def test_close_list_equals_numpy(
    pairs: list[tuple[float, float]], rtol: float, atol: float
) -> None:
    """Small answers are compared in Python floats: the same verdict per cell as NumPy, for any
    values (NaN, infinities, subnormals, overflowing differences) and any valid relabs tolerance."""
    a = np.array([p[0] for p in pairs])
    e = np.array([p[1] for p in pairs])
    tol = Tolerance(rtol=rtol, atol=atol)
    want = _numpy_close(a, e, tol)
    assert close_list(a.tolist(), e.tolist(), rtol, atol) == want.tolist()
    got = cells_close(a, e, tol)
    assert got.dtype == bool and got.shape == a.shape
    assert got.tolist() == want.tolist()


@given(
    st.floats(-1e6, 1e6),
    st.sampled_from([0.0, 1e-8, 1e-2, 0.1]),
    st.sampled_from([0.0, 1e-8, 0.1, 1.0]),
    st.sampled_from([-1.0, 1.0]),
    st.integers(-8, 8),
)
def test_close_list_equals_numpy_at_the_boundary(
    e: float, rtol: float, atol: float, side: float, ulps: int
) -> None:
    """Answers a few units in the last place around ``|a - e| = bound``, where only the ULP
    slack decides: Python and NumPy agree there too."""
    a = e + side * (atol + rtol * abs(e))
    for _ in range(abs(ulps)):
        a = math.nextafter(a, math.copysign(math.inf, ulps))
    tol = Tolerance(rtol=rtol, atol=atol)
    want = _numpy_close(np.array([a]), np.array([e]), tol).tolist()
    assert close_list([a], [e], rtol, atol) == want


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
def test_close_list_documented_boundaries(a: float, e: float, tol: Tolerance, close: bool) -> None:
    """The boundary cases of compare's docstring, on the Python path."""
    assert close_list([a], [e], tol.rtol, tol.atol) == [close]
    assert cells_close(np.array([a]), np.array([e]), tol).tolist() == [close]


@pytest.mark.parametrize(
    "tol",
    [Tolerance(rtol=0, atol=1), Tolerance(rtol=True, atol=0.0), Tolerance("sigfig", digits=2)],
)
def test_cells_close_other_tolerances_keep_numpy_path(tol: Tolerance) -> None:
    """Integer (or bool) rtol/atol and the digit modes are not 'plain relabs': NumPy decides."""
    a, e = np.array([1.0, 2.5, 3.0]), np.array([1.4, 2.0, 3.0])
    assert not _plain_relabs(tol)
    bound = tolerance_bound(e, tol)
    want = np.abs(a - e) <= bound + SLACK_ULPS * float(np.finfo(float).eps) * np.maximum(
        np.maximum(np.abs(a), np.abs(e)), bound
    )
    assert cells_close(a, e, tol).tolist() == want.tolist()


@pytest.mark.parametrize(
    "tol",
    [Tolerance(rtol=float("nan")), Tolerance(atol=-1e-9), Tolerance(rtol=float("inf"))],
)
def test_invalid_relabs_still_refused(tol: Tolerance) -> None:
    assert not _plain_relabs(tol)
    with pytest.raises(ValueError, match="finite number >= 0"):
        check_tolerance(tol)
    with pytest.raises(ValueError, match="finite number >= 0"):
        grade(1.0, "1", tolerance=tol)


# --------------------------------------------------------------------------- grade() fast path

_entry = st.one_of(st.integers(-12, 12), st.sampled_from([0.5, -0.25, 1.0 / 3, 1e-9, 2.675]))
_shape = st.sampled_from([(), (1,), (3,), (1, 3), (3, 1), (2, 2), (4, 4), (2, 3)])


@st.composite
def _graded_case(draw: st.DrawFn) -> tuple[np.ndarray, object, np.ndarray | None, Tolerance]:
    shape = draw(_shape)
    size = int(np.prod(shape)) if shape else 1
    exp = np.array(draw(st.lists(_entry, min_size=size, max_size=size)), dtype=float)
    exp = exp.reshape(shape)
    kind = draw(st.sampled_from(["same", "noise", "transpose", "negate", "scale", "other"]))
    ans = exp.copy()
    if kind == "noise":
        ans = ans + np.array(draw(st.lists(st.sampled_from([0, 0, 1e-3, 0.02, -1]), min_size=size,
                                            max_size=size))).reshape(shape)  # fmt: skip
    elif kind == "transpose" and ans.ndim == 2:
        ans = ans.T
    elif kind == "negate":
        ans = -ans
    elif kind == "scale":
        ans = 10 * ans
    elif kind == "other":
        ans = np.arange(size, dtype=float).reshape(shape)
    rows = np.atleast_2d(ans) if ans.ndim < 2 else ans
    mask = None
    if len(shape) == 2 and rows.shape == shape and draw(st.booleans()):
        mask = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size))).reshape(shape)
    if mask is not None or draw(st.booleans()):
        answer: object = [[repr(float(v)) for v in row] for row in rows]
        if mask is not None:
            answer = [[c if m else "" for c, m in zip(r, mr, strict=True)]
                      for r, mr in zip(answer, mask, strict=True)]  # fmt: skip
    else:
        answer = "\n".join(" ".join(repr(float(v)) for v in row) for row in rows)
    tol = draw(st.sampled_from([Tolerance(), Tolerance(rtol=0.0, atol=0.0), Tolerance(atol=0.5)]))
    return exp, answer, mask, tol


@given(_graded_case())
def test_grade_small_path_equals_numpy_path(
    case: tuple[np.ndarray, object, np.ndarray | None, Tolerance],
) -> None:
    """``grade()`` gives the same Verdict whether small answers are compared in Python floats or,
    as every large answer is, with NumPy (``SMALL_CELLS`` forced to 0)."""
    exp, answer, mask, tol = case
    fast = grade(exp, answer, tolerance=tol, mask=mask)  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compare, "SMALL_CELLS", 0)
        mp.setattr(engine, "SMALL_CELLS", 0)
        slow = grade(exp, answer, tolerance=tol, mask=mask)  # type: ignore[arg-type]
    assert fast == slow
    assert type(fast.parsed) is type(slow.parsed)


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
