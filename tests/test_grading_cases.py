"""Every case of tests/cases/grading.yaml (the copy of ../shared/cases/grading.yaml: reports from
real users), read from the file."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from quizapp.grading import Tolerance, grade

CASES_FILE = Path(__file__).resolve().parent / "cases" / "grading.yaml"


def _load() -> list[Any]:
    data = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
    return [
        pytest.param(i, id=f"{i}-{case['expected']!r}-{case['answer']!r}"[:80])
        for i, case in enumerate(data["cases"])
    ]


def tolerance_from_yaml(spec: dict[str, Any]) -> Tolerance:
    """The YAML tolerance mapping ({rtol, atol} / {sigfig} / {decdig}) as a Tolerance."""
    if "sigfig" in spec:
        return Tolerance("sigfig", digits=int(spec["sigfig"]))
    if "decdig" in spec:
        return Tolerance("decdig", digits=int(spec["decdig"]))
    return Tolerance(
        "relabs", rtol=float(spec.get("rtol", 1e-2)), atol=float(spec.get("atol", 1e-8))
    )


@pytest.mark.parametrize("index", _load())
def test_shared_grading_case(index: int) -> None:
    data = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
    case = data["cases"][index]
    tolerance = tolerance_from_yaml(case.get("tolerance", data["defaults"]["tolerance"]))
    start = time.perf_counter()
    verdict = grade(case["expected"], case["answer"], tolerance=tolerance)
    elapsed = time.perf_counter() - start
    assert verdict.status == case["status"], verdict.message
    if "score" in case:
        assert verdict.score == pytest.approx(case["score"])
    for code in case.get("mistakes", []):
        assert code in verdict.mistake_codes, verdict.mistakes
    for code in case.get("no_mistakes", []):
        assert code not in verdict.mistake_codes, verdict.mistakes
    if case.get("fast"):
        assert elapsed < 1.0
    # Contract: an invalid answer scores 0, never counts as wrong, and has no cells.
    if verdict.status == "invalid":
        assert verdict.score == 0 and verdict.cells is None and not verdict.used_attempt
        assert verdict.message
    if verdict.status == "correct":
        assert verdict.score == 1.0 and not verdict.mistakes


def test_every_shared_case_is_collected() -> None:
    data = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
    assert len(_load()) == len(data["cases"]) > 40
