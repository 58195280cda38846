"""Bank sync: make the database's quizzes and exercises match the YAML bank."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from quizapp.models import (
    Exercise,
    ExerciseVersion,
    Progress,
    Quiz,
    Submission,
    Variant,
    utcnow,
)

if TYPE_CHECKING:
    from quizapp.bank import Bank


import quizapp.services.totals as totals
from quizapp.services.points import exercise_points_sql, submission_points_sql
from quizapp.services.schedules import store_late_periods
from quizapp.services.text import counted
from quizapp.services.transactions import begin_write

log = logging.getLogger(__name__)


@dataclass
class SyncReport:
    """What ``sync_bank`` did.  ``errors`` are ``"file:line:column: message"`` strings."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    kept_previous: list[str] = field(default_factory=list)
    #: Live exercises the bank no longer holds, left live (``archive_missing=False``).
    kept_missing: list[str] = field(default_factory=list)
    quizzes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        """One line: counts of each outcome."""
        return (
            f"{counted(len(self.quizzes), 'quiz', 'quizzes')}, "
            f"{counted(len(self.added), 'exercise')} added, "
            f"{len(self.updated)} updated, {len(self.unchanged)} unchanged, "
            f"{len(self.archived)} archived, {len(self.restored)} restored, "
            f"{counted(len(self.errors), 'error')}"
            + (
                f" ({len(self.kept_previous)} kept their previous version)"
                if len(self.kept_previous) > 1
                else " (1 kept its previous version)"
                if self.kept_previous
                else ""
            )
            + (
                f"; {len(self.kept_missing)} not in this folder, kept live"
                if self.kept_missing
                else ""
            )
        )


def _error_target(root: Path, error_file: Any) -> tuple[str | None, str | None]:
    """(quiz id, exercise id) a bank error's file belongs to, as far as the path tells."""
    if not error_file:
        return None, None
    try:
        rel = Path(str(error_file)).resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        rel = Path(str(error_file))
    parts = rel.parts
    if len(parts) >= 2:
        quiz_id = parts[-2]
        stem = Path(parts[-1]).stem
        if stem == "quiz":
            return quiz_id, None
        return quiz_id, f"{quiz_id}/{stem}"
    if len(parts) == 1:
        return parts[0], None
    return None, None


