"""Submissions: grade an answer and store it with the student's progress in one transaction."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import and_, bindparam, insert, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.util import identity_key

from quizapp import signals
from quizapp.models import (
    Exercise,
    Progress,
    Submission,
    User,
    Variant,
    VerdictView,
    utcnow,
)

if TYPE_CHECKING:
    from quizapp.bank import Variant as BankVariant
    from quizapp.grading import Verdict


from quizapp.services.answer_input import (
    canonical_answer,
    check_grid_shape,
    encode_raw_answer,
    normalize_answer,
)
from quizapp.services.errors import BadRequest, Conflict
from quizapp.services.part_answers import (
    best_parts,
    check_part_shapes,
    merge,
    normalize_part_answers,
    part_state,
    part_verdicts,
)
from quizapp.services.points import credited, part_points, shown_score
from quizapp.services.points import exercise_points as points_of
from quizapp.services.schedules import Credit, attempt_credit
from quizapp.services.totals import refresh_user_totals
from quizapp.services.transactions import begin_write, commit_keeping_loaded, retry_conflicts
from quizapp.services.variants import (
    VariantState,
    check_answered_variant,
    check_quiz_visible,
    create_progress,
    get_exercise,
    get_or_create_variant,
    stored_variant,
)

log = logging.getLogger(__name__)


_PROGRESS_T, _VARIANT_T, _EXERCISE_T = Progress.__table__, Variant.__table__, Exercise.__table__
#: Under the write lock, in one statement (SQLAlchemy Core: plain values, no ORM objects): the
#: student's progress row on the variant's exercise (locked on PostgreSQL: ``FOR UPDATE OF
#: progress``), the variant's number, re-key time and finished time, and its exercise's attempts
#: and points.  No row: the student has no progress row yet (a first submit), or the variant is
#: gone.
_LOCKED_STATE = (
    select(
        _PROGRESS_T.c.id,
        _PROGRESS_T.c.current_variant,
        _PROGRESS_T.c.submissions_count,
        _PROGRESS_T.c.attempts_used,
        _PROGRESS_T.c.best_score,
        _PROGRESS_T.c.best_credit,
        _PROGRESS_T.c.best_late,
        _PROGRESS_T.c.best_points,
        _PROGRESS_T.c.override_points,
        _PROGRESS_T.c.best_reached_at,
        _PROGRESS_T.c.solved_at,
        _PROGRESS_T.c.best_parts,
        _VARIANT_T.c.variant_number,
        _VARIANT_T.c.rekeyed_at,
        _VARIANT_T.c.finished_at,
        _EXERCISE_T.c.attempts,
        _EXERCISE_T.c.points,
    )
    .select_from(
        _VARIANT_T.join(_EXERCISE_T, _EXERCISE_T.c.id == _VARIANT_T.c.exercise_id).join(
            _PROGRESS_T,
            and_(
                _PROGRESS_T.c.user_id == _VARIANT_T.c.user_id,
                _PROGRESS_T.c.exercise_id == _VARIANT_T.c.exercise_id,
            ),
        )
    )
    .where(_VARIANT_T.c.id == bindparam("vid"))
    .with_for_update(of=_PROGRESS_T)
)
#: The progress row after a submit: every column the submit maintains, computed from the values
#: read under the lock (those it does not change are written back as read).
_UPDATE_PROGRESS = (
    update(_PROGRESS_T)
    .where(_PROGRESS_T.c.id == bindparam("pid"))
    .values(
        submissions_count=bindparam("new_count"),
        last_activity=bindparam("new_activity"),
        attempts_used=bindparam("new_used"),
        best_score=bindparam("new_best"),
        best_credit=bindparam("new_best_credit"),
        best_late=bindparam("new_best_late"),
        best_points=bindparam("new_best_points"),
        best_reached_at=bindparam("new_reached"),
        solved_at=bindparam("new_solved"),
        best_parts=bindparam("new_best_parts"),
    )
)
_INSERT_SUBMISSION = insert(Submission.__table__)
_SUBMISSIONS = (
    select(Submission).where(Submission.variant_id == bindparam("vid")).order_by(Submission.id)
)


def _refuse_if_finished(state: VariantState) -> None:
    """Raise ``Conflict`` saying why a finished variant takes no new answer (solved, or no
    attempts left); return when it is not finished."""
    if state.solved:
        raise Conflict("You already solved this variant.")
    if state.finished and state.attempts_used < state.attempts:
        raise Conflict(
            "No attempts left: this variant was finished (out of attempts, its worked solution "
            "shown) before the exercise's attempts were raised; open a new variant to practise."
        )
    if state.finished:
        raise Conflict(f"No attempts left: all {state.attempts} attempts on this variant are used.")


@dataclass
class SubmitResult:
    """The outcome of :func:`submit`.

    ``verdict`` is the grading contract's dict (status, score, message, cells, mistakes) plus
    ``mistake_messages``.  ``duplicate`` is True when the answer was identical to an earlier graded
    one of the same variant (its verdict is returned and no attempt is used).
    """

    submission: SubmissionRow
    variant: Variant
    verdict: dict[str, Any]
    attempts: int
    attempts_left: int
    used_attempt: bool
    duplicate: bool
    solved: bool
    finished: bool
    points: float
    best_points: float
    #: the exercise's points now (read under the lock): each part's points are its share of them
    exercise_points: float
    #: every submission of the variant, oldest first, this one last (what the exercise page lists;
    #: read under the write lock, so no query is needed to show them).
    submissions: list[SubmissionRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON for the API: the verdict keys (:func:`verdict_json`) plus attempts and points."""
        out = verdict_json(self.verdict, self.exercise_points)
        out.update(
            {
                "submission_id": self.submission.id,
                "variant_number": self.variant.variant_number,
                "used_attempt": self.used_attempt,
                "duplicate": self.duplicate,
                "attempts": self.attempts,
                "attempts_left": self.attempts_left,
                "points": self.points,
                "late": self.submission.late,
                "credit": shown_score(self.submission.credit),
                "best_points": self.best_points,
                "solved": self.solved,
                "finished": self.finished,
            }
        )
        return out


