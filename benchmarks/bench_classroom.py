"""Figure 10: a class of 500 students on ``quizapp serve`` (SQLite), compressed into 2 minutes.

Each simulated student signs in (a session cookie made with ``benchmarks.common.session_cookie``:
no scrypt per student), opens the quiz (``GET /``), then works through its four exercises (one
unknown, a 2x2 and a 3x3 system, a 4x2 matrix times a vector; 5 attempts each): opens the
exercise page (``GET``: the first view draws, renders and stores the student's variant) and
submits 5 answers through the HTML form (``POST``, the verdict page back): 20 answers in all,
each a different wrong answer of the right size, so every one uses an attempt and the fifth
finishes the variant (the page then shows the worked solution).  Before each answer the student
thinks for a time drawn uniformly from 5-60 s, and starts after 0-30 s; all of these times are
scaled by one factor so that the slowest student finishes in 2 minutes (the whole class's 5-60 s
think times compressed into 2 minutes).

The load generator is this process: one asyncio task and one keep-alive HTTP/1.1 connection per
student (a new connection when the old one has been idle long enough for the server's 5 s
keep-alive to close it), on 127.0.0.1 only; every request has a 60 s timeout and the run is
bounded (500 x 25 requests, at most ``HARD_LIMIT_S``).  Reported: p50/p99/max latency of each
request type (home, first view of an exercise, submit), the requests per second, errors (any
response other than 200, any connection failure; the target is 0), and whether every
acknowledged submission (a 200 verdict page) is stored: the submissions of each student in the
database equal their acknowledged ones.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from benchmarks.bench_http import USER_AGENT, ServeLikeGunicorn
from benchmarks.common import REPO, Result, add_students, app_for, make_instance, session_cookie
from quizapp.cli.server import DEFAULT_THREADS, DEFAULT_WORKERS

STUDENTS = 500
DURATION_S = 120.0
THINK_S = (5.0, 60.0)
START_S = (0.0, 30.0)
#: (exercise name in the bench quiz, bank file, number of cells of its answer)
EXERCISES = (
    ("one-unknown", "01-linear-systems/01-one-unknown.yaml", 1),
    ("two-by-two", "01-linear-systems/06-two-by-two.yaml", 2),
    ("three-by-three", "01-linear-systems/07-three-by-three.yaml", 3),
    ("matrix-vector", "02-matrices-and-maps/09-matrix-vector.yaml", 4),
)
ATTEMPTS = 5  # answers per exercise; 4 exercises x 5 = 20 answers per student
REQUEST_TIMEOUT_S = 60.0
#: Students (not counted) who first go through the quiz one after the other, each on a new
#: connection, so that both workers have compiled their templates and loaded what a first
#: request loads before the class starts.
WARM_UP_STUDENTS = 6
HARD_LIMIT_S = 600.0
#: The server closes a connection idle for 5 s (``quizapp serve``'s keep-alive): reconnect after
#: this long rather than race it.
IDLE_RECONNECT_S = 4.0
TYPES = ("home", "exercise page (first view)", "submit")


def _bank(root: Path) -> Path:
    quiz = root / "exercises" / "class"
    quiz.mkdir(parents=True)
    (quiz / "quiz.yaml").write_text("title: Class quiz\norder: 1\n")
    for name, path, _cells in EXERCISES:
        source = (REPO / "exercises" / path).read_text()
        assert "attempts: 3" in source, path
        (quiz / f"{name}.yaml").write_text(source.replace("attempts: 3", f"attempts: {ATTEMPTS}"))
    return root / "exercises"


@dataclass
class Student:
    """One simulated student: cookie, CSRF token, start offset and think times (compressed)."""

    username: str
    cookie: str
    token: str
    start: float
    thinks: list[float]
    acknowledged: int = 0


@dataclass
class Tally:
    """Latencies (seconds) per request type and the errors met."""

    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)


class Connection:
    """A minimal HTTP/1.1 client connection (keep-alive, Content-Length or chunked bodies)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.last_used = 0.0

    async def _connect(self) -> None:
        await self.close()
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None

    async def request(self, method: str, path: str, headers: dict[str, str],
                      body: bytes = b"") -> tuple[int, bytes]:  # fmt: skip
        if self.writer is None or time.monotonic() - self.last_used > IDLE_RECONNECT_S:
            await self._connect()
        assert self.reader is not None and self.writer is not None
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body:
            lines.append(f"Content-Length: {len(body)}")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split()[1])
        got = {}
        for line in header_lines:
            if ":" in line:
                k, v = line.split(":", 1)
                got[k.strip().lower()] = v.strip()
        if "content-length" in got:
            data = await self.reader.readexactly(int(got["content-length"]))
        elif got.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                data += await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:
            data = await self.reader.read()
            got["connection"] = "close"
        if got.get("connection", "").lower() == "close":
            await self.close()
        self.last_used = time.monotonic()
        return status, data


