"""One rule for a student's points: the student page (``services.quiz_summaries``), the JSON API
(``/api/v1/progress``), the exercise page's quiz position, the scoreboard (``score_totals``),
the gradebook and the score sent to the LMS agree, on random classes with random answers,
excusals and overrides.  The expected totals are computed here from the submissions' stored
points (plain Python), not read from any of them."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select
from test_instructor_support import (
    SEED_SECRET,
    add_user,
    bank_app,
    solution_of,
    submit,
    text_of,
)

from quizapp import instructor as inst
from quizapp import services
from quizapp.lti.scores import lms_score, resource_id
from quizapp.models import Exercise, Progress, Submission, User, Variant, db
from quizapp.services.overrides import set_override

QUIZ = "01-linear-systems"
EXERCISES = [
    "01-linear-systems/05-deck-system",
    "01-linear-systems/06-two-by-two",
    "01-linear-systems/01-one-unknown",
]


@pytest.fixture()
def app(tmp_path: Path):
    return bank_app(tmp_path)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_student_page_api_scoreboard_gradebook_and_lms_agree(app, seed: int) -> None:
    rng = random.Random(seed)
    names = [f"s{i}" for i in range(6)]
    for name in names:
        add_user(app, name)
    with app.app_context():
        ids = {u.username: u.id for u in db.session.scalars(select(User))}
        points = {e.id: e.points for e in db.session.scalars(select(Exercise))}
        in_quiz = [
            e.id for e in db.session.scalars(select(Exercise).where(Exercise.quiz_id == QUIZ))
        ]
    excused: set[tuple[str, str]] = set()
    overrides: dict[tuple[str, str], float] = {}
    for name in names:
        for ex_id in EXERCISES:
            if ex_id not in in_quiz:
                continue
            roll = rng.random()
            if roll < 0.2:
                continue  # never tried
            try:
                right = solution_of(app, name, ex_id)
            except Exception:  # noqa: BLE001 - an exercise solution_of cannot solve: answer wrong
                right = None
            for _ in range(rng.randint(1, 3)):
                good = right is not None and rng.random() < 0.5
                answer = text_of(right) if good else text_of(np.array([rng.randint(50, 99)] * 2))
                try:
                    result = submit(app, name, ex_id, answer)
                except services.Conflict:
                    break
                if result.solved:
                    break
            if rng.random() < 0.25:
                excused.add((name, ex_id))
            elif rng.random() < 0.2:
                overrides[(name, ex_id)] = round(rng.uniform(0, points[ex_id]), 2)
    with app.app_context():
        prof = services.find_user(db.session, "prof") or services.create_user(
            db.session, "prof", "correct horse", role="instructor"
        )
        for name, ex_id in sorted(excused):
            inst.excuse(db.session, ids[name], ex_id, reason="ill", by=prof)
        for (name, ex_id), value in sorted(overrides.items()):
            set_override(db.session, ex_id, name, value, "regraded by hand", by=prof)

    # Expected, from the stored submissions: best credited points of variant 1 per exercise,
    # the override instead where one is set, excused exercises out of both sums.
    with app.app_context():
        best: dict[tuple[str, str], float] = {}
        for sub, username, number in db.session.execute(
            select(Submission, User.username, Variant.variant_number)
            .join(User, User.id == Submission.user_id)
            .join(Variant, Variant.id == Submission.variant_id)
        ):
            if number == 1 and sub.used_attempt:
                key = (username, sub.exercise_id)
                best[key] = max(best.get(key, 0.0), float(sub.points))
    expected: dict[str, tuple[float, float]] = {}
    for name in names:
        earned = available = 0.0
        for ex_id in in_quiz:
            if (name, ex_id) in excused:
                continue
            available += points[ex_id]
            earned += overrides.get((name, ex_id), best.get((name, ex_id), 0.0))
        expected[name] = (round(earned, 6), round(available, 6))

    with app.app_context():
        board = {
            r.username: r.points
            for r in inst.scoreboard(db.session, quiz_id=QUIZ, per_page=100).rows
        }
        book = {r.username: r.quiz_totals[QUIZ] for r in inst.gradebook(db.session).rows}
        for name in names:
            user = services.find_user(db.session, name)
            (summary,) = services.quiz_summaries(db.session, user, [QUIZ])
            page = (summary.points_earned, summary.points_available)
            position = services.quiz_position(
                db.session, user, db.session.get(Exercise, EXERCISES[0])
            )
            lms = lms_score(db.session, user.id, resource_id(quiz_id=QUIZ))
            assert page == pytest.approx(expected[name]), name
            assert (position.points_earned, position.points_available) == pytest.approx(page)
            assert (book[name].earned, book[name].available) == pytest.approx(page), name
            assert board[name] == pytest.approx(page[0]), name
            if lms is not None:
                assert (lms.given, lms.maximum) == pytest.approx(page), name
    # The API says the same as the page (course-wide sums over the quizzes it lists).
    for name in names:
        with app.app_context():
            user = services.find_user(db.session, name)
            token = services.create_api_token(db.session, user)
            summaries = services.quiz_summaries(db.session, user)
        body = (
            app.test_client()
            .get("/api/v1/progress", headers={"Authorization": f"Bearer {token}"})
            .json
        )
        assert body["points_earned"] == pytest.approx(sum(s.points_earned for s in summaries))
        assert body["points_available"] == pytest.approx(sum(s.points_available for s in summaries))
        listed = {e["id"]: e for e in body["exercises"]}
        for ex_id in in_quiz:
            assert listed[ex_id]["excused"] == ((name, ex_id) in excused)
    assert SEED_SECRET


def test_course_totals_are_rounded_once_not_a_sum_of_float_totals(app) -> None:
    """Per-quiz totals of 0.1 and 0.2 points add up to 0.30000000000000004 in floats; the
    progress page and ``GET /api/v1/progress`` show the course total as stored points are
    (6 decimals): 0.3."""
    add_user(app, "ana")
    with app.app_context():
        by_quiz: dict[str, str] = {}
        for ex in db.session.scalars(select(Exercise).order_by(Exercise.id)):
            by_quiz.setdefault(ex.quiz_id, ex.id)
        first, second = sorted(by_quiz.values())[:2]
        prof = services.create_user(db.session, "prof", "correct horse", role="instructor")
        set_override(db.session, first, "ana", 0.1, "by hand", by=prof)
        set_override(db.session, second, "ana", 0.2, "by hand", by=prof)
        user = services.find_user(db.session, "ana")
        summaries = services.quiz_summaries(db.session, user)
        assert sum(s.points_earned for s in summaries) == 0.1 + 0.2 != 0.3  # the noise
        available = round(sum(float(e.points) for e in db.session.scalars(select(Exercise))), 6)
        assert services.course_points(summaries) == (0.3, available)
        token = services.create_api_token(db.session, user)
    body = app.test_client().get("/api/v1/progress", headers={"Authorization": f"Bearer {token}"})
    assert body.json["points_earned"] == 0.3
    assert body.json["points_available"] == available


def test_the_api_shows_scores_without_float_noise(app) -> None:
    """A score stored as ``0.1 + 0.2`` (a sum of part shares carries such noise) is shown as
    0.3 by ``GET .../submissions`` (top level and per part) and ``GET /api/v1/progress``
    (``best_score``); the stored values are not changed."""
    add_user(app, "ana")
    ex_id = EXERCISES[1]
    submit(app, "ana", ex_id, "0 0")
    noisy = 0.1 + 0.2
    assert noisy != 0.3
    with app.app_context():
        sub = db.session.scalars(select(Submission)).one()
        sub.score = noisy
        sub.verdict = {**sub.verdict, "score": noisy, "parts": {"a": {"score": noisy}}}
        progress = db.session.scalars(select(Progress)).one()
        progress.best_score = noisy
        db.session.commit()
        token = services.create_api_token(db.session, services.find_user(db.session, "ana"))
    client = app.test_client()
    auth = {"Authorization": f"Bearer {token}"}
    listed = client.get(f"/api/v1/exercises/{ex_id}/submissions", headers=auth).json
    (shown,) = listed["submissions"]
    assert shown["score"] == 0.3 and shown["parts"]["a"]["score"] == 0.3
    progress_json = client.get("/api/v1/progress", headers=auth).json
    (mine,) = [e for e in progress_json["exercises"] if e["id"] == ex_id]
    assert mine["best_score"] == 0.3
    with app.app_context():
        assert db.session.scalars(select(Submission.score)).one() == noisy  # stored as it was
