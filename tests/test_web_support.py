"""Helpers shared by the web, API, service and migration tests (no tests in this module).

``make_app(tmp_path)`` builds an app on the running test's database, migrated to head: a fresh
SQLite file in ``tmp_path``, or a fresh PostgreSQL schema when the test runs on the ``postgres``
backend (see tests/conftest.py and tests/test_postgres_support.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from test_postgres_support import (
    copy_template,
    database_url,
    is_postgres,
    postgres_schema_in_use,
)

from quizapp import models
from quizapp.web import create_app
from quizapp.web.database import upgrade_database

REPO = Path(__file__).resolve().parent.parent
EXERCISES = REPO / "exercises"

# Cheaper scrypt parameters for the tests' many accounts (still scrypt; hashes carry their
# parameters, so verification is unchanged).  Production uses Werkzeug's defaults.
models.PASSWORD_METHOD = "scrypt:4096:8:1"

_TEMPLATES: dict[str, Path] = {}


def make_app(tmp_path: Path, **config: Any) -> Flask:
    """An app on the test's database (``tmp_path/quizapp.sqlite`` or the test's PostgreSQL
    schema), migrated; ``config`` overrides settings."""
    base: dict[str, Any] = {
        "INSTANCE_PATH": tmp_path / "instance",
        "SQLALCHEMY_DATABASE_URI": database_url(tmp_path),
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


def synced_app(tmp_path: Path, **config: Any) -> Flask:
    """``make_app`` with the repository's ``exercises/`` synced into the database."""
    import shutil
    import sqlite3
    import tempfile

    from quizapp import services
    from quizapp.models import db

    fresh_postgres = is_postgres() and not postgres_schema_in_use()
    if fresh_postgres and not {"SQLALCHEMY_DATABASE_URI", "QUIZAPP_EXERCISES"} & set(config):
        # The same idea on PostgreSQL: sync once into a template schema, copy its rows.
        def build(url: str) -> None:
            where = Path(tempfile.mkdtemp(prefix="quizapp-template-"))
            tpl = make_app(where, SQLALCHEMY_DATABASE_URI=url)
            with tpl.app_context():
                report = services.sync_folder(db.session, EXERCISES)
                assert report.errors == [], report.errors
                db.session.remove()
                db.engine.dispose()

        app = make_app(tmp_path, **config)
        copy_template(app, "synced", build)
        return app
    sqlite_default = "SQLALCHEMY_DATABASE_URI" not in config and not is_postgres()
    if sqlite_default and not (tmp_path / "quizapp.sqlite").exists():
        # Sync once per test session into a template database, then copy it (the bank is the
        # same for every test; syncing takes seconds).
        template = _TEMPLATES.get("synced")
        if template is None:
            where = Path(tempfile.mkdtemp(prefix="quizapp-template-"))
            app = make_app(where)
            with app.app_context():
                report = services.sync_folder(db.session, EXERCISES)
                assert report.errors == [], report.errors
                db.engine.dispose()
            template = where / "quizapp.sqlite"
            with sqlite3.connect(template) as conn:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            _TEMPLATES["synced"] = template
        shutil.copyfile(template, tmp_path / "quizapp.sqlite")
        return make_app(tmp_path, **config)
    app = make_app(tmp_path, **config)
    with app.app_context():
        report = services.sync_folder(db.session, EXERCISES)
    assert report.errors == [], report.errors
    return app


def student(app: Flask, username: str = "ana") -> FlaskClient:
    """A test client signed in as a newly registered student ``username``."""
    client = app.test_client()
    resp = register(client, username)
    assert resp.status_code == 302, resp.get_data(as_text=True)[:500]
    return client


def url_of(exercise_id: str) -> str:
    return "/exercises/" + exercise_id


def bank_variant_of(app: Flask, username: str, exercise_id: str) -> Any:
    """The bank ``Variant`` the student ``username`` currently sees for ``exercise_id``."""
    from quizapp import services
    from quizapp.models import Exercise, db

    with app.app_context():
        user = services.find_user(db.session, username)
        exercise = db.session.get(Exercise, exercise_id)
        row = services.get_or_create_variant(
            db.session, user, exercise, app.config["QUIZAPP_SEED_SECRET"]
        )
        return services.stored_variant(row)


def post_cells(client: FlaskClient, exercise_id: str, grid: Any) -> Any:
    """Submit ``grid`` (rows of values) through the exercise page's grid form."""
    page = client.get(url_of(exercise_id)).get_data(as_text=True)
    data = {"csrf_token": csrf_from(page), "via": "cells"}
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            data[f"cell-{r}-{c}"] = str(value)
    return client.post(url_of(exercise_id), data=data)


def post_text(client: FlaskClient, exercise_id: str, text: str, via: str = "text") -> Any:
    """Submit ``text`` through the paste box (or the single input / choices: ``via=""``)."""
    page = client.get(url_of(exercise_id)).get_data(as_text=True)
    data = {"csrf_token": csrf_from(page), "answer": text}
    if via:
        data["via"] = via
    return client.post(url_of(exercise_id), data=data)


def fmt(x: float) -> str:
    """A number as a student would type it, to 6 decimals."""
    return f"{float(x):.6f}"


def gradebook_column(exercise_id: str) -> str:
    """The gradebook CSV's header of a bank exercise's column (``<id> <title> (<points>)``),
    from its YAML in ``exercises/``."""
    from quizapp.bank.loader import load_exercise_file

    quiz, stem = exercise_id.split("/")
    exercise, errors = load_exercise_file(EXERCISES / quiz / f"{stem}.yaml")
    assert exercise is not None, errors
    points = float(exercise.spec.points)
    return f"{exercise_id} {exercise.spec.title} ({int(points) if points.is_integer() else points})"


def set_listed(quiz_dir: Path, name: str, listed: bool) -> None:
    """Add ``name`` to (or remove it from) the ``exercises:`` list of ``quiz_dir/quiz.yaml``:
    a quiz lists its exercises, so a test that adds or deletes an exercise file edits the list
    too (a listed file that is missing, or a file not listed, is a sync error)."""
    path = quiz_dir / "quiz.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("exercises:"))
    end = start + 1
    while end < len(lines) and lines[end].startswith("  - "):
        end += 1
    items = [line for line in lines[start + 1 : end] if line.strip() != f"- {name}"]
    if listed:
        items.append(f"  - {name}\n")
    path.write_text("".join(lines[: start + 1] + items + lines[end:]), encoding="utf-8")
