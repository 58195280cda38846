"""The exercise/quiz schema and its located error messages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizapp.bank import BankError, load_exercise_source
from quizapp.bank.kinds import _REGISTRY, all_kinds
from quizapp.bank.loader import load_bank
from quizapp.bank.types import Generated, Kind, KindParams

BASE = """\
title: T
kind: expression
variables:
  A: {matrix: [2, 2], integers: [-3, 3]}
answer: A.T
prompt: "Compute $A^T$ for $A = {{ A }}$."
"""


def errors_of(source: str) -> list[BankError]:
    with pytest.raises(BankError) as info:
        load_exercise_source("q/x", source)
    return info.value.errors


def one_error(source: str) -> BankError:
    errs = errors_of(source)
    assert len(errs) == 1, [str(e) for e in errs]
    return errs[0]


def test_defaults() -> None:
    ex = load_exercise_source("q/x", BASE)
    assert (ex.points, ex.attempts, ex.spec.partial_credit, ex.spec.practice) == (10, 3, True, True)
    tol = ex.spec.tolerance_value()
    assert (tol.mode, tol.rtol, tol.atol) == ("relabs", 1e-2, 1e-8)


@pytest.mark.parametrize(
    ("tolerance", "mode", "digits", "rtol", "atol"),
    [
        ("{rtol: 0.001}", "relabs", None, 0.001, 1e-8),
        ("{atol: 0.5}", "relabs", None, 1e-2, 0.5),
        ("{sigfig: 3}", "sigfig", 3, 1e-2, 1e-8),
        ("{decdig: 2}", "decdig", 2, 1e-2, 1e-8),
    ],
)
def test_tolerance_modes(
    tolerance: str, mode: str, digits: int | None, rtol: float, atol: float
) -> None:
    tol = load_exercise_source("q/x", BASE + f"tolerance: {tolerance}\n").spec.tolerance_value()
    assert (tol.mode, tol.digits, tol.rtol, tol.atol) == (mode, digits, rtol, atol)


@pytest.mark.parametrize(
    ("extra", "line", "says"),
    [
        ("tolerance: {sigfig: 3, decdig: 2}", 7, "two modes"),
        ("tolerance: {}", 7, "empty"),
        ("tolerance: {sigfg: 3}", 7, "did you mean 'sigfig'"),
        ("tolerance: {sigfig: 0}", 7, "tolerance.sigfig"),
        ("points: -1", 7, "points"),
        ("attempts: 2.5", 7, "attempts: expected an integer"),
        ("partial_credit: maybe", 7, "partial_credit: expected true or false"),
        ("hints: Read the slides", 7, "hints: expected a list"),
        ("answer_form: {type: tensor}", 7, "answer_form.type"),
        ("answer_form: {typ: matrix}", 7, "did you mean 'type'"),
        ("require: [det(A) != 0, ok(A)]", 7, "require: calling 'ok' is not allowed"),
        ("require: [det(Z) != 0]", 7, "require: unknown name 'Z'"),
        ("params: {n: 2}", 7, "not params"),
        ("practise: false", 7, "did you mean 'practice'"),
    ],
)
def test_field_problems_are_located(extra: str, line: int, says: str) -> None:
    err = one_error(BASE + extra + "\n")
    assert err.line == line, str(err)
    assert says in err.message, str(err)


@pytest.mark.parametrize(
    ("variable", "says"),
    [
        ("{matrix: [2, 2], integers: [3, -3]}", "integers: the range [3, -3] is reversed"),
        ("{matrix: [2, 2], uniform: [1, 0]}", "uniform"),
        ("{matrix: [2, 2]}", "give exactly one of integers"),
        ("{matrix: [2, 2], integers: [0, 1], choice: [1, 2]}", "integers, choice"),
        ("{matrix: [2], integers: [0, 1]}", "[rows, cols]"),
        ("{matrix: [2, 2], vector: 2, integers: [0, 1]}", "one shape"),
        ("{matrix: [20, 2], integers: [0, 1]}", "from 1 to 12"),
        ("{vector: 3, integers: [0, 1], decimals: 2}", "decimals: only with uniform"),
        ("{matrix: [2, 2], intgers: [0, 1]}", "did you mean 'integers'"),
        ("{matrix: [2, 2], integers: [0, 1], scalar: 3}", "scalar"),
        ("{matrix: [m, 2], integers: [0, 1]}", "earlier variable"),
        ("{vector: true, integers: [0, 1]}", "a dimension is a whole number"),
        ("{matrix: [2.5, 2], integers: [0, 1]}", "a dimension is a whole number"),
    ],
)
def test_variable_problems_are_on_the_variable_line(variable: str, says: str) -> None:
    src = BASE.replace("{matrix: [2, 2], integers: [-3, 3]}", variable)
    err = one_error(src)
    assert err.line == 4, str(err)
    assert says in err.message, str(err)


def test_variable_named_like_a_function_is_refused() -> None:
    err = one_error(
        BASE.replace("  A:", "  det:").replace("A.T", "det.T").replace("{{ A }}", "{{ det }}")
    )
    assert err.line == 4 and "function" in err.message


def test_several_problems_in_one_file_are_all_reported() -> None:
    src = (
        BASE.replace("title: T", "titel: T")
        .replace("answer: A.T", "answer: A.__dict__")
        .replace("[-3, 3]", "[3, -3]")
        .replace("{{ A }}", "{{ Z }}")
        + "pionts: 3\n"
    )
    errs = errors_of(src)
    messages = [(e.line, e.message) for e in errs]
    assert [m[0] for m in messages] == [1, 4, 5, 6, 7], messages
    assert "did you mean 'title'" in messages[0][1]
    assert "integers" in messages[1][1]
    assert "answer" in messages[2][1] and "__dict__" in messages[2][1]
    assert "{{ Z }}" in messages[3][1]
    assert "did you mean 'points'" in messages[4][1]


def test_not_a_mapping() -> None:
    err = one_error("- 1\n- 2\n")
    assert (err.line, "mapping" in err.message) == (1, True)


class _Fixed(Kind):
    """A minimal kind used to test the generic path (params schema, value names from seed 0)."""

    name = "test_fixed_kind"

    class Params(KindParams):
        size: int = 2

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        from quizapp.bank.types import AnswerForm, SolutionStep

        n = params.size  # type: ignore[attr-defined]
        m = rng.integers(0, 9, size=(n, n)).astype(float)
        return Generated(
            values={"M": m},
            expected=m.T,
            answer_form=AnswerForm(type="matrix", shape=(n, n)),
            solution=[SolutionStep(title="Transpose", text="Swap rows and columns.", value=m.T)],
        )


@pytest.fixture
def fixed_kind(monkeypatch: pytest.MonkeyPatch) -> str:
    all_kinds()
    monkeypatch.setitem(_REGISTRY, _Fixed.name, _Fixed())
    return _Fixed.name


def test_other_kind_params_and_placeholders(fixed_kind: str) -> None:
    ok = f"title: T\nkind: {fixed_kind}\nparams: {{size: 3}}\nprompt: 'Transpose ${{{{ M }}}}$.'\n"
    v = load_exercise_source("q/k", ok).generate(5)
    assert v.expected.shape == (3, 3)
    err = one_error(ok.replace("size: 3", "sise: 3"))
    assert (
        err.line,
        "params: did you mean" in err.message or "did you mean 'size'" in err.message,
    ) == (3, True)
    err = one_error(ok.replace("size: 3", "size: three"))
    assert err.line == 3 and "params.size" in err.message
    err = one_error(ok.replace("{{ M }}", "{{ N }}"))
    assert err.line == 4 and "{{ N }}" in err.message and "known: M" in err.message
    err = one_error(ok + "answer: M.T\n")
    assert err.line == 5 and "only for kind: expression" in err.message


def test_unknown_kind_suggests_from_the_registry(fixed_kind: str) -> None:
    err = one_error(BASE.replace("kind: expression", "kind: test_fixd_kind"))
    assert err.line == 2 and "did you mean 'test_fixed_kind'" in err.message
    err = one_error(BASE.replace("kind: expression", "kind: zzz"))
    assert "known kinds" in err.message and "expression" in err.message


def test_block_scalar_prompt_placeholder_line() -> None:
    src = BASE.replace(
        'prompt: "Compute $A^T$ for $A = {{ A }}$."',
        "prompt: |\n  Line one.\n  Then $ {{ B }} $.\n",
    )
    err = one_error(src)
    assert err.line == 8 and "B" in err.message


def test_template_syntax_error_is_located() -> None:
    err = one_error(BASE.replace("{{ A }}", "{{ A "))
    assert err.line == 6 and "template syntax error" in err.message


def test_quiz_yaml_schema(tmp_path: Path) -> None:
    quiz = tmp_path / "q"
    quiz.mkdir()
    (quiz / "quiz.yaml").write_text("title: Q\ndescrption: x\nopens: 2026-03-01 09:00\n")
    bank = load_bank(tmp_path)
    msgs = [(e.line, e.message) for e in bank.errors]
    assert msgs == [(2, "unknown key 'descrption': did you mean 'description'?")]
    (quiz / "quiz.yaml").write_text("title: Q\nopens: 2026-03-01 09:00\ncloses: 2026-02-01\n")
    (err,) = load_bank(tmp_path).errors
    assert "must be after opens" in err.message and (err.line, err.column) == (3, 9)
    (quiz / "quiz.yaml").write_text(
        "title: Q\nopens: 2026-03-01 09:00\ncloses: 2026-04-01\norder: 3\n"
    )
    bank = load_bank(tmp_path)
    assert bank.errors == []
    q = bank.quizzes["q"]
    assert (q.opens.month, q.closes.month, q.order, q.exercise_ids) == (3, 4, 3, [])


def test_unknown_concept_is_located_with_suggestion() -> None:
    from quizapp.bank.concepts import CONCEPTS

    known = sorted(CONCEPTS)
    good = known[0]
    assert load_exercise_source("q/c", BASE + f"concepts: [{good}]\n").spec.concepts == [good]
    err = one_error(BASE + f"concepts:\n  - {good}\n  - {good}x\n")
    assert err.line == 9 and f"unknown concept '{good}x'" in err.message
    assert f"did you mean '{good}'" in err.message