def sync_bank(
    session: Session,
    bank: Bank,
    root: Path | None = None,
    *,
    seeds: int | None = None,
    archive_missing: bool | None = None,
    jobs: int = 1,
) -> SyncReport:
    """Make the database's quizzes and exercises match ``bank`` (from ``load_bank(root)``); commit.

    - A new exercise is added with its first ``ExerciseVersion``; an exercise whose YAML changed
      (different content hash) gets a new version, which new variants use; variants already
      started keep the version they were generated from (and their submissions stay tied to it).
    - An exercise or quiz missing from the bank is archived (hidden), never deleted; it is restored
      if it comes back.  ``archive_missing``: None (the default) archives them unless that
      would archive every live exercise (the folder holds none of the course: a wrong folder, an
      emptied checkout), which is refused with an error and nothing written; True archives them
      even then; False archives none (they stay live, listed in ``kept_missing``: a sync from
      another folder than the course's bank).
    - A file with errors (``bank.errors``) keeps its exercise's previous version live; the error is
      stored on the exercise (``sync_error``) and reported.
    - So does a new version (a YAML text the database does not have yet) for which any of
      ``seeds`` sampled seeds (default ``quizapp.bank.check.SAMPLE_SEEDS``) would show a
      student a broken variant (``quizapp.bank.check.sample_problems``: it does not generate,
      its answer is empty or not finite, or the expected answer does not grade correct); a new
      exercise with such a problem is not added.  The error says where (file:line) and how many
      seeds fail.  ``jobs``: worker processes that sample the new versions (0: one per core;
      ``quizapp.bank.check.sample_in_processes``), before the write transaction starts.
    - When an exercise's points change, ``progress.best_points`` is recomputed from ``best_score``
      (``points.exercise_points``: an override keeps its points) and each submission's
      ``points`` from its score and credit; a multi-part variant's parts keep their split
      (``bank.parts.part_shares``) of the new points.
    - A quiz's times are the instants ``load_bank`` read in the course zone; the zone's name
      and the late periods are stored with the quiz (``quizzes.timezone``, ``quizzes.late``).
    """
    from sqlalchemy import insert  # (imported here: the module's imports are not this part's)

    from quizapp.bank.check import SAMPLE_SEEDS, sample_in_processes

    report = SyncReport()
    root = root or Path(".")
    seeds = SAMPLE_SEEDS if seeds is None else seeds
    if archive_missing is None:
        emptying = _archives_every_live_exercise(session, bank, root)
        if emptying:
            report.errors.append(emptying)
            return report
    # Which (exercise, hash) versions exist: two columns, not every stored YAML source.
    versions: set[tuple[str, str]] = {
        (exercise_id, digest)
        for exercise_id, digest in session.execute(
            select(ExerciseVersion.exercise_id, ExerciseVersion.content_hash)
        )
    }
    # New versions are sampled before the write transaction (pure and possibly slow): one that
    # fails for a sampled seed is not synced, as a file with errors.
    exercises = dict(bank.exercises)
    refused: dict[str, str] = {}
    new = [ex for ex in bank.exercises.values() if (ex.id, ex.content_hash) not in versions]
    sampled = sample_in_processes(new, seeds, jobs, root) if seeds > 0 else {}
    for ex in new:
        problems = sampled.get(ex.id)
        if problems:
            del exercises[ex.id]
            refused[ex.id] = str(problems[0])
            report.errors.append(refused[ex.id])
    begin_write(session)
    now = utcnow()
    versions = {  # again, under the write lock (another sync may have added some meanwhile)
        (exercise_id, digest)
        for exercise_id, digest in session.execute(
            select(ExerciseVersion.exercise_id, ExerciseVersion.content_hash)
        )
    }

    errored_quizzes: set[str] = set()
    errored_exercises: dict[str, str] = dict(refused)
    for err in bank.errors:
        text = str(err)
        report.errors.append(text)
        quiz_id, exercise_id = _error_target(root, getattr(err, "file", None))
        if exercise_id:
            errored_exercises.setdefault(exercise_id, text)
        elif quiz_id:
            errored_quizzes.add(quiz_id)

    existing_quizzes = {q.id: q for q in session.scalars(select(Quiz))}
    for quiz in bank.quizzes.values():
        quiz_row = existing_quizzes.get(quiz.id)
        if quiz_row is None:
            quiz_row = Quiz(id=quiz.id, created_at=now)
            session.add(quiz_row)
        if quiz_row.archived:
            quiz_row.archived = False
        quiz_row.title = quiz.title
        quiz_row.description = quiz.description or ""
        quiz_row.position = None if quiz.order is None else int(quiz.order)
        quiz_row.opens_at = quiz.opens
        quiz_row.closes_at = quiz.closes
        quiz_row.late = store_late_periods(getattr(quiz, "late", None) or [])
        quiz_row.timezone = str(getattr(quiz, "timezone", None) or "UTC")
        if quiz_row.content_hash != quiz.content_hash:
            quiz_row.content_hash = quiz.content_hash
            quiz_row.updated_at = now
        report.quizzes.append(quiz.id)
    session.flush()

    existing = {e.id: e for e in session.scalars(select(Exercise))}
    repoint: list[tuple[str, float]] = []
    new_versions: list[dict[str, Any]] = []
    new_exercises: list[dict[str, Any]] = []
    positions: dict[str, int] = {}
    for quiz in bank.quizzes.values():
        for i, ex_id in enumerate(quiz.ordered_ids or quiz.exercise_ids):
            positions[ex_id] = i

    known_quizzes = set(bank.quizzes) | set(existing_quizzes)
    close: list[tuple[str, int]] = []
    for ex in exercises.values():
        if ex.quiz_id not in known_quizzes:
            report.errors.append(
                f"{ex.path}: its quiz folder {ex.quiz_id!r} has no valid quiz.yaml; not synced"
            )
            continue
        spec = ex.spec
        row = existing.get(ex.id)
        if row is None and ex.quiz_id in errored_quizzes:
            # The quiz is kept as it was while its quiz.yaml has errors: no exercise joins it
            # (a renamed file the listing does not name yet would show twice).
            report.errors.append(
                f"{ex.path}: not added: the quiz.yaml of {ex.quiz_id!r} has errors, and the quiz "
                "is kept as it was until they are fixed"
            )
            continue
        title = str(getattr(spec, "title", ex.id))
        points = float(getattr(spec, "points", 10))
        attempts = int(getattr(spec, "attempts", 3))
        fields: dict[str, Any] = {
            "quiz_id": ex.quiz_id,
            "title": title,
            "kind": str(getattr(spec, "kind", "")),
            "points": points,
            "attempts": attempts,
            "practice": bool(getattr(spec, "practice", True)),
            "concepts": [str(c) for c in (getattr(spec, "concepts", None) or [])],
        }
        if (ex.id, ex.content_hash) not in versions:
            new_versions.append(
                {
                    "exercise_id": ex.id,
                    "content_hash": ex.content_hash,
                    "source": ex.source,
                    "title": title,
                    "points": points,
                    "attempts": attempts,
                    "created_at": now,
                }
            )
            versions.add((ex.id, ex.content_hash))
        if row is None:
            # A new exercise: one row of a single executemany (no ORM object per row).
            new_exercises.append(
                {
                    "id": ex.id,
                    **fields,
                    "position": positions.get(ex.id, 0),
                    "current_hash": ex.content_hash,
                    "archived": False,
                    "sync_error": None,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            report.added.append(ex.id)
            continue
        if row.current_hash != ex.content_hash:
            report.updated.append(ex.id)
        elif row.archived:
            report.restored.append(ex.id)
        else:
            report.unchanged.append(ex.id)
        if row.archived and ex.id not in report.restored:
            report.restored.append(ex.id)
        old_points, old_attempts = row.points, row.attempts
        for name, value in fields.items():
            setattr(row, name, value)
        row.position = positions.get(ex.id, row.position or 0)
        row.archived = False
        row.sync_error = None
        if row.current_hash != ex.content_hash:
            row.current_hash = ex.content_hash
            row.updated_at = now
        if old_points is not None and old_points != points:
            repoint.append((ex.id, points))
        if old_attempts is not None and attempts < old_attempts:
            close.append((ex.id, attempts))
    # An exercise whose new version was refused keeps its version, not its place: the quiz's
    # order is quiz.yaml's, for every exercise it lists.
    for ex_id in errored_exercises:
        if ex_id in existing and ex_id in positions:
            existing[ex_id].position = positions[ex_id]
    # One flush for the changed exercises instead of one per exercise; then the new exercises
    # and the new versions each in one executemany, in bank order (version ids ascend as
    # before), without loading them back (nothing here needs them as objects).
    session.flush()
    if new_exercises:
        session.execute(insert(Exercise), new_exercises)
    if new_versions:
        session.execute(insert(ExerciseVersion), new_versions)
    for ex_id, points in repoint:
        session.execute(
            update(Progress)
            .where(Progress.exercise_id == ex_id)
            .values(best_points=exercise_points_sql(points))
        )
        # Each submission's points follow too (score x credit x the exercise's points, as a
        # submit computes them), so a verdict never reads "20 of 10 points".
        session.execute(
            update(Submission)
            .where(Submission.exercise_id == ex_id)
            .values(points=submission_points_sql(points))
        )

    # Fewer attempts: a variant that has used them all is finished now (its worked solution is
    # shown), and stays finished if the attempts are raised again (``VariantState.closed``).
    vt, st = Variant.__table__, Submission.__table__
    for ex_id, attempts in close:
        used = (
            select(func.count())
            .select_from(st)
            .where(st.c.variant_id == vt.c.id, st.c.used_attempt.is_(True))
            .scalar_subquery()
        )
        session.execute(
            update(vt)
            .where(vt.c.exercise_id == ex_id, vt.c.finished_at.is_(None), used >= attempts)
            .values(finished_at=now)
        )

    for ex_id, row in existing.items():
        if ex_id in exercises:
            continue
        if ex_id in errored_exercises:
            row.sync_error = errored_exercises[ex_id]
            report.kept_previous.append(ex_id)
            continue
        if row.quiz_id in errored_quizzes:
            report.kept_previous.append(ex_id)
            continue
        if not row.archived:
            if archive_missing is False:
                report.kept_missing.append(ex_id)
                continue
            row.archived = True
            row.updated_at = now
            report.archived.append(ex_id)

    for quiz_id, qrow in existing_quizzes.items():
        if quiz_id in bank.quizzes or quiz_id in errored_quizzes:
            continue
        live_children = any(e.quiz_id == quiz_id and not e.archived for e in existing.values())
        if archive_missing is False:
            live_children = live_children or not qrow.archived
        if not qrow.archived and not live_children:
            qrow.archived = True
            qrow.updated_at = now
    session.commit()
    # Scoreboard totals follow the live exercises and their points: rebuild them now, at sync,
    # rather than on the next scoreboard view (which still checks, as a safety net).  One
    # fingerprint query when nothing changed.
    totals.ensure_current(session)
    return report


def _archives_every_live_exercise(session: Session, bank: Bank, root: Path) -> str | None:
    """The error of a sync that would archive every live exercise (none of them is in ``bank``,
    not even as a file with errors), or None.  Read before any write."""
    live = list(session.scalars(select(Exercise.id).where(Exercise.archived.is_(False))))
    if not live:
        return None
    kept = set(bank.exercises)  # (a file with errors keeps its exercise, or its whole quiz)
    kept_quizzes: set[str] = set()
    for err in bank.errors:
        quiz_id, exercise_id = _error_target(root, getattr(err, "file", None))
        if exercise_id:
            kept.add(exercise_id)
        elif quiz_id:
            kept_quizzes.add(quiz_id)
    if any(e in kept or e.split("/")[0] in kept_quizzes for e in live):
        return None
    shown = ", ".join(sorted(live)[:3]) + (", ..." if len(live) > 3 else "")
    return (
        f"{root}: this folder holds none of the course's {len(live)} live exercises ({shown}), "
        "so the sync would archive them all; nothing was synced. Check the folder, or run "
        "`quizapp sync --archive-missing` to archive them anyway."
    )


def sync_folder(
    session: Session,
    root: Path,
    zone: Any = None,
    *,
    seeds: int | None = None,
    archive_missing: bool | None = None,
    jobs: int = 1,
) -> SyncReport:
    """``load_bank(root, zone)`` then :func:`sync_bank`.  A missing folder archives nothing.

    ``zone``: the course time zone (``QUIZAPP_TIMEZONE``: an IANA name or ``ZoneInfo``; default
    UTC) in which the quizzes' wall-clock times are read; ``seeds``: how many seeds to sample per
    new version (default ``quizapp.bank.check.SAMPLE_SEEDS``); ``archive_missing``: what becomes
    of live exercises the folder does not hold, ``jobs``: processes that sample (:func:`sync_bank`)."""
    from quizapp.bank import load_bank

    root = Path(root)
    if not root.is_dir():
        report = SyncReport()
        report.errors.append(f"{root}: the exercises folder does not exist")
        return report
    return sync_bank(
        session,
        load_bank(root, zone),
        root,
        seeds=seeds,
        archive_missing=archive_missing,
        jobs=jobs,
    )
