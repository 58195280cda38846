"""Services without Flask requests: bank sync (versions, archiving, broken files), variants,
submit in one transaction, concurrency (attempts cannot be raced), BEGIN IMMEDIATE on SQLite."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import event
from test_web_support import EXERCISES, make_app, set_listed

from quizapp import services
from quizapp.models import Exercise, ExerciseVersion, Progress, Quiz, Submission, Variant, db

TWO = "01-linear-systems/06-two-by-two"
DECK = "01-linear-systems/05-deck-system"


@pytest.fixture()
def bank_dir(tmp_path: Path) -> Path:
    """A private copy of the bank that tests may edit."""
    target = tmp_path / "exercises"
    shutil.copytree(EXERCISES, target)
    return target


@pytest.fixture()
def app(tmp_path: Path, bank_dir: Path):
    """The app on the test's database: SQLite, and PostgreSQL when ``QUIZAPP_TEST_POSTGRES_URL``
    is set (tests/conftest.py runs each test on both; the schema is dropped afterwards)."""
    app = make_app(tmp_path, QUIZAPP_EXERCISES=bank_dir)
    with app.app_context():
        report = services.sync_folder(db.session, bank_dir)
        assert report.errors == []
        services.create_user(db.session, "ana", "correct horse")
    return app


def _user():
    return services.find_user(db.session, "ana")


def _secret(app) -> str:
    return app.config["QUIZAPP_SEED_SECRET"]


def test_sync_is_idempotent(app, bank_dir) -> None:
    with app.app_context():
        n = db.session.query(Exercise).count()
        report = services.sync_folder(db.session, bank_dir)
        assert report.added == [] and report.updated == [] and len(report.unchanged) == n
        assert db.session.query(ExerciseVersion).count() == n


def test_edited_exercise_gets_a_new_version_and_old_submissions_keep_theirs(app, bank_dir):
    from quizapp.bank import derive_seed

    path = bank_dir / "01-linear-systems" / "06-two-by-two.yaml"
    with app.app_context():
        user = _user()
        ex = db.session.get(Exercise, TWO)
        variant = services.get_or_create_variant(db.session, user, ex, _secret(app))
        assert variant.seed == derive_seed(_secret(app), user.id, TWO, 1)
        services.submit(db.session, user, TWO, "0 0", seed_secret=_secret(app))
        old_version = variant.version_id
        old_prompt = services.stored_variant(variant).prompt
    path.write_text(
        path.read_text()
        .replace("points: 10", "points: 20")
        .replace("Solve the system", "Solve this system")
    )
    with app.app_context():
        report = services.sync_folder(db.session, bank_dir)
        assert report.updated == [TWO]
        ex = db.session.get(Exercise, TWO)
        assert ex.points == 20 and len(ex.versions) == 2
        assert ex.current_version.id != old_version
        variant = db.session.query(Variant).filter_by(exercise_id=TWO).one()
        assert variant.version_id == old_version  # it has a submission: stays on its version
        assert services.stored_variant(variant).prompt == old_prompt
        sub = db.session.query(Submission).one()
        assert sub.version_id == old_version
        # A student who had not started gets the new version.
        services.create_user(db.session, "ben", "correct horse")
        ben = services.find_user(db.session, "ben")
        v2 = services.get_or_create_variant(db.session, ben, ex, _secret(app))
        assert v2.version_id == ex.current_version.id
        assert "Solve this system" in services.stored_variant(v2).prompt


def test_points_change_recomputes_best_points(app, bank_dir) -> None:
    path = bank_dir / "01-linear-systems" / "05-deck-system.yaml"
    with app.app_context():
        x = np.linalg.solve([[5, 1], [3, 2]], [15, 16])
        res = services.submit(db.session, _user(), DECK, f"{x[0]} {x[1]}", seed_secret=_secret(app))
        assert res.verdict["status"] == "correct" and res.best_points == 10
    path.write_text(path.read_text().replace("points: 10", "points: 4"))
    with app.app_context():
        services.sync_folder(db.session, bank_dir)
        p = db.session.query(Progress).filter_by(exercise_id=DECK).one()
        assert p.best_score == 1.0 and p.best_points == 4.0


def test_removed_exercise_is_archived_not_deleted_and_comes_back(app, bank_dir) -> None:
    path = bank_dir / "01-linear-systems" / "06-two-by-two.yaml"
    saved = path.read_text()
    with app.app_context():
        services.submit(db.session, _user(), TWO, "0 0", seed_secret=_secret(app))
    path.unlink()
    set_listed(path.parent, path.stem, False)
    with app.app_context():
        report = services.sync_folder(db.session, bank_dir)
        assert report.archived == [TWO]
        ex = db.session.get(Exercise, TWO)
        assert ex.archived and db.session.query(Submission).filter_by(exercise_id=TWO).count() == 1
        with pytest.raises(services.NotFound):
            services.get_exercise(db.session, TWO)
        summaries = services.quiz_summaries(db.session, _user())
        assert TWO not in [e.exercise.id for q in summaries for e in q.exercises]
    path.write_text(saved)
    set_listed(path.parent, path.stem, True)
    with app.app_context():
        report = services.sync_folder(db.session, bank_dir)
        assert TWO in report.restored
        assert not db.session.get(Exercise, TWO).archived


def test_broken_file_keeps_the_previous_version_live(app, bank_dir) -> None:
    path = bank_dir / "01-linear-systems" / "06-two-by-two.yaml"
    with app.app_context():
        before = db.session.get(Exercise, TWO).current_hash
    path.write_text(path.read_text().replace("kind: linear_system", "kind: no_such_kind"))
    with app.app_context():
        report = services.sync_folder(db.session, bank_dir)
        assert len(report.errors) == 1 and "06-two-by-two.yaml" in report.errors[0]
        assert report.kept_previous == [TWO]
        ex = db.session.get(Exercise, TWO)
        assert not ex.archived and ex.current_hash == before
        assert ex.sync_error == report.errors[0]
        assert len(report.unchanged) == db.session.query(Exercise).count() - 1
    assert "error" in report.summary() or report.summary().endswith(")")


def test_missing_folder_archives_nothing(app, tmp_path) -> None:
    with app.app_context():
        report = services.sync_folder(db.session, tmp_path / "nowhere")
        assert report.errors and "does not exist" in report.errors[0]
        assert db.session.query(Exercise).filter_by(archived=True).count() == 0
        assert db.session.query(Quiz).filter_by(archived=True).count() == 0


def test_submit_stores_submission_and_progress_together(app) -> None:
    with app.app_context():
        res = services.submit(db.session, _user(), DECK, "1 1", seed_secret=_secret(app))
        assert res.used_attempt and res.attempts_left == 2 and not res.finished
        p = db.session.query(Progress).one()
        assert p.attempts_used == 1 and p.submissions_count == 1 and p.best_score == 0.0
        assert p.last_activity == res.submission.created_at
        assert p.best_reached_at == res.submission.created_at


def test_write_transactions_serialize_the_progress_row(app) -> None:
    """SQLite: the write transaction starts with BEGIN IMMEDIATE.  PostgreSQL: the progress row
    is read with SELECT ... FOR UPDATE (OF progress, when joined with the variant and exercise)
    before the submission is stored."""
    statements: list[str] = []
    with app.app_context():
        engine = db.engine

        def spy(conn, cursor, statement, *args):
            statements.append(statement)

        event.listen(engine, "before_cursor_execute", spy)
        try:
            services.submit(db.session, _user(), DECK, "1 1", seed_secret=_secret(app))
        finally:
            event.remove(engine, "before_cursor_execute", spy)
    insert = next(i for i, s in enumerate(statements) if s.startswith("INSERT INTO submissions"))
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        begin = max(i for i, s in enumerate(statements[:insert]) if s.startswith("BEGIN"))
        assert statements[begin] == "BEGIN IMMEDIATE"
    else:
        begin = max(
            i
            for i, s in enumerate(statements[:insert])
            if (" progress" in s and s.rstrip().endswith("FOR UPDATE OF progress"))
            or ("FROM progress" in s and s.rstrip().endswith("FOR UPDATE"))
        )
    assert any(
        s.startswith("UPDATE progress") or s.startswith("INSERT INTO progress")
        for s in statements[begin:]
    )


def test_concurrent_submits_cannot_exceed_the_attempts(app) -> None:
    """Twelve threads answer the same variant at once (different wrong answers): exactly 3
    graded attempts, the rest refused with Conflict, no other error."""
    with app.app_context():
        ex = db.session.get(Exercise, DECK)
        services.get_or_create_variant(db.session, _user(), ex, _secret(app))
    results: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(12)

    def worker(i: int) -> None:
        with app.app_context():
            try:
                barrier.wait()
                services.submit(
                    db.session, _user(), DECK, f"{i + 10} {i}", seed_secret=_secret(app)
                )
                results.append("graded")
            except services.Conflict:
                results.append("refused")
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)
            finally:
                db.session.remove()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert sorted(results) == ["graded"] * 3 + ["refused"] * 9
    with app.app_context():
        assert db.session.query(Submission).filter_by(used_attempt=True).count() == 3
        p = db.session.query(Progress).one()
        assert p.attempts_used == 3 and p.submissions_count == 3
        numbers = [s.attempt_number for s in db.session.query(Submission).order_by(Submission.id)]
        assert numbers == [1, 2, 3]


def test_same_answer_twenty_times_at_once_counts_once(app) -> None:
    with app.app_context():
        ex = db.session.get(Exercise, DECK)
        services.get_or_create_variant(db.session, _user(), ex, _secret(app))
    errors: list[BaseException] = []
    barrier = threading.Barrier(20)

    def worker() -> None:
        with app.app_context():
            try:
                barrier.wait()
                services.submit(db.session, _user(), DECK, "1 1", seed_secret=_secret(app))
            except BaseException as exc:  # pragma: no cover
                errors.append(exc)
            finally:
                db.session.remove()

    threads = [threading.Thread(target=worker) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with app.app_context():
        assert db.session.query(Submission).filter_by(used_attempt=True).count() == 1
        assert db.session.query(Submission).count() == 20
        assert db.session.query(Progress).one().attempts_used == 1


def test_variant_seed_is_derived_and_stable(app) -> None:
    from quizapp.bank import derive_seed

    with app.app_context():
        user = _user()
        ex = db.session.get(Exercise, TWO)
        a = services.get_or_create_variant(db.session, user, ex, _secret(app))
        b = services.get_or_create_variant(db.session, user, ex, _secret(app))
        assert a.id == b.id and a.seed == derive_seed(_secret(app), user.id, TWO, 1)
        assert 0 <= a.seed < 2**63


def test_expected_is_graded_correct_for_many_students(app) -> None:
    """Every student's own variant of the 2x2 system: the NumPy solution is graded correct."""
    with app.app_context():
        for i in range(5):
            services.create_user(db.session, f"s{i}", "correct horse")
            user = services.find_user(db.session, f"s{i}")
            ex = db.session.get(Exercise, TWO)
            v = services.stored_variant(
                services.get_or_create_variant(db.session, user, ex, _secret(app))
            )
            x = np.linalg.solve(np.asarray(v.values["A"], float), np.asarray(v.values["y"], float))
            res = services.submit(
                db.session, user, TWO, f"{x[0]:.6f}, {x[1]:.6f}", seed_secret=_secret(app)
            )
            assert res.verdict["status"] == "correct", res.verdict