def verdict_json(vdict: dict[str, Any], exercise_points: float | None = None) -> dict[str, Any]:
    """A stored verdict (``Submission.verdict``) as the JSON API shows it: a copy with its
    ``score`` and each part's ``score`` rounded by ``points.shown_score`` (a sum of part
    shares is ``0.33333333333333337`` in floats), and with ``exercise_points`` (the exercise's
    points now) each part's ``points`` its share of them (``points.part_points``, as the
    exercise page shows it: the verdict stores the part's points when it was graded).  The
    stored verdict is not changed."""
    out = dict(vdict)
    if isinstance(out.get("score"), (int, float)):
        out["score"] = shown_score(out["score"])
    parts = out.get("parts")
    if not isinstance(parts, dict):
        return out
    weights = [_PartWeight(n, p.get("points")) for n, p in parts.items() if isinstance(p, dict)]
    now = part_points(weights, exercise_points) if exercise_points is not None else {}
    out["parts"] = {}
    for name, part in parts.items():
        if isinstance(part, dict):
            part = dict(part)
            if isinstance(part.get("score"), (int, float)):
                part["score"] = shown_score(part["score"])
            if name in now and part.get("points") is not None:
                part["points"] = now[name]
        out["parts"][name] = part
    return out


class _PartWeight(NamedTuple):
    """A part of a stored verdict as ``points.part_points`` weighs it."""

    name: str
    points: Any


def _grade(
    bank_variant: BankVariant,
    answer: str | list[list[str]] | dict[str, Any],
    locked: set[str] | None = None,
) -> Verdict:
    from quizapp.bank import grade_answer
    from quizapp.grading import Verdict

    try:
        if isinstance(answer, dict):
            from quizapp.bank.parts import grade_parts

            return grade_parts(bank_variant, answer, locked=frozenset(locked or ()))
        return grade_answer(bank_variant, answer)
    except Exception:  # a grader bug must not lose the submission nor cost an attempt
        log.exception("grading failed for %s seed %s", bank_variant.exercise_id, bank_variant.seed)
        return Verdict(
            status="invalid",
            score=0.0,
            message="The grader could not read this answer; it used no attempt. "
            "Please check its format (the instructor has been notified in the log).",
        )


def _verdict_dict(verdict: Verdict) -> dict[str, Any]:
    """The stored verdict: the grading contract's dict, the mistakes' sentences, the invalid
    cell (and, for a multi-part answer, ``quizapp.services.part_answers.part_verdicts`` adds
    the same per part)."""
    out = verdict.to_dict()
    out["mistake_messages"] = [m.message for m in verdict.mistakes]
    cell = getattr(verdict, "invalid_cell", None)
    if cell is not None:
        out["invalid_cell"] = list(cell)  # 1-based (row, column); row None for a vector entry
    return out


