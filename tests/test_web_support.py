"""Helpers shared by the web, API, service and migration tests (no tests in this module).

``make_app(tmp_path)`` builds an app on a fresh SQLite file in ``tmp_path``, migrated to head.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from quizapp.web import create_app
from quizapp.web.database import upgrade_database

REPO = Path(__file__).resolve().parent.parent
EXERCISES = REPO / "exercises"


def make_app(tmp_path: Path, **config: Any) -> Flask:
    """An app on ``tmp_path/quizapp.sqlite``, migrated; ``config`` overrides settings."""
    base: dict[str, Any] = {
        "INSTANCE_PATH": tmp_path / "instance",
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'quizapp.sqlite'}",
        "TESTING": True,
        "QUIZAPP_EXERCISES": EXERCISES,
    }
    base.update(config)
    app = create_app(base)
    upgrade_database(app)
    return app


def csrf_from(html: str) -> str:
    """The CSRF token of the first form in ``html``."""
    m = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html)
    assert m, "no CSRF token in the page"
    return m.group(1)


def register(
    client: FlaskClient, username: str, password: str = "correct horse", **extra: str
) -> Any:
    page = client.get("/register")
    data = {
        "csrf_token": csrf_from(page.get_data(as_text=True)),
        "username": username,
        "password": password,
        "confirm": password,
        "display_name": extra.pop("display_name", ""),
        "email": extra.pop("email", ""),
    }
    data.update(extra)
    return client.post("/register", data=data)


def login(client: FlaskClient, username: str, password: str = "correct horse", **extra: Any) -> Any:
    page = client.get("/login")
    data = {
        "csrf_token": csrf_from(page.get_data(as_text=True)),
        "username": username,
        "password": password,
    }
    return client.post("/login" + extra.pop("query", ""), data=data, **extra)
