"""Figure 3: the submit endpoint under load vs a bare Flask route, on gunicorn + SQLite.

What is measured: ``POST /exercises/bench/system`` (the form the browser posts: session cookie,
CSRF token, ``via=text``, ``answer=(x, y)``) with wrk on loopback, 16 connections, against
gunicorn started with ``quizapp serve``'s own settings (``python -m benchmarks.bench_app``, which
takes them from ``quizapp.cli.server.gunicorn_options``: 2 workers of the read-timeout gthread
class x 4 threads, keep-alive 5 s, the access log on), SQLite in WAL mode on the local disk with
the default ``synchronous=NORMAL`` (``QUIZAPP_SQLITE_SYNCHRONOUS``).  Every request does the full
path: load the signed-in user, check CSRF, find the
student's variant, regenerate it (cached per process), grade the answer, store the submission and
update the progress row in one ``BEGIN IMMEDIATE`` transaction, and render the exercise page with
the verdict.  To keep it so, the benchmark instance lifts the rate limits (``QUIZAPP_RATELIMIT=0``),
the exercise allows 100 attempts, every answer is different (never an "identical resubmission")
and wrong (never "solved"), and requests rotate over many students (each gets a few submissions,
as in class, so the page's submission history stays short).  Afterwards the number of stored
submissions must equal the number of requests wrk completed.

Baseline: ``GET /bench/ok`` of ``benchmarks/bench_app.py`` (a route returning "ok", on the same app,
server and settings).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import (
    REPO,
    WRK_DONE,
    Gunicorn,
    Result,
    app_for,
    free_port,
    make_instance,
    require_tool,
    session_cookie,
    wrk,
)

USER_AGENT = "quizapp-benchmark"
TARGET_SHARE = 0.40
TARGET_P99_MS = 50.0
CONNECTIONS = 16
THREADS = 2

SUBMIT_LUA = """
local users = {%(users)s}
local counter = 0
function init(args)
  nthreads = tonumber(args[1])
  offset = tonumber(args[2] or "0")
end
function request()
  counter = counter + 1
  local i = ((counter - 1) * nthreads + tid) %% #users + 1
  local u = users[i]
  local body = "csrf_token=" .. u[2] .. "&via=text&answer=%%28" .. (1000 + offset + counter) ..
               "%%2C+" .. (tid + 7) .. "%%29"
  return wrk.format("POST", "/exercises/bench/system", {
    ["Cookie"] = "session=" .. u[1],
    ["Content-Type"] = "application/x-www-form-urlencoded",
    ["User-Agent"] = "%(ua)s",
  }, body)
