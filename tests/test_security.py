"""Who may see what (issue 6): password hashing, session cookies, CSRF on every state-changing
route, IDOR over every route of the app's url_map, the expected answer hidden until a variant is
finished, rate limits (login failures per account+address, registration, submissions), security
headers and a CSP the templates obey, safe YAML, sandboxed templates, expression escapes.

Escape payloads for the bank are mostly in tests/test_bank_expression.py
(``test_escape_payloads_are_rejected_before_evaluation``), tests/test_bank_template.py
(``test_sandbox_refuses_escapes_and_huge_output``); the few added here are the ones missing there.
"""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from test_web_support import (
    REPO,
    bank_variant_of,
    csrf_from,
    login,
    post_text,
    synced_app,
    url_of,
)

from quizapp import services
from quizapp.bank import expected_answer_text, shown_answer_text
from quizapp.models import Submission, User, db
from quizapp.page import format_number

PW = "correct horse battery"
WEIGHTS = "05-attention/01-attention-weights"
SOFTROWS = "04-retrieval-and-softmax/06-softmax-rows"
SELF = "05-attention/03-self-attention"
DECK = "01-linear-systems/05-deck-system"
ALICE, BOB, PROF = "alicezq7", "bobzq7", "profzq7"
MARKER = "idor-marker-qx81"


def make_user(app: Any, name: str, role: str = "student") -> int:
    with app.app_context():
        return services.create_user(db.session, name, PW, role=role).id


def signed_in(app: Any, name: str, addr: str = "127.0.0.1") -> Any:
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = addr
    resp = login(client, name, PW)
    assert resp.status_code == 302, resp.get_data(as_text=True)[:300]
    return client


def row_counts(app: Any) -> dict[str, int]:
    """Rows per table, read with sqlite3 directly (not through the app)."""
    path = app.config["SQLALCHEMY_DATABASE_URI"].removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if not r[0].startswith("sqlite_")
        ]
        return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}


def leak_needles(bank_variant: Any) -> list[str]:
    """Strings that would reveal ``bank_variant``'s expected answer: its canonical text (when long
    enough not to occur by chance) and each non-integer expected entry as the pages format it
    (4 significant digits; entries with fewer digits, e.g. 0.5, are too common to test)."""
    import numpy as np

    needles = []
    for text in sorted({expected_answer_text(bank_variant), shown_answer_text(bank_variant)}):
        if len(text) >= 8:
            needles.append(text)
    for v in np.asarray(bank_variant.expected, dtype=float).ravel():
        shown = format_number(v)
        if len(re.sub(r"[^1-9]", "", shown.split("e")[0])) >= 4 and abs(v - round(v)) > 1e-6:
            needles.append(shown)
    return needles


def body_of(resp: Any) -> str:
    import html

    text = html.unescape(resp.get_data(as_text=True))
    return re.sub(r'name="csrf_token"[^>]*value="[^"]*"', "", text)


@pytest.fixture()
def app(tmp_path: Path) -> Any:
    app = synced_app(tmp_path)
    make_user(app, ALICE)
    make_user(app, BOB)
    make_user(app, PROF, role="instructor")
    return app


# --------------------------------------------------------------------------------------------
# Passwords, sessions, cookies


def test_passwords_are_stored_as_scrypt_hashes(app: Any) -> None:
    from werkzeug.security import check_password_hash

    with app.app_context():
        user = services.find_user(db.session, ALICE)
        assert user is not None
        assert user.password_hash.startswith("scrypt:")
        assert PW not in user.password_hash
        assert check_password_hash(user.password_hash, PW)
        assert not check_password_hash(user.password_hash, PW + "x")
    # The production method is Werkzeug's scrypt with its defaults (memory-hard, RFC 7914).
    source = (REPO / "quizapp" / "models.py").read_text()
    assert re.search(r'^PASSWORD_METHOD = "scrypt"$', source, re.M)


def test_session_and_remember_cookies_are_httponly_lax(app: Any) -> None:
    client = app.test_client()
    page = client.get("/login")
    data = {"csrf_token": csrf_from(page.get_data(as_text=True)), "username": ALICE}
    resp = client.post("/login", data=dict(data, password=PW, remember="y"))
    assert resp.status_code == 302
    cookies = resp.headers.getlist("Set-Cookie")
    names = {c.split("=", 1)[0] for c in cookies}
    assert {"session", "remember_token"} <= names
    for cookie in cookies:
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
        assert "Secure" not in cookie


def test_cookies_are_secure_when_served_over_https(tmp_path: Path) -> None:
    app = synced_app(tmp_path, QUIZAPP_HTTPS=True)
    make_user(app, ALICE)
    client = app.test_client()
    page = client.get("/login", base_url="https://localhost")
    data = {"csrf_token": csrf_from(page.get_data(as_text=True)), "username": ALICE}
    resp = client.post(
        "/login",
        data=dict(data, password=PW, remember="y"),
        base_url="https://localhost",
        headers={"Referer": "https://localhost/login"},
    )
    assert resp.status_code == 302
    cookies = resp.headers.getlist("Set-Cookie")
    assert cookies and all("Secure" in c and "HttpOnly" in c for c in cookies)
    assert "max-age=" in resp.headers["Strict-Transport-Security"]


# --------------------------------------------------------------------------------------------
# CSRF


def _post_rules(app: Any) -> list[tuple[str, str]]:
    out = []
    for rule in app.url_map.iter_rules():
        if "POST" in rule.methods or "DELETE" in rule.methods:
            out.append((rule.endpoint, rule.rule))
    return out


def _fill(rule: str, user_id: int) -> str:
    q, n = WEIGHTS.split("/")
    filled = (
        rule.replace("<quiz_id>", q)
        .replace("<name>", n)
        .replace("<int:user_id>", str(user_id))
        .replace("<int:regrade_id>", "1")
        .replace("<token>", "x" * 20)
        .replace("<path:anything>", "nothing")
        .replace("<int:context_row>", "1")
        .replace("<int:lineitem_id>", "1")
        .replace("<int:variant_id>", "1")
        .replace("<path:filename>", "app.css")
    )
    assert "<" not in filled, f"{rule}: a placeholder this test does not fill"
    return filled


#: POST routes without Flask-WTF's token, by design: the LMS posts them from its own site (OIDC
#: login initiation, the launch's id_token).  They are protected by the state cookie and the
#: platform's signature instead (every refusal: tests/test_lti_launch.py).
CSRF_EXEMPT = frozenset({"lti.login", "lti.launch"})


