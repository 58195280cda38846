"""Scoreboard totals (table ``score_totals``): each student's points, exercises solved, attempts
and "total reached at" per quiz and for the whole course, kept equal to their progress rows.

A row ``(user_id, scope)`` (scope ``""``: the course, else a quiz id) holds, over the student's
progress rows on the live exercises of that scope (exercise and quiz not archived) that they are
not excused from:

- ``points``: sum of ``best_points``;
- ``solved``: number of rows with ``solved_at``;
- ``attempts``: sum of ``attempts_used``;
- ``reached_at``: the latest ``best_reached_at`` among rows with ``best_points > 0`` (the
  scoreboard's tie-break), None when there is none.

A student without a row in a scope has 0, 0, 0, None there.  This is exactly the aggregate the
scoreboard computed from ``progress`` on every view (``tests/test_instructor_totals.py`` compares the
two after random submits, regrades and excusals); storing it lets a page of a 10,000-student class
rank 10,000 rows instead of aggregating 400,000 (issue 7).

Kept current in the transaction that changes its inputs:

- ``services.submit`` and ``services.recompute_progress`` call :func:`refresh_user_totals` after
  updating a progress row; ``regrade_exercise`` calls :func:`refresh_totals` for the students of
  the regraded exercise; ``excuse`` / ``unexcuse`` refresh the student's rows;
- the set of live exercises and their points (changed by a bank sync: archiving, restoring, new
  points) is summarized by :func:`scope_fingerprint`, stored in ``score_totals_state``; the
  scoreboard calls :func:`ensure_current` first, which rebuilds every row when the stored
  fingerprint differs from the bank's current one (so a sync needs no hook and can never leave the
  totals stale).

On PostgreSQL the refresh of one student locks their ``users`` row (``FOR NO KEY UPDATE``) before
reading their progress rows, so two concurrent submits of the same student cannot each write
totals that miss the other's progress change (the second waits for the first to commit, then reads
its rows); the lock does not conflict with the ``KEY SHARE`` lock a submission's insert takes on
that row (its foreign key), which ``FOR UPDATE`` did: two submits to two exercises deadlocked; a rebuild of many students locks the table (``EXCLUSIVE``:
reads go on, writers wait).  On SQLite writes are serialized by ``BEGIN IMMEDIATE`` already.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from sqlalchemy import Integer, and_, bindparam, case, delete, func, insert, literal, select
from sqlalchemy.orm import Session

from quizapp.models import (
    Exercise,
    Progress,
    Quiz,
    ScoreTotal,
    ScoreTotalsState,
    User,
    utcnow,
)
from quizapp.models_instructor import Excusal
from quizapp.services.transactions import begin_write

#: The scope of the whole course's row (a quiz's rows have the quiz id).
COURSE = ""
#: ``score_totals_state.id`` of the single state row.
STATE_ID = 1


def scope_fingerprint(exercises: Iterable[tuple[str, str, float]]) -> str:
    """SHA-256 hex of the live exercises as ``(exercise id, quiz id, points)`` triples.

    Order-independent (the triples are sorted).  Any archiving, restoring, new exercise, move or
    change of points gives a different fingerprint.  The migration that created the table computes
    the same (``migrations/versions/instructor_0002_score_totals.py``; a test checks they agree).
    """
    h = hashlib.sha256()
    for ex_id, quiz_id, points in sorted((str(e), str(q), float(p)) for e, q, p in exercises):
        h.update(f"{ex_id}\0{quiz_id}\0{points!r}\n".encode())
    return h.hexdigest()


def current_fingerprint(session: Session) -> str:
    """:func:`scope_fingerprint` of the bank as stored now (one query over ``exercises``)."""
    rows = session.execute(
        select(Exercise.id, Exercise.quiz_id, Exercise.points)
        .join(Quiz, Quiz.id == Exercise.quiz_id)
        .where(Exercise.archived.is_(False), Quiz.archived.is_(False))
    ).all()
    return scope_fingerprint((r[0], r[1], r[2]) for r in rows)


def _aggregate(scope: Any, user_filter: Any) -> Any:
    """SELECT (user_id, scope, points, solved, attempts, reached_at) over live, non-excused
    progress rows, grouped by student (and by quiz when ``scope`` is the quiz id column)."""
    stmt = (
        select(
            Progress.user_id,
            scope,
            func.sum(Progress.best_points),
            func.count(Progress.solved_at),
            func.sum(Progress.attempts_used),
            func.max(case((Progress.best_points > 0, Progress.best_reached_at), else_=None)),
        )
        .join(Exercise, Exercise.id == Progress.exercise_id)
        .join(Quiz, Quiz.id == Exercise.quiz_id)
        .outerjoin(
            Excusal,
            and_(Excusal.user_id == Progress.user_id, Excusal.exercise_id == Progress.exercise_id),
        )
        .where(Exercise.archived.is_(False), Quiz.archived.is_(False), Excusal.id.is_(None))
        .group_by(Progress.user_id)
    )
    if user_filter is not None:
        stmt = stmt.where(user_filter(Progress.user_id))
    if scope is Exercise.quiz_id:
        stmt = stmt.group_by(Exercise.quiz_id)
    return stmt


def _write(session: Session, user_filter: Any) -> None:
    """Replace the rows of the students selected by ``user_filter`` (all when None)."""
    columns = ["user_id", "scope", "points", "solved", "attempts", "reached_at"]
    table = ScoreTotal.__table__
    drop = delete(table)
    if user_filter is not None:
        drop = drop.where(user_filter(table.c.user_id))
    session.execute(drop)
    for scope in (literal(COURSE), Exercise.quiz_id):
        session.execute(insert(table).from_select(columns, _aggregate(scope, user_filter)))


@lru_cache(maxsize=1)
def _one_student_statements() -> tuple[Any, ...]:
    """The statements of :func:`refresh_user_totals`, built once with a ``user_id`` parameter
    (building them per call cost ~4x their execution)."""
    table = ScoreTotal.__table__
    columns = ["user_id", "scope", "points", "solved", "attempts", "reached_at"]
    uid = bindparam("user_id", type_=Integer())
    mine = lambda col: col == uid  # noqa: E731
    return (
        # FOR NO KEY UPDATE: it waits for another refresh of the same student (which holds the
        # same lock until commit), but not for the KEY SHARE lock that this transaction's and a
        # concurrent transaction's inserts (submission, progress: foreign keys to users) take on
        # the row.  FOR UPDATE conflicts with KEY SHARE: two submits of one student to two
        # exercises each held KEY SHARE and waited for the other's, a deadlock (PostgreSQL's
        # row-level lock table: FOR NO KEY UPDATE does not conflict with FOR KEY SHARE).
        select(User.id).where(User.id == uid).with_for_update(key_share=True),
        delete(table).where(table.c.user_id == uid),
        *(
            insert(table).from_select(columns, _aggregate(scope, mine))
            for scope in (literal(COURSE), Exercise.quiz_id)
        ),
    )


def refresh_user_totals(session: Session, user_id: int) -> None:
    """Recompute student ``user_id``'s rows from their progress rows, in the caller's (write)
    transaction; flushes pending changes first, does not commit.  Three statements (plus the
    row lock on PostgreSQL) over the student's own progress rows (index ``ix_progress_user``)."""
    session.flush()
    lock, *writes = _one_student_statements()
    params = {"user_id": int(user_id)}
    if session.get_bind().dialect.name != "sqlite":
        session.execute(lock, params)
    for stmt in writes:
        session.execute(stmt, params)


