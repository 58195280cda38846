"""Bank sync writes in bulk (issue 7): one flush and one executemany per table instead of one
flush per exercise, yet every row and report is what the row-by-row sync wrote.

The expected values are computed here from the YAML files themselves (sha256 of the text, the
fields parsed with PyYAML), not from the loader's objects.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml
from sqlalchemy import event, select
from test_web_support import EXERCISES, make_app, set_listed

from quizapp import services
from quizapp.models import Exercise, ExerciseVersion, Progress, db


def _statements(engine) -> list[str]:  # type: ignore[no-untyped-def]
    seen: list[str] = []
    event.listen(
        engine,
        "before_cursor_execute",
        lambda conn, cursor, statement, *rest: seen.append(statement.split()[0].upper()),
    )
    return seen


def _exercise_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*.yaml") if p.name != "quiz.yaml")


@pytest.fixture()
def bank_dir(tmp_path: Path) -> Path:
    target = tmp_path / "exercises"
    shutil.copytree(EXERCISES, target)
    return target


def test_sync_leaves_the_scoreboard_totals_current(tmp_path: Path, bank_dir: Path) -> None:
    """The scoreboard totals are rebuilt at sync when the live exercises change, so the next
    scoreboard view has nothing to rebuild."""
    from quizapp.services import totals

    app = make_app(tmp_path, QUIZAPP_EXERCISES=bank_dir)
    with app.app_context():
        services.sync_folder(db.session, bank_dir)
        assert totals.ensure_current(db.session) is False
        victim = _exercise_files(bank_dir)[0]
        victim.unlink()  # archived by the next sync: the fingerprint changes
        set_listed(victim.parent, victim.stem, False)
        report = services.sync_folder(db.session, bank_dir)
        assert report.archived == [f"{victim.parent.name}/{victim.stem}"]
        assert totals.ensure_current(db.session) is False


def test_first_sync_rows_match_the_files_in_a_constant_number_of_statements(
    tmp_path: Path, bank_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizapp.services import totals

    app = make_app(tmp_path, QUIZAPP_EXERCISES=bank_dir)
    files = _exercise_files(bank_dir)
    # Counted here: the sync's own statements (the totals rebuild after it is tested above).
    monkeypatch.setattr(totals, "ensure_current", lambda session, live=None: False)
    with app.app_context():
        seen = _statements(db.engine)
        report = services.sync_folder(db.session, bank_dir)
        assert report.errors == []
        ids = [f"{p.parent.name}/{p.stem}" for p in files]
        assert sorted(report.added) == sorted(ids)
        # No per-exercise statement: a few SELECTs, one INSERT per table, BEGIN (the versions
        # are read before the seeds are sampled, and again under the write lock).
        assert len(seen) <= 10, " ".join(seen)
        assert seen.count("INSERT") == 3

        rows = {e.id: e for e in db.session.scalars(select(Exercise))}
        versions = list(db.session.scalars(select(ExerciseVersion).order_by(ExerciseVersion.id)))
        assert len(rows) == len(files) and len(versions) == len(files)
        by_exercise = {v.exercise_id: v for v in versions}
        for path, ex_id in zip(files, ids, strict=True):
            text = path.read_text(encoding="utf-8")
            data = yaml.safe_load(text)
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            row = rows[ex_id]
            assert row.quiz_id == path.parent.name
            assert row.title == data["title"]
            assert row.kind == data["kind"]
            assert row.points == float(data.get("points", 10))
            assert row.attempts == int(data.get("attempts", 3))
            assert row.practice is bool(data.get("practice", True))
            assert row.concepts == [str(c) for c in data.get("concepts", [])]
            assert row.current_hash == digest and not row.archived and row.sync_error is None
            assert row.created_at == row.updated_at
            version = by_exercise[ex_id]
            assert version.content_hash == digest and version.source == text
            assert (version.title, version.points, version.attempts) == (
                row.title,
                row.points,
                row.attempts,
            )
            assert row.current_version.id == version.id
        # Positions: file-name order inside each quiz (no quiz here fixes an `exercises:` list).
        for quiz in {p.parent.name for p in files}:
            stems = [p.stem for p in files if p.parent.name == quiz]
            listed = yaml.safe_load((bank_dir / quiz / "quiz.yaml").read_text()).get("exercises")
            order = [s.removesuffix(".yaml") for s in listed] if listed else stems
            assert [rows[f"{quiz}/{s}"].position for s in order] == list(range(len(order)))
        # Version ids ascend in bank order, as the row-by-row sync numbered them.
        assert [v.exercise_id for v in versions] == ids


def test_mixed_sync_adds_updates_archives_and_repoints_in_bulk(
    tmp_path: Path, bank_dir: Path
) -> None:
    app = make_app(tmp_path, QUIZAPP_EXERCISES=bank_dir)
    deck = "01-linear-systems/05-deck-system"
    two = "01-linear-systems/06-two-by-two"
    with app.app_context():
        assert services.sync_folder(db.session, bank_dir).errors == []
        services.create_user(db.session, "ana", "correct horse")
        user = services.find_user(db.session, "ana")
        secret = app.config["QUIZAPP_SEED_SECRET"]
        services.submit(db.session, user, deck, "3 3.5", seed_secret=secret)
        progress = db.session.query(Progress).filter_by(exercise_id=deck).one()
        progress.best_score = 0.5
        progress.best_points = 5.0
        db.session.commit()
        n_before = db.session.query(Exercise).count()
    deck_path = bank_dir / "01-linear-systems" / "05-deck-system.yaml"
    deck_path.write_text(deck_path.read_text().replace("points: 10", "points: 4"))
    (bank_dir / "01-linear-systems" / "06-two-by-two.yaml").rename(
        bank_dir / "01-linear-systems" / "99-copy.yaml"
    )
    set_listed(bank_dir / "01-linear-systems", "06-two-by-two", False)
    set_listed(bank_dir / "01-linear-systems", "99-copy", True)
    with app.app_context():
        report = services.sync_folder(db.session, bank_dir)
        assert report.errors == []
        assert report.updated == [deck]
        assert report.added == ["01-linear-systems/99-copy"]
        assert report.archived == [two]
        assert len(report.unchanged) == n_before - 2
        p = db.session.query(Progress).filter_by(exercise_id=deck).one()
        assert p.best_points == pytest.approx(0.5 * 4)
        row = db.session.get(Exercise, deck)
        assert row.points == 4.0 and len(row.versions) == 2
        assert row.versions[-1].points == 4.0 and row.current_version.id == row.versions[-1].id
        assert db.session.get(Exercise, two).archived
        copy = db.session.get(Exercise, "01-linear-systems/99-copy")
        assert copy is not None and not copy.archived and len(copy.versions) == 1
        assert copy.current_hash == db.session.get(Exercise, two).current_hash
        # The moved file comes back: restored, and no new version for the same text.
        (bank_dir / "01-linear-systems" / "99-copy.yaml").rename(
            bank_dir / "01-linear-systems" / "06-two-by-two.yaml"
        )
        set_listed(bank_dir / "01-linear-systems", "99-copy", False)
        set_listed(bank_dir / "01-linear-systems", "06-two-by-two", True)
        report = services.sync_folder(db.session, bank_dir)
        assert report.restored == [two] and report.added == [] and report.updated == []
        assert report.archived == ["01-linear-systems/99-copy"]
        assert len(db.session.get(Exercise, two).versions) == 1