def test_every_form_post_without_or_with_another_sessions_csrf_token_is_400(app: Any) -> None:
    bob = signed_in(app, BOB)
    prof = signed_in(app, PROF)
    alice = signed_in(app, ALICE)
    alice_token = csrf_from(alice.get(url_of(WEIGHTS)).get_data(as_text=True))
    bob.get(url_of(WEIGHTS))
    prof.get(url_of(WEIGHTS))
    with app.app_context():
        bob_id = services.find_user(db.session, BOB).id
    form = {"answer": "1 2; 3 4", "via": "text", "username": BOB, "password": PW, "action": "x"}
    checked = 0
    for endpoint, rule in _post_rules(app):
        if endpoint.startswith("api.") or endpoint == "static":
            continue  # the API has its own CSRF rule (next test)
        if endpoint in CSRF_EXEMPT:
            continue
        url = _fill(rule, bob_id)
        anonymous = endpoint.startswith(("auth.login", "auth.register", "instructor_public."))
        client = app.test_client() if anonymous else (prof if "instructor" in endpoint else bob)
        if anonymous:
            other = app.test_client()
            other_token = csrf_from(other.get("/login").get_data(as_text=True))
            client.get("/login")
        else:
            other_token = alice_token
        before = row_counts(app)
        for token in (None, other_token):
            data = dict(form) if token is None else dict(form, csrf_token=token)
            resp = client.post(url, data=data)
            assert resp.status_code == 400, (url, token is None, resp.status_code)
            assert "security token" in resp.get_data(as_text=True), url
        assert row_counts(app) == before, url
        checked += 1
    assert checked >= 10  # login, register, logout, exercise, new-variant, instructor forms...


def test_session_api_writes_need_this_sessions_csrf_token_bearer_tokens_do_not(app: Any) -> None:
    alice = signed_in(app, ALICE)
    alice_csrf = alice.get("/api/v1/csrf-token").get_json()["csrf_token"]
    bob = signed_in(app, BOB)
    bob.get("/api/v1/csrf-token")
    url = f"/api/v1/exercises/{DECK}/submissions"
    before = row_counts(app)
    for headers in ({}, {"X-CSRFToken": alice_csrf}, {"X-CSRFToken": "garbage"}):
        for path, body in ((url, {"answer": "1 2"}), (url.replace("submissions", "variants"), {})):
            resp = bob.post(path, json=body, headers=headers)
            assert resp.status_code == 400 and "CSRF" in resp.get_json()["error"], (path, headers)
        resp = bob.delete("/api/v1/token", headers=headers)
        assert resp.status_code == 400
    assert row_counts(app) == before
    # A wrong bearer token never falls back to the session.
    resp = bob.post(url, json={"answer": "1 2"}, headers={"Authorization": "Bearer qz_nope"})
    assert resp.status_code == 401
    assert row_counts(app) == before
    # A valid bearer token needs no CSRF token (a cross-site page cannot set the header).
    tok = app.test_client().post("/api/v1/token", json={"username": BOB, "password": PW})
    resp = app.test_client().post(
        url, json={"answer": "1 2"}, headers={"Authorization": f"Bearer {tok.get_json()['token']}"}
    )
    assert resp.status_code == 201
    bob_csrf = bob.get("/api/v1/csrf-token").get_json()["csrf_token"]
    assert bob.post(url, json={"answer": "1 3"}, headers={"X-CSRFToken": bob_csrf}).status_code == (
        201
    )


# --------------------------------------------------------------------------------------------
# IDOR over every route


def _alice_history(app: Any) -> dict[str, Any]:
    alice = signed_in(app, ALICE)
    for ex in (WEIGHTS, SOFTROWS, SELF):
        assert post_text(alice, ex, f"{MARKER} <script>alert(1)</script>").status_code == 200
        assert post_text(alice, ex, "0 0 0; 0 0 0").status_code == 200  # a graded wrong answer
    with app.app_context():
        user = services.find_user(db.session, ALICE)
        ids = {"user_id": user.id}
        subs = db.session.query(Submission).filter_by(user_id=user.id).all()
        ids["submission_ids"] = [s.id for s in subs]
        ids["variant_ids"] = sorted({s.variant_id for s in subs})
    ids["needles"] = [
        n for ex in (WEIGHTS, SOFTROWS, SELF) for n in leak_needles(bank_variant_of(app, ALICE, ex))
    ]
    assert len(ids["needles"]) >= 6
    return ids


INSTRUCTOR_PREFIXES = ("instructor.", "lti_admin.")
STUDENT_ENDPOINTS = {
    "student.home",
    "student.progress",
    "student.exercise",
    "student.submissions",
    "student.new_variant",
    "auth.login",
    "auth.register",
    "auth.logout",
    "auth.account",
    "auth.change_password",
    "auth.sign_out_everywhere",
    # The LMS connection: public keys and configuration, the LMS's login and launch, a linked
    # quiz, the content picker (instructors only).
    "lti.jwks",
    "lti.config",
    "lti.login",
    "lti.launch",
    "lti.quiz",
    "lti.deep_link",
}
#: Pages the LMS frames before any session exists (the cookie check, the launch's answers):
#: ``frame-ancestors *`` instead of ``'none'`` (tests/test_lti_launch.py checks what they do).
FRAMABLE = frozenset({"lti.login", "lti.launch"})


def _assert_no_leak(resp: Any, alice: dict[str, Any], where: str) -> None:
    assert resp.status_code < 500, (where, resp.status_code)
    text = body_of(resp)
    assert MARKER not in text, where
    assert ALICE not in text.lower(), where
    for needle in alice["needles"]:
        assert needle not in text, (where, needle)


