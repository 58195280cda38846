"""Concurrent token-authenticated API calls on a file SQLite database: no "database is locked"
(500), and exactly the allowed attempts are graded.

Each thread has its own Flask test client and (through Flask-SQLAlchemy's scoped session) its own
database connection, so the requests interleave their transactions as gunicorn workers would.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_instructor_support import DECK, add_user, bank_app

from quizapp import services
from quizapp.models import ApiToken, Submission, db

N = 20


def test_concurrent_token_submits_never_fail_with_database_is_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every request records the token's use: the write that used to upgrade a read transaction.
    monkeypatch.setattr(services, "TOKEN_TOUCH_SECONDS", -1)
    app = bank_app(tmp_path, RATELIMIT_ENABLED=False)
    add_user(app, "ana")
    client = app.test_client()
    token = client.post("/api/v1/token", json={"username": "ana", "password": "correct horse"})
    headers = {"Authorization": "Bearer " + token.get_json()["token"]}
    assert client.get(f"/api/v1/exercises/{DECK}/variant", headers=headers).status_code == 200

    statuses: list[int] = []
    bodies: list[str] = []
    barrier = threading.Barrier(N)

    def one(i: int) -> None:
        c = app.test_client()
        barrier.wait()
        resp = c.post(
            f"/api/v1/exercises/{DECK}/submissions",
            json={"answer": f"{i + 10}, {i + 20}"},  # distinct wrong answers (the answer is 2, 5)
            headers=headers,
        )
        statuses.append(resp.status_code)
        bodies.append(resp.get_data(as_text=True))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(statuses) == N
    assert 500 not in statuses, [b for s, b in zip(statuses, bodies, strict=True) if s == 500][:2]
    assert sorted(set(statuses)) == [201, 409], statuses
    assert statuses.count(201) == 3  # the exercise allows 3 attempts
    with app.app_context():
        graded = db.session.scalars(
            db.select(Submission).where(Submission.used_attempt.is_(True))
        ).all()
        assert len(graded) == 3
        assert sorted(s.attempt_number for s in graded) == [1, 2, 3]
        assert db.session.scalar(db.select(ApiToken.last_used_at)) is not None
