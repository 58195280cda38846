"""Worked-solution steps show each intermediate value once: inline when the step's text already
has it (a LaTeX matrix, or the number), otherwise as a block."""

from __future__ import annotations

import numpy as np
from test_web_support import EXERCISES

from quizapp.page import solution_steps, value_in_text


def test_value_in_text() -> None:
    m = np.array([[6.0, -2.0], [6.0, 14.0]])
    assert value_in_text(r"$AB = \begin{pmatrix} 6 & -2 \\ 6 & 14 \end{pmatrix}$.", m)
    assert value_in_text(r"$\begin{bmatrix} 1 \\ 2 \end{bmatrix}$", np.array([1.0, 2.0]))
    assert not value_in_text("Multiply the rows of $A$ by the columns of $B$.", m)
    assert value_in_text("Sum $= 1.406$.", 1.40625)
    assert not value_in_text("Sum $= 11.406$.", 1.40625)
    assert not value_in_text("The sum is positive.", 1.40625)


def test_no_step_of_the_bank_shows_its_matrix_twice() -> None:
    from quizapp.bank import load_bank

    bank = load_bank(EXERCISES)
    checked = 0
    for exercise in bank.exercises.values():
        variant = exercise.generate(1)
        for step, view in zip(variant.solution, solution_steps(variant), strict=True):
            value = getattr(step, "value", None)
            if value is None:
                assert view["value"] is None
                continue
            inline = "matrix}" in (step.text or "") and np.asarray(value).ndim >= 1
            if inline:
                checked += 1
                assert view["value"] is None, (exercise.id, step.title)
                assert "<math" in str(view["text"])
            elif np.asarray(value).ndim >= 1:
                assert view["value"] is not None, (exercise.id, step.title)
    assert checked > 10  # the bank has many steps with their matrix inline
