"""The scoreboard totals (``score_totals``, ``quizapp.services.totals``) always equal a
recompute from the submissions: after random sequences of submits (correct, wrong, partly right,
practice), excusals, regrades and ``recompute_progress`` calls, after a bank change (an exercise
archived, restored), and after the migration's back-fill.

The reference is computed here with plain Python from the stored submissions
(``best_by_student``), never read from the table or the code under test.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select, update
from test_instructor_support import (
    DECK,
    TRANSPOSE,
    TWO,
    add_user,
    at,
    bank_app,
    best_by_student,
    solution_of,
    stored_submissions,
    submit,
    text_of,
)

from quizapp import instructor as inst
from quizapp import services
from quizapp.models import Exercise, Progress, ScoreTotal, ScoreTotalsState, User, db
from quizapp.models_instructor import Excusal
from quizapp.services import totals

EXERCISES = (DECK, TWO, TRANSPOSE)
STUDENTS = ("ana", "ben", "cleo", "dan", "eve")


@pytest.fixture()
def app(tmp_path: Path):
    """SQLite, and PostgreSQL when ``QUIZAPP_TEST_POSTGRES_URL`` is set (tests/conftest.py)."""
    return bank_app(tmp_path)


def _stored_totals(app) -> dict[tuple[str, str], tuple[float, int, int, object]]:
    with app.app_context():
        rows = db.session.execute(
            select(User.username, ScoreTotal).join(User, User.id == ScoreTotal.user_id)
        ).all()
        return {
            (name, t.scope): (round(float(t.points), 6), t.solved, t.attempts, t.reached_at)
            for name, t in rows
            if (t.points, t.solved, t.attempts, t.reached_at) != (0.0, 0, 0, None)
        }


def _expected_totals(app) -> dict[tuple[str, str], tuple[float, int, int, object]]:
    """From the submissions: per student, over the live exercises they are not excused from,
    per quiz and for the course (scope "")."""
    with app.app_context():
        live = {e.id for e in inst.live_exercises(db.session)}
        quizzes = {e.quiz_id for e in inst.live_exercises(db.session)}
        excused = {
            (name, ex)
            for name, ex in db.session.execute(
                select(User.username, Excusal.exercise_id).join(User, User.id == Excusal.user_id)
            )
        }
    subs = [s for s in stored_submissions(app) if s["exercise"] in live]
    out = {}
    for scope in [None, *quizzes]:
        for name, s in best_by_student(subs, excused, scope).items():
            value = (round(s["points"], 6), s["solved"], s["attempts"], s["reached"])
            if value != (0.0, 0, 0, None):
                out[(name, scope or "")] = value
    return out


def _answer(app, rng: random.Random, name: str, exercise_id: str) -> str:
    right = np.atleast_1d(solution_of(app, name, exercise_id))
    kind = rng.choice(("right", "wrong", "one-off", "garbage"))
    if kind == "right":
        return text_of(right)
    if kind == "garbage":
        return "not a number"  # invalid: uses no attempt
    wrong = right.copy()
    if kind == "wrong":
        wrong = wrong + 7
    else:
        wrong.flat[rng.randrange(wrong.size)] += 7  # partial credit on a vector or matrix
    return text_of(wrong)


def _check(app) -> None:
    assert _stored_totals(app) == _expected_totals(app)
    with app.app_context():  # nothing was left for a rebuild to fix
        assert totals.ensure_current(db.session) is False


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_totals_equal_a_recompute_after_random_submits_excusals_and_regrades(app, seed) -> None:
    rng = random.Random(seed)
    ids = {name: add_user(app, name) for name in STUDENTS}
    with app.app_context():
        inst.scoreboard(db.session)  # builds the totals for the synced bank
    hour = 0.0
    for _ in range(40):
        hour += rng.choice((0.0, 0.25, 1.0))  # equal times too: tie-breaks on reached_at
        name, ex = rng.choice(STUDENTS), rng.choice(EXERCISES)
        action = rng.choices(["submit", "practice", "excuse", "regrade", "recompute"],
                             weights=[12, 2, 2, 1, 1])[0]  # fmt: skip
        if action == "submit":
            try:
                submit(app, name, ex, _answer(app, rng, name, ex), at(hour))
            except services.ServiceError:
                pass  # out of attempts / already solved: refused, nothing stored
        elif action == "practice":
            with app.app_context():
                user = db.session.get(User, ids[name])
                try:
                    services.new_practice_variant(
                        db.session,
                        user,
                        db.session.get(Exercise, ex),
                        seed_secret=app.config["QUIZAPP_SEED_SECRET"],
                    )
                except services.ServiceError:
                    continue  # not finished yet: no practice variant
            submit(app, name, ex, _answer(app, rng, name, ex), at(hour))  # never counts
        elif action == "excuse":
            with app.app_context():
                if db.session.scalar(
                    select(Excusal).where(Excusal.user_id == ids[name], Excusal.exercise_id == ex)
                ):
                    inst.unexcuse(db.session, ids[name], ex)
                else:
                    inst.excuse(db.session, ids[name], ex, reason="test")
        elif action == "regrade":
            with app.app_context():
                # Damage the derived rows of the exercise: the regrade must rebuild them all.
                db.session.execute(
                    update(Progress).where(Progress.exercise_id == ex).values(best_points=99.0)
                )
                db.session.execute(update(ScoreTotal).values(points=-1.0))
                db.session.commit()
                inst.regrade_exercise(db.session, ex)
                # The regrade refreshed its students; the others' rows are still damaged here.
                touched = set(
                    db.session.scalars(select(Progress.user_id).where(Progress.exercise_id == ex))
                )
                others = set(ids.values()) - touched
                if others:
                    totals.refresh_totals(db.session, list(others))
                    db.session.commit()
        else:
            with app.app_context():
                services.begin_write(db.session)
                if db.session.scalar(
                    select(Progress.id).where(
                        Progress.user_id == ids[name], Progress.exercise_id == ex
                    )
                ):  # damage the totals: recomputing the progress row must refresh them
                    db.session.execute(
                        update(ScoreTotal)
                        .where(ScoreTotal.user_id == ids[name])
                        .values(points=-1.0, solved=99)
                    )
                services.recompute_progress(db.session, ids[name], ex)
                db.session.commit()
        _check(app)
    assert any(value[0] > 0 for value in _stored_totals(app).values())


def test_a_bank_change_rebuilds_the_totals(app) -> None:
    """Archiving or restoring an exercise (what a sync does) changes the live set: the next
    scoreboard view rebuilds every row, and the ranking follows."""
    add_user(app, "ana")
    add_user(app, "ben")
    submit(app, "ana", DECK, "2, 5", at(1))
    submit(app, "ben", TWO, text_of(solution_of(app, "ben", TWO)), at(2))
    submit(app, "ben", TRANSPOSE, text_of(solution_of(app, "ben", TRANSPOSE)), at(3))
    with app.app_context():
        assert [r.username for r in inst.scoreboard(db.session).rows] == ["ben", "ana"]
    _check(app)
    for archived in (True, False):
        with app.app_context():
            db.session.execute(update(Exercise).where(Exercise.id == TWO).values(archived=archived))
            db.session.execute(
                update(Exercise).where(Exercise.id == TRANSPOSE).values(archived=archived)
            )
            db.session.commit()
            board = inst.scoreboard(db.session)
            points = {r.username: r.points for r in board.rows}
            worth = float(db.session.get(Exercise, TWO).points) + float(
                db.session.get(Exercise, TRANSPOSE).points
            )
        assert points == {"ana": 10.0, "ben": 0.0 if archived else worth}
        _check(app)
    with app.app_context():  # points changed by a sync: the fingerprint changes too
        db.session.execute(update(Exercise).where(Exercise.id == DECK).values(points=20.0))
        db.session.execute(
            update(Progress).where(Progress.exercise_id == DECK).values(best_points=20.0)
        )
        db.session.commit()
        assert {r.username: r.points for r in inst.scoreboard(db.session).rows}["ana"] == 20.0


def test_fingerprint_ignores_order_and_sees_every_change() -> None:
    base = [("q/a", "q", 10.0), ("q/b", "q", 5.0)]
    fp = totals.scope_fingerprint(base)
    assert totals.scope_fingerprint(list(reversed(base))) == fp
    assert totals.scope_fingerprint(base[:1]) != fp
    assert totals.scope_fingerprint([("q/a", "q", 10.0), ("q/b", "q", 5.5)]) != fp
    assert totals.scope_fingerprint([("q/a", "q", 10.0), ("q/b", "r", 5.0)]) != fp


def test_migration_back_fills_the_totals(app) -> None:
    """Downgrade to the revision before the table, upgrade again: the back-fill equals the
    recompute, and its fingerprint is the application's (no rebuild needed afterwards)."""
    from flask_migrate import downgrade

    from quizapp.web.database import MIGRATIONS_DIR, upgrade_database

    add_user(app, "ana")
    add_user(app, "ben")
    submit(app, "ana", DECK, "0, 0", at(1))
    submit(app, "ana", DECK, "2, 5", at(2))
    submit(app, "ben", TWO, text_of(solution_of(app, "ben", TWO) + np.array([0, 7])), at(3))
    with app.app_context():
        inst.excuse(db.session, db.session.scalar(select(User.id).where(User.username == "ana")),
                    TRANSPOSE)  # fmt: skip
        db.session.execute(update(Exercise).where(Exercise.id == TRANSPOSE).values(archived=True))
        db.session.commit()
        db.session.remove()
        downgrade(directory=str(MIGRATIONS_DIR), revision="instructor_0001")
        db.session.remove()
    upgrade_database(app)
    assert _stored_totals(app)  # filled by the migration
    _check(app)
    with app.app_context():
        state = db.session.get(ScoreTotalsState, totals.STATE_ID)
        assert state is not None and state.fingerprint == totals.current_fingerprint(db.session)
