"""Multi-part exercises: dependency order, follow-through grading, locked parts.  Pure.

A multi-part variant (``Variant.parts``, see :class:`quizapp.bank.types.Part`) asks for several
answers, each with its own answer form, tolerance, points and detectors.  A part whose answer
is written in terms of earlier parts (``W = softmax(S / sqrt(2))``) is graded twice:

1. against its true value (computed from the true earlier values when the variant was drawn);
2. when that fails, against its **follow-through** value: the same expression evaluated on the
   student's OWN earlier answers (``Part.follow_through``, evaluated by the safe evaluator of
   :mod:`quizapp.bank.expression` over the variant's values and those answers).  A match there
   earns ``Part.follow_through_credit`` of the part's credit (default 1.0) and the verdict says
   "correct given your S".

Follow-through credit is refused when the student's earlier answer makes the later part trivial
or much easier than the real one (:func:`trivial_reason`): an all-zero or identity matrix, a 1
for a number, rows whose entries are all equal (a softmax of such a row is uniform), all rows the
same, or a copy of another matrix of the exercise (a given matrix, another part's value or the
student's answer to another part).  This is the trap the Numbas developers describe (a student
who types the identity for an inverse would get every later product "right" for free).

The exercise's score is the points-weighted mean of the parts' scores; its mistakes are the
parts' (each code once, the sentence naming its part), so they are counted like any other.  An answer with a part
that cannot be read is ``invalid`` as a whole: nothing is graded, no attempt is used (the other
parts' verdicts are withheld, so an unreadable part cannot buy free grading).  A part that is
correct against its true value (or by follow-through from parts that are themselves locked)
**locks**: later submissions keep its answer (:func:`merge_answers`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from quizapp.bank.expression import ExpressionError, evaluate
from quizapp.bank.types import Part, Variant
from quizapp.grading import Mistake, Status, Verdict

Answer = Any  # a text, or a grid (list of rows of cell strings)

#: Below this (absolute) a number counts as zero, and two numbers as equal, for
#: :func:`trivial_reason` (answers are typed to a few decimals: this only catches exact forms).
TRIVIAL_ATOL = 1e-9


# --------------------------------------------------------------------------------------------
# Detectors of a part: the named mistakes of the built-in kinds


@dataclass(frozen=True)
class DetectorFamily:
    """The inputs a family of named mistakes reads (``quizapp/bank/kinds/_mistakes.py``).

    ``arrays``: required inputs, each an expression; ``optional``: inputs that may be left out;
    ``lists``: inputs that are lists of expressions (one per head); ``choices``: inputs that are
    one word of a fixed list (``ask: weights``); ``extra``: detector codes added to the family's
    value mistakes for some choice (``rows_dont_sum_to_one`` for softmax weights)."""

    arrays: tuple[str, ...]
    optional: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


#: The families a part's ``detectors:`` may name, with the inputs of each (``detectors:
#: {attention: {Q: Q, K: K, ask: weights}}`` names a forgotten sqrt(d), a column softmax, KQ^T,
#: ... exactly as the ``attention`` kind does).
DETECTOR_FAMILIES: dict[str, DetectorFamily] = {
    "attention": DetectorFamily(
        arrays=("Q", "K"),
        optional=("V",),
        choices={"ask": ("scores", "scaled", "weights", "output")},
        extra={"weights": ("rows_dont_sum_to_one",)},
    ),
    "multi_head": DetectorFamily(
        arrays=("X",),
        optional=("W_O",),
        lists=("W_Q", "W_K", "W_V"),
        choices={"ask": ("concat", "output")},
    ),
    "softmax": DetectorFamily(arrays=("x",), extra={"": ("rows_dont_sum_to_one",)}),
    "product": DetectorFamily(arrays=("A", "B"), choices={"op": ("AB", "BA", "(AB)^T", "AB-BA")}),
    "inverse": DetectorFamily(arrays=("A",)),
    "map_matrix": DetectorFamily(arrays=("images",), optional=("basis",)),
    "basis": DetectorFamily(arrays=("basis", "v")),
}


def detector_spec_problem(spec: Mapping[str, Any]) -> str | None:
    """What is wrong with a part's ``detectors:`` mapping (one family, its inputs), or None."""
    if not isinstance(spec, Mapping) or len(spec) != 1:
        return (
            "give one family of mistakes, e.g. {attention: {Q: Q, K: K, ask: weights}} "
            f"(families: {', '.join(DETECTOR_FAMILIES)})"
        )
    ((name, inputs),) = spec.items()
    family = DETECTOR_FAMILIES.get(name)
    if family is None:
        return f"unknown family of mistakes {name!r} (families: {', '.join(DETECTOR_FAMILIES)})"
    if not isinstance(inputs, Mapping):
        return f"{name}: give its inputs as a mapping, e.g. {{{family.arrays[0]}: ...}}"
    allowed = family.arrays + family.optional + family.lists + tuple(family.choices)
    for key in inputs:
        if key not in allowed:
            return f"{name}: unknown input {key!r} (inputs: {', '.join(allowed)})"
    for key in family.arrays + tuple(family.choices) + family.lists:
        if key not in inputs:
            return f"{name}: missing input {key!r}"
    for key, options in family.choices.items():
        if inputs[key] not in options:
            return f"{name}: {key} is one of {', '.join(options)}, got {inputs[key]!r}"
    lengths = set()
    for key in family.lists:
        items = inputs[key]
        if not isinstance(items, list) or not items:
            return f"{name}: {key} is a list of expressions, one per head"
        lengths.add(len(items))
    if len(lengths) > 1:
        return f"{name}: {', '.join(family.lists)} must list the same number of heads"
    for label, text in detector_expressions(spec):
        if isinstance(text, bool) or not isinstance(text, (str, int, float)):
            return f"{label} is an expression, got {text!r}"
    return None


