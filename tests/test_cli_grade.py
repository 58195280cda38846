"""`quizapp grade`: output, JSON contract, exit codes (click's CliRunner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizapp.bank import load_bank
from quizapp.cli import main
from quizapp.grading import Tolerance, grade


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["grade", *args])


def run_json(*args: str) -> dict[str, Any]:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1  # exactly one JSON object
    return json.loads(lines[0])


def test_json_correct() -> None:
    out = run_json("--expected", "1/3", "--answer", "0.333")
    assert out == {
        "status": "correct",
        "score": 1.0,
        "message": "Correct.",
        "cells": [[True]],
        "mistakes": [],
    }


def test_json_matrix_partial_and_mistakes() -> None:
    out = run_json("--expected", "[[1,2],[3,4]]", "--answer", "[1 2; 3 5]")
    assert out["status"] == "partial" and out["score"] == 0.75
    assert out["cells"] == [[True, True], [True, False]]
    out = run_json("--expected", "[[1,2],[3,4]]", "--answer", "[[2,4],[6,8]]")
    assert out["status"] == "incorrect" and out["mistakes"] == ["scale"]
    out = run_json(
        "--expected", "[[1,2],[3,4]]", "--answer", "[[1,2],[3,5]]", "--no-partial-credit"
    )
    assert (out["status"], out["score"]) == ("incorrect", 0.0)


def test_json_invalid_exits_zero() -> None:
    out = run_json("--expected", "1", "--answer", "9^9^9")
    assert out["status"] == "invalid" and out["cells"] is None and out["score"] == 0.0
    out = run_json("--expected", "1", "--answer", "")
    assert out["status"] == "invalid" and out["message"] == "The answer is empty."


def test_negative_answer_is_not_an_option() -> None:
    assert run_json("--expected", "-3", "--answer", "-3")["status"] == "correct"
    assert run_json("--expected", "-3", "--answer", "−3")["status"] == "correct"


@pytest.mark.parametrize(
    ("args", "tolerance"),
    [
        (["--decdig", "2"], Tolerance("decdig", digits=2)),
        (["--sigfig", "3"], Tolerance("sigfig", digits=3)),
        (["--rtol", "0", "--atol", "0.1"], Tolerance("relabs", rtol=0.0, atol=0.1)),
        (["--rtol", "0"], Tolerance("relabs", rtol=0.0, atol=1e-8)),
        (["--atol", "0"], Tolerance("relabs", rtol=1e-2, atol=0.0)),
        ([], Tolerance()),
    ],
)
def test_tolerance_options_reach_the_grader(args: list[str], tolerance: Tolerance) -> None:
    for expected, answer in [
        ("0.2689", "0.27"),
        ("0.2689", "0.2641"),
        ("0.3", "0.4"),
        ("0", "1e-9"),
    ]:
        out = run_json("--expected", expected, "--answer", answer, *args)
        assert out["status"] == grade(expected, answer, tolerance=tolerance).status


def test_human_output() -> None:
    result = run("--expected", "[[1,2],[3,4]]", "--answer", "[[1,3],[2,4]]")
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "incorrect (score 0)",
        "Incorrect: your rows and columns are swapped, so no entry counts.",
        "cells (ok = correct, X = wrong):",
        "   X  X",
        "   X  X",
        "mistake transpose: You transposed the matrix: your rows are the columns of the right answer.",
    ]
    result = run("--expected", "1", "--answer", "1")
    assert result.output.splitlines() == ["correct (score 1)", "Correct."]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["--expected", "1", "--answer", "1", "--sigfig", "2", "--rtol", "0.1"],
            "choose one tolerance mode",
        ),
        (
            ["--expected", "1", "--answer", "1", "--sigfig", "2", "--decdig", "2"],
            "choose one tolerance mode",
        ),
        (["--expected", "1", "--answer", "1", "--rtol", "-1"], "--rtol"),
        (["--expected", "1", "--answer", "1", "--atol", "nan"], "--atol"),
        (["--expected", "1", "--answer", "1", "--sigfig", "0"], "--sigfig"),
        (["--expected", "1", "--answer", "1", "--sigfig", "two"], "--sigfig"),
        (["--answer", "1"], "give --expected"),
        (["--expected", "1"], "Missing option '--answer'"),
        (["--expected", "one", "--answer", "1"], "--expected"),
        (["--expected", "[[1,2],[3]]", "--answer", "1"], "Row 2 has 1 entry"),
        (["--expected", "1", "--answer", "1", "--seed", "3"], "--seed needs an EXERCISE_ID"),
        (["quiz/ex", "--answer", "1"], "needs --seed"),
        (["quiz/ex", "--expected", "1", "--answer", "1", "--seed", "1"], "not both"),
        (["quiz/ex", "--answer", "1", "--seed", "1", "--rtol", "0"], "its own tolerance"),
    ],
)
def test_bad_usage_exits_2(args: list[str], fragment: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert fragment in result.output


SCALE = """\
title: Scale
kind: expression
variables:
  a: {integers: [2, 9]}
  x: {integers: [1, 20]}
answer: a * x
prompt: "Compute {{ a }} times {{ x }}."
"""


def _bank(root: Path) -> Path:
    (root / "quiz").mkdir(parents=True)
    (root / "quiz" / "quiz.yaml").write_text("title: Quiz\n")
    (root / "quiz" / "ex.yaml").write_text(SCALE)
    return root


def test_exercise_form_grades_the_variant_of_that_seed(tmp_path: Path) -> None:
    root = _bank(tmp_path / "exercises")
    values = load_bank(root).exercises["quiz/ex"].generate(7).values
    right = str(int(values["a"]) * int(values["x"]))
    out = run_json("quiz/ex", "--seed", "7", "--answer", right, "--bank", str(root))
    assert out["status"] == "correct" and out["score"] == 1.0
    wrong = str(2 * int(values["a"]) * int(values["x"]))
    out = run_json("quiz/ex", "--seed", "7", "--answer", wrong, "--bank", str(root))
    assert out["status"] == "incorrect" and out["score"] == 0.0
    result = run("quiz/nope", "--seed", "7", "--answer", "7", "--bank", str(root))
    assert result.exit_code == 2 and "no exercise 'quiz/nope'" in result.output


def test_exercise_form_names_the_file_problems_of_a_broken_exercise(tmp_path: Path) -> None:
    root = _bank(tmp_path / "exercises")
    (root / "quiz" / "ex.yaml").write_text(SCALE.replace("answer: a * x", "answer: a * y"))
    result = run("quiz/ex", "--seed", "1", "--answer", "1", "--bank", str(root))
    assert result.exit_code == 2 and "no exercise 'quiz/ex'" in result.output
    assert "ex.yaml" in result.output and "'y'" in result.output


def test_exercise_form_without_the_bank_folder_exits_2(tmp_path: Path) -> None:
    result = run("quiz/ex", "--seed", "1", "--answer", "1", "--bank", str(tmp_path / "missing"))
    assert result.exit_code == 2 and "no exercise bank at" in result.output


def test_rounding_is_judged_as_typed() -> None:
    """Issue 16: a student who gave 2 decimals was told to give 2 decimals."""
    out = run_json("--expected", "2.046", "--answer", "2.00", "--decdig", "2")
    assert out["status"] == "incorrect" and "rounding" not in out["mistakes"]
    out = run_json("--expected", "2.046", "--answer", "2.0", "--decdig", "2")
    assert out["mistakes"] == ["rounding"]
