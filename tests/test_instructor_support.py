"""Helpers for the instructor tests (no tests in this module).

Data is created through ``quizapp.services`` (``create_user``, ``submit``), the same code the
student pages use, so every invariant (progress rows, attempts) holds as in production.  Expected
values are recomputed in the tests from the stored submissions with plain Python, or from the
variant's numbers with NumPy.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from flask import Flask
from flask.testing import FlaskClient
from test_web_support import EXERCISES, csrf_from, make_app

from quizapp import services
from quizapp.models import Exercise, Submission, User, Variant, db

DECK = "01-linear-systems/05-deck-system"  # fixed system 5x + y = 15, 3x + 2y = 16: (2, 5)
TWO = "01-linear-systems/06-two-by-two"
TRANSPOSE = "03-transpose-and-products/01-transpose"
SEED_SECRET = "instructor-tests-seed-secret"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
PASSWORD = "correct horse"


def at(hours: float) -> datetime:
    """``T0`` plus ``hours``: submission times are set explicitly so tie-breaks are exact."""
    return T0 + timedelta(hours=hours)


def bank_app(tmp_path: Path, **config: Any) -> Flask:
    """An app whose exercise folder is a COPY of the repository's ``exercises/`` (so a test may
    edit a YAML file and sync again), synced, with a fixed seed secret."""
    folder = tmp_path / "exercises"
    if not folder.exists():
        shutil.copytree(EXERCISES, folder)
    base: dict[str, Any] = {"QUIZAPP_EXERCISES": folder, "QUIZAPP_SEED_SECRET": SEED_SECRET}
    base.update(config)
    app = make_app(tmp_path, **base)
    sync(app)
    return app


def sync(app: Flask) -> services.SyncReport:
    with app.app_context():
        report = services.sync_folder(db.session, Path(app.config["QUIZAPP_EXERCISES"]))
    assert report.errors == [], report.errors
    return report


def add_user(
    app: Flask,
    username: str,
    *,
    role: str = "student",
    display_name: str = "",
    email: str | None = None,
) -> int:
    with app.app_context():
        user = services.create_user(
            db.session, username, PASSWORD, role=role, display_name=display_name, email=email
        )
        return user.id


def signed_in(app: Flask, username: str, password: str = PASSWORD) -> FlaskClient:
    client = app.test_client()
    page = client.get("/login")
    resp = client.post(
        "/login",
        data={
            "csrf_token": csrf_from(page.get_data(as_text=True)),
            "username": username,
            "password": password,
        },
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)[:300]
    return client


def instructor(app: Flask, username: str = "prof") -> FlaskClient:
    add_user(app, username, role="instructor")
    return signed_in(app, username)


def variant_values(app: Flask, username: str, exercise_id: str) -> dict[str, Any]:
    """The numbers of the student's current variant (what the prompt shows)."""
    with app.app_context():
        user = services.find_user(db.session, username)
        exercise = db.session.get(Exercise, exercise_id)
        row = services.get_or_create_variant(db.session, user, exercise, SEED_SECRET)
        return dict(services.stored_variant(row).values)


def solution_of(app: Flask, username: str, exercise_id: str) -> np.ndarray:
    """The right answer of the student's variant, computed here with NumPy from its numbers."""
    values = variant_values(app, username, exercise_id)
    if "y" in values:  # a linear system A x = y
        return np.linalg.solve(np.asarray(values["A"], float), np.asarray(values["y"], float))
    return np.asarray(values["A"], float).T  # transpose


def text_of(value: np.ndarray) -> str:
    """A vector as ``a, b`` or a matrix as lines, to 9 decimals."""
    arr = np.atleast_1d(np.asarray(value, float))
    if arr.ndim == 1:
        return ", ".join(f"{v:.9f}" for v in arr)
    return "\n".join(" ".join(f"{v:.9f}" for v in row) for row in arr)


def submit(
    app: Flask, username: str, exercise_id: str, answer: Any, when: datetime | None = None
) -> services.SubmitResult:
    with app.app_context():
        user = services.find_user(db.session, username)
        result = services.submit(
            db.session, user, exercise_id, answer, seed_secret=SEED_SECRET, now=when
        )
        db.session.expunge_all()
        return result


def stored_submissions(app: Flask) -> list[dict[str, Any]]:
    """Every submission as a plain dict with username, exercise points and variant number."""
    with app.app_context():
        rows = db.session.execute(
            db.select(Submission, User.username, Exercise.points, Variant.variant_number)
            .join(User, User.id == Submission.user_id)
            .join(Exercise, Exercise.id == Submission.exercise_id)
            .join(Variant, Variant.id == Submission.variant_id)
            .order_by(Submission.id)
        ).all()
        return [
            {
                "id": s.id,
                "user": username,
                "exercise": s.exercise_id,
                "quiz": s.exercise_id.split("/")[0],
                "max_points": float(points),
                "variant": number,
                "score": float(s.score),
                "status": s.status,
                "used": bool(s.used_attempt),
                "attempt": s.attempt_number,
                "duplicate": s.duplicate_of_id is not None,
                "mistakes": list(s.mistakes or []),
                "parsed": s.parsed,
                "at": s.created_at,
            }
            for s, username, points, number in rows
        ]


def best_by_student(
    subs: list[dict[str, Any]], excused: set[tuple[str, str]] = frozenset(), quiz: str | None = None
) -> dict[str, dict[str, Any]]:
    """Per student, from the stored submissions with plain Python: points (best score of
    variant 1 x points, summed over exercises), exercises solved, graded attempts, and when the
    current total was reached (the latest first-time-reaching of each exercise's best)."""
    per: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for s in subs:
        if s["variant"] != 1 or not s["used"] or (s["user"], s["exercise"]) in excused:
            continue
        if quiz is not None and s["quiz"] != quiz:
            continue
        per.setdefault((s["user"], s["exercise"]), []).append(s)
    out: dict[str, dict[str, Any]] = {}
    for (user, _), rows in per.items():
        o = out.setdefault(user, {"points": 0.0, "solved": 0, "attempts": 0, "reached": None})
        best = max(r["score"] for r in rows)
        o["points"] += best * rows[0]["max_points"]
        o["solved"] += any(r["status"] == "correct" for r in rows)
        o["attempts"] += len(rows)
        if best > 0:
            first = min(r["at"] for r in rows if r["score"] == best)
            o["reached"] = first if o["reached"] is None else max(o["reached"], first)
    return out