def detector_expressions(spec: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(label, expression) of every expression input of a (valid) ``detectors:`` mapping."""
    out: list[tuple[str, Any]] = []
    for name, inputs in spec.items():
        family = DETECTOR_FAMILIES.get(name)
        if family is None or not isinstance(inputs, Mapping):
            continue
        for key in family.arrays + family.optional:
            if key in inputs:
                out.append((f"{name}.{key}", inputs[key]))
        for key in family.lists:
            for i, text in enumerate(inputs.get(key) or []):
                out.append((f"{name}.{key}[{i + 1}]", text))
    return out


def detector_context(
    spec: Mapping[str, Any], env: Mapping[str, Any], expected: Any
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The detector context and codes of a part whose ``detectors:`` is ``spec``: each input
    evaluated over ``env`` (the variables and the earlier parts' true values), and the family's
    mistakes whose value differs clearly from ``expected`` (``distinguishable_codes``: a mistake
    that gives the right answer here is never named).  Raises ``ExpressionError``."""
    from quizapp.bank.kinds._mistakes import MISTAKES, distinguishable_codes

    ((name, inputs),) = spec.items()
    family = DETECTOR_FAMILIES[name]
    ctx: dict[str, Any] = {"family": name}
    for key in family.arrays + family.optional:
        if key in inputs:
            ctx[key] = np.asarray(evaluate(str(inputs[key]), env), dtype=float)
    for key in family.lists:
        ctx[key] = [np.asarray(evaluate(str(t), env), dtype=float) for t in inputs[key]]
    for key in family.choices:
        ctx[key] = str(inputs[key])
    if name == "map_matrix":
        ctx.setdefault("basis", None)
    codes = tuple(code for fam, code in MISTAKES if fam == name)
    found = distinguishable_codes(expected, ctx, codes)
    choice = next((str(inputs[k]) for k in family.choices), "")
    return ctx, found + tuple(family.extra.get(choice, ()))


# --------------------------------------------------------------------------------------------
# Authoring: dependency order, points


def dependency_problems(
    names: Sequence[str], reads: Sequence[set[str]], variables: set[str]
) -> list[tuple[int, str]]:
    """The problems of a ``parts:`` list as (part index, message): a name used twice, a part
    named like a variable, a part that names itself, a later part, or is in a cycle.  ``reads``
    are the names each part's answer reads.  (Names neither variables nor parts are the
    validator's "unknown name".)"""
    out: list[tuple[int, str]] = []
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            out.append((i, f"the part name {name!r} is used twice (parts must differ)"))
            continue
        first[name] = i
        if name in variables:
            out.append(
                (i, f"the part name {name!r} is also a variable: give the part another name")
            )
    index = {name: i for i, name in reversed(list(enumerate(names)))}
    for i, name in enumerate(names):
        for used in sorted(reads[i] & set(index)):
            if used in variables:
                continue
            j = index[used]
            if j == i and used == name:
                out.append((i, f"part {name} uses itself ({name} in its own answer)"))
            elif j > i:
                cycle = _cycle(i, j, names, reads, index)
                if cycle:
                    out.append((i, "the parts form a cycle: " + " -> ".join(cycle)))
                else:
                    out.append(
                        (
                            i,
                            f"part {name} uses {used}, a later part: a part may use only "
                            f"earlier parts (move {used} before {name})",
                        )
                    )
    return out


def _cycle(
    start: int, nxt: int, names: Sequence[str], reads: Sequence[set[str]], index: dict[str, int]
) -> list[str] | None:
    """A path of part names from part ``start`` through ``nxt`` back to ``start``, or None."""
    path = [start, nxt]
    seen = {nxt}

    def walk(k: int) -> bool:
        for used in sorted(reads[k] & set(index)):
            j = index[used]
            if j == start:
                path.append(start)
                return True
            if j not in seen:
                seen.add(j)
                path.append(j)
                if walk(j):
                    return True
                path.pop()
        return False

    return [names[k] for k in path] if walk(nxt) else None


def share_points(total: float, given: Sequence[float | None]) -> list[float]:
    """Each part's points: those given, and for the parts that give none an equal share of what
    the given ones leave of ``total`` (the exercise's points).  Validation guarantees that the
    given points do not exceed ``total`` (and equal it when every part gives its points)."""
    fixed = sum(float(g) for g in given if g is not None)
    free = sum(1 for g in given if g is None)
    each = max(0.0, float(total) - fixed) / free if free else 0.0
    return [float(g) if g is not None else each for g in given]


def part_shares(parts: Sequence[Any]) -> dict[str, float]:
    """Each part's fraction of the exercise's score, by name, from the points the variant's
    parts carry (``points``: a :class:`Part` or a stored ``PartForm``; None weighs 1): the
    weights of the combined score (:func:`grade_parts`), the share a progress row keeps, and
    the points a page shows for a part (its share of the exercise's current points, so a change
    of the exercise's points applies to every variant at once; the split between parts is the
    variant's until a regrade keys it again).  An equal share when every weight is 0."""
    weights = {p.name: max(0.0, float(p.points if p.points is not None else 1.0)) for p in parts}
    total = sum(weights.values())
    if not weights:
        return {}
    if total <= 0:
        return {name: 1.0 / len(weights) for name in weights}
    return {name: w / total for name, w in weights.items()}


def flat_solution(parts: Sequence[Part]) -> list[Any]:
    """The worked solution of a multi-part variant as one list: each part's steps, titled
    ``<part> · <step>``."""
    out = []
    for part in parts:
        for step in part.solution:
            out.append(replace(step, title=f"{part.name} · {step.title}"))
    return out


# --------------------------------------------------------------------------------------------
# Follow-through


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-9, atol=TRIVIAL_ATOL))


