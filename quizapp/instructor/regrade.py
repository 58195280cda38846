"""Regrade: re-run an exercise's current version over every stored submission, keeping the
previous verdicts in history, in one transaction."""

from __future__ import annotations

import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.instructor.gradebook import fmt_points
from quizapp.instructor.regrade_work import ToGrade, VariantWork, key_and_grade_all
from quizapp.models import (
    Exercise,
    Progress,
    Submission,
    User,
    Variant,
)
from quizapp.models_instructor import Regrade, VerdictHistory
from quizapp.services import totals
from quizapp.services.part_answers import best_parts
from quizapp.services.points import apply_best, best_attempt, credited
from quizapp.services.text import counted

log = logging.getLogger(__name__)


@dataclass
class SubmissionChange:
    """A submission whose verdict a regrade changed: status and score before and after."""

    submission_id: int
    user_id: int
    username: str
    variant_number: int
    old_status: str
    new_status: str
    old_score: float
    new_score: float
    old_mistakes: list[str] = field(default_factory=list)
    new_mistakes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def describe(self) -> str:
        """What changed: ``incorrect 0 -> correct 1``, plus the named mistakes when they differ
        (a change of mistakes alone is a real change: students see them as sentences)."""
        parts = []
        if self.old_status != self.new_status or abs(self.old_score - self.new_score) > 1e-12:
            parts.append(
                f"{self.old_status} {self.old_score:.3g} -> {self.new_status} {self.new_score:.3g}"
            )
        if list(self.old_mistakes) != list(self.new_mistakes):
            parts.append(
                f"mistakes {', '.join(self.old_mistakes) or 'none'} -> "
                f"{', '.join(self.new_mistakes) or 'none'}"
                + ("" if parts else f" ({self.new_status} {self.new_score:.3g})")
            )
        return "; ".join(parts)


