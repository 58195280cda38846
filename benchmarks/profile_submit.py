"""Where the CPU of one HTML-form submit goes, by layer: a pyinstrument profile under the server
``quizapp serve`` runs.

The server is ``python -m benchmarks.bench_app`` (``quizapp serve``'s gunicorn options, its
worker class, 2 workers x 2 threads) with one change: :func:`profiling_worker` subclasses that
worker class so that each request's ``handle(conn)`` (the thread's whole work for one request:
gunicorn reads and parses it, runs the WSGI app, writes the response and the access log line)
runs under a pyinstrument ``Profiler`` of its thread, while a flag file names the profile being
taken.  One client sends the requests one after the other over one keep-alive connection, so
the profile is that of one request at a time (no queueing, no lock waits): first a warm-up
(unprofiled), then ``n`` submits of the bench exercise (``POST /exercises/bench/system``, the
form the browser posts, every answer different and wrong, rotating over the students: the
verdict page comes back), then ``n`` bare requests (``GET /bench/ok``) as the baseline.

Every sample's time goes to the layer of the innermost frame that belongs to one (see
:data:`LAYERS`; standard-library frames such as ``json`` or ``logging`` count for the layer that
called them).  pyinstrument samples wall time; the thread's CPU time per request
(``time.thread_time`` around each ``handle``) is measured too, and each layer's CPU is its share
of the samples times that CPU (on a loaded machine the wall time of a thread includes waiting
for a core, spread over the layers).  What the profile cannot see: the worker's main loop
(accept, poll, keep-alive bookkeeping, and with a buffering worker the reading of requests),
reported as the difference between the workers' CPU per request (``/proc``) and the profiled
threads'.

Usage: ``python -m benchmarks.profile_submit [-n 300] [--html DIR]``; ``run(quick)`` gives the
table rows of ``benchmarks/run.py --only profile``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import Result

#: (layer, path fragments): a frame belongs to the first layer one of whose fragments is in its
#: file path.  Order matters only for ``flask/sessions.py`` (before ``/flask/``) and the
#: catch-all ``/quizapp/`` (last).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("WSGI server (gunicorn)", ("/gunicorn/",)),
    (
        "session / CSRF / login",
        ("/flask_login/", "/flask_wtf/", "/wtforms/", "/itsdangerous/", "/flask/sessions.py"),
    ),
    (
        "SQL (SQLAlchemy, driver, write lock)",
        (
            "/sqlalchemy/",
            "/flask_sqlalchemy/",
            "/sqlite3/",
            "/psycopg/",
            "/psycopg_binary/",
            "/psycopg_pool/",
            "/quizapp/web/database.py",
        ),
    ),
    (
        "template (Jinja, page helpers)",
        (
            "/jinja2/",
            "/markupsafe/",
            "/quizapp/web/templates/",
            "/quizapp/web/display.py",
            "/quizapp/page.py",
            "/quizapp/render.py",
        ),
    ),
    (
        "grading",
        (
            "/quizapp/grading/",
            "/quizapp/bank/answers.py",
            "/quizapp/bank/detectors.py",
            "/quizapp/bank/kinds/",
        ),
    ),
    (
        "Flask + extensions (routing, request, limiter)",
        ("/flask/", "/werkzeug/", "/flask_limiter/", "/limits/", "/blinker/", "/flask_migrate/"),
    ),
    ("app: routes and services", ("/quizapp/",)),
)
OTHER = "other (thread pool, interpreter)"
LAYER_NAMES = tuple(name for name, _ in LAYERS) + (OTHER,)
#: Samples whose innermost frame is one of these built-ins measure waiting, not work: a send on
#: loopback wakes the client and, on a busy machine, the thread often loses its core right
#: there (the bare request's profile was 60 % ``socket.sendall``).  They are counted apart, in
#: wall time, and left out of the CPU attribution.
BLOCKING = frozenset(
    {
        "socket.sendall",
        "socket.send",
        "socket.recv",
        "socket.recv_into",
        "lock.acquire",
        "time.sleep",
        "select.select",
        "epoll.poll",
    }
)
WAITING = "waiting in socket calls and locks (wall time)"

#: quizapp functions whose inclusive time the report lists: (label, file fragment, function).
PHASES: tuple[tuple[str, str, str], ...] = (
    ("user loader (Flask-Login)", "/quizapp/web/__init__.py", "_load_user"),
    ("route: exercise()", "/quizapp/web/student.py", "exercise"),
    ("  get_exercise_and_variant", "/quizapp/services/variants.py", "get_exercise_and_variant"),
    ("  get_exercise", "/quizapp/services/variants.py", "get_exercise"),
    ("  get_or_create_variant", "/quizapp/services/variants.py", "get_or_create_variant"),
    ("  submit()", "/quizapp/services/submissions.py", "submit"),
    ("    grading (_grade)", "/quizapp/services/submissions.py", "_grade"),
    ("    refresh_user_totals", "/quizapp/services/totals.py", "refresh_user_totals"),
    ("    commit", "/sqlalchemy/orm/session.py", "commit"),
    ("  render_exercise()", "/quizapp/web/student.py", "render_exercise"),
    ("    render_template", "/flask/templating.py", "render_template"),
)

FLAG = "active-profile"
#: Sampling interval (seconds of wall time).
INTERVAL = 0.001


def _frame_file(identifier: str) -> tuple[str, str]:
    """(function, file path) of a pyinstrument frame identifier."""
    parts = identifier.split("\x00")
    return parts[0], (parts[1] if len(parts) > 1 else "")


def layer_of(path: str) -> str | None:
    """The layer of a frame in file ``path``, or None (standard library, interpreter)."""
    for name, fragments in LAYERS:
        if any(fragment in path for fragment in fragments):
            return name
    return None


@dataclass
class Breakdown:
    """Sampled seconds per layer (innermost frame with a layer) and per phase (inclusive);
    ``total``: the samples that are not :data:`WAITING` (what the CPU is attributed over)."""

    layers: dict[str, float]
    phases: dict[str, float]
    total: float


def breakdown(records: list[tuple[list[str], float]]) -> Breakdown:
    """Classify pyinstrument frame records (``(stack identifiers root first, seconds)``)."""
    layers: dict[str, float] = defaultdict(float)
    phases: dict[str, float] = defaultdict(float)
    total = 0.0
    for stack, seconds in records:
        leaf_function, leaf_file = _frame_file(stack[-1]) if stack else ("", "")
        if leaf_file == "<built-in>" and leaf_function in BLOCKING:
            layers[WAITING] += seconds
            continue
        total += seconds
        found = OTHER
        for identifier in reversed(stack):
            name = layer_of(_frame_file(identifier)[1])
            if name is not None:
                found = name
                break
        layers[found] += seconds
        seen = set()
        for identifier in stack:
            function, path = _frame_file(identifier)
            for label, fragment, wanted in PHASES:
                if label not in seen and function == wanted and fragment in path:
                    seen.add(label)
                    phases[label] += seconds
    return Breakdown(dict(layers), dict(phases), total)


# ------------------------------------------------------------------------------------------
# The worker side


def profiling_worker(base: Any, directory: Path) -> Any:
    """``base`` (a gunicorn worker class) whose ``handle`` runs under a per-thread pyinstrument
    profiler while ``directory/active-profile`` exists (its text names the profile); at the end of
    ``run`` each profile is saved as ``<name>-<pid>-<n>.pyisession`` with a ``.json`` beside it
    (requests, thread CPU seconds)."""
    from pyinstrument import Profiler

    directory = Path(directory)
    flag = directory / FLAG

    class ProfilingWorker(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._local = threading.local()
            self._profiles: list[tuple[str, Any, dict[str, float]]] = []
            self._guard = threading.Lock()

        def _profiler(self, name: str) -> tuple[Any, dict[str, float]]:
            mine = getattr(self._local, "profiles", None)
            if mine is None:
                mine = self._local.profiles = {}
            if name not in mine:
                profiler = Profiler(
                    interval=INTERVAL, async_mode="disabled", use_timing_thread=True
                )
                counts = {"requests": 0, "cpu": 0.0, "wall": 0.0}
                mine[name] = (profiler, counts)
                with self._guard:
                    self._profiles.append((name, profiler, counts))
            return mine[name]  # type: ignore[no-any-return]

        def handle(self, conn: Any) -> Any:
            try:
                name = flag.read_text().strip()
            except OSError:
                name = ""
            if not name:
                return super().handle(conn)
            sampled = not name.endswith(":cpu")  # "<name>:cpu": time the requests, no samples
            profiler, counts = self._profiler(name)
            c0, w0 = time.thread_time(), time.perf_counter()
            if sampled:
                profiler.start()
            try:
                return super().handle(conn)
            finally:
                if sampled:
                    profiler.stop()
                counts["cpu"] += time.thread_time() - c0
                counts["wall"] += time.perf_counter() - w0
                counts["requests"] += 1

        def run(self) -> None:
            try:
                super().run()
            finally:
                for k, (name, profiler, counts) in enumerate(self._profiles):
                    stem = directory / f"{name.replace(':', '-')}-{os.getpid()}-{k}"
                    if profiler.last_session is not None:
                        profiler.last_session.save(f"{stem}.pyisession")
                    Path(f"{stem}.json").write_text(json.dumps(counts))

    ProfilingWorker.__name__ = f"Profiling{getattr(base, '__name__', 'Worker')}"
    return ProfilingWorker


# ------------------------------------------------------------------------------------------
# The client side


@dataclass
class Profile:
    """One kind of request: ``requests`` timed without the profiler (thread CPU and wall
    seconds, the worker processes' CPU seconds over them, main loop included), then as many
    sampled by pyinstrument (``sample``, and the sampled run's thread CPU: the profiler's
    overhead is the difference)."""

    name: str
    requests: int
    cpu: float
    wall: float
    process_cpu: float
    sampled_cpu: float
    sample: Breakdown

    def ms(self, seconds: float) -> float:
        """``seconds`` of sampled time as CPU milliseconds per request: its share of the samples
        x the thread CPU per request measured without the profiler."""
        if not self.sample.total or not self.requests:
            return 0.0
        return 1e3 * self.cpu * (seconds / self.sample.total) / self.requests

    @property
    def cpu_ms(self) -> float:
        return 1e3 * self.cpu / max(1, self.requests)

    @property
    def process_cpu_ms(self) -> float:
        return 1e3 * self.process_cpu / max(1, self.requests)


def _load(directory: Path, name: str) -> tuple[int, float, float, Breakdown]:
    """(requests, thread CPU s, wall s, classified samples) of the files of profile ``name``."""
    from pyinstrument.session import Session

    requests, cpu, wall = 0, 0.0, 0.0
    records: list[tuple[list[str], float]] = []
    for meta in sorted(directory.glob(f"{name}-[0-9]*.json")):
        counts = json.loads(meta.read_text())
        requests += int(counts["requests"])
        cpu += float(counts["cpu"])
        wall += float(counts["wall"])
        session_file = meta.with_suffix(".pyisession")
        if session_file.exists():
            session = Session.load(str(session_file))
            records += [(list(stack), float(t)) for stack, t in session.frame_records]
    return requests, cpu, wall, breakdown(records)


class _Client:
    """One keep-alive HTTP/1.1 connection to the server."""

    def __init__(self, port: int, user_agent: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.user_agent = user_agent

    def post_answer(self, cookie: str, token: str, answer: str) -> None:
        from urllib.parse import urlencode

        body = urlencode({"csrf_token": token, "via": "text", "answer": answer}).encode()
        self.conn.request(
            "POST",
            "/exercises/bench/system",
            body=body,
            headers={
                "Cookie": f"session={cookie}",
                "Content-Type": "application/x-www-form-urlencoded",
                "User-Agent": self.user_agent,
            },
        )
        resp = self.conn.getresponse()
        page = resp.read()
        if resp.status != 200 or b"attempts-left" not in page:
            raise RuntimeError(f"submit answered {resp.status}: {page[:300]!r}")

    def get_bare(self) -> None:
        self.conn.request("GET", "/bench/ok", headers={"User-Agent": self.user_agent})
        resp = self.conn.getresponse()
        if resp.status != 200 or resp.read() != b"ok":
            raise RuntimeError(f"bare route answered {resp.status}")


def profile(n: int = 300, *, html_dir: Path | None = None) -> dict[str, Profile]:
    """Profile ``n`` submits and ``n`` bare requests (see the module docstring); returns the
    profiles ``submit`` and ``bare``.  ``html_dir``: also write pyinstrument's HTML report of
    each there."""
    from benchmarks.bench_http import USER_AGENT, ServeLikeGunicorn, _cpu_seconds, _prepare

    with tempfile.TemporaryDirectory(prefix="quizapp-profile-") as tmp:
        root = Path(tmp)
        n_users = max(64, n)  # each student answers ~3 times in all, as in class
        env, pairs = _prepare(root, n_users)
        profiles_dir = root / "profiles"
        profiles_dir.mkdir()
        flag = profiles_dir / FLAG
        server = ServeLikeGunicorn(env, profile_dir=profiles_dir)
        cpu: dict[str, float] = {}
        try:
            client = _Client(server.port, USER_AGENT)
            counter = 0

            def submits(count: int) -> None:
                nonlocal counter
                for _ in range(count):
                    counter += 1
                    cookie, token = pairs[counter % n_users]
                    client.post_answer(cookie, token, f"({1000 + counter}, {counter % 7})")

            for _ in range(40):
                client.get_bare()
            submits(n_users // 2)  # warm-up
            for name, work in (("submit", submits), ("bare", _bare(client))):
                pids = server.worker_pids()
                flag.write_text(f"{name}:cpu")
                before = _cpu_seconds(pids)
                work(n)
                cpu[name] = _cpu_seconds(pids) - before
                flag.write_text(name)
                work(n)
                flag.unlink()
        finally:
            server.stop()
        out = {}
        for name in ("submit", "bare"):
            requests, thread_cpu, wall, _ = _load(profiles_dir, f"{name}-cpu")
            sampled, sampled_cpu, _, sample = _load(profiles_dir, name)
            if requests != n or sampled != n:
                raise RuntimeError(f"{name}: {requests} + {sampled} requests seen, {n} + {n} sent")
            out[name] = Profile(name, requests, thread_cpu, wall, cpu[name], sampled_cpu, sample)
            if html_dir is not None:
                _write_html(profiles_dir, name, Path(html_dir))
    return out


def _bare(client: _Client) -> Any:
    def work(count: int) -> None:
        for _ in range(count):
            client.get_bare()

    return work


def _write_html(directory: Path, name: str, out: Path) -> None:
    from pyinstrument.renderers import HTMLRenderer
    from pyinstrument.session import Session

    files = sorted(directory.glob(f"{name}-[0-9]*.pyisession"))
    sessions = [Session.load(str(p)) for p in files]
    combined = sessions[0]
    for other in sessions[1:]:
        combined = Session.combine(combined, other)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"profile-{name}.html").write_text(HTMLRenderer().render(combined), encoding="utf-8")
    combined.save(out / f"profile-{name}.pyisession")


def report(profiles: dict[str, Profile]) -> str:
    """Markdown: CPU ms per request by layer for the submit and the bare request, the submit's
    phases, the thread and process CPU per request."""
    submit, bare = profiles["submit"], profiles["bare"]
    lines = [
        "| layer | submit ms | share | bare ms |",
        "|---|---|---|---|",
    ]
    for name in LAYER_NAMES:
        s = submit.sample.layers.get(name, 0.0)
        b = bare.sample.layers.get(name, 0.0)
        share = 100 * s / submit.sample.total if submit.sample.total else 0.0
        lines.append(f"| {name} | {submit.ms(s):.2f} | {share:.0f}% | {bare.ms(b):.2f} |")
    lines.append(
        f"| **request thread, in all** (CPU) | **{submit.cpu_ms:.2f}** | | **{bare.cpu_ms:.2f}** |"
    )
    per = {
        p.name: 1e3 * p.sample.layers.get(WAITING, 0.0) / max(1, p.requests) for p in (submit, bare)
    }
    lines.append(f"| {WAITING} | {per['submit']:.2f} | | {per['bare']:.2f} |")
    lines.append(
        f"| worker processes per request (CPU, main loop included) | {submit.process_cpu_ms:.2f} "
        f"| | {bare.process_cpu_ms:.2f} |"
    )
    lines += ["", "| submit phase (inclusive) | ms | share |", "|---|---|---|"]
    for label, _fragment, _function in PHASES:
        t = submit.sample.phases.get(label, 0.0)
        share = 100 * t / submit.sample.total if submit.sample.total else 0.0
        lines.append(f"| {label} | {submit.ms(t):.2f} | {share:.0f}% |")
    ratio = submit.wall / submit.cpu if submit.cpu else 0.0
    overhead = submit.sampled_cpu / submit.cpu if submit.cpu else 0.0
    lines += [
        "",
        f"{submit.requests} submits and {bare.requests} bare requests timed, as many sampled, "
        f"one at a time; wall / CPU of the request thread {ratio:.2f} (1.0 on an idle "
        f"machine); CPU while sampled {overhead:.2f}x.",
    ]
    return "\n".join(lines)


def run(quick: bool = False) -> list[Result]:
    """Rows for ``benchmarks/run.py``: CPU ms per request of each layer, submit vs bare."""
    n = 40 if quick else 300
    profiles = profile(n)
    submit, bare = profiles["submit"], profiles["bare"]
    note = (
        f"pyinstrument profile of {n} form submits and {n} bare GETs, one at a time, in the "
        "request threads of quizapp serve's workers: the layer's share of the samples x the "
        "thread's CPU per request (benchmarks/profile_submit.py)"
    )
    results = [
        Result(
            "9 profile",
            "submit CPU (request thread)",
            "ms",
            submit.cpu_ms,
            None,
            baseline=bare.cpu_ms,
            baseline_name="GET /bench/ok",
            note=note,
        )
    ]
    for name in LAYER_NAMES:
        s = submit.sample.layers.get(name, 0.0)
        b = bare.sample.layers.get(name, 0.0)
        results.append(
            Result(
                "9 profile",
                f"submit CPU in {name}",
                "ms",
                submit.ms(s),
                None,
                baseline=bare.ms(b) or None,
                baseline_name="same layer, bare GET",
            )
        )
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=300, help="requests profiled of each kind")
    parser.add_argument("--html", type=Path, default=None, help="write HTML reports here")
    args = parser.parse_args(argv)
    print(report(profile(args.n, html_dir=args.html)))


if __name__ == "__main__":
    main()
