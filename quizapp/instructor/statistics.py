"""Per-exercise statistics: attempts, solve rate, score distribution, named mistakes, wrong
answers, and a breakdown by variant parameter."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session, undefer

from quizapp import services
from quizapp.models import (
    Exercise,
    Progress,
    Submission,
    User,
    Variant,
    VariantFailure,
)

log = logging.getLogger(__name__)


#: Score distribution bins: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0) and exactly 1 (full marks).
SCORE_BINS = 11


@dataclass
class ParameterValueStats:
    """Students, solvers and mean best score among the variants with one parameter value."""

    value: str
    students: int
    solved: int
    mean_best_score: float

    @property
    def percent_solved(self) -> float:
        return 100.0 * self.solved / self.students if self.students else 0.0


@dataclass
class ParameterBreakdown:
    """Solve rate by one parameter of the variants (e.g. ``n`` = matrix size, or the answer
    shape), listed only when the class's variants differ in it."""

    name: str
    values: list[ParameterValueStats]


@dataclass
class PartStats:
    """One part of a multi-part exercise over the students whose graded variant (variant 1) has
    it (``students``: a variant drawn from a version with other parts is not counted).

    From each student's best submission (their progress row's ``best_parts``): ``points``
    available (the part's share of the exercise's points), ``mean_best_score``, ``correct``
    (full credit against the true value) and ``follow_through_students`` (their best earned this
    part by follow-through).  Over every graded submission (identical resubmissions skipped) that
    answered the part: ``submissions``, ``follow_through`` (credit given by follow-through) and
    ``refused`` (follow-through refused: the earlier answer made this part trivial)."""

    name: str
    points: float
    students: int
    mean_best_score: float | None
    correct: int
    follow_through_students: int
    submissions: int = 0
    follow_through: int = 0
    refused: int = 0
    #: this part's most frequent wrong answers (as :func:`normalize_answer_value`), with counts
    wrong_answers: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class ExerciseStats:
    """Per-exercise statistics over students (variant 1, graded attempts)."""

    exercise: Exercise
    tried: int
    mean_best_score: float | None
    solved: int
    mean_attempts_to_solve: float | None
    histogram: list[tuple[str, int]]
    mistakes: list[tuple[str, int]]
    wrong_answers: list[tuple[str, int]]
    parameters: list[ParameterBreakdown]
    constant_parameters: dict[str, str]
    submissions: int
    #: Seeds that could not produce a variant (a derived fallback seed was used instead):
    #: how many, and the latest few as (seed, message, when).
    failed_seeds: int = 0
    latest_failures: list[tuple[int, str, Any]] = field(default_factory=list)
    #: per part, for a multi-part exercise (in the parts' order); empty otherwise
    parts: list[PartStats] = field(default_factory=list)
    #: Of ``mistakes``' counts, how many submissions were ambiguous for a code: another named
    #: mistake gave the same answer (the verdict's ``ambiguous_mistakes``), so the student made
    #: one of them, which the answer cannot tell.  Codes never ambiguous are absent.
    ambiguous_mistakes: dict[str, int] = field(default_factory=dict)

    @property
    def percent_solved(self) -> float | None:
        return 100.0 * self.solved / self.tried if self.tried else None


def score_bin(score: float) -> int:
    """The histogram bin of ``score`` in [0, 1]: ``floor(10 * score)`` for scores below 1
    (0-9), and 10 for full marks."""
    s = min(1.0, max(0.0, float(score)))
    if s >= 1.0:
        return 10
    return min(9, int(math.floor(10 * s + 1e-9)))


def score_bin_labels() -> list[str]:
    """Labels of the :func:`score_bin` bins: ``"0–9%"`` ... ``"90–99%"``, ``"100%"``."""
    return [f"{10 * i}–{10 * i + 9}%" for i in range(10)] + ["100%"]