def test_idor_a_student_sees_nothing_of_another_student_on_any_route(app: Any) -> None:
    alice = _alice_history(app)
    bob = signed_in(app, BOB)
    bob_csrf = csrf_from(bob.get(url_of(DECK)).get_data(as_text=True))
    bob_api = bob.get("/api/v1/csrf-token").get_json()["csrf_token"]
    id_values = [alice["user_id"], *alice["submission_ids"], *alice["variant_ids"], 0, -1]
    classified = 0
    for rule in app.url_map.iter_rules():
        endpoint = rule.endpoint
        methods = sorted(rule.methods - {"HEAD", "OPTIONS"})
        urls = []
        for value in id_values:
            urls.append(_fill(rule.rule, value).replace("/1", f"/{value}", 0))
            urls.append(
                rule.rule.replace("<int:user_id>", str(value))
                .replace("<int:regrade_id>", str(value))
                .replace("<quiz_id>/<name>", WEIGHTS)
                .replace("<quiz_id>", WEIGHTS.split("/")[0])
                .replace("<token>", str(value))
                .replace("<int:context_row>", str(value))
                .replace("<int:lineitem_id>", str(value))
                .replace("<int:variant_id>", str(value))
                .replace("<path:anything>", f"exercises/{WEIGHTS}/submissions/{value}")
                .replace("<path:filename>", "../../etc/passwd")
            )
            assert "<" not in urls[-1], f"{rule.rule}: a placeholder this test does not fill"
        query = "?" + "&".join(
            f"{k}={alice['submission_ids'][0]}"
            for k in ("user_id", "user", "student", "variant", "variant_id", "submission", "id")
        )
        if endpoint.startswith(INSTRUCTOR_PREFIXES):
            for url in set(urls):
                for method in methods:
                    resp = bob.open(url + query, method=method, data={"csrf_token": bob_csrf})
                    # A negative id does not match <int:...>: 404 before any lookup.
                    expected = 404 if "/-1" in url else 403
                    assert resp.status_code == expected, (method, url, resp.status_code)
                    _assert_no_leak(resp, alice, url)
            classified += 1
        elif endpoint in STUDENT_ENDPOINTS or endpoint.startswith(("api.", "instructor_public.")):
            for url in set(urls):
                for method in methods:
                    if endpoint in ("auth.logout", "auth.sign_out_everywhere"):
                        continue  # they would sign Bob out (tested on their own below)
                    headers = {"X-CSRFToken": bob_api} if url.startswith("/api/") else {}
                    data = None if url.startswith("/api/") else {"csrf_token": bob_csrf}
                    resp = bob.open(url + query, method=method, data=data, headers=headers)
                    _assert_no_leak(resp, alice, f"{method} {url}")
            classified += 1
        elif endpoint == "static":
            resp = bob.get("/static/../../etc/passwd")
            assert resp.status_code == 404 and b"root:" not in resp.data
            classified += 1
        else:
            pytest.fail(f"route {rule.rule} ({endpoint}) is not covered by this IDOR test")
    assert classified == len(list(app.url_map.iter_rules()))
    # Bob's own pages show Bob's numbers, never Alice's progress.
    prog = bob.get("/api/v1/progress").get_json()
    weights = next(e for e in prog["exercises"] if e["id"] == WEIGHTS)
    assert weights["attempts_used"] == 0 and weights["status"] == "not_started"
    # The instructor does see Alice's submissions (the marker is findable, so the test can fail).
    prof = signed_in(app, PROF)
    page = prof.get(f"/instructor/students/{alice['user_id']}")
    assert page.status_code == 200 and MARKER in body_of(page)
    assert "<script>alert(1)</script>" not in page.get_data(as_text=True)


def test_anonymous_visitors_reach_no_page_but_login_register_reset(app: Any) -> None:
    anon = app.test_client()
    with app.app_context():
        uid = services.find_user(db.session, ALICE).id
    public = {"auth.login", "auth.register", "static", "instructor_public.reset"}
    # The API's own description is public, and holds no data of anyone.
    described = anon.get("/api/v1/openapi.json")
    assert described.status_code == 200 and described.get_json()["openapi"].startswith("3.1")
    assert ALICE not in described.get_data(as_text=True)
    public.add("api.openapi")
    public |= {"lti.jwks", "lti.config", "lti.login"}  # the LMS reaches them without a session
    for rule in app.url_map.iter_rules():
        if rule.endpoint in public or "GET" not in rule.methods:
            continue
        url = _fill(rule.rule, uid)
        resp = anon.get(url)
        if rule.endpoint == "instructor_public.leaderboard":
            assert resp.status_code in (302, 401, 404), url
        elif url.startswith("/api/"):
            assert resp.status_code in (401, 404), (url, resp.status_code)
        else:
            assert resp.status_code in (302, 401), (url, resp.status_code)
            if resp.status_code == 302:
                assert resp.headers["Location"].startswith("/login")


# --------------------------------------------------------------------------------------------
# The expected answer before the variant is finished


@pytest.mark.parametrize("exercise_id", [WEIGHTS, SOFTROWS, SELF])
def test_expected_answer_hidden_until_finished_html_api_and_errors(
    app: Any, exercise_id: str
) -> None:
    client = signed_in(app, ALICE)
    tok = app.test_client().post("/api/v1/token", json={"username": ALICE, "password": PW})
    auth = {"Authorization": f"Bearer {tok.get_json()['token']}"}
    api = f"/api/v1/exercises/{exercise_id}"
    needles = leak_needles(bank_variant_of(app, ALICE, exercise_id))
    assert needles

    def seen() -> list[Any]:
        return [
            client.get(url_of(exercise_id)),
            client.get("/"),
            client.get("/progress"),
            app.test_client().get(f"{api}/variant", headers=auth),
            app.test_client().get(f"{api}/submissions", headers=auth),
        ]

    responses = seen()
    responses.append(post_text(client, exercise_id, "not a matrix ]["))  # invalid
    responses.append(post_text(client, exercise_id, "1 2 3 4 5 6 7 8 9 10 11 12 13"))  # wrong shape
    responses.append(
        app.test_client().post(f"{api}/submissions", json={"cells": [["1", "x"]]}, headers=auth)
    )
    responses.append(
        app.test_client().post(f"{api}/submissions", json={"cells": "abc"}, headers=auth)
    )
    responses.append(app.test_client().post(f"{api}/variants", json={}, headers=auth))  # 409
    responses.append(post_text(client, exercise_id, "0 0 0; 0 0 0"))  # graded, wrong
    for resp in [*responses, *seen()]:
        text = body_of(resp)
        assert resp.status_code < 500
        for needle in needles:
            assert needle not in text, (resp.request.path, needle)
    # Use the remaining attempts: now the expected answer is shown (the needles are findable).
    for answer in ("1 1 1; 1 1 1", "2 2 2; 2 2 2", "3 3 3; 3 3 3"):
        post_text(client, exercise_id, answer)
    page = body_of(client.get(url_of(exercise_id)))
    variant = app.test_client().get(f"{api}/variant", headers=auth).get_json()
    assert variant["finished"] is True
    assert variant["expected"] == shown_answer_text(bank_variant_of(app, ALICE, exercise_id))
    assert any(n in page for n in needles)


# --------------------------------------------------------------------------------------------
# Rate limits


def _login_post(client: Any, username: str, password: str) -> Any:
    token = csrf_from(client.get("/login").get_data(as_text=True))
    return client.post(
        "/login", data={"csrf_token": token, "username": username, "password": password}
    )


