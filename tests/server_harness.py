"""Start the real server (``quizapp serve`` -> gunicorn) on a free loopback port, for tests.

No tests in this module.  ``LiveServer`` runs ``python -m quizapp.cli serve`` in its own process
group (so SIGKILL reaches the gunicorn master and every worker at once), with a temporary instance
folder and database, waits until ``/login`` answers, and stops it.  Clients use the standard
library's ``http.client`` only (no third-party HTTP client needed).

Typical use::

    app = prepared_app(tmp_path)           # migrated + synced SQLite DB, secrets in tmp_path
    with LiveServer(tmp_path, workers=2) as server:
        status, headers, body = server.request("GET", "/login")
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from test_web_support import EXERCISES, REPO, synced_app

from quizapp.cli.server import DEFAULT_THREADS, DEFAULT_WORKERS


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prepared_app(tmp_path: Path, **config: Any) -> Any:
    """A migrated SQLite database at ``tmp_path/quizapp.sqlite`` with the bank synced, and the
    instance folder (secrets) at ``tmp_path/instance``: what ``LiveServer(tmp_path)`` serves.
    Returns the Flask app bound to it (for creating users and reading the database in tests)."""
    return synced_app(tmp_path, **config)


class LiveServer:
    """The real server on ``127.0.0.1:<free port>`` over ``tmp_path``'s database.

    ``database_url`` defaults to the SQLite file ``tmp_path/quizapp.sqlite``; ``env`` adds
    environment variables (e.g. rate limits).  The server is started with ``--no-sync`` (prepare
    the database with :func:`prepared_app`).  Output goes to ``tmp_path/server-N.log``.
    """

    def __init__(
        self,
        tmp_path: Path,
        *,
        workers: int = DEFAULT_WORKERS,
        threads: int = DEFAULT_THREADS,
        timeout: int = 30,
        database_url: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.tmp_path = Path(tmp_path)
        self.workers = workers
        self.threads = threads
        self.timeout = timeout
        self.database_url = database_url or f"sqlite:///{self.tmp_path / 'quizapp.sqlite'}"
        self.extra_env = dict(env or {})
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.log_path: Path | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, ready_timeout: float = 60.0) -> LiveServer:
        """Start the server and wait until ``GET /login`` answers 200 (``RuntimeError`` if not)."""
        self.port = free_port()
        self.starts += 1
        self.log_path = self.tmp_path / f"server-{self.starts}.log"
        environ = dict(os.environ)
        environ.update(
            {
                "PYTHONPATH": str(REPO),
                "QUIZAPP_INSTANCE": str(self.tmp_path / "instance"),
                "QUIZAPP_EXERCISES": str(EXERCISES),
                "DATABASE_URL": self.database_url,
            }
        )
        environ.pop("QUIZAPP_SECRET_KEY", None)
        environ.pop("QUIZAPP_SEED_SECRET", None)
        environ.update(self.extra_env)
        log = open(self.log_path, "wb")  # noqa: SIM115  (closed in stop)
        self._log = log
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quizapp.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                str(self.workers),
                "--threads",
                str(self.threads),
                "--timeout",
                str(self.timeout),
                "--no-sync",
            ],
            cwd=self.tmp_path,
            env=environ,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killpg reaches every worker
        )
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}):\n{self.log()}")
            try:
                status, _, _ = self.request("GET", "/login", timeout=2)
                if status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"the server did not answer within {ready_timeout} s:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL the whole process group (master and workers) and reap the master."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self._wait_group_gone()
        self.proc = None
        self._log.close()

    def stop(self) -> None:
        """SIGTERM (graceful), then SIGKILL after 20 s if still running."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            pass
        self.kill() if self.proc is not None and self.proc.poll() is None else None
        if self.proc is not None:
            self._wait_group_gone()
            self.proc = None
            self._log.close()

    def _wait_group_gone(self, timeout: float = 10.0) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self) -> str:
        """What the server printed so far."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-5000:]

    # -- requests --------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: bytes | str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request on a new connection -> (status, headers with lower-case names, body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = body.encode() if isinstance(body, str) else body
            conn.request(method, path, body=data, headers=headers or {})
            resp = conn.getresponse()
            payload = resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, payload
        finally:
            conn.close()

    def api(
        self, method: str, path: str, payload: Any = None, token: str | None = None
    ) -> tuple[int, Any]:
        """A JSON API call -> (status, decoded JSON body or None)."""
        headers = {"Accept": "application/json"}
        body = None
        if payload is not None:
            body = json.dumps(payload).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        status, _, raw = self.request(method, path, body, headers)
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def token(self, username: str, password: str) -> str:
        """An API token for ``username`` (``AssertionError`` unless 201)."""
        status, body = self.api(
            "POST", "/api/v1/token", {"username": username, "password": password}
        )
        assert status == 201, (status, body)
        return str(body["token"])


# -- database invariants (read with plain SQL, independent of the app's code) ----------------


def check_invariants(database_url: str, *, totals: bool = True) -> dict[str, int]:
    """Assert the stored data is consistent; return row counts.

    - SQLite: ``PRAGMA integrity_check`` is ``ok`` and ``PRAGMA foreign_key_check`` finds nothing.
    - Every progress row equals what its submissions imply: graded attempts of variant 1,
      best score/points over them, first correct answer, number of submissions.
    - Every (user, exercise) with submissions has a progress row.
    - No variant has more graded attempts than its exercise allows, and their
      ``attempt_number`` values are 1, 2, ... in submission order.
    - ``totals``: every student's ``score_totals`` rows (course scope "" and one per quiz) equal
      the aggregate of their progress rows on the live exercises they are not excused from (sum
      of best points, solved count, attempts, latest ``best_reached_at`` with points); a missing
      row counts as zeros.  Holds while the bank has not changed since the first submission or
      the last rebuild (a scoreboard view); pass ``totals=False`` where a test changes the bank
      after submissions without viewing the scoreboard.
    """
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
                assert conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall() == []
            exercises = {
                r.id: (float(r.points), int(r.attempts))
                for r in conn.execute(text("SELECT id, points, attempts FROM exercises"))
            }
            subs = conn.execute(
                text(
                    "SELECT s.id, s.user_id, s.exercise_id, s.variant_id, s.used_attempt, "
                    "s.status, s.score, s.attempt_number, s.created_at, v.variant_number "
                    "FROM submissions s JOIN variants v ON v.id = s.variant_id ORDER BY s.id"
                )
            ).fetchall()
            progress = conn.execute(
                text(
                    "SELECT user_id, exercise_id, best_score, best_points, attempts_used, "
                    "submissions_count, solved_at, best_reached_at FROM progress"
                )
            ).fetchall()
            live = {
                r.id: r.quiz_id
                for r in conn.execute(
                    text(
                        "SELECT e.id, e.quiz_id, e.archived, q.archived AS quiz_archived"
                        " FROM exercises e JOIN quizzes q ON q.id = e.quiz_id"
                    )
                )
                if not r.archived and not r.quiz_archived
            }
            excused = {
                tuple(r) for r in conn.execute(text("SELECT user_id, exercise_id FROM excusals"))
            }
            stored_totals = conn.execute(
                text(
                    "SELECT user_id, scope, points, solved, attempts, reached_at FROM score_totals"
                )
            ).fetchall()
    finally:
        engine.dispose()

    by_pair: dict[tuple[int, str], list[Any]] = {}
    by_variant: dict[int, list[Any]] = {}
    for s in subs:
        by_pair.setdefault((s.user_id, s.exercise_id), []).append(s)
        by_variant.setdefault(s.variant_id, []).append(s)
    rows = {(p.user_id, p.exercise_id): p for p in progress}
    missing = set(by_pair) - set(rows)
    assert not missing, f"submissions without a progress row: {sorted(missing)[:5]}"
    for key, p in rows.items():
        mine = by_pair.get(key, [])
        graded = [s for s in mine if s.used_attempt and s.variant_number == 1]
        best = max((float(s.score) for s in graded), default=0.0)
        points, _ = exercises[key[1]]
        assert p.attempts_used == len(graded), (key, p.attempts_used, len(graded))
        assert abs(float(p.best_score) - best) < 1e-9, (key, p.best_score, best)
        assert abs(float(p.best_points) - round(best * points, 6)) < 1e-6, key
        assert p.submissions_count == len(mine), (key, p.submissions_count, len(mine))
        solved = any(s.status == "correct" for s in graded)
        assert (p.solved_at is not None) == solved, key
    for variant_id, mine in by_variant.items():
        graded = [s for s in mine if s.used_attempt]
        _, attempts = exercises[mine[0].exercise_id]
        assert len(graded) <= attempts, (variant_id, len(graded), attempts)
        assert [s.attempt_number for s in graded] == list(range(1, len(graded) + 1)), variant_id
        assert all(s.attempt_number is None for s in mine if not s.used_attempt), variant_id
    if totals:
        _check_totals(progress, live, excused, stored_totals)
    return {"submissions": len(subs), "progress": len(progress), "totals": len(stored_totals)}


def _check_totals(progress: Any, live: dict[str, str], excused: set, stored_totals: Any) -> None:
    """``score_totals`` equals the aggregate of the progress rows (see ``check_invariants``)."""
    expected: dict[tuple[int, str], list[Any]] = {}
    for p in progress:
        if p.exercise_id not in live or (p.user_id, p.exercise_id) in excused:
            continue
        for scope in ("", live[p.exercise_id]):
            e = expected.setdefault((p.user_id, scope), [0.0, 0, 0, None])
            e[0] += float(p.best_points)
            e[1] += p.solved_at is not None
            e[2] += int(p.attempts_used)
            if float(p.best_points) > 0 and p.best_reached_at is not None:
                at = _as_datetime(p.best_reached_at)
                e[3] = at if e[3] is None else max(e[3], at)
    got = {
        (t.user_id, t.scope): [
            float(t.points),
            int(t.solved),
            int(t.attempts),
            _as_datetime(t.reached_at),
        ]  # fmt: skip
        for t in stored_totals
    }
    zero = [0.0, 0, 0, None]
    for key in set(expected) | set(got):
        want, have = expected.get(key, zero), got.get(key, zero)
        assert abs(want[0] - have[0]) < 1e-6, ("score_totals points", key, have, want)
        assert want[1:] == have[1:], ("score_totals", key, have, want)


def _as_datetime(value: Any) -> Any:
    """A timestamp read with plain SQL (SQLite: text) as an aware UTC datetime."""
    from datetime import UTC, datetime

    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def stored_answers(database_url: str) -> dict[int, tuple[int, str, str]]:
    """submission id -> (user id, answer_format, raw_answer), read with plain SQL."""
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            return {
                r.id: (r.user_id, r.answer_format, r.raw_answer)
                for r in conn.execute(
                    text("SELECT id, user_id, answer_format, raw_answer FROM submissions")
                )
            }
    finally:
        engine.dispose()
