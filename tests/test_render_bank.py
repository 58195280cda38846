"""Every prompt, hint and worked-solution step of the bundled bank renders to clean MathML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quizapp.bank import load_bank
from quizapp.render import render_latex, render_markdown

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")
# latex2mathml leaves these behind when it meets LaTeX it does not understand: a column separator
# or a row break shown as text, or a formula it gave up on.
BROKEN = [
    re.compile(r"<mi>&amp;</mi>"),
    re.compile(r'class="math-error"'),
    re.compile(r"<mspace[^>]*linebreak"),
]


def test_aligned_renders_as_a_table_with_one_row_per_equation() -> None:
    html = render_latex(r"\begin{aligned} 5x + y &= 15 \\ 3x + 2y &= 16 \end{aligned}", True)
    assert html.count("<mtr>") == 2
    assert html.count("<mtd") == 4
    assert "&amp;" not in html


@pytest.mark.parametrize("exercise_id", sorted(BANK.exercises))
def test_bank_exercise_renders_cleanly(exercise_id: str) -> None:
    exercise = BANK.exercises[exercise_id]
    for seed in range(3):
        variant = exercise.generate(seed)
        texts = [variant.prompt, *variant.hints]
        texts += [f"{step.title}\n\n{step.text}" for step in variant.solution]
        for text in texts:
            html = render_markdown(text)
            for pattern in BROKEN:
                assert not pattern.search(html), f"{exercise_id} seed {seed}: {pattern.pattern}"
