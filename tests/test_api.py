"""The JSON API (/api/v1): every endpoint and error code, on real bank exercises.

Expected answers are computed here with NumPy from the variant's numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_web_support import bank_variant_of, fmt, register, synced_app

from quizapp.models import ApiToken, Quiz, Submission, db

DECK = "01-linear-systems/05-deck-system"
SOFTMAX = "04-retrieval-and-softmax/05-softmax-vector"
TWO = "01-linear-systems/06-two-by-two"


@pytest.fixture()
def app(tmp_path: Path):
    app = synced_app(tmp_path)
    register(app.test_client(), "ana")
    register(app.test_client(), "ben")
    return app


def token_for(client, username: str = "ana", password: str = "correct horse") -> str:
    resp = client.post("/api/v1/token", json={"username": username, "password": password})
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()["token"]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture()
def client(app):
    return app.test_client()


@pytest.fixture()
def tok(client):
    return token_for(client)


def test_token_is_stored_hashed_and_works(app, client) -> None:
    import hashlib

    token = token_for(client)
    with app.app_context():
        (row,) = db.session.query(ApiToken).all()
        assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
        assert token not in row.token_hash
    resp = client.get("/api/v1/progress", headers=auth(token))
    assert resp.status_code == 200
    with app.app_context():
        assert db.session.query(ApiToken).one().last_used_at is not None


def test_token_errors(client) -> None:
    wrong = client.post("/api/v1/token", json={"username": "ana", "password": "nope nope"})
    assert wrong.status_code == 401 and wrong.get_json() == {"error": "Wrong username or password."}
    assert client.post("/api/v1/token", json={"username": "ana"}).status_code == 400
    bad = client.post("/api/v1/token", data='{"username": ', content_type="application/json")
    assert bad.status_code == 400 and bad.get_json()["error"].startswith(
        "The body is not valid JSON ("
    )
    form = client.post("/api/v1/token", data={"username": "ana", "password": "x"})
    assert form.status_code == 400 and "application/json" in form.get_json()["error"]
    arr = client.post("/api/v1/token", json=["ana"])
    assert arr.status_code == 400


def test_unauthenticated_and_revoked(client, tok) -> None:
    resp = client.get("/api/v1/quizzes")
    assert resp.status_code == 401 and "error" in resp.get_json()
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/api/v1/quizzes", headers=auth("qz_forged")).status_code == 401
    assert client.get("/api/v1/quizzes", headers={"Authorization": "Basic abc"}).status_code == 401
    assert client.delete("/api/v1/token", headers=auth(tok)).get_json() == {"revoked": True}
    resp = client.get("/api/v1/quizzes", headers=auth(tok))
    assert (
        resp.status_code == 401 and resp.get_json()["error"] == "The token is invalid or revoked."
    )


def test_quizzes_lists_exercises_with_my_status(client, tok) -> None:
    from test_web_support import EXERCISES

    from quizapp.bank import load_bank

    bank = load_bank(EXERCISES)
    data = client.get("/api/v1/quizzes", headers=auth(tok)).get_json()
    assert [q["id"] for q in data["quizzes"]] == [q.id for q in bank.quiz_list()]
    first = data["quizzes"][0]
    assert [e["id"] for e in first["exercises"]] == bank.quiz_list()[0].exercise_ids
    ex = first["exercises"][0]
    assert set(ex) >= {"id", "title", "points", "attempts", "status", "best_points"}
    assert ex["status"] == "not_started"
    assert first["points_available"] == sum(
        bank.exercises[e].spec.points for e in bank.quiz_list()[0].exercise_ids
    )


def test_variant_hides_the_answer_until_finished(app, client, tok) -> None:
    data = client.get(f"/api/v1/exercises/{DECK}/variant", headers=auth(tok)).get_json()
    assert data["variant_number"] == 1 and data["attempts_left"] == 3
    assert data["answer_form"] == {"type": "vector", "shape": [2], "unknowns": ["x", "y"]}
    assert "= 15" in data["prompt"] and "= 16" in data["prompt"] and "<math" in data["prompt_html"]
    assert "expected" not in data and "solution" not in data and "seed" not in data
    assert "2.0" not in json.dumps(data)
    x = np.linalg.solve([[5, 1], [3, 2]], [15, 16])
    resp = client.post(
        f"/api/v1/exercises/{DECK}/submissions",
        json={"cells": [[fmt(x[0])], [fmt(x[1])]]},
        headers=auth(tok),
    )
    assert resp.status_code == 201
    data = client.get(f"/api/v1/exercises/{DECK}/variant", headers=auth(tok)).get_json()
    assert data["finished"] and data["solved"]
    assert data["expected"] and data["solution"][0]["title"]
    # Ben's variant of the same exercise is his own and still hidden.
    ben = token_for(client, "ben")
    assert (
        "expected"
        not in client.get(f"/api/v1/exercises/{DECK}/variant", headers=auth(ben)).get_json()
    )


def test_submission_verdict_attempts_and_points(app, client, tok) -> None:
    v = bank_variant_of(app, "ana", SOFTMAX)
    x = np.asarray(v.values["x"], dtype=float)
    e = np.exp(x - x.max())
    expected = e / e.sum()
    url = f"/api/v1/exercises/{SOFTMAX}/submissions"
    wrong = expected.copy()
    wrong[0] += 0.3
    r1 = client.post(url, json={"answer": " ".join(fmt(c) for c in wrong)}, headers=auth(tok))
    assert r1.status_code == 201
    d1 = r1.get_json()
    assert d1["status"] == "partial" and d1["score"] == pytest.approx(3 / 4)
    assert d1["cells"] == [[False, True, True, True]] or d1["cells"] == [
        [False],
        [True],
        [True],
        [True],
    ]
    assert d1["attempts_left"] == 2 and d1["points"] == pytest.approx(7.5)
    assert set(d1) >= {"status", "score", "message", "cells", "mistakes", "attempts_left", "points"}
    r2 = client.post(url, json={"answer": " ".join(fmt(c) for c in expected)}, headers=auth(tok))
    d2 = r2.get_json()
    assert d2["status"] == "correct" and d2["points"] == 10 and d2["attempts_left"] == 1
    assert d2["finished"] and d2["best_points"] == 10
    listed = client.get(url, headers=auth(tok)).get_json()["submissions"]
    assert [s["status"] for s in listed] == ["partial", "correct"]
    assert listed[1]["answer"] == " ".join(fmt(c) for c in expected)
    prog = client.get("/api/v1/progress", headers=auth(tok)).get_json()
    row = next(e for e in prog["exercises"] if e["id"] == SOFTMAX)
    assert row["best_points"] == 10 and row["attempts_used"] == 2 and row["status"] == "solved"
    assert prog["points_earned"] == 10
    # Finished: a new answer is a conflict.
    r3 = client.post(url, json={"answer": "1 2 3 4"}, headers=auth(tok))
    assert r3.status_code == 409 and r3.get_json()["error"] == "You already solved this variant."


def test_invalid_and_identical_submissions(app, client, tok) -> None:
    url = f"/api/v1/exercises/{DECK}/submissions"
    inv = client.post(url, json={"answer": "2, abc"}, headers=auth(tok)).get_json()
    assert inv["status"] == "invalid" and not inv["used_attempt"] and inv["attempts_left"] == 3
    a = client.post(url, json={"answer": "1 1"}, headers=auth(tok)).get_json()
    b = client.post(url, json={"answer": "1 1"}, headers=auth(tok)).get_json()
    assert a["used_attempt"] and not b["used_attempt"] and b["duplicate"]
    assert b["attempts_left"] == a["attempts_left"] == 2 and b["status"] == a["status"]


def test_attempts_run_out_409(client, tok) -> None:
    url = f"/api/v1/exercises/{DECK}/submissions"
    for answer in ("1 1", "3 3", "4 4"):
        assert client.post(url, json={"answer": answer}, headers=auth(tok)).status_code == 201
    resp = client.post(url, json={"answer": "6 6"}, headers=auth(tok))
    assert resp.status_code == 409 and "No attempts left" in resp.get_json()["error"]
    data = client.get(f"/api/v1/exercises/{DECK}/variant", headers=auth(tok)).get_json()
    assert data["finished"] and not data["solved"] and "expected" in data


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"answer": 5}, "'answer' must be text"),
        ({"answer": None}, "'answer' must be text"),
        ({"cells": "abc"}, "'cells' must be a list of rows"),
        ({"cells": [["1", 2]]}, "row 1, column 2 must be text"),
        ({}, "exactly one of"),
        ({"answer": "1", "cells": [["1"]]}, "exactly one of"),
        ({"answer": "1", "extra": 1}, "Unknown field"),
        (
            {"cells": [["1"] * 1000] * 3},
            "Row 1 of the answer matrix must have between 1 and 64 cells",
        ),
        ({"answer": "9" * 30_000}, "too long"),
    ],
)
def test_malformed_submissions_are_400(app, client, tok, body, message) -> None:
    resp = client.post(f"/api/v1/exercises/{DECK}/submissions", json=body, headers=auth(tok))
    assert resp.status_code == 400
    assert message in resp.get_json()["error"]
    with app.app_context():
        assert db.session.query(Submission).count() == 0


def test_deeply_nested_and_huge_bodies(app, client, tok) -> None:
    url = f"/api/v1/exercises/{DECK}/submissions"
    deep = '{"cells": ' + "[" * 10_000 + "]" * 10_000 + "}"
    resp = client.post(url, data=deep, content_type="application/json", headers=auth(tok))
    assert resp.status_code == 400 and "error" in resp.get_json()
    huge = json.dumps({"answer": "9" * 2_000_000})
    resp = client.post(url, data=huge, content_type="application/json", headers=auth(tok))
    assert resp.status_code == 413 and "too large" in resp.get_json()["error"]
    big_grid = json.dumps({"cells": [["1"] * 1000] * 1000})
    resp = client.post(url, data=big_grid, content_type="application/json", headers=auth(tok))
    assert resp.status_code == 413
    with app.app_context():
        assert db.session.query(Submission).count() == 0


def test_unstorable_characters_are_stored_losslessly(app, client, tok) -> None:
    url = f"/api/v1/exercises/{DECK}/submissions"
    odd = "1\x00 \ud800 \u202e2"
    body = json.dumps({"answer": odd})  # ASCII-escaped JSON: the lone surrogate survives
    resp = client.post(url, data=body, content_type="application/json", headers=auth(tok))
    assert resp.status_code == 201 and resp.get_json()["status"] == "invalid"
    with app.app_context():
        sub = db.session.query(Submission).one()
        assert sub.answer_format == "json" and json.loads(sub.raw_answer) == odd
    listed = client.get(url, headers=auth(tok)).get_json()["submissions"]
    assert listed[0]["answer"] == odd


def test_unknown_exercise_and_endpoint_404(client, tok) -> None:
    for path in (
        "/api/v1/exercises/nope/nothing/variant",
        "/api/v1/exercises/NOPE/x/variant",
        "/api/v1/exercises/../../etc/passwd/variant",
        "/api/v1/nothing-here",
    ):
        resp = client.get(path, headers=auth(tok))
        assert resp.status_code == 404, path
        assert resp.get_json()["error"]
    resp = client.post(
        "/api/v1/exercises/nope/x/submissions", json={"answer": "1"}, headers=auth(tok)
    )
    assert resp.status_code == 404


def test_an_endpoint_asked_with_a_method_it_does_not_take_is_405_with_allow(client, tok) -> None:
    url = "/api/v1/exercises/01-linear-systems/05-deck-system/submissions"
    for method in ("PUT", "DELETE", "PATCH"):
        resp = client.open(url, method=method, json={"answer": "1"}, headers=auth(tok))
        assert resp.status_code == 405, method
        assert resp.headers["Allow"] == "GET, POST"
        assert resp.get_json()["error"] == (f"This endpoint does not take {method}: use GET, POST.")
    assert client.put("/api/v1/nothing-here", headers=auth(tok)).status_code == 404


def test_quiz_not_open_yet_is_403(app, client, tok) -> None:
    from datetime import UTC, datetime, timedelta

    with app.app_context():
        quiz = db.session.get(Quiz, DECK.split("/")[0])
        quiz.opens_at = datetime.now(UTC) + timedelta(days=1)
        db.session.commit()
    resp = client.get(f"/api/v1/exercises/{DECK}/variant", headers=auth(tok))
    assert resp.status_code == 403 and "opens on" in resp.get_json()["error"]
    resp = client.post(
        f"/api/v1/exercises/{DECK}/submissions", json={"answer": "2 5"}, headers=auth(tok)
    )
    assert resp.status_code == 403
    quizzes = client.get("/api/v1/quizzes", headers=auth(tok)).get_json()["quizzes"]
    assert DECK.split("/")[0] not in [q["id"] for q in quizzes]


def test_quiz_closed_refuses_submissions_403(app, client, tok) -> None:
    from datetime import UTC, datetime, timedelta

    with app.app_context():
        quiz = db.session.get(Quiz, DECK.split("/")[0])
        quiz.closes_at = datetime.now(UTC) - timedelta(minutes=1)
        db.session.commit()
    assert client.get(f"/api/v1/exercises/{DECK}/variant", headers=auth(tok)).status_code == 200
    resp = client.post(
        f"/api/v1/exercises/{DECK}/submissions", json={"answer": "2 5"}, headers=auth(tok)
    )
    assert resp.status_code == 403 and "closed" in resp.get_json()["error"]


def test_practice_variant_endpoint(app, client, tok) -> None:
    url = f"/api/v1/exercises/{TWO}"
    assert client.post(url + "/variants", headers=auth(tok)).status_code == 409
    v = bank_variant_of(app, "ana", TWO)
    x = np.linalg.solve(np.asarray(v.values["A"], float), np.asarray(v.values["y"], float))
    ok = client.post(
        url + "/submissions", json={"answer": f"{fmt(x[0])} {fmt(x[1])}"}, headers=auth(tok)
    )
    assert ok.get_json()["status"] == "correct"
    resp = client.post(url + "/variants", headers=auth(tok))
    assert resp.status_code == 201
    data = resp.get_json()
    assert data["variant_number"] == 2 and not data["finished"] and "expected" not in data


def test_session_authenticated_writes_need_the_csrf_token(app) -> None:
    client = app.test_client()
    from test_web_support import login

    assert login(client, "ana").status_code == 302
    assert client.get("/api/v1/quizzes").status_code == 200  # session works for reads
    url = f"/api/v1/exercises/{DECK}/submissions"
    resp = client.post(url, json={"answer": "1 1"})
    assert resp.status_code == 400 and "CSRF" in resp.get_json()["error"]
    csrf = client.get("/api/v1/csrf-token").get_json()["csrf_token"]
    resp = client.post(url, json={"answer": "1 1"}, headers={"X-CSRFToken": csrf})
    assert resp.status_code == 201


def test_rate_limit_429(tmp_path: Path) -> None:
    app = synced_app(tmp_path, QUIZAPP_LIMIT_SUBMIT="2 per minute")
    register(app.test_client(), "ana")
    client = app.test_client()
    tok = token_for(client)
    url = f"/api/v1/exercises/{DECK}/submissions"
    assert client.post(url, json={"answer": "x"}, headers=auth(tok)).status_code == 201
    assert client.post(url, json={"answer": "y"}, headers=auth(tok)).status_code == 201
    resp = client.post(url, json={"answer": "z"}, headers=auth(tok))
    assert resp.status_code == 429
    assert "Too many requests" in resp.get_json()["error"]


def test_exercise_whose_stored_yaml_no_longer_loads_is_503_not_500(app, client, tok) -> None:
    from quizapp.models import Exercise

    with app.app_context():
        version = db.session.get(Exercise, DECK).current_version
        version.source = version.source.replace("kind: linear_system", "kind: removed_kind")
        db.session.commit()
    resp = client.get(f"/api/v1/exercises/{DECK}/variant", headers=auth(tok))
    assert resp.status_code == 503 and "cannot be shown" in resp.get_json()["error"]
    resp = client.post(
        f"/api/v1/exercises/{DECK}/submissions", json={"answer": "2 5"}, headers=auth(tok)
    )
    assert resp.status_code == 503
    from test_web_support import login

    web = app.test_client()
    login(web, "ana")
    page = web.get(f"/exercises/{DECK}")
    assert page.status_code == 503 and "cannot be shown" in page.get_data(as_text=True)


@pytest.mark.parametrize(
    "body",
    [{"answer": ""}, {"answer": "  \n "}, {"cells": [[""], ["  "]]}],
)
def test_an_empty_answer_is_refused_like_the_forms_and_nothing_is_stored(
    app, client, tok, body
) -> None:
    url = "/api/v1/exercises/01-linear-systems/05-deck-system/submissions"
    resp = client.post(url, json=body, headers=auth(tok))
    assert resp.status_code == 400
    assert resp.get_json()["error"].startswith("The answer is empty")
    with app.app_context():
        assert db.session.query(Submission).count() == 0
