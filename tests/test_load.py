"""The real server (gunicorn, several workers, loopback) under concurrent load (issue 6).

- 20 concurrent submits to one 3-attempt variant: the same answer counts once; 20 different
  wrong answers use exactly 3 attempts (the rest 409); never a 500 (SQLite, and PostgreSQL when
  ``QUIZAPP_TEST_POSTGRES_URL`` is set).
- 16 clients x 25 submits: every acknowledged (201) submission is stored exactly once as sent,
  every refused one is not stored, every progress row equals what its submissions imply, and no
  "database is locked" reaches a client.
- A request with a Content-Length larger than its body, and headers that never finish, are
  answered 408 and dropped at their deadline while others are served meanwhile.

Bounded: each test under ~60 s on two cores; loopback only.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from server_harness import LiveServer, check_invariants, prepared_app, stored_answers
from test_postgres_support import skip_or_fail
from test_web_support import make_app

from quizapp import services
from quizapp.models import db

pytestmark = [
    pytest.mark.slow,
]

PW = "load test password"
DECK = "01-linear-systems/05-deck-system"
TWO = "01-linear-systems/06-two-by-two"
TRANSPOSE = "03-transpose-and-products/01-transpose"
UNLIMITED = {
    "QUIZAPP_LIMIT_LOGIN": "10000 per minute",
    "QUIZAPP_LIMIT_SUBMIT": "10000 per minute",
    "QUIZAPP_LIMIT_LOGIN_FAILURES": "10000 per minute",
}


def run_threads(n: int, target: Callable[[int], Any]) -> list[Any]:
    """Run ``target(i)`` for i in range(n) in n threads released at once; their results."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = target(i)
        except Exception as exc:  # recorded, asserted by the caller
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """(app, database URL) with the bank synced and students ``s0``..``s3`` created."""
    if request.param == "postgres":
        url = os.environ.get("QUIZAPP_TEST_POSTGRES_URL")
        if not url:
            skip_or_fail("postgres", "QUIZAPP_TEST_POSTGRES_URL is not set: no PostgreSQL")
        from quizapp.config import normalize_database_url

        url = normalize_database_url(url)
        app = make_app(tmp_path, SQLALCHEMY_DATABASE_URI=url)
        with app.app_context():
            report = services.sync_folder(db.session, Path(app.config["QUIZAPP_EXERCISES"]))
            assert report.errors == []
    else:
        app = prepared_app(tmp_path)
        url = app.config["SQLALCHEMY_DATABASE_URI"]
    with app.app_context():
        for i in range(4):
            services.create_user(db.session, f"s{i}", PW)
        db.session.remove()
        db.engine.dispose()
    yield app, url
    if request.param == "postgres":
        from flask_migrate import downgrade

        from quizapp.web.database import MIGRATIONS_DIR

        with app.app_context():
            db.session.remove()
            downgrade(directory=str(MIGRATIONS_DIR), revision="base")
            db.engine.dispose()


def test_twenty_concurrent_submits_cannot_race_past_the_attempts(backend: Any, tmp_path: Path):
    app, url = backend
    with LiveServer(tmp_path, workers=3, threads=4, database_url=url, env=UNLIMITED) as server:
        tok_same, tok_diff = server.token("s0", PW), server.token("s1", PW)
        path = f"/api/v1/exercises/{DECK}/submissions"

        # The same (wrong) answer 20 times at once: one graded attempt, 19 identical resubmissions.
        same = run_threads(20, lambda i: server.api("POST", path, {"answer": "0.5 0.25"}, tok_same))
        statuses = [r[0] if isinstance(r, tuple) else r for r in same]
        assert all(s == 201 for s in statuses), statuses
        bodies = [r[1] for r in same]
        assert sum(b["used_attempt"] for b in bodies) == 1
        assert sum(b["duplicate"] for b in bodies) == 19
        assert {b["status"] for b in bodies} == {"incorrect"}

        # 20 different wrong answers at once: exactly 3 graded, the others refused with 409.
        diff = run_threads(
            20, lambda i: server.api("POST", path, {"answer": f"0.{i + 1}7 -0.{i + 1}3"}, tok_diff)
        )
        statuses = sorted(r[0] if isinstance(r, tuple) else repr(r) for r in diff)
        assert statuses == [201] * 3 + [409] * 17, statuses
        refused = [r[1]["error"] for r in diff if r[0] == 409]
        assert all("No attempts left" in m for m in refused), refused[:3]
        log = server.log()
    assert "Traceback" not in log and "database is locked" not in log
    counts = check_invariants(url)
    assert counts["submissions"] == 20 + 3
    answers = stored_answers(url)
    graded = [a for a in answers.values() if a[2].startswith("0.") and a[2] != "0.5 0.25"]
    assert len(graded) == 3


