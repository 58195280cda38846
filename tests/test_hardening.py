"""Hardening: what an outside attack on the running server found, and the fixes held.

- A broken YAML file during ``sync`` leaves the previous version of that exercise live (students
  keep answering it) and reports the error, while the rest of the bank syncs (issue 6).
- Slow clients (issue 13): 256 trickling connections against ``quizapp serve``'s defaults on
  loopback; the HTTP features the buffering worker must keep.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from test_web_support import EXERCISES, bank_available, login, make_app, post_text, url_of

from quizapp import services
from quizapp.models import Exercise, db

pytestmark = pytest.mark.skipif(not bank_available(), reason="the exercise bank is not present")

BROKEN = "01-linear-systems/06-two-by-two"
EDITED = "01-linear-systems/05-deck-system"
PW = "correct horse battery"


def test_broken_yaml_keeps_the_previous_version_live_and_the_rest_syncs(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    shutil.copytree(EXERCISES, bank)
    app = make_app(tmp_path, QUIZAPP_EXERCISES=bank)
    with app.app_context():
        assert services.sync_folder(db.session, bank).errors == []
        services.create_user(db.session, "ana", PW)
        old_broken = db.session.get(Exercise, BROKEN).current_hash
        old_edited = db.session.get(Exercise, EDITED).current_hash
    client = app.test_client()
    assert login(client, "ana", PW).status_code == 302
    before = client.get(url_of(BROKEN)).get_data(as_text=True)

    broken = bank / f"{BROKEN}.yaml"
    broken.write_text(broken.read_text() + "\nparams: [unclosed\n  - {\n")
    edited = bank / f"{EDITED}.yaml"
    edited.write_text(edited.read_text().replace("points: 10", "points: 12", 1))
    if "points: 12" not in edited.read_text():
        edited.write_text(edited.read_text() + "\npoints: 12\n")
    with app.app_context():
        report = services.sync_folder(db.session, bank)
        assert len(report.errors) == 1 and "06-two-by-two.yaml:" in report.errors[0]
        assert report.kept_previous == [BROKEN]
        assert report.updated == [EDITED]
        ex = db.session.get(Exercise, BROKEN)
        assert ex.current_hash == old_broken and not ex.archived
        assert ex.sync_error == report.errors[0]
        new = db.session.get(Exercise, EDITED)
        assert new.current_hash != old_edited and new.points == 12.0
    # The broken exercise is still live: same page, and answers are graded.
    page = client.get(url_of(BROKEN))
    assert page.status_code == 200

    def main(html: str) -> str:
        return re.sub(r'name="csrf_token"[^>]*>', "", html.split("<main", 1)[1])

    assert main(page.get_data(as_text=True)) == main(before)
    assert post_text(client, BROKEN, "1 2").status_code == 200


# --------------------------------------------------------------------------------------------
# Slow clients (issue 13, major 1): the real server on loopback, `quizapp serve`'s defaults.


@pytest.mark.slow
def test_256_trickling_clients_neither_delay_others_nor_stay_past_their_deadlines(
    tmp_path: Path,
) -> None:
    """256 connections that send one byte every 5 s (half never finish their headers, half
    trickle the body after complete headers) leave normal requests under 1 s (p99, no failure),
    and each is answered 408 and closed at its deadline: the headers' (from connecting) or the
    body's (from the end of the headers).  Before the buffering worker, 8 such connections made
    every normal request time out."""
    from server_harness import LiveServer, prepared_app
    from slow_clients import Tricklers, summary, timed_requests

    from quizapp.cli.buffering import BODY_TIMEOUT, HEADER_TIMEOUT

    prepared_app(tmp_path)
    with LiveServer(tmp_path) as server:  # quizapp serve's defaults: 2 workers x 4 threads
        with Tricklers(server.port, 256, "mixed", interval=5.0) as slow:
            time.sleep(1.0)
            assert slow.open_count() == 256
            result = summary(timed_requests(server.port, 100, clients=4, timeout=10))
            assert result["failed"] == 0, result
            assert result["p99"] < 1.0, result
            assert slow.wait_closed(BODY_TIMEOUT + 10), slow.open_count()
        log = server.log()
    slack = 1.5
    for conn in slow.conns:
        assert conn.status_line == b"HTTP/1.1 408 Request Timeout", conn.answer[:200]
        lived = conn.closed_at - conn.opened_at
        if conn.mode == "headers":
            assert HEADER_TIMEOUT - 0.5 <= lived <= HEADER_TIMEOUT + slack, lived
            assert b"headers did not arrive within" in conn.answer
        else:  # the headers were complete on connecting: the body's deadline counts from there
            assert BODY_TIMEOUT - 0.5 <= lived <= BODY_TIMEOUT + slack, lived
            assert b"body did not arrive within" in conn.answer
    assert "Traceback" not in log


@pytest.mark.slow
def test_buffered_server_still_speaks_http_keepalive_pipelining_chunked_and_limits(
    tmp_path: Path,
) -> None:
    """What the buffering worker must not break, through raw sockets: several requests on one
    kept-alive connection, two pipelined in one packet, a chunked body, ``Expect:
    100-continue``; and what it refuses at once: a body over the limit (413), headers over the
    limit (431)."""
    import json
    import socket

    from server_harness import LiveServer, prepared_app

    from quizapp.cli.buffering import MAX_HEADER_BYTES

    app = prepared_app(tmp_path)
    with app.app_context():
        services.create_user(db.session, "ana", PW)
        db.engine.dispose()

    def exchange(sock: socket.socket, data: bytes, responses: int) -> list[bytes]:
        sock.sendall(data)
        got, out = b"", []
        while len(out) < responses:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
            while True:
                head_end = got.find(b"\r\n\r\n")
                if head_end < 0:
                    break
                head = got[:head_end].decode()
                if head.startswith("HTTP/1.1 100"):
                    got = got[head_end + 4 :]
                    continue
                length = int(re.search(r"(?i)content-length: *(\d+)", head).group(1))
                if len(got) < head_end + 4 + length:
                    break
                out.append(got[: head_end + 4 + length])
                got = got[head_end + 4 + length :]
        return out

    login = b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    body = json.dumps({"username": "ana", "password": PW}).encode()
    with LiveServer(tmp_path, workers=1) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            for _ in range(3):  # kept alive
                (resp,) = exchange(sock, login, 1)
                assert resp.startswith(b"HTTP/1.1 200") and b"Sign in" in resp
            pair = exchange(sock, login + login, 2)  # pipelined in one packet
            assert len(pair) == 2 and all(r.startswith(b"HTTP/1.1 200") for r in pair)
            chunked = (
                b"POST /api/v1/token HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + f"{len(body[:10]):x}\r\n".encode()
                + body[:10]
                + b"\r\n"
                + f"{len(body[10:]):x}\r\n".encode()
                + body[10:]
                + b"\r\n0\r\n\r\n"
            )
            (resp,) = exchange(sock, chunked, 1)
            assert resp.startswith(b"HTTP/1.1 201") and b'"token"' in resp
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            head = (
                b"POST /api/v1/token HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
                b"Content-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
            )
            sock.sendall(head)
            assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue")  # before the body
            (resp,) = exchange(sock, body, 1)
            assert resp.startswith(b"HTTP/1.1 201")
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            big = b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 300000\r\n\r\n"
            (resp,) = exchange(sock, big, 1)
            assert resp.startswith(b"HTTP/1.1 413") and b"exceeds 262144 bytes" in resp
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            huge = b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * MAX_HEADER_BYTES
            (resp,) = exchange(sock, huge, 1)
            assert resp.startswith(b"HTTP/1.1 431")
        assert server.request("GET", "/login")[0] == 200
        log = server.log()
    assert "Traceback" not in log


# --------------------------------------------------------------------------------------------
# One student submitting to several exercises at once (issue 13, major 2): the real server on
# loopback, on SQLite and on PostgreSQL (``db_url`` runs the test on both).

#: Ten exercises with numeric answers of these shapes (graded: each answer uses an attempt).
TEN = {
    "01-linear-systems/05-deck-system": (2,),
    "01-linear-systems/06-two-by-two": (2,),
    "01-linear-systems/07-three-by-three": (3,),
    "01-linear-systems/08-matrix-form": (2, 3),
    "02-matrices-and-maps/01-basis-coordinates": (2,),
    "02-matrices-and-maps/06-map-matrix": (3, 2),
    "03-transpose-and-products/01-transpose": (3, 2),
    "03-transpose-and-products/05-matrix-product": (2, 2),
    "04-retrieval-and-softmax/01-retrieval-scores": (2, 3),
    "04-retrieval-and-softmax/05-softmax-vector": (4,),
}
UNLIMITED = {"QUIZAPP_LIMIT_LOGIN": "10000 per minute", "QUIZAPP_LIMIT_SUBMIT": "10000 per minute"}


def numbers(shape: tuple[int, ...], value: str) -> str:
    """An answer of ``shape`` (a vector or a matrix) with every entry ``value``."""
    if len(shape) == 1:
        return " ".join([value] * shape[0])
    return "; ".join(" ".join([value] * shape[1]) for _ in range(shape[0]))


@pytest.mark.slow
def test_ten_concurrent_submits_of_one_student_to_ten_exercises(db_url: str, tmp_path: Path):
    """10 graded answers of one student to 10 exercises at once, three rounds (every attempt):
    30 acknowledged (201), 0 errors, and every progress row and scoreboard total equals a
    recompute from the submissions.  On PostgreSQL the totals refresh used to ask FOR UPDATE on
    the users row that each submission's insert had locked KEY SHARE: deadlocks, 500s."""
    import threading

    from server_harness import LiveServer, check_invariants, prepared_app

    app = prepared_app(tmp_path)
    with app.app_context():
        services.create_user(db.session, "busy", PW)
        db.session.remove()
        db.engine.dispose()
    with LiveServer(tmp_path, database_url=db_url, env=UNLIMITED) as server:
        token = server.token("busy", PW)
        results: list[tuple[int, object]] = []
        lock = threading.Lock()

        def submit(barrier: threading.Barrier, exercise: str, answer: str) -> None:
            barrier.wait()
            path = f"/api/v1/exercises/{exercise}/submissions"
            status, body = server.api("POST", path, {"answer": answer}, token)
            with lock:
                results.append((status, body))

        for round_ in range(3):
            barrier = threading.Barrier(len(TEN))
            threads = [
                threading.Thread(
                    target=submit, args=(barrier, ex, numbers(shape, f"{round_ + 1}.37"))
                )
                for ex, shape in TEN.items()
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        log = server.log()
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] * 30, [r for r in results if r[0] != 201][:3]
    assert all(body["used_attempt"] for _, body in results)  # type: ignore[index]
    assert "Traceback" not in log and "deadlock" not in log.lower()
    counts = check_invariants(db_url)
    assert counts["submissions"] == 30
