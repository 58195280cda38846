"""A student's points on an exercise: the one definition (issue 17).

**Points.**  A student's points on an exercise are :func:`exercise_points`: the instructor's
override when there is one, else the best *credited* score of the graded attempts on variant 1
(:func:`best_attempt`) times the exercise's points.  ``progress.best_points`` holds that value,
written by the submit, the regrade, :func:`quizapp.services.recompute_progress`, the sync (new
points) and the override functions here; the student's pages, the JSON API, the scoreboard
totals and the gradebook all read it, so they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Float, Numeric, case, cast, func

from quizapp.models import Progress, Submission


class GradedAttempt(Protocol):
    """A graded submission as :func:`best_attempt` reads it (an ORM ``Submission`` or a
    read-only ``SubmissionRow``)."""

    @property
    def score(self) -> float: ...
    @property
    def credit(self) -> float: ...
    @property
    def late(self) -> bool: ...
    @property
    def status(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...


@dataclass(frozen=True, slots=True)
class Best:
    """The best credited attempt: ``score`` (score x credit, 0 without attempts), its ``credit``
    and ``late``, when it was first reached, and when the first correct answer came."""

    score: float = 0.0
    credit: float = 1.0
    late: bool = False
    reached_at: datetime | None = None
    solved_at: datetime | None = None


#: Decimals a score (a fraction in [0, 1]) is shown with in JSON: a sum of part shares or a
#: product with a late credit carries float noise (``0.33333333333333337``) that no reader
#: should see; 9 decimals keep every score a grader can give apart.
SCORE_DECIMALS = 9


def shown_score(score: float) -> float:
    """``score`` (a fraction, or a credit) as the JSON API shows it: rounded to
    :data:`SCORE_DECIMALS` decimals.  Stored values are never rounded by it."""
    return round(float(score), SCORE_DECIMALS)


def credited(score: float, credit: float) -> float:
    """The score an attempt counts with: ``score x credit``, in [0, 1]."""
    return min(1.0, max(0.0, float(score) * float(credit)))


def best_attempt(graded: Sequence[GradedAttempt]) -> Best:
    """The best of the graded attempts (oldest first) of variant 1, by credited score; the
    earliest one reaching it wins (the scoreboard's tie-break).  A late correct answer still
    solves the exercise (``solved_at``); only its credit is reduced."""
    best: GradedAttempt | None = None
    best_score = 0.0
    for sub in graded:
        value = credited(sub.score, sub.credit)
        if best is None or value > best_score:
            best, best_score = sub, value
    solved_at = next((s.created_at for s in graded if s.status == "correct"), None)
    if best is None:
        return Best(solved_at=solved_at)
    return Best(best_score, float(best.credit), bool(best.late), best.created_at, solved_at)


def exercise_points(best_score: float, points: float, override_points: float | None) -> float:
    """A student's points on an exercise worth ``points``: ``override_points`` when an
    instructor set them, else ``best_score`` (already credited) x ``points``, rounded to 6
    decimals (as every stored points value)."""
    if override_points is not None:
        return float(override_points)
    return round(float(best_score) * float(points), 6)


def exercise_points_sql(points: float) -> Any:
    """:func:`exercise_points` of every progress row as a SQL expression, for an exercise now
    worth ``points`` (the bank sync's update when an exercise's points change)."""
    return case(
        (Progress.override_points.is_not(None), Progress.override_points),
        else_=rounded_points_sql(Progress.best_score * float(points)),
    )


def submission_points_sql(points: float) -> Any:
    """Each submission's points (score x credit x ``points``, as a submit computes them, rounded
    to 6 decimals) as a SQL expression, for an exercise now worth ``points``."""
    return rounded_points_sql(Submission.score * Submission.credit * float(points))


def rounded_points_sql(expr: Any) -> Any:
    """``expr`` rounded to 6 decimals in SQL, as Python's ``round(x, 6)`` rounds stored points:
    a points change of 10 to 7 gives 4.666667, not ``4.666666666666666``.  PostgreSQL's
    ``round(x, n)`` takes a numeric only, hence the casts (SQLite reads them as REAL)."""
    return cast(func.round(cast(expr, Numeric), 6), Float)


def part_points(parts: Sequence[Any], points: float) -> dict[str, float]:
    """Each part's points as every page and the JSON API show them, by part name: its share of
    the exercise's points now (``quizapp.bank.parts.part_shares`` of ``parts``, objects with
    ``name`` and ``points``: the variant's stored part forms), rounded to 6 decimals.  The split
    between parts is the variant's; a change of the exercise's points applies at once."""
    from quizapp.bank.parts import part_shares

    return {name: round(share * float(points), 6) for name, share in part_shares(parts).items()}


def apply_best(progress: Progress, best: Best, points: float) -> None:
    """Write ``best`` into ``progress`` (best score, its credit and lateness, when reached,
    solved at) and the points of :func:`exercise_points`."""
    progress.best_score = best.score
    progress.best_credit = best.credit
    progress.best_late = best.late
    progress.best_reached_at = best.reached_at or (
        progress.override_at if progress.override_points is not None else None
    )
    progress.solved_at = best.solved_at
    progress.best_points = exercise_points(best.score, points, progress.override_points)


__all__ = [
    "Best",
    "apply_best",
    "best_attempt",
    "credited",
    "exercise_points",
    "exercise_points_sql",
    "shown_score",
]
