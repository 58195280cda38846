"""Shared helpers of the benchmarks: results, timing, machine description, temporary apps."""

from __future__ import annotations

import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from quizapp.cli.server import DEFAULT_THREADS, DEFAULT_WORKERS

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Result:
    """One figure of the results table.

    ``measured`` and ``target`` are in ``unit``; ``lower_is_better`` says which side meets the
    target.  ``baseline`` (same unit, measured in the same run) is what ``ratio`` compares to:
    ``measured / baseline``.  ``note`` says what exactly was measured.
    """

    section: str
    figure: str
    unit: str
    measured: float
    target: float | None
    lower_is_better: bool = True
    baseline: float | None = None
    baseline_name: str = ""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.measured / self.baseline

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        if self.lower_is_better:
            return self.measured < self.target
        return self.measured >= self.target


def fmt(value: float | None, unit: str = "") -> str:
    """A number with 3 significant digits and its unit."""
    if value is None:
        return "-"
    if abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".strip()


def median_time(fn: Callable[[], Any], *, repeat: int, number: int = 1) -> float:
    """Median over ``repeat`` runs of the mean seconds of one call (``number`` calls per run)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def machine_info() -> dict[str, str]:
    """CPU model, cores, load, Python / NumPy / SQLite / SQLAlchemy / Flask versions, date (UTC)."""
    import flask
    import numpy
    import sqlalchemy

    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        gunicorn = subprocess.run(
            [sys.executable, "-m", "gunicorn", "--version"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        gunicorn = "?"
    try:
        wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0]
    except OSError:
        wrk = "not installed"
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "load average (1, 5, 15 min) at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "sqlite": sqlite3.sqlite_version,
        "sqlalchemy": sqlalchemy.__version__,
        "flask": flask.__version__,
        "gunicorn": gunicorn,
        "wrk": wrk,
    }


def rss_hwm_kib(pid: int) -> int | None:
    """Peak resident set size (``VmHWM`` of /proc/<pid>/status, KiB) of process ``pid``."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Gunicorn:
    """``gunicorn`` serving ``benchmarks.bench_app:create_bench_app()`` with plain gthread
    workers, ``quizapp serve``'s default worker and thread counts, keep-alive 5 s, access log off
    (:class:`benchmarks.bench_http.ServeLikeGunicorn` takes ``quizapp serve``'s exact options);
    started and stopped by its own process id only."""

    def __init__(
        self, env: dict[str, str], *, workers: int = DEFAULT_WORKERS, threads: int = DEFAULT_THREADS
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full_env = dict(os.environ)
        full_env.update(env)
        full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
        cmd = [
            sys.executable, "-m", "gunicorn",
            "--bind", f"127.0.0.1:{self.port}",
            "--workers", str(workers),
            "--worker-class", "gthread",
            "--threads", str(threads),
            "--keep-alive", "5",
            "--timeout", "120",
            "--error-logfile", "-",
            "--log-level", "warning",
            "benchmarks.bench_app:create_bench_app()",
        ]  # fmt: skip
        self.log = open(Path(env["QUIZAPP_INSTANCE"]) / "gunicorn.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=full_env, stdout=self.log,
                                     stderr=subprocess.STDOUT)  # fmt: skip
        self._wait()

    def _wait(self, timeout: float = 60.0) -> None:
        import urllib.error
        import urllib.request

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited; see {self.log.name}")
            try:
                with urllib.request.urlopen(self.url + "/bench/ok", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise RuntimeError("gunicorn did not start in time")

    def drain(self, timeout: float = 30.0) -> None:
        """Wait until requests queued by a finished load run are served (wrk closes its
        connections at the end, the server still works through what it accepted)."""
        import urllib.request

        deadline = time.monotonic() + timeout
        fast = 0
        while fast < 3 and time.monotonic() < deadline:
            t0 = time.perf_counter()
            with urllib.request.urlopen(self.url + "/bench/ok", timeout=timeout) as resp:
                resp.read()
            fast = fast + 1 if time.perf_counter() - t0 < 0.05 else 0
            time.sleep(0.05)

    def worker_pids(self) -> list[int]:
        """Process ids of the workers (children of the gunicorn master)."""
        try:
            text = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def make_instance(root: Path, exercises: Path, database: Path | None = None) -> dict[str, str]:
    """Environment for an app whose instance folder is ``root`` (fixed secrets, no rate limits)."""
    root.mkdir(parents=True, exist_ok=True)
    env = {
        "QUIZAPP_INSTANCE": str(root),
        "QUIZAPP_EXERCISES": str(exercises),
        "QUIZAPP_SECRET_KEY": "benchmark-secret-key",
        "QUIZAPP_SEED_SECRET": "benchmark-seed-secret",
        "QUIZAPP_RATELIMIT": "0",
    }
    if database is not None:
        env["DATABASE_URL"] = f"sqlite:///{database}"
    return env


def app_for(env: dict[str, str]) -> Any:
    """``create_app`` in this process with the configuration of ``env`` (and the migrations run)."""
    from quizapp.web import create_app
    from quizapp.web.database import upgrade_database

    config: dict[str, Any] = {
        "INSTANCE_PATH": env["QUIZAPP_INSTANCE"],
        "QUIZAPP_EXERCISES": env["QUIZAPP_EXERCISES"],
        "SECRET_KEY": env["QUIZAPP_SECRET_KEY"],
        "QUIZAPP_SEED_SECRET": env["QUIZAPP_SEED_SECRET"],
        "RATELIMIT_ENABLED": False,
    }
    if "DATABASE_URL" in env:
        config["DATABASE_URL"] = env["DATABASE_URL"]
    app = create_app(config)
    upgrade_database(app)
    return app


def session_cookie(app: Any, user: Any, user_agent: str) -> tuple[str, str]:
    """(session cookie value, CSRF token) of ``user`` signed in, as the login form would set them.

    Built with Flask-Login's ``login_user`` and Flask-WTF's ``generate_csrf`` in a request context
    from 127.0.0.1 with ``user_agent`` (Flask-Login's session protection checks both).
    """
    from flask import g, session
    from flask_login import login_user
    from flask_wtf.csrf import generate_csrf

    with app.test_request_context(
        "/", environ_base={"REMOTE_ADDR": "127.0.0.1"}, headers={"User-Agent": user_agent}
    ):
        login_user(user)
        g.pop("csrf_token", None)  # Flask-WTF caches the token in g (shared app context)
        token = generate_csrf()
        value = app.session_interface.get_signing_serializer(app).dumps(dict(session))
    return value, token


def add_students(session: Any, n: int, prefix: str = "s") -> list[Any]:
    """``n`` students ``<prefix>00000``, ... added and committed in one go (all with one scrypt
    hash of a password no one uses: the benchmarks sign them in with :func:`session_cookie`)."""
    from werkzeug.security import generate_password_hash

    from quizapp.models import User, username_key

    hashed = generate_password_hash("benchmark-password", method="scrypt")
    users = [
        User(
            username=f"{prefix}{i:05d}",
            username_key=username_key(f"{prefix}{i:05d}"),
            password_hash=hashed,
            role="student",
        )  # fmt: skip
        for i in range(n)
    ]
    session.add_all(users)
    session.commit()
    return users


def store_variants(session: Any, users: list[Any], exercise_ids: list[str], secret: str) -> None:
    """Variant 1 of each exercise for each of ``users``, drawn, frozen and rendered from the
    exercise's current version as ``services.get_or_create_variant`` would store it (its seed
    from ``derive_seed(secret, ...)``), inserted in one commit."""
    from quizapp import services
    from quizapp.bank import derive_seed
    from quizapp.models import Variant

    rows = []
    for exercise_id in exercise_ids:
        exercise = services.get_exercise(session, exercise_id)
        version = exercise.current_version
        source = services.bank_exercise(exercise.id, version.content_hash, version.source)
        for user in users:
            drawn = services.draw_variant(source, derive_seed(secret, user.id, exercise.id, 1))
            rows.append(
                Variant(
                    user_id=user.id,
                    exercise_id=exercise.id,
                    variant_number=1,
                    seed=drawn.seed,
                    version_id=version.id,
                    record=drawn.record,
                    page=drawn.page,
                    generator=drawn.generator,
                    seed_fallbacks=len(drawn.failures),
                )  # fmt: skip
            )
    session.add_all(rows)
    session.commit()


class MissingTool(RuntimeError):
    """A section needs a program that is not installed (the message says which and how)."""


def require_tool(name: str, how: str) -> None:
    """Raise :class:`MissingTool` unless ``name`` is on the PATH; ``how`` says how to get it."""
    import shutil

    if shutil.which(name) is None:
        raise MissingTool(f"{name} is not installed ({how})")


def wrk(url: str, script: Path, *, seconds: float, threads: int, connections: int,
        args: list[str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Run wrk and return the JSON line its Lua ``done`` prints (requests, p50/p99 in µs, ...)."""
    import json

    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s",
           "--timeout", "10s", "-s", str(script), url]  # fmt: skip
    if args:
        cmd += ["--", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("JSON "):
            data: dict[str, Any] = json.loads(line[5:])
            data["rps"] = data["requests"] / (data["duration_us"] / 1e6)
            return data
    raise RuntimeError(f"wrk printed no result:\n{out}")


WRK_DONE = """
function done(summary, latency, requests)
  io.write(string.format(
    'JSON {"requests": %d, "duration_us": %d, "status_errors": %d, "connect_errors": %d, ' ..
    '"read_errors": %d, "write_errors": %d, "timeouts": %d, "p50_us": %d, "p90_us": %d, ' ..
    '"p99_us": %d, "mean_us": %.1f, "max_us": %d}\\n',
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean,
    latency.max))
end
"""