def _equal_row_entries(a: np.ndarray) -> bool:
    return a.ndim == 2 and a.shape[1] > 1 and bool(np.all(np.ptp(a, axis=1) <= TRIVIAL_ATOL))


def _equal_rows(a: np.ndarray) -> bool:
    return a.ndim == 2 and a.shape[0] > 1 and bool(np.all(np.ptp(a, axis=0) <= TRIVIAL_ATOL))


def trivial_reason(
    value: Any, true: Any, name: str, others: Mapping[str, Any] | None = None
) -> str | None:
    """Why the student's answer ``value`` to part ``name`` (whose true value is ``true``) would
    make a later part trivial or much easier, or None.

    Refused forms (each only when the true value does not have it): all zeros; the identity
    matrix (a 1 for a number); a matrix whose rows each have equal entries (their softmax is
    uniform); a matrix whose rows are all the same; a copy of one of ``others`` (label -> array:
    the exercise's matrices, the other parts' values, the student's other answers)."""
    v = np.asarray(value, dtype=float)
    t = np.asarray(true, dtype=float)
    if v.size == 0 or not np.all(np.isfinite(v)):
        return None
    t_ok = t.shape == v.shape and bool(np.all(np.isfinite(t)))
    if np.all(np.abs(v) <= TRIVIAL_ATOL) and not (t_ok and np.all(np.abs(t) <= TRIVIAL_ATOL)):
        return f"your {name} is all zeros" if v.size > 1 else f"your {name} is 0"
    if (
        v.ndim == 0
        and abs(float(v) - 1.0) <= TRIVIAL_ATOL
        and not (t_ok and abs(float(t) - 1) <= TRIVIAL_ATOL)
    ):
        return f"your {name} is 1"
    if v.ndim == 2 and v.shape[0] == v.shape[1] > 1:
        eye = np.eye(v.shape[0])
        if _same(v, eye) and not (t_ok and _same(t, eye)):
            return f"your {name} is the identity matrix"
    if _equal_row_entries(v) and not (t_ok and _equal_row_entries(t)):
        return f"every row of your {name} has equal entries"
    if _equal_rows(v) and not (t_ok and _equal_rows(t)):
        return f"all rows of your {name} are the same"
    for label, other in (others or {}).items():
        o = np.asarray(other, dtype=float)
        if o.size > 1 and _same(v, o) and not (t_ok and _same(t, o)):
            return f"your {name} is a copy of {label}"
    return None


