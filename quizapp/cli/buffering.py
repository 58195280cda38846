"""A gunicorn worker that reads each request whole before a thread serves it (slow clients).

gunicorn's ``gthread`` worker hands a connection to a thread as soon as its first byte arrives;
the thread then reads the rest of the request with blocking reads.  A client that sends its
request one byte every few seconds ("slowloris") holds that thread for as long as it likes, and
a handful of such clients (as many as the worker has threads) stop the server for everyone: a
read timeout does not help, since it applies to each read, not to the request.

:class:`BufferingWorker` (built by :func:`buffering_worker`) keeps gunicorn's process model,
threads and keep-alive, and changes one thing: the worker's main loop (``selectors``, which
already polls the listening and kept-alive sockets) reads a request's bytes as they come,
without blocking, until :class:`RequestScanner` says the request is complete (headers, then the
``Content-Length`` or chunked body); only then does a thread get it, reading from memory.  A slow
client costs a few kilobytes, never a thread.  Deadlines are per request, not per read:

- the headers must be complete within ``header_timeout`` seconds of the connection being
  accepted (or of the first byte of the next request on a kept-alive connection);
- the body within ``body_timeout`` seconds of the end of the headers.

A request that misses its deadline is answered ``408 Request Timeout`` and closed; headers over
``MAX_HEADER_BYTES`` get ``431``, a body over ``max_body`` bytes ``413``, and when the worker
holds more than ``MAX_BUFFERED_BYTES`` of unfinished requests a further request gets ``503``.
What a thread still reads from the socket (bytes past what the scanner saw, e.g. a pipelined
request) is bounded by ``THREAD_READ_SECONDS`` per request.

This is the same design as a buffering reverse proxy (nginx buffers whole requests by default,
``proxy_request_buffering on``), inside the worker; production should still run behind one
(docs/deploying.md).  HTTP/1.x only, without TLS (``quizapp serve`` serves neither HTTP/2 nor
TLS: the proxy terminates HTTPS).
"""

from __future__ import annotations

import html
import json
import selectors
import socket
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

#: Largest header block (request line and headers) read before answering 431.
MAX_HEADER_BYTES = 64 * 1024
#: Unfinished requests one worker holds in memory at most (then 503 for the next one).
MAX_BUFFERED_BYTES = 64 * 1024 * 1024
#: Longest total time a thread may spend reading from the socket for one request (bytes the main
#: loop did not buffer: normally none).
THREAD_READ_SECONDS = 5.0
#: Longest chunk-size line (hex size and extensions) of a chunked body.
MAX_CHUNK_LINE = 1024
#: Default deadlines (seconds) of ``quizapp serve`` (``--header-timeout``, ``--body-timeout``).
HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 20.0

REASONS = {
    408: "Request Timeout",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}


#: The page of an early refusal outside the API: no stylesheet, script or link (the app, which
#: builds those, never saw the request).
_REJECTION_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{status} {reason} · quizapp</title></head>
<body>
<h1>{reason}</h1>
<p>{message}</p>
<p>Nothing was stored and no attempt was used. Go back to the previous page (your browser keeps
what you typed) and try again.</p>
</body>
</html>
"""


#: The app's security headers (``quizapp.web.security``) on an early refusal, which the app
#: never sees: the page loads nothing and may not be framed or sniffed.
_REJECTION_HEADERS = (
    "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "X-Frame-Options: DENY\r\n"
    "Referrer-Policy: same-origin\r\n"
    "Cache-Control: no-store\r\n"
)


class Rejected(Exception):
    """The request cannot be served: answer ``status`` with ``message`` and close."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _too_large(limit: int) -> str:
    """The 413 message: the limit in KiB when it is whole (the unit of the docs), and bytes."""
    kib = f"{limit // 1024} KiB, " if limit % 1024 == 0 else ""
    return f"The request body exceeds the limit of {kib}{limit} bytes."


