"""Bad ``parts:`` are ``quizapp validate`` errors at their line (issue 18): a name used twice, a
part naming a later or unknown part, a cycle, both ``answer`` and ``parts``, points that do not
add up, a follow-through credit without parts, a bad ``detectors:``, a template problem in a
part's prompt, a part whose answer cannot be computed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from quizapp.bank.loader import load_exercise_source
from quizapp.bank.yamlio import BankError
from quizapp.cli import main

HEAD = """\
title: T
kind: expression
prompt: "Compute it."
variables:
  Q: {matrix: [2, 2], integers: [1, 3]}
  K: {matrix: [2, 2], integers: [1, 3]}
"""

S = "  - name: S\n    answer: Q @ K.T\n"
W = "  - name: W\n    answer: softmax(S)\n"

CASES = [
    # (body after HEAD, the text of the line blamed, words of the message)
    (
        "parts:\n" + S + S.replace("Q @ K.T", "K @ Q.T"),
        "  - name: S#2",
        "the part name 'S' is used twice (first at line 8)",
    ),
    (
        "parts:\n" + W + S,
        "    answer: softmax(S)",
        "part W uses S, a later part: a part may use only earlier parts (move S before W)",
    ),
    (
        "parts:\n" + S + "  - name: W\n    answer: softmax(T)\n",
        "    answer: softmax(T)",
        "parts[2].answer: unknown name 'T'",
    ),
    # The schema's messages count a list's items from 1, as the others do (was "parts.1").
    (
        "parts:\n" + S + W + "    uses: [S]\n",
        "    uses: [S]",
        "unknown key 'uses' in parts[2] (allowed: name, prompt",
    ),
    (
        "parts:\n" + S + W + "    hints: [3]\n",
        "    hints: [3]",
        "parts[2].hints[1]: expected text, got 3",
    ),
    (
        "parts:\n  - name: A\n    answer: B + Q\n  - name: B\n    answer: A + K\n",
        "    answer: B + Q",
        "the parts form a cycle: A -> B -> A",
    ),
    ("parts:\n  - name: A\n    answer: A + Q\n", "    answer: A + Q", "part A uses itself"),
    (
        "answer: Q\nparts:\n" + S,
        "parts:",
        "give either answer: or parts:, not both (answer: is at line 7",
    ),
    (
        "parts:\n" + S + "answer_form: {type: matrix}\n",
        "answer_form:",
        "with parts:, give each part its own answer_form",
    ),
    ("parts:\n  - name: Q\n    answer: K\n", "  - name: Q", "the part name 'Q' is also a variable"),
    (
        "parts:\n  - name: 2x\n    answer: K\n",
        "  - name: 2x",
        "a part's name is a letter followed by",
    ),
    (
        "points: 10\nparts:\n" + S + "    points: 4\n" + W + "    points: 5\n",
        "points: 10",
        "its parts' points sum to 9",
    ),
    (
        "parts:\n"
        + S
        + "    points: 6\n"
        + W
        + "    points: 4\n"
        + "  - name: T\n    answer: S.T\n",
        "parts:",
        "leaves nothing for the 1 part(s) without points",
    ),
    (
        "follow_through_credit: 0.5\nanswer: Q\n",
        "follow_through_credit:",
        "only for an exercise with parts",
    ),
    (
        "parts:\n" + S + "    follow_through_credit: 2\n",
        "    follow_through_credit: 2",
        "less than or equal to 1",
    ),
    (
        "parts:\n" + S + "    detectors: {attention: {Q: Q}}\n",
        "    detectors:",
        "attention: missing input 'K'",
    ),
    (
        "parts:\n" + S + "    detectors: {attn: {Q: Q, K: K}}\n",
        "    detectors:",
        "unknown family of mistakes 'attn'",
    ),
    (
        "parts:\n" + S + "    detectors: {attention: {Q: Q, K: K, ask: all}}\n",
        "    detectors:",
        "ask is one of scores, scaled, weights, output",
    ),
    (
        "parts:\n" + S + "    detectors: {attention: {Q: Q, K: R, ask: scores}}\n",
        "    detectors:",
        "detectors.attention.K: unknown name 'R'",
    ),
    (
        "parts:\n" + S + "    prompt: 'S = {{ S2 }}'\n",
        "    prompt: 'S = {{ S2 }}'",
        "parts[1].prompt: unknown placeholder {{ S2 }}",
    ),
    (
        "parts:\n  - name: S\n    answer: Q @ K @ [1, 2, 3]\n",
        "    answer: Q @ K @ [1, 2, 3]",
        "parts[1].answer: cannot generate a variant",
    ),
    (
        "parts:\n  - name: S\n    answer: Q @ K.T\n    answer_form: {type: vector}\n",
        "    answer_form:",
        "answer_form.type is vector but the answer is a matrix",
    ),
]


def _line_of(source: str, start: str) -> int:
    """The line starting with ``start`` (``start#2``: its second occurrence)."""
    start, _, nth = start.partition("#")
    lines = [i for i, t in enumerate(source.splitlines(), 1) if t.startswith(start)]
    return lines[int(nth or 1) - 1]


@pytest.mark.parametrize(("body", "blamed", "says"), CASES)
def test_a_bad_parts_list_is_an_error_at_its_line(body: str, blamed: str, says: str) -> None:
    source = HEAD + body
    with pytest.raises(BankError) as info:
        load_exercise_source("q/bad", source)
    errors = info.value.errors or [info.value]
    found = [e for e in errors if says in e.message]
    assert found, [str(e) for e in errors]
    assert found[0].line == _line_of(source, blamed), (str(found[0]), blamed)


def test_quizapp_validate_prints_file_line_and_message(tmp_path: Path) -> None:
    quiz = tmp_path / "q"
    quiz.mkdir()
    (quiz / "quiz.yaml").write_text("title: Q\n", encoding="utf-8")
    source = HEAD + "parts:\n" + W + S
    (quiz / "bad.yaml").write_text(source, encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code != 0
    line = _line_of(source, "    answer: softmax(S)")
    assert f"{quiz / 'bad.yaml'}:{line}:" in result.output
    assert "part W uses S, a later part" in result.output


def test_a_good_parts_list_loads() -> None:
    ex = load_exercise_source("q/good", HEAD + "parts:\n" + S + W)
    assert [p.name for p in ex.spec.parts] == ["S", "W"]
    v = ex.generate(0)
    assert [p.name for p in v.parts] == ["S", "W"] and v.parts[1].uses == ("S",)