def test_recompute_progress_equals_the_incremental_row(app) -> None:
    """The progress row submit() maintains equals the one rebuilt from the submissions."""
    fields = (
        "best_score",
        "best_points",
        "attempts_used",
        "solved_at",
        "best_reached_at",
        "submissions_count",
        "last_activity",
        "current_variant",
    )
    with app.app_context():
        user = _user()
        ex = db.session.get(Exercise, TWO)
        v = services.stored_variant(
            services.get_or_create_variant(db.session, user, ex, _secret(app))
        )
        x = np.linalg.solve(np.asarray(v.values["A"], float), np.asarray(v.values["y"], float))
        # the exercise's solution is integer; typed as a student would ("3", not 2.9999999999999996)
        x = np.round(x).astype(int)
        wrong, partial = f"{x[0] + 1} {x[1] + 1}", f"{x[0]} {x[1] + 1}"
        for answer in ("abc", wrong, wrong, partial, f"{x[0]} {x[1]}"):
            services.submit(db.session, user, TWO, answer, seed_secret=_secret(app))
        services.new_practice_variant(db.session, user, ex, _secret(app))
        services.submit(db.session, user, TWO, "1 1", seed_secret=_secret(app))
        p = db.session.query(Progress).filter_by(exercise_id=TWO).one()
        before = {f: getattr(p, f) for f in fields}
        assert before["attempts_used"] == 3 and before["submissions_count"] == 6
        assert before["best_score"] == 1.0 and before["current_variant"] == 2
        for f in fields:
            setattr(p, f, None if f.endswith("_at") or f == "last_activity" else 0)
        db.session.commit()
        services.recompute_progress(db.session, user.id, TWO)
        db.session.commit()
        p = db.session.query(Progress).filter_by(exercise_id=TWO).one()
        assert {f: getattr(p, f) for f in fields} == before