def rejection(err: Rejected, target: bytes = b"") -> bytes:
    """The whole HTTP/1.1 response refusing a request early with ``err`` (413, 431, 408):
    ``{"error": message}`` as JSON for a request-target under ``/api/`` (the JSON API's error
    shape, docs/json-api.md), else a small self-contained HTML page (a browser shows it; the
    app's own error pages cannot be used, the request never reached the app); the connection
    closes after it."""
    reason = REASONS.get(err.status, "Error")
    if target.startswith(b"/api/"):
        body = (json.dumps({"error": err.message}) + "\n").encode()
        kind = "application/json"
    else:
        body = _REJECTION_PAGE.format(
            status=err.status, reason=reason, message=html.escape(err.message)
        ).encode()
        kind = "text/html; charset=utf-8"
    return (
        f"HTTP/1.1 {err.status} {reason}\r\n"
        f"Content-Type: {kind}\r\n"
        f"{_REJECTION_HEADERS}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


class RequestScanner:
    """Tells, from the bytes received so far, whether they hold one complete HTTP/1.x request.

    Pure (no socket).  :meth:`feed` appends bytes and returns True once the request is complete;
    it raises :class:`Rejected` for headers over ``max_header`` bytes (431) or a body over
    ``max_body`` bytes (413, from ``Content-Length`` or the chunk sizes).  It frames the request
    as RFC 9112 does (section 6.3: ``Transfer-Encoding`` ending in ``chunked`` first, else
    ``Content-Length``, else no body); a request it cannot frame (two ``Content-Length`` values,
    both headers, a bad chunk-size line) is "complete" at once, so that gunicorn's own parser
    refuses it (400) without waiting for bytes that may never come.
    """

    def __init__(self, max_header: int = MAX_HEADER_BYTES, max_body: int = 256 * 1024) -> None:
        self.max_header = max_header
        self.max_body = max_body
        self.data = bytearray()
        self.header_end: int | None = None  # offset just past the blank line
        self.expect_continue = False
        self.complete = False
        self._body_left: int | None = None  # Content-Length bytes still missing
        self._chunked = False
        self._pos = 0  # chunked: where scanning resumes
        self._chunk_state = "size"  # size | data | trailer
        self._chunk_left = 0
        self._decoded = 0

    @property
    def headers_done(self) -> bool:
        return self.header_end is not None

    @property
    def target(self) -> bytes:
        """The request-target of the request line received so far (``/api/v1/...``), or
        ``b""`` before it is whole (RFC 9112 section 3: method SP request-target SP version)."""
        end = self.data.find(b"\r\n")
        line = bytes(self.data if end < 0 else self.data[:end]).lstrip(b"\r\n")
        parts = line.split(b" ")
        return parts[1] if len(parts) >= 3 else b""

    def feed(self, data: bytes) -> bool:
        """Append ``data``; True when the buffered bytes hold a whole request."""
        if self.complete:
            self.data += data
            return True
        start = max(0, len(self.data) - 3)
        self.data += data
        if self.header_end is None:
            idx = self.data.find(b"\r\n\r\n", start)
            if idx < 0:
                if len(self.data) > self.max_header:
                    raise Rejected(431, f"The request headers exceed {self.max_header} bytes.")
                return False
            if idx + 4 > self.max_header:
                raise Rejected(431, f"The request headers exceed {self.max_header} bytes.")
            self.header_end = idx + 4
            self._frame(bytes(self.data[:idx]))
            if self.complete:
                return True
        return self._scan_body()

    def _frame(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        while lines and not lines[0]:
            lines.pop(0)  # empty lines before the request line (RFC 9112 section 2.2)
        if not lines:
            self.complete = True
            return
        version = lines[0].rsplit(b" ", 1)[-1].upper()
        lengths: list[bytes] = []
        codings: list[bytes] = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or name != name.strip() or not name:
                self.complete = True  # malformed: gunicorn answers 400
                return
            key = name.lower()
            value = value.strip(b" \t")
            if key == b"content-length":
                lengths.append(value)
            elif key == b"transfer-encoding":
                codings += [c.strip().lower() for c in value.split(b",")]
            elif key == b"expect" and value.lower() == b"100-continue":
                self.expect_continue = version == b"HTTP/1.1"
        if codings:
            if lengths or codings[-1] != b"chunked":
                self.complete = True  # refused by gunicorn (RFC 9112 section 6.3)
                return
            self._chunked = True
            self._pos = self.header_end or 0
            return
        if not lengths:
            self.complete = True  # no body
            self.expect_continue = False
            return
        if len(set(lengths)) != 1 or not lengths[0].isdigit() or len(lengths[0]) > 18:
            self.complete = True  # refused by gunicorn
            return
        length = int(lengths[0])
        if length > self.max_body:
            raise Rejected(413, _too_large(self.max_body))
        if length == 0:
            self.expect_continue = False
        self._body_left = length

    def _scan_body(self) -> bool:
        assert self.header_end is not None
        if self._body_left is not None:
            self.complete = len(self.data) - self.header_end >= self._body_left
            return self.complete
        if not self._chunked:
            self.complete = True
            return True
        data = self.data
        while True:
            if self._chunk_state in ("size", "trailer"):
                eol = data.find(b"\r\n", self._pos)
                if eol < 0:
                    if len(data) - self._pos > MAX_CHUNK_LINE:
                        self.complete = True  # gunicorn refuses the line
                        return True
                    return False
                line = bytes(data[self._pos : eol])
                self._pos = eol + 2
                if self._chunk_state == "trailer":
                    if not line:
                        self.complete = True
                        return True
                    continue
                size_text = line.split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    self.complete = True  # gunicorn answers 400
                    return True
                if size < 0 or size_text.startswith((b"-", b"+", b"0x", b"0X")):
                    self.complete = True
                    return True
                if size == 0:
                    self._chunk_state = "trailer"
                    continue
                self._decoded += size
                if self._decoded > self.max_body:
                    raise Rejected(413, _too_large(self.max_body))
                self._chunk_left = size + 2  # the data and its CRLF
                self._chunk_state = "data"
            else:
                have = len(data) - self._pos
                if have < self._chunk_left:
                    return False
                self._pos += self._chunk_left
                self._chunk_left = 0
                self._chunk_state = "size"


class BufferedSocket:
    """A client socket whose reads are served first from bytes already received.

    The worker's main loop reads the request into :meth:`load`; gunicorn's parser (in a thread)
    then calls :meth:`recv`, which returns those bytes, and reads the socket itself only past
    them, with a total deadline (:meth:`arm`) on top of the socket's timeout.  Every other
    method is the socket's.
    """

    def __init__(self, sock: socket.socket, read_timeout: float) -> None:
        self._sock = sock
        self._read_timeout = read_timeout
        self._buf = bytearray()
        self._deadline: float | None = None

    @property
    def raw(self) -> socket.socket:
        return self._sock

    def load(self, data: bytes | bytearray) -> None:
        """Put ``data`` in front of whatever is still buffered."""
        self._buf[:0] = data

    def buffered(self) -> int:
        """How many received bytes no one has read yet."""
        return len(self._buf)

    def take(self) -> bytes:
        """Remove and return the buffered bytes."""
        out = bytes(self._buf)
        self._buf.clear()
        return out

    def arm(self, seconds: float) -> None:
        """Reads from the socket for the coming request must end within ``seconds``."""
        self._deadline = time.monotonic() + seconds

    def setblocking(self, flag: bool) -> None:
        if flag:
            self._sock.settimeout(self._read_timeout)
        else:
            self._sock.setblocking(False)

    def recv(self, size: int, flags: int = 0) -> bytes:
        if self._buf:
            out = bytes(self._buf[:size])
            del self._buf[:size]
            return out
        if self._deadline is None:
            return self._sock.recv(size, flags)
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long to arrive")
        prior = self._sock.gettimeout()
        if prior is not None and prior <= left:
            return self._sock.recv(size, flags)
        self._sock.settimeout(left)
        try:
            return self._sock.recv(size, flags)
        finally:
            self._sock.settimeout(prior)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


@dataclass(eq=False)
class _Reading:
    """A connection whose request is being read by the main loop."""

    conn: Any
    scanner: RequestScanner
    deadline: float
    continue_sent: bool = False


@dataclass(eq=False)
class _Closing:
    """A connection that was sent an error: drained until the client closes, then closed."""

    sock: socket.socket
    deadline: float


_CLASSES: dict[tuple[float, float, int], Any] = {}


def buffering_worker(
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    max_body: int = 256 * 1024,
) -> Any:
    """gunicorn's ``gthread`` worker with whole-request buffering (see the module docstring).

    ``header_timeout`` / ``body_timeout``: seconds for the headers (from the connection or the
    request's first byte) and for the body (from the end of the headers); ``max_body``: largest
    body in bytes (the app's ``MAX_CONTENT_LENGTH``).  One class per distinct setting.
    """
    key = (float(header_timeout), float(body_timeout), int(max_body))
    if key in _CLASSES:
        return _CLASSES[key]
    from gunicorn.workers.gthread import ThreadWorker

    class BufferingWorker(ThreadWorker):
        """See :mod:`quizapp.cli.buffering`."""

        HEADER_TIMEOUT, BODY_TIMEOUT, MAX_BODY = key

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.reading: dict[int, _Reading] = {}
            self.closing: dict[int, _Closing] = {}
            self.buffered = 0

        # -- a connection waits in the main loop until its request is whole ---------------

        def enqueue_req(self, conn: Any) -> None:
            if self.cfg.is_ssl:
                return super().enqueue_req(conn)
            sock = conn.sock
            if not isinstance(sock, BufferedSocket):
                sock = conn.sock = BufferedSocket(sock, self._thread_timeout())
            leftover = b""
            if conn.parser is not None:
                leftover = conn.parser.unreader.take_buffered() or b""
            leftover += sock.take()
            scanner = RequestScanner(MAX_HEADER_BYTES, self.MAX_BODY)
            entry = _Reading(conn, scanner, time.monotonic() + self.HEADER_TIMEOUT)
            try:
                if leftover and scanner.feed(leftover):
                    return self._dispatch(entry)
            except Rejected as err:
                return self._reject(entry, err)
            sock.raw.setblocking(False)
            self.reading[sock.raw.fileno()] = entry
            self.buffered += len(scanner.data)
            self.poller.register(sock.raw, selectors.EVENT_READ, partial(self._on_readable, entry))

        def finish_request(self, conn: Any, fs: Any) -> None:
            # Bytes of a next (pipelined) request may already be in the BufferedSocket: the
            # socket will not turn readable for them, so scan them now instead of polling.
            sock = conn.sock
            if (
                isinstance(sock, BufferedSocket)
                and sock.buffered()
                and self.alive
                and not fs.cancelled()
                and fs.exception() is None
                and fs.result() is True
            ):
                return self.enqueue_req(conn)
            return super().finish_request(conn, fs)

        def _thread_timeout(self) -> float:
            return max(1.0, min(THREAD_READ_SECONDS * 2, float(self.cfg.timeout) / 2))

        def _on_readable(self, entry: _Reading, _fileobj: Any) -> None:
            raw = entry.conn.sock.raw
            try:
                data = raw.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if not data:  # the client went away
                self._forget(entry)
                self.nr_conns -= 1
                entry.conn.close()
                return
            scanner = entry.scanner
            if self.buffered + len(data) > MAX_BUFFERED_BYTES:
                self._forget(entry)
                return self._reject(
                    entry, Rejected(503, "The server is busy receiving other requests.")
                )
            headers_before = scanner.headers_done
            self.buffered += len(data)
            try:
                complete = scanner.feed(data)
            except Rejected as err:
                self._forget(entry)
                return self._reject(entry, err)
            if scanner.headers_done and not headers_before and not complete:
                entry.deadline = time.monotonic() + self.BODY_TIMEOUT
                if scanner.expect_continue and not entry.continue_sent:
                    entry.continue_sent = True
                    self._send_now(raw, b"HTTP/1.1 100 Continue\r\n\r\n")
            if complete:
                self._forget(entry)
                self._dispatch(entry)

        def _forget(self, entry: _Reading) -> None:
            raw = entry.conn.sock.raw
            self.reading.pop(raw.fileno(), None)
            self.buffered -= len(entry.scanner.data)
            try:
                self.poller.unregister(raw)
            except (KeyError, ValueError, OSError):
                pass

        def _dispatch(self, entry: _Reading) -> None:
            conn = entry.conn
            conn.sock.load(entry.scanner.data)
            conn.sock.arm(THREAD_READ_SECONDS)
            conn.data_ready = True  # gthread must not wait for bytes already read
            super().enqueue_req(conn)

        # -- errors ------------------------------------------------------------------------

        def _send_now(self, raw: socket.socket, data: bytes) -> None:
            try:
                raw.send(data)
            except OSError:
                pass

        def _reject(self, entry: _Reading, err: Rejected) -> None:
            """Answer ``err`` without blocking, then drain and close the connection."""
            raw = entry.conn.sock.raw
            raw.setblocking(False)
            self._send_now(raw, rejection(err, entry.scanner.target))
            self.log.info("%s %s from %s", err.status, err.message, entry.conn.client)
            try:
                raw.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            closing = _Closing(raw, time.monotonic() + 2.0)
            self.closing[raw.fileno()] = closing
            try:
                self.poller.register(raw, selectors.EVENT_READ, partial(self._drain, closing))
            except (KeyError, ValueError, OSError):
                self._close(closing)

        def _drain(self, closing: _Closing, _fileobj: Any) -> None:
            try:
                data = closing.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if not data:
                self._close(closing)

        def _close(self, closing: _Closing) -> None:
            self.closing.pop(closing.sock.fileno(), None)
            try:
                self.poller.unregister(closing.sock)
            except (KeyError, ValueError, OSError):
                pass
            try:
                closing.sock.close()
            except OSError:
                pass
            self.nr_conns -= 1

        # -- deadlines (the main loop calls this about once a second) -----------------------

        def wait_for_and_dispatch_events(self, timeout: float | None) -> None:
            # Wake up for the nearest deadline, not only once a second, so that a request is
            # dropped when its deadline passes (``None``: no limit but that deadline).
            if self.reading:
                nearest = min(e.deadline for e in self.reading.values())
                left = nearest - time.monotonic() + 0.01
                timeout = max(0.0, left if timeout is None else min(timeout, left))
            super().wait_for_and_dispatch_events(timeout)

        def murder_pending(self) -> None:
            super().murder_pending()
            now = time.monotonic()
            for entry in [e for e in self.reading.values() if e.deadline <= now]:
                self._forget(entry)
                part = "body" if entry.scanner.headers_done else "headers"
                limit = self.BODY_TIMEOUT if part == "body" else self.HEADER_TIMEOUT
                self._reject(
                    entry,
                    Rejected(408, f"The request {part} did not arrive within {limit:g} seconds."),
                )
            for closing in [c for c in self.closing.values() if c.deadline <= now]:
                self._close(closing)

    BufferingWorker.__name__ = "BufferingWorker"
    BufferingWorker.__qualname__ = "BufferingWorker"
    _CLASSES[key] = BufferingWorker
    return BufferingWorker


def __getattr__(name: str) -> Any:
    # ``gunicorn --worker-class quizapp.cli.buffering.BufferingWorker``: the worker with the
    # default deadlines and body limit, for gunicorn run directly (built on first use, so that
    # importing this module does not import gunicorn).
    if name == "BufferingWorker":
        return buffering_worker()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BODY_TIMEOUT",
    "HEADER_TIMEOUT",
    "MAX_BUFFERED_BYTES",
    "MAX_HEADER_BYTES",
    "THREAD_READ_SECONDS",
    "BufferedSocket",
    "Rejected",
    "RequestScanner",
    "buffering_worker",
]
