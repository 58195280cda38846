"""The stated precision and the tolerance agree at every expected value (issue 16): one rule,
:func:`quizapp.bank.precision.acceptance_problem`, used by ``quizapp validate`` (the YAML and seed
0) and ``quizapp check`` (every seed), each refusal at the line responsible."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from quizapp.bank import load_bank
from quizapp.bank.answers import grade_answer
from quizapp.bank.check import check_exercise
from quizapp.bank.loader import load_exercise_file
from quizapp.bank.precision import (
    Precision,
    acceptance_problem,
    tolerance_problem,
    variant_precision_problems,
)
from quizapp.cli import main
from quizapp.grading.compare import cells_close
from quizapp.grading.types import Tolerance

REPO = Path(__file__).resolve().parent.parent
BANK = REPO / "exercises"
DECIMALS_2 = Precision("decimals", 2)
SIGFIG_3 = Precision("sigfig", 3)


def _relabs(rtol: float, atol: float) -> Tolerance:
    return Tolerance(mode="relabs", rtol=rtol, atol=atol)


# The tester's combinations: each accepts an answer the stated precision does not.
@pytest.mark.parametrize(
    ("precision", "tolerance", "expected", "answer", "width"),
    [
        (SIGFIG_3, _relabs(0.01, 0.01), 1.68, 1.66, 0.01 + 0.01 * 1.68),
        (DECIMALS_2, _relabs(0.05, 0.03), 90.0, 88.5, 0.03 + 0.05 * 90),
        (DECIMALS_2, _relabs(0.02, 0.03), 90.0, 88.5, 0.03 + 0.02 * 90),
    ],
)
def test_combined_rtol_and_atol_are_refused_at_the_value(
    precision: Precision, tolerance: Tolerance, expected: float, answer: float, width: float
) -> None:
    # The grader does accept the answer (what the tester saw) ...
    assert cells_close(np.array(answer), np.array(expected), tolerance)
    # ... and the rule refuses the tolerance, naming the phrase, the tolerance, the width
    # (atol + rtol*|x|, computed here by hand) and the value.
    problem = acceptance_problem(precision, tolerance, expected)
    assert problem is not None
    assert f"the prompt asks for {precision.phrase()}" in problem
    assert f"{{rtol: {tolerance.rtol:g}, atol: {tolerance.atol:g}}}" in problem
    assert f"accepts answers {width:.3g} off at the expected value {expected:g}" in problem
    assert "where" in problem and "allow" in problem


def test_the_allowance_is_half_to_one_unit_of_the_stated_precision() -> None:
    x = np.array([0.0, 0.004, 1.0, 9.99, 90.0, -250.0])
    for ok in (Tolerance(mode="decdig", digits=2), _relabs(0.0, 0.01), _relabs(0.0, 0.005)):
        assert acceptance_problem(DECIMALS_2, ok, x) is None, ok
    assert "more than" not in (acceptance_problem(DECIMALS_2, _relabs(0.0, 0.004), x) or "")
    assert "rejects values near 0" in (acceptance_problem(DECIMALS_2, _relabs(0, 0.004), x) or "")
    # One unit is 0.01: a hair more is refused.
    assert acceptance_problem(DECIMALS_2, _relabs(0.0, 0.0101), x) is not None
    # Any rtol is refused once atol + rtol*|x| passes one unit (here at 90, row 1 entry 5).
    small = acceptance_problem(DECIMALS_2, _relabs(0.0001, 0.005), x)
    assert small is not None and "at the expected value -250 (entry 6)" in small
    assert acceptance_problem(DECIMALS_2, _relabs(0.0001, 0.005), x[:4]) is None
    # Significant figures: {sigfig: N} everywhere; an rtol spans a factor 10 of a unit.
    assert acceptance_problem(SIGFIG_3, Tolerance(mode="sigfig", digits=3), x) is None
    assert acceptance_problem(SIGFIG_3, Tolerance(mode="sigfig", digits=2), x) is not None
    assert acceptance_problem(SIGFIG_3, Tolerance(mode="sigfig", digits=4), x) is not None
    assert acceptance_problem(SIGFIG_3, _relabs(0.005, 0.0), np.array([9.99])) is not None
    # Exact: the default, and the noise of a computed key, up to 1e-9 (1 + |x|).
    exact = Precision("exact")
    assert acceptance_problem(exact, _relabs(0.0, 0.0), x) is None
    assert acceptance_problem(exact, _relabs(1e-9, 1e-9), x) is None
    assert "1.00% off" in (acceptance_problem(exact, _relabs(0.01, 0.0), 3.0) or "")


def test_a_matrix_entry_is_named_by_row_and_column() -> None:
    expected = np.array([[0.5, 0.25], [3.0, 90.0]])
    problem = acceptance_problem(DECIMALS_2, _relabs(0.01, 0.01), expected)
    assert problem is not None and "at the expected value 90 (row 2, column 2)" in problem


def test_the_yaml_is_judged_at_0_and_1() -> None:
    assert tolerance_problem(DECIMALS_2, _relabs(0.02, 0.03)) is not None
    assert tolerance_problem(SIGFIG_3, _relabs(0.01, 0.01)) is not None
    assert tolerance_problem(DECIMALS_2, _relabs(0.0, 0.01)) is None
    # (a small rtol passes at 1; the values of a variant decide)
    assert tolerance_problem(DECIMALS_2, _relabs(0.001, 0.005)) is None


# --- validate and check refuse each bad combination, naming the line --------------------------

HEAD = (
    "title: T\nkind: expression\nvariables:\n  a: {{integers: [{low}, {high}]}}\n"
    "  n: {{choice: [2]}}\nanswer: a / 7\n"
)


def _files(tmp_path: Path) -> dict[str, tuple[str, int, str]]:
    """Bad exercises: name -> (YAML text, the line to blame, what the message says)."""
    small = HEAD.format(low=1, high=9)
    large = HEAD.format(low=600, high=700)
    parts = (
        "title: T\nkind: expression\nvariables:\n  a: {integers: [600, 700]}\n"
        "prompt: 'Two answers.'\nparts:\n"
        "  - name: x\n    prompt: 'Compute $a$. Give exact values.'\n    answer: a\n"
        "  - name: y\n    prompt: 'Compute $a/7$ to 2 decimal places.'\n    answer: a / 7\n"
        "    tolerance: {rtol: 0.001, atol: 0.005}\n"
    )
    return {
        "sigfig-combined": (
            small + "tolerance: {rtol: 0.01, atol: 0.01}\nprompt: |\n  Compute $a/7$.\n"
            "  Give it to 3 significant figures.\n",
            7,
            "3 significant figures",
        ),
        "decimals-rtol-05": (
            small + "tolerance: {rtol: 0.05, atol: 0.03}\nprompt: 'Compute $a/7$ to 2 decimal "
            "places.'\n",
            7,
            "{rtol: 0.05, atol: 0.03}",
        ),
        "decimals-rtol-02": (
            small + "prompt: 'Compute $a/7$ to 2 decimal places.'\ntolerance: "
            "{rtol: 0.02, atol: 0.03}\n",
            8,
            "{rtol: 0.02, atol: 0.03}",
        ),
        # Passes at 0 and 1, refused at the values of seed 0 (about 90): a value-only failure.
        "decimals-values": (
            large + "tolerance: {rtol: 0.001, atol: 0.005}\nprompt: 'Compute $a/7$ to 2 "
            "decimal places.'\n",
            7,
            "at the expected value",
        ),
        "part": (parts, 13, "part y: the prompt asks for 2 decimal places"),
        "templated": (
            large + "tolerance: {rtol: 0.001, atol: 0.005}\nprompt: |\n  Compute $a/7$.\n"
            "  Round to {{ n }} decimal places.\n",
            7,
            "2 decimal places",
        ),
        "no-statement": (
            small + "prompt: |\n  Something first.\n  Compute $a/7$.\n",
            8,
            "states no precision",
        ),
    }


@pytest.fixture
def bad_files(tmp_path: Path) -> dict[str, tuple[Path, int, str]]:
    out = {}
    for name, (text, line, says) in _files(tmp_path).items():
        path = tmp_path / "q" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out[name] = (path, line, says)
    return out


@pytest.mark.parametrize(
    "name",
    [
        "sigfig-combined",
        "decimals-rtol-05",
        "decimals-rtol-02",
        "decimals-values",
        "part",
        "templated",
    ],
)
def test_validate_and_check_refuse_at_the_line(bad_files, name: str) -> None:
    path, line, says = bad_files[name]
    # validate: the loader's checks (YAML, then seed 0) ...
    exercise, errors = load_exercise_file(path)
    assert exercise is None
    assert [(e.line, says in e.message) for e in errors] == [(line, True)], errors
    result = CliRunner().invoke(main, ["validate", str(path), "--seeds", "1"])
    assert result.exit_code == 1
    assert f"{path}:{line}:" in result.output and says in result.output
    # ... and check, on every seed (the exercise loaded as a stored text, without the
    # authoring rules, then sampled).
    from quizapp.bank.loader import _parse_exercise

    stored, _ = _parse_exercise("q/" + name, path.read_text(), str(path), authoring=False)
    assert stored is not None
    failures = [f for f in check_exercise(stored, range(5)) if says in f.message]
    # (the same message is printed for 3 seeds, then counted: 5 in all)
    assert sum(f.count for f in failures) == 5, failures
    assert all((f.file, f.line) == (str(path), line) for f in failures)


def test_validate_names_the_part_tolerance_line(bad_files) -> None:
    path, _, _ = bad_files["part"]
    _, errors = load_exercise_file(path)
    assert errors[0].message.startswith("parts[2].tolerance: part y:"), errors
    assert errors[0].message.endswith("(seed 0)")


def test_a_prompt_without_precision_is_a_validate_warning_and_a_check_failure(bad_files) -> None:
    """validate warns at the prompt line (refusing would reject every file written before
    prompts had to state a precision); check refuses it on every seed."""
    from quizapp.bank.validate_precision import missing_precision_warnings

    path, line, says = bad_files["no-statement"]
    exercise, errors = load_exercise_file(path)
    assert errors == [] and exercise is not None
    (warning,) = missing_precision_warnings(exercise)
    assert (warning.file, warning.line) == (str(path), line)
    assert warning.message.startswith("prompt: the prompt states no precision")
    result = CliRunner().invoke(main, ["validate", str(path), "--seeds", "1"])
    assert result.exit_code == 0
    assert f"warning: {path}:{line}:1: prompt: the prompt states no precision" in result.output
    failures = [f for f in check_exercise(exercise, range(5)) if says in f.message]
    assert sum(f.count for f in failures) == 5, failures
    assert all((f.file, f.line) == (str(path), line) for f in failures)


# --- the bundled bank ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def bank():
    loaded = load_bank(BANK)
    assert loaded.errors == []  # the YAML and seed 0 of every exercise agree
    return loaded


def test_the_bundled_bank_agrees_on_its_first_seeds(bank) -> None:
    for exercise in bank.exercises.values():
        for seed in range(3):
            problems = variant_precision_problems(exercise.generate(seed))
            assert problems == [], (exercise.id, seed, problems)


def _multi_head(v) -> np.ndarray:
    """Multi-head self-attention from the variant's own values (the prompt's recipe)."""
    X = np.asarray(v.values["X"], dtype=float)
    WQ, WK, WV, WO = (np.asarray(v.values[k], dtype=float) for k in ("W_Q", "W_K", "W_V", "W_O"))
    dk, dv = int(v.values["d_k"]), int(v.values["d_v"])
    heads = []
    for i in range(int(v.values["heads"])):
        Q, K = X @ WQ[:, i * dk : (i + 1) * dk], X @ WK[:, i * dk : (i + 1) * dk]
        V = X @ WV[:, i * dv : (i + 1) * dv]
        S = Q @ K.T / np.sqrt(dk)
        W = np.exp(S - S.max(axis=1, keepdims=True))
        heads.append((W / W.sum(axis=1, keepdims=True)) @ V)
    return np.hstack(heads) @ WO


def test_multi_head_seed_2_refuses_the_answer_the_old_tolerance_accepted(bank) -> None:
    v = bank.exercises["05-attention/06-multi-head"].generate(2)
    right = np.round(_multi_head(v), 2)
    # d_model = 4, 2 heads of d_k = d_v = 2 (the sizes of the paper; seed 2 of the sizes
    # d_model = 3, d_k = 4, d_v = 1 before them gave [[0.92, 0.73, 1.66], [-0.99, 0.88, -0.11]])
    assert right.tolist() == [[-3.67, -1.78, -0.06, 3.78], [0.42, 1.35, -1.07, 0.92]]
    text = "[" + "; ".join(" ".join(f"{x:.2f}" for x in row) for row in right) + "]"
    assert grade_answer(v, text).status == "correct"
    lazy = "[-3.69 -1.80 -0.08 3.76; 0.40 1.33 -1.09 0.90]"
    assert grade_answer(v, lazy).status == "incorrect"
    # The old tolerance accepted it: the reason the rule exists.
    assert cells_close(
        np.array([[-3.69, -1.80, -0.08, 3.76], [0.40, 1.33, -1.09, 0.90]]),
        right,
        _relabs(0.02, 0.03),
    ).all()
