"""The points the JSON API gives after an instructor changes an exercise's ``points:``: each part's
points are its share of the exercise's points now, as the exercise page shows them, and stored
points carry no float noise (``4.666666666666666``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from test_instructor_support import PASSWORD, add_user, bank_app, signed_in, sync, variant_values

SOLVE = "01-linear-systems/06a-solve-and-check"
MAPS_BACK = "02-matrices-and-maps/10-transpose-maps-back"


def _token(app, username: str) -> dict[str, str]:
    resp = app.test_client().post(
        "/api/v1/token", json={"username": username, "password": PASSWORD}
    )
    assert resp.status_code == 201, resp.get_json()
    return {"Authorization": f"Bearer {resp.get_json()['token']}"}


def _api_student(tmp_path: Path, username: str, exercise_id: str):
    """(app, API client, auth headers, the exercise's API URL, the student's variant's values)
    for a new student of a fresh app with an editable copy of the bank."""
    app = bank_app(tmp_path)
    add_user(app, username)
    headers = _token(app, username)
    values = variant_values(app, username, exercise_id)
    return app, app.test_client(), headers, f"/api/v1/exercises/{exercise_id}", values


def _edit(app, exercise_id: str, *pairs: tuple[str, str]) -> None:
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{exercise_id}.yaml"
    text = path.read_text()
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new, 1)
    path.write_text(text)
    sync(app)


def test_a_parts_points_follow_a_change_of_the_exercises_points_in_the_api_as_on_the_page(
    tmp_path: Path,
) -> None:
    app, client, headers, url, values = _api_student(tmp_path, "ana", SOLVE)
    A, y = np.asarray(values["A"], float), np.asarray(values["y"], float)
    x = np.linalg.solve(A, y)
    answer = {"x": ", ".join(f"{v:g}" for v in x), "r": "1, 1"}  # x right, r wrong
    first = client.post(f"{url}/submissions", json={"parts": answer}, headers=headers)
    assert first.status_code == 201
    assert {n: p["points"] for n, p in first.get_json()["parts"].items()} == {"x": 8, "r": 2}
    # The exercise is now worth 20, its parts written 12 and 8: the variant keeps its split
    # (8 : 2, four fifths and one fifth), of the 20 points: 16 and 4.
    _edit(app, SOLVE, ("\npoints: 10\n", "\npoints: 20\n"),
          ("    points: 8\n", "    points: 12\n"), ("    points: 2\n", "    points: 8\n"))  # fmt: skip
    expected = {"x": 0.8 * 20, "r": 0.2 * 20}
    variant = client.get(f"{url}/variant", headers=headers).get_json()
    assert variant["points"] == 20
    assert {p["name"]: p["points"] for p in variant["parts"]} == expected
    listed = client.get(f"{url}/submissions", headers=headers).get_json()["submissions"]
    assert {n: p["points"] for n, p in listed[0]["parts"].items()} == expected
    again = client.post(
        f"{url}/submissions", json={"parts": {"r": "0, 0"}}, headers=headers
    ).get_json()
    assert {n: p["points"] for n, p in again["parts"].items()} == expected
    # The page says the same.
    page = signed_in(app, "ana").get(f"/exercises/{SOLVE}").get_data(as_text=True)
    shown = dict(re.findall(r"Part (\w+) <span class=\"meta\">· ([\d.]+) points", page))
    assert {n: float(p) for n, p in shown.items()} == expected


def test_submission_points_are_rounded_when_the_exercises_points_change(tmp_path: Path) -> None:
    app, client, headers, url, values = _api_student(tmp_path, "carl", MAPS_BACK)
    expected = np.asarray(values["A"], float).T @ np.asarray(values["y"], float)
    wrong = expected.copy()
    wrong[1:] += 1  # one of the entries right: a partial score
    resp = client.post(
        f"{url}/submissions", json={"answer": ", ".join(f"{v:g}" for v in wrong)}, headers=headers
    )
    verdict = resp.get_json()
    assert verdict["status"] == "partial", verdict
    score = verdict["score"]
    _edit(app, MAPS_BACK, ("points: 10", "points: 7"))
    sub = client.get(f"{url}/submissions", headers=headers).get_json()["submissions"][0]
    assert sub["points"] == round(score * 7, 6)
    progress = client.get("/api/v1/progress", headers=headers).get_json()
    mine = next(e for e in progress["exercises"] if e["id"] == MAPS_BACK)
    assert mine["best_points"] == round(score * 7, 6)
