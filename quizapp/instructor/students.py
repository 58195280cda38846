"""One student's page: variants, submissions, excusals, verdict history."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.instructor.excusals import excused_exercises
from quizapp.models import (
    Exercise,
    Progress,
    Quiz,
    Submission,
    User,
    Variant,
    quiz_order,
)
from quizapp.models_instructor import Excusal


@dataclass
class StudentExercise:
    """One exercise on a student's page: progress, excusal, and each variant with its submissions."""

    exercise: Exercise
    progress: Progress | None
    excusal: Excusal | None
    variants: list[tuple[Variant, list[Submission]]]


def answer_text(submission: Submission) -> str:
    """A submission's answer as typed: the text, or a grid's rows on lines with cells split by
    two spaces; a multi-part answer one part after another (``S:`` then its answer), each
    part's verdict status after its name (for display; the stored ``raw_answer`` is never
    changed)."""
    answer = services.decode_raw_answer(submission.answer_format, submission.raw_answer)
    if isinstance(answer, dict):
        verdicts = (submission.verdict or {}).get("parts") or {}
        out = []
        for name, value in answer.items():
            status = (verdicts.get(name) or {}).get("status")
            ft = " by follow-through" if (verdicts.get(name) or {}).get("follow_through") else ""
            out.append(f"{name}:" + (f" ({status}{ft})" if status else ""))
            out.append(services.grid_text(value) if isinstance(value, list) else str(value))
        return "\n".join(out)
    if isinstance(answer, list):
        return services.grid_text(answer)
    return str(answer)


def student_detail(session: Session, user_id: int) -> tuple[User, list[StudentExercise]]:
    """A user and, per exercise they started (or are excused from), their variants and
    submissions (oldest first).  Raises ``services.NotFound`` for an unknown user."""
    user = session.get(User, user_id)
    if user is None:
        raise services.NotFound("There is no such user.")
    progress = {
        p.exercise_id: p
        for p in session.scalars(select(Progress).where(Progress.user_id == user_id))
    }
    excusals = excused_exercises(session, user_id)
    subs: dict[int, list[Submission]] = defaultdict(list)
    for s in session.scalars(
        select(Submission).where(Submission.user_id == user_id).order_by(Submission.id)
    ):
        subs[s.variant_id].append(s)
    variants: dict[str, list[tuple[Variant, list[Submission]]]] = defaultdict(list)
    for v in session.scalars(
        select(Variant).where(Variant.user_id == user_id).order_by(Variant.variant_number)
    ):
        variants[v.exercise_id].append((v, subs.get(v.id, [])))
    ids = set(variants) | set(excusals) | set(progress)
    exercises = [
        e
        for e in session.scalars(
            select(Exercise)
            .join(Quiz, Quiz.id == Exercise.quiz_id)
            .where(Exercise.id.in_(ids))
            .order_by(*quiz_order(), Exercise.position, Exercise.id)
        )
    ]
    return user, [
        StudentExercise(e, progress.get(e.id), excusals.get(e.id), variants.get(e.id, []))
        for e in exercises
    ]