end
local next_tid = 0
function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
end
"""

BARE_LUA = """
wrk.method = "GET"
wrk.path = "/bench/ok"
wrk.headers["User-Agent"] = "%(ua)s"
"""


class ServeLikeGunicorn(Gunicorn):
    """gunicorn serving ``benchmarks.bench_app:create_bench_app()`` with ``quizapp serve``'s own
    settings (``python -m benchmarks.bench_app``, which takes them from
    ``quizapp.cli.server.gunicorn_options``); started and stopped by its own process id."""

    def __init__(self, env: dict[str, str], *, workers: int = 2, threads: int = 4,
                 worker_class: str | None = None) -> None:  # fmt: skip
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full_env = dict(os.environ)
        full_env.update(env)
        full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
        cmd = [sys.executable, "-m", "benchmarks.bench_app", "--port", str(self.port),
               "--workers", str(workers), "--threads", str(threads)]  # fmt: skip
        if worker_class:
            cmd += ["--worker-class", worker_class]
        self.log = open(Path(env["QUIZAPP_INSTANCE"]) / "gunicorn.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=full_env, stdout=self.log,
                                     stderr=subprocess.STDOUT)  # fmt: skip
        self._wait()


def _bank(root: Path) -> Path:
    quiz = root / "exercises" / "bench"
    quiz.mkdir(parents=True)
    (quiz / "quiz.yaml").write_text("title: Benchmark\norder: 1\n")
    source = (REPO / "exercises/01-linear-systems/06-two-by-two.yaml").read_text()
    source = source.replace("attempts: 3", "attempts: 100")
    assert "attempts: 100" in source
    (quiz / "system.yaml").write_text(source)
    return root / "exercises"


def _prepare(root: Path, n_users: int) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """A fresh instance with ``n_users`` students, each with variant 1 of bench/system created,
    and their (session cookie, CSRF token) pairs."""
    from werkzeug.security import generate_password_hash

    from quizapp import services
    from quizapp.bank import derive_seed
    from quizapp.models import User, Variant, db, username_key

    env = make_instance(root / "instance", _bank(root), root / "bench.sqlite")
    app = app_for(env)
    pairs = []
    with app.app_context():
        report = services.sync_folder(db.session, Path(env["QUIZAPP_EXERCISES"]))
        assert report.ok, report.summary()
        hashed = generate_password_hash("benchmark-password", method="scrypt")
        users = [
            User(
                username=f"s{i:05d}",
                username_key=username_key(f"s{i:05d}"),
                password_hash=hashed,
                role="student",
            )  # fmt: skip
            for i in range(n_users)
        ]
        db.session.add_all(users)
        db.session.commit()
        exercise = services.get_exercise(db.session, "bench/system")
        version_id = exercise.current_version.id
        # Variant 1 of every student, drawn and stored as get_or_create_variant stores it (one
        # bulk insert).
        source = services.bank_exercise(
            exercise.id, exercise.current_version.content_hash, exercise.current_version.source
        )
        rows = []
        for user in users:
            drawn = services.draw_variant(
                source, derive_seed(env["QUIZAPP_SEED_SECRET"], user.id, exercise.id, 1)
            )
            rows.append(
                Variant(
                    user_id=user.id,
                    exercise_id=exercise.id,
                    variant_number=1,
                    seed=drawn.seed,
                    version_id=version_id,
                    record=drawn.record,
                    page=drawn.page,
                    generator=drawn.generator,
                    seed_fallbacks=len(drawn.failures),
                )
            )
        db.session.add_all(rows)
        db.session.commit()
        for user in users:
            pairs.append(session_cookie(app, user, USER_AGENT))
        db.engine.dispose()
    return env, pairs


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by the processes ``pids`` (``/proc/<pid>/stat``
    fields 14 and 15, in clock ticks)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of the line)
    return total / tick


def _measure(server: Gunicorn, script: Path, seconds: float, **kw: object) -> dict:
    """One wrk run plus the server workers' CPU time per completed request (``cpu_ms``): a
    figure that, unlike throughput, hardly depends on what else the machine is running."""
    pids = server.worker_pids()
    before = _cpu_seconds(pids)
    out = wrk(server.url, script, seconds=seconds, **kw)  # type: ignore[arg-type]
    server.drain()
    out["cpu_ms"] = 1e3 * (_cpu_seconds(pids) - before) / max(1, out["requests"])
    return out


def _stored(env: dict[str, str]) -> int:
    import sqlite3

    path = env["DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(path) as con:
        return int(con.execute("SELECT count(*) FROM submissions WHERE used_attempt").fetchone()[0])


def run(quick: bool = False) -> list[Result]:
    require_tool("wrk", "apt-get install wrk; the http figures need a real load generator")
    seconds = 2 if quick else 12
    n_users = 64 if quick else 1024
    with tempfile.TemporaryDirectory(prefix="quizapp-bench-http-") as tmp:
        root = Path(tmp)
        env, pairs = _prepare(root, n_users)
        users = ", ".join(f'{{"{c}", "{t}"}}' for c, t in pairs)
        submit_lua = root / "submit.lua"
        submit_lua.write_text(SUBMIT_LUA % {"users": users, "ua": USER_AGENT} + WRK_DONE)
        bare_lua = root / "bare.lua"
        bare_lua.write_text(BARE_LUA % {"ua": USER_AGENT} + WRK_DONE)
        server = ServeLikeGunicorn(env)
        try:
            kw = {"threads": THREADS, "connections": CONNECTIONS, "args": [str(THREADS)]}
            wrk(server.url, bare_lua, seconds=1, **kw)  # warm-up
            server.drain()
            bare = _measure(server, bare_lua, seconds, **kw)
            # The warm-up's answers start at another offset: the same (student, answer) pair in
            # both runs would be an identical resubmission (stored, no attempt used, not counted).
            warm = wrk(server.url, submit_lua, seconds=1, **dict(kw, args=[str(THREADS), "0"]))
            server.drain()
            submit = _measure(
                server, submit_lua, seconds, **dict(kw, args=[str(THREADS), "1000000"])
            )
        finally:
            server.stop()
        stored = _stored(env)
    expected = warm["requests"] + submit["requests"]
    errors = sum(submit[k] for k in ("status_errors", "read_errors", "write_errors", "timeouts"))
    assert errors == 0, f"submit run had errors: {submit}"
    # wrk may count a request whose response it never read at the end: allow that many.
    assert expected - CONNECTIONS * 2 <= stored <= expected + CONNECTIONS * 2, (stored, expected)
    setting = (
        "gunicorn with quizapp serve's settings (2 gthread workers x 4 threads, access log on), "
        f"SQLite WAL synchronous=NORMAL, wrk -t{THREADS} -c{CONNECTIONS} {seconds}s"
    )
    return [
        Result(
            "3 http",
            "submit throughput (share of bare route)",
            "req/s",
            submit["rps"],
            None,
            lower_is_better=False,
            baseline=bare["rps"],
            baseline_name="GET /bench/ok",
            note=f"{setting}; {submit['requests']} submissions stored (checked: {stored} rows "
            f"incl. warm-up), {n_users} students",
            extra={"submit": submit, "bare": bare},
        ),
        Result(
            "3 http",
            "submit share of bare-route throughput",
            "%",
            100 * submit["rps"] / bare["rps"],
            100 * TARGET_SHARE,
            lower_is_better=False,
            note=f"bare route {bare['rps']:.0f} req/s, p50 {bare['p50_us'] / 1e3:.1f} ms, "
            f"p99 {bare['p99_us'] / 1e3:.1f} ms",
        ),
        Result(
            "3 http",
            "submit latency p50",
            "ms",
            submit["p50_us"] / 1e3,
            None,
            baseline=bare["p50_us"] / 1e3,
            baseline_name="GET /bench/ok p50",
        ),
        Result(
            "3 http",
            "submit latency p99",
            "ms",
            submit["p99_us"] / 1e3,
            TARGET_P99_MS,
            baseline=bare["p99_us"] / 1e3,
            baseline_name="GET /bench/ok p99",
        ),
        Result(
            "3 http",
            "server CPU per submit",
            "ms",
            submit["cpu_ms"],
            None,
            baseline=bare["cpu_ms"],
            baseline_name="GET /bench/ok",
            note="user + system CPU time of the gunicorn workers during the run / requests "
            "completed: the cost of one request, nearly independent of the machine's load. "
            "On a machine left to the server, the throughput share tends to the inverse ratio "
            f"(here {100 * bare['cpu_ms'] / max(submit['cpu_ms'], 1e-9):.1f}%).",
        ),
    ]
