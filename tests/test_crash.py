"""SIGKILL the real server in the middle of a load, restart it on the same database, and check
that nothing acknowledged was lost and nothing is half-written (issue 6).  On SQLite and on
PostgreSQL (the ``db_url`` fixture runs it on both), loopback, bounded (~30 s each).
"""

from __future__ import annotations

import http.client
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from server_harness import LiveServer, check_invariants, prepared_app, stored_answers

from quizapp import services
from quizapp.models import db

pytestmark = [
    pytest.mark.slow,
]

PW = "crash test password"
EXERCISES = [
    "01-linear-systems/05-deck-system",
    "01-linear-systems/06-two-by-two",
    "03-transpose-and-products/01-transpose",
    "04-retrieval-and-softmax/05-softmax-vector",
]
UNLIMITED = {"QUIZAPP_LIMIT_LOGIN": "10000 per minute", "QUIZAPP_LIMIT_SUBMIT": "10000 per minute"}


def test_sigkill_during_load_loses_nothing_acknowledged(db_url: str, tmp_path: Path) -> None:
    app = prepared_app(tmp_path)
    url = db_url
    assert app.config["SQLALCHEMY_DATABASE_URI"] == url
    clients = 8
    with app.app_context():
        for i in range(clients):
            services.create_user(db.session, f"crash{i}", PW)
        db.session.remove()
        db.engine.dispose()

    server = LiveServer(tmp_path, workers=3, threads=4, database_url=url, env=UNLIMITED).start()
    tokens = [server.token(f"crash{i}", PW) for i in range(clients)]
    stop = threading.Event()
    acked: list[tuple[int, int, str, str]] = []  # (client, submission id, answer, exercise)
    refused: list[str] = []
    failures: list[Any] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        k = 0
        while not stop.is_set() and k < 400:
            k += 1
            exercise = EXERCISES[k % len(EXERCISES)]
            # Mostly unparseable answers (stored, no attempt), some graded numbers.
            answer = f"0.{i:02d}{k:03d} 1" if k % 7 == 0 else f"crash-{i}-{k} ??"
            try:
                status, body = server.api(
                    "POST",
                    f"/api/v1/exercises/{exercise}/submissions",
                    {"answer": answer},
                    tokens[i],
                )
            except (OSError, http.client.HTTPException):
                continue  # the server is down (or died mid-reply): not acknowledged
            with lock:
                if status == 201:
                    acked.append((i, body["submission_id"], answer, exercise))
                elif status == 409:
                    refused.append(answer)
                else:
                    failures.append((status, body))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 30
        while len(acked) < 60 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(acked) >= 60, (len(acked), failures[:3], server.log())
        server.kill()  # SIGKILL master and workers, mid-load
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(60)
        assert not failures, failures[:5]

        # The database after the crash, before any restart: consistent (the scoreboard totals
        # included), everything acknowledged.
        after_crash = check_invariants(url)
        if any(not answer.endswith("??") for _, _, answer, _ in acked):  # a graded answer
            assert after_crash["totals"] > 0, after_crash
        stored = stored_answers(url)
        for _, sub_id, answer, _ in acked:
            assert sub_id in stored and stored[sub_id][2] == answer, sub_id
        raws = [raw for _, _, raw in stored.values()]
        for _, _, answer, _ in acked:
            assert raws.count(answer) == 1, answer
        for answer in refused:
            assert answer not in raws

        # Restart on the same database: it serves, and the acknowledged rows are all there.
        server.start()
        status, body = server.api(
            "POST",
            f"/api/v1/exercises/{EXERCISES[0]}/submissions",
            {"answer": "after-restart ??"},
            tokens[0],  # tokens survive the restart (stored hashed in the database)
        )
        assert status == 201, body
        for exercise in EXERCISES:  # what client 1 sees through the API after the restart
            status, listing = server.api(
                "GET", f"/api/v1/exercises/{exercise}/submissions", token=tokens[1]
            )
            assert status == 200
            seen = {s["id"]: s["answer"] for s in listing["submissions"]}
            for c, sub_id, answer, ex in acked:
                if c == 1 and ex == exercise:
                    assert seen[sub_id] == answer
    finally:
        stop.set()
        server.stop()
    counts = check_invariants(url)
    assert counts["submissions"] == len(stored) + 1
