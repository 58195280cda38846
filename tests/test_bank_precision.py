"""Every prompt states the precision expected, and the tolerance accepts an answer given so.

The statement is read from the rendered prompt (the machine-readable hint is the phrase
itself): "N decimal places" -> the expected answer rounded to N decimals; "N significant
figures" -> rounded to N significant figures; "exact" (with no digits stated) -> each value
typed as a fraction p/q (denominator at most 1000) or an integer.  Exercises whose answer is an
option or a position (choice, index) are exempt.  50 seeds per exercise.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from quizapp.bank.answers import grade_answer
from quizapp.bank.loader import load_bank
from quizapp.bank.types import Variant

ROOT = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(ROOT)
DECIMALS = re.compile(r"(\d+) decimal places?", re.IGNORECASE)
SIGFIGS = re.compile(r"(\d+) significant (?:figures?|digits?)", re.IGNORECASE)
EXACT = re.compile(r"\bexact", re.IGNORECASE)
NUMERIC = sorted(
    ex.id
    for ex in BANK.exercises.values()
    if ex.generate(0).answer_form.type not in ("choice", "index")
)


def stated_precision(prompt: str) -> tuple[str, int]:
    """("decimals", N), ("sigfig", N) or ("exact", 0) from the prompt; AssertionError if the
    prompt states none, or two different ones."""
    found = {("decimals", int(n)) for n in DECIMALS.findall(prompt)}
    found |= {("sigfig", int(n)) for n in SIGFIGS.findall(prompt)}
    if not found and EXACT.search(prompt):
        found = {("exact", 0)}
    assert len(found) == 1, f"the prompt must state one precision, found {found}:\n{prompt}"
    return found.pop()


def _cell(x: float, how: tuple[str, int]) -> str:
    mode, n = how
    if mode == "decimals":
        return f"{round(x, n):.{n}f}"
    if mode == "sigfig":
        return f"{float(f'{x:.{n}g}')!r}" if x else "0"
    frac = Fraction(x).limit_denominator(1000)
    assert abs(float(frac) - x) < 1e-9, f"{x} is not a simple fraction, but the prompt says exact"
    return str(frac)


def rounded_text(v: Variant, how: tuple[str, int]) -> str:
    exp = np.asarray(v.expected, dtype=float)
    if v.answer_form.type == "point_on_line":
        pts = exp.reshape(v.answer_form.count, -1)
        return "\n".join("(" + ", ".join(_cell(x, how) for x in p) + ")" for p in pts)
    if exp.ndim == 0:
        return _cell(float(exp), how)
    if exp.ndim == 1:
        return "[" + ", ".join(_cell(x, how) for x in exp) + "]"
    return "[" + ", ".join("[" + ", ".join(_cell(x, how) for x in r) + "]" for r in exp) + "]"


def test_the_rule_reads_prompts() -> None:
    assert stated_precision("to 2 decimal places (fractions such as 1/7 are fine)") == (
        "decimals",
        2,
    )
    assert stated_precision("Give exact values.") == ("exact", 0)
    assert stated_precision("to 3 significant figures") == ("sigfig", 3)
    with pytest.raises(AssertionError):
        stated_precision("Compute it.")


@pytest.mark.parametrize("exercise_id", NUMERIC)
def test_answer_rounded_as_the_prompt_says_is_correct(exercise_id: str) -> None:
    from quizapp.bank.parts import part_variant

    ex = BANK.exercises[exercise_id]
    for seed in range(50):
        v = ex.generate(seed)
        if v.parts:  # each part states its own precision and is rounded as it says
            how = {p.name: stated_precision(p.prompt) for p in v.parts}
            text = {
                p.name: rounded_text(part_variant(v, p), how[p.name])
                for p in v.parts
                if p.answer_form.type not in ("choice", "index")
            }
        else:
            how = stated_precision(v.prompt)
            text = rounded_text(v, how)
        verdict = grade_answer(v, text)
        assert verdict.status == "correct", (
            f"{exercise_id} seed {seed}: {text!r} (rounded as the prompt says: {how}) is "
            f"{verdict.status}; expected {v.expected!r}"
        )


def test_reported_case_two_decimals_is_correct() -> None:
    ex = BANK.exercises["03-transpose-and-products/13-solve-with-inverse"]
    v = ex.generate(5)
    assert np.allclose(v.expected, [-1 / 7, -5 / 21])
    assert grade_answer(v, "[-0.14, -0.24]").status == "correct"