def normalize_answer_value(parsed: Any, digits: int = 4) -> str | None:
    """A parsed answer as comparable text: each number to ``digits`` significant digits.

    ``3.14159 -> "3.142"``; ``[1, 2] -> "(1, 2)"``; ``[[1, 2], [3, 4]] -> "[[1, 2], [3, 4]]"``.
    None when ``parsed`` is not numeric.
    """
    try:
        arr = np.asarray(parsed, dtype=float)
    except (TypeError, ValueError):
        return None
    if arr.ndim > 2 or arr.size > 400:
        return None

    def num(v: float) -> str:
        if not math.isfinite(v):
            return str(v)
        if v == 0:
            return "0"
        text = f"{v:.{digits}g}"
        return "0" if text in ("-0", "0") else text

    if arr.ndim == 0:
        return num(float(arr))
    if arr.ndim == 1:
        return "(" + ", ".join(num(float(v)) for v in arr) + ")"
    return "[" + ", ".join("[" + ", ".join(num(float(v)) for v in r) + "]" for r in arr) + "]"


#: Names of integer prompt values that describe a variant's size (not its random numbers).
SIZE_PARAMETERS = frozenset(
    {"n", "m", "d", "d_k", "d_v", "size", "rows", "cols", "columns", "heads", "count", "tokens"}
)


def variant_parameters(bank_variant: Any) -> dict[str, str]:
    """The parameters of a generated variant worth a breakdown: the answer's shape
    (``"answer shape": "3×3"``) and the integer size values the kind exposes to the prompt
    (names in ``SIZE_PARAMETERS``, e.g. ``n``, ``d``, ``heads``), as text."""
    out: dict[str, str] = {}
    form = getattr(bank_variant, "answer_form", None)
    shape = getattr(form, "shape", None)
    if shape:
        out["answer shape"] = "×".join(str(int(s)) for s in shape)
    for name, value in sorted((getattr(bank_variant, "values", None) or {}).items()):
        if name not in SIZE_PARAMETERS or isinstance(value, bool | np.bool_):
            continue
        if isinstance(value, int | np.integer):
            out[name] = str(int(value))
    return out


