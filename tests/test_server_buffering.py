"""``quizapp.cli.buffering.RequestScanner``: when the bytes received hold one whole request.

The live server tests (slow clients against ``quizapp serve`` on loopback) are in
tests/test_hardening.py; these check the framing rules on their own, byte by byte.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quizapp.cli.buffering import BufferedSocket, Rejected, RequestScanner, rejection

GET = b"GET /login HTTP/1.1\r\nHost: x\r\n\r\n"
POST = b"POST /api/v1/token HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world"
CHUNKED = (
    b"POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
    b"5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"
)


def first_complete(request: bytes, **limits: int) -> int | None:
    """Feed ``request`` one byte at a time; the number of bytes fed when the scanner first said
    complete (None if never)."""
    scanner = RequestScanner(**limits)
    for i in range(len(request)):
        if scanner.feed(request[i : i + 1]):
            return i + 1
    return None


@pytest.mark.parametrize("request_bytes", [GET, POST, CHUNKED], ids=["get", "length", "chunked"])
def test_complete_exactly_at_the_last_byte(request_bytes: bytes) -> None:
    assert first_complete(request_bytes) == len(request_bytes)


@given(st.sampled_from([GET, POST, CHUNKED]), st.lists(st.integers(0, 200), max_size=8))
def test_any_split_of_a_request_is_complete_only_at_its_end(request: bytes, cuts: list[int]):
    scanner = RequestScanner()
    points = sorted({c % (len(request) + 1) for c in cuts} | {len(request)})
    start = 0
    for point in points:
        done = scanner.feed(request[start:point])
        assert done == (point == len(request)), (point, len(request))
        start = point


def test_pipelined_bytes_stay_in_the_buffer() -> None:
    scanner = RequestScanner()
    assert scanner.feed(POST + GET[:10]) is True
    assert bytes(scanner.data) == POST + GET[:10]


def test_expect_100_continue_is_noticed_for_http_1_1_with_a_body() -> None:
    head = b"POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n"
    scanner = RequestScanner()
    assert scanner.feed(head) is False and scanner.expect_continue and scanner.headers_done
    assert scanner.feed(b"abc") is True
    old = head.replace(b"HTTP/1.1", b"HTTP/1.0")
    scanner = RequestScanner()
    assert scanner.feed(old) is False and not scanner.expect_continue
    no_body = head.replace(b"Content-Length: 3", b"Content-Length: 0")
    scanner = RequestScanner()
    assert scanner.feed(no_body) is True and not scanner.expect_continue


def test_headers_over_the_limit_are_431_and_bodies_over_the_limit_413() -> None:
    scanner = RequestScanner(max_header=100)
    with pytest.raises(Rejected) as err:
        scanner.feed(b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 200)
    assert err.value.status == 431 and "100 bytes" in err.value.message
    scanner = RequestScanner(max_body=10)
    with pytest.raises(Rejected) as err:
        scanner.feed(POST[: POST.index(b"\r\n\r\n") + 4])
    assert err.value.status == 413 and "10 bytes" in err.value.message
    scanner = RequestScanner(max_body=10)
    with pytest.raises(Rejected) as err:
        scanner.feed(CHUNKED)  # 5 + 6 = 11 bytes decoded
    assert err.value.status == 413


@pytest.mark.parametrize(
    "head",
    [
        b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\n",
        b"POST / HTTP/1.1\r\nno colon here\r\n\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n",
    ],
)
def test_requests_that_cannot_be_framed_go_to_gunicorn_at_once(head: bytes) -> None:
    """gunicorn's parser refuses these (400) from the bytes there are: waiting for more would
    let a client hold the connection."""
    assert RequestScanner().feed(head) is True


def test_a_chunk_size_line_that_never_ends_is_handed_over() -> None:
    scanner = RequestScanner()
    head = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert scanner.feed(head + b"1" * 100) is False
    assert scanner.feed(b"1" * 2000) is True  # over the chunk-size line limit: gunicorn's 400


class FakeSocket:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.timeout: float | None = 10.0

    def recv(self, size: int, flags: int = 0) -> bytes:
        out, self.data = self.data[:size], self.data[size:]
        return out

    def gettimeout(self) -> float | None:
        return self.timeout

    def settimeout(self, value: float | None) -> None:
        self.timeout = value


def test_buffered_socket_serves_the_buffer_first_then_the_socket_until_its_deadline() -> None:
    raw = FakeSocket(b"from the socket")
    sock = BufferedSocket(raw, read_timeout=7.0)  # type: ignore[arg-type]
    sock.load(b"buffered ")
    assert sock.buffered() == 9
    assert sock.recv(4) + sock.recv(100) == b"buffered "
    sock.arm(5.0)
    assert sock.recv(100) == b"from the socket"
    sock.arm(-1.0)
    with pytest.raises(TimeoutError):
        sock.recv(10)
    sock.setblocking(True)
    assert raw.timeout == 7.0


def test_gunicorn_run_directly_finds_the_worker_by_its_dotted_path() -> None:
    from gunicorn.util import load_class
    from gunicorn.workers.gthread import ThreadWorker

    from quizapp.cli import buffering

    cls = load_class("quizapp.cli.buffering.BufferingWorker")
    assert issubclass(cls, ThreadWorker) and cls is buffering.buffering_worker()
    assert (cls.HEADER_TIMEOUT, cls.BODY_TIMEOUT) == (
        buffering.HEADER_TIMEOUT,
        buffering.BODY_TIMEOUT,
    )


def test_an_early_refusal_of_an_api_request_is_the_apis_json_error() -> None:
    import json as _json

    scanner = RequestScanner(max_body=10)
    with pytest.raises(Rejected) as err:
        scanner.feed(b"POST /api/v1/token HTTP/1.1\r\nContent-Length: 300\r\n\r\n")
    assert scanner.target == b"/api/v1/token"
    response = rejection(err.value, scanner.target)
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 Content Too Large\r\n")
    assert b"Content-Type: application/json\r\n" in head
    assert f"Content-Length: {len(body)}".encode() in head
    assert _json.loads(body) == {"error": "The request body exceeds the limit of 10 bytes."}
    # Elsewhere the refusal is a small HTML page a browser shows; a request line not yet whole
    # has no target.
    page = rejection(err.value, b"/exercises/q/e")
    head, _, body = page.partition(b"\r\n\r\n")
    assert b"Content-Type: text/html; charset=utf-8\r\n" in head
    assert f"Content-Length: {len(body)}".encode() in head
    text = body.decode()
    assert text.startswith("<!doctype html>")
    assert "<title>413 Content Too Large" in text
    assert "<p>The request body exceeds the limit of 10 bytes.</p>" in text
    assert "Nothing was stored and no attempt was used" in text
    assert "<link" not in text and "<script" not in text
    # The app's security headers, which it cannot add to a request it never sees.
    assert b"Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n" in head
    assert b"X-Content-Type-Options: nosniff\r\n" in head and b"X-Frame-Options: DENY\r\n" in head
    # The message is escaped.
    odd = rejection(Rejected(408, "The request <headers> did not arrive."), b"/login")
    assert b"<p>The request &lt;headers&gt; did not arrive.</p>" in odd
    partial_line = RequestScanner()
    partial_line.feed(b"GET /api/v1/pro")
    assert partial_line.target == b""
