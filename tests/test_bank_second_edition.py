"""The fixes of the course's second edition (issue 16, "Fix what students hit"), each tried as the
student who hit it: every test here failed before its fix."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

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


def test_a_row_that_does_not_sum_to_one_is_told_its_sum_as_the_student_adds_it() -> None:
    """The message "row 2 sums to 0.931" for a row a student adds up to 0.93 (the given entries are shown to
    2 decimals): the sum is written to the decimals the answer is asked in."""
    ex = BANK.exercises["05-attention/08-fill-in-weights"]
    told = 0
    for seed in range(40):
        v = ex.generate(seed)
        grid = _hint_following_weights(v)
        mask = np.asarray(v.context["mask"])
        i = next((r for r in range(mask.shape[0]) if mask[r].any()), None)
        if i is None:
            continue
        j = int(np.nonzero(mask[i])[0][0])
        grid[i][j] = f"{float(grid[i][j]) + 0.07:.2f}"  # the row now sums to about 1.07
        verdict = grade_answer(v, grid)
        m = re.search(
            r"row (\d+) sums to ([-\d.]+)\)", " ".join(m.message for m in verdict.mistakes)
        )
        if m is None:
            continue
        told += 1
        row = int(m.group(1)) - 1
        assert re.fullmatch(r"-?\d+\.\d{2}", m.group(2)), m.group(2)
        as_added = sum(float(c) for c in grid[row])  # the entries as shown and typed
        assert float(m.group(2)) == pytest.approx(as_added, abs=0.0101)
    assert told >= 10


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


def _text(a: np.ndarray) -> str:
    a = np.asarray(a, dtype=float)
    if a.ndim == 1:
        return "[" + ", ".join(repr(float(x)) for x in a) + "]"
    return "[" + ", ".join(_text(r) for r in a) + "]"


def test_solve_with_inverse_works_with_the_inverse_rounded_as_asked() -> None:
    """Working through A^-1 rounded to 2 decimals (as 10-inverse asks) was graded wrong in 155
    of 300 variants."""
    ex = BANK.exercises["03-transpose-and-products/13-solve-with-inverse"]
    for seed in range(300):
        v = ex.generate(seed)
        A, y = np.asarray(v.values["A"]), np.asarray(v.values["y"])
        inverse = np.round(np.linalg.inv(A), 2)
        x = np.round(inverse @ y, 2)
        verdict = grade_answer(v, [[f"{c:.2f}" for c in x]])
        assert verdict.status == "correct", (seed, A, y, x, verdict.message)


def test_solve_with_inverse_draws_no_singular_matrix() -> None:
    """Its require admitted a singular A (seed 5561: det computed as a tiny non-zero)."""
    ex = BANK.exercises["03-transpose-and-products/13-solve-with-inverse"]
    for seed in [5561, *range(400)]:
        A = np.asarray(ex.generate(seed).values["A"])
        assert np.linalg.matrix_rank(A) == 2, seed
        assert round(abs(np.linalg.det(A))) in (2, 4, 5), seed


def test_solve_with_inverse_names_its_mistakes() -> None:
    ex = BANK.exercises["03-transpose-and-products/13-solve-with-inverse"]
    v = ex.generate(7)
    A, y = np.asarray(v.values["A"]), np.asarray(v.values["y"])
    adj = np.linalg.det(A) * np.linalg.inv(A)
    assert "missing_determinant" in grade_answer(v, _text(adj @ y)).mistake_codes
    assert "multiplied_by_a" in grade_answer(v, _text(A @ y)).mistake_codes


def test_rotation_answer_is_not_always_the_identity() -> None:
    """04-rotation asked for R^T R, which is I in every variant."""
    ex = BANK.exercises["03-transpose-and-products/04-rotation"]
    answers = set()
    for seed in range(100):
        v = ex.generate(seed)
        assert np.shape(v.expected) == (2,)
        answers.add(tuple(np.round(v.expected).tolist()))
        R, y = np.asarray(v.context["R"]), np.asarray(v.values["y"])
        assert v.expected == pytest.approx(R.T @ y)
        again = grade_answer(v, _text(R @ y))
        assert again.status != "correct" and "rotation_not_inverted" in again.mistake_codes
    assert len(answers) > 20


def test_transpose_rule_has_no_symmetric_product() -> None:
    """A symmetric AB made forgetting to transpose correct in 10 of 300 variants."""
    ex = BANK.exercises["03-transpose-and-products/12-transpose-rule"]
    for seed in range(300):
        v = ex.generate(seed)
        AB = np.asarray(v.values["A"]) @ np.asarray(v.values["B"])
        verdict = grade_answer(v, _text(AB))
        assert verdict.status != "correct", seed
        assert "forgot_transpose" in verdict.mistake_codes, seed


def test_ba_given_ab_is_never_the_transpose_of_ab() -> None:
    """BA = (AB)^T in 6 of 300 variants made the transposing mistake correct."""
    ex = BANK.exercises["03-transpose-and-products/09-ba-given-ab"]
    for seed in range(300):
        v = ex.generate(seed)
        AB = np.asarray(v.values["AB"], dtype=float)
        verdict = grade_answer(v, _text(AB.T))
        assert verdict.status != "correct", seed
        assert "ab_transposed" in verdict.mistake_codes, seed


@pytest.mark.parametrize("exercise", ["10-inverse", "11-inverse-3x3"])
def test_forgetting_the_determinant_never_passes(exercise: str) -> None:
    """det A = 1 made forgetting to divide by it correct."""
    ex = BANK.exercises[f"03-transpose-and-products/{exercise}"]
    for seed in range(200):
        v = ex.generate(seed)
        A = np.asarray(v.values["A"], dtype=float)
        det = np.linalg.det(A)
        verdict = grade_answer(v, _text(np.asarray(v.expected) * det))
        assert verdict.status != "correct", seed
        assert "missing_determinant" in verdict.mistake_codes, seed


@pytest.mark.parametrize("exercise", ["01-basis-coordinates", "02-basis-coordinates-3d"])
def test_basis_as_rows_is_always_told_apart(exercise: str) -> None:
    """A symmetric basis matrix hid "basis as rows" in 35 of 300 variants."""
    ex = BANK.exercises[f"02-matrices-and-maps/{exercise}"]
    for seed in range(300):
        v = ex.generate(seed)
        rows = np.asarray(v.context["basis"], dtype=float)
        wrong = np.linalg.solve(rows, np.asarray(v.context["v"], dtype=float))
        verdict = grade_answer(v, _text(wrong))
        assert verdict.status != "correct", seed
        assert "basis_as_rows" in verdict.mistake_codes, seed


@pytest.mark.parametrize("exercise", ["01-one-unknown", "02-one-unknown-constant"])
def test_one_unknown_never_has_a_guessable_solution(exercise: str) -> None:
    """x = 0 in 6 % of the variants (5x = 0); x = ±1 hides dividing the wrong way round."""
    ex = BANK.exercises[f"01-linear-systems/{exercise}"]
    for seed in range(300):
        v = ex.generate(seed)
        assert float(v.expected) not in (0.0, 1.0, -1.0), seed
        assert "inverted_division" in v.detectors, seed


def test_associativity_product_is_never_zero() -> None:
    """ABC = 0 at seed 271."""
    ex = BANK.exercises["03-transpose-and-products/07-associativity"]
    for seed in [271, *range(300)]:
        e = np.asarray(ex.generate(seed).expected)
        assert not np.any(np.all(e == 0, axis=0)) and not np.any(np.all(e == 0, axis=1)), seed


def test_cosine_similarity_is_never_a_guessable_plus_or_minus_one() -> None:
    """q parallel to k (q = k in 5 of 400 seeds) made the answer ±1 without computing."""
    ex = BANK.exercises["04-retrieval-and-softmax/17-cosine-similarity"]
    for seed in range(400):
        v = ex.generate(seed)
        q, k = np.asarray(v.values["q"], float), np.asarray(v.values["k"], float)
        cosine = q @ k / (np.linalg.norm(q) * np.linalg.norm(k))
        assert float(v.expected) == pytest.approx(cosine)
        assert abs(cosine) < 0.99, seed


def test_multi_head_w_o_maps_back_to_d_model_with_full_rank() -> None:
    """W_O of rank 1 or with a zero column; and it must map back to d_model."""
    ex = BANK.exercises["05-attention/06-multi-head"]
    for seed in range(100):
        v = ex.generate(seed)
        WO = np.asarray(v.values["W_O"], dtype=float)
        X = np.asarray(v.values["X"], dtype=float)
        # 2 heads of d_v = d_model / 2 = 2 back to d_model = 4 (tests/test_bank_multi_head_sizes.py)
        assert WO.shape == (4, X.shape[1]) == (4, 4), seed
        assert np.linalg.matrix_rank(WO) == 4 and not np.any(np.all(WO == 0, axis=0)), seed
    assert "d_{\\text{model}} = 4" in v.prompt


def test_wording_fixes() -> None:
    def prompt(eid: str) -> str:
        return BANK.exercises[eid].generate(0).prompt

    deck = BANK.exercises["01-linear-systems/05-deck-system"].generate(0)
    assert "first equation" not in " ".join(deck.hints)
    assert "How many entries" not in prompt("02-matrices-and-maps/09-matrix-vector")
    scaled = prompt("04-retrieval-and-softmax/02-scaled-scores")
    assert "scaled by the number of dimensions" not in scaled and "\\sqrt{d}" in scaled
    assert "same set" in prompt("05-attention/11-deck-notation")
    weights = BANK.exercises["05-attention/04-self-attention-weights"]
    for seed in range(10):
        v = weights.generate(seed)
        assert "W_V" not in v.prompt
        assert all("W_V" not in s.text and "V = " not in s.text for s in v.solution), seed


def test_three_by_three_solutions_show_their_steps() -> None:
    for eid in ("01-linear-systems/07-three-by-three", "03-transpose-and-products/11-inverse-3x3"):
        v = BANK.exercises[eid].generate(3)
        columns = [s for s in v.solution if s.title.startswith("Column ")]
        assert len(columns) == 3, eid
        assert all("\\leftarrow" in s.text and "array" in s.text for s in columns), eid


EXPRESSIONS = sorted(i for i, ex in BANK.exercises.items() if ex.kind.name == "expression")


@pytest.mark.parametrize("exercise_id", EXPRESSIONS)
def test_expression_solutions_are_mathematics_not_code(exercise_id: str) -> None:
    """The expression exercises' worked solutions showed `transpose(A) @ y` and "0.222222"."""
    v = BANK.exercises[exercise_id].generate(2)
    for step in v.solution:
        for code in ("`", "@", "transpose(", ".T", "sqrt("):
            assert code not in step.text and code not in step.title, (exercise_id, step)
        assert "$" in step.text
        assert not re.search(r"\d\.\d{5,}", step.text), (exercise_id, step.text)


