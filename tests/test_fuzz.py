"""Random requests through the test client (hypothesis): never a 500, and afterwards the SQLite
database passes ``PRAGMA integrity_check`` and every progress row equals what its submissions
imply (issue 6).

Requests: random methods; paths from the app's url_map with random ids (real exercise ids, other
users' ids, negative, huge, traversal, random text); random query strings, headers, form fields
(with or without a valid CSRF token) and JSON or raw bodies; as an anonymous visitor, a student
(session or bearer token) or an instructor.  Rate limits are off so every request reaches a view.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_harness import check_invariants
from test_web_support import csrf_from, login, synced_app

from quizapp import services
from quizapp.models import Exercise, db

PW = "fuzz password 123"
#: Requests per run (``QUIZAPP_FUZZ_EXAMPLES`` overrides, e.g. 20000 for a long local run).
EXAMPLES = int(os.environ.get("QUIZAPP_FUZZ_EXAMPLES", "2000"))
_STATE: dict[str, Any] = {}


def state() -> dict[str, Any]:
    """One app for the whole fuzz run (hypothesis calls the test thousands of times)."""
    if not _STATE:
        tmp = Path(tempfile.mkdtemp(prefix="quizapp-fuzz-"))
        app = synced_app(tmp, RATELIMIT_ENABLED=False)
        with app.app_context():
            services.create_user(db.session, "fuzzstu", PW)
            services.create_user(db.session, "fuzzprof", PW, role="instructor")
            services.create_user(db.session, "other", PW)
            exercise_ids = sorted(e.id for e in db.session.query(Exercise))
        clients: dict[str, Any] = {"anon": app.test_client()}
        csrf: dict[str, str] = {}
        for name in ("fuzzstu", "fuzzprof"):
            client = app.test_client()
            assert login(client, name, PW).status_code == 302
            clients[name] = client
            page = client.get(f"/exercises/{exercise_ids[0]}").get_data(as_text=True)
            csrf[name] = csrf_from(page)
        tok = app.test_client().post("/api/v1/token", json={"username": "fuzzstu", "password": PW})
        _STATE.update(
            app=app,
            clients=clients,
            csrf=csrf,
            token=tok.get_json()["token"],
            exercise_ids=exercise_ids,
            rules=[r for r in app.url_map.iter_rules() if r.endpoint != "static"],
            statuses={},
        )
    return _STATE


texts = st.text(max_size=40)
hostile = st.sampled_from(
    [
        "../../etc/passwd",
        "..%2F..%2Fetc%2Fpasswd",
        "%00",
        "-1",
        "0",
        "1",
        "2",
        "3",
        "99999999999999999999999",
        "<script>alert(1)</script>",
        "\u202e",
        "ａ",
        "a" * 300,
    ]
)
segment = st.one_of(hostile, texts.filter(lambda s: "/" not in s and "?" not in s and "#" not in s))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(texts, inner, max_size=5),
    max_leaves=30,
)
answer_bodies = st.one_of(
    st.fixed_dictionaries({"answer": st.one_of(texts, hostile, json_values)}),
    st.fixed_dictionaries(
        {"cells": st.lists(st.lists(st.one_of(texts, hostile), max_size=4), max_size=4)}
    ),
    st.dictionaries(st.sampled_from(["answer", "cells", "username", "password", "x"]), json_values),
    json_values,
)


@st.composite
def requests(draw: Any) -> dict[str, Any]:
    s = state()
    rule = draw(st.sampled_from(s["rules"]))
    url = rule.rule
    for arg in rule.arguments:
        if arg == "quiz_id" or arg == "name":
            continue
        value = draw(segment)
        url = url.replace(f"<int:{arg}>", quote(value, safe="")).replace(
            f"<path:{arg}>", quote(value, safe="/")
        )
        url = url.replace(f"<{arg}>", quote(value, safe=""))
    if "<quiz_id>/<name>" in url:
        if draw(st.booleans()):
            ex = draw(st.sampled_from(s["exercise_ids"]))
        else:
            ex = quote(draw(segment), safe="") + "/" + quote(draw(segment), safe="")
        url = url.replace("<quiz_id>/<name>", ex)
    methods = sorted(rule.methods - {"OPTIONS"})
    method = draw(
        st.one_of(
            st.sampled_from(methods),
            st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
        )
    )
    who = draw(st.sampled_from(["anon", "fuzzstu", "fuzzprof", "token", "badtoken"]))
    headers: dict[str, str] = {}
    if who == "token":
        headers["Authorization"] = f"Bearer {s['token']}"
    elif who == "badtoken":
        headers["Authorization"] = draw(
            st.sampled_from(["Bearer ", "Bearer x", "Basic YTpi", "Bearer " + "x" * 500])
        )
    if who in ("fuzzstu", "fuzzprof") and draw(st.booleans()):
        headers["X-CSRFToken"] = s["csrf"][who]
    if draw(st.booleans()):
        headers[
            draw(st.sampled_from(["Accept", "Referer", "X-Forwarded-For", "Origin", "Cookie"]))
        ] = draw(texts).replace("\n", " ").replace("\r", " ")
    kind = draw(st.sampled_from(["none", "json", "form", "raw"]))
    kwargs: dict[str, Any] = {}
    if kind == "json":
        kwargs["data"] = json.dumps(draw(answer_bodies))
        kwargs["content_type"] = draw(
            st.sampled_from(["application/json", "text/plain", "application/json; charset=latin-1"])
        )
    elif kind == "form":
        form = draw(
            st.dictionaries(
                st.one_of(
                    st.sampled_from(
                        [
                            "answer",
                            "via",
                            "username",
                            "password",
                            "confirm",
                            "action",
                            "exercise",
                            "csrf_token",
                            "cell-0-0",
                            "cell-1-0",
                            "cell-0-1",
                            "seed",
                            "next",
                            "file",
                        ]
                    ),
                    texts,
                ),
                st.one_of(texts, hostile),
                max_size=6,
            )
        )
        if who in ("fuzzstu", "fuzzprof") and draw(st.booleans()):
            form["csrf_token"] = s["csrf"][who]
        kwargs["data"] = form
    elif kind == "raw":
        kwargs["data"] = draw(st.binary(max_size=200))
        kwargs["content_type"] = draw(
            st.sampled_from(
                [
                    "application/json",
                    "application/x-www-form-urlencoded",
                    "multipart/form-data; boundary=x",
                    "application/octet-stream",
                ]
            )
        )
    if draw(st.booleans()):
        query = draw(
            st.dictionaries(
                st.sampled_from(
                    ["next", "sort", "page", "quiz", "seed", "q", "user_id", "per_page"]
                ),
                st.one_of(texts, hostile),
                max_size=3,
            )
        )
        url += "?" + "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in query.items())
    client_name = who if who in ("fuzzstu", "fuzzprof") else "anon"
    return {"client": client_name, "method": method, "url": url, "headers": headers, **kwargs}


@st.composite
def submissions(draw: Any) -> dict[str, Any]:
    """A well-formed submit (API with the token, or the page's form with the CSRF token) with a
    random answer, so the fuzz run also stores submissions and moves progress rows."""
    s = state()
    ex = draw(st.sampled_from(s["exercise_ids"]))
    answer = draw(st.one_of(texts, hostile, st.sampled_from(["1", "1 2", "1 2; 3 4", "[1, 2]"])))
    if draw(st.booleans()):
        return {
            "client": "anon",
            "method": "POST",
            "url": f"/api/v1/exercises/{ex}/submissions",
            "headers": {"Authorization": f"Bearer {s['token']}"},
            "json": draw(st.sampled_from([{"answer": answer}, {"cells": [[answer, answer]]}])),
        }
    return {
        "client": "fuzzstu",
        "method": "POST",
        "url": f"/exercises/{ex}",
        "headers": {},
        "data": {"csrf_token": s["csrf"]["fuzzstu"], "answer": answer, "via": "text"},
    }


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@given(req=st.one_of(requests(), submissions()))
def test_random_requests_never_500(req: dict[str, Any]) -> None:
    s = state()
    client = s["clients"][req.pop("client")]
    resp = client.open(req.pop("url"), method=req.pop("method"), **req)
    s["statuses"][resp.status_code] = s["statuses"].get(resp.status_code, 0) + 1
    assert resp.status_code < 500, resp.get_data(as_text=True)[:300]


def test_after_fuzzing_the_database_is_intact_and_consistent() -> None:
    """Runs after the fuzz test (same module, file order): integrity and progress invariants."""
    s = state()
    counts = check_invariants(s["app"].config["SQLALCHEMY_DATABASE_URI"])
    statuses = s["statuses"]
    if statuses:  # the fuzz test ran first in this session
        assert sum(statuses.values()) >= EXAMPLES // 2
        assert set(statuses) & {200, 201}, statuses  # some requests went through to a view
        assert counts["submissions"] >= 1, statuses
