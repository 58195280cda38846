"""``quizapp.bank.check``: the per-seed checks catch the faults they name."""

from __future__ import annotations

import numpy as np
import pytest

from quizapp.bank import load_exercise_source
from quizapp.bank.check import check_exercise, check_variant
from quizapp.bank.kinds import _REGISTRY, all_kinds
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep


class _Faulty(Kind):
    """A kind with switchable faults, to prove each check fires."""

    name = "test_faulty_kind"

    class Params(KindParams):
        fault: str = "none"

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        fault = params.fault  # type: ignore[attr-defined]
        m = rng.integers(1, 9, size=(2, 2)).astype(float)
        expected = m.copy()
        shape = (2, 2)
        step_value: object = m
        if fault == "nan":
            expected[0, 0] = np.nan
        if fault == "shape":
            shape = (3, 2)
        if fault == "step":
            step_value = np.array([np.inf])
        if fault == "constant":
            m = np.ones((2, 2))
            expected = m
        return Generated(
            values={"M": m},
            expected=expected,
            answer_form=AnswerForm(type="matrix", shape=shape),
            solution=[SolutionStep(title="Copy", text="Copy $M$.", value=step_value)],
        )


@pytest.fixture
def faulty(monkeypatch: pytest.MonkeyPatch) -> str:
    all_kinds()
    monkeypatch.setitem(_REGISTRY, _Faulty.name, _Faulty())
    return _Faulty.name


def _exercise(kind: str, fault: str, prompt: str = "Copy ${{ M }}$."):
    src = f"title: T\nkind: {kind}\nparams: {{fault: {fault}}}\nprompt: '{prompt}'\n"
    return load_exercise_source(f"q/{fault}", src)


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("nan", "not finite"),
        ("shape", "answer form's shape (3, 2)"),
        ("step", "solution step 'Copy'"),
    ],
)
def test_each_fault_is_reported_with_its_seed(faulty: str, fault: str, says: str) -> None:
    failures = check_exercise(_exercise(faulty, fault), range(4))
    # (grading such a variant may fail as well)
    named = [f.seed for f in failures if says in f.message and f.seed is not None]
    assert named[:3] == [0, 1, 2]


def test_clean_kind_passes_and_constant_kind_does_not(faulty: str) -> None:
    clean = check_exercise(_exercise(faulty, "none"), range(10))
    assert clean == []
    constant = check_exercise(_exercise(faulty, "constant"), range(10))
    assert any(f.seed is None and "identical" in f.message for f in constant)


def test_latex_that_does_not_convert_is_reported(faulty: str) -> None:
    ex = _exercise(faulty, "none", prompt="Copy $\\frac{1}{$ then ${{ M }}$.")
    _, fails = check_variant(ex, 0)
    assert any("prompt has LaTeX that does not convert" in f.message for f in fails)