CHOICES = sorted(
    i for i, ex in BANK.exercises.items() if ex.generate(0).answer_form.type in ("choice", "index")
)


@pytest.mark.parametrize("exercise_id", CHOICES)
def test_every_wrong_option_names_its_mistake(exercise_id: str) -> None:
    ex = BANK.exercises[exercise_id]
    for seed in range(25):
        v = ex.generate(seed)
        form = v.answer_form
        if form.type == "choice":
            letters = "abcdefgh"[: len(form.choices or [])]
            right = letters[int(v.expected)]
            assert grade_answer(v, right).status == "correct"
            for letter in letters:
                if letter == right:
                    continue
                verdict = grade_answer(v, f"({letter})")
                assert verdict.status == "incorrect"
                assert verdict.mistakes, (exercise_id, seed, letter)
                assert verdict.mistakes[0].message.startswith(f"Option ({letter})")
        else:
            assert grade_answer(v, str(int(v.expected))).status == "correct"
            for k, (code, _message) in (v.context.get("index_mistakes") or {}).items():
                verdict = grade_answer(v, str(k))
                assert verdict.status == "incorrect" and verdict.mistake_codes == [code]


def test_it_attends_to_the_animal_when_tired_and_the_street_when_wide() -> None:
    ex = BANK.exercises["05-attention/15-what-it-attends-to"]
    seen = set()
    for seed in range(60):
        v = ex.generate(seed)
        word = v.answer_form.choices[int(v.expected) - 1]
        ending = v.values["ending"]
        assert word == {"tired": "animal", "wide": "street"}[ending]
        assert v.values["sentence"].endswith(f"because it was too {ending}.")
        seen.add(ending)
    assert seen == {"tired", "wide"}


def test_parameter_count_names_each_head_taken_as_d_model_wide_for_the_whole_layer() -> None:
    """3 h d_model^2 + W_O (each head's W_Q, W_K, W_V counted d_model x d_model) was a wrong
    count of the whole layer that named no mistake (23040 for d_model = 48, h = 3)."""
    ex = BANK.exercises["05-attention/18-parameter-count"]
    seen = 0
    for seed in range(200):
        v = ex.generate(seed)
        d, h = int(v.values["d_model"]), int(v.values["heads"])
        if float(v.expected) != 4 * d * d or h < 2:
            continue  # not the whole layer
        seen += 1
        verdict = grade_answer(v, str(3 * h * d * d + d * d))
        assert verdict.status == "incorrect"
        assert "d_model_per_head" in verdict.mistake_codes, (seed, verdict.mistake_codes)
    assert seen >= 10