def test_forty_wrong_logins_then_the_right_one_default_policy(app: Any) -> None:
    """bad-requests #9, default policy: 10 failures per account and address per 15 minutes."""
    client = app.test_client()
    statuses = []
    for _ in range(40):
        resp = _login_post(client, ALICE.upper(), "wrong password")
        statuses.append(resp.status_code)
    assert statuses[:10] == [200] * 10 and statuses[10:] == [429] * 30
    resp = _login_post(client, ALICE, PW)
    assert resp.status_code == 429
    message = resp.get_data(as_text=True)
    assert "Too many requests" in message and re.search(r"try again in 1[45] minutes", message)
    assert int(resp.headers["Retry-After"]) > 800
    # Another address is not locked out of the same account; the API token endpoint shares the
    # count (same account, same address).
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.1.2.3"
    assert _login_post(other, ALICE, PW).status_code == 302
    resp = app.test_client().post("/api/v1/token", json={"username": ALICE, "password": PW})
    assert resp.status_code == 429 and "try again in" in resp.get_json()["error"]


def test_the_right_password_works_after_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limiter's clock is time.time(); it is moved by hand here so that the test does not
    # depend on how long scrypt takes on the machine (a slow CI host once let the 3-second window
    # lapse mid-test).  Real elapsed time still counts, and is far below the 15-minute window.
    real_time = time.time
    skew = [0.0]
    monkeypatch.setattr(time, "time", lambda: real_time() + skew[0])
    app = synced_app(tmp_path, QUIZAPP_LIMIT_LOGIN_FAILURES="5 per 15 minutes")
    make_user(app, ALICE)
    client = app.test_client()
    results = [_login_post(client, ALICE, "nope nope").status_code for _ in range(20)]
    assert results[:5] == [200] * 5 and set(results[5:]) == {429}
    resp = _login_post(client, ALICE, PW)
    assert resp.status_code == 429  # even the right password waits out the window
    wait = float(resp.headers["Retry-After"])
    assert 0 < wait <= 15 * 60
    skew[0] += wait - 5
    assert _login_post(client, ALICE, PW).status_code == 429  # not yet
    skew[0] += 6
    assert _login_post(client, ALICE, PW).status_code == 302


def test_registration_and_submission_limits_are_configurable_and_say_so(tmp_path: Path) -> None:
    app = synced_app(
        tmp_path, QUIZAPP_LIMIT_REGISTER="2 per minute", QUIZAPP_LIMIT_SUBMIT="3/minute"
    )
    codes = []
    for i in range(3):
        anon = app.test_client()  # same address, new visitor each time
        token = csrf_from(anon.get("/register").get_data(as_text=True))
        resp = anon.post(
            "/register",
            data={"csrf_token": token, "username": f"u{i}x", "password": PW, "confirm": PW},
        )
        codes.append(resp.status_code)
    assert codes == [302, 302, 429]
    with app.app_context():
        assert services.find_user(db.session, "u2x") is None
    client = signed_in(app, "u0x")
    for i in range(3):
        assert post_text(client, DECK, f"{i} {i}").status_code == 200
    before = row_counts(app)["submissions"]
    page = client.get(url_of(DECK)).get_data(as_text=True)
    resp = client.post(
        url_of(DECK), data={"csrf_token": csrf_from(page), "answer": "9 9", "via": "text"}
    )
    assert resp.status_code == 429
    assert "Too many requests (3 per 1 minute)" in resp.get_data(as_text=True)
    assert "try again in" in resp.get_data(as_text=True)
    assert row_counts(app)["submissions"] == before


def test_rate_limit_storage_is_configurable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from quizapp.config import build_config

    monkeypatch.setenv("QUIZAPP_RATELIMIT_STORAGE_URI", "redis://limits.internal:6379")
    assert build_config(tmp_path)["RATELIMIT_STORAGE_URI"] == "redis://limits.internal:6379"
    monkeypatch.delenv("QUIZAPP_RATELIMIT_STORAGE_URI")
    assert build_config(tmp_path)["RATELIMIT_STORAGE_URI"] == "memory://"
    monkeypatch.setenv("QUIZAPP_LIMIT_LOGIN_FAILURES", "3 per hour")
    assert build_config(tmp_path)["QUIZAPP_LIMIT_LOGIN_FAILURES"] == "3 per hour"


# --------------------------------------------------------------------------------------------
# Headers, CSP, templates


TEMPLATES = REPO / "quizapp" / "web" / "templates"
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.I)
STYLE_ATTR = re.compile(r"<[^>]*\sstyle\s*=", re.I)


def test_csp_forbids_inline_script_and_style() -> None:
    from quizapp.web.security import CONTENT_SECURITY_POLICY as csp

    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"


def test_no_template_has_inline_script_handlers_or_style() -> None:
    files = list(TEMPLATES.rglob("*.html"))
    assert len(files) >= 8
    for path in files:
        text = path.read_text()
        assert not INLINE_SCRIPT.search(text), path
        assert not HANDLER.search(text), path
        assert not STYLE_ATTR.search(text), path
        assert "<style" not in text.lower(), path
        assert "javascript:" not in text.lower(), path


def test_every_page_has_the_security_headers_and_obeys_the_csp(app: Any) -> None:
    alice = _alice_history(app)
    prof = signed_in(app, PROF)
    student_client = signed_in(app, ALICE)
    pages = 0
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or rule.endpoint == "static":
            continue
        client = prof if rule.endpoint.startswith("instructor") else student_client
        for ex in (WEIGHTS, DECK):
            url = _fill(rule.rule.replace("<quiz_id>/<name>", ex), alice["user_id"])
            resp = client.get(url)
            assert resp.status_code < 500, url
            assert resp.headers["X-Content-Type-Options"] == "nosniff"
            if rule.endpoint in FRAMABLE:
                assert "frame-ancestors *" in resp.headers["Content-Security-Policy"], url
                assert "X-Frame-Options" not in resp.headers, url
            else:
                assert resp.headers["X-Frame-Options"] == "DENY"
                assert "frame-ancestors 'none'" in resp.headers["Content-Security-Policy"]
            if resp.mimetype == "text/html":
                text = resp.get_data(as_text=True)
                assert not INLINE_SCRIPT.search(text), url
                assert not HANDLER.search(text), url
                assert not STYLE_ATTR.search(text), url
                pages += 1
            resp.close()  # a streamed body (the gradebook CSV) ends its request context here
    assert pages >= 15


# --------------------------------------------------------------------------------------------
# Redirects and Host