def exercise_statistics(session: Session, exercise_id: str, *, top: int = 10) -> ExerciseStats:
    """Statistics of one exercise over the students.

    - ``tried``: students with a graded attempt on variant 1; ``mean_best_score`` over them;
      ``solved`` of them; ``mean_attempts_to_solve``: the mean attempt number of each solver's first
      correct answer (all from progress rows and one aggregate over submissions);
    - ``histogram``: students per best-score bin (:func:`score_bin`);
    - ``mistakes``: named mistakes over graded submissions (identical resubmissions skipped),
      most frequent first (an ambiguous answer counts for each of its codes;
      ``ambiguous_mistakes`` says how many of each code's were); ``wrong_answers``: incorrect/partial answers normalized by
      :func:`normalize_answer_value`, most frequent first;
    - ``parameters``: solve rate per value of each variant parameter that differs between the
      students' variants (see :func:`variant_parameters`).

    Raises ``services.NotFound`` for an unknown exercise.
    """
    exercise = services.get_exercise(session, exercise_id, include_archived=True)
    student = select(User.id).where(User.role == "student").scalar_subquery()
    progress = list(
        session.scalars(
            select(Progress).where(
                Progress.exercise_id == exercise.id,
                Progress.attempts_used > 0,
                Progress.user_id.in_(student),
            )
        )
    )
    tried = len(progress)
    solved_rows = [p for p in progress if p.solved_at is not None]
    histogram_counts = [0] * SCORE_BINS
    for p in progress:
        histogram_counts[score_bin(p.best_score)] += 1
    first_correct = (
        select(
            Submission.user_id,
            func.min(Submission.attempt_number).label("n"),
        )
        .join(Variant, Variant.id == Submission.variant_id)
        .where(
            Submission.exercise_id == exercise.id,
            Submission.used_attempt.is_(True),
            Submission.status == "correct",
            Variant.variant_number == 1,
            Submission.user_id.in_(student),
        )
        .group_by(Submission.user_id)
        .subquery()
    )
    mean_attempts = session.scalar(select(func.avg(first_correct.c.n)))

    mistakes: Counter[str] = Counter()
    ambiguous: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    graded = 0
    for status, codes, parsed, raw, verdict in session.execute(
        select(
            Submission.status,
            Submission.mistakes,
            Submission.parsed,
            Submission.raw_answer,
            Submission.verdict,
        ).where(
            Submission.exercise_id == exercise.id,
            Submission.used_attempt.is_(True),
            Submission.duplicate_of_id.is_(None),
            Submission.user_id.in_(student),
        )
    ):
        graded += 1
        for code in codes or []:
            mistakes[str(code)] += 1
        shared = verdict.get("ambiguous_mistakes") if isinstance(verdict, dict) else None
        for code in shared if isinstance(shared, list) else []:
            ambiguous[str(code)] += 1
        if status in ("incorrect", "partial") and not isinstance(parsed, dict):
            # (a multi-part answer's wrong answers are counted per part: PartStats)
            key = normalize_answer_value(parsed) if parsed is not None else None
            if key is None:
                key = " ".join(str(raw).split())[:80]
            wrong[key] += 1

    parameters, constant = _parameter_breakdown(session, exercise, {p.user_id: p for p in progress})
    parts = _part_statistics(session, exercise, progress, student)
    failed = int(
        session.scalar(
            select(func.count(VariantFailure.id)).where(VariantFailure.exercise_id == exercise.id)
        )
        or 0
    )
    latest = [
        (int(seed), str(error), when)
        for seed, error, when in session.execute(
            select(VariantFailure.seed, VariantFailure.error, VariantFailure.created_at)
            .where(VariantFailure.exercise_id == exercise.id)
            .order_by(VariantFailure.id.desc())
            .limit(5)
        )
    ]
    return ExerciseStats(
        exercise=exercise,
        tried=tried,
        mean_best_score=(sum(p.best_score for p in progress) / tried) if tried else None,
        solved=len(solved_rows),
        mean_attempts_to_solve=float(mean_attempts) if mean_attempts is not None else None,
        histogram=list(zip(score_bin_labels(), histogram_counts, strict=True)),
        mistakes=mistakes.most_common(top),
        ambiguous_mistakes=dict(ambiguous),
        wrong_answers=wrong.most_common(top),
        parameters=parameters,
        constant_parameters=constant,
        submissions=graded,
        failed_seeds=failed,
        latest_failures=latest,
        parts=parts,
    )


def _part_statistics(
    session: Session, exercise: Exercise, progress: list[Progress], student: Any
) -> list[PartStats]:
    """The per-part figures of a multi-part exercise (see :class:`PartStats`); [] for others.
    Reads the progress rows given and, only when the exercise has multi-part submissions, the
    verdicts of its graded submissions."""
    rows = session.execute(
        select(Submission.verdict, Submission.parsed).where(
            Submission.exercise_id == exercise.id,
            Submission.answer_format == "parts",
            Submission.used_attempt.is_(True),
            Submission.duplicate_of_id.is_(None),
            Submission.user_id.in_(student),
        )
    ).all()
    if not rows and not any(p.best_parts for p in progress):
        return []
    order: dict[str, None] = {}
    shares: dict[str, float] = {}
    for p in progress:
        for name, figures in (p.best_parts or {}).items():
            order.setdefault(name)
            shares.setdefault(name, float(figures.get("share") or 0.0))
    answered: Counter[str] = Counter()
    ft: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    wrong: dict[str, Counter[str]] = defaultdict(Counter)
    for verdict, parsed in rows:
        for name, v in ((verdict or {}).get("parts") or {}).items():
            order.setdefault(name)
            if not isinstance(v, dict) or v.get("status") in ("unanswered", "ungraded", None):
                continue
            answered[name] += 1
            if v.get("status") in ("incorrect", "partial") and isinstance(parsed, dict):
                key = normalize_answer_value(parsed.get(name))
                if key is not None:
                    wrong[name][key] += 1
            if v.get("follow_through"):
                ft[name] += 1
            elif "No follow-through credit" in str(v.get("message", "")):
                refused[name] += 1
    out = []
    having = _parts_of_graded_variants(session, exercise, progress)
    for name in order:
        # Over the students whose graded variant has this part: after an edit that added or
        # renamed parts, a variant drawn from an earlier version (kept as it was shown) has
        # other parts or none, and is not counted as 0 here.
        best = [(p.best_parts or {}).get(name) or {} for p in progress if name in having[p.user_id]]
        tried = len(best)
        scores = [float(b.get("score") or 0.0) for b in best]
        out.append(
            PartStats(
                name=name,
                points=round(shares.get(name, 0.0) * float(exercise.points), 6),
                students=tried,
                mean_best_score=sum(scores) / tried if tried else None,
                correct=sum(
                    1
                    for b in best
                    if float(b.get("score") or 0) >= 1 and not b.get("follow_through")
                ),
                follow_through_students=sum(1 for b in best if b.get("follow_through")),
                submissions=answered[name],
                follow_through=ft[name],
                refused=refused[name],
                wrong_answers=wrong[name].most_common(5),
            )
        )
    return out