@dataclass
class ProgressChange:
    """A student whose points or "solved" a regrade changed, with the previous values."""

    user_id: int
    username: str
    old_best_points: float
    new_best_points: float
    old_solved: bool
    new_solved: bool
    old_best_reached_at: str | None = None
    old_solved_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class RegradeSummary:
    """What a regrade changed (or would change, for a dry run)."""

    exercise_id: str
    version_hash: str
    dry_run: bool
    regraded: int = 0
    skipped_invalid: int = 0
    changes: list[SubmissionChange] = field(default_factory=list)
    progress_changes: list[ProgressChange] = field(default_factory=list)
    regrade_id: int | None = None
    #: variants whose stored answer key (expected answer, tolerance) the current version changes
    rekeyed: int = 0
    #: variants the current version cannot key ("username, variant N: why"); their submissions
    #: are left as they were
    unkeyable: list[str] = field(default_factory=list)
    #: variants drawn by another kind than the current version's (the YAML's ``kind`` changed):
    #: the new kind cannot compute their key from their numbers, so each keeps its stored
    #: expected answer; only the current tolerance and partial credit apply to them
    other_kind: int = 0

    #: an apply whose plan was no longer the reviewed dry run's (``regrade_exercise``'s
    #: ``reviewed``): nothing was written, and this summary is the new dry run
    stale: bool = False

    @property
    def changed(self) -> int:
        return len(self.changes)

    def plan_digest(self) -> str:
        """A digest of what the regrade changes: the version, each changed submission's new
        verdict, each student's new points, the variants re-keyed and those it cannot key.  A
        dry run and the regrade that applies it have the same digest when nothing happened in
        between (no sync, no submission, no other regrade)."""
        plan = [
            self.version_hash,
            sorted(
                (c.submission_id, c.new_status, round(c.new_score, 9), list(c.new_mistakes))
                for c in self.changes
            ),
            sorted(
                (p.user_id, round(p.new_best_points, 9), p.new_solved)
                for p in self.progress_changes
            ),
            self.regraded,
            self.rekeyed,
            sorted(self.unkeyable),
            self.other_kind,
        ]
        return hashlib.sha256(json.dumps(plan).encode()).hexdigest()[:32]

    @property
    def unchanged(self) -> int:
        """Re-run submissions whose status, score and mistakes all stayed the same."""
        return max(0, self.regraded - self.changed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "exercise_id": self.exercise_id,
            "version_hash": self.version_hash,
            "dry_run": self.dry_run,
            "regraded": self.regraded,
            "skipped_invalid": self.skipped_invalid,
            "changed": self.changed,
            "changes": [c.to_dict() for c in self.changes],
            "progress_changes": [c.to_dict() for c in self.progress_changes],
            "rekeyed": self.rekeyed,
            "unkeyable": list(self.unkeyable),
            "other_kind": self.other_kind,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], regrade_id: int | None = None) -> RegradeSummary:
        """The summary stored in a ``regrades`` row (inverse of :meth:`to_dict`)."""
        return cls(
            exercise_id=str(data.get("exercise_id", "")),
            version_hash=str(data.get("version_hash", "")),
            dry_run=bool(data.get("dry_run", False)),
            regraded=int(data.get("regraded", 0)),
            skipped_invalid=int(data.get("skipped_invalid", 0)),
            changes=[SubmissionChange(**c) for c in data.get("changes", [])],
            progress_changes=[ProgressChange(**c) for c in data.get("progress_changes", [])],
            regrade_id=regrade_id,
            rekeyed=int(data.get("rekeyed", 0)),
            unkeyable=[str(u) for u in data.get("unkeyable", [])],
            other_kind=int(data.get("other_kind", 0)),
        )

    def text(self) -> str:
        """A human-readable summary (what the CLI prints)."""
        verb = "would change" if self.dry_run else "changed"
        students = counted(len(self.progress_changes), "student's", "students'")
        lines = [
            ("Dry run (nothing saved): regrade" if self.dry_run else "Regrade")
            + f" of {self.exercise_id} against version {self.version_hash[:12]}: "
            f"{counted(self.regraded, 'graded submission')} re-run; {verb} "
            f"{counted(self.changed, 'verdict')} (unchanged: {self.unchanged}) and "
            f"{students} points"
            + (
                f"; {counted(self.skipped_invalid, 'invalid answer')} left as they were"
                if self.skipped_invalid
                else ""
            )
            + "."
        ]
        if self.rekeyed:
            lines.append(
                f"  {counted(self.rekeyed, 'variant')} graded with a new answer key (from the "
                "numbers each student saw; nothing is drawn again)."
            )
        if self.other_kind:
            lines.append(
                f"  {counted(self.other_kind, 'variant')} drawn by another kind than the current "
                "version's: each keeps its own answer key (the new kind cannot compute it from "
                "its numbers); only the current tolerance and partial credit apply."
            )
        for u in self.unkeyable:
            lines.append(f"  not regraded: {u}")
        for c in self.changes:
            lines.append(
                f"  submission {c.submission_id} ({c.username}, variant {c.variant_number}): "
                + c.describe()
            )
        for p in self.progress_changes:
            lines.append(
                f"  {p.username}: {fmt_points(p.old_best_points)} -> "
                f"{fmt_points(p.new_best_points)} points"
                + (
                    f" (solved: {'yes' if p.old_solved else 'no'} -> "
                    f"{'yes' if p.new_solved else 'no'})"
                    if p.old_solved != p.new_solved
                    else ""
                )
            )
        return "\n".join(lines)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@services.retry_conflicts
