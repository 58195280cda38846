"""The precision a prompt states against the tolerance it is graded with, checked by
``quizapp validate`` on the YAML and on the variant of seed 0, and located at the line
responsible (the rule itself is :mod:`quizapp.bank.precision`; ``quizapp check`` applies it to
every seed)."""

from __future__ import annotations

from typing import Any

from quizapp.bank.precision import (
    PrecisionProblem,
    precision_statements,
    tolerance_problem,
    variant_precision_problems,
)
from quizapp.bank.schema import ExerciseSpec
from quizapp.bank.types import Kind, KindParams
from quizapp.bank.validate_places import _at, _line_in, _part_items, part_points_total
from quizapp.bank.yamlio import BankError, Located, Mark


def _check_precision(
    spec: ExerciseSpec, data: dict[str, Any], located: Located, file: str
) -> list[BankError]:
    """The precision the prompt states and the tolerance agree whatever the variant (the rule
    of :mod:`quizapp.bank.precision` at its ``PROBES``, 0 and 1), reported at ``tolerance:`` (or
    at the prompt line stating the precision when the tolerance is the default).  What only a
    variant shows (a precision stated through a placeholder or in a part's prompt, the
    tolerance at the variant's values) is checked on seed 0 (:func:`_check_seed_precision`) and
    by ``quizapp check`` on every seed."""
    found = precision_statements(spec.prompt)
    if not found:
        return []
    if len(found) > 1:
        phrases = " and ".join(sorted(p.phrase() for p in found))
        message = f"it states several precisions ({phrases}): state one"
        _, mark = precision_mark(data, located, PrecisionProblem(None, "prompt", False, message))
        return [_at(file, mark, f"prompt: {message}")]
    problem = tolerance_problem(found.pop(), spec.tolerance_value())
    if not problem:
        return []
    label, mark = precision_mark(data, located, PrecisionProblem(None, "tolerance", False, problem))
    return [_at(file, mark, f"{label}: {problem}")]


#: The seed whose variant ``quizapp validate`` checks against the stated precision (the YAML's
#: own check cannot see a precision stated through a placeholder, a part's, or the values).
PRECISION_SEED = 0
#: Words that mark the line of a prompt stating its precision.
_PRECISION_WORDS = ("decimal", "significant", "exact")


def _check_seed_precision(
    data: dict[str, Any],
    spec: ExerciseSpec,
    kind: Kind,
    params: KindParams,
    located: Located,
    file: str,
) -> list[BankError]:
    """The variant of :data:`PRECISION_SEED`, as ``Exercise.generate`` draws it (prompts
    rendered, parts with their tolerances), agrees with the precision its prompts state
    (:func:`quizapp.bank.precision.variant_precision_problems`), each problem at the line
    responsible (:func:`precision_mark`).  A seed that does not generate is reported by the
    generation checks, not here."""
    from quizapp.bank.loader import Exercise

    exercise = Exercise(file, "", file, part_points_total(spec), "", "", kind, params)
    return [e for e, missing in _seed_precision_problems(exercise, data, located) if not missing]


def _seed_precision_problems(
    exercise: Any, data: dict[str, Any], located: Located
) -> list[tuple[BankError, bool]]:
    """:func:`quizapp.bank.precision.variant_precision_problems` of ``exercise``'s variant of
    :data:`PRECISION_SEED`, located, each with its ``missing`` flag; [] when it does not
    generate (the generation checks report that)."""
    try:
        v = exercise.generate(PRECISION_SEED)
    except Exception:  # noqa: BLE001 - reported by the generation checks and sample_problems
        return []
    try:
        problems = variant_precision_problems(v)
    except Exception:  # noqa: BLE001 - a variant that cannot be graded or written out: the
        return []  # generation checks and sample_problems report it; validation never crashes
    out = []
    for problem in problems:
        label, mark = precision_mark(data, located, problem)
        message = f"{label}: {problem.message} (seed {PRECISION_SEED})"
        out.append((_at(exercise.path, mark, message), problem.missing))
    return out


def missing_precision_warnings(exercise: Any) -> list[BankError]:
    """The numeric answers of ``exercise`` (a loaded ``quizapp.bank.loader.Exercise``) whose
    prompt, at seed 0, states no precision, at the prompt's line: ``quizapp validate`` prints
    them as warnings (a refusal would reject every file written before prompts had to state
    one), ``quizapp check`` refuses them on every seed."""
    from quizapp.bank.yamlio import parse_yaml

    try:
        data, located = parse_yaml(exercise.source, exercise.path)
    except BankError:
        return []
    if not isinstance(data, dict):
        return []
    return [e for e, missing in _seed_precision_problems(exercise, data, located) if missing]


def precision_mark(
    data: dict[str, Any], located: Located, problem: PrecisionProblem
) -> tuple[str, Mark]:
    """The field and the position of the YAML line responsible for ``problem``: for a
    tolerance, the part's ``tolerance:`` (when it writes one), else the exercise's, else (the
    default tolerance) the prompt; for a prompt, the line of the part's prompt (when the part
    states its own precision) or of the exercise's prompt that states the precision (the first
    saying decimal, significant or exact), else the prompt's first line."""
    items = {i: (item, here) for i, item, here in _part_items(data, located)}
    n = problem.part
    part = items.get(n) if n is not None else None
    if problem.field == "tolerance":
        if n is not None and part is not None and "tolerance" in part[1].keys:
            return f"parts[{n + 1}].tolerance", part[1].keys["tolerance"]
        if "tolerance" in located.keys:
            return "tolerance", located.keys["tolerance"]
    label, text, here = "prompt", data.get("prompt"), located
    if n is not None and part is not None and problem.own_prompt and "prompt" in part[1].values:
        label, text, here = f"parts[{n + 1}].prompt", part[0].get("prompt"), part[1]
    mark = here.values.get("prompt", here.start)
    lines = text.splitlines() if isinstance(text, str) else []
    stating = [
        i for i, line in enumerate(lines, 1) if any(w in line.lower() for w in _PRECISION_WORDS)
    ]
    return label, _line_in(mark, here.styles.get("prompt"), stating[0] if stating else 1)
