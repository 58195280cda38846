"""``expression_latex``: an expression exercise's worked solution names each step by its
formula, as math, not as code.  Each case's LaTeX is written out here; every expression of the
bundled bank converts, renders to MathML without errors, and its steps carry no backticks."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizapp.bank import load_bank
from quizapp.bank.expression_latex import expression_latex
from quizapp.render import render_latex, render_markdown

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")

CASES = [
    ("q @ K.T / sqrt(4)", r"\frac{q K^{T}}{\sqrt{4}}"),
    ("softmax(x - c)", r"\mathrm{softmax}\left(x - c\right)"),
    ("transpose(A)", "A^{T}"),
    ("inv(A) @ b", "A^{-1} b"),
    ("(A @ B).T", r"\left(A B\right)^{T}"),
    ("det(A)", r"\det\left(A\right)"),
    ("Q = X @ W_Q", "Q = X W_{Q}"),
    ("a - (b - c)", r"a - \left(b - c\right)"),
    ("(a + b) ** 2", r"\left(a + b\right)^{2}"),
    ("a ** b ** c", "a^{b^{c}}"),
    ("-(a + b) * c", r"-\left(a + b\right) \cdot c"),
    ("softmax(S, axis=0)", r"\mathrm{softmax}\left(S, \mathrm{axis}=0\right)"),
    ("abs(x) + exp(y) + log(z)", r"\left|x\right| + \exp\left(y\right) + \ln\left(z\right)"),
    ("alpha * x_1 + pi", r"\alpha \cdot x_{1} + \pi"),
    ("A[0, 1] + A[:, 0]", "A[0, 1] + A[:, 0]"),
    ("1e-3 * x", r"0.001 \cdot x"),
    ("x if x > 0 else -x", r"x \text{ if } x > 0 \text{ else } -x"),
]


@pytest.mark.parametrize(("text", "latex"), CASES)
def test_expressions_become_latex(text: str, latex: str) -> None:
    assert expression_latex(text) == latex
    assert "math-error" not in render_latex(latex, False)


def test_text_that_is_not_an_expression_is_shown_in_monospace() -> None:
    assert expression_latex("a $ b_c") == r"\mathtt{a \$ b\_c}"


def _expression_exercises() -> list[str]:
    return sorted(e for e, ex in BANK.exercises.items() if ex.spec.kind == "expression")


@pytest.mark.parametrize("exercise_id", _expression_exercises())
def test_expression_solutions_are_math(exercise_id: str) -> None:
    for seed in range(3):
        variant = BANK.exercises[exercise_id].generate(seed)
        for step in variant.solution:
            assert "`" not in step.title and "`" not in step.text, (exercise_id, step.title)
            for text in (step.title, step.text):
                html = render_markdown(text)
                assert "math-error" not in html and "<code" not in html, (exercise_id, text)
        # each computed intermediate step is named by its formula (the author's explanation
        # steps, which come first, by their own titles)
        if variant.parts:  # each part's steps likewise, ending with the part's answer
            for part in variant.parts:
                for step in part.solution[:-1]:
                    assert "<math" in render_markdown(step.title), (exercise_id, step.title)
                assert part.solution[-1].title == "Answer"
            continue
        authored = len(BANK.exercises[exercise_id].params.explanation)
        for step in variant.solution[authored:-1]:
            assert "<math" in render_markdown(step.title), (exercise_id, step.title)
        assert variant.solution[-1].title == "Answer"


def test_there_are_expression_exercises() -> None:
    assert len(_expression_exercises()) >= 5