def regrade_exercise(
    session: Session,
    exercise_id: str,
    *,
    dry_run: bool = False,
    started_by: User | None = None,
    workers: int | None = None,
    reviewed: str | None = None,
) -> RegradeSummary:
    """Grade every stored submission of ``exercise_id`` again, against the numbers each student
    saw, with the answer key of the exercise's current version.

    In ONE write transaction (``BEGIN IMMEDIATE`` on SQLite: no submission can slip in between):

    1. each variant's stored record (``variants.record``: what the student was shown) is keyed
       by the current version (``quizapp.bank.Exercise.rekey``): same numbers; the current
       tolerance and partial credit; for ``expression`` exercises the expected answer computed
       again from the stored values under the current ``answer``.  Nothing is drawn again; a
       variant whose key changes gets the new key stored (its worked solution follows) and
       ``rekeyed_at`` set.  A variant the current version cannot key (its ``answer`` names a
       variable the variant lacks) is listed in ``unkeyable`` and its submissions left alone;
    2. every graded submission (one that used an attempt and is not an identical resubmission) is
       graded again with ``quizapp.bank.grade_answer``; identical resubmissions take their
       original's new verdict; invalid answers (which used no attempt) are left as they were.
       Attempts used never change (an answer now unreadable keeps its attempt, with score 0);
    3. a changed submission keeps its previous verdict, score, points and mistakes in
       ``verdict_history``;
    4. each student's progress row is recomputed from their variant-1 submissions (best credited
       score and when it was first reached, solved at: ``points.best_attempt``; each
       submission keeps the late credit stored when it was graded, and its points are score x
       credit x points), and each variant's ``finished_at`` (solved, or out of attempts); an
       instructor's override keeps the student's points; the previous values are kept in the
       ``regrades`` row's summary.

    ``dry_run`` computes the same summary (every verdict that would change, per student) and
    rolls everything back.  ``workers``: how many processes key and grade the variants
    (``regrade_work.key_and_grade_all``; None: one per core for a large regrade, the same
    results as one).

    ``reviewed``: the :meth:`RegradeSummary.plan_digest` of the dry run an instructor
    reviewed; when the regrade would now change anything else (a sync, a submission or another
    regrade in between), nothing is written and the new dry run is returned with ``stale`` set.
    Raises ``services.NotFound`` for an unknown exercise or one without a
    synced version, ``services.Unavailable`` when the current version does not load.
    """
    from quizapp.bank import BankError

    exercise = services.get_exercise(session, exercise_id, include_archived=True)
    version = exercise.current_version
    if version is None:
        raise services.NotFound(f"Exercise {exercise.id} has no synced version.")
    ex_id, version_id, version_hash = exercise.id, version.id, version.content_hash
    try:
        current = services.bank_exercise(ex_id, version_hash, version.source)
    except BankError as exc:
        raise services.Unavailable(f"The current version of {ex_id} does not load: {exc}") from exc
    started_by_id = started_by.id if started_by is not None else None

    services.begin_write(session)
    try:
        summary = _regrade_in_transaction(
            session,
            current,
            (ex_id, version_hash, version.source),
            version_id,
            dry_run,
            started_by_id,
            workers,
        )
        if not dry_run and reviewed is not None and summary.plan_digest() != reviewed:
            # Something changed since the dry run the instructor reviewed: write nothing and
            # show what the regrade would do now.
            session.rollback()
            return replace(summary, dry_run=True, regrade_id=None, stale=True)
        if dry_run:
            session.rollback()
        else:
            session.commit()
        return summary
    except BaseException:
        session.rollback()
        raise


@dataclass
class _Sub:
    """One stored submission as the regrade reads and rewrites it (plain values, no ORM)."""

    id: int
    variant_id: int
    user_id: int
    version_id: int
    answer_format: str
    raw_answer: str
    used_attempt: bool
    duplicate_of_id: int | None
    status: str
    score: float
    points: float
    mistakes: list[str]
    verdict: dict[str, Any]
    created_at: datetime
    #: the late credit stored when it was graded (kept by the regrade) and its lateness
    credit: float
    late: bool


_SUB_COLUMNS = [Submission.__table__.c[f] for f in _Sub.__dataclass_fields__]


