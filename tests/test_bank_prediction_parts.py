"""The graded predictions: 15-transpose-is-not-the-inverse asks "is A^T the inverse of A?" and
the answer is yes in some variants (A orthogonal) and no in others; 13-softmax-saturation grades
which entry its softmax saturates on.  Expected values are computed here with NumPy.  Also the
part-level ``mistakes:`` and ``explanation:`` these exercises use."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from quizapp.bank.answers import grade_answer
from quizapp.bank.loader import load_bank, load_exercise_source

ROOT = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(ROOT)
TRANSPOSE = "03-transpose-and-products/15-transpose-is-not-the-inverse"
SATURATION = "04-retrieval-and-softmax/13-softmax-saturation"


def _vec(a) -> str:
    return " ".join(f"{float(x):.12g}" for x in np.ravel(a))


def test_the_transpose_prediction_is_yes_in_some_variants_and_no_in_others() -> None:
    ex = BANK.exercises[TRANSPOSE]
    answers = []
    for seed in range(200):
        v = ex.generate(seed)
        A = np.asarray(v.values["A"], dtype=float)
        x = np.asarray(v.values["x"], dtype=float)
        orthogonal = bool(np.allclose(A @ A.T, np.eye(2), atol=1e-12))
        parts = {p.name: p for p in v.parts}
        assert float(parts["P"].expected) == (1.0 if orthogonal else 0.0), seed
        np.testing.assert_allclose(parts["y"].expected, A.T @ (A @ x), atol=1e-12)
        if orthogonal:  # exact entries: integers or fifths (3/5, 4/5)
            assert np.allclose(A * 5, np.round(A * 5)), seed
            np.testing.assert_allclose(parts["y"].expected, x, atol=1e-12)
        text = "\n".join(step.text for step in v.solution)
        assert ("The answer is yes (1)." in text) == orthogonal, seed
        assert ("The answer is no (0)." in text) == (not orthogonal), seed
        codes = [c for c, *_ in parts["y"].context["authored_mistakes"]]
        if not orthogonal:  # every mistake of y told apart where A^T does not undo A
            assert codes == ["transpose_as_inverse", "only_ax", "wrong_order"], seed
        answers.append(orthogonal)
    assert 0.3 < np.mean(answers) < 0.7  # both answers, about half each


def test_the_transpose_prediction_is_graded_and_its_mistakes_named() -> None:
    ex = BANK.exercises[TRANSPOSE]
    seeds: dict[bool, int | None] = {True: None, False: None}
    for seed in range(100):
        v = ex.generate(seed)
        A = np.asarray(v.values["A"], dtype=float)
        key = bool(np.allclose(A.T @ A, np.eye(2)))
        if seeds[key] is None:
            seeds[key] = seed
    for orthogonal, seed in seeds.items():
        assert seed is not None
        v = ex.generate(seed)
        A = np.asarray(v.values["A"], dtype=float)
        x = np.asarray(v.values["x"], dtype=float)
        right = {"P": "1" if orthogonal else "0", "y": _vec(A.T @ (A @ x))}
        assert grade_answer(v, right).status == "correct"
        wrong = grade_answer(v, {"P": "0" if orthogonal else "1", "y": _vec(x)})
        assert wrong.parts["P"].status == "incorrect"
        if orthogonal:  # x is right: A^T undoes A
            assert wrong.parts["y"].status == "correct"
        else:
            assert wrong.parts["y"].mistake_codes == ["transpose_as_inverse"]


def test_the_saturation_prediction_is_graded_with_a_named_mistake() -> None:
    ex = BANK.exercises[SATURATION]
    named = 0
    for seed in range(60):
        v = ex.generate(seed)
        x = np.asarray(v.values["x"], dtype=float)
        c = float(v.values["c"])
        e = np.exp(c * x - np.max(c * x))
        weights = e / e.sum()
        parts = {p.name: p for p in v.parts}
        assert [p.name for p in v.parts] == ["P", "W"]
        assert parts["P"].expected == int(np.argmax(weights)) + 1 == int(np.argmax(x)) + 1
        np.testing.assert_allclose(parts["W"].expected, weights, atol=1e-12)
        assert weights.max() >= 0.85
        biggest = int(np.argmax(np.abs(x))) + 1
        if biggest != parts["P"].expected:
            got = grade_answer(v, {"P": str(biggest), "W": _vec(np.round(weights, 2))})
            assert got.parts["P"].mistake_codes == ["largest_magnitude"], seed
            assert got.parts["W"].status == "correct"
            named += 1
        e_x = np.exp(x - x.max())
        flat = np.round(e_x / e_x.sum(), 2)
        got = grade_answer(v, {"P": str(parts["P"].expected), "W": _vec(flat)})
        assert got.parts["W"].mistake_codes == ["temperature_ignored"], seed
    assert named > 0


PART_MISTAKES = """\
title: t
kind: expression
variables:
  a: {integers: [2, 5]}
prompt: "Let $a = {{ a }}$."
parts:
  - name: s
    prompt: "Compute $a^2$. Give exact values."
    answer: a ** 2
    explanation:
      - {title: Why, text: "Square {{ a }}."}
    mistakes:
      - {code: doubled, answer: 2 * a, message: "That is 2a = {{ 2 * a }}, not a squared."}
      - {code: same, answer: a * a, message: never named}
  - name: t
    prompt: "Compute $s + 1$. Give exact values."
    answer: s + 1
    mistakes:
      - {code: forgot_one, answer: s, message: Add 1.}
"""


def test_a_part_names_its_own_mistakes_and_heads_its_solution() -> None:
    ex = load_exercise_source("q/part-mistakes", PART_MISTAKES)
    v = ex.generate(1)
    a = int(v.values["a"])
    assert v.parts[0].solution[0].title == "Why" and f"Square {a}." in v.parts[0].solution[0].text
    # "same" gives the answer: not named
    assert [c for c, *_ in v.parts[0].context["authored_mistakes"]] == ["doubled"]
    got = grade_answer(v, {"s": str(2 * a), "t": str(a * a)})
    assert got.parts["s"].mistake_codes == ["doubled"]
    assert any(f"2a = {2 * a}" in m.message for m in got.parts["s"].mistakes)
    assert got.parts["t"].mistake_codes == ["forgot_one"]
