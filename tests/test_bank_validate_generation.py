"""Validation generates seed 0 of every exercise and reports a failure at the responsible line."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizapp.bank.loader import load_bank, load_exercise_source
from quizapp.bank.yamlio import BankError
from quizapp.cli import main

HEAD = 'title: T\nkind: expression\nprompt: "Compute it."\n'

CASES = [
    # (body after HEAD, the text on the line blamed, words of the message)
    (
        "variables:\n  n: {integers: [100000, 100000]}\n  A: {matrix: [n, n], integers: [1, 3]}\n"
        "answer: A\n",
        "  A: {matrix",
        "dimension 'n' must be an integer from 1 to 12",
    ),
    (
        "variables:\n  A: {matrix: [2, 3], integers: [1, 3]}\n  B: {matrix: [A, 2], integers: [1, 3]}\n"
        "answer: B\n",
        "  B: {matrix",
        "is an array of shape (2, 3)",
    ),
    (
        "variables:\n  A: {matrix: [2, 3], integers: [1, 3]}\nanswer: A @ A\n",
        "answer:",
        "do not fit a matrix product",
    ),
    (
        "variables:\n  x: {integers: [5, 9]}\nanswer: x ** x ** x ** x ** x\n",
        "answer:",
        "exponent larger than",
    ),
    (
        "variables:\n  x: {integers: [5, 9]}\nrequire:\n  - x > 0\n  - x > 100\nanswer: x\n",
        "  - x > 100",
        "require[2]: cannot generate a variant: require 'x > 100' never held",
    ),
]


def _line_of(source: str, start: str) -> int:
    return next(i for i, t in enumerate(source.splitlines(), 1) if t.startswith(start))


@pytest.mark.parametrize(("body", "blamed", "says"), CASES)
def test_generation_failure_is_reported_at_load_at_the_field(
    body: str, blamed: str, says: str
) -> None:
    source = HEAD + body
    started = time.monotonic()
    with pytest.raises(BankError) as info:
        load_exercise_source("q/x", source)
    assert time.monotonic() - started < 5
    assert says in str(info.value)
    assert info.value.line == _line_of(source, blamed)


def test_range_is_not_an_expression_function() -> None:
    source = (
        HEAD
        + "variables:\n  x: {integers: [1, 3]}\nrequire:\n  - sum(range(10**8)) > 0\nanswer: x\n"
    )
    with pytest.raises(BankError, match="calling 'range' is not allowed") as info:
        load_exercise_source("q/x", source)
    assert info.value.line == _line_of(source, "  - sum")


@pytest.mark.parametrize(
    ("template", "says"),
    [
        ("{{ ''.__class__ }}", "__class__"),
        ("{% for i in range(9999) %}{% for j in range(9999) %}{% endfor %}{% endfor %}",
         "loop iterations"),
        ('{% for i in range(9999) %}{{ "x" * 99999 }}{% endfor %}', "characters"),
    ],
)  # fmt: skip
def test_expression_prompt_is_rendered_at_validation(template: str, says: str) -> None:
    source = (
        "title: T\nkind: expression\nprompt: |\n  Compute $x$.\n\n  "
        + template
        + "\nvariables:\n  x: {integers: [1, 3]}\nanswer: x\n"
    )
    started = time.monotonic()
    with pytest.raises(BankError) as info:
        load_exercise_source("q/x", source)
    assert time.monotonic() - started < 5
    assert says in info.value.message and info.value.message.startswith("prompt:")
    assert info.value.line == 6  # the template's own line inside the block scalar


def test_builtin_kind_template_failure_is_at_the_prompt_line() -> None:
    source = (
        "title: T\nkind: softmax\nprompt: |\n  Softmax of $z$.\n"
        "  {% for i in range(9999) %}{{ 'x' * 99999 }}{% endfor %}\n"
    )
    with pytest.raises(BankError) as info:
        load_exercise_source("q/x", source)
    assert "characters" in info.value.message
    assert info.value.line == 5


def _bank(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"q/quiz.yaml": "title: Q\n", **files}.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_validate_cli_reports_file_line_column(tmp_path: Path) -> None:
    source = HEAD + "variables:\n  A: {matrix: [2, 3], integers: [1, 3]}\nanswer: A @ A\n"
    root = _bank(tmp_path, {"q/bad.yaml": source})
    result = CliRunner().invoke(main, ["validate", str(root)])
    assert result.exit_code == 1
    assert re.search(
        r"bad\.yaml:6:9: answer: cannot generate a variant: .*matrix product", result.output
    )


def test_check_prints_file_line_and_seed(tmp_path: Path) -> None:
    # inv of a matrix that is singular for some seeds (but not seed 0): check names the line.
    source = (
        HEAD + "variables:\n  A: {matrix: [2, 2], integers: [-1, 1]}\nrequire:\n"
        "  - A[0, 0] != 99\nanswer: inv(A)\n"
    )
    root = _bank(tmp_path, {"q/inv.yaml": source})
    assert "q/inv" in load_bank(root).exercises
    result = CliRunner().invoke(main, ["check", str(root), "--seeds", "30"])
    assert result.exit_code == 1
    line = _line_of(source, "answer:")
    assert re.search(rf"inv\.yaml:{line}:\d+: q/inv seed \d+: answer: .*singular", result.output)


@pytest.mark.parametrize(
    "body,blamed,label",
    [
        (
            'hints:\n  - "Look at $x$."\n  - "$$\\\\begin{pmatrix} 1 & 2 \\\\end{bmatrix}$$"\n',
            '  - "$$',
            "hint 2",
        ),
        (
            'parts:\n  - name: a\n    prompt: "Give $x$."\n    answer: x\n'
            '  - name: b\n    prompt: "Twice: $\\\\frac{1}{$"\n    answer: 2 * a\n',
            '    prompt: "Twice',
            "part b's prompt",
        ),
    ],
)
def test_latex_that_cannot_render_is_refused_by_validate_and_check_at_its_line(
    tmp_path: Path, body: str, blamed: str, label: str
) -> None:
    """A hint or part prompt whose LaTeX does not convert to MathML would show a student a
    broken formula: ``validate`` (and so ``sync``) refuses it, and ``check`` names it, each at the
    line of that text (``check`` had no place; ``validate`` said nothing)."""
    source = HEAD + "variables:\n  x: {integers: [1, 5]}\n" + body
    if "parts:" not in body:
        source += "answer: x\n"
    root = _bank(tmp_path, {"q/n.yaml": source})
    assert "q/n" in load_bank(root).exercises  # it loads: only its rendering is broken
    line = _line_of(source, blamed)
    message = f"{label} has LaTeX that does not convert to MathML"
    result = CliRunner().invoke(main, ["validate", str(root), "--seeds", "3"])
    assert result.exit_code == 1
    assert re.search(rf"n\.yaml:{line}:\d+: {re.escape(message)} \(seed 0\)", result.output)
    result = CliRunner().invoke(main, ["check", str(root), "--seeds", "3"])
    assert result.exit_code == 1
    assert re.search(rf"n\.yaml:{line}:\d+: q/n seed 0: {re.escape(message)}", result.output)
