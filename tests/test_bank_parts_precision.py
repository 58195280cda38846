"""Multi-part exercises under the second edition's rules: each part's prompt states its
precision, which sets the part's default tolerance (exact means exact) and how its worked
steps write values; ``quizapp check`` holds each part's tolerance to its prompt; ``derived``
values may be used by parts; named ``mistakes`` and ``explanation`` belong to a single answer."""

from __future__ import annotations

import re

import numpy as np
import pytest

from quizapp.bank import BankError, grade_answer, load_exercise_source
from quizapp.bank.check import check_exercise
from quizapp.bank.precision import EXACT_TOLERANCE
from quizapp.grading import Tolerance

TWO_PARTS = """\
title: Scores, then scaled scores
kind: expression
variables:
  q: {{vector: 2, integers: [1, 4]}}
  k: {{vector: 2, integers: [1, 4]}}
derived:
  d: sum(ones(2))
prompt: "A query $q = {{{{ q }}}}$ and a key $k = {{{{ k }}}}$."
{extra}parts:
  - name: s
    prompt: "Compute the score $s = q \\\\cdot k$. Give exact values."
    answer: q @ k
{s_extra}  - name: t
    prompt: "Compute $t = s / \\\\sqrt{{d}}$ to 2 decimal places."
    answer: s / sqrt(d)
    tolerance: {{decdig: 2}}
"""


def exercise(extra: str = "", s_extra: str = ""):
    return load_exercise_source("q/two", TWO_PARTS.format(extra=extra, s_extra=s_extra))


def test_a_part_whose_prompt_says_exact_is_graded_exactly() -> None:
    ex = exercise(extra="tolerance: {rtol: 0.01}\n")
    v = ex.generate(0)
    s, t = v.parts
    assert s.tolerance == EXACT_TOLERANCE  # the part's statement, not the exercise's 1 %
    assert t.tolerance == Tolerance(mode="decdig", digits=2)  # its own tolerance: written
    q, k = (np.asarray(v.values[n], float) for n in ("q", "k"))
    score = float(q @ k)
    assert grade_answer(v, {"s": f"{score:g}", "t": f"{score / np.sqrt(2):.2f}"}).status == (
        "correct"
    )
    off = grade_answer(v, {"s": f"{score * 1.005!r}", "t": f"{score / np.sqrt(2):.2f}"})
    assert off.parts["s"].status != "correct"  # half a percent off is not exact


def test_each_parts_steps_write_values_as_its_prompt_asks() -> None:
    v = exercise().generate(1)
    t_answer = v.parts[1].solution[-1]
    # "to 2 decimal places": the answer step shows 2 decimals, the value sqrt(2) was divided by
    shown = re.findall(r"-?\d+\.\d+", t_answer.text)
    assert shown and all(len(x.split(".")[1]) == 2 for x in shown), t_answer.text
    assert "\\approx" in t_answer.text


def test_check_holds_each_parts_tolerance_to_its_prompt() -> None:
    assert check_exercise(exercise(), range(20)) == []
    loose = exercise(s_extra="    tolerance: {decdig: 2}\n")
    messages = {f.message for f in check_exercise(loose, range(3))}
    # (at the part's own tolerance: line)
    assert any(
        m.startswith("parts[1].tolerance: part s: the prompt asks for exact values")
        for m in messages
    ), messages


def test_derived_values_are_known_to_parts() -> None:
    v = exercise().generate(2)
    assert v.values["d"] == 2.0
    q, k = (np.asarray(v.values[n], float) for n in ("q", "k"))
    assert np.isclose(v.parts[1].expected, float(q @ k) / np.sqrt(2))


@pytest.mark.parametrize(
    ("field", "extra", "says"),
    [
        (
            "mistakes:",
            "mistakes:\n  - {code: no_scale, answer: q @ k, message: Divide by sqrt(d).}\n",
            "with parts:, give a part its own mistakes: (or detectors:)",
        ),
        (
            "explanation:",
            "explanation:\n  - {title: Why, text: Because.}\n",
            "with parts:, give a part its own explanation:",
        ),
    ],
)
def test_one_answers_fields_beside_parts_are_refused_at_their_line(field, extra, says) -> None:
    with pytest.raises(BankError) as err:
        exercise(extra=extra)
    text = str(err.value)
    line = 1 + TWO_PARTS.format(extra=extra, s_extra="").splitlines().index(field)
    assert f":{line}:" in text and says in text, text