def test_submit_grades_against_the_version_shown_even_after_a_sync(app, bank_dir) -> None:
    path = bank_dir / "01-linear-systems" / "06-two-by-two.yaml"
    with app.app_context():
        ex = db.session.get(Exercise, TWO)
        shown = services.get_or_create_variant(db.session, _user(), ex, _secret(app))
        old_version = shown.version_id
    path.write_text(path.read_text().replace("Solve the system", "Solve this system"))
    with app.app_context():
        services.sync_folder(db.session, bank_dir)
        res = services.submit(db.session, _user(), TWO, "0 0", seed_secret=_secret(app))
        assert res.submission.version_id == old_version
        # A page view now keeps it there too: it has a submission.
        ex = db.session.get(Exercise, TWO)
        again = services.get_or_create_variant(db.session, _user(), ex, _secret(app))
        assert again.version_id == old_version != ex.current_version.id


def test_new_quiz_with_a_broken_quiz_yaml_is_reported_not_a_crash(app, bank_dir) -> None:
    new = bank_dir / "99-new"
    new.mkdir()
    shutil.copy(bank_dir / "01-linear-systems" / "06-two-by-two.yaml", new / "one.yaml")
    (new / "quiz.yaml").write_text("title: [broken\n")
    with app.app_context():
        report = services.sync_folder(db.session, bank_dir)
        assert any("quiz.yaml" in e for e in report.errors)
        assert db.session.get(Exercise, "99-new/one") is None
        assert db.session.get(Quiz, "99-new") is None
        assert db.session.query(Exercise).filter_by(archived=True).count() == 0
