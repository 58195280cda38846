"""Every input of ``tests/cases/bad-requests.md`` (the copy of ``../shared/cases/``) gets a clear 4xx (or a page with a message),
never a 500, never a half-stored record, and the server answers the next request.

Where each item is covered:

1. 2 MB answer ............................ test_two_megabyte_answer_is_413_and_nothing_stored
2. cells nested 10,000 deep ............... test_deeply_nested_cells_are_400
3. 1000 x 1000 grid for a 2 x 2 ........... test_huge_grids_are_refused_clearly
4. malformed JSON, wrong types ............ test_malformed_json_and_wrong_types_are_400
5. CSRF token missing / another session's . tests/test_security.py
   (test_every_form_post_without_or_with_another_sessions_csrf_token_is_400,
   test_session_api_writes_need_this_sessions_csrf_token_bearer_tokens_do_not)
6. NUL, lone surrogates, RTL, <script> .... test_hostile_characters_are_stored_as_typed_and_shown_escaped,
   test_raw_answers_round_trip_losslessly (SQLite, and PostgreSQL when configured),
   test_csv_exports_neutralize_formulas
7. 10,000-char / duplicate usernames ...... test_usernames_long_hostile_and_duplicate
   (and tests/test_web_auth.py::test_usernames_differing_by_case_or_normalization_are_duplicates)
8. unknown, negative, non-numeric ids,
   path traversal in every path parameter . test_ids_and_path_traversal_in_every_path_parameter
9. forty wrong logins then the right one .. tests/test_security.py
   (test_forty_wrong_logins_then_the_right_one_default_policy,
   test_the_right_password_works_after_the_window)
10. 20 identical submits at once .......... tests/test_load.py
    (test_twenty_concurrent_submits_cannot_race_past_the_attempts) and
    tests/test_services.py::test_same_answer_twenty_times_at_once_counts_once
11. Content-Length > body, slow body ...... tests/test_load.py
    (test_partial_and_never_finishing_bodies_do_not_starve_the_server)
12. foreign Host header, open redirect .... tests/test_security.py
    (test_host_header_of_another_site_never_reaches_a_link_or_redirect,
    test_trusted_hosts_refuse_other_host_headers, test_open_redirect_through_next_is_ignored)
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_postgres_support import skip_or_fail
from test_web_support import (
    csrf_from,
    login,
    make_app,
    post_text,
    synced_app,
    url_of,
)

from quizapp import services
from quizapp.models import db

PW = "correct horse battery"
DECK = "01-linear-systems/05-deck-system"
TRANSPOSE = "03-transpose-and-products/01-transpose"
SUBMIT = f"/api/v1/exercises/{DECK}/submissions"
HOSTILE = "1\x00 2 \ud800 \u202eevil\u202c <script>alert(1)</script> \x07\x1b[31m"


@pytest.fixture()
def app(tmp_path: Path) -> Any:
    app = synced_app(tmp_path)
    with app.app_context():
        services.create_user(db.session, "ana", PW)
        services.create_user(db.session, "prof", PW, role="instructor")
    return app


@pytest.fixture()
def tok(app: Any) -> dict[str, str]:
    resp = app.test_client().post("/api/v1/token", json={"username": "ana", "password": PW})
    return {"Authorization": f"Bearer {resp.get_json()['token']}"}


def signed_in(app: Any, name: str = "ana") -> Any:
    client = app.test_client()
    assert login(client, name, PW).status_code == 302
    return client


def submissions(app: Any) -> int:
    path = app.config["SQLALCHEMY_DATABASE_URI"].removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]


def still_serving(app: Any, tok: dict[str, str]) -> None:
    resp = app.test_client().post(SUBMIT, json={"answer": "1 1"}, headers=tok)
    assert resp.status_code == 201, resp.get_json()


def test_two_megabyte_answer_is_413_and_nothing_stored(app: Any, tok: dict[str, str]) -> None:
    digits = "7" * (2 * 1024 * 1024)
    resp = app.test_client().post(SUBMIT, json={"answer": digits}, headers=tok)
    assert resp.status_code == 413
    assert resp.get_json()["error"] == "The request is too large (at most 262144 bytes)."
    client = signed_in(app)
    token = csrf_from(client.get(url_of(DECK)).get_data(as_text=True))
    resp = client.post(url_of(DECK), data={"csrf_token": token, "answer": digits, "via": "text"})
    assert resp.status_code == 413 and b"too large" in resp.data
    # Under the body limit but over the answer limit: 400 saying so.
    resp = app.test_client().post(SUBMIT, json={"answer": "7" * 20_001}, headers=tok)
    assert resp.status_code == 400
    assert resp.get_json()["error"] == "The answer is too long (at most 20000 characters)."
    assert submissions(app) == 0
    still_serving(app, tok)


def test_deeply_nested_cells_are_400(app: Any, tok: dict[str, str]) -> None:
    body = '{"cells": ' + "[" * 10_000 + "]" * 10_000 + "}"
    resp = app.test_client().post(SUBMIT, data=body, content_type="application/json", headers=tok)
    assert resp.status_code == 400
    assert "nested too deeply" in resp.get_json()["error"] or "cells" in resp.get_json()["error"]
    nested: Any = "1"
    for _ in range(50):
        nested = [nested]
    resp = app.test_client().post(SUBMIT, json={"cells": nested}, headers=tok)
    assert resp.status_code == 400 and "must be text" in resp.get_json()["error"]
    assert submissions(app) == 0
    still_serving(app, tok)


def test_huge_grids_are_refused_clearly(app: Any, tok: dict[str, str]) -> None:
    big = [["1"] * 1000 for _ in range(1000)]
    resp = app.test_client().post(SUBMIT, json={"cells": big}, headers=tok)
    assert resp.status_code == 413
    mid = [["1"] * 100 for _ in range(100)]  # fits the body limit, not the grid limit
    resp = app.test_client().post(SUBMIT, json={"cells": mid}, headers=tok)
    assert resp.status_code == 400
    assert resp.get_json()["error"] == "The answer matrix has too many rows: 100 (at most 64)."
    wide = [["1"] * 1000, ["2"] * 1000]
    resp = app.test_client().post(SUBMIT, json={"cells": wide}, headers=tok)
    assert resp.status_code == 400 and "between 1 and 64 cells" in resp.get_json()["error"]
    # The same through the page's grid form: 1000 x 1000 fields exceed the body limit (413); an
    # 80 x 80 grid fits it, but its boxes outside the exercise's 2 x 1 grid are refused (400,
    # nothing stored), and the exercise's own 2 x 1 cells are then graded.
    client = signed_in(app)
    token = csrf_from(client.get(url_of(DECK)).get_data(as_text=True))
    data = {f"cell-{r}-{c}": "1" for r in range(1000) for c in range(1000)}
    resp = client.post(url_of(DECK), data=dict(data, csrf_token=token, via="cells"))
    assert resp.status_code == 413
    assert submissions(app) == 0
    data = {f"cell-{r}-{c}": "1" for r in range(80) for c in range(80)}
    resp = client.post(url_of(DECK), data=dict(data, csrf_token=token, via="cells"))
    assert resp.status_code == 400
    assert b"a box outside the answer grid (row 1, column 2)" in resp.data
    resp = client.post(
        url_of(DECK), data={"csrf_token": token, "via": "cells", "cell-999-999": "5"}
    )
    assert resp.status_code == 400
    assert b"a box outside the answer grid (row 1000, column 1000)" in resp.data
    assert submissions(app) == 0
    resp = client.post(
        url_of(DECK), data={"csrf_token": token, "via": "cells", "cell-0-0": "1", "cell-1-0": "1"}
    )
    assert resp.status_code == 200
    with app.app_context():
        from quizapp.models import Submission

        (row,) = db.session.query(Submission).all()
        assert services.decode_raw_answer(row.answer_format, row.raw_answer) == [["1"], ["1"]]
    still_serving(app, tok)


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (
            '{"answer": ',
            "application/json",
            "The body is not valid JSON (Expecting value, line 1, column 12).",
        ),
        ('{"answer": 5}', "application/json", "'answer' must be text"),
        ('{"answer": null}', "application/json", "'answer' must be text"),
        ('{"answer": ["1"]}', "application/json", "'answer' must be text"),
        ('{"cells": "abc"}', "application/json", "'cells' must be a list of rows"),
        ('{"cells": [1, 2]}', "application/json", "'cells' must be a list of rows"),
        ('{"cells": [[1, 2]]}', "application/json", "must be text"),
        ('{"cells": []}', "application/json", "The grid of cells is empty."),
        ("[1, 2]", "application/json", "The JSON body must be an object."),
        ('"1 2"', "application/json", "The JSON body must be an object."),
        ("{}", "application/json", "Send exactly one of"),
        ('{"answer": "1", "cells": [["1"]]}', "application/json", "Send exactly one of"),
        ('{"answer": "1", "admin": true}', "application/json", "Unknown field(s): admin."),
        ("answer=1+2", "application/x-www-form-urlencoded", "Content-Type: application/json"),
        ('{"answer": "1 2"}', "text/plain", "Content-Type: application/json"),
        (
            b'{"answer": "\xff\xfe"}',
            "application/json",
            "The body is not valid JSON: it is not UTF-8 text (byte 13).",
        ),
        ("", "application/json", "The body is not valid JSON (Expecting value, line 1, column 1)."),
        ('{"answer": "1"}' + " " * 10 + "garbage", "application/json", "not valid JSON"),
    ],
)
def test_malformed_json_and_wrong_types_are_400(
    app: Any, tok: dict[str, str], body: str | bytes, content_type: str, message: str
) -> None:
    resp = app.test_client().post(SUBMIT, data=body, content_type=content_type, headers=tok)
    assert resp.status_code == 400, resp.get_json()
    assert message in resp.get_json()["error"]
    assert submissions(app) == 0


def test_token_endpoint_wrong_bodies(app: Any) -> None:
    client = app.test_client()
    for body in ('{"username": 5, "password": "x"}', "[]", "nul", '{"username": "ana"}'):
        resp = client.post("/api/v1/token", data=body, content_type="application/json")
        assert resp.status_code == 400, body
    resp = client.post("/api/v1/token", json={"username": "a" * 10_000, "password": "x" * 10_000})
    assert resp.status_code == 401
    resp = client.post("/api/v1/token", json={"username": "ana\x00", "password": "\ud800"})
    assert resp.status_code == 401


def test_hostile_characters_are_stored_as_typed_and_shown_escaped(
    app: Any, tok: dict[str, str]
) -> None:
    api = app.test_client()
    resp = api.post(SUBMIT, json={"answer": HOSTILE}, headers=tok)
    assert resp.status_code == 201 and resp.get_json()["status"] == "invalid"
    listing = api.get(SUBMIT, headers=tok).get_json()["submissions"]
    assert listing[-1]["answer"] == HOSTILE  # exactly as typed, NUL and surrogate included
    cells = [["<script>alert(2)</script>", "\x00"], ["\u202e1", "=cmd|' /C calc'!A0"]]
    resp = api.post(
        f"/api/v1/exercises/{TRANSPOSE}/submissions", json={"cells": cells}, headers=tok
    )
    assert resp.status_code == 201
    listing = api.get(f"/api/v1/exercises/{TRANSPOSE}/submissions", headers=tok).get_json()
    assert listing["submissions"][-1]["answer"] == cells
    # Through the web form (a form cannot carry a lone surrogate: invalid UTF-8 is replaced).
    client = signed_in(app)
    web_answer = "2\x00 3 \u202eabc <script>alert(3)</script>"
    assert post_text(client, DECK, web_answer).status_code == 200
    with app.app_context():
        from quizapp.models import Submission

        rows = db.session.query(Submission).order_by(Submission.id).all()
        decoded = [services.decode_raw_answer(r.answer_format, r.raw_answer) for r in rows]
    assert decoded == [HOSTILE, cells, web_answer]
    # Shown escaped: the student's page and the instructor's drill-down.
    for page in (
        client.get(url_of(DECK)),
        client.get(url_of(TRANSPOSE)),
        signed_in(app, "prof").get(f"/instructor/students/{rows[0].user_id}"),
        signed_in(app, "prof").get(f"/instructor/exercises/{DECK}"),
    ):
        assert page.status_code == 200
        text = page.get_data(as_text=True)
        assert "<script>alert(" not in text
        assert "\x00" not in text
    student_page = client.get(url_of(DECK)).get_data(as_text=True)
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in student_page
    drill = signed_in(app, "prof").get(f"/instructor/students/{rows[0].user_id}")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in drill.get_data(as_text=True)


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_raw_answers_round_trip_losslessly(tmp_path: Path, backend: str) -> None:
    """PostgreSQL text cannot hold NUL (nor lone surrogates in UTF-8): such answers are stored
    JSON-escaped (answer_format "json") and decoded back to exactly what was typed."""
    config: dict[str, Any] = {}
    if backend == "postgres":
        url = os.environ.get("QUIZAPP_TEST_POSTGRES_URL")
        if not url:
            skip_or_fail("postgres", "QUIZAPP_TEST_POSTGRES_URL is not set: no PostgreSQL")
        config["SQLALCHEMY_DATABASE_URI"] = url
    app = make_app(tmp_path, **config)
    try:
        with app.app_context():
            report = services.sync_folder(db.session, Path(app.config["QUIZAPP_EXERCISES"]))
            assert report.errors == []
            user = services.create_user(db.session, "ana", PW)
            secret = app.config["QUIZAPP_SEED_SECRET"]
            answers: list[Any] = [
                HOSTILE,
                "\x00",
                "\udfff\ud800",
                "plain 1 2",
                [["\x00", "\ud83d"], ["<b>", "=1+1"]],
            ]
            ids = []
            for answer in answers:
                result = services.submit(db.session, user, TRANSPOSE, answer, seed_secret=secret)
                ids.append(result.submission.id)
            db.session.remove()
            from quizapp.models import Submission

            for sub_id, answer in zip(ids, answers, strict=True):
                row = db.session.get(Submission, sub_id)
                assert services.decode_raw_answer(row.answer_format, row.raw_answer) == answer
                assert "\x00" not in row.raw_answer
    finally:
        if backend == "postgres":
            from flask_migrate import downgrade

            from quizapp.web.database import MIGRATIONS_DIR

            with app.app_context():
                db.session.remove()
                downgrade(directory=str(MIGRATIONS_DIR), revision="base")
                db.engine.dispose()


def test_csv_exports_neutralize_formulas(app: Any) -> None:
    with app.app_context():
        # Usernames may not start with = + - @ (refused at registration), so the formulas come
        # in through display names, which are free text.
        services.create_user(db.session, "sum", PW, display_name="+sum")
        services.create_user(db.session, "cmd", PW, display_name="@cmd")
        services.create_user(db.session, "link", PW, display_name='=HYPERLINK("http://x")')
        services.create_user(db.session, "neg", PW, display_name="-2+3")
    for name in ("sum", "cmd", "link", "neg"):
        client = signed_in(app, name)
        assert post_text(client, DECK, "1 1").status_code == 200
    prof = signed_in(app, "prof")
    for url in ("/instructor/gradebook.csv", "/instructor/roster.csv"):
        resp = prof.get(url)
        assert resp.status_code == 200 and resp.mimetype == "text/csv"
        rows = list(csv.reader(io.StringIO(resp.get_data(as_text=True))))
        cells = [c for row in rows for c in row]
        assert any(c == "'+sum" for c in cells), url
        assert any(c == "'@cmd" for c in cells), url
        assert any(c == '\'=HYPERLINK("http://x")' for c in cells), url
        assert any(c == "'-2+3" for c in cells), url
        for cell in cells:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), (url, cell)
            if cell.startswith("-"):
                float(cell)  # only negative numbers may start with '-'


@pytest.mark.parametrize(
    ("username", "says"),
    [
        ("a" * 10_000, "longer than 64 characters"),
        ("<script>alert(1)</script>", "may contain only"),
        ("ana\x00", "may contain only"),
        ("\u202eana", "may contain only"),
        ("ANA", "taken"),
        ("ａｎａ", "taken"),  # full-width
    ],
)
def test_usernames_long_hostile_and_duplicate(app: Any, username: str, says: str) -> None:
    client = app.test_client()
    token = csrf_from(client.get("/register").get_data(as_text=True))
    resp = client.post(
        "/register",
        data={"csrf_token": token, "username": username, "password": PW, "confirm": PW},
    )
    assert resp.status_code == 200
    text = html.unescape(resp.get_data(as_text=True))
    assert says in text
    assert "<script>alert(1)</script>" not in resp.get_data(as_text=True)
    with app.app_context():
        from quizapp.models import User

        assert db.session.query(User).count() == 2


def test_composed_and_decomposed_usernames_are_one(app: Any) -> None:
    with app.app_context():
        services.create_user(db.session, "jos\u00e9", PW)
        with pytest.raises(services.Conflict):
            services.create_user(db.session, "jose\u0301", PW)
        assert services.authenticate(db.session, "JOSE\u0301", PW) is not None


TRAVERSALS = [
    "../../etc/passwd",
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "....//....//etc/passwd",
    "..\\..\\windows\\win.ini",
    "%00",
    "-1",
    "abc",
    "99999999999999999999999",
    "1.5",
]


def test_ids_and_path_traversal_in_every_path_parameter(app: Any, tok: dict[str, str]) -> None:
    student = signed_in(app)
    prof = signed_in(app, "prof")
    checked = 0
    for rule in app.url_map.iter_rules():
        if not rule.arguments:
            continue
        for bad in TRAVERSALS:
            url = rule.rule
            for arg in rule.arguments:
                url = url.replace(f"<{arg}>", bad).replace(f"<int:{arg}>", bad)
                url = url.replace(f"<path:{arg}>", bad)
            for client, headers in ((student, {}), (prof, {}), (app.test_client(), tok)):
                for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                    resp = client.open(url, method=method, headers=headers)
                    assert resp.status_code in (302, 400, 401, 403, 404, 405), (
                        method,
                        url,
                        resp.status_code,
                    )
                    assert b"root:" not in resp.data and b"[fonts]" not in resp.data
                    checked += 1
    assert checked > 300
    # Unknown but well-formed ids: 404 with a message.
    resp = student.get("/exercises/01-linear-systems/99-nope")
    assert resp.status_code == 404 and b"There is no such exercise." in resp.data
    resp = app.test_client().get("/api/v1/exercises/nope/nope/variant", headers=tok)
    assert resp.status_code == 404 and resp.get_json() == {"error": "There is no such exercise."}
    assert prof.get("/instructor/students/999999").status_code == 404
    assert prof.get("/instructor/regrades/999999").status_code == 404
    assert submissions(app) == 0


def test_wrong_methods_and_unknown_pages(app: Any, tok: dict[str, str]) -> None:
    client = signed_in(app)
    assert client.delete("/progress").status_code == 405
    assert client.put(url_of(DECK)).status_code == 405
    resp = app.test_client().put("/api/v1/progress", headers=tok)
    assert resp.status_code in (404, 405) and "error" in resp.get_json()
    assert client.get("/no/such/page").status_code == 404
    resp = app.test_client().get("/api/v1/nothing", headers=tok)
    assert resp.status_code == 404 and json.loads(resp.data)["error"]