@pytest.mark.parametrize(
    "target",
    [
        "https://elsewhere.example/",
        "//elsewhere.example/x",
        "/\\elsewhere.example",
        "\\\\elsewhere.example",
        "javascript:alert(1)",
        "/\r\nLocation: https://elsewhere.example",
        "/\x00//elsewhere.example",
        "http:/elsewhere.example",
        " //elsewhere.example",
    ],
)
def test_open_redirect_through_next_is_ignored(app: Any, target: str) -> None:
    from urllib.parse import quote

    client = app.test_client()
    resp = login(client, ALICE, PW, query="?next=" + quote(target, safe=""))
    assert resp.status_code == 302
    assert resp.headers["Location"] == "/"
    # Already signed in: GET /login?next=... redirects, also only to a local page.
    resp = client.get("/login?next=" + quote(target, safe=""))
    assert resp.status_code == 302 and resp.headers["Location"] == "/"
    assert "elsewhere" not in client.get("/login?next=" + quote(target, safe="")).headers.get(
        "Location", ""
    )


def test_a_local_next_is_followed(app: Any) -> None:
    resp = login(app.test_client(), ALICE, PW, query="?next=/progress")
    assert resp.status_code == 302 and resp.headers["Location"] == "/progress"


def test_host_header_of_another_site_never_reaches_a_link_or_redirect(app: Any) -> None:
    client = app.test_client()
    evil = {"Host": "elsewhere.example", "X-Forwarded-Host": "elsewhere.example"}
    for url in ("/", "/progress", "/login", "/register", url_of(DECK), "/instructor/"):
        resp = client.get(url, headers=evil)
        assert resp.status_code < 500
        assert "elsewhere.example" not in resp.headers.get("Location", "")
        assert b"elsewhere.example" not in resp.data
    resp = login(client, ALICE, PW, headers=evil)  # the session cookie is not sent to that host
    assert resp.status_code == 400 and "elsewhere.example" not in resp.headers.get("Location", "")


def test_trusted_hosts_refuse_other_host_headers(tmp_path: Path) -> None:
    app = synced_app(tmp_path, QUIZAPP_TRUSTED_HOSTS="quiz.example.edu, localhost")
    client = app.test_client()
    assert client.get("/login").status_code == 200
    assert client.get("/login", headers={"Host": "quiz.example.edu"}).status_code == 200
    resp = client.get("/login", headers={"Host": "elsewhere.example"})
    assert resp.status_code == 400 and b"not trusted" in resp.data
    assert resp.mimetype == "text/plain"  # the error page cannot build links for that host


# --------------------------------------------------------------------------------------------
# Safe YAML, sandboxed templates, expression escapes (the payloads missing from the bank tests)


def test_yaml_python_tags_are_refused_not_executed(tmp_path: Path) -> None:
    from quizapp.bank import BankError, load_exercise_source

    target = tmp_path / "pwned"
    for tag in ("!!python/object/apply:os.system", "!!python/object/new:os.system"):
        source = f'title: {tag} ["touch {target}"]\nkind: transpose\n'
        with pytest.raises(BankError):
            load_exercise_source("q/x", source)
        assert not target.exists()
    with pytest.raises(BankError):
        load_exercise_source("q/x", "title: !!python/name:os.system\nkind: transpose\n")


def test_no_unsafe_yaml_loader_anywhere_in_the_package() -> None:
    for path in (REPO / "quizapp").rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"yaml\.(load|load_all|unsafe_load|full_load)\(", text), path
        assert "yaml.Loader" not in text and "FullLoader" not in text and "UnsafeLoader" not in text


@pytest.mark.parametrize(
    "payload",
    [
        "__builtins__",
        "A.T.__class__",
        "A.__array_interface__",
        "().__class__.__bases__[0].__subclasses__()",
        "exec('1')",
        "compile('1', 'x', 'eval')",
        "globals()",
        "vars()",
        "np.load('/etc/passwd')",
        "A.dump('/tmp/x')",
        "breakpoint()",
        "[1 for _ in ()]",
    ],
)
def test_more_expression_escape_payloads_are_rejected(payload: str) -> None:
    from quizapp.bank.expression import ExpressionError, compile_expression

    with pytest.raises(ExpressionError):
        compile_expression(payload)


@pytest.mark.parametrize(
    "source",
    [
        "{{ A.__reduce__() }}",
        "{{ ''.__class__.__mro__ }}",
        "{% include '/etc/passwd' %}",
        "{% import 'os' as os %}",
        "{{ namespace.__init__.__globals__ }}",
        "{{ config }}{{ request.environ }}",
    ],
)
def test_more_template_escape_payloads_are_rejected(source: str) -> None:
    import numpy as np

    from quizapp.bank.template import TemplateError, render

    with pytest.raises(TemplateError):
        render(source, {"A": np.eye(2)})


def test_user_rows_never_hold_a_plain_password(app: Any) -> None:
    with app.app_context():
        for user in db.session.query(User):
            assert PW not in (user.password_hash or "")


# --------------------------------------------------------------------------------------------
# Sessions that end (issue 13, major 3): a password change or reset, signing out and "sign out
# everywhere" end every session, remember-me cookie (copies included) and API token.


def _signed_in_remembered(app: Any, name: str, password: str = PW) -> Any:
    client = app.test_client()
    token = csrf_from(client.get("/login").get_data(as_text=True))
    resp = client.post(
        "/login",
        data={"csrf_token": token, "username": name, "password": password, "remember": "y"},
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)[:300]
    return client


def _copies(app: Any, client: Any) -> tuple[Any, Any]:
    """Two new clients: one with a copy of ``client``'s session cookie, one with a copy of its
    remember-me cookie only (what an attacker who copied them holds)."""
    session_copy, remember_copy = app.test_client(), app.test_client()
    session_copy.set_cookie("session", client.get_cookie("session").value)
    remember_copy.set_cookie("remember_token", client.get_cookie("remember_token").value)
    return session_copy, remember_copy


def _is_signed_in(client: Any) -> bool:
    resp = client.get("/progress")
    assert resp.status_code in (200, 302), resp.status_code
    return resp.status_code == 200


def _api_token(app: Any, name: str, password: str = PW) -> dict[str, str]:
    resp = app.test_client().post("/api/v1/token", json={"username": name, "password": password})
    assert resp.status_code == 201
    return {"Authorization": f"Bearer {resp.get_json()['token']}"}


def _token_works(app: Any, auth: dict[str, str]) -> bool:
    status = app.test_client().get("/api/v1/progress", headers=auth).status_code
    assert status in (200, 401), status
    return status == 200


