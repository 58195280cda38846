"""``POST /api/v1/exercises/<quiz>/<name>/preview``: how an answer is read, storing nothing.

Checked against the real bank: the numbers read back are the ones typed, an invalid answer gets
the very message its submission would get, nothing is written (no submission, no attempt, no
progress, not even the variant), and nothing in the response depends on the expected answer.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from test_web_support import bank_variant_of, fmt, register, synced_app

from quizapp.models import Exercise, Progress, Quiz, Submission, Variant, db, utcnow

PRODUCT = "03-transpose-and-products/05-matrix-product"  # a 2 x 2 grid
CHOICE = "02-matrices-and-maps/03-which-is-linear"
FILL = "05-attention/08-fill-in-weights"  # a partly filled 3 x 3 matrix
LINE = "01-linear-systems/03-deck-line"  # one point on a line
SCALAR = "01-linear-systems/01-one-unknown"
KEYS = {"status", "read_as", "read_as_html", "message", "cells", "invalid_cell"}


@pytest.fixture()
def app(tmp_path: Path):
    app = synced_app(tmp_path)
    register(app.test_client(), "ana")
    return app


@pytest.fixture()
def client(app):
    return app.test_client()


@pytest.fixture()
def tok(client) -> str:
    resp = client.post("/api/v1/token", json={"username": "ana", "password": "correct horse"})
    assert resp.status_code == 201
    return resp.get_json()["token"]


def preview(client, tok: str, exercise_id: str, **body):
    return client.post(
        f"/api/v1/exercises/{exercise_id}/preview",
        json=body,
        headers={"Authorization": f"Bearer {tok}"},
    )


def counts(app) -> tuple[int, int, int]:
    with app.app_context():
        return (
            db.session.query(Submission).count(),
            db.session.query(Variant).count(),
            db.session.query(Progress).count(),
        )


def open_variant(client, tok: str, exercise_id: str) -> dict:
    resp = client.get(
        f"/api/v1/exercises/{exercise_id}/variant", headers={"Authorization": f"Bearer {tok}"}
    )
    assert resp.status_code == 200
    return resp.get_json()


def test_a_typed_matrix_is_read_back_and_nothing_is_stored(app, client, tok) -> None:
    open_variant(client, tok, PRODUCT)
    before = counts(app)
    resp = preview(client, tok, PRODUCT, answer="[[1, 2/4], [-3, 4e-1]]")
    assert resp.status_code == 200
    data = resp.get_json()
    assert set(data) == KEYS
    assert data["status"] == "valid"
    assert data["read_as"] == [[1.0, 0.5], [-3.0, 0.4]]
    assert data["message"] == "Read as a 2×2 matrix."
    assert data["cells"] == [["1", "2/4"], ["-3", "4e-1"]]
    assert data["invalid_cell"] is None
    html = data["read_as_html"]
    assert html.startswith('<div class="math-display"><math')
    assert [
        m for m in ("<mn>1</mn>", "<mn>0.5</mn>", "<mn>3</mn>", "<mn>0.4</mn>") if m not in html
    ] == []
    assert counts(app) == before
    # No attempt was used.
    assert open_variant(client, tok, PRODUCT)["attempts_left"] == 3


def test_the_preview_does_not_tell_a_right_answer_from_a_wrong_one(app, client, tok) -> None:
    v = bank_variant_of(app, "ana", PRODUCT)
    right = np.asarray(v.values["A"], dtype=float) @ np.asarray(v.values["B"], dtype=float)
    wrong = right + 1
    texts = ["\n".join(" ".join(fmt(x) for x in row) for row in m) for m in (right, wrong)]
    a, b = (preview(client, tok, PRODUCT, answer=t).get_json() for t in texts)
    assert a["status"] == b["status"] == "valid"
    assert a["message"] == b["message"]
    assert np.allclose(a["read_as"], right) and np.allclose(b["read_as"], wrong)
    assert set(a) == set(b) == KEYS  # no score, no marks


def test_an_unreadable_answer_gets_the_message_its_submission_would_get(app, client, tok) -> None:
    text = "1 x\n3 4"
    data = preview(client, tok, PRODUCT, answer=text).get_json()
    assert data["status"] == "invalid" and data["read_as"] is None and data["read_as_html"] == ""
    assert data["invalid_cell"] == [1, 2]
    assert data["cells"] == [["1", "x"], ["3", "4"]]  # how it splits, for a grid to show
    # The message says the problem once (not "'x' ... (in 'x')").
    assert data["message"].startswith("Row 1, column 2: Unknown name 'x'")
    assert "(in 'x')" not in data["message"]
    sub = client.post(
        f"/api/v1/exercises/{PRODUCT}/submissions",
        json={"answer": text},
        headers={"Authorization": f"Bearer {tok}"},
    ).get_json()
    assert sub["status"] == "invalid" and sub["message"] == data["message"]


def test_cells_are_read_like_the_grid_form(app, client, tok) -> None:
    data = preview(client, tok, PRODUCT, cells=[["3/4", "sqrt(4)"], ["-1", "0"]]).get_json()
    assert data["status"] == "valid" and data["read_as"] == [[0.75, 2.0], [-1.0, 0.0]]
    assert data["cells"] is None  # the answer was cells already
    empty = preview(client, tok, PRODUCT, cells=[["1", ""], ["3", "4"]]).get_json()
    assert empty["status"] == "invalid" and empty["message"] == "Row 1, column 2 is empty."
    # A grid of another shape than the form's is refused as the submission refuses it.
    bad = preview(client, tok, PRODUCT, cells=[["1", "2", "3"]])
    sub = client.post(
        f"/api/v1/exercises/{PRODUCT}/submissions",
        json={"cells": [["1", "2", "3"]]},
        headers={"Authorization": f"Bearer {tok}"},
    )
    assert bad.status_code == sub.status_code == 400
    assert bad.get_json() == sub.get_json()


def test_numpy_mathematica_and_latex_pastes_are_read(client, tok) -> None:
    for text in (
        "array([[1., 2.],\n       [3., 4.]])",
        "{{1, 2}, {3, 4}}",
        r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
        "[[1, 2], [3, 4]]",
    ):
        data = preview(client, tok, PRODUCT, answer=text).get_json()
        assert data["status"] == "valid", (text, data)
        assert data["read_as"] == [[1.0, 2.0], [3.0, 4.0]], text
        assert [[float(c) for c in row] for row in data["cells"]] == [[1, 2], [3, 4]], text


def test_an_exercise_never_opened_is_previewed_on_the_variant_it_will_have(
    app, client, tok
) -> None:
    assert counts(app) == (0, 0, 0)
    # Every box typed "1": the given ones are not the student's, so they are read as given.
    data = preview(client, tok, FILL, cells=[["1"] * 3 for _ in range(3)]).get_json()
    assert counts(app) == (0, 0, 0)  # not even the variant was stored
    given = open_variant(client, tok, FILL)["answer_form"]["given"]  # now it is created
    assert data["status"] == "valid"
    for r, row in enumerate(given):
        for c, cell in enumerate(row):
            if cell is not None:  # the given cells are the variant's, as the grid shows them
                assert data["read_as"][r][c] == pytest.approx(float(cell))
            else:
                assert data["read_as"][r][c] == 1.0


def test_a_choice_is_read_as_its_letter_and_text(app, client, tok) -> None:
    v = bank_variant_of(app, "ana", CHOICE)
    data = preview(client, tok, CHOICE, answer="b").get_json()
    assert data["status"] == "valid" and data["read_as"] == 2
    assert data["message"] == "Read as option (b)."
    assert '<span class="choice-letter">(b)</span>' in data["read_as_html"]
    assert "<math" in data["read_as_html"]  # the option's formula
    n = len(v.answer_form.choices)
    late = "abcdefghijklmnopqrstuvwxyz"[n]
    out = preview(client, tok, CHOICE, answer=late).get_json()
    assert out["status"] == "invalid" and f"only {n} options" in out["message"]


def test_a_point_and_a_number_are_read(client, tok) -> None:
    point = preview(client, tok, LINE, answer="x = 1.5, y = -2").get_json()
    assert point["status"] == "valid" and point["read_as"] == [1.5, -2.0]
    assert point["cells"] == [["1.5", "-2"]]
    number = preview(client, tok, SCALAR, answer="1/3").get_json()
    assert number["read_as"] == pytest.approx(1 / 3)
    assert "0.3333333333" in number["message"] and "0.3333333333" in number["read_as_html"]
    comma = preview(client, tok, SCALAR, answer="1,5").get_json()
    assert comma["status"] == "invalid" and "point for decimals" in comma["message"]


def test_request_errors(app, client, tok) -> None:
    url = f"/api/v1/exercises/{PRODUCT}/preview"
    assert client.post(url, json={"answer": "1"}).status_code == 401
    headers = {"Authorization": f"Bearer {tok}"}
    for body in ({}, {"answer": "1", "cells": [["1"]]}, {"answer": 3}, {"answer": "1", "x": 1}):
        resp = client.post(url, json=body, headers=headers)
        assert resp.status_code == 400 and "error" in resp.get_json(), body
    resp = client.post(url, data="{", content_type="application/json", headers=headers)
    assert resp.status_code == 400
    resp = client.post(
        "/api/v1/exercises/nope/nothing/preview", json={"answer": "1"}, headers=headers
    )
    assert resp.status_code == 404
    with app.app_context():
        quiz = db.session.get(Exercise, PRODUCT).quiz
        db.session.get(Quiz, quiz.id).opens_at = utcnow() + timedelta(days=1)
        db.session.commit()
    assert client.post(url, json={"answer": "1"}, headers=headers).status_code == 403


def test_a_signed_in_page_needs_the_csrf_token(app) -> None:
    from test_web_support import csrf_from, login

    browser = app.test_client()
    login(browser, "ana")
    url = f"/api/v1/exercises/{PRODUCT}/preview"
    assert browser.post(url, json={"answer": "1 2; 3 4"}).status_code == 400
    token = csrf_from(browser.get(f"/exercises/{PRODUCT}").get_data(as_text=True))
    resp = browser.post(url, json={"answer": "1 2; 3 4"}, headers={"X-CSRFToken": token})
    assert resp.status_code == 200 and resp.get_json()["read_as"] == [[1, 2], [3, 4]]


def test_previews_have_their_own_rate_limit(tmp_path: Path) -> None:
    app = synced_app(
        tmp_path, QUIZAPP_LIMIT_PREVIEW="2 per minute", QUIZAPP_LIMIT_SUBMIT="5/minute"
    )
    register(app.test_client(), "ana")
    client = app.test_client()
    tok = client.post("/api/v1/token", json={"username": "ana", "password": "correct horse"})
    tok = tok.get_json()["token"]
    codes = [preview(client, tok, PRODUCT, answer="1 2; 3 4").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    sub = client.post(
        f"/api/v1/exercises/{PRODUCT}/submissions",
        json={"answer": "1 2; 3 4"},
        headers={"Authorization": f"Bearer {tok}"},
    )
    assert sub.status_code == 201  # previews do not use up the submissions' limit
