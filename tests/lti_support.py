"""Fixtures and helpers of the LMS (LTI 1.3) tests (no tests in this module).

Fixtures (import ``platform_fixture`` and ``tool_fixture`` into a test module to use them):
``platform``: the test platform of ``tests/lti_platform.py`` on a loopback port, with a course
(``course-1``: an instructor and two students).  ``tool``: the real app (bundled exercises
synced) served by Werkzeug on another loopback port, registered with the platform, on the test's
database backend (``db_url``: SQLite and PostgreSQL).  A ``requests.Session`` plays the browser:
it keeps cookies per host like a browser (both servers are on 127.0.0.1, as one site).
The background grade sender is off unless a test asks for it, so that tests decide when grades
go out (``tool.deliver()``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import requests
import yaml
from lti_platform import INSTRUCTOR, LEARNER, Platform, Tamper, parse_form_post
from test_web_support import EXERCISES, csrf_from, synced_app
from werkzeug.serving import make_server

from quizapp import services
from quizapp.lti import grades, keys, registry
from quizapp.lti.http import TimeoutSession, forget_tokens
from quizapp.models import Exercise, db

QUIZ = "01-linear-systems"
TWO = "01-linear-systems/06-two-by-two"
COURSE = "course-1"


def quiz_points(quiz_id: str) -> float:
    """The points of a quiz, read from its YAML files (independently of the app)."""
    total = 0.0
    for path in sorted((EXERCISES / quiz_id).glob("*.yaml")):
        if path.name == "quiz.yaml":
            continue
        total += float(yaml.safe_load(path.read_text(encoding="utf-8")).get("points", 10))
    return total


@dataclass
class Tool:
    """The served app: ``url``, ``app`` for direct access, the ``platform`` it is registered
    with."""

    app: Any
    url: str
    platform: Platform

    def deliver(self, **kwargs: Any) -> grades.DeliveryReport:
        """One run of the grade sender, as the worker does it."""
        with self.app.app_context(), TimeoutSession() as http:
            key = lambda: keys.tool_key(db.session, self.app.config["SECRET_KEY"])  # noqa: E731
            return grades.deliver_due(db.session, key, http, **kwargs)

    def query(self, fn: Any) -> Any:
        """``fn(session)`` in an app context."""
        with self.app.app_context():
            try:
                return fn(db.session)
            finally:
                db.session.rollback()

    def login(
        self, browser: requests.Session, user: str, message: dict[str, Any], **extra: str
    ) -> requests.Response:
        """The OIDC login initiation (past the cookie check), not following the redirect."""
        params = {**self.platform.login_params(user, message), "checked": "1", **extra}
        return browser.get(self.url + "/lti/login", params=params, allow_redirects=False)

    def id_token_post(
        self,
        browser: requests.Session,
        user: str,
        message: dict[str, Any],
        tamper: Tamper | None = None,
    ) -> tuple[str, dict[str, str]]:
        """Login, then the platform's authorization answer: (launch URL, form fields)."""
        resp = self.login(browser, user, message)
        assert resp.status_code == 302, resp.text[:500]
        self.platform.tamper = tamper
        auth = browser.get(resp.headers["Location"])
        assert auth.status_code == 200, auth.text[:500]
        return parse_form_post(auth.text)

    def launch(
        self,
        browser: requests.Session,
        user: str,
        message: dict[str, Any],
        tamper: Tamper | None = None,
    ) -> requests.Response:
        """A whole launch: login, authorization, the id_token posted to /lti/launch."""
        action, fields = self.id_token_post(browser, user, message, tamper)
        assert action == self.url + "/lti/launch"
        return browser.post(action, data=fields, allow_redirects=False)


def serve(app: Any) -> tuple[Any, threading.Thread, str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="lti-tool", daemon=True)
    thread.start()
    return server, thread, f"http://127.0.0.1:{server.server_port}"