def test_load_every_acknowledged_submission_is_stored_exactly_once(tmp_path: Path) -> None:
    app = prepared_app(tmp_path)
    url = app.config["SQLALCHEMY_DATABASE_URI"]
    clients, per_client = 16, 25
    with app.app_context():
        for i in range(clients):
            services.create_user(db.session, f"load{i}", PW)
        db.engine.dispose()
    exercises = [DECK, TWO, TRANSPOSE]

    with LiveServer(tmp_path, workers=3, threads=4, env=UNLIMITED) as server:

        def client(i: int) -> list[tuple[int, Any, str, str]]:
            token = server.token(f"load{i}", PW)
            out = []
            for k in range(per_client):
                exercise = exercises[k % len(exercises)]
                if k % 5 in (1, 3):  # numbers: graded until the attempts run out, then 409
                    answer = f"0.{i:02d}{k:02d}1 0.{k:02d}{i:02d}3"
                elif k % 5 == 4:  # a grid of cells (wrong shape or values)
                    body = {"cells": [[f"{i}.{k:02d}", "1"], ["2", f"-{k}.{i:02d}"]]}
                    status, resp = server.api("POST", exercise_path(exercise), body, token)
                    out.append((status, resp, exercise, json.dumps(body["cells"])))
                    continue
                else:  # unparseable: stored, uses no attempt
                    answer = f"load-{i}-{k} ?? <script>x</script>"
                status, resp = server.api(
                    "POST", exercise_path(exercise), {"answer": answer}, token
                )
                out.append((status, resp, exercise, answer))
            return out

        started = time.monotonic()
        results = run_threads(clients, client)
        elapsed = time.monotonic() - started
        log = server.log()
    assert elapsed < 90, elapsed
    errors = [r for r in results if isinstance(r, Exception)]
    assert not errors, errors[:3]
    flat = [x for r in results for x in r]
    assert len(flat) == clients * per_client
    statuses = {s for s, *_ in flat}
    # 400 only for a grid of another shape than the exercise's form shows (no attempt, not stored).
    assert statuses <= {201, 400, 409}, statuses
    for status, body, _, answer in flat:
        if status == 400:
            assert answer.startswith("[["), answer  # only the posted grids
            assert "shape" in body["error"] or "grid" in body["error"], body
    for _status, body, *_ in flat:
        assert "locked" not in json.dumps(body).lower()
    assert "database is locked" not in log and "Traceback" not in log

    stored = stored_answers(url)
    acked = [(body["submission_id"], answer) for status, body, _, answer in flat if status == 201]
    assert len(acked) > clients * per_client // 2
    for sub_id, answer in acked:
        assert sub_id in stored, sub_id
        assert stored[sub_id][2] == answer, (stored[sub_id], answer)
    raws = [raw for _, _, raw in stored.values()]
    for _, answer in acked:
        assert raws.count(answer) == 1, answer  # exactly once
    for status, _, _, answer in flat:
        if status in (400, 409):
            assert answer not in raws  # refused: nothing stored
    counts = check_invariants(url)
    assert counts["submissions"] == len(acked)


def exercise_path(exercise_id: str) -> str:
    return f"/api/v1/exercises/{exercise_id}/submissions"


def _stall(port: int, n: int) -> list[socket.socket]:
    """``n`` connections that send part of a request and then nothing: half a body shorter than
    its Content-Length, half headers that never end."""
    out = []
    for i in range(n):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        head = (
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {1000 + i}\r\n\r\nusername=a"
        )
        if i % 2:
            head = "GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        sock.sendall(head.encode())
        out.append(sock)
    return out


def _closed_within(sock: socket.socket, seconds: float) -> bytes:
    sock.settimeout(seconds)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    return data


def test_partial_and_never_finishing_bodies_do_not_starve_the_server(tmp_path: Path) -> None:
    """bad-requests #11.  Stalled requests (a few, then twice the server's threads) delay no one:
    the worker reads requests whole before a thread serves them; every stalled request is
    answered 408 and closed at its deadline (headers: from connecting; body: from the end of
    the headers), never 500.  The many-clients version is in tests/test_hardening.py."""
    from quizapp.cli.buffering import BODY_TIMEOUT, HEADER_TIMEOUT

    prepared_app(tmp_path)
    with LiveServer(tmp_path, workers=2, threads=4, timeout=6) as server:
        few = _stall(server.port, 3)
        time.sleep(0.3)
        for _ in range(5):
            t0 = time.monotonic()
            status, _, body = server.request("GET", "/login", timeout=15)
            assert status == 200 and b"Sign in" in body
            assert time.monotonic() - t0 < 2.5
        many = _stall(server.port, 16)  # twice the server's 8 threads
        time.sleep(0.3)
        for _ in range(5):
            t0 = time.monotonic()
            status, _, _ = server.request("GET", "/login", timeout=15)
            assert status == 200 and time.monotonic() - t0 < 2.5
        t0 = time.monotonic()
        for sock in few + many:
            first_line = _closed_within(sock, BODY_TIMEOUT + 10).split(b"\r\n", 1)[0]
            assert first_line == b"HTTP/1.1 408 Request Timeout", first_line
        assert time.monotonic() - t0 < max(HEADER_TIMEOUT, BODY_TIMEOUT) + 3
        assert server.request("GET", "/login")[0] == 200
