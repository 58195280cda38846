"""``display.reflow``: wide formulas laid out for narrow screens, the text and formulas unchanged.

Run over every prompt, hint and worked-solution step of the bundled bank (3 seeds each), and on
small hand-made cases whose expected pieces are written out here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quizapp.bank import load_bank
from quizapp.render import render_markdown
from quizapp.web.display import breakable, reflow

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")
TAG = re.compile(r"<[^>]+>")


def text_of(html: str) -> str:
    """What a reader sees: the text with tags and spaces dropped."""
    return re.sub(r"\s+", "", TAG.sub("", html))


def math_count(html: str) -> int:
    return html.count("<math ")


@pytest.mark.parametrize("exercise_id", sorted(BANK.exercises))
def test_reflow_keeps_every_character_of_the_bank(exercise_id: str) -> None:
    exercise = BANK.exercises[exercise_id]
    for seed in range(3):
        v = exercise.generate(seed)
        for text in [
            v.prompt,
            *v.hints,
            *[s.text for s in v.solution],
            *(v.answer_form.choices or []),
        ]:
            html = render_markdown(text)
            out = str(reflow(html))
            assert text_of(out) == text_of(html), exercise_id
            assert out.count("<mtable") == html.count("<mtable")
            assert str(reflow(out)) == out  # idempotent: reflowing again changes nothing
            assert "xmlns=" not in out.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_a_display_list_of_matrices_becomes_one_formula_per_part() -> None:
    html = render_markdown(
        r"$$ W_Q = \begin{pmatrix} 1 & 2 \end{pmatrix}, \quad W_K = \begin{pmatrix} 3 \end{pmatrix},"
        r" \qquad d = 4. $$"
    )
    out = str(reflow(html))
    assert out.startswith('<div class="math-display math-row">')
    parts = re.findall(r"<math [^>]*>(.*?)</math>", out)
    assert [text_of(p) for p in parts] == ["WQ=(12),", "WK=(3),", "d=4."]
    assert "mspace" not in out  # the \quad spacing is the row's gap now


def test_one_formula_and_short_inline_math_are_left_alone() -> None:
    single = render_markdown(r"$$ \frac{QK^T}{\sqrt{d}} $$")
    assert str(reflow(single)) == single.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")
    short = render_markdown(r"with $d = 4$ and $(c_1, c_2)$")
    assert math_count(str(reflow(short))) == math_count(short) == 2


def test_a_long_inline_formula_breaks_after_commas_and_relations_outside_brackets() -> None:
    html = render_markdown(
        r"The vectors $\mathbf{b}_1 = \begin{pmatrix} 1 \\ 2 \end{pmatrix}, \mathbf{b}_2 = "
        r"\begin{pmatrix} 3 \\ 4 \end{pmatrix}$ and $T(x, y) = (x^2 - 2y,\ -2x + 3y)$."
    )
    out = str(reflow(html))
    parts = [text_of(p) for p in re.findall(r"<math [^>]*>(.*?)</math>", out)]
    # The commas inside (x, y) and inside the pair do not split it.
    assert parts == ["𝐛1=", "(12),", "𝐛2=", "(34)", "T(x,y)=", "(x2−2y, −2x+3y)".replace(" ", "")]


def test_tables_are_wrapped_in_a_scroll_box_once() -> None:
    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |")
    out = str(reflow(html))
    assert out.count('<div class="table-wrap"><table>') == 1
    assert str(reflow(out)).count("table-wrap") == 1


def test_breakable_escapes_and_breaks_only_between_numbers() -> None:
    out = str(breakable("[[-0.7,1.25],[3,<b>]]"))
    assert "<b>" not in out and "&lt;b&gt;" in out
    assert out.replace("<wbr>", "") == "[[-0.7,1.25],[3,&lt;b&gt;]]"
    pieces = out.split("<wbr>")
    assert "-0.7," in pieces[0] + pieces[1] and all("0.<" not in p for p in pieces)
