"""The answer parser: accepted syntax, every invalid-answer message, limits, and property tests."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp.grading import InvalidAnswer, parse_answer, parse_number
from quizapp.grading.parse import MAX_ANSWER_CHARS, MAX_CELL_CHARS, MAX_CELLS, MAX_NESTING

# ---------------------------------------------------------------- numbers and expressions


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3.0),
        ("-2", -2.0),
        ("+4", 4.0),
        ("0.5", 0.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("  7  ", 7.0),
        ("1e-3", 1e-3),
        ("2.5E4", 2.5e4),
        ("1.5E+2", 150.0),
        ("1.5*10^3", 1500.0),
        ("1.5 * 10 ^ 3", 1500.0),
        ("1.5×10^3", 1500.0),
        ("1.5 × 10^3", 1500.0),
        ("1.5·10^3", 1500.0),
        ("1.5⋅10^3", 1500.0),
        ("1.5x10^3", 1500.0),
        ("1.5 X 10^3", 1500.0),
        ("1.5*10**3", 1500.0),
        ("1.38*10^-1", 0.138),
        ("1.38×10^−1", 0.138),
        ("1.5·10³", 1500.0),
        ("10⁻³", 1e-3),
        ("10^{-3}", 1e-3),
        ("2^3", 8.0),
        ("2**3", 8.0),
        ("2^3^2", 2.0**9),  # right-associative
        ("-2^2", -4.0),  # power binds tighter than the sign
        ("2^-1", 0.5),
        ("1/3", 1 / 3),
        ("-2/5", -0.4),
        ("1/2/4", 0.125),  # left-associative
        ("2*3+4*5", 26.0),
        ("(1+2)*3", 9.0),
        ("sqrt(2)/2", math.sqrt(2) / 2),
        ("√2", math.sqrt(2)),
        ("e^2/(1+e^2)", math.e**2 / (1 + math.e**2)),
        ("exp(1)/(exp(1)+exp(2))", math.e / (math.e + math.e**2)),
        ("pi/4", math.pi / 4),
        ("π/4", math.pi / 4),
        ("PI", math.pi),
        ("ln(2)", math.log(2)),
        ("log(2)", math.log(2)),  # natural logarithm
        ("log10(1000)", 3.0),
        ("sin(0)", 0.0),
        ("cos(0)", 1.0),
        ("abs(-3)", 3.0),
        ("2pi", 2 * math.pi),
        ("2sqrt(2)", 2 * math.sqrt(2)),
        ("2(3+1)", 8.0),
        ("(1+2)(3+4)", 21.0),
        ("½", 0.5),
        ("３", 3.0),  # full-width digit
        ("0^0", 1.0),
        ("1e-400", 0.0),  # underflow is not an error
    ],
)
def test_parse_number_accepts(text: str, value: float) -> None:
    assert parse_number(text) == pytest.approx(value, rel=1e-15, abs=0)


@pytest.mark.parametrize(
    "dash", ["\u2212", "\u2013", "\u2014", "\u2010", "\u2011", "\u2012", "\ufe63", "\uff0d"]
)
def test_every_unicode_dash_is_a_minus(dash: str) -> None:
    assert parse_number(f"{dash}3") == -3.0
    assert parse_number(f"5{dash}2") == 3.0
    assert parse_number(f"1e{dash}3") == 1e-3


def test_minus_zero_parses_as_zero() -> None:
    assert parse_number("-0.0") == 0.0
    assert parse_number("−0") == 0.0


def test_invisible_characters_and_odd_spaces_are_ignored() -> None:
    assert parse_number("\u200b3\ufeff") == 3.0
    assert parse_number("\u00a0 3\u2009") == 3.0


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("1,5", "Use a point for decimals: write 1.5"),
        ("1,000", "Use a point for decimals"),
        ("1 e10", "not a number: write scientific notation without spaces"),
        ("1e 10", "not a number: write scientific notation without spaces"),
        ("1 000", "space inside a number"),
        ("1 2", "space inside a number"),
        ("2e", "not a number"),
        ("e10", "'e10' is not a number"),
        ("NaN", "'NaN' (not a number) is not accepted"),
        ("nan", "not accepted"),
        ("inf", "Infinity is not accepted"),
        ("-Infinity", "Infinity is not accepted"),
        ("∞", "Infinity is not accepted"),
        ("2/0", "Division by zero."),
        ("1/(1-1)", "Division by zero."),
        ("0^-1", "Division by zero"),
        ("9^9^9", "too large"),
        ("10^10000", "too large"),
        ("1e999", "too large"),
        ("exp(1000)", "too large"),
        ("1e308*10", "too large"),
        ("(-8)^(1/3)", "negative number to a fractional power"),
        ("sqrt(-1)", "square root of a negative number"),
        ("ln(0)", "logarithm of zero or of a negative number"),
        ("log(-1)", "logarithm of zero or of a negative number"),
        ("one", "Unknown name 'one'"),
        ("x", "Unknown name 'x'"),
        ("__import__('os').getcwd()", "is not allowed in a number"),
        ("1;2", "is not allowed in a number"),
        ("2 pi", "a space does not multiply"),
        ("1/2pi", "ambiguous"),
        ("sqrt 2", "Write sqrt(...) with parentheses"),
        ("ln2", "Write ln(2) with parentheses"),
        ("sqrt()", "needs an argument"),
        ("()", "Empty parentheses"),
        ("(1+2", "not closed"),
        ("1+2)", "no matching opening parenthesis"),
        ("1+", "ends too early"),
        ("*3", "not expected here"),
        ("2^^3", "Two powers"),
        ("50%", "write 50% as 0.5"),
        ("x = 3", "without '='"),
        ("1\x002", "U+0000"),
        ("\ud800", "U+D800 at character 1, a lone surrogate code point"),  # a JSON escape
    ],
)
def test_parse_number_rejects_with_message(text: str, fragment: str) -> None:
    with pytest.raises(InvalidAnswer) as info:
        parse_number(text)
    assert fragment in info.value.message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "text",
    [
        "9^9^9",
        "10^10000",
        "2^2^2^2^2^2^2^2^2^2",
        "(" * 5000 + "1" + ")" * 5000,
        "-" * 5000 + "1",
        "9" * 1_000_000,
        "1+" * 400_000 + "1",
        "(" * 400 + "1" + ")" * 400,
        "exp(" * 100 + "1" + ")" * 100,
    ],
)
def test_hostile_input_is_invalid_within_milliseconds(text: str) -> None:
    start = time.perf_counter()
    with pytest.raises(InvalidAnswer):
        parse_number(text)
    with pytest.raises(InvalidAnswer):
        parse_answer(text)
    assert time.perf_counter() - start < 0.5


def test_nesting_limit_is_explicit() -> None:
    ok = "(" * (MAX_NESTING - 2) + "1" + ")" * (MAX_NESTING - 2)
    assert parse_number(ok) == 1.0
    deep = "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1)
    with pytest.raises(InvalidAnswer, match="nested too deeply"):
        parse_number(deep)


def test_length_limits_are_explicit() -> None:
    with pytest.raises(InvalidAnswer, match="too long"):
        parse_number("1" * (MAX_CELL_CHARS + 1))
    with pytest.raises(InvalidAnswer, match="too long"):
        parse_answer("1 " * (MAX_ANSWER_CHARS // 2 + 1))
    with pytest.raises(InvalidAnswer, match="too many entries"):
        parse_answer([["1"] * 101] * 100)
    assert MAX_CELLS == 10_000


def test_parse_number_requires_text() -> None:
    with pytest.raises(InvalidAnswer, match="must be text"):
        parse_number(5)  # type: ignore[arg-type]


# ---------------------------------------------------------------- vectors and matrices


M = np.array([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    "text",
    [
        "[[1, 2], [3, 4]]",
        "[[1,2],[3,4]]",
        "[[1 2] [3 4]]",
        "[[1. 2.]\n [3. 4.]]",  # NumPy's print
        "[1 2; 3 4]",
        "[1, 2; 3, 4]",
        "[1 2\n3 4]",
        "[1 2; 3 4;]",
        "1 2\n3 4",
        "1 2\n3 4\n\n",
        "\n1 2\r\n3 4\r\n",
        "1, 2\n3, 4",
        "1\t2\n3\t4\n",
        " 1 \t 2 \n 3 \t 4 ",
        "1 2; 3 4",
        "[ 1  2 ;  3  4 ]",
        "[2/2 4/2; sqrt(9) 2^2]",
        "[1 +2; 3 +4]",
    ],
)
def test_matrix_forms(text: str) -> None:
    got = parse_answer(text)
    assert got.shape == (2, 2)
    np.testing.assert_array_equal(got, M)


def test_grid_of_cells() -> None:
    np.testing.assert_array_equal(parse_answer([["1", " 2 "], ["3", "2^2"]]), M)
    np.testing.assert_array_equal(parse_answer((("1", "2"),)), [[1.0, 2.0]])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2, 3]", [1.0, 2.0, 3.0]),
        ("[1 2 3]", [1.0, 2.0, 3.0]),
        ("1, 2, 3", [1.0, 2.0, 3.0]),
        ("1 2 3", [1.0, 2.0, 3.0]),
        ("(1, 2, 3)", [1.0, 2.0, 3.0]),
        ("[1, -2]", [1.0, -2.0]),
        ("[1 -2]", [1.0, -2.0]),  # MATLAB: space then a sign starts a new entry
        ("[1 - 2]", [-1.0]),  # spaces on both sides: subtraction
        ("[1-2]", [-1.0]),
        ("[1 -2 +3]", [1.0, -2.0, 3.0]),
        ("[2 * 3 4]", [6.0, 4.0]),
        ("[1.5 ×10^3 2]", [1500.0, 2.0]),
        ("[sqrt(2) (1+1)]", [math.sqrt(2), 2.0]),
        ("[exp(1) -exp(1)]", [math.e, -math.e]),
        ("[5]", [5.0]),
        ("1,5", [1.0, 5.0]),  # in a vector a comma separates entries
    ],
)
def test_vector_forms(text: str, expected: list[float]) -> None:
    got = parse_answer(text)
    assert got.ndim == 1
    np.testing.assert_allclose(got, expected, rtol=1e-15)


def test_column_and_scalar_forms() -> None:
    col = parse_answer("[15; 16]")
    assert col.shape == (2, 1)
    np.testing.assert_array_equal(col, [[15.0], [16.0]])
    assert parse_answer("15\n16").shape == (2, 1)
    scalar = parse_answer(" 3.5 ")
    assert scalar.shape == () and float(scalar) == 3.5
    assert parse_answer("[[1, 2]]").shape == (1, 2)


@pytest.mark.parametrize(
    ("answer", "message", "row", "column"),
    [
        ("[[1,2],[3]]", "Row 2 has 1 entry, row 1 has 2.", 2, None),
        ("1 2\n3 4 5", "Row 2 has 3 entries, row 1 has 2.", 2, None),
        ("[[1,2],[,4]]", "Row 2, column 1 is empty.", 2, 1),
        ("1\t\t3\n4\t5\t6", "Row 1, column 2 is empty.", 1, 2),
        ("1\t2\n3\t", "Row 2, column 2 is empty.", 2, 2),
        ([["1", "2"], ["", "4"]], "Row 2, column 1 is empty.", 2, 1),
        ([["1", "2"], [None, "4"]], "Row 2, column 1 is empty.", 2, 1),
        ([["1", "2"], ["3", 4]], "Row 2, column 2 is not text.", 2, 2),
        ([["1", "2"], ["3", ["4"]]], "Row 2, column 2 is not text.", 2, 2),
        ([["1", "2"], "34"], "Row 2 is not a list of cells.", 2, None),
        ([["1", "2"], []], "Row 2 is empty.", 2, None),
        ([], "The answer is empty.", None, None),
        ("[1, , 3]", "Entry 2 is empty.", None, 2),
        ("[1, x]", "Entry 2: Unknown name 'x'", None, 2),
        ("[[1, 2], [3, 2/0]]", "Row 2, column 2: Division by zero.", 2, 2),
        ("[]", "The answer is empty.", None, None),
        ("[[]]", "Row 1 is empty.", 1, None),
        ("[1, 2", "not closed", None, None),
        ("1, 2]", "brackets do not match", None, None),
        ("[[1, 2], [3, 4]", "not closed", None, None),
        ("[[[1]]]", "Too many brackets", None, None),
        ("[[1, 2] x [3, 4]]", "between rows", None, None),
        ("[1, 2 3]", "Entry 2: There is a space inside a number", None, 2),
        ("1,5 2,5", "Use a point for decimals", None, None),
        (b"\xff\xfe", "not valid UTF-8", None, None),
        (42, "must be text or a grid", None, None),
    ],
)
def test_parse_answer_messages(
    answer: object, message: str, row: int | None, column: int | None
) -> None:
    with pytest.raises(InvalidAnswer) as info:
        parse_answer(answer)  # type: ignore[arg-type]
    assert message in info.value.message
    assert (info.value.row, info.value.column) == (row, column)


def test_blank_cells_allowed_on_request() -> None:
    got = parse_answer([["1", ""], ["", "4"]], allow_blank=True)
    assert np.isnan(got[0, 1]) and np.isnan(got[1, 0])
    assert got[0, 0] == 1.0 and got[1, 1] == 4.0


def test_deeply_nested_grid_is_refused_without_recursion() -> None:
    deep: object = "1"
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(InvalidAnswer, match="not text"):
        parse_answer(deep)  # type: ignore[arg-type]


def test_huge_grid_is_refused() -> None:
    """A million-cell grid is refused after reading at most MAX_CELLS cells plus one row (the
    work is bounded by the limit, not by the size of what was posted; counted, not timed)."""
    from quizapp.grading.parse import MAX_CELLS

    touched = [0]

    class CountingRow(list):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            for cell in super().__iter__():
                touched[0] += 1
                yield cell

    width = 1000
    with pytest.raises(InvalidAnswer, match="too many entries"):
        parse_answer([CountingRow(["1"] * width) for _ in range(1000)])
    assert touched[0] <= MAX_CELLS + width


# ---------------------------------------------------------------- properties


@settings(deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_repr_of_any_float_parses_back_to_itself(x: float) -> None:
    assert parse_number(repr(x)) == x
    assert parse_number(repr(x).replace("-", "\u2212")) == x


@settings(deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64), st.sampled_from(["e", "E"]))
def test_scientific_notation_forms_agree(x: float, e: str) -> None:
    mantissa, _, exponent = f"{x:.6e}".partition("e")
    plain = float(f"{mantissa}e{exponent}")
    assert parse_number(f"{mantissa}{e}{exponent}") == plain
    if abs(int(exponent)) < 300:
        assert parse_number(f"{mantissa}*10^{int(exponent)}") == pytest.approx(plain, rel=1e-14)
        assert parse_number(f"{mantissa}×10^({int(exponent)})") == pytest.approx(plain, rel=1e-14)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_raise_anything_but_invalid(data: bytes) -> None:
    for text in (data.decode("latin-1"), data.decode("utf-8", errors="surrogateescape")):
        for fn in (parse_number, parse_answer):
            try:
                value = fn(text)
            except InvalidAnswer as exc:
                assert exc.message
            else:
                assert np.isfinite(np.asarray(value)).all()


def _invalid_or_finite(text: str) -> None:
    try:
        value = parse_answer(text)
    except InvalidAnswer as exc:
        assert exc.message
    else:
        assert np.isfinite(value).all()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(), max_size=80))
def test_random_text_never_raises_anything_but_invalid(text: str) -> None:
    _invalid_or_finite(text)


_SYMBOLS = st.sampled_from(list("0123456789.+-*/^()[],; \t\neE") + ["pi", "sqrt(", "**", "×"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_SYMBOLS, max_size=40).map("".join))
def test_random_formulas_never_raise_anything_but_invalid(text: str) -> None:
    _invalid_or_finite(text)


@settings(deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_fast_path_agrees_with_the_parser(x: float) -> None:
    text = repr(x)
    assert parse_number(text) == parse_number(f"({text})") == x
    assert parse_number(f"+{text}") == x


def test_middle_dot_between_digits_is_ambiguous() -> None:
    with pytest.raises(InvalidAnswer, match="raised dot between digits is ambiguous"):
        parse_number("1·5")
    assert parse_number("1.5·10^3") == 1500.0
    assert parse_number("2·10³") == 2000.0
    assert parse_number("2 · 3") == 6.0
    assert parse_number("1⋅5") == 5.0  # the dot operator is unambiguous


@pytest.mark.parametrize("text", ["[1 e-3]", "[2 1 e10]", "1.5 E3 2", "1 2\n3 4 e5"])
def test_space_inside_scientific_notation_in_a_matrix(text: str) -> None:
    with pytest.raises(InvalidAnswer, match="write scientific notation without spaces"):
        parse_answer(text)


def test_unicode_fractions_and_subscripts() -> None:
    assert parse_number("½") == 0.5
    assert parse_number("3/¼") == 12.0
    np.testing.assert_array_equal(parse_answer("[½ ¼]"), [0.5, 0.25])
    with pytest.raises(InvalidAnswer, match=r"Write a mixed number such as 2¾ as 2\+3/4"):
        parse_number("2¾")  # NFKC alone would read it as 23/4
    with pytest.raises(InvalidAnswer, match="Subscript digits"):
        parse_number("10₂")


@pytest.mark.parametrize("caret", ["\u02c6", "\u02c4", "\u2038", "\u2303", "\uff3e"])
def test_circumflex_look_alikes_are_powers(caret: str) -> None:
    assert parse_number(f"2{caret}3") == 8.0
