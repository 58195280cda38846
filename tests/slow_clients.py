"""Slow ("slowloris") clients against a real server on loopback, for tests and measurements.

No tests in this module.  :class:`Tricklers` opens ``n`` connections that each send a request one
byte at a time, ``interval`` seconds apart, and never finish it: the headers never end
(``mode="headers"``), or complete headers announce a body that then trickles
(``mode="body"``), or half of each (``"mixed"``).  One thread drives every connection with
``select``; it records, per connection, when the server closed it and the status line it sent
first (``408``, or nothing).  :func:`timed_requests` measures normal requests meanwhile.

Run it by hand to measure a server (``PYTHONPATH=. python tests/slow_clients.py --help``): it
starts ``quizapp serve`` with its defaults on a free loopback port over a throw-away database.
"""

from __future__ import annotations

import http.client
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

HEAD_OF_HEADERS = b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
HEAD_OF_BODY = (
    b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\n"
)


@dataclass
class Trickle:
    """One slow connection: what it sends, how far it got, when the server closed it."""

    sock: socket.socket
    head: bytes
    mode: str
    opened_at: float
    sent: int = 0
    closed_at: float | None = None
    answer: bytes = b""

    @property
    def status_line(self) -> bytes:
        return self.answer.split(b"\r\n", 1)[0]


@dataclass
class Tricklers:
    """``n`` connections to ``127.0.0.1:port`` trickling one byte every ``interval`` seconds.

    ``mode`` ``"headers"``, ``"body"`` or ``"mixed"`` (even connections headers, odd ones body).
    With ``head_start`` the part of the request before the trickle (the request line and headers
    up to the slow header, or the whole header block before the slow body) is sent at once, as a
    real slow client does; the trickle is one byte per ``interval`` after it.
    """

    port: int
    n: int
    mode: str = "mixed"
    interval: float = 5.0
    head_start: bool = True
    conns: list[Trickle] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Tricklers:
        for i in range(self.n):
            mode = self.mode if self.mode != "mixed" else ("headers" if i % 2 == 0 else "body")
            head = HEAD_OF_HEADERS if mode == "headers" else HEAD_OF_BODY
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            sock.setblocking(False)
            conn = Trickle(sock, head, mode, time.monotonic())
            first = head if self.head_start else head[:1]
            try:
                sock.send(first)
                conn.sent = len(first)
            except OSError:
                conn.closed_at = time.monotonic()
            self.conns.append(conn)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _next_byte(self, conn: Trickle) -> bytes:
        if conn.sent < len(conn.head):
            return conn.head[conn.sent : conn.sent + 1]
        return b"a"  # the slow header's value, or the slow body, never ending

    def _run(self) -> None:
        next_send = time.monotonic() + self.interval
        while not self._stop.is_set():
            live = [c for c in self.conns if c.closed_at is None]
            if not live:
                return
            timeout = max(0.0, min(0.2, next_send - time.monotonic()))
            readable, _, _ = select.select([c.sock for c in live], [], [], timeout)
            by_sock = {c.sock: c for c in live}
            for sock in readable:
                self._read(by_sock[sock])
            if time.monotonic() >= next_send:
                for conn in live:
                    if conn.closed_at is not None:
                        continue
                    try:
                        conn.sock.send(self._next_byte(conn))
                        conn.sent += 1
                    except BlockingIOError:
                        pass
                    except OSError:
                        self._closed(conn)
                next_send += self.interval

    def _read(self, conn: Trickle) -> None:
        try:
            data = conn.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            conn.answer += data
            if len(conn.answer) < 65536:
                return
        self._closed(conn)

    def _closed(self, conn: Trickle) -> None:
        conn.closed_at = time.monotonic()
        try:
            conn.sock.close()
        except OSError:
            pass

    def open_count(self) -> int:
        return sum(c.closed_at is None for c in self.conns)

    def wait_closed(self, timeout: float) -> bool:
        """Wait until the server closed every connection (True) or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.open_count() == 0:
                return True
            time.sleep(0.1)
        return self.open_count() == 0

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        for conn in self.conns:
            if conn.closed_at is None:
                try:
                    conn.sock.close()
                except OSError:
                    pass

    def __enter__(self) -> Tricklers:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def timed_requests(
    port: int, count: int, *, clients: int = 4, timeout: float = 10.0, path: str = "/login"
) -> list[float | None]:
    """``count`` GET requests from ``clients`` threads, each on a new connection; the latency of
    each in seconds, or None for one that failed or took longer than ``timeout``."""
    out: list[float | None] = []
    lock = threading.Lock()

    def run(k: int) -> None:
        for _ in range(k):
            t0 = time.monotonic()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            try:
                conn.request("GET", path)
                resp = conn.getresponse()
                resp.read()
                ok = resp.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
            finally:
                conn.close()
            with lock:
                out.append(time.monotonic() - t0 if ok else None)

    per = [count // clients + (1 if i < count % clients else 0) for i in range(clients)]
    threads = [threading.Thread(target=run, args=(k,)) for k in per]
    for t in threads:
        t.start()
    for t in threads:
        t.join(count * timeout + 30)
    return out


def percentile(values: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) of ``values`` by the nearest-rank method."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 1))))
    return ordered[rank - 1]


def summary(latencies: list[float | None]) -> dict[str, Any]:
    """Counts, failures and p50/p99/max of ``timed_requests``' result (failures count as
    ``timeout`` seconds in the percentiles, so they cannot make p99 look better)."""
    done = [x for x in latencies if x is not None]
    failed = len(latencies) - len(done)
    worst = max(done, default=0.0)
    padded = done + [float("inf")] * failed
    return {
        "requests": len(latencies),
        "failed": failed,
        "p50": percentile(padded, 0.5) if padded else None,
        "p99": percentile(padded, 0.99) if padded else None,
        "max_ok": worst,
    }


def _main() -> None:  # pragma: no cover - a measuring tool
    import argparse
    import json
    import sys
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from server_harness import LiveServer

    from quizapp.cli.server import DEFAULT_THREADS, DEFAULT_WORKERS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trickle", type=int, default=256, help="slow connections")
    parser.add_argument("--mode", default="mixed", choices=["headers", "body", "mixed"])
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between bytes")
    parser.add_argument("--requests", type=int, default=100, help="normal requests measured")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    parser.add_argument("--wait-closed", type=float, default=60.0,
                        help="seconds to wait for the server to drop every slow connection")  # fmt: skip
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="quizapp-slow-"))
    with LiveServer(tmp, workers=args.workers, threads=args.threads) as server:
        quiet = summary(timed_requests(server.port, 20))
        with Tricklers(server.port, args.trickle, args.mode, args.interval) as slow:
            time.sleep(1.0)
            loaded = summary(timed_requests(server.port, args.requests))
            all_closed = slow.wait_closed(args.wait_closed)
            lifetimes = [(c.closed_at - c.opened_at) for c in slow.conns if c.closed_at is not None]
            statuses = sorted({c.status_line.decode(errors="replace") for c in slow.conns})
        print(
            json.dumps(
                {
                    "server": f"{args.workers} workers x {args.threads} threads",
                    "trickling": f"{args.trickle} ({args.mode}, a byte every {args.interval} s)",
                    "quiet": quiet,
                    "under_trickle": loaded,
                    "all_dropped_within_wait": all_closed,
                    "dropped_after_s": {
                        "min": min(lifetimes, default=None),
                        "max": max(lifetimes, default=None),
                    },
                    "first_status_lines": statuses,
                },
                indent=2,
            )
        )


if __name__ == "__main__":  # pragma: no cover
    _main()
