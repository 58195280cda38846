"""LaTeX copied from slides, and text that is not valid UTF-8."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp.grading import InvalidAnswer, grade, parse_answer, parse_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (r"\frac{1}{2}", 0.5),
        (r"\dfrac{3}{4}", 0.75),
        (r"\frac12", 0.5),
        (r"-\frac{1}{3}", -1 / 3),
        (r"\frac{\sqrt{2}}{2}", math.sqrt(2) / 2),
        (r"\frac{e^{2}}{1+e^{2}}", math.e**2 / (1 + math.e**2)),
        (r"\frac{1}{\sqrt{3}}", 1 / math.sqrt(3)),
        (r"\sqrt{2}", math.sqrt(2)),
        (r"\sqrt2", math.sqrt(2)),
        (r"\sqrt[3]{8}", 2.0),
        (r"2 \cdot 3", 6.0),
        (r"2\times 10^{3}", 2000.0),
        (r"1.5 \times 10^{-3}", 1.5e-3),
        (r"6 \div 4", 1.5),
        (r"\pi", math.pi),
        (r"\frac{\pi}{4}", math.pi / 4),
        (r"e^{-1}", math.exp(-1)),
        (r"\exp(1)", math.e),
        (r"\ln(2)", math.log(2)),
        (r"\left(1+2\right)^2", 9.0),
        (r"\left(\frac{1}{2}\right)^{2}", 0.25),
        ("$0.5$", 0.5),
        ("$$0.5$$", 0.5),
        (r"\(0.5\)", 0.5),
        (r"$\frac{1}{4}$", 0.25),
        (r"1\,000.5", 1000.5),
        (r"\displaystyle\frac{1}{8}", 0.125),
    ],
)
def test_simple_latex_numbers(text: str, value: float) -> None:
    assert parse_number(text) == pytest.approx(value, rel=1e-15, abs=0)
    assert grade(str(value), text).status == "correct"


M = [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize(
    "text",
    [
        r"\begin{pmatrix}1&2\\3&4\end{pmatrix}",
        r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}",
        r"$\begin{bmatrix} 1 & 2 \\ 3 & 4 \\ \end{bmatrix}$",
        "\\begin{pmatrix}\n  1 & 2 \\\\\n  3 & 4\n\\end{pmatrix}",
        r"\begin{array}{cc} 1 & 2 \\ 3 & 4 \end{array}",
        r"\left[\begin{matrix} \frac{2}{2} & \sqrt{4} \\ 3 & 2^{2} \end{matrix}\right]",
    ],
)
def test_latex_matrices(text: str) -> None:
    np.testing.assert_array_equal(parse_answer(text), M)
    assert grade(M, text).status == "correct"


def test_latex_transposed_and_vector() -> None:
    t = r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}^T"
    np.testing.assert_array_equal(parse_answer(t), np.array(M).T)
    t = r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}^\top"
    np.testing.assert_array_equal(parse_answer(t), np.array(M).T)
    np.testing.assert_array_equal(parse_answer(r"\begin{pmatrix}1\\2\end{pmatrix}"), [[1.0], [2.0]])
    assert grade("[1, 2]", r"\begin{pmatrix}1 & 2\end{pmatrix}").status == "correct"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (r"\alpha", r"The LaTeX command \alpha is not understood"),
        (r"\frac{1}{2", "not closed"),
        (r"\frac", r"\frac needs its arguments in braces"),
        (r"\frac{1}", r"\frac needs its arguments in braces"),
        (r"\sqrt[3{8}", "not closed"),
        ("1 + $2$", "without '$' signs"),
        ("2\\", "A '\\' ends the answer"),
        ("\\\u00c0", "is not understood"),  # a non-ASCII letter after a backslash
        (r"\frac" * 100 + "11" * 100, "nested too deeply"),
        ("{" * 100 + "1" + "}" * 100, "nested too deeply"),
    ],
)
def test_latex_that_cannot_be_read_says_why(text: str, message: str) -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_number(text)
    assert message in err.value.message
    assert grade("1", text).status == "invalid"


def test_huge_latex_is_refused_fast() -> None:
    start = time.perf_counter()
    for text in ("\\frac" * 60_000, "\\sqrt[" * 50_000, "\\frac{" * 50_000, "\\\\" * 100_000):
        assert grade("1", text).status == "invalid"
        assert grade([[1, 2]], text).status == "invalid"
    assert time.perf_counter() - start < 2.0


_LATEX_BITS = st.sampled_from(
    [
        r"\frac",
        r"\sqrt",
        r"\cdot",
        r"\pi",
        r"\left(",
        r"\right)",
        r"\begin{pmatrix}",
        r"\end{pmatrix}",
        "&",
        r"\\",
        "{",
        "}",
        "[",
        "]",
        "$",
        "1",
        "2",
        "^",
        "e",
        " ",
        r"\x",
        "\\",
    ]
)


@settings(deadline=None, max_examples=300)
@given(st.lists(_LATEX_BITS, max_size=30).map("".join))
def test_random_latex_never_crashes(text: str) -> None:
    v = grade("1", text)
    assert v.status in ("correct", "incorrect", "invalid")
    v = grade(M, text)
    assert v.status in ("correct", "partial", "incorrect", "invalid")


@pytest.mark.parametrize(
    "text,where", [("\udcff", 1), ("1\udcff", 2), ("[1, 2\udc80]", 6), ("\ud800 1", 1)]
)
def test_a_lone_surrogate_is_named_with_its_place(text: str, where: int) -> None:
    """A JSON body's ``"\\ud800 1"`` is valid UTF-8: the message names the code point and
    where it is, not "invalid UTF-8"."""
    code = next(f"U+{ord(c):04X}" for c in text if 0xD800 <= ord(c) <= 0xDFFF)
    for expected in ("1", "[1, 2]"):
        v = grade(expected, text)
        assert v.status == "invalid"
        assert v.message == (
            f"The answer holds {code} at character {where}, a lone surrogate code point, which "
            "is not a character (a broken escape or paste); type it again."
        )
    v = grade([[1, 2]], [["1", "2\udcff"]])
    assert v.status == "invalid" and "U+DCFF at character 2" in v.message


def test_invalid_utf8_bytes() -> None:
    with pytest.raises(InvalidAnswer, match="not valid UTF-8"):
        parse_answer(b"1\xff")