async def _student(student: Student, port: int, t0: float, tally: Tally,
                   answers_per_exercise: int = ATTEMPTS) -> None:  # fmt: skip
    conn = Connection(port)
    base = {"Cookie": f"session={student.cookie}", "User-Agent": USER_AGENT}

    async def timed(kind: str, method: str, path: str, body: bytes = b"",
                    check: bytes = b"") -> bool:  # fmt: skip
        headers = dict(base)
        if body:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        start = time.perf_counter()
        try:
            status, page = await asyncio.wait_for(
                conn.request(method, path, headers, body), REQUEST_TIMEOUT_S
            )
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            tally.errors.append(f"{kind} {path}: {type(exc).__name__} {exc}"[:200])
            await conn.close()
            return False
        tally.latency[kind].append(time.perf_counter() - start)
        if status != 200 or (check and check not in page):
            tally.errors.append(f"{kind} {path}: {status} {page[:120]!r}")
            return False
        return True

    try:
        await asyncio.sleep(max(0.0, t0 + student.start - time.monotonic()))
        await timed("home", "GET", "/", check=b"Class quiz")
        at = t0 + student.start
        k = 0
        for name, _path, cells in EXERCISES:
            url = f"/exercises/class/{name}"
            await timed("exercise page (first view)", "GET", url, check=b"attempts-left")
            for attempt in range(answers_per_exercise):
                at += student.thinks[k]
                k += 1
                await asyncio.sleep(max(0.0, at - time.monotonic()))
                values = [str(1000 + 10 * attempt + c) for c in range(cells)]
                answer = values[0] if cells == 1 else "[" + ", ".join(values) + "]"
                body = urlencode({"csrf_token": student.token, "via": "text", "answer": answer})
                # The verdict page of a graded answer says which attempt it used.
                if await timed("submit", "POST", url, body.encode(), check=b'id="verdict-title"'):
                    student.acknowledged += 1
    finally:
        await conn.close()


async def _warm_up(students: list[Student], port: int) -> None:
    for student in students:
        quick = Student(student.username, student.cookie, student.token, 0.0, [0.0] * 20)
        tally = Tally()
        await _student(quick, port, time.monotonic(), tally, answers_per_exercise=1)
        if tally.errors:
            raise RuntimeError(f"warm-up failed: {tally.errors[:3]}")


async def _class(students: list[Student], port: int, warm: list[Student]) -> tuple[Tally, float]:
    await _warm_up(warm, port)
    tally = Tally()
    t0 = time.monotonic() + 0.5
    tasks = [asyncio.create_task(_student(s, port, t0, tally)) for s in students]
    done, pending = await asyncio.wait(tasks, timeout=HARD_LIMIT_S)
    for task in pending:
        task.cancel()
        tally.errors.append("a student did not finish within the time limit")
    for task in done:
        if task.exception() is not None:
            tally.errors.append(f"student task failed: {task.exception()!r}"[:200])
    return tally, time.monotonic() - t0


def _stored_per_student(database: Path) -> dict[str, int]:
    import sqlite3

    with sqlite3.connect(database) as con:
        rows = con.execute(
            "SELECT u.username, count(s.id) FROM users u LEFT JOIN submissions s "
            "ON s.user_id = u.id GROUP BY u.id"
        ).fetchall()
    return {str(name): int(n) for name, n in rows}


def _prepare(
    root: Path, n: int, rng: random.Random, duration: float
) -> tuple[dict[str, str], list[Student], float]:
    """A fresh instance with the class quiz and ``n`` signed-in students; their compressed
    start offsets and think times; the compression factor."""
    from quizapp import services
    from quizapp.models import db

    env = make_instance(root / "instance", _bank(root), root / "class.sqlite")
    app = app_for(env)
    with app.app_context():
        report = services.sync_folder(db.session, Path(env["QUIZAPP_EXERCISES"]))
        assert report.ok, report.summary()
        users = add_students(db.session, n + WARM_UP_STUDENTS, prefix="student")
        pairs = [(u.username, *session_cookie(app, u, USER_AGENT)) for u in users]
        db.engine.dispose()
    answers = len(EXERCISES) * ATTEMPTS
    raw = [(rng.uniform(*START_S), [rng.uniform(*THINK_S) for _ in range(answers)]) for _ in pairs]
    raw[-WARM_UP_STUDENTS:] = [(0.0, [0.0] * answers)] * WARM_UP_STUDENTS  # not in the scale
    scale = duration / max(start + sum(thinks) for start, thinks in raw)
    students = [
        Student(name, cookie, token, start * scale, [t * scale for t in thinks])
        for (name, cookie, token), (start, thinks) in zip(pairs, raw, strict=True)
    ]
    return env, students, scale


