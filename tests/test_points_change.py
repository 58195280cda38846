"""A change of an exercise's points applies to every student at once (docs/live-course.md): the
verdict's points, the API's, the progress and a multi-part page's part points all follow it;
the split between a variant's parts is the variant's own (its key) until a regrade."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from test_instructor_support import (
    DECK,
    add_user,
    bank_app,
    instructor,
    signed_in,
    submit,
    sync,
    variant_values,
)

from quizapp import services
from quizapp.models import Progress, Submission, db

PREDICT = "03-transpose-and-products/15-transpose-is-not-the-inverse"  # parts P (4), y (6)


@pytest.fixture()
def app(tmp_path: Path):
    return bank_app(tmp_path)


def _edit(app, exercise_id: str, *changes: tuple[str, str]) -> None:
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{exercise_id}.yaml"
    text = path.read_text(encoding="utf-8")
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    sync(app)


def _text(client, exercise_id: str) -> str:
    response = client.get(f"/exercises/{exercise_id}")
    assert response.status_code == 200
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))


def test_a_verdict_and_its_points_follow_a_change_of_the_exercises_points(app) -> None:
    add_user(app, "ana")
    assert submit(app, "ana", DECK, "2, 5").submission.points == 10
    client = signed_in(app, "ana")
    assert "Score 100% · 10 of 10 points" in _text(client, DECK)
    for points in (50, 4):
        path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{DECK}.yaml"
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"(?m)^points: \d+$", f"points: {points}", text), encoding="utf-8")
        sync(app)
        assert f"Score 100% · {points} of {points} points" in _text(client, DECK)
        with app.app_context():
            (sub,) = db.session.scalars(db.select(Submission)).all()
            progress = db.session.scalars(db.select(Progress)).one()
            assert sub.points == pytest.approx(points) and progress.best_points == points


def test_a_multi_part_page_shows_its_parts_share_of_the_exercises_points_now(app) -> None:
    # ana's variant splits 10 points as P 4, y 6. The exercise becomes 20 points with y 16 (P
    # the rest, 4): ana's page shows her split of the 20 points (P 8, y 12) and her right P
    # earns 8 of 20, as the page says; ben, drawn from the new text, sees P 4 and y 16.
    add_user(app, "ana")
    client = signed_in(app, "ana")
    page = _text(client, PREDICT)
    assert "Part P · 4 points" in page and "Part y · 6 points" in page
    _edit(
        app, PREDICT, ("\npoints: 10\n", "\npoints: 20\n"), ("    points: 6\n", "    points: 16\n")
    )
    page = _text(client, PREDICT)
    assert "Part P · 8 points" in page and "Part y · 12 points" in page
    values = variant_values(app, "ana", PREDICT)
    A = np.asarray(values["A"], dtype=float)
    undoes = int(np.allclose(A.T @ A, np.eye(2)))
    result = submit(app, "ana", PREDICT, {"P": str(undoes)})
    assert result.submission.points == pytest.approx(8.0)
    assert "8 of 20 points" in _text(client, PREDICT)
    add_user(app, "ben")
    page = _text(signed_in(app, "ben"), PREDICT)
    assert "Part P · 4 points" in page and "Part y · 16 points" in page
    with app.app_context():
        ana = services.find_user(db.session, "ana")
        shown = db.session.scalar(
            db.select(Submission.variant_id).where(Submission.user_id == ana.id)
        )
    response = instructor(app).get(f"/instructor/variants/{shown}")
    as_shown = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))
    assert "Part P · 8 points" in as_shown and "Part y · 12 points" in as_shown
