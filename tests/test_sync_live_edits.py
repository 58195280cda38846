"""Edits a sync applies to a live course at once (docs/live-course.md): fewer attempts finish
the variants that used them and raising them again reopens none whose solution was shown; a
quiz.yaml with errors keeps its quiz as it was; an exercise whose new version is refused keeps
its place in the quiz."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from sqlalchemy import select
from test_instructor_support import DECK, add_user, at, bank_app, signed_in, submit, sync
from test_web_support import csrf_from

from quizapp import instructor as inst
from quizapp import services
from quizapp.models import Exercise, Submission, db


@pytest.fixture()
def app(tmp_path: Path):
    return bank_app(tmp_path)


def _set(app, exercise_id: str, key: str, value: int) -> None:
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{exercise_id}.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(rf"(?m)^{key}: \d+$", f"{key}: {value}", text), encoding="utf-8")
    sync(app)


def test_fewer_attempts_finish_a_variant_and_more_do_not_reopen_its_shown_solution(app) -> None:
    add_user(app, "ana")
    add_user(app, "ben")
    assert submit(app, "ana", DECK, "1, 1", at(1)).submission.used_attempt  # 1 of 3 used
    client = signed_in(app, "ana")
    client.get(f"/exercises/{DECK}")  # ben has no variant: nothing to finish for him
    _set(app, DECK, "attempts", 1)
    page = client.get(f"/exercises/{DECK}").get_data(as_text=True)
    assert "Worked solution" in page and "No attempts left on this variant" in page
    _set(app, DECK, "attempts", 3)
    page = client.get(f"/exercises/{DECK}").get_data(as_text=True)
    assert "Worked solution" in page and "No attempts left on this variant" in page
    # The right answer, now known, is refused (409, stored nothing) through the form and
    # the service; a regrade does not reopen the variant either.
    posted = client.post(
        f"/exercises/{DECK}",
        data={"csrf_token": csrf_from(page), "via": "text", "answer": "2, 5"},
    )
    assert posted.status_code == 409
    assert "attempts were raised" in html.unescape(posted.get_data(as_text=True))
    with pytest.raises(services.Conflict):
        submit(app, "ana", DECK, "2, 5", at(2))
    with app.app_context():
        inst.regrade_exercise(db.session, DECK)
    with pytest.raises(services.Conflict):
        submit(app, "ana", DECK, "2, 5", at(3))
    with app.app_context():
        assert len(db.session.scalars(select(Submission)).all()) == 1
    # ben, who had not started, has the 3 attempts.
    assert submit(app, "ben", DECK, "2, 5", at(4)).submission.status == "correct"


def test_a_quiz_yaml_with_errors_lets_no_new_exercise_join_the_quiz(app) -> None:
    folder = Path(app.config["QUIZAPP_EXERCISES"]) / "05-attention"
    old = folder / "03a-self-attention-step-by-step.yaml"
    old.rename(folder / "03b-renamed.yaml")  # quiz.yaml still lists 03a
    with app.app_context():
        before = set(db.session.scalars(select(Exercise.id).where(~Exercise.archived)))
        report = services.sync_folder(db.session, folder.parent)
        after = set(db.session.scalars(select(Exercise.id).where(~Exercise.archived)))
    assert after == before
    assert any("03b-renamed.yaml: not added" in e for e in report.errors), report.errors
    assert "05-attention/03b-renamed" not in report.added


def test_an_exercise_whose_new_version_is_refused_keeps_its_place_in_the_quiz(app) -> None:
    def order() -> list[str]:
        with app.app_context():
            return list(
                db.session.scalars(
                    select(Exercise.id)
                    .where(Exercise.quiz_id == "05-attention")
                    .order_by(Exercise.position, Exercise.id)
                )
            )

    before = order()
    path = Path(app.config["QUIZAPP_EXERCISES"]) / "05-attention/16-which-could-be-the-output.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"(?m)^points: \d+", "points: -5", text), encoding="utf-8")
    with app.app_context():
        report = services.sync_folder(db.session, path.parent.parent)
    assert report.kept_previous == ["05-attention/16-which-could-be-the-output"]
    assert order() == before
