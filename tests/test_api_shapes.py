"""A grid of cells whose shape differs from the grid the form shows is a client error (400, no
attempt used, nothing stored), not a wrong answer."""

from __future__ import annotations

from pathlib import Path

from test_instructor_support import DECK, TRANSPOSE, add_user, bank_app

from quizapp.models import Submission, db

MATRIX = "01-linear-systems/08-matrix-form"  # a 2 x 3 grid is shown


def _count(app) -> int:
    with app.app_context():
        return len(db.session.scalars(db.select(Submission)).all())


def test_wrong_shaped_grid_is_refused_without_using_an_attempt(tmp_path: Path) -> None:
    app = bank_app(tmp_path)
    add_user(app, "ana")
    client = app.test_client()
    token = client.post("/api/v1/token", json={"username": "ana", "password": "correct horse"})
    headers = {"Authorization": "Bearer " + token.get_json()["token"]}
    variant = client.get(f"/api/v1/exercises/{MATRIX}/variant", headers=headers).get_json()
    rows, cols = variant["answer_form"]["shape"]
    left = variant["attempts_left"]
    assert (rows, cols) == (2, 3)
    url = f"/api/v1/exercises/{MATRIX}/submissions"
    for cells in (
        [["1"] * 64 for _ in range(64)],
        [["1"] * cols for _ in range(rows + 1)],
        [["1"] * (cols + 1) for _ in range(rows)],
        [["1"] * cols] + [["1"] * (cols + 1) for _ in range(rows - 1)],  # ragged
    ):
        resp = client.post(url, json={"cells": cells}, headers=headers)
        assert resp.status_code == 400, resp.get_json()
        message = resp.get_json()["error"]
        assert f"{rows} × {cols}" in message and "no attempt" in message
    assert _count(app) == 0
    after = client.get(f"/api/v1/exercises/{MATRIX}/variant", headers=headers).get_json()
    assert after["attempts_left"] == left
    # The right shape with wrong numbers is graded (and uses an attempt).
    resp = client.post(url, json={"cells": [["1e9"] * cols for _ in range(rows)]}, headers=headers)
    assert resp.status_code == 201 and resp.get_json()["used_attempt"] is True
    # A vector's entries may come as a column or as a row.
    deck = f"/api/v1/exercises/{DECK}/submissions"
    assert client.post(deck, json={"cells": [["2", "5"]]}, headers=headers).status_code == 201
    resp = client.post(deck, json={"cells": [["2"], ["5"], ["7"]]}, headers=headers)
    assert resp.status_code == 400 and "2 entries" in resp.get_json()["error"]
    # When the shape is part of the question (no grid shown), a wrong shape stays a wrong answer.
    resp = client.post(
        f"/api/v1/exercises/{TRANSPOSE}/submissions", json={"answer": "1 2"}, headers=headers
    )
    assert resp.status_code == 201 and resp.get_json()["status"] == "incorrect"
