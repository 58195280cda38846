"""Display clean-ups: float noise shown as 0, mistakes listed once, sensible elimination steps."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from quizapp.bank.answers import grade_answer
from quizapp.bank.loader import load_bank
from quizapp.bank.template import format_number, latex
from quizapp.cli import main

ROOT = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(ROOT)


def test_noise_displays_as_zero() -> None:
    assert format_number(-3.98552e-18) == "0"
    assert format_number(0.1 + 0.2) == "0.3"
    assert format_number(2.5e-7) == "2.5e-7"  # a real small value is kept
    assert (
        latex(np.array([[1.0, 1.4874168143337463e-17]])) == r"\begin{pmatrix} 1 & 0 \end{pmatrix}"
    )


def test_rotation_preview_has_no_noise_but_expected_is_unchanged(tmp_path: Path) -> None:
    # R^T R of a rotation (the first edition's 04-rotation, whose variants students have)
    old = Path(__file__).resolve().parent / "golden" / "bank" / "03-transpose-and-products"
    quiz = tmp_path / "03-transpose-and-products"
    quiz.mkdir()
    (quiz / "quiz.yaml").write_text("title: Q\n")
    # (its {rtol: 0.01, atol: 0.01} no longer agrees with "2 decimal places" for a file being
    # written, so the copy says {decdig: 2}: the draws and the preview do not depend on it)
    text = (old / "04-rotation.yaml").read_text()
    assert "tolerance: {rtol: 0.01, atol: 0.01}" in text
    text = text.replace("tolerance: {rtol: 0.01, atol: 0.01}", "tolerance: {decdig: 2}")
    (quiz / "04-rotation.yaml").write_text(text)
    ex = load_bank(tmp_path).exercises["03-transpose-and-products/04-rotation"]
    for seed in range(10):
        result = CliRunner().invoke(
            main, ["preview", ex.id, "--seed", str(seed), "--bank", str(tmp_path)]
        )
        assert result.exit_code == 0
        assert not re.search(r"\de-1\d", result.output), result.output
    v = ex.generate(0)
    noise = (np.abs(v.expected) > 0) & (np.abs(v.expected) < 1e-12)
    assert np.any(noise)  # the graded value is NumPy's, noise and all: only display is cleaned


def test_each_mistake_is_listed_once() -> None:
    v = BANK.exercises["01-linear-systems/04-two-solutions"].generate(2)
    a, c = v.context.get("A"), v.context.get("c")
    verdict = grade_answer(v, "(5, 1)\n(1, -2)")
    codes = [m.code for m in verdict.mistakes]
    assert codes.count("swapped_unknowns") == 1, (codes, a, c)


def test_elimination_uses_the_smallest_multipliers() -> None:
    ex = BANK.exercises["01-linear-systems/06-two-by-two"]
    seen_equal = False
    for seed in range(200):
        v = ex.generate(seed)
        (a, b), (c, d) = v.context["A"]
        e, f = v.context["y"]
        step = next(s.text for s in v.solution if "Eliminate" in s.title or "Eliminate" in s.text)
        if b == d:
            seen_equal = True
            assert "subtract the second equation from the first" in step
            assert "Multiply" not in step
        if b == -d:
            assert "add the two equations" in step and "Multiply" not in step
        m = re.search(r"\$(-?\d*)x = (-?\d+)\$", step)
        assert m, step
        coef = {"": 1, "-": -1}.get(m.group(1), None) or int(m.group(1))
        g = math.gcd(int(abs(b)), int(abs(d)))
        if b and d:
            assert abs(coef) == abs(a * d - b * c) / g, step
        assert coef * v.expected[0] == int(m.group(2))
    assert seen_equal
