"""The scoreboard is one query over the students' totals rows (``score_totals``) that uses an
index and never reads progress rows or submissions (design.md: "the scoreboard reads progress
rows, never scans all submissions"; issue 7: 10,000 students), and refreshing one student's totals
reads only their progress rows (an index search on ``user_id``); checked with SQLite's EXPLAIN QUERY
PLAN on a class generated like the scale benchmark's."""

from __future__ import annotations

import random
import sqlite3
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/ is not installed

from benchmarks.bench_scale import generate_class  # noqa: E402
from benchmarks.common import REPO, app_for, make_instance  # noqa: E402
from quizapp import instructor as inst
from quizapp import services
from quizapp.instructor.scoreboard import _scoreboard_query
from quizapp.models import db


@pytest.fixture(scope="module")
def scale_app(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("scale")
    env = make_instance(root / "instance", REPO / "exercises", root / "scale.sqlite")
    app = app_for(env)
    with app.app_context():
        assert services.sync_folder(db.session, REPO / "exercises").ok
        db.engine.dispose()
    generate_class(root / "scale.sqlite", 60, env["QUIZAPP_SEED_SECRET"], random.Random(5))
    yield app, root / "scale.sqlite"
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def _plan_of(app, stmt) -> list[str]:
    with app.app_context():
        sql = str(stmt.compile(db.engine, compile_kwargs={"literal_binds": True}))
        return [row[3] for row in db.session.execute(db.text("EXPLAIN QUERY PLAN " + sql))]


def _plan(app, quiz_id: str | None) -> list[str]:
    return _plan_of(app, select(_scoreboard_query(quiz_id)).limit(50))


@pytest.mark.parametrize("quiz", [None, "01-linear-systems"])
def test_scoreboard_plan_uses_index_and_skips_submissions(scale_app, quiz: str | None) -> None:
    app, _ = scale_app
    plan = _plan(app, quiz)
    assert not any("submissions" in step or " progress " in f" {step} " for step in plan), plan
    totals_steps = [step for step in plan if "score_totals" in step]
    assert totals_steps, plan
    assert all(
        step.startswith("SEARCH") and "(scope=? AND user_id=?)" in step for step in totals_steps
    ), plan
    assert sum("SCAN users" in step for step in plan) == 1, plan  # one pass over the students


@pytest.mark.parametrize("scope", ["course", "quiz"])
def test_refreshing_one_student_reads_only_their_progress_rows(scale_app, scope: str) -> None:
    """What submit adds per graded answer: the aggregate behind the student's totals rows."""
    from sqlalchemy import literal

    from quizapp.models import Exercise
    from quizapp.services.totals import _aggregate

    app, _ = scale_app
    column = literal("") if scope == "course" else Exercise.quiz_id
    plan = _plan_of(app, _aggregate(column, lambda col: col == 7))
    assert not any("submissions" in step for step in plan), plan
    progress_steps = [step for step in plan if " progress " in f" {step} "]
    assert progress_steps, plan
    assert all(
        step.startswith("SEARCH progress USING") and "INDEX" in step and "(user_id=?" in step
        for step in progress_steps
    ), plan


def test_scoreboard_totals_equal_plain_sql(scale_app) -> None:
    """The ranked totals equal an independent sum over the live exercises' progress rows."""
    app, path = scale_app
    with sqlite3.connect(path) as con:
        expected = dict(
            con.execute(
                "SELECT p.user_id, round(sum(p.best_points), 6) FROM progress p "
                "JOIN exercises e ON e.id = p.exercise_id WHERE NOT e.archived "
                "GROUP BY p.user_id"
            ).fetchall()
        )
    with app.app_context():
        board = inst.scoreboard(db.session, per_page=500)
    assert board.total == 60 and len(board.rows) == 60
    assert {r.user_id: r.points for r in board.rows} == pytest.approx(expected)
    points = [r.points for r in board.rows]
    assert points == sorted(points, reverse=True)
    assert [r.rank for r in board.rows] == list(range(1, 61))