def _reset_link(app: Any, student: str) -> str:
    prof = signed_in(app, PROF)
    with app.app_context():
        sid = services.find_user(db.session, student).id
    token = csrf_from(prof.get(f"/instructor/students/{sid}").get_data(as_text=True))
    page = prof.post(f"/instructor/students/{sid}/reset-link", data={"csrf_token": token})
    assert page.status_code == 200
    return re.search(r"/reset/([\w-]+)", page.get_data(as_text=True)).group(1)


def test_a_password_reset_ends_every_session_remember_cookie_and_token(app: Any) -> None:
    browser = _signed_in_remembered(app, ALICE)
    session_copy, remember_copy = _copies(app, browser)
    auth = _api_token(app, ALICE)
    assert all(map(_is_signed_in, (browser, session_copy, remember_copy)))
    assert _token_works(app, auth)

    link = _reset_link(app, ALICE)
    resetter = app.test_client()
    token = csrf_from(resetter.get(f"/reset/{link}").get_data(as_text=True))
    new = "a brand new password"
    resp = resetter.post(
        f"/reset/{link}", data={"csrf_token": token, "password": new, "confirm": new}
    )
    assert resp.status_code == 302
    assert _is_signed_in(resetter)  # the browser that reset it is signed in with the new version
    assert not any(map(_is_signed_in, (browser, session_copy, remember_copy)))
    assert not _token_works(app, auth)
    assert _token_works(app, _api_token(app, ALICE, new))


def test_a_password_change_ends_the_other_sessions_and_tokens_not_this_one(app: Any) -> None:
    browser = _signed_in_remembered(app, ALICE)
    other_device = _signed_in_remembered(app, ALICE)
    session_copy, remember_copy = _copies(app, browser)
    auth = _api_token(app, ALICE)
    page = browser.get("/account")
    assert page.status_code == 200 and "Change your password" in page.get_data(as_text=True)
    token = csrf_from(page.get_data(as_text=True))
    wrong = browser.post(
        "/account/password",
        data={"csrf_token": token, "current": "not it at all", "password": "x" * 12,
              "confirm": "x" * 12},
    )  # fmt: skip
    assert wrong.status_code == 400 and "current password is not right" in wrong.get_data(
        as_text=True
    )
    assert _is_signed_in(other_device) and _token_works(app, auth)  # nothing changed
    new = "another long password"
    resp = browser.post(
        "/account/password",
        data={"csrf_token": token, "current": PW, "password": new, "confirm": new},
    )
    assert resp.status_code == 302
    assert _is_signed_in(browser)
    assert not any(map(_is_signed_in, (other_device, session_copy, remember_copy)))
    assert not _token_works(app, auth)
    with app.app_context():
        assert services.authenticate(db.session, ALICE, PW) is None
        assert services.authenticate(db.session, ALICE, new) is not None


def test_a_reset_link_issued_before_a_password_change_no_longer_opens_the_account(
    app: Any,
) -> None:
    """A fresh tester's finding: a link issued before the student changed their password still
    worked afterwards, and whoever held it set a password and signed in."""
    from quizapp import instructor as inst

    link = _reset_link(app, ALICE)
    browser = signed_in(app, ALICE)
    token = csrf_from(browser.get("/account").get_data(as_text=True))
    new = "my own new password"
    resp = browser.post(
        "/account/password",
        data={"csrf_token": token, "current": PW, "password": new, "confirm": new},
    )
    assert resp.status_code == 302
    attacker = app.test_client()
    assert attacker.get(f"/reset/{link}").status_code == 404
    with app.app_context():
        with pytest.raises(services.NotFound):
            inst.use_reset(db.session, link, "the attackers password")
        assert services.authenticate(db.session, ALICE, new) is not None
    # The same after the server's set-password, and after another link was used.
    link = _reset_link(app, ALICE)
    with app.app_context():
        services.set_password(db.session, services.find_user(db.session, ALICE).id, "x" * 12)
        assert inst.find_reset(db.session, link) is None
        first, second = (inst.create_reset_link(db.session, services.find_user(db.session, ALICE).id)
                         for _ in range(2))  # fmt: skip
        assert inst.find_reset(db.session, first) is None  # a new link replaces the earlier one
        inst.use_reset(db.session, second, "y" * 12)
        assert inst.find_reset(db.session, second) is None


def test_signing_out_ends_copies_of_the_cookies(app: Any) -> None:
    browser = _signed_in_remembered(app, ALICE)
    session_copy, remember_copy = _copies(app, browser)
    auth = _api_token(app, ALICE)
    token = csrf_from(browser.get("/").get_data(as_text=True))
    assert browser.post("/logout", data={"csrf_token": token}).status_code == 302
    assert not any(map(_is_signed_in, (browser, session_copy, remember_copy)))
    assert _token_works(app, auth)  # plain sign-out leaves API tokens alone
    assert _is_signed_in(signed_in(app, ALICE))  # and signing in again works


def test_sign_out_everywhere_on_the_students_own_page(app: Any) -> None:
    browser = _signed_in_remembered(app, ALICE)
    other_device = _signed_in_remembered(app, ALICE)
    session_copy, remember_copy = _copies(app, other_device)
    auth = _api_token(app, ALICE)
    bob = signed_in(app, BOB)
    token = csrf_from(browser.get("/account").get_data(as_text=True))
    resp = browser.post("/account/sign-out-everywhere", data={"csrf_token": token})
    assert resp.status_code == 302 and resp.headers["Location"].startswith("/login")
    clients = (browser, other_device, session_copy, remember_copy)
    assert not any(map(_is_signed_in, clients))
    assert not _token_works(app, auth)
    assert _is_signed_in(bob)  # another student is untouched


def test_an_instructor_signs_a_student_out_everywhere_but_not_another_instructor(
    app: Any,
) -> None:
    alice = _signed_in_remembered(app, ALICE)
    auth = _api_token(app, ALICE)
    prof = signed_in(app, PROF)
    make_user(app, "otherprof", role="instructor")
    colleague = signed_in(app, "otherprof")
    with app.app_context():
        aid = services.find_user(db.session, ALICE).id
        cid = services.find_user(db.session, "otherprof").id
    page = prof.get(f"/instructor/students/{aid}")
    assert "Sign out everywhere" in page.get_data(as_text=True)
    token = csrf_from(page.get_data(as_text=True))
    resp = prof.post(f"/instructor/students/{aid}/sign-out", data={"csrf_token": token})
    assert resp.status_code == 302
    assert not _is_signed_in(alice) and not _token_works(app, auth)
    resp = prof.post(f"/instructor/students/{cid}/sign-out", data={"csrf_token": token})
    assert resp.status_code == 403
    assert _is_signed_in(colleague)
    # The colleague's page offers no button that can only be refused; it names the command.
    colleague_page = prof.get(f"/instructor/students/{cid}").get_data(as_text=True)
    assert "Sign out everywhere" not in colleague_page
    assert "New password-reset link" not in colleague_page
    assert "quizapp set-password otherprof" in colleague_page
    bob = signed_in(app, BOB)  # and a student cannot use the route at all
    bob_token = csrf_from(bob.get("/").get_data(as_text=True))
    resp = bob.post(f"/instructor/students/{aid}/sign-out", data={"csrf_token": bob_token})
    assert resp.status_code == 403 and _is_signed_in(bob)


