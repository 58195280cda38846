"""Prompt templates: LaTeX rendering of values, the sandbox, placeholder discovery."""

from __future__ import annotations

import numpy as np
import pytest

from quizapp.bank.template import (
    TemplateError,
    format_number,
    latex,
    placeholder_line,
    placeholders,
    render,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.0, "3"),
        (-2, "-2"),
        (0.25, "0.25"),
        (-0.0, "0"),
        (1 / 3, "0.333333"),
        (2.5e-7, "2.5e-7"),
        (123456.5, "123456.5"),
        (np.float64(4.0), "4"),
        (True, "true"),
    ],
)
def test_format_number(value: object, text: str) -> None:
    assert format_number(value) == text


def test_latex_of_arrays() -> None:
    assert latex(np.array([[1.0, -2.0], [0.5, 4.0]])) == (
        r"\begin{pmatrix} 1 & -2 \\ 0.5 & 4 \end{pmatrix}"
    )
    assert latex(np.array([1.0, 2.0])) == r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"
    assert latex(np.array([1.0, 2.0]), row=True) == r"\begin{pmatrix} 1 & 2 \end{pmatrix}"
    assert latex(2.5e-7) == r"2.5 \times 10^{-7}"
    assert latex([[1, 0], [0, 1]]) == r"\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}"


def test_render_with_filters_and_attributes() -> None:
    x = np.array([1.0, 2.5])
    out = render(
        "$x^T = {{ x | row }}$, $n = {{ x.shape[0] }}$, ${{ M.T }}$", {"x": x, "M": np.eye(2)}
    )
    assert out == (
        r"$x^T = \begin{pmatrix} 1 & 2.5 \end{pmatrix}$, $n = 2$, "
        r"$\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}$"
    )
    assert render("{% if n > 2 %}big{% else %}small{% endif %}", {"n": 3}) == "big"


def test_unknown_placeholder_is_an_error_not_empty_text() -> None:
    with pytest.raises(TemplateError, match="Q"):
        render("Compute {{ Q }}", {"A": 1})


@pytest.mark.parametrize(
    "source",
    [
        "{{ A.__class__ }}",
        "{{ A.tofile('/tmp/x') }}",
        "{{ A.__class__.__mro__[1].__subclasses__() }}",
        "{{ 'x' * 1000000000 }}",
        "{{ 10 ** 10000 }}",
        "{{ range(10**9) | list }}",
        "{{ cycler }}",
        "{{ lipsum() }}",
        "{{ self.__init__.__globals__ }}",
    ],
)
def test_sandbox_refuses_escapes_and_huge_output(source: str) -> None:
    with pytest.raises(TemplateError):
        render(source, {"A": np.eye(2)})


def test_placeholders_and_their_lines() -> None:
    src = "Line one $A = {{ A }}$\n{% for i in range(n) %}{{ i }}{% endfor %}\nand {{ B | row }}"
    assert placeholders(src) == {"A", "n", "B"}
    assert [placeholder_line(src, n) for n in ("A", "n", "B")] == [1, 2, 3]
    with pytest.raises(TemplateError) as info:
        placeholders("ok\n{{ A ")
    assert info.value.line == 2
