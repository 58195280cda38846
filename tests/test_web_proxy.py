"""``QUIZAPP_PROXY_FIX``: behind a load balancer the client's address and scheme come from the
X-Forwarded-* headers (docs/deploying.md); without it the headers are ignored (they could be
forged)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import request, url_for
from test_web_support import make_app
from werkzeug.routing import BuildError

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


def _nav_links(html: str) -> dict[str, str]:
    """The main navigation's links, text -> href."""
    nav = html[html.index('<nav aria-label="Main">') : html.index("</nav>")]
    return {
        text: href for href, text in re.findall(r'<a[^>]* href="([^"]*)"[^>]*>([^<]+)</a>', nav)
    }


def test_navigation_links_follow_each_mount_point_of_the_proxy(tmp_path: Path) -> None:
    # The navigation's links are built once per mount point (web.page_url): the same process
    # serving /course-a and /course-b behind a proxy, and the root, links each to itself.
    app = make_app(tmp_path, QUIZAPP_PROXY_FIX="1")
    client = app.test_client()
    for prefix in ("/course-a", "", "/course-b", "/course-a"):
        headers = {"X-Forwarded-Prefix": prefix} if prefix else {}
        links = _nav_links(client.get("/login", headers=headers).get_data(as_text=True))
        assert links == {
            "quizapp": f"{prefix}/",
            "Sign in": f"{prefix}/login",
            "Register": f"{prefix}/register",
        }


def test_page_url_is_url_for_of_a_full_endpoint_name(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    page_url = app.jinja_env.globals["page_url"]
    with app.test_request_context("/", base_url="http://localhost/q/"):
        for endpoint in ("student.home", "student.progress", "auth.account", "auth.logout"):
            assert page_url(endpoint) == url_for(endpoint)
        assert page_url("student.home") == "/q/"
        with pytest.raises(ValueError, match="full endpoint name"):
            page_url(".home")
        with pytest.raises(ValueError, match="full endpoint name"):
            page_url("static")
        with pytest.raises(BuildError):
            page_url("student.no_such_page")


def test_page_url_with_path_values_is_built_per_value_and_mount_point(tmp_path: Path) -> None:
    # The exercise page's own links (its form, preview, previous and next exercise) take path
    # values: each (endpoint, values, mount point) is its own URL, quoted as url_for quotes it.
    app = make_app(tmp_path)
    page_url = app.jinja_env.globals["page_url"]
    for base in ("http://localhost/", "http://localhost/q/"):
        with app.test_request_context("/", base_url=base):
            root = base.removeprefix("http://localhost").rstrip("/")
            for quiz_id, name in (("q1", "e1"), ("q1", "e2"), ("a b", "ü/1")):
                for endpoint in ("student.exercise", "student.submissions", "api.preview"):
                    built = page_url(endpoint, quiz_id=quiz_id, name=name)
                    assert built == url_for(endpoint, quiz_id=quiz_id, name=name)
                    assert built.startswith(f"{root}/")
            assert page_url("student.exercise", quiz_id="a b", name="e1") == (
                f"{root}/exercises/a%20b/e1"
            )
            with pytest.raises(ValueError, match="as strings"):
                page_url("student.exercise", quiz_id="q1", name=3)
            with pytest.raises(BuildError):
                page_url("student.exercise", quiz_id="q1")