def numeric_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers and numeric arrays among a variant's values (what expressions may read)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float, np.integer, np.floating)):
            out[key] = float(value)
        elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            out[key] = value.astype(float)
    return out


@dataclass
class FollowThrough:
    """The follow-through value of a part (``value``), or why there is none (``reason``, shown
    to the student; ``refused`` when it was refused as trivial rather than impossible)."""

    value: np.ndarray | None
    reason: str = ""
    refused: bool = False


def _as_value(parsed: Any) -> np.ndarray | None:
    try:
        arr = np.asarray(parsed, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr if np.all(np.isfinite(arr)) else None


def follow_through_value(
    variant: Variant,
    part: Part,
    student: Mapping[str, np.ndarray],
    correct: Mapping[str, bool],
    notes: Mapping[str, str] | None = None,
) -> FollowThrough:
    """Part ``part``'s value from the student's own earlier answers (``student``: part name ->
    the parsed value; ``correct``: part name -> whether that answer is right; ``notes``: part
    name -> why its answer cannot be used, e.g. "your S has the wrong shape"), or why not."""
    if not part.follow_through or not part.uses:
        return FollowThrough(None)
    missing = [u for u in part.uses if u not in student]
    if missing:
        why = [(notes or {}).get(u) or f"{u} is not answered" for u in missing]
        return FollowThrough(None, "; ".join(why))
    by_name = {p.name: p for p in variant.parts}
    env = numeric_values(variant.values)
    others: dict[str, Any] = {k: v for k, v in env.items() if np.ndim(v) > 0}
    for p in variant.parts:
        if p.name not in part.uses and p.name != part.name:
            others[p.name] = p.expected
    for u in part.uses:
        if correct.get(u):
            continue
        mine = {f"your {k}": v for k, v in student.items() if k != u}
        reason = trivial_reason(student[u], by_name[u].expected, u, {**others, **mine})
        if reason:
            return FollowThrough(None, f"{reason}, which makes {part.name} trivial", refused=True)
    env.update({u: student[u] for u in part.uses})
    try:
        value = np.asarray(evaluate(part.follow_through, env), dtype=float)
    except ExpressionError as exc:
        return FollowThrough(
            None, f"{part.name} cannot be computed from your {_names(part.uses)} ({exc.message})"
        )
    expected = np.asarray(part.expected, dtype=float)
    if value.shape != expected.shape or not np.all(np.isfinite(value)):
        return FollowThrough(None, f"{part.name} cannot be computed from your {_names(part.uses)}")
    if any(not correct.get(u) for u in part.uses):
        inputs = {k: v for k, v in numeric_values(variant.values).items() if np.ndim(v) > 0}
        inputs.update({f"your {u}": student[u] for u in part.uses})
        reason = trivial_reason(
            value, expected, f"{part.name} (from your {_names(part.uses)})", inputs
        )
        if reason:
            return FollowThrough(
                None, f"{reason}: that is much easier than the real {part.name}", refused=True
            )
    return FollowThrough(value)


def _names(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# --------------------------------------------------------------------------------------------
# Grading


def part_variant(variant: Variant, part: Part, expected: Any = None) -> Variant:
    """``variant`` narrowed to one part (its expected value, answer form, tolerance, detectors),
    as :func:`quizapp.bank.answers.grade_answer` grades a single answer; with ``expected`` (a
    follow-through value) graded against that value and without detectors."""
    if expected is None:
        return replace(
            variant,
            expected=part.expected,
            answer_form=part.answer_form,
            tolerance=part.tolerance or variant.tolerance,
            detectors=tuple(part.detectors),
            context=dict(part.context),
            solution=list(part.solution),
            hints=list(part.hints),
            parts=[],
        )
    return replace(part_variant(variant, part), expected=expected, detectors=(), context={})


def is_blank(answer: Answer | None) -> bool:
    """An answer with nothing typed: no text, or a grid of empty cells."""
    if answer is None:
        return True
    if isinstance(answer, str):
        return not answer.strip()
    return all(not str(cell).strip() for row in answer for cell in row)


def part_names(variant: Variant) -> list[str]:
    return [p.name for p in variant.parts]


def parse_part_text(text: str, names: Sequence[str]) -> dict[str, str] | None:
    """A whole multi-part answer typed as text, one part after another, each starting on its
    own line with its name (``S = 1 2; 3 4`` or ``S: ...``; a matrix may continue over the next
    lines): part name -> its text.  None unless the text starts with a part's name and names
    no part twice.  (What :func:`quizapp.bank.answers.expected_answer_text` writes.)"""
    import re

    if not names:
        return None
    head = re.compile(
        r"^\s*("
        + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        + r")\s*[=:]"
    )
    out: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        m = head.match(line)
        if m:
            current = m.group(1)
            if current in out:
                return None
            out[current] = line[m.end() :]
        elif current is None:
            if line.strip():
                return None
        else:
            out[current] += "\n" + line
    return {k: v.strip() for k, v in out.items()} or None


def grade_parts(
    variant: Variant, answers: Mapping[str, Answer], *, locked: frozenset[str] = frozenset()
) -> Verdict:
    """Grade a multi-part answer (part name -> text or grid; a part left out or blank is
    unanswered) for ``variant``.  See the module docstring for the rules.

    ``locked``: parts whose answers were carried over as already correct (they are graded like
    the others; an invalid answer still shows them as they are).  Never raises for bad input:
    an unknown part name gives an ``invalid`` verdict naming the parts.
    """
    from quizapp.bank.answers import grade_answer

    names = part_names(variant)
    unknown = [k for k in answers if k not in names]
    if unknown:
        return Verdict(
            "invalid",
            0.0,
            f"This exercise has no part {', '.join(map(repr, unknown))}; its parts are "
            f"{', '.join(names)}.",
        )
    verdicts: dict[str, Verdict] = {}
    student: dict[str, np.ndarray] = {}
    correct: dict[str, bool] = {}
    notes: dict[str, str] = {}
    for part in variant.parts:
        answer = answers.get(part.name)
        if answer is None or is_blank(answer):
            verdicts[part.name] = Verdict("unanswered", 0.0, "Not answered yet.")
            continue
        verdict = grade_answer(part_variant(variant, part), answer)
        if verdict.status not in ("correct", "invalid"):
            verdict = _with_follow_through(variant, part, answer, verdict, student, correct, notes)
        verdicts[part.name] = verdict
        correct[part.name] = verdict.status == "correct" and not verdict.follow_through
        value = _as_value(verdict.parsed) if verdict.status != "invalid" else None
        if value is not None and value.shape == np.shape(part.expected):
            student[part.name] = value
        else:
            notes[part.name] = f"your {part.name} has the wrong shape"
    bad = [n for n, v in verdicts.items() if v.status == "invalid"]
    if bad:
        for name, v in verdicts.items():
            if v.status not in ("invalid", "unanswered") and name not in locked:
                verdicts[name] = Verdict(
                    "ungraded", 0.0, "Not graded: another part of this answer could not be read."
                )
        first = verdicts[bad[0]]
        message = (
            f"Part {bad[0]} could not be read: {first.message} Nothing was graded, so this "
            "answer used no attempt."
        )
        return Verdict("invalid", 0.0, message, parsed=None, parts=verdicts)
    shares = part_shares(variant.parts)
    score = sum(shares[p.name] * verdicts[p.name].score for p in variant.parts)
    score = min(1.0, max(0.0, score))
    status: Status
    if all(verdicts[n].status == "correct" for n in names) and score >= 1.0 - 1e-12:
        status, score = "correct", 1.0
    elif score > 0:
        status = "partial"
    else:
        status = "incorrect"
    mistakes: list[Mistake] = []
    for n in names:
        for m in verdicts[n].mistakes:
            if m.code not in {x.code for x in mistakes}:
                mistakes.append(replace(m, message=f"Part {n}: {m.message}"))
    return Verdict(
        status,
        score,
        _summary(variant, verdicts),
        mistakes=mistakes,
        parsed={n: v.parsed for n, v in verdicts.items() if v.parsed is not None},
        parts=verdicts,
    )


def _with_follow_through(
    variant: Variant,
    part: Part,
    answer: Answer,
    verdict: Verdict,
    student: Mapping[str, np.ndarray],
    correct: Mapping[str, bool],
    notes: Mapping[str, str],
) -> Verdict:
    """``verdict`` (the part graded against its true value, not correct) with follow-through
    credit when the answer matches the value computed from the student's earlier answers."""
    from quizapp.bank.answers import grade_answer

    credit = 1.0 if part.follow_through_credit is None else float(part.follow_through_credit)
    if not part.uses or credit <= 0:
        return verdict
    ft = follow_through_value(variant, part, student, correct, notes)
    if ft.value is None:
        if ft.refused:
            verdict.message = (f"{verdict.message} No follow-through credit: {ft.reason}.").strip()
        return verdict
    given = grade_answer(part_variant(variant, part, ft.value), answer)
    earned = credit * float(given.score)
    if given.status not in ("correct", "partial") or earned <= verdict.score:
        return verdict
    your = _names(part.uses)
    wrong = [u for u in part.uses if not correct.get(u)]
    status: Status
    if given.status == "correct":
        if credit >= 1.0:
            status = "correct"
            message = f"Correct given your {your}."
        else:
            status = "partial"
            message = f"Correct given your {your}: {_pct(credit)} follow-through credit."
    else:
        status = "partial"
        message = f"{given.message.rstrip('.')} given your {your}."
    if wrong:
        message += (
            f" (Your {_names(wrong)} is not right, so {part.name} is graded on your own values.)"
        )
    # The mistakes are those of the answer against its follow-through value: a mistake found
    # against the true value ("the scores were transposed") is the earlier part's, named under
    # that part and in the message above, not a mistake of this answer, which is right given it.
    return Verdict(
        status,
        earned,
        message,
        cells=given.cells,
        mistakes=given.mistakes,
        parsed=given.parsed,
        follow_through=True,
    )


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if math.isclose(100 * x, round(100 * x)) else f"{100 * x:.1f}%"


_SUMMARY_WORDS = {
    "correct": "correct",
    "partial": "partly right",
    "incorrect": "incorrect",
    "unanswered": "not answered",
}


def _summary(variant: Variant, verdicts: Mapping[str, Verdict]) -> str:
    """``2 of 3 parts correct: S correct, W correct given your S, O incorrect.``"""
    names = part_names(variant)
    right = sum(1 for n in names if verdicts[n].status == "correct")
    items = []
    for p in variant.parts:
        v = verdicts[p.name]
        word = _SUMMARY_WORDS.get(v.status, v.status)
        if v.follow_through:
            word += f" given your {_names(p.uses)}"
        items.append(f"{p.name} {word}")
    return f"{right} of {len(names)} parts correct: " + ", ".join(items) + "."


# --------------------------------------------------------------------------------------------
# Several submissions of one variant: locks and carried answers


def locked_parts(variant: Variant, verdict: Mapping[str, Any] | Verdict | None) -> set[str]:
    """The parts a graded answer's verdict locks: correct against the true value, or correct by
    follow-through from parts that are themselves locked (their answers can no longer change,
    so neither can this part's follow-through value).  ``verdict`` is a :class:`Verdict` or its
    stored dict; an invalid one locks nothing new (returns the parts it marks locked)."""
    if verdict is None:
        return set()
    parts = verdict.parts if isinstance(verdict, Verdict) else verdict.get("parts")
    status = verdict.status if isinstance(verdict, Verdict) else verdict.get("status")
    if not parts:
        return set()
    out: set[str] = set()
    if status == "invalid":
        return {n for n, v in parts.items() if isinstance(v, Mapping) and v.get("locked")}
    for p in variant.parts:
        v = parts.get(p.name)
        if v is None:
            continue
        st = v.status if isinstance(v, Verdict) else v.get("status")
        ft = v.follow_through if isinstance(v, Verdict) else bool(v.get("follow_through"))
        if st == "correct" and (not ft or all(u in out for u in p.uses)):
            out.add(p.name)
    return out


def merge_answers(
    variant: Variant,
    posted: Mapping[str, Answer],
    previous: Mapping[str, Answer] | None,
    locked: set[str] | frozenset[str],
) -> tuple[dict[str, Answer], list[str], list[str]]:
    """The whole answer a submission grades: each part's posted answer; for a part posted blank
    or not at all, the answer it had in the last graded submission (``previous``); for a locked
    part always its previous (correct) answer.  Returns (answers, the parts taken from
    ``posted``, the locked parts whose posted answer was ignored).  Raises ``ValueError`` naming
    an unknown part."""
    names = part_names(variant)
    unknown = [k for k in posted if k not in names]
    if unknown:
        raise ValueError(
            f"This exercise has no part {', '.join(map(repr, unknown))}; its parts are "
            f"{', '.join(names)}."
        )
    previous = previous or {}
    merged: dict[str, Answer] = {}
    taken: list[str] = []
    ignored: list[str] = []
    for name in names:
        new = posted.get(name)
        if name in locked and name in previous:
            merged[name] = previous[name]
            if not is_blank(new) and new != previous[name]:
                ignored.append(name)
        elif not is_blank(new):
            merged[name] = new
            taken.append(name)
        elif name in previous and not is_blank(previous[name]):
            merged[name] = previous[name]
    return merged, taken, ignored


def expected_part_answers(variant: Variant) -> dict[str, str]:
    """Part name -> a correct answer as text (what ``quizapp check`` grades)."""
    from quizapp.bank.answers import expected_answer_text

    return {p.name: expected_answer_text(part_variant(variant, p)) for p in variant.parts}