def _regrade_in_transaction(
    session: Session,
    current: Any,
    source: tuple[str, str, str],
    version_id: int,
    dry_run: bool,
    started_by_id: int | None,
    workers: int | None,
) -> RegradeSummary:
    """The work of :func:`regrade_exercise` inside its write transaction (not committed here);
    ``source`` is the current version's (exercise id, content hash, YAML text).

    Reads with SQLAlchemy Core and writes with one executemany per table (submissions, verdict
    history, variants): a regrade of 10,000 submissions is dominated by keying and grading them
    (``regrade_work``)."""
    ex_id, version_hash, _ = source
    exercise = session.get(Exercise, ex_id)
    assert exercise is not None
    points_each = float(exercise.points)
    attempts = int(exercise.attempts)
    now = services.utcnow()
    summary = RegradeSummary(ex_id, version_hash, dry_run)
    regrade = Regrade(
        exercise_id=ex_id, version_id=version_id, started_by_id=started_by_id, summary={}
    )
    if not dry_run:
        session.add(regrade)
        session.flush()
    usernames = dict(
        session.execute(
            select(User.id, User.username).where(
                User.id.in_(select(Variant.user_id).where(Variant.exercise_id == ex_id))
            )
        ).all()
    )
    vt = Variant.__table__
    variants = session.execute(
        select(vt.c.id, vt.c.user_id, vt.c.variant_number, vt.c.record, vt.c.page, vt.c.finished_at)
        .where(vt.c.exercise_id == ex_id)
        .order_by(vt.c.id)
    ).all()
    subs_by_variant: dict[int, list[_Sub]] = defaultdict(list)
    for row in session.execute(
        select(*_SUB_COLUMNS)
        .where(Submission.__table__.c.exercise_id == ex_id)
        .order_by(Submission.__table__.c.id)
    ):
        sub = _Sub(*row)
        subs_by_variant[sub.variant_id].append(sub)

    sub_updates: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    variant_updates: list[dict[str, Any]] = []
    first_variants: dict[int, int] = {}
    open_again: dict[int, bool] = {}  # variant id -> finished before, not after (attempts left)
    first_keyed: dict[int, Any] = {}  # user id -> their variant 1 as keyed (multi-part only)
    new_by_id: dict[int, tuple[dict[str, Any], float, str, list[str], Any]] = {}
    # Keying and grading are computed per variant, without the database (in other processes for
    # a large regrade: regrade_work); the bookkeeping below stays here, in order.
    works = [
        VariantWork(
            variant_id,
            number,
            ex_id,
            stored_record,
            stored_page,
            str(stored_record.get("kind", exercise.kind)),
            [
                ToGrade(s.id, s.answer_format, s.raw_answer, s.verdict)
                for s in subs_by_variant.get(variant_id, [])
                if s.duplicate_of_id is None and s.used_attempt
            ],
        )
        for variant_id, _, number, stored_record, stored_page, _ in variants
    ]
    work_kind = {work.id: work.kind for work in works}
    results = key_and_grade_all(current, works, render=not dry_run, workers=workers)
    for (variant_id, user_id, number, _, _, finished_at), result in zip(
        variants, results, strict=True
    ):
        if number == 1:
            first_variants[user_id] = variant_id
        subs = subs_by_variant.get(variant_id, [])
        username = usernames.get(user_id, "?")
        for failure in result.failures:
            log.error("%s", failure)
        if result.unkeyable is not None:
            summary.unkeyable.append(f"{username}, variant {number}: {result.unkeyable}")
            continue
        if work_kind[variant_id] != current.spec.kind:
            summary.other_kind += 1
        keyed, record, rekeyed = result.keyed, result.record, result.rekeyed
        if rekeyed:
            summary.rekeyed += 1
        if number == 1 and keyed is not None:
            first_keyed[user_id] = keyed
        solved_before = any(s.used_attempt and s.status == "correct" for s in subs)
        for s in subs:
            if s.duplicate_of_id is not None:
                original = new_by_id.get(s.duplicate_of_id)
                if original is None:
                    continue
                vdict, score, status, codes, parsed = original
                vdict = dict(vdict)
                vdict["message"] = (
                    "You already submitted this answer; it used no attempt. "
                    + str(vdict.get("message", ""))
                ).strip()
            elif not s.used_attempt:
                summary.skipped_invalid += 1
                continue
            else:
                vdict, score, status, codes, parsed = result.payloads[s.id]
                new_by_id[s.id] = (vdict, score, status, codes, parsed)
                summary.regraded += 1
            verdict_changed = (
                status != s.status
                or abs(score - float(s.score)) > 1e-12
                or list(codes) != list(s.mistakes or [])
            )
            if verdict_changed and s.duplicate_of_id is None:
                summary.changes.append(
                    SubmissionChange(
                        s.id,
                        s.user_id,
                        username,
                        number,
                        s.status,
                        status,
                        float(s.score),
                        score,
                        list(s.mistakes or []),
                        list(codes),
                    )
                )
            if verdict_changed and s.duplicate_of_id is None:
                # The student's page says the verdict is a regrade's, and what it was when sent.
                was = (s.verdict or {}).get("regraded", {}).get("was", s.status)
                vdict = {**vdict, "regraded": {"at": now.isoformat(), "was": was}}
            if verdict_changed or vdict != s.verdict:
                history.append(
                    {
                        "submission_id": s.id,
                        "regrade_id": regrade.id,
                        "version_id": s.version_id,
                        "status": s.status,
                        "score": float(s.score),
                        "points": float(s.points),
                        "mistakes": list(s.mistakes or []),
                        "verdict": dict(s.verdict or {}),
                        "created_at": now,
                    }
                )
                s.status, s.score, s.mistakes, s.verdict = status, score, codes, vdict
                sub_updates.append(
                    {
                        "sid": s.id,
                        "verdict": vdict,
                        "status": status,
                        "score": score,
                        "points": round(score * float(s.credit) * points_each, 6),
                        "mistakes": codes,
                        "parsed": parsed,
                    }
                )
        finished = _finished_at(subs, attempts)
        if finished is None and finished_at is not None and not solved_before:
            # Finished out of attempts (its solution shown) before the attempts were raised: it
            # stays finished; only a solve the regrade takes back opens a variant again.
            finished = finished_at
        open_again[variant_id] = finished is None and finished_at is not None
        if (rekeyed or finished != finished_at) and not dry_run:
            # (a dry run writes no variant: its page is not rendered again)
            change: dict[str, Any] = {"vid": variant_id, "finished_at": finished}
            if rekeyed:
                # the new key's worked solution and correct answer; what was shown stays
                change["record"] = record
                change["page"] = result.page
                change["rekeyed_at"] = now
            variant_updates.append(change)

    st = Submission.__table__
    if sub_updates and not dry_run:
        session.execute(
            update(st)
            .where(st.c.id == bindparam("sid"))
            .values(
                verdict=bindparam("verdict"),
                status=bindparam("status"),
                score=bindparam("score"),
                points=bindparam("points"),
                mistakes=bindparam("mistakes"),
                parsed=bindparam("parsed"),
            ),
            sub_updates,
        )
    if history and not dry_run:
        session.execute(insert(VerdictHistory.__table__), history)
    for keys in ({"vid", "finished_at"}, {"vid", "finished_at", "record", "page", "rekeyed_at"}):
        batch = [u for u in variant_updates if set(u) == keys]  # none in a dry run
        if batch:
            values: dict[str, Any] = {k: bindparam(k) for k in keys - {"vid"}}
            session.execute(update(vt).where(vt.c.id == bindparam("vid")).values(**values), batch)

    for p in session.scalars(select(Progress).where(Progress.exercise_id == ex_id)):
        v1 = first_variants.get(p.user_id)
        graded = [s for s in subs_by_variant.get(v1, []) if s.used_attempt] if v1 else []
        old = (float(p.best_points), p.solved_at is not None, p.best_reached_at, p.solved_at)
        # The stored late credit of each attempt and an override are kept (deadlines).
        best = best_attempt(graded)
        apply_best(p, best, points_each)
        solved_at = p.solved_at
        keyed_v1 = first_keyed.get(p.user_id)
        if keyed_v1 is not None:
            # the parts of the attempt best_attempt chose: the first reaching the best score
            top = next(
                (s for s in graded if best.score > 0 and credited(s.score, s.credit) == best.score),
                None,
            )
            p.best_parts = best_parts(keyed_v1, top.verdict) if top is not None else None
        p.attempts_used = len(graded)
        if v1 is not None and open_again.get(v1) and p.current_variant != 1:
            # The graded variant is open again (the regrade took back its solve, attempts are
            # left): the student returns to it from the practice variant they had moved on to.
            p.current_variant = 1
        if abs(old[0] - p.best_points) > 1e-9 or old[1] != (solved_at is not None):
            summary.progress_changes.append(
                ProgressChange(
                    p.user_id,
                    usernames.get(p.user_id, "?"),
                    old[0],
                    float(p.best_points),
                    old[1],
                    solved_at is not None,
                    _iso(old[2]),
                    _iso(old[3]),
                )
            )
    summary.changes.sort(key=lambda c: (c.username, c.variant_number, c.submission_id))
    if dry_run:
        return summary
    session.flush()
    totals.refresh_totals(session, select(Progress.user_id).where(Progress.exercise_id == ex_id))
    regrade.submissions_regraded = summary.regraded
    regrade.submissions_changed = summary.changed
    regrade.summary = summary.to_dict()
    session.flush()
    summary.regrade_id = regrade.id
    return summary


def _finished_at(subs: Sequence[_Sub], attempts: int) -> datetime | None:
    """A variant's ``finished_at`` from its submissions: the first correct graded answer, else
    the answer using the last attempt, else None (the variant is open again)."""
    graded = [s for s in subs if s.used_attempt]
    correct = next((s for s in graded if s.status == "correct"), None)
    if correct is not None:
        return correct.created_at
    if len(graded) >= attempts:
        return graded[attempts - 1].created_at
    return None


def regrade_history(session: Session, exercise_id: str) -> list[Regrade]:
    """The regrade runs of an exercise, newest first."""
    return list(
        session.scalars(
            select(Regrade).where(Regrade.exercise_id == exercise_id).order_by(Regrade.id.desc())
        )
    )


def submission_history(
    session: Session, submission_ids: Sequence[int]
) -> dict[int, list[VerdictHistory]]:
    """Submission id -> its previous verdicts (oldest first)."""
    out: dict[int, list[VerdictHistory]] = defaultdict(list)
    if not submission_ids:
        return out
    for h in session.scalars(
        select(VerdictHistory)
        .where(VerdictHistory.submission_id.in_(list(submission_ids)))
        .order_by(VerdictHistory.id)
    ):
        out[h.submission_id].append(h)
    return out
