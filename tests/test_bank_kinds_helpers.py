"""Helpers for the bank tests (no tests here): build a Variant from a kind without the YAML loader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from quizapp.bank.kinds import all_kinds, get_kind
from quizapp.bank.types import Variant
from quizapp.grading.types import Tolerance

REPO = Path(__file__).resolve().parent.parent


def tolerance_from_yaml(spec: dict | None) -> Tolerance:
    if not spec:
        return Tolerance()
    if "sigfig" in spec:
        return Tolerance(mode="sigfig", digits=int(spec["sigfig"]))
    if "decdig" in spec:
        return Tolerance(mode="decdig", digits=int(spec["decdig"]))
    return Tolerance(rtol=float(spec.get("rtol", 1e-2)), atol=float(spec.get("atol", 1e-8)))


#: The kinds of this test suite: every kind but ``expression`` (bank-core's, tested there).
def my_kinds() -> list[str]:
    return sorted(name for name in all_kinds() if name != "expression")


def exercise_specs() -> list[tuple[str, dict]]:
    """(exercise id, YAML data) for every non-expression exercise, plus each kind's defaults."""
    out = [(f"defaults/{name}", {"kind": name, "params": {}}) for name in my_kinds()]
    for f in sorted((REPO / "exercises").glob("*/*.yaml")):
        if f.name == "quiz.yaml":
            continue
        data = yaml.safe_load(f.read_text(encoding="utf-8"))
        if data["kind"] != "expression":
            out.append((f"{f.parent.name}/{f.stem}", data))
    return out


def make_variant(data: dict, seed: int, exercise_id: str = "test/ex") -> Variant:
    kind = get_kind(data["kind"])
    params = kind.Params.model_validate(data.get("params") or {})
    g = kind.generate(params, np.random.default_rng(seed))
    return Variant(
        exercise_id=exercise_id,
        seed=seed,
        title=data.get("title", exercise_id),
        prompt=data.get("prompt", ""),
        expected=g.expected,
        answer_form=g.answer_form,
        solution=g.solution,
        tolerance=tolerance_from_yaml(data.get("tolerance")),
        partial_credit=data.get("partial_credit", True),
        values=g.values,
        context=g.context,
        detectors=g.detectors,
        hints=list(data.get("hints") or []),
        parts=list(g.parts),  # steps: true (their tolerance and points: the variant's)
    )


def text(a) -> str:
    """An array as answer text at full precision."""
    x = np.asarray(a, dtype=float)
    if x.ndim == 0:
        return repr(float(x))
    if x.ndim == 1:
        return "[" + ", ".join(repr(float(v)) for v in x) + "]"
    return "[" + ", ".join(text(r) for r in x) + "]"