def stop(app: Any, server: Any, thread: threading.Thread) -> None:
    app.extensions["quizapp_lti"].stop_worker()
    server.shutdown()
    server.server_close()
    thread.join(10)
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(name="platform")
def platform_fixture() -> Iterator[Platform]:
    p = Platform().start()
    p.add_user("teacher-1", "Tess Teacher", [INSTRUCTOR])
    p.add_user("student-1", "Ana Álvarez", [LEARNER])
    p.add_user("student-2", "Ben Bo", [LEARNER])
    p.add_context(COURSE, "Linear Algebra 101", ["teacher-1", "student-1", "student-2"])
    try:
        yield p
    finally:
        p.stop()


def register_platform(app: Any, p: Platform, **overrides: Any) -> None:
    with app.app_context():
        args = dict(
            issuer=p.issuer,
            client_id=p.client_id,
            auth_url=p.auth_url,
            token_url=p.token_url,
            jwks_url=p.jwks_url,
            deployment_ids=[p.deployment_id],
        )
        args.update(overrides)
        registry.register(db.session, **args)


@pytest.fixture(name="tool")
def tool_fixture(db_url: str, tmp_path: Path, platform: Platform) -> Iterator[Tool]:
    forget_tokens()
    app = synced_app(tmp_path, RATELIMIT_ENABLED=False, QUIZAPP_LTI_WORKER=False)
    server, thread, url = serve(app)
    platform.tool_login = url + "/lti/login"
    platform.tool_launch = url + "/lti/launch"
    platform.tool_jwks = url + "/lti/jwks"
    register_platform(app, platform)
    try:
        yield Tool(app, url, platform)
    finally:
        stop(app, server, thread)
        forget_tokens()


def deep_link(tool: Tool, browser: requests.Session, items: list[str]) -> requests.Response:
    """The instructor's deep-linking launch, the picker, the choice of ``items``
    (``quiz:<id>`` / ``exercise:<id>``) and the response posted back to the platform."""
    resp = tool.launch(browser, "teacher-1", {"kind": "deeplink", "context": COURSE})
    assert resp.status_code == 302, resp.text[:800]
    assert resp.headers["Location"].endswith("/lti/deep-link")
    page = browser.get(tool.url + "/lti/deep-link")
    assert page.status_code == 200, page.text[:800]
    answer = browser.post(
        tool.url + "/lti/deep-link", data={"csrf_token": csrf_from(page.text), "item": items}
    )
    assert answer.status_code == 200, answer.text[:800]
    action, fields = parse_form_post(answer.text)
    back = browser.post(action, data=fields)
    assert back.status_code == 200, back.text[:800]
    return back


def exercise_page(tool: Tool, browser: requests.Session, exercise_id: str) -> str:
    resp = browser.get(tool.url + "/exercises/" + exercise_id)
    assert resp.status_code == 200, resp.text[:500]
    return resp.text


def solve_two(tool: Tool, username: str) -> list[float]:
    """The solution of ``username``'s variant of the 2x2 system (NumPy, from its stored seed)."""
    with tool.app.app_context():
        user = services.find_user(db.session, username)
        exercise = db.session.get(Exercise, TWO)
        row = services.get_or_create_variant(
            db.session, user, exercise, tool.app.config["QUIZAPP_SEED_SECRET"]
        )
        v = services.stored_variant(row)
    x = np.linalg.solve(np.asarray(v.values["A"], float), np.asarray(v.values["y"], float))
    return [float(x[0]), float(x[1])]


def submit_cells(
    tool: Tool, browser: requests.Session, exercise_id: str, grid: list[list[Any]]
) -> str:
    page = exercise_page(tool, browser, exercise_id)
    data = {"csrf_token": csrf_from(page), "via": "cells"}
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            data[f"cell-{r}-{c}"] = f"{float(value):.6f}"
    resp = browser.post(tool.url + "/exercises/" + exercise_id, data=data)
    assert resp.status_code == 200, resp.text[:500]
    return resp.text


def username_of(tool: Tool, sub: str) -> str:
    from sqlalchemy import select

    from quizapp.lti.models import LtiUser
    from quizapp.models import User

    return tool.query(
        lambda s: s.scalar(
            select(User.username)
            .join(LtiUser, LtiUser.user_id == User.id)
            .where(LtiUser.sub == sub)
        )
    )
