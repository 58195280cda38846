"""The fixes of the course's second edition (issue 16, "Fix what students hit"), each tried as the
student who hit it: every test here failed before its fix."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from quizapp.bank.answers import grade_answer
from quizapp.bank.loader import load_bank
from quizapp.bank.types import Variant

ROOT = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(ROOT)


def _hint_following_weights(v: Variant) -> list[list[str]]:
    """The fill-in answer of a student who computes every blank but the last of each row by
    the softmax (to 2 decimals) and the last as 1 minus the rest of the row, as the hint says,
    from the given (rounded) entries."""
    exp = np.asarray(v.expected)
    mask = np.asarray(v.context["mask"])
    given = v.answer_form.given
    assert given is not None
    grid = []
    for i in range(exp.shape[0]):
        blanks = [j for j in range(exp.shape[1]) if mask[i, j]]
        typed = {j: round(float(exp[i, j]), 2) for j in blanks[:-1]}
        if blanks:
            rest = sum(float(given[i][k]) for k in range(exp.shape[1]) if not mask[i, k])
            typed[blanks[-1]] = round(1 - rest - sum(typed.values()), 2)
        grid.append(
            [f"{typed[j]:.2f}" if mask[i, j] else str(given[i][j]) for j in range(exp.shape[1])]
        )
    return grid


def test_fill_in_weights_following_the_hint_is_correct() -> None:
    """Following "each row sums to 1" from the given rounded entries was graded wrong in 133 of
    300 variants, with "every entry is 0.9966 times the right value" and "give 2 decimal
    places" on top."""
    ex = BANK.exercises["05-attention/08-fill-in-weights"]
    wrong = []
    for seed in range(300):
        v = ex.generate(seed)
        grid = _hint_following_weights(v)
        text = "[" + ", ".join("[" + ", ".join(row) + "]" for row in grid) + "]"
        for answer in (grid, text):
            verdict = grade_answer(v, answer)
            if verdict.status != "correct":
                wrong.append((seed, verdict.message, verdict.mistake_codes))
    assert wrong == []


def test_fill_in_follow_through_needs_the_rest_of_the_row_right() -> None:
    ex = BANK.exercises["05-attention/08-fill-in-weights"]
    for seed in range(60):
        v = ex.generate(seed)
        mask = np.asarray(v.context["mask"])
        rows = [i for i in range(mask.shape[0]) if mask[i].sum() >= 2]
        if not rows:
            continue
        grid = _hint_following_weights(v)
        i = rows[0]
        j, k = [c for c in range(mask.shape[1]) if mask[i, c]][:2]
        # the student's other blank is wrong by 0.05 and the last one makes the row sum to 1
        grid[i][j] = f"{float(grid[i][j]) + 0.05:.2f}"
        grid[i][k] = f"{float(grid[i][k]) - 0.05:.2f}"
        verdict = grade_answer(v, grid)
        assert verdict.status != "correct", seed
        assert verdict.cells is not None and not verdict.cells[i][j]
