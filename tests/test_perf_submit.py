"""The submit path's SQL, bounded: at most so many statements for one exercise-page GET and POST
(issue 7, figure 3), so a lazy load or a re-read cannot creep back unnoticed (an upper bound: a
change that saves a statement passes; lower the bound then); and the rows the submit decides on
are read under its write lock even when the session already holds them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session
from test_web_support import csrf_from, student, synced_app, url_of

from quizapp import services
from quizapp.models import Exercise, Progress, Submission, db

TWO = "01-linear-systems/06-two-by-two"

# The bounds are today's counts.  One exercise-page GET: BEGIN, the signed-in user (Flask-Login),
# the exercise with its quiz and the current variant (numbered by the progress row) in one
# statement, its submissions, and the quiz's exercises with the student's progress rows
# (services.quiz_position: "exercise k of n", next and previous).
GET_STATEMENTS = 5
# One submit (POST) of a student who already has a progress row: BEGIN, user, exercise + quiz +
# current variant; BEGIN IMMEDIATE, the progress row (locked) with the variant's number, re-key
# and finished times and its exercise's attempts and points (one Core statement), the variant's
# submissions (Core); INSERT submission (Core), UPDATE progress (Core); then the student's
# scoreboard totals (a graded submit): DELETE their score_totals rows, INSERT ... SELECT the
# course row and the per-quiz rows (quizapp.services.totals.refresh_user_totals).  (COMMITs are
# not cursor statements.)  The page shown after the commit: BEGIN and the quiz's exercises with
# the student's progress rows (services.quiz_position).
TOTALS_STATEMENTS = 3
PAGE_STATEMENTS = 2
POST_STATEMENTS = 8 + TOTALS_STATEMENTS + PAGE_STATEMENTS
# The first submit finds no progress row: it inserts one (INSERT ... ON CONFLICT DO NOTHING
# RETURNING) and reads the locked state again.
FIRST_POST_STATEMENTS = 10 + TOTALS_STATEMENTS + PAGE_STATEMENTS


class StatementLog:
    """Every statement the app's engine sends to SQLite while active."""

    def __init__(self, app) -> None:
        with app.app_context():
            self.engine = db.engine
        self.statements: list[str] = []

    def _on(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self.statements.append(" ".join(statement.split())[:120])

    def __enter__(self) -> StatementLog:
        event.listen(self.engine, "before_cursor_execute", self._on)
        return self

    def __exit__(self, *exc) -> None:
        event.remove(self.engine, "before_cursor_execute", self._on)

    def text(self) -> str:
        return "\n".join(self.statements)


@pytest.fixture()
def app(tmp_path: Path):
    return synced_app(tmp_path, RATELIMIT_ENABLED=False)


def _post(client, token: str, answer: str):
    resp = client.post(url_of(TWO), data={"csrf_token": token, "via": "text", "answer": answer})
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return resp


def _wrong(app, username: str) -> tuple[str, str]:
    """Two different wrong answers to ``username``'s variant of TWO, whatever its numbers (a
    fixed "1 2" is the solution of some variants: the next answer was then refused)."""
    with app.app_context():
        user = services.find_user(db.session, username)
        exercise = db.session.get(Exercise, TWO)
        variant = services.get_or_create_variant(
            db.session, user, exercise, app.config["QUIZAPP_SEED_SECRET"]
        )
        x, y = np.asarray(services.stored_variant(variant).expected, dtype=float).ravel()
    return f"{x + 1:g} {y + 1:g}", f"{x + 2:g} {y + 2:g}"


def _write_phase(statements: list[str]) -> list[str]:
    """The statements from ``BEGIN IMMEDIATE`` (the write lock) on; fails if there is none."""
    assert "BEGIN IMMEDIATE" in statements, "\n".join(statements)
    return statements[statements.index("BEGIN IMMEDIATE") :]


def test_statements_of_one_get_and_one_submit_stay_within_bounds(app) -> None:
    client = student(app)
    token = csrf_from(client.get(url_of(TWO)).get_data(as_text=True))
    first, second = _wrong(app, "ana")

    with StatementLog(app) as log:
        _post(client, token, first)
    assert len(log.statements) <= FIRST_POST_STATEMENTS, log.text()
    # the progress row is created once, under the write lock
    assert sum(s.startswith("INSERT INTO progress") for s in log.statements) == 1, log.text()
    assert any(s.startswith("INSERT INTO progress") for s in _write_phase(log.statements))

    with StatementLog(app) as log:
        page = _post(client, token, second).get_data(as_text=True)
    assert len(log.statements) <= POST_STATEMENTS, log.text()
    # one read transaction, one write transaction that holds the lock while it decides, then
    # the read of the page shown after the commit
    assert [s.split()[0] for s in log.statements].count("BEGIN") == 3, log.text()
    writes = _write_phase(log.statements)
    assert any(s.startswith("SELECT") and "progress" in s for s in writes), log.text()
    assert any(s.startswith("INSERT INTO submissions") for s in writes), log.text()
    assert not any(
        s.startswith(("INSERT", "UPDATE", "DELETE")) for s in log.statements[: -len(writes)]
    )
    assert sum(s.startswith("SELECT users.") for s in log.statements) == 1, log.text()
    # The page shows both submissions and the attempts left (3 attempts, 2 used).
    history = page.split('id="history-title"', 1)[1]
    assert history.count('<pre class="answer-text">') == 2
    answers = re.findall(r'<pre class="answer-text"><bdi>(.*?)</bdi>', history)
    assert answers == [second, first], answers  # newest first (not by a date's text)
    assert '<strong id="attempts-left">1</strong>' in page

    with StatementLog(app) as log:
        client.get(url_of(TWO))
    assert len(log.statements) <= GET_STATEMENTS, log.text()
    assert not any(s.startswith(("INSERT", "UPDATE", "DELETE")) for s in log.statements)


def test_submit_reads_the_rows_it_decides_on_under_the_lock(app) -> None:
    """Session A holds the variant, its submissions and the progress row; meanwhile session B
    submits.  A's next submit must count B's rows (attempts, submissions count) although A's
    session still holds the old objects, and must refuse once B used the last attempt."""
    secret = app.config["QUIZAPP_SEED_SECRET"]
    with app.app_context():
        services.create_user(db.session, "ana", "correct horse")
        user = services.find_user(db.session, "ana")
        exercise = db.session.get(Exercise, TWO)
        variant = services.get_or_create_variant(db.session, user, exercise, secret)
        assert services.variant_submissions(db.session, variant) == []
        services.submit(db.session, user, TWO, "9 9", seed_secret=secret, variant=variant)
        progress = services.get_progress(db.session, user, exercise)
        assert progress is not None and progress.attempts_used == 1

        def other_submits(answer: str) -> None:
            with Session(db.engine) as other:
                services.submit(other, other.get(type(user), user.id), TWO, answer,
                                seed_secret=secret)  # fmt: skip

        other_submits("not a number")  # stored, uses no attempt
        other_submits("8 8")
        result = services.submit(db.session, user, TWO, "7 7", seed_secret=secret, variant=variant)
        assert result.used_attempt and result.attempts_left == 0 and result.finished
        answers = [s.raw_answer for s in result.submissions]
        assert answers == ["9 9", "not a number", "8 8", "7 7"]
        assert (progress.attempts_used, progress.submissions_count) == (3, 4)

        with pytest.raises(services.Conflict, match="No attempts left"):
            services.submit(db.session, user, TWO, "6 6", seed_secret=secret, variant=variant)
        db.session.rollback()
        db.session.expire_all()
        stored = db.session.query(Progress).filter_by(user_id=user.id).one()
        assert (stored.attempts_used, stored.submissions_count) == (3, 4)
        assert db.session.query(Submission).filter_by(user_id=user.id).count() == 4


def test_result_lists_the_same_submissions_and_state_as_a_fresh_read(app) -> None:
    """``SubmitResult.submissions`` (what the page shows after a POST) equals the variant's
    submissions read afresh, and the state computed from them equals ``variant_state``."""
    secret = app.config["QUIZAPP_SEED_SECRET"]
    with app.app_context():
        services.create_user(db.session, "ben", "correct horse")
        user = services.find_user(db.session, "ben")
        exercise = db.session.get(Exercise, TWO)
        variant = services.get_or_create_variant(db.session, user, exercise, secret)
        bank = services.stored_variant(variant)
        x, y = np.asarray(bank.expected, dtype=float).ravel()
        results = [
            services.submit(db.session, user, TWO, answer, seed_secret=secret)
            for answer in (f"{x + 1:g} {y}", "not a number", f"{x + 1:g} {y}", f"{x} {y}")
        ]
        last = results[-1]
        ids = [s.id for s in last.submissions]
        db.session.expire_all()
        fresh = services.variant_submissions(db.session, db.session.get(type(variant), variant.id))
        assert ids == [s.id for s in fresh]
        state = services.variant_state(db.session, fresh[0].variant)
        assert (state.attempts_used, state.solved, state.best_score) == (2, True, 1.0)
        assert last.solved and last.attempts_left == state.attempts_left == 1
        assert results[2].duplicate and not results[2].used_attempt
        assert results[1].verdict["status"] == "invalid" and not results[1].used_attempt


def test_submission_rows_equal_the_orm_rows(app) -> None:
    """``SubmissionRow`` (the Core read the page and the submit use) has one field per column of
    ``submissions`` and, for graded, invalid and duplicate submissions, the same values as the
    ORM objects (JSON columns decoded, booleans as bool, times as aware datetimes)."""
    from dataclasses import asdict, fields

    secret = app.config["QUIZAPP_SEED_SECRET"]
    columns = [c.name for c in Submission.__table__.columns]
    assert [f.name for f in fields(services.SubmissionRow)] == columns
    with app.app_context():
        services.create_user(db.session, "cleo", "correct horse")
        user = services.find_user(db.session, "cleo")
        first, second = _wrong(app, "cleo")
        for answer in (first, "not a number", first, [[v] for v in second.split()]):
            services.submit(db.session, user, TWO, answer, seed_secret=secret)
        exercise = db.session.get(Exercise, TWO)
        variant = services.get_or_create_variant(db.session, user, exercise, secret)
        rows = services.submission_rows(db.session, variant.id)
        db.session.expire_all()
        orm = services.variant_submissions(db.session, variant)
        assert len(rows) == len(orm) == 4
        for row, obj in zip(rows, orm, strict=True):
            assert asdict(row) == {name: getattr(obj, name) for name in columns}
            assert type(row.used_attempt) is bool and row.created_at.tzinfo is not None
            assert (row.cells, row.message, row.mistake_messages) == (
                obj.cells,
                obj.message,
                obj.mistake_messages,
            )
        assert [r.status for r in rows][1] == "invalid" and rows[2].duplicate_of_id == rows[0].id


def test_submit_decides_on_the_exercise_read_under_the_lock(app) -> None:
    """The exercise's attempts and points are read again under the write lock: when a bank sync
    (another session) lowers the attempts after the student's page was loaded, the submit uses
    the new value (here: refused, no attempts left) although the session holds the old one."""
    from sqlalchemy import update

    secret = app.config["QUIZAPP_SEED_SECRET"]
    with app.app_context():
        services.create_user(db.session, "dora", "correct horse")
        user = services.find_user(db.session, "dora")
        exercise = services.get_exercise(db.session, TWO)
        variant = services.get_or_create_variant(db.session, user, exercise, secret)
        services.submit(db.session, user, TWO, "9 9", seed_secret=secret, variant=variant)
        assert exercise.attempts == 3
        with Session(db.engine) as other:
            other.execute(update(Exercise).where(Exercise.id == TWO).values(attempts=1, points=4))
            other.commit()
        with pytest.raises(services.Conflict, match="No attempts left: all 1 attempts"):
            services.submit(db.session, user, TWO, "8 8", seed_secret=secret, variant=variant)
        db.session.rollback()
        with Session(db.engine) as other:
            other.execute(update(Exercise).where(Exercise.id == TWO).values(attempts=5))
            other.commit()
        result = services.submit(db.session, user, TWO, "8 8", seed_secret=secret, variant=variant)
        assert (result.attempts, result.attempts_left) == (5, 3)
        assert result.points == 0.0 and exercise.points == 4


def test_core_insert_stores_what_the_orm_stored(app) -> None:
    """The submit writes its submission with one Core INSERT: every stored column (as SQLite
    holds it: JSON text, JSON ``null`` vs SQL NULL, booleans, times) equals what the ORM writes
    for a ``Submission`` with the same values, for a graded, an invalid (no parsed value) and a
    duplicate answer; ``SubmitResult.submission`` equals the row read back."""
    from dataclasses import asdict

    from sqlalchemy import text

    secret = app.config["QUIZAPP_SEED_SECRET"]
    columns = [c.name for c in Submission.__table__.columns if c.name != "id"]
    raw_select = text(f"SELECT {', '.join(columns)} FROM submissions WHERE id = :id")
    with app.app_context():
        services.create_user(db.session, "eve", "correct horse")
        user = services.find_user(db.session, "eve")
        first, second = _wrong(app, "eve")
        results = [
            services.submit(db.session, user, TWO, answer, seed_secret=secret)
            for answer in (first, "not a number", first, [[v] for v in second.split()])
        ]
        assert [r.submission.status for r in results][1] == "invalid"
        assert results[1].submission.parsed is None and results[2].duplicate
        for result in results:
            stored = db.session.execute(raw_select, {"id": result.submission.id}).one()
            values = {k: v for k, v in asdict(result.submission).items() if k != "id"}
            with db.session.begin_nested() as nested:
                orm = Submission(**values)
                db.session.add(orm)
                db.session.flush()
                by_orm = db.session.execute(raw_select, {"id": orm.id}).one()
                nested.rollback()
            assert tuple(stored) == tuple(by_orm)
            (read,) = [
                s
                for s in services.submission_rows(db.session, result.submission.variant_id)
                if s.id == result.submission.id
            ]
            assert read == result.submission
