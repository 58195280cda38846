"""The grading fast path (plain numbers and ``a/b`` fractions, added for issue 7's benchmark)
gives exactly what the full tokenizer + parser gives, and leaves every error to the full path."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quizapp.grading import InvalidAnswer, parse_number
from quizapp.grading.parse import _fast_number, _normalize, _Parser

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