def _parts_of_graded_variants(
    session: Session, exercise: Exercise, progress: list[Progress]
) -> dict[int, frozenset[str]]:
    """User id -> the part names of that student's graded variant (variant 1) of ``exercise``,
    as stored with it (the version it was drawn from); empty for a variant without parts.  One
    stored record is decoded per version, not per student."""
    users = [p.user_id for p in progress]
    rows = session.execute(
        select(Variant.user_id, Variant.version_id).where(
            Variant.exercise_id == exercise.id,
            Variant.variant_number == 1,
            Variant.user_id.in_(users),
        )
    ).all()
    names: dict[int | None, frozenset[str]] = {}
    for version_id in {version_id for _, version_id in rows}:
        sample = session.scalars(
            select(Variant)
            .where(Variant.exercise_id == exercise.id, Variant.version_id == version_id)
            .limit(1)
        ).first()
        try:
            forms = services.stored_part_forms(sample) if sample is not None else []
        except services.Unavailable:
            forms = []
        names[version_id] = frozenset(f.name for f in forms)
    out: dict[int, frozenset[str]] = defaultdict(frozenset)
    out.update({user_id: names[version_id] for user_id, version_id in rows})
    return out


def _parameter_breakdown(
    session: Session, exercise: Exercise, progress: Mapping[int, Progress]
) -> tuple[list[ParameterBreakdown], dict[str, str]]:
    if not progress:
        return [], {}
    variants = session.scalars(
        select(Variant)
        .options(undefer(Variant.record))
        .where(
            Variant.exercise_id == exercise.id,
            Variant.variant_number == 1,
            Variant.user_id.in_(list(progress)),
        )
    )
    by_param: dict[str, dict[str, list[Progress]]] = defaultdict(lambda: defaultdict(list))
    for v in variants:
        try:
            params = variant_parameters(services.stored_variant(v))
        except services.Unavailable:  # an unreadable stored record: no parameters for it
            continue
        for name, value in params.items():
            by_param[name][value].append(progress[v.user_id])
    out, constant = [], {}
    for name, groups in sorted(by_param.items()):
        if len(groups) < 2:
            constant[name] = next(iter(groups))
            continue
        values = []
        for value, rows in sorted(groups.items(), key=lambda kv: _natural(kv[0])):
            values.append(
                ParameterValueStats(
                    value=value,
                    students=len(rows),
                    solved=sum(1 for p in rows if p.solved_at is not None),
                    mean_best_score=sum(p.best_score for p in rows) / len(rows),
                )
            )
        out.append(ParameterBreakdown(name, values))
    return out, constant


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]