def test_reset_links_are_for_students_only(app: Any) -> None:
    """Any instructor could issue a reset link for another instructor's account, i.e. take it
    over; now 403, and the server's administrator sets an instructor's password with
    ``quizapp set-password``."""
    make_user(app, "otherprof", role="instructor")
    prof = signed_in(app, PROF)
    with app.app_context():
        cid = services.find_user(db.session, "otherprof").id
    token = csrf_from(prof.get(f"/instructor/students/{cid}").get_data(as_text=True))
    resp = prof.post(f"/instructor/students/{cid}/reset-link", data={"csrf_token": token})
    assert resp.status_code == 403
    assert "for students only" in resp.get_data(as_text=True)
    assert "quizapp set-password" in resp.get_data(as_text=True)
    with app.app_context():
        from quizapp.models_instructor import PasswordReset

        assert db.session.query(PasswordReset).filter_by(user_id=cid).count() == 0


def test_set_password_command_resets_an_instructor_and_ends_their_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from quizapp.cli import main

    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'cli.sqlite'}")
    runner = CliRunner()
    res = runner.invoke(
        main, ["create-user", "Prof", "--role", "instructor", "--password-stdin"],
        input=PW + "\n",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    from quizapp.web import create_app

    app = create_app({"TESTING": True})
    client = signed_in(app, "Prof")
    assert _is_signed_in(client)
    res = runner.invoke(main, ["set-password", "prof", "--password-stdin"], input="short\n")
    assert res.exit_code == 1 and "at least 8 characters" in res.output
    res = runner.invoke(main, ["set-password", "nobody", "--password-stdin"], input=PW + "\n")
    assert res.exit_code == 1 and "There is no user 'nobody'" in res.output
    res = runner.invoke(
        main, ["set-password", "prof", "--password-stdin"], input="the new password\n"
    )
    assert res.exit_code == 0 and "sessions and API tokens ended" in res.output
    assert not _is_signed_in(client)
    with app.app_context():
        assert services.authenticate(db.session, "prof", "the new password") is not None


def test_two_simultaneous_uses_of_one_reset_link_only_one_succeeds(db_url: str, tmp_path: Path):
    """On PostgreSQL both used to succeed (read used_at, then write it); the link is now spent
    by one conditional UPDATE.  Three trials, two threads released together each time."""
    import threading

    from quizapp import instructor as inst

    app = synced_app(tmp_path)
    sid = make_user(app, ALICE)

    def use(barrier: threading.Barrier, token: str, password: str, outcomes: list[str]) -> None:
        with app.app_context():
            barrier.wait()
            try:
                inst.use_reset(db.session, token, password)
                outcomes.append(password)
            except services.NotFound:
                outcomes.append("refused")
            finally:
                db.session.remove()

    for trial in range(3):
        with app.app_context():
            token = inst.create_reset_link(db.session, sid)
        barrier = threading.Barrier(2)
        outcomes: list[str] = []
        threads = [
            threading.Thread(
                target=use, args=(barrier, token, f"password {trial} {k} long", outcomes)
            )
            for k in (1, 2)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(outcomes) == 2 and outcomes.count("refused") == 1, outcomes
        winner = next(o for o in outcomes if o != "refused")
        with app.app_context():
            assert services.authenticate(db.session, ALICE, winner) is not None


# --------------------------------------------------------------------------------------------
# PostgreSQL-only 500s (issue 13, minor): ids past 2**31, NUL in an excusal reason.


def test_ids_past_the_id_columns_range_are_404_on_both_databases(db_url: str, tmp_path: Path):
    app = synced_app(tmp_path)
    make_user(app, ALICE)
    make_user(app, PROF, role="instructor")
    prof = signed_in(app, PROF)
    token = csrf_from(prof.get("/instructor/").get_data(as_text=True))
    rules = [r for r in app.url_map.iter_rules() if "<int:" in r.rule]
    assert len(rules) >= 5
    for rule in rules:
        for big in (2**31, 2**31 + 7, 2**63 - 1, 2**63, 10**30):
            url = re.sub(r"<int:\w+>", str(big), rule.rule)
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                resp = prof.open(url, method=method, data={"csrf_token": token})
                assert resp.status_code == 404, (method, url, resp.status_code)


def test_a_nul_in_an_excusal_reason_is_a_clear_400_on_both_databases(
    db_url: str, tmp_path: Path
) -> None:
    app = synced_app(tmp_path)
    sid = make_user(app, ALICE)
    make_user(app, PROF, role="instructor")
    prof = signed_in(app, PROF)
    token = csrf_from(prof.get(f"/instructor/students/{sid}").get_data(as_text=True))
    url = f"/instructor/students/{sid}/excusals"
    for reason in ("sick\x00note", "x" * 501):
        resp = prof.post(
            url,
            data={"csrf_token": token, "exercise_id": DECK, "action": "excuse", "reason": reason},
        )
        assert resp.status_code == 400, resp.status_code
        assert "reason" in resp.get_data(as_text=True)
    with app.app_context():
        from quizapp.models_instructor import Excusal

        assert db.session.query(Excusal).count() == 0
    resp = prof.post(
        url, data={"csrf_token": token, "exercise_id": DECK, "action": "excuse", "reason": "ok"}
    )
    assert resp.status_code == 302


def test_pages_of_a_signed_in_user_and_api_answers_are_not_cached(app: Any) -> None:
    alice = _alice_history(app)
    client = signed_in(app, ALICE)
    prof = signed_in(app, PROF)
    seen = 0
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or rule.endpoint == "static":
            continue
        who = prof if rule.endpoint.startswith("instructor") else client
        url = _fill(rule.rule.replace("<quiz_id>/<name>", WEIGHTS), alice["user_id"])
        resp = who.get(url)
        if resp.status_code < 400 or resp.status_code == 409:
            assert resp.headers.get("Cache-Control") == "no-store", (url, resp.headers)
            seen += 1
        resp.close()
    assert seen >= 15
    auth = _api_token(app, ALICE)
    resp = app.test_client().get("/api/v1/progress", headers=auth)
    assert resp.status_code == 200 and resp.headers["Cache-Control"] == "no-store"
    anon = app.test_client()
    assert "no-store" not in anon.get("/login").headers.get("Cache-Control", "")
    assert "no-store" not in client.get("/static/style.css").headers.get("Cache-Control", "")


# --------------------------------------------------------------------------------------------
# Sign-in limits that cannot be used to lock someone out (issue 13, minor): a classmate behind
# the same address (a classroom NAT), many addresses, a whole class signing in at once.


def test_a_classmate_behind_the_same_address_cannot_lock_out_a_students_own_browser(
    app: Any,
) -> None:
    own = app.test_client()  # Alice's laptop: she signed in on it before
    own.environ_base["REMOTE_ADDR"] = "10.9.9.9"
    assert _login_post(own, ALICE, PW).status_code == 302
    token = csrf_from(own.get("/").get_data(as_text=True))
    assert own.post("/logout", data={"csrf_token": token}).status_code == 302
    mallory = app.test_client()  # same classroom, same address
    mallory.environ_base["REMOTE_ADDR"] = "10.9.9.9"
    statuses = [_login_post(mallory, ALICE, "guess guess").status_code for _ in range(20)]
    assert statuses[:10] == [200] * 10 and set(statuses[10:]) == {429}
    # A new browser at that address is locked out for the window; Alice's own browser is not,
    # and its own wrong passwords are limited on their own.
    newcomer = app.test_client()
    newcomer.environ_base["REMOTE_ADDR"] = "10.9.9.9"
    assert _login_post(newcomer, ALICE, PW).status_code == 429
    assert _login_post(own, ALICE, "typo typo").status_code == 200
    assert _login_post(own, ALICE, PW).status_code == 302
    # A device cookie is Alice's only: a forged or another account's one counts for nothing.
    forged = app.test_client()
    forged.environ_base["REMOTE_ADDR"] = "10.9.9.9"
    value = own.get_cookie("quizapp_device").value
    forged.set_cookie("quizapp_device", value[:-3] + ("AAA" if value[-3:] != "AAA" else "BBB"))
    assert _login_post(forged, ALICE, PW).status_code == 429
    bob_browser = signed_in(app, BOB, addr="10.9.9.9")
    token = csrf_from(bob_browser.get("/").get_data(as_text=True))
    assert bob_browser.post("/logout", data={"csrf_token": token}).status_code == 302
    assert _login_post(bob_browser, ALICE, PW).status_code == 429  # Bob's cookie is Bob's


def test_guessing_one_account_from_many_addresses_is_slowed_down_never_locked_for_good(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_time = time.time
    skew = [0.0]
    monkeypatch.setattr(time, "time", lambda: real_time() + skew[0])
    app = synced_app(tmp_path)
    make_user(app, ALICE)
    own = signed_in(app, ALICE, addr="10.0.0.1")
    own.post("/logout", data={"csrf_token": csrf_from(own.get("/").get_data(as_text=True))})
    statuses = []
    for i in range(30):  # one wrong password from each of 30 addresses
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = f"10.1.{i}.1"
        statuses.append(_login_post(client, ALICE, "guess guess").status_code)
    assert statuses[:20] == [200] * 20 and set(statuses[20:]) == {429}
    fresh = app.test_client()
    fresh.environ_base["REMOTE_ADDR"] = "10.2.0.1"
    resp = _login_post(fresh, ALICE, PW)
    assert resp.status_code == 429 and 0 < int(resp.headers["Retry-After"]) <= 15 * 60
    assert _login_post(own, ALICE, PW).status_code == 302  # her own browser is not slowed
    skew[0] += 15 * 60 + 5  # the window ends: the right password works from anywhere
    assert _login_post(fresh, ALICE, PW).status_code == 302


def test_a_whole_class_behind_one_address_signs_in_at_once(tmp_path: Path) -> None:
    """The per-address limit counted successful sign-ins too (30 a minute): the 31st student of
    a class behind one NAT got 429.  Now only wrong passwords count."""
    app = synced_app(tmp_path)
    with app.app_context():
        for i in range(40):
            services.create_user(db.session, f"class{i}", PW)
    for i in range(40):
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = "10.3.3.3"
        assert _login_post(client, f"class{i}", PW).status_code == 302, i


def _race_the_expiry_timer(storage_class: type) -> list[BaseException]:
    """Two threads count their first hits on a fresh in-memory rate-limit storage, in the one
    order that breaks limits' MemoryStorage: thread A replaces the expiry timer and, before it
    starts it, thread B replaces and starts its own; A then starts B's timer a second time.  The
    pause is made with a ``timer`` property (A waits in its setter until B started a timer, at
    most 1 s).  Returns the errors the two hits raised."""
    import threading

    b_started = threading.Event()

    class Instrumented(storage_class):  # type: ignore[misc, valid-type]
        @property
        def timer(self) -> Any:
            return self.__dict__["_timer"]

        @timer.setter
        def timer(self, value: Any) -> None:
            self.__dict__["_timer"] = value
            if threading.current_thread().name == "A":
                b_started.wait(1.0)

    real_timer = threading.Timer

    class Signalling(real_timer):  # type: ignore[misc, valid-type]
        def start(self) -> None:
            super().start()
            if threading.current_thread().name == "B":
                b_started.set()

    storage = Instrumented("memory://")
    storage.timer.join()  # the first timer has run: the next hit replaces it
    errors: list[BaseException] = []

    def hit(key: str) -> None:
        try:
            storage.incr(key, 60)
        except RuntimeError as exc:
            errors.append(exc)

    threading.Timer = Signalling  # type: ignore[misc]
    try:
        a = threading.Thread(target=hit, args=("a",), name="A")
        b = threading.Thread(target=hit, args=("b",), name="B")
        a.start()
        time.sleep(0.05)  # A is waiting in the setter
        b.start()
        a.join(5)
        b.join(5)
    finally:
        threading.Timer = real_timer  # type: ignore[misc]
    return errors


def test_the_in_memory_rate_limit_storage_survives_two_first_hits_at_once() -> None:
    """Under load a submit answered 500 "threads can only be started once": limits' memory
    storage (5.8.0) started one expiry timer twice; the race above raises exactly that with
    ``limits.storage.memory.MemoryStorage``.  memory:// now gets the locked subclass."""
    from limits.storage import storage_from_string

    from quizapp.web.extensions import ThreadSafeMemoryStorage

    assert isinstance(storage_from_string("memory://"), ThreadSafeMemoryStorage)
    assert _race_the_expiry_timer(ThreadSafeMemoryStorage) == []
