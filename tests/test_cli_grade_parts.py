"""``quizapp grade EXERCISE_ID --seed N --part S=TEXT --part W=TEXT --json`` (issue 18): the
verdict of a multi-part answer, one JSON object with ``parts``; bad usage exits 2.

The expected values are computed here with NumPy from the variant's numbers (drawn by the bank
for the seed), never taken from the grader."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from test_web_support import EXERCISES

from quizapp.bank import load_bank
from quizapp.cli import main

STEPS = "05-attention/01a-weights-step-by-step"


def run(*args: str):
    return CliRunner().invoke(main, ["grade", *args, "--bank", str(EXERCISES)])


def values(seed: int) -> tuple[np.ndarray, np.ndarray]:
    v = load_bank(EXERCISES / "05-attention").exercises[STEPS].generate(seed)
    S = np.asarray(v.values["Q"], float) @ np.asarray(v.values["K"], float).T
    e = np.exp(S / np.sqrt(2) - (S / np.sqrt(2)).max(axis=1, keepdims=True))
    return S, e / e.sum(axis=1, keepdims=True)


def text(m: np.ndarray, digits: int) -> str:
    return "; ".join(" ".join(f"{v:.{digits}f}" for v in row) for row in m)


def test_parts_given_one_by_one_get_the_parts_verdicts() -> None:
    S, W = values(5)
    bad = S.copy()
    bad[1] += 3  # a whole row off: its weights are unchanged by softmax's shift invariance
    bad[0, np.argmin(S[0])] += 4
    e = np.exp(bad / np.sqrt(2) - (bad / np.sqrt(2)).max(axis=1, keepdims=True))
    w_bad = e / e.sum(axis=1, keepdims=True)
    result = run(
        STEPS,
        "--seed",
        "5",
        "--part",
        f"S={text(bad, 0)}",
        "--part",
        f"W={text(w_bad, 2)}",
        "--json",
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert set(out) == {"status", "score", "message", "cells", "mistakes", "parts"}
    assert out["parts"]["S"]["status"] in ("partial", "incorrect")
    w = out["parts"]["W"]
    assert set(w) == {"status", "score", "follow_through", "message", "cells", "mistakes"}
    assert np.any(np.abs(np.round(w_bad, 2) - W) > 0.0051)  # wrong against the true W
    assert w["follow_through"] is True and w["status"] == "correct" and w["score"] == 1.0
    s_score = float(np.mean(bad == S))
    assert out["score"] == pytest.approx(0.4 * s_score + 0.6 * w["score"])
    # Only S: W is not answered.
    out = json.loads(run(STEPS, "--seed", "5", "--part", f"S={text(S, 0)}", "--json").output)
    assert out["parts"]["S"]["status"] == "correct" and out["parts"]["W"]["status"] == "unanswered"
    assert out["score"] == pytest.approx(0.4)
    # Both right, as one --answer with a line per part.
    answer = f"S = {text(S, 0)}\nW = {text(W, 2)}"
    out = json.loads(run(STEPS, "--seed", "5", "--answer", answer, "--json").output)
    assert out["status"] == "correct" and out["score"] == 1.0


def test_the_text_output_lists_each_part() -> None:
    S, _ = values(2)
    result = run(STEPS, "--seed", "2", "--part", f"S={text(S, 0)}")
    assert result.exit_code == 0
    assert "part S: correct (score 1)" in result.output
    assert "part W: unanswered (score 0)" in result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([STEPS, "--seed", "1", "--part", "T=1"], "has no part T (its parts: S, W)"),
        ([STEPS, "--seed", "1", "--part", "S"], "write NAME=ANSWER"),
        ([STEPS, "--seed", "1", "--part", "S=1", "--part", "S=2"], "part S is given twice"),
        ([STEPS, "--seed", "1", "--part", "S=1", "--answer", "1"], "not both"),
        (["--expected", "1", "--part", "S=1"], "--part needs an EXERCISE_ID"),
        (
            ["04-retrieval-and-softmax/05-softmax-vector", "--seed", "1", "--part", "S=1"],
            "has one answer, not parts",
        ),
    ],
)
def test_bad_part_usage_exits_2(args: list[str], fragment: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert fragment in result.output


def test_a_multi_part_answer_without_names_is_invalid_not_an_error() -> None:
    out = json.loads(run(STEPS, "--seed", "1", "--answer", "1 2 3", "--json").output)
    assert out["status"] == "invalid" and "has parts (S, W)" in out["message"]
