"""The exercise page's read (``services.read_exercise_page``): the exercise, its quiz and the
student's current variant as plain rows, the same values as the ORM objects hold, and a page
GET that builds no ORM object of them."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import event, select, update
from test_web_support import post_text, student, synced_app, url_of

from quizapp import services
from quizapp.models import Exercise, Progress, Quiz, Variant, db

TWO = "01-linear-systems/06-two-by-two"
PARTS = "01-linear-systems/06a-solve-and-check"
#: What an unfinished variant's page is read without (its answer key's page).
KEY_KEYS = ("solution", "expected_text", "expected_html")


@pytest.fixture()
def app(tmp_path: Path):
    app = synced_app(tmp_path)
    with app.app_context():
        services.create_user(db.session, "ana", "correct horse")
    return app


def _ana():
    return services.find_user(db.session, "ana")


def test_rows_hold_the_values_of_the_orm_objects(app) -> None:
    with app.app_context():
        user = _ana()
        exercise, variant = services.read_exercise_page(db.session, TWO, user)
        assert variant is None  # never opened: nothing is drawn by a read
        orm = db.session.get(Exercise, TWO)
        assert exercise == services.ExerciseRow.of(orm)
        assert (exercise.id, exercise.quiz_id, exercise.attempts) == (
            TWO,
            orm.quiz_id,
            orm.attempts,
        )
        assert exercise.quiz.title == db.session.get(Quiz, orm.quiz_id).title
        created = services.get_or_create_variant(
            db.session, user, orm, app.config["QUIZAPP_SEED_SECRET"]
        )
        db.session.expire_all()
        _, variant = services.read_exercise_page(db.session, TWO, user)
        assert variant is not None
        stored = db.session.get(Variant, created.id)
        # Not finished: its page is read without the worked solution and expected answer
        # (never shown before the variant is finished), everything else as stored.
        shown = {k: v for k, v in stored.page.items() if k not in KEY_KEYS}
        assert set(stored.page) - set(shown) == set(KEY_KEYS)
        assert variant == replace(services.VariantRow.of(stored), page=shown)
        assert variant.record == stored.record and not variant.keyed
        assert services.with_key_page(db.session, variant) == services.VariantRow.of(stored)
        assert not variant.is_practice
        # What the page decodes of it is what the ORM object gives.
        assert services.stored_answer_form(variant) == services.stored_answer_form(stored)


def test_the_current_variant_is_the_one_the_progress_row_names(app) -> None:
    with app.app_context():
        user = _ana()
        orm = db.session.get(Exercise, TWO)
        services.get_or_create_variant(db.session, user, orm, app.config["QUIZAPP_SEED_SECRET"])
        assert services.read_exercise_page(db.session, TWO, user)[1] is not None
        if services.get_progress(db.session, user, orm) is None:
            services.create_progress(db.session, user.id, TWO)
        db.session.execute(
            update(Progress)
            .where(Progress.user_id == user.id, Progress.exercise_id == TWO)
            .values(current_variant=2)
        )
        db.session.commit()
        # Variant 2 does not exist (yet): the read says so rather than showing variant 1.
        assert services.read_exercise_page(db.session, TWO, user)[1] is None


@pytest.mark.parametrize("what", ["exercise", "quiz"])
def test_archived_exercises_and_quizzes_are_not_found(app, what: str) -> None:
    with app.app_context():
        quiz_id = TWO.split("/")[0]
        if what == "exercise":
            db.session.execute(update(Exercise).where(Exercise.id == TWO).values(archived=True))
        else:
            db.session.execute(update(Quiz).where(Quiz.id == quiz_id).values(archived=True))
        db.session.commit()
        with pytest.raises(services.NotFound):
            services.read_exercise_page(db.session, TWO, _ana())


@pytest.mark.parametrize("bad", ["01-linear-systems/nope", "no-slash", "../x/y", "A/B", ""])
def test_unknown_and_malformed_ids_are_not_found(app, bad: str) -> None:
    with app.app_context(), pytest.raises(services.NotFound):
        services.read_exercise_page(db.session, bad, _ana())


@pytest.mark.parametrize("exercise_id", [TWO, PARTS])
def test_a_page_get_builds_no_orm_exercise_quiz_or_variant(app, exercise_id: str) -> None:
    client = student(app, "bo")
    assert client.get("/").status_code == 200  # shows the welcome message once
    first = client.get(url_of(exercise_id))  # the first view draws and stores the variant
    assert first.status_code == 200
    loaded: list[str] = []

    def count(target, context) -> None:
        loaded.append(type(target).__name__)

    for model in (Exercise, Quiz, Variant):
        event.listen(model, "load", count)
    try:
        again = client.get(url_of(exercise_id))
    finally:
        for model in (Exercise, Quiz, Variant):
            event.remove(model, "load", count)
    assert again.status_code == 200
    assert loaded == []
    # The same page both times (but for the form's CSRF token, signed with a timestamp).
    assert _without_tokens(first.get_data(as_text=True)) == _without_tokens(
        again.get_data(as_text=True)
    )


def _without_tokens(page: str) -> str:
    return re.sub(r'name="csrf_token" value="[^"]*"', "", page)


def test_a_head_request_is_answered_as_a_get_and_grades_nothing(app) -> None:
    """HEAD (a link checker, a browser's prefetch) gets the GET's status and headers; it used
    to fall into the answer path and get a 400 "not valid" page."""
    from quizapp.models import Submission

    client = student(app, "cy")
    resp = client.head(url_of(TWO))
    assert resp.status_code == 200 and resp.get_data() == b""
    assert resp.headers["Content-Type"].startswith("text/html")
    with app.app_context():
        assert db.session.query(Submission).count() == 0
    page = client.get(url_of(TWO)).get_data(as_text=True)
    assert 'id="attempts-left">3<' in page


@pytest.mark.parametrize("exercise_id", [TWO, PARTS])
def test_a_finished_variant_is_read_with_its_whole_page(app, exercise_id: str) -> None:
    """Once ``finished_at`` is set the read gives the stored page whole; before, a multi-part
    page's parts are read without their own keys too (each part's key is shown only with the
    whole variant's), everything else of each part as stored."""
    with app.app_context():
        user = _ana()
        orm = db.session.get(Exercise, exercise_id)
        created = services.get_or_create_variant(
            db.session, user, orm, app.config["QUIZAPP_SEED_SECRET"]
        )
        vid, whole = created.id, dict(created.page)
        db.session.commit()
        _, open_row = services.read_exercise_page(db.session, exercise_id, user)
        trimmed_parts = [
            {k: v for k, v in part.items() if k not in KEY_KEYS} for part in whole.get("parts", [])
        ]
        assert open_row.page.get("parts", []) == trimmed_parts
        assert (exercise_id == PARTS) == bool(trimmed_parts)
        assert not open_row.keyed and all(k not in open_row.page for k in KEY_KEYS)
        db.session.execute(
            update(Variant).where(Variant.id == vid).values(finished_at=services.utcnow())
        )
        db.session.commit()
        _, done = services.read_exercise_page(db.session, exercise_id, user)
        assert done.keyed and done.page == whole
        assert services.with_key_page(db.session, done) is done  # nothing read again


def test_a_variant_finished_without_finished_at_still_shows_its_solution(app) -> None:
    """A variant out of attempts whose ``finished_at`` is not set (a database from before it
    was kept, or cleared by hand) shows the worked solution and answer all the same: the page
    reads the rest of the stored page when the submissions say it is finished."""
    client = student(app, "bo")
    client.get(url_of(TWO))
    for guess in ("1, 1", "2, 2", "3, 3"):
        assert post_text(client, TWO, guess).status_code == 200
    finished = client.get(url_of(TWO)).get_data(as_text=True)
    assert 'class="steps"' in finished  # the worked solution
    with app.app_context():
        db.session.execute(
            update(Variant).where(Variant.exercise_id == TWO).values(finished_at=None)
        )
        db.session.commit()
        _, row = services.read_exercise_page(db.session, TWO, services.find_user(db.session, "bo"))
        assert not row.keyed
    again = client.get(url_of(TWO)).get_data(as_text=True)
    assert _without_tokens(again) == _without_tokens(finished)


def test_every_bundled_exercise_shows_the_same_page_from_the_read_without_its_key(app) -> None:
    """The invariant: reading an unfinished variant's page without its worked solution and
    expected answer changes nothing a student sees.  For every bundled exercise the first view
    (the variant just drawn, its stored page whole) and the next (the page's read without its
    answer key) are the same page."""
    with app.app_context():
        ids = sorted(db.session.scalars(select(Exercise.id).where(Exercise.archived.is_(False))))
    assert len(ids) > 50
    client = student(app, "bo")
    client.get("/")
    for exercise_id in ids:
        first = client.get(url_of(exercise_id))
        again = client.get(url_of(exercise_id))
        assert first.status_code == again.status_code == 200, exercise_id
        assert _without_tokens(first.get_data(as_text=True)) == _without_tokens(
            again.get_data(as_text=True)
        ), exercise_id
    with app.app_context():
        user = services.find_user(db.session, "bo")
        for exercise_id in ids:
            _, row = services.read_exercise_page(db.session, exercise_id, user)
            assert row is not None and not row.keyed, exercise_id
