"""The score sent to the LMS (``quizapp.lti.scores.lms_score``) agrees with the scoreboard's
totals and the gradebook: after random graded submits and excusals, its ``given`` is the
student's ``score_totals`` points on the quiz and its ``maximum`` the gradebook's available
points; nothing is sent before a graded attempt."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select
from test_web_support import synced_app

from quizapp import instructor as inst
from quizapp import services
from quizapp.lti.scores import lms_score, parse_resource_id, resource_id
from quizapp.models import Exercise, ScoreTotal, db
from quizapp.services import totals

QUIZ = "01-linear-systems"
TWO = "01-linear-systems/06-two-by-two"


def test_resource_ids() -> None:
    assert resource_id(quiz_id="q") == "quiz:q"
    assert resource_id(exercise_id="q/e") == "exercise:q/e"
    assert parse_resource_id("exercise:q/e") == ("exercise", "q/e")
    with pytest.raises(ValueError):
        parse_resource_id("lesson:3")
    with pytest.raises(ValueError):
        resource_id(quiz_id="q", exercise_id="q/e")


def test_lms_score_matches_totals_and_gradebook(tmp_path: Path, db_url: str) -> None:
    app = synced_app(tmp_path)
    rng = random.Random(19)
    with app.app_context():
        secret = app.config["QUIZAPP_SEED_SECRET"]
        exercises = db.session.scalars(
            select(Exercise).where(Exercise.quiz_id == QUIZ, Exercise.archived.is_(False))
        ).all()
        users = [services.create_user(db.session, f"s{n}", "a password here") for n in range(4)]
        ids = [u.id for u in users]
        assert lms_score(db.session, ids[0], resource_id(quiz_id=QUIZ)) is None
        for user in users[:3]:
            for ex in rng.sample(list(exercises), 4):
                shown = services.stored_variant(
                    services.get_or_create_variant(db.session, user, ex, secret)
                )
                # "1" for the answer, or for every part of a multi-part exercise
                answer = {p.name: "1" for p in shown.parts} if shown.parts else "1"
                services.submit(db.session, user, ex.id, answer, seed_secret=secret)
        # s0 solves the 2x2 system (full points there).
        two = db.session.get(Exercise, TWO)
        v = services.stored_variant(
            services.get_or_create_variant(db.session, users[0], two, secret)
        )
        x = np.linalg.solve(np.asarray(v.values["A"], float), np.asarray(v.values["y"], float))
        result = services.submit(
            db.session, users[0], TWO, [[f"{x[0]:.6f}"], [f"{x[1]:.6f}"]], seed_secret=secret
        )
        assert result.verdict["status"] == "correct"
        inst.excuse(db.session, ids[1], exercises[0].id)
        inst.excuse(db.session, ids[2], exercises[1].id)
        totals.ensure_current(db.session)
        book = {row.user_id: row for row in inst.gradebook(db.session, quiz_id=QUIZ).rows}
        for uid in ids[:3]:
            got = lms_score(db.session, uid, resource_id(quiz_id=QUIZ))
            total = db.session.scalar(
                select(ScoreTotal).where(ScoreTotal.user_id == uid, ScoreTotal.scope == QUIZ)
            )
            assert got is not None
            assert got.given == pytest.approx(total.points)
            assert got.given == pytest.approx(book[uid].quiz_totals[QUIZ].earned)
            assert got.maximum == pytest.approx(book[uid].quiz_totals[QUIZ].available)
            assert got.activity == "InProgress"
        assert lms_score(db.session, ids[0], resource_id(quiz_id=QUIZ)).given >= 10.0
        assert lms_score(db.session, ids[3], resource_id(quiz_id=QUIZ)) is None
        # One exercise: its own points; excused from it, nothing to send.
        ex = exercises[0]
        assert lms_score(db.session, ids[1], resource_id(exercise_id=ex.id)) is None