def stored_verdict(
    verdict: Verdict,
    bank_variant: Any,
    *,
    taken: list[str] | None = None,
    ignored: list[str] | None = None,
    locked_before: set[str] | None = None,
) -> tuple[dict[str, Any], float, str, list[str], Any]:
    """What a submission stores of ``verdict`` (graded against ``bank_variant``): the verdict
    dict (JSON-safe; for a multi-part variant with its per-part figures, ``taken`` the parts
    posted, ``ignored`` those refused, ``locked_before`` those already locked:
    ``part_answers.part_verdicts``), the score clamped to [0, 1] (NaN is 0), the status, the
    mistake codes and the parsed answer.  One rule for the submit and the regrade."""
    vdict = json_safe(_verdict_dict(verdict))
    if bank_variant.parts and verdict.parts is not None:
        vdict = part_verdicts(
            bank_variant,
            verdict,
            vdict,
            taken=list(taken or []),
            ignored=list(ignored or []),
            locked_before=set(locked_before or ()),
        )
    score = float(verdict.score) if verdict.score == verdict.score else 0.0
    score = min(1.0, max(0.0, score))
    return vdict, score, verdict.status, list(verdict.mistake_codes), json_safe(verdict.parsed)


def json_safe(value: Any) -> Any:
    """``value`` with NaN/inf replaced by None (JSON columns and responses must be valid JSON)."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return json_safe(value.tolist())
    return value


@retry_conflicts
def submit(
    session: Session,
    user: User,
    exercise_id: str,
    answer: Any,
    *,
    seed_secret: str | bytes,
    source: str = "web",
    now: datetime | None = None,
    variant: Variant | None = None,
    for_variant: int | None = None,
) -> SubmitResult:
    """Grade ``answer`` on the student's current variant of ``exercise_id`` and store it.

    ``variant``: the student's current variant when the caller already loaded it (the web route
    does, to read the posted form), saving its lookup; it is re-read and checked under the write
    lock like any other.  The objects of the result stay loaded after the commit (not expired), so
    the page that shows them issues no further queries for them.

    ``for_variant``: the id of the variant the answer was written for (the exercise form and the
    API send it); an answer to a variant that is no longer the student's current one (a practice
    variant was opened in another tab) is refused with ``Conflict``, uses no attempt and stores
    nothing.

    ``answer`` is the text as typed or a grid (list of rows of cell strings); for a multi-part
    exercise a dict part name -> text or grid, which may answer some parts only: the others keep
    their answers of the variant's last graded submission and a part already correct keeps its
    answer (``quizapp.services.part_answers``); the whole answer is stored and graded, one
    attempt per graded submission.  In ONE transaction
    (serialized per database on SQLite, per progress row on PostgreSQL): the ``Submission`` is
    appended and the ``Progress`` row updated.  Rules:

    - an invalid answer (unparseable, wrong shape) is stored and uses no attempt;
    - an answer identical (see ``canonical_answer``) to an earlier graded one of the same variant uses no
      attempt and gets the earlier verdict (stored with ``duplicate_of_id``);
    - on a finished variant (solved, or no attempts left) anything else is refused (``Conflict``)
      and nothing is stored;
    - only variant 1 counts for ``Progress.best_score`` / ``best_points`` / ``attempts_used``;
      after committing such a graded attempt it sends ``quizapp.signals.score_changed``;
    - after the quiz closes, ``quizapp.services.schedules.attempt_credit`` says what the answer
      earns (late credit, the student's extension) or refuses it; the credit is stored with the
      submission and the best score counts the credited value.

    Raises ``BadRequest`` (malformed answer, or a grid whose shape differs from the one the form
    shows: see :func:`check_grid_shape`), ``NotFound`` (unknown exercise), ``Forbidden``
    (quiz not open), ``Conflict`` (finished).
    """
    multi = isinstance(answer, dict)
    answer = normalize_part_answers(answer) if multi else normalize_answer(answer)
    exercise = get_exercise(session, exercise_id)
    now = now or utcnow()
    check_quiz_visible(exercise.quiz, user, now)
    credit = attempt_credit(session, exercise.quiz, user, now)  # Forbidden when too late
    # The variant the student was shown (created if this is the first contact, e.g. the API).
    if variant is None or variant.user_id != user.id or variant.exercise_id != exercise.id:
        variant = get_or_create_variant(session, user, exercise, seed_secret)
    check_answered_variant(variant, for_variant)
    bank_variant = stored_variant(variant)
    posted = answer
    state_id: int | None = None
    locked: set[str] = set()
    taken: list[str] = []
    ignored: list[str] = []
    if bank_variant.parts:
        if not multi:
            names = ", ".join(p.name for p in bank_variant.parts)
            raise BadRequest(
                f"This exercise has parts ({names}): answer them by name, e.g. "
                f'{{"parts": {{"{bank_variant.parts[0].name}": ...}}}}.'
            )
        check_part_shapes(bank_variant, posted)
        rows = submission_rows(session, variant.id)
        previous, locked, state_id = part_state(bank_variant, rows)
        try:
            answer, taken, ignored = merge(bank_variant, posted, previous, locked)
        except BadRequest:
            # Nothing left to answer because the variant is finished: say that (409), not
            # "answer another part".
            _refuse_if_finished(VariantState.of(rows, exercise.attempts, variant.finished_at))
            raise
    elif multi:
        raise BadRequest("This exercise has one answer, not parts: send the answer itself.")
    else:
        check_grid_shape(bank_variant.answer_form, answer)
    # Grade outside the lock (pure and possibly slow) against the stored variant; a regrade that
    # changes its key meanwhile is noticed below (``rekeyed_at``).
    verdict = _grade(bank_variant, answer, locked)
    rekeyed_at = variant.rekeyed_at
    user_id, variant_id = user.id, variant.id

    # Under the write lock, every value the decision depends on is read again from the database,
    # as plain values: the progress row (locked), the variant's number, re-key time and finished
    # time with its exercise's attempts and points (one statement), and the variant's submissions
    # (the attempts used, solved, best score, an identical earlier answer; the page lists them
    # too).  Nothing else is expired or re-read.
    begin_write(session, expire=False)
    found = session.execute(_LOCKED_STATE, {"vid": variant_id}).first()
    if found is None:  # a first submit: create the progress row (locked until commit), read again
        create_progress(session, user_id, exercise.id)
        found = session.execute(_LOCKED_STATE, {"vid": variant_id}).first()
    if found is None:  # the variant was deleted meanwhile (the student's data was erased)
        session.rollback()
        raise Conflict("The exercise changed while you answered; reload it and try again.")
    (progress_id, current_number, count, progress_used, best_score, best_credit, best_late,
     best_points, override_points, reached_at, solved_at, parts_best, number, rekeyed_now,
     finished_at, attempts, exercise_points) = found  # fmt: skip
    if current_number != number or rekeyed_now != rekeyed_at:
        session.rollback()
        raise Conflict("The exercise changed while you answered; reload it and try again.")
    # The objects held take the values read under the lock, as unchanged database state (what a
    # populate_existing re-read did, without building the objects again).
    set_committed_value(variant, "variant_number", number)
    set_committed_value(variant, "finished_at", finished_at)
    set_committed_value(exercise, "attempts", attempts)
    set_committed_value(exercise, "points", exercise_points)
    submissions = submission_rows(session, variant.id)
    if bank_variant.parts:
        previous, locked_now, state_now = part_state(bank_variant, submissions)
        if state_now != state_id:
            # Another submission of this variant was stored meanwhile (another tab): the parts
            # it answered or locked are merged in, and the answer graded again here (rare).
            locked = locked_now
            answer, taken, ignored = merge(bank_variant, posted, previous, locked)
            verdict = _grade(bank_variant, answer, locked)
    answer_format, raw = encode_raw_answer(answer)
    answer_hash = hashlib.sha256(
        canonical_answer(answer).encode("utf-8", "surrogatepass")
    ).hexdigest()
    graded = [sub for sub in submissions if sub.used_attempt]
    state = VariantState.of(submissions, exercise.attempts, finished_at)
    earlier = next((sub for sub in graded if sub.answer_hash == answer_hash), None)
    if earlier is None and state.finished:
        session.rollback()
        _refuse_if_finished(state)

    if earlier is not None:
        vdict = dict(earlier.verdict)
        score, status, mistakes, parsed = (
            earlier.score,
            earlier.status,
            earlier.mistakes,
            earlier.parsed,
        )
        used = False
        credit = Credit(earlier.credit, earlier.late)
        vdict["message"] = (
            "You already submitted this answer; it used no attempt. "
            + str(vdict.get("message", ""))
        ).strip()
    else:
        vdict, score, status, mistakes, parsed = stored_verdict(
            verdict, bank_variant, taken=taken, ignored=ignored, locked_before=locked
        )
        used = verdict.status != "invalid"

    points = round(score * credit.credit * float(exercise.points), 6)
    values = dict(
        variant_id=variant.id,
        user_id=user_id,
        exercise_id=exercise.id,
        version_id=variant.version_id,
        answer_format=answer_format,
        raw_answer=raw,
        answer_hash=answer_hash,
        parsed=parsed,
        verdict=vdict,
        status=status,
        score=score,
        points=points,
        mistakes=mistakes,
        used_attempt=used,
        late=credit.late,
        credit=credit.credit,
        attempt_number=state.attempts_used + 1 if used else None,
        duplicate_of_id=earlier.id if earlier is not None else None,
        source=source,
        created_at=now,
    )
    # One Core INSERT, executed here in the write transaction: the same row the ORM's unit of work
    # wrote at commit (tests compare every stored column), at a fraction of its cost; the page
    # shows the values written.
    new_id = session.execute(_INSERT_SUBMISSION, values).inserted_primary_key[0]  # type: ignore[attr-defined]  # DML gives a CursorResult; Session.execute is typed as Result
    row = SubmissionRow(id=int(new_id), **values)

    attempts_used = state.attempts_used + (1 if used else 0)
    solved = state.solved or (used and status == "correct")
    finished = solved or attempts_used >= state.attempts
    graded_here = not variant.is_practice and used  # only variant 1 counts for the score
    if graded_here:
        progress_used = attempts_used
        if credited(score, credit.credit) > (best_score or 0.0):
            best_score = credited(score, credit.credit)
            best_credit, best_late = credit.credit, credit.late
            best_points = points_of(best_score, exercise.points, override_points)
            reached_at = now
            parts_best = best_parts(bank_variant, vdict)
        elif reached_at is None:
            reached_at = now  # first graded attempt, score 0
        if status == "correct" and solved_at is None:
            solved_at = now
    session.execute(
        _UPDATE_PROGRESS,
        {
            "pid": progress_id,
            "new_count": (count or 0) + 1,
            "new_activity": now,
            "new_used": progress_used,
            "new_best": best_score,
            "new_best_credit": best_credit,
            "new_best_late": best_late,
            "new_best_points": best_points,
            "new_reached": reached_at,
            "new_solved": solved_at,
            "new_best_parts": parts_best,
        },
    )
    held = session.identity_map.get(identity_key(Progress, progress_id))
    if held is not None:
        session.expire(held)  # a Progress object the caller holds reloads what was written
    if finished and variant.finished_at is None:
        variant.finished_at = now
    if graded_here:
        refresh_user_totals(session, user_id)
    commit_keeping_loaded(session)  # the rows are what was just written: no reload
    if graded_here:
        # After the commit: receivers (the LMS grade queue) see the stored attempt.
        signals.score_changed.send(
            session, user_id=user_id, exercise_id=exercise.id, quiz_id=exercise.quiz_id
        )
    return SubmitResult(
        submission=row,
        variant=variant,
        verdict=vdict,
        attempts=state.attempts,
        attempts_left=0 if state.closed and not solved else max(0, state.attempts - attempts_used),
        used_attempt=used,
        duplicate=earlier is not None,
        solved=solved,
        finished=finished,
        points=points,
        best_points=float(best_points or 0.0),
        exercise_points=float(exercise.points),
        submissions=[*submissions, row],
    )


def variant_submissions(session: Session, variant: Variant) -> list[Submission]:
    """The submissions of ``variant``, oldest first."""
    return list(session.scalars(_SUBMISSIONS, {"vid": variant.id}))


@dataclass(frozen=True, slots=True)
class SubmissionRow(VerdictView):
    """A stored submission as plain values, read with SQLAlchemy Core (no ORM object, nothing
    kept in the session): what the exercise page lists and ``submit`` decides on.  Same field
    names, values and ``cells`` / ``message`` / ``mistake_messages`` as ``models.Submission``
    (one field per column of the ``submissions`` table, checked by the tests); read-only."""

    id: int
    variant_id: int
    user_id: int
    exercise_id: str
    version_id: int
    answer_format: str
    raw_answer: str
    answer_hash: str
    parsed: Any
    verdict: dict[str, Any]
    status: str
    score: float
    points: float
    mistakes: list[str]
    used_attempt: bool
    late: bool
    credit: float
    attempt_number: int | None
    duplicate_of_id: int | None
    source: str
    created_at: datetime


_SUBMISSION_ROWS = (
    select(*(Submission.__table__.c[f.name] for f in fields(SubmissionRow)))
    .where(Submission.__table__.c.variant_id == bindparam("vid"))
    .order_by(Submission.__table__.c.id)
)


def submission_rows(session: Session, variant_id: int) -> list[SubmissionRow]:
    """The submissions of variant ``variant_id``, oldest first, as :class:`SubmissionRow` (always
    read from the database: never a stale object of the session).  The same rows and values as
    :func:`variant_submissions`, without building ORM objects (the fixed cost of the ORM read
    goes; decoding the JSON columns, ~0.05 ms per row, remains)."""
    return [
        SubmissionRow(*row)
        for row in session.connection().execute(_SUBMISSION_ROWS, {"vid": variant_id})
    ]