@dataclass
class ClassRun:
    """What one simulated class gave: latencies and errors, seconds, stored vs acknowledged, and
    the factor the think times were compressed by."""

    tally: Tally
    seconds: float
    acknowledged: int
    stored: int
    mismatched: list[str]
    scale: float


def simulate(n: int = STUDENTS, *, duration: float = DURATION_S, seed: int = 14) -> ClassRun:
    """Serve a fresh instance as ``quizapp serve`` does and run a class of ``n`` students whose
    think times are compressed into ``duration`` seconds."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="quizapp-bench-class-") as tmp:
        root = Path(tmp)
        env, everyone, scale = _prepare(root, n, rng, duration)
        students, warm = everyone[:n], everyone[n:]
        server = ServeLikeGunicorn(env)
        try:
            tally, seconds = asyncio.run(_class(students, server.port, warm))
            server.drain()
        finally:
            server.stop()
        stored = _stored_per_student(root / "class.sqlite")
    mismatched = [
        f"{s.username}: {s.acknowledged} acknowledged, {stored.get(s.username, 0)} stored"
        for s in students
        if stored.get(s.username, 0) != s.acknowledged
    ]
    for s in warm:  # the warm-up's submissions are not the class's
        stored.pop(s.username, None)
    return ClassRun(
        tally,
        seconds,
        sum(s.acknowledged for s in students),
        sum(stored.values()),
        mismatched,
        scale,
    )


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(quick: bool = False) -> list[Result]:
    n = 40 if quick else STUDENTS
    duration = 20.0 if quick else DURATION_S
    result = simulate(n, duration=duration)
    tally = result.tally
    total = sum(len(v) for v in tally.latency.values())
    rows: list[Result] = []
    rows.append(
        Result(
            "10 classroom",
            f"class of {n}: errors (non-200 answers, failed connections)",
            "",
            float(len(tally.errors)),
            0.5,  # target 0: "< 0.5"
            note=f"{total} requests in {result.seconds:.0f} s ({total / result.seconds:.0f} req/s); "
            f"think times 5-60 s and starts 0-30 s compressed x{result.scale:.3f} into "
            f"{duration:.0f} s; quizapp serve's defaults ({DEFAULT_WORKERS} workers x "
            f"{DEFAULT_THREADS} threads), SQLite; "
            + ("no error" if not tally.errors else "first errors: " + "; ".join(tally.errors[:3])),
        )
    )
    rows.append(
        Result(
            "10 classroom",
            f"class of {n}: acknowledged submissions not stored",
            "",
            float(len(result.mismatched)),
            0.5,
            note=f"{result.acknowledged} verdict pages received, {result.stored} submissions "
            "stored; compared per student"
            + ("" if not result.mismatched else ": " + "; ".join(result.mismatched[:3])),
        )
    )
    for kind in TYPES:
        values = tally.latency.get(kind, [])
        rows.append(
            Result(
                "10 classroom",
                f"class of {n}: {kind} p99",
                "ms",
                1e3 * _pct(values, 0.99),
                None,
                baseline=1e3 * statistics.median(values) if values else None,
                baseline_name="p50",
                note=f"{len(values)} requests; max {1e3 * max(values, default=0):.0f} ms",
            )
        )
    return rows


def main() -> None:
    """``python -m benchmarks.bench_classroom [N]``: run a class and print its figures."""
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else STUDENTS
    result = simulate(n)
    for kind in TYPES:
        v = result.tally.latency.get(kind, [])
        print(
            f"{kind:28s} n={len(v):5d} p50={1e3 * _pct(v, 0.5):7.1f} ms "
            f"p99={1e3 * _pct(v, 0.99):7.1f} ms max={1e3 * max(v, default=0):7.1f} ms"
        )
    print(f"{result.seconds:.0f} s, errors {len(result.tally.errors)}, acknowledged "
          f"{result.acknowledged}, stored {result.stored}, mismatched {len(result.mismatched)}")  # fmt: skip
    for line in result.tally.errors[:10] + result.mismatched[:10]:
        print("  ", line)


if __name__ == "__main__":
    main()
