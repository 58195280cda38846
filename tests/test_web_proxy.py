"""``QUIZAPP_PROXY_FIX``: behind a load balancer the client's address and scheme come from the
X-Forwarded-* headers (docs/deploying.md); without it the headers are ignored (they could be
forged)."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import request
from test_web_support import make_app

FORWARDED = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}


def _probe(app):
    @app.route("/_probe")
    def probe() -> str:
        return f"{request.remote_addr} {request.scheme} {request.url_root}"

    return app.test_client().get(
        "/_probe", headers=FORWARDED, environ_base={"REMOTE_ADDR": "10.0.0.2"}
    )


def test_without_proxy_fix_forwarded_headers_are_ignored(tmp_path: Path) -> None:
    resp = _probe(make_app(tmp_path))
    assert resp.get_data(as_text=True) == "10.0.0.2 http http://localhost/"


def test_one_trusted_proxy_gives_the_client_address_and_https(tmp_path: Path) -> None:
    resp = _probe(make_app(tmp_path, QUIZAPP_PROXY_FIX="1"))
    assert resp.get_data(as_text=True) == "203.0.113.7 https https://localhost/"


@pytest.mark.parametrize("value", ["yes", "-1", "11", "1.5"])
def test_a_bad_proxy_count_is_a_clear_error(tmp_path: Path, value: str) -> None:
    with pytest.raises(ValueError, match="QUIZAPP_PROXY_FIX must be the number of trusted proxies"):
        make_app(tmp_path, QUIZAPP_PROXY_FIX=value)