def refresh_totals(session: Session, user_ids: Any = None) -> None:
    """Recompute the rows of the students in ``user_ids`` (a SELECT of user ids, a list of ids,
    or None for everyone) in the caller's write transaction; flushes, does not commit."""
    session.flush()
    if session.get_bind().dialect.name != "sqlite":
        session.connection().exec_driver_sql("LOCK TABLE score_totals IN EXCLUSIVE MODE")
    if user_ids is None:
        _write(session, None)
    elif isinstance(user_ids, list | tuple | set | frozenset):
        ids = sorted({int(u) for u in user_ids})
        for k in range(0, len(ids), 500):
            chunk = ids[k : k + 500]
            _write(session, lambda col, chunk=chunk: col.in_(chunk))
    else:
        _write(session, lambda col: col.in_(user_ids))


def rebuild_totals(session: Session, fingerprint: str | None = None) -> None:
    """Recompute every row and store the bank's fingerprint, in the caller's write transaction;
    does not commit.  ``fingerprint`` must have been computed before the rows (so that a sync
    committed in between makes the stored one stale, never the rows)."""
    fingerprint = current_fingerprint(session) if fingerprint is None else fingerprint
    refresh_totals(session, None)
    state = session.get(ScoreTotalsState, STATE_ID)
    if state is None:
        session.add(ScoreTotalsState(id=STATE_ID, fingerprint=fingerprint))
    else:
        state.fingerprint = fingerprint
        state.rebuilt_at = utcnow()
    session.flush()


def ensure_current(session: Session, live: Iterable[Exercise] | None = None) -> bool:
    """Rebuild the totals if the live exercises changed since they were computed (bank sync).

    ``live``: the live exercises if the caller loaded them already (``live_exercises``), else
    one small query over ``exercises``; plus one row read when nothing changed.  When a rebuild
    is needed it commits the session's current transaction, rebuilds in a write transaction
    (``services.begin_write``) and commits; returns True then.
    """
    if live is None:
        fingerprint = current_fingerprint(session)
    else:
        fingerprint = scope_fingerprint((e.id, e.quiz_id, e.points) for e in live)
    state = session.get(ScoreTotalsState, STATE_ID)
    if state is not None and state.fingerprint == fingerprint:
        return False
    begin_write(session)
    try:
        fingerprint = current_fingerprint(session)
        state = session.get(ScoreTotalsState, STATE_ID)
        if state is None or state.fingerprint != fingerprint:
            rebuild_totals(session, fingerprint)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return True


__all__ = [
    "COURSE",
    "current_fingerprint",
    "ensure_current",
    "rebuild_totals",
    "refresh_totals",
    "refresh_user_totals",
    "scope_fingerprint",
]
