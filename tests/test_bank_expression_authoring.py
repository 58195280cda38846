"""Expression exercises' ``mistakes:``, ``derived:`` and ``explanation:`` (docs/course.md), and
the example of that page, which must validate, check and grade as it says."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from quizapp.bank.answers import grade_answer
from quizapp.bank.check import check_exercise
from quizapp.bank.loader import load_exercise_source
from quizapp.bank.validate import check_exercise as validate
from quizapp.bank.yamlio import BankError, parse_yaml

DOC = Path(__file__).resolve().parent.parent / "docs" / "course.md"


def doc_example() -> str:
    return re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)[0]


def _errors(source: str) -> list[BankError]:
    data, located = parse_yaml(source, "x.yaml")
    return validate(data, located, "x.yaml")[1]


def test_the_docs_example_validates_checks_and_names_its_mistake() -> None:
    source = doc_example()
    assert _errors(source) == []
    ex = load_exercise_source("q/doc", source)
    assert check_exercise(ex, range(60)) == []
    for seed in range(30):
        v = ex.generate(seed)
        A, x = np.asarray(v.values["A"]), np.asarray(v.values["x"])
        assert not np.allclose(v.expected, x), seed  # drawn apart from the named mistake
        wrong = grade_answer(v, "[" + ", ".join(str(float(c)) for c in x) + "]")
        assert "transpose_as_inverse" in wrong.mistake_codes
        assert wrong.mistakes[-1].message.startswith("That is x itself")
        first = v.solution[0]
        assert first.title == "The prediction"
        assert "\\begin{pmatrix}" in first.text  # {{ AtA }} rendered from the derived value
        assert np.asarray(v.values["AtA"]) == pytest.approx(A.T @ A)


HEAD = "title: T\nkind: expression\nvariables:\n  a: {integers: [1, 3]}\n  b: {integers: [1, 3]}\n"
PROMPT = "prompt: 'Compute it. Give exact values.'\n"


def test_a_mistake_equal_to_the_answer_is_drawn_away() -> None:
    # a * b and a + b agree for a = b = 2: those draws are drawn again
    source = HEAD + "answer: a * b\nmistakes:\n  - {code: added, answer: a + b, message: Added.}\n"
    ex = load_exercise_source("q/m", source + PROMPT)
    for seed in range(100):
        v = ex.generate(seed)
        assert (v.values["a"], v.values["b"]) != (2.0, 2.0)
        assert v.detectors == ("authored",)


def test_a_mistake_that_is_always_right_is_an_error_at_its_line() -> None:
    source = HEAD + "answer: a * b\nmistakes:\n  - code: same\n    answer: b * a\n    message: x\n"
    errors = _errors(source + PROMPT)
    assert errors and "gave the right answer in every one" in errors[0].message
    assert errors[0].line == 8  # the mistake's code: line, where its item starts


@pytest.mark.parametrize(
    ("extra", "says", "line"),
    [
        ("mistakes:\n  - {code: Bad, answer: a, message: m}\n", "lowercase", 8),
        ("mistakes:\n  - {code: m, answer: c + 1, message: m}\n", "unknown name 'c'", 8),
        ("derived:\n  a: b + 1\n", "already a variable", 8),
        ("derived:\n  s: t + 1\n  t: a\n", "earlier", 8),
        ("explanation:\n  - {title: Why, text: 'It is {{ nope }}.'}\n", "unknown placeholder", 8),
    ],
)
def test_authoring_errors_are_located(extra: str, says: str, line: int) -> None:
    errors = _errors(HEAD + "answer: a * b\n" + extra + PROMPT)
    assert any(says in e.message for e in errors), [str(e) for e in errors]
    assert any(e.line == line for e in errors if says in e.message), [str(e) for e in errors]


def test_derived_values_serve_require_and_templates() -> None:
    source = (
        HEAD
        + "derived:\n  s: a + b\nrequire:\n  - s >= 4\nanswer: s * 2\n"
        + "prompt: 'With s = {{ s }}, double it. Give exact values.'\n"
    )
    ex = load_exercise_source("q/d", source)
    for seed in range(40):
        v = ex.generate(seed)
        assert v.values["s"] == v.values["a"] + v.values["b"] >= 4
        assert f"s = {int(v.values['s'])}," in v.prompt
        assert float(v.expected) == 2 * v.values["s"]


def test_mistakes_and_explanation_are_bounded_like_hints() -> None:
    """The size limits of a file an author controls (MAX_HINTS items, MAX_HINT_CHARS characters
    of Markdown) hold for the named mistakes and the explanation steps too."""
    from quizapp.bank.schema import MAX_HINT_CHARS, MAX_HINTS

    head = (
        "title: T\nkind: expression\nvariables:\n  a: {integers: [1, 5]}\nanswer: a / 3\n"
        'prompt: "Compute $a/3$ to 2 decimal places."\ntolerance: {decdig: 2}\n'
    )
    many = "mistakes:\n" + "".join(
        f"  - {{code: m{i}, answer: a + {i + 1}, message: Not this.}}\n"
        for i in range(MAX_HINTS + 1)
    )
    (err,) = _errors(head + many)
    assert (err.line, err.column) == (9, 3) and f"at most {MAX_HINTS} items" in err.message
    long = f"explanation:\n  - title: Why\n    text: {'x' * (MAX_HINT_CHARS + 1)}\n"
    (err,) = _errors(head + long)
    assert err.line == 10 and f"at most {MAX_HINT_CHARS} characters" in err.message
    assert _errors(head + "explanation:\n  - {title: Why, text: Because.}\n") == []


@pytest.mark.parametrize("field", ["variables", "require", "derived"])
def test_variables_conditions_and_derived_values_are_bounded(field: str) -> None:
    """Every condition and derived value is evaluated on each draw (20,000 conditions cost
    1.6 s per first view, 5,000 derived values 21 s per preview): at most MAX_VARIABLES /
    MAX_REQUIRE / MAX_DERIVED, refused at the field's first entry, and a refusal always comes
    with its message (ExpressionSpec's own problems are never dropped)."""
    from quizapp.bank import schema

    limit = {"variables": schema.MAX_VARIABLES, "require": schema.MAX_REQUIRE,
             "derived": schema.MAX_DERIVED}[field]  # fmt: skip
    head = "title: T\nkind: expression\nanswer: a / 3\n"
    tail = 'prompt: "Compute $a/3$ to 2 decimal places."\ntolerance: {decdig: 2}\n'

    def body(n: int) -> str:
        variables = "variables:\n  a: {integers: [1, 5]}\n"
        if field == "variables":
            variables += "".join(f"  v{i}: {{integers: [1, 5]}}\n" for i in range(n - 1))
            return variables
        if field == "require":
            return variables + "require:\n" + "".join(f"  - a > {-i}\n" for i in range(n))
        return variables + "derived:\n" + "".join(f"  d{i}: a + {i}\n" for i in range(n))

    assert _errors(head + body(limit) + tail) == []
    errors = _errors(head + body(limit + 1) + tail)
    assert len(errors) == 1, errors
    assert f"{field}: {limit + 1} " in errors[0].message
    assert f"at most {limit}" in errors[0].message


def test_length_limits_are_told_in_plain_words_with_the_count() -> None:
    """Not the schema library's "String should have at most 200 characters" / "List should
    have at most 10 items after validation, not 12": the bound and what the file has."""
    from quizapp.bank.schema import MAX_HINTS

    head = f"title: {'x' * 230}\nkind: expression\nvariables:\n  a: {{integers: [1, 5]}}\n"
    many = "mistakes:\n" + "".join(
        f"  - {{code: m{i}, answer: a + {i + 1}, message: Not this.}}\n"
        for i in range(MAX_HINTS + 2)
    )
    tail = "answer: a / 3\nprompt: 'Compute $a/3$ to 2 decimal places.'\ntolerance: {decdig: 2}\n"
    messages = sorted(e.message for e in _errors(head + many + tail))
    assert messages == [
        f"mistakes: at most {MAX_HINTS} items, got {MAX_HINTS + 2}",
        "title: at most 200 characters, got 230",
    ]
