"""Multi-part exercises through the app (issue 18): the exercise page (one part at a time or all
together, locked parts, attempts, invalid parts), the JSON API, the stored verdicts, regrade
with parts, per-part statistics and gradebook, on SQLite and PostgreSQL.

The exercises are the bundled ones; every expected value is computed here with NumPy from the
numbers of the student's stored variant, never read from the app.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_instructor_support import (
    add_user,
    bank_app,
    instructor,
    signed_in,
    submit,
    sync,
    variant_values,
)
from test_web_support import csrf_from

from quizapp import services
from quizapp.models import Progress, Submission, Variant, db

STEPS = "05-attention/01a-weights-step-by-step"  # expression: S = QK^T (4 points), W (6 points)
PIPELINE = "05-attention/02a-attention-step-by-step"  # attention, steps: S, Z, W, O
SOLVE = "01-linear-systems/06a-solve-and-check"  # expression: x (8 points), r = y - Ax (2)


@pytest.fixture()
def app(tmp_path: Path):
    app = bank_app(tmp_path)
    add_user(app, "ana")
    add_user(app, "ben")
    return app


def softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def grid(m: np.ndarray, digits: int = 6) -> list[list[str]]:
    return [[f"{v:.{digits}f}" for v in row] for row in np.atleast_2d(m)]


def lines(m: np.ndarray, digits: int = 6) -> str:
    return "\n".join(" ".join(f"{v:.{digits}f}" for v in row) for row in np.atleast_2d(m))


def scores_of(app, username: str) -> tuple[np.ndarray, np.ndarray]:
    """S = QK^T and W = softmax(S / sqrt 2) of the student's variant of STEPS, by NumPy."""
    values = variant_values(app, username, STEPS)
    S = np.asarray(values["Q"], float) @ np.asarray(values["K"], float).T
    return S, softmax_rows(S / np.sqrt(2))


def solved_system(app, username: str = "ana") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A, y and the solution x of A x = y of the student's variant of SOLVE, by NumPy."""
    values = variant_values(app, username, SOLVE)
    A, y = np.asarray(values["A"], float), np.asarray(values["y"], float)
    return A, y, np.linalg.solve(A, y)


def wrong_scores(S: np.ndarray) -> np.ndarray:
    """S with one entry changed so that the weights of its row change visibly."""
    bad = S.copy()
    row = 0
    j = int(np.argmin(bad[row]))  # raising the smallest score moves that row's weights
    bad[row, j] += 3
    return bad


def text(resp) -> str:
    return html.unescape(resp.get_data(as_text=True))


def page_of(client, exercise_id: str) -> str:
    resp = client.get(f"/exercises/{exercise_id}")
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return text(resp)


def post_parts(
    client, exercise_id: str, parts: dict[str, Any], only: str | None = None, paste: bool = False
):
    """Post the exercise page's form: each part's grid (``part-S-cell-r-c``) or paste box."""
    page = client.get(f"/exercises/{exercise_id}").get_data(as_text=True)
    data: dict[str, str] = {"csrf_token": csrf_from(page)}
    m = re.search(r'name="variant" value="(\d+)"', page)
    if m:
        data["variant"] = m.group(1)
    for name, value in parts.items():
        if paste or isinstance(value, str):
            data[f"part-{name}-answer"] = value if isinstance(value, str) else lines(value)
        else:
            for r, row in enumerate(value):
                for c, cell in enumerate(row):
                    data[f"part-{name}-cell-{r}-{c}"] = str(cell)
    if only:
        data["only"] = only
    return client.post(f"/exercises/{exercise_id}", data=data)


def rows_of(app, exercise_id: str) -> list[Submission]:
    with app.app_context():
        out = list(
            db.session.scalars(
                db.select(Submission)
                .where(Submission.exercise_id == exercise_id)
                .order_by(Submission.id)
            )
        )
        db.session.expunge_all()
        return out


def progress_of(app, username: str, exercise_id: str) -> Progress:
    with app.app_context():
        user = services.find_user(db.session, username)
        row = db.session.scalar(
            db.select(Progress).where(
                Progress.user_id == user.id, Progress.exercise_id == exercise_id
            )
        )
        db.session.expunge_all()
        return row


# --------------------------------------------------------------------------------------------
# The exercise page


def test_the_page_shows_each_part_with_its_own_grid_and_no_solution(app) -> None:
    client = signed_in(app, "ana")
    page = page_of(client, STEPS)
    assert "Part S" in page and "Part W" in page
    assert page.index("Part S") < page.index("Part W")
    assert "4 points" in page and "6 points" in page  # W: 6, S: the rest of 10
    for name in ("S", "W"):
        for r in range(2):
            for c in range(3):
                assert f'name="part-{name}-cell-{r}-{c}"' in page
    assert 'name="only" value="S"' in page and 'name="only" value="W"' in page
    assert "Submit all parts" in page
    assert "Computed from your S" in page  # W is graded with follow-through
    assert "Worked solution" not in page and "A correct answer" not in page


def test_one_part_at_a_time_locks_the_correct_part_and_counts_attempts(app) -> None:
    client = signed_in(app, "ana")
    S, W = scores_of(app, "ana")
    # Only S, with the button of part S (the W grid is posted empty).
    resp = post_parts(client, STEPS, {"S": grid(S, 0), "W": [[""] * 3] * 2}, only="S")
    page = text(resp)
    assert resp.status_code == 200
    assert 'attempts left: <strong id="attempts-left">3</strong> of 4' in page
    (first,) = rows_of(app, STEPS)
    assert first.used_attempt and first.attempt_number == 1 and first.answer_format == "parts"
    assert json.loads(first.raw_answer) == {"S": grid(S, 0)}
    parts = first.verdict["parts"]
    assert parts["S"]["status"] == "correct" and parts["S"]["locked"] is True
    assert parts["W"]["status"] == "unanswered" and parts["W"]["locked"] is False
    assert first.status == "partial" and first.score == pytest.approx(0.4)  # 4 of 10 points
    assert first.points == pytest.approx(4.0)
    # S's inputs are read-only now; W's are not.
    assert re.search(r'name="part-S-cell-0-0" value="[^"]*"[^>]*readonly', page)
    assert not re.search(r'name="part-W-cell-0-0" value="[^"]*"[^>]*readonly', page)
    assert 'name="only" value="S"' not in page and 'name="only" value="W"' in page
    # Then W alone (its own button): S is kept from the first submission.
    resp = post_parts(client, STEPS, {"W": grid(W, 2)}, only="W")
    page = text(resp)
    second = rows_of(app, STEPS)[-1]
    assert json.loads(second.raw_answer) == {"S": grid(S, 0), "W": grid(W, 2)}
    assert second.status == "correct" and second.score == 1.0 and second.attempt_number == 2
    assert second.verdict["parts"]["S"]["answered"] == "kept"
    assert second.verdict["parts"]["W"]["answered"] == "posted"
    assert "Solved!" in page and "Worked solution" in page
    assert '<p class="alert alert-done">Solved!' in page
    assert "A correct answer to part S" in page and "A correct answer to part W" in page
    p = progress_of(app, "ana", STEPS)
    assert p.best_score == 1.0 and p.attempts_used == 2 and p.best_points == 10.0
    assert p.best_parts == {
        "S": {"score": 1.0, "share": pytest.approx(0.4), "follow_through": False},
        "W": {"score": 1.0, "share": pytest.approx(0.6), "follow_through": False},
    }


def test_all_together_a_wrong_s_still_gets_w_by_follow_through_and_fixing_s_reopens_w(
    app,
) -> None:
    client = signed_in(app, "ana")
    S, W = scores_of(app, "ana")
    bad = wrong_scores(S)
    w_from_bad = softmax_rows(bad / np.sqrt(2))
    assert not np.allclose(np.round(w_from_bad, 2), np.round(W, 2))  # W really differs
    resp = post_parts(client, STEPS, {"S": grid(bad, 0), "W": grid(w_from_bad, 2)})
    page = text(resp)
    sub = rows_of(app, STEPS)[-1]
    parts = sub.verdict["parts"]
    assert parts["S"]["status"] == "partial" and parts["S"]["score"] == pytest.approx(5 / 6)
    assert parts["W"]["status"] == "correct" and parts["W"]["follow_through"] is True
    assert parts["W"]["score"] == 1.0 and "Correct given your S" in parts["W"]["message"]
    assert parts["W"]["locked"] is False  # its S may still change
    assert sub.score == pytest.approx(0.4 * 5 / 6 + 0.6)
    assert "Correct given your S" in page and "(follow-through)" in page
    # Fix S alone: W's old answer (from the wrong S) is kept and graded again: now wrong.
    post_parts(client, STEPS, {"S": grid(S, 0)}, only="S")
    sub = rows_of(app, STEPS)[-1]
    parts = sub.verdict["parts"]
    assert parts["S"]["status"] == "correct" and parts["S"]["locked"] is True
    assert parts["W"]["status"] != "correct" and parts["W"]["follow_through"] is False
    right = np.isclose(np.round(w_from_bad, 2), W, atol=0.0051)
    assert parts["W"]["cells"] == right.tolist()
    # The best submission stays the first (0.4 * 5/6 + 0.6 > 0.4 + 0.6 * share right).
    p = progress_of(app, "ana", STEPS)
    assert p.best_score == pytest.approx(max(0.4 * 5 / 6 + 0.6, sub.score))
    assert p.best_parts["W"]["follow_through"] is True
    assert p.attempts_used == 2


def test_a_locked_part_keeps_its_answer_and_an_invalid_part_uses_no_attempt(app) -> None:
    client = signed_in(app, "ana")
    S, W = scores_of(app, "ana")
    post_parts(client, STEPS, {"S": grid(S, 0)}, only="S")
    # Posting only the locked part again is refused before grading: nothing stored.
    resp = post_parts(client, STEPS, {"S": grid(S + 1, 0)}, only="S")
    assert resp.status_code == 400 and "already correct and locked" in text(resp)
    assert len(rows_of(app, STEPS)) == 1
    # A changed S beside a new W: S keeps its answer, the note says so.
    resp = post_parts(client, STEPS, {"S": grid(S + 1, 0), "W": "0.5 abc 1\n1 1 1"})
    sub = rows_of(app, STEPS)[-1]
    assert sub.status == "invalid" and not sub.used_attempt and sub.attempt_number is None
    assert sub.verdict["parts"]["W"]["status"] == "invalid"
    assert sub.verdict["parts"]["S"]["status"] == "correct"  # locked: shown as it is
    assert json.loads(sub.raw_answer)["S"] == grid(S, 0)
    assert "S was already correct: its answer is kept" in sub.verdict["message"]
    assert "used no attempt" in text(resp)
    assert progress_of(app, "ana", STEPS).attempts_used == 1
    # An unreadable part hides the other parts' grades: no free grading.
    client_b = signed_in(app, "ben")
    S_b, W_b = scores_of(app, "ben")
    post_parts(client_b, STEPS, {"S": grid(S_b, 0), "W": "x"})
    sub = rows_of(app, STEPS)[-1]
    assert sub.status == "invalid" and sub.verdict["parts"]["S"]["status"] == "ungraded"
    assert sub.verdict["parts"]["S"]["locked"] is False


def test_attempts_run_out_per_submission_and_show_each_parts_answer(app) -> None:
    client = signed_in(app, "ana")
    S, W = scores_of(app, "ana")
    for k in range(4):
        post_parts(client, STEPS, {"S": grid(S + k + 1, 0), "W": grid(W + 0.5, 2)})
    rows = rows_of(app, STEPS)
    assert [r.attempt_number for r in rows] == [1, 2, 3, 4]
    page = page_of(client, STEPS)
    assert "No attempts left on this variant" in page
    # Out of attempts is not dressed as solved (the single-answer page's red box, not the green).
    assert '<p class="alert alert-out">No attempts left on this variant.' in page
    assert "alert-done" not in page
    assert "A correct answer to part S" in page and "Worked solution" in page
    assert "S · " in page  # the worked solution lists each part's steps
    resp = post_parts(client, STEPS, {"S": grid(S, 0)})
    assert resp.status_code == 409 and len(rows_of(app, STEPS)) == 4


def test_a_locked_part_posted_after_the_attempts_ran_out_says_no_attempts_left(app) -> None:
    client = signed_in(app, "ana")
    S, W = scores_of(app, "ana")
    post_parts(client, STEPS, {"S": grid(S, 0)}, only="S")  # S right and locked: attempt 1
    for k in range(3):  # W wrong until no attempt is left
        post_parts(client, STEPS, {"W": grid(W + k + 1, 2)}, only="W")
    assert progress_of(app, "ana", STEPS).attempts_used == 4
    stored = len(rows_of(app, STEPS))
    # Only the locked part again: the variant is finished, which is what the student is told
    # (409), not "answer another part" (there is none left to answer).
    resp = post_parts(client, STEPS, {"S": grid(S, 0)}, only="S")
    assert resp.status_code == 409 and "No attempts left" in text(resp)
    assert "answer another part" not in text(resp)
    assert len(rows_of(app, STEPS)) == stored


def test_the_residual_of_a_wrong_solution_is_graded_on_the_students_own_x(app) -> None:
    """The check by substitution: r = y - Ax with the student's own (wrong) x."""
    client = signed_in(app, "ana")
    A, y, x = solved_system(app)
    wrong = x + np.array([1.0, 0.0])
    r = y - A @ wrong
    post_parts(client, SOLVE, {"x": [[f"{v:g}"] for v in wrong], "r": [[f"{v:g}"] for v in r]})
    parts = rows_of(app, SOLVE)[-1].verdict["parts"]
    assert parts["x"]["status"] == "partial" and parts["r"]["follow_through"] is True
    assert parts["r"]["status"] == "correct"
    # x = 0 would make the residual a copy of y: no follow-through credit, and it says why.
    post_parts(client, SOLVE, {"x": [["0"], ["0"]], "r": [[f"{v:g}"] for v in y]})
    parts = rows_of(app, SOLVE)[-1].verdict["parts"]
    assert parts["r"]["status"] == "incorrect" and parts["r"]["follow_through"] is False
    assert "No follow-through credit: your x is all zeros" in parts["r"]["message"]


def test_checking_x_only_says_the_kept_residual_was_graded_again_with_the_new_x(app) -> None:
    """The tester's steps: x wrong and r = y - Ax right for it (follow-through), then "Check
    part x only" with the right x.  The kept r is graded again against the new x (the whole
    answer is graded, docs/multi-part.md), so it turns incorrect, and the page says why; the
    best score stays."""
    client = signed_in(app, "ana")
    A, y, x = solved_system(app)
    wrong = x + np.array([1.0, 1.0])
    r = y - A @ wrong
    first = text(
        post_parts(client, SOLVE, {"x": [[f"{v:g}"] for v in wrong], "r": [[f"{v:g}"] for v in r]})
    )
    assert "was kept from your last submission" not in first  # both parts were sent
    best_before = progress_of(app, "ana", SOLVE).best_score
    page = text(post_parts(client, SOLVE, {"x": [[f"{v:.9g}"] for v in x]}, only="x"))
    parts = rows_of(app, SOLVE)[-1].verdict["parts"]
    assert parts["x"]["status"] == "correct" and parts["x"]["answered"] == "posted"
    assert parts["r"]["answered"] == "kept" and parts["r"]["status"] == "incorrect"
    note = (
        "Your answer to r was kept from your last submission and graded again with the x you "
        "sent now; check r again if its verdict changed."
    )
    assert note in page
    assert page.count(note) == 1  # said under r only, not under x
    # x's 8 of the 10 points (r's 2 lost), over the 2 of the first submission: the best grows.
    assert (best_before, progress_of(app, "ana", SOLVE).best_score) == pytest.approx((0.2, 0.8))
    # Sending r now (x is locked, kept): r's own verdict, no note.
    page = text(post_parts(client, SOLVE, {"r": [["0"], ["0"]]}, only="r"))
    assert rows_of(app, SOLVE)[-1].verdict["parts"]["r"]["status"] == "correct"
    assert "was kept from your last submission" not in page


def test_a_repeated_check_of_one_part_does_not_repeat_the_kept_note(app) -> None:
    """x wrong with r right for it, "Check part x only" with another wrong x (r kept, graded
    again: the note), then the same again: a repeat, no attempt used, and no note (nothing was
    graded again)."""
    client = signed_in(app, "ana")
    A, y, x = solved_system(app)
    wrong = x + np.array([1.0, 1.0])
    post_parts(
        client, SOLVE, {"x": [[f"{v:g}"] for v in wrong], "r": [[f"{v:g}"] for v in y - A @ wrong]}
    )
    other = [[f"{v:g}"] for v in x + np.array([2.0, 2.0])]
    page = text(post_parts(client, SOLVE, {"x": other}, only="x"))
    assert "Your answer to r was kept from your last submission" in page
    page = text(post_parts(client, SOLVE, {"x": other}, only="x"))
    last = rows_of(app, SOLVE)[-1]
    assert last.duplicate_of_id is not None and last.used_attempt is False
    assert "Your answer to r was kept" not in page


def test_a_part_refused_before_grading_keeps_the_pages_state(app) -> None:
    """x right and locked, then "Check part r only" with r's boxes empty: the refusal keeps x's
    answer, lock and verdict, offers no button for x, and lists the submissions (the
    tester's report: x came back empty and editable, and its button was refused)."""
    client = signed_in(app, "ana")
    A, y, x = solved_system(app)
    typed_x = [[f"{v:.9g}"] for v in x]
    post_parts(client, SOLVE, {"x": typed_x}, only="x")
    assert rows_of(app, SOLVE)[-1].verdict["parts"]["x"]["locked"] is True
    resp = post_parts(client, SOLVE, {"r": [[""], [""]]}, only="r")
    page = text(resp)
    assert resp.status_code == 400 and "Type an answer" in page
    assert len(rows_of(app, SOLVE)) == 1  # nothing stored
    for r, value in enumerate(typed_x):
        assert re.search(
            rf'name="part-x-cell-{r}-0" value="{re.escape(value[0])}"[^>]*readonly', page
        )
    assert 'name="only" value="x"' not in page and 'name="only" value="r"' in page
    assert "badge-locked" in page
    assert re.search(r'id="part-x"[^>]*>.*?Score 100%', page, re.S)
    assert 'class="submissions' in page or "submissions" in page.lower()
    # A box outside r's grid on an all-parts submit: refused, r's values come back as typed,
    # x keeps its locked answer (what is posted for it is ignored).
    resp = post_parts(client, SOLVE, {"x": [["1"], ["1"]], "r": [["5"], ["6"], ["7"]]})
    page = text(resp)
    assert resp.status_code == 400 and "outside the answer grid" in page
    assert len(rows_of(app, SOLVE)) == 1
    assert re.search(
        rf'name="part-x-cell-0-0" value="{re.escape(typed_x[0][0])}"[^>]*readonly', page
    )
    assert re.search(r'name="part-r-cell-0-0" value="5"', page)
    assert re.search(r'name="part-r-cell-1-0" value="6"', page)


def test_what_was_typed_comes_back_when_a_part_cannot_be_read_or_is_refused(app) -> None:
    """An unreadable text in a part's text box is shown again in that box; a box that is not
    UTF-8 is refused with the other boxes kept as typed; a multipart body with such a byte is
    refused the same way; "Check part r only" with r empty names r (the tester's report)."""
    client = signed_in(app, "ana")
    # Unreadable text for x, checked alone: graded invalid, the text kept in its box.
    page = text(post_parts(client, SOLVE, {"x": "("}, only="x"))
    assert rows_of(app, SOLVE)[-1].status == "invalid"
    assert re.search(
        r'<textarea id="part-x-answer-text" name="part-x-answer" rows="2">\(</textarea>', page
    )
    # A box that is not UTF-8 (a percent-escape): refused, nothing stored, the others kept.
    form = client.get(f"/exercises/{SOLVE}").get_data(as_text=True)
    token = csrf_from(form)
    variant = re.search(r'name="variant" value="(\d+)"', form).group(1)
    body = (
        f"csrf_token={token}&variant={variant}&part-x-cell-0-0=%FF&part-x-cell-1-0=7"
        "&part-r-answer=0%3B0"
    )
    resp = client.post(
        f"/exercises/{SOLVE}", data=body, content_type="application/x-www-form-urlencoded"
    )
    page = text(resp)
    assert resp.status_code == 400 and len(rows_of(app, SOLVE)) == 1
    assert "in the box in part x, row 1, column 1; nothing was graded" in page
    assert re.search(r'name="part-x-cell-1-0" value="7"', page)
    assert re.search(r'name="part-r-answer" rows="2">0;0</textarea>', page)
    # The same byte raw in a multipart body (Werkzeug reads it as U+FFFD): refused, not stored.
    fields = {"csrf_token": token.encode(), "variant": variant.encode(), "part-x-answer": b"1;\xff"}
    multipart = b"".join(
        b'--B\r\nContent-Disposition: form-data; name="' + k.encode() + b'"\r\n\r\n' + v + b"\r\n"
        for k, v in fields.items()
    )
    resp = client.post(
        f"/exercises/{SOLVE}",
        data=multipart + b"--B--\r\n",
        content_type="multipart/form-data; boundary=B",
    )
    assert resp.status_code == 400 and "not valid text (invalid UTF-8)" in text(resp)
    assert len(rows_of(app, SOLVE)) == 1
    # "Check part r only" with r empty: says which part.
    resp = post_parts(client, SOLVE, {}, only="r")
    assert resp.status_code == 400
    assert "Type an answer for part r first; nothing was graded" in text(resp)
    assert len(rows_of(app, SOLVE)) == 1


# --------------------------------------------------------------------------------------------
# The JSON API


def _token(client, username: str) -> dict[str, str]:
    resp = client.post("/api/v1/token", json={"username": username, "password": "correct horse"})
    assert resp.status_code == 201, resp.get_json()
    return {"Authorization": f"Bearer {resp.get_json()['token']}"}


def test_api_variant_lists_the_parts_and_submits_them_one_by_one_and_together(app) -> None:
    client = app.test_client()
    auth = _token(client, "ana")
    url = f"/api/v1/exercises/{STEPS}"
    got = client.get(url + "/variant", headers=auth).get_json()
    assert got["answer_form"] == {"type": "parts"}
    assert [p["name"] for p in got["parts"]] == ["S", "W"]
    s_part, w_part = got["parts"]
    assert s_part["answer_form"]["shape"] == [2, 3] and s_part["points"] == 4.0
    assert w_part["uses"] == ["S"] and w_part["points"] == 6.0 and "expected" not in w_part
    S, W = scores_of(app, "ana")
    bad = wrong_scores(S)
    resp = client.post(
        url + "/submissions",
        json={"parts": {"S": grid(bad, 0)}, "variant_id": got["variant_id"]},
        headers=auth,
    )
    assert resp.status_code == 201, resp.get_json()
    out = resp.get_json()
    assert set(out["parts"]) == {"S", "W"}
    for verdict in out["parts"].values():
        assert {"status", "score", "follow_through", "message", "cells", "mistakes"} <= set(verdict)
    assert out["parts"]["W"]["status"] == "unanswered" and out["attempts_left"] == 3
    assert out["status"] == "partial" and out["score"] == pytest.approx(0.4 * 5 / 6)
    # W as text, computed from the (wrong) S sent before: follow-through.
    resp = client.post(
        url + "/submissions",
        json={"parts": {"W": lines(softmax_rows(bad / np.sqrt(2)), 2)}},
        headers=auth,
    )
    out = resp.get_json()
    assert out["parts"]["W"]["follow_through"] is True and out["parts"]["W"]["score"] == 1.0
    assert out["attempts_left"] == 2
    # Both at once, right: solved.
    resp = client.post(
        url + "/submissions", json={"parts": {"S": grid(S, 0), "W": grid(W, 2)}}, headers=auth
    )
    out = resp.get_json()
    assert out["status"] == "correct" and out["solved"] and out["points"] == 10.0
    listed = client.get(url + "/submissions", headers=auth).get_json()["submissions"]
    assert [s["answer_format"] for s in listed] == ["parts"] * 3
    assert listed[1]["answer"] == {"S": grid(bad, 0), "W": lines(softmax_rows(bad / np.sqrt(2)), 2)}
    done = client.get(url + "/variant", headers=auth).get_json()
    assert done["finished"] and [p["name"] for p in done["parts"]] == ["S", "W"]
    assert all(p["expected"] and p["solution"] for p in done["parts"])


@pytest.mark.parametrize(
    ("exercise", "body", "message"),
    [
        (STEPS, {"answer": "1 2 3"}, "has parts (S, W)"),
        (STEPS, {"cells": [["1"]]}, "has parts (S, W)"),
        (STEPS, {"parts": {"X": "1"}}, "no part 'X'"),
        (STEPS, {"parts": {"S": [["1", "2"]]}}, "Part S: The grid of cells must be 2 × 3"),
        (STEPS, {"parts": {"S": 5}}, "Part 'S': give its answer as text"),
        (STEPS, {"parts": ["S"]}, "'parts' must map"),
        (STEPS, {"parts": {}}, "at least one part"),
        (STEPS, {"parts": {"S": "", "W": "  "}}, "at least one part"),
        (STEPS, {"parts": {"S": "1"}, "answer": "1"}, "exactly one of"),
        ("04-retrieval-and-softmax/05-softmax-vector", {"parts": {"S": "1"}}, "not parts"),
    ],
)
def test_api_refuses_malformed_part_answers_with_400(app, exercise, body, message) -> None:
    client = app.test_client()
    auth = _token(client, "ana")
    resp = client.post(f"/api/v1/exercises/{exercise}/submissions", json=body, headers=auth)
    assert resp.status_code == 400, resp.get_json()
    assert message in resp.get_json()["error"]
    assert rows_of(app, exercise) == []


def test_the_built_in_pipeline_carries_a_slip_through_every_later_step(app) -> None:
    """attention with steps: true: a wrong S, then Z, W, O each computed from the student's
    previous step (rounded to 2 decimals as asked) all earn their credit."""
    values = variant_values(app, "ana", PIPELINE)
    Q, K, V = (np.asarray(values[k], float) for k in ("Q", "K", "V"))
    d = Q.shape[1]
    S = Q @ K.T
    bad = S.copy()
    bad[0, 0] += 2
    Z = np.round(bad / np.sqrt(d), 2)
    W = np.round(softmax_rows(Z), 2)
    out = np.round(W @ V, 2)
    result = submit(
        app,
        "ana",
        PIPELINE,
        {"S": lines(bad, 0), "Z": lines(Z, 2), "W": lines(W, 2), "O": lines(out, 2)},
    )
    parts = result.verdict["parts"]
    assert list(parts) == ["S", "Z", "W", "O"]
    assert parts["S"]["status"] == "partial"
    for name in ("Z", "W", "O"):
        assert parts[name]["status"] == "correct", (name, parts[name])
        assert parts[name]["follow_through"] is True and not parts[name]["locked"]
    assert result.verdict["score"] == pytest.approx(0.25 * 5 / 6 + 0.75)


# --------------------------------------------------------------------------------------------
# Regrade, statistics, gradebook


def _edit(app, exercise_id: str, old: str, new: str) -> None:
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{exercise_id}.yaml"
    source = path.read_text(encoding="utf-8")
    assert old in source
    path.write_text(source.replace(old, new), encoding="utf-8")


def test_regrade_recomputes_each_part_from_the_stored_numbers(app) -> None:
    """W's key was published as softmax(S) (no scaling); ana answered that key, ben the right
    one. Fixing it and regrading turns both around, W's follow-through included."""
    from quizapp.instructor import regrade_exercise

    _edit(app, STEPS, "answer: softmax(S / sqrt(2))", "answer: softmax(S)")
    sync(app)
    S_a, _ = scores_of(app, "ana")
    S_b, W_b = scores_of(app, "ben")
    submit(app, "ana", STEPS, {"S": lines(S_a, 0), "W": lines(softmax_rows(S_a), 2)})
    submit(app, "ben", STEPS, {"S": lines(S_b, 0), "W": lines(W_b, 2)})
    before = {r.user_id: r for r in rows_of(app, STEPS)}
    assert sorted(r.status for r in before.values()) == ["correct", "partial"]
    _edit(app, STEPS, "answer: softmax(S)", "answer: softmax(S / sqrt(2))")
    sync(app)
    with app.app_context():
        summary = regrade_exercise(db.session, STEPS)
        assert summary.rekeyed == 2 and summary.changed == 2 and summary.unkeyable == []
        variants = {
            v.user_id: services.stored_variant(v)
            for v in db.session.scalars(db.select(Variant).where(Variant.exercise_id == STEPS))
        }
    after = {r.user_id: r for r in rows_of(app, STEPS)}
    ana, ben = (services_user_id(app, n) for n in ("ana", "ben"))
    assert (
        after[ana].status == "partial" and after[ana].verdict["parts"]["W"]["status"] != "correct"
    )
    assert after[ana].verdict["parts"]["S"]["locked"] is True
    assert after[ben].status == "correct" and after[ben].score == 1.0
    assert after[ben].verdict["parts"]["W"]["locked"] is True
    # The stored key is the new one, computed from each student's own numbers.
    np.testing.assert_allclose(variants[ben].parts[1].expected, W_b)
    assert variants[ben].parts[0].prompt.startswith("Compute the scores")
    assert progress_of(app, "ben", STEPS).best_parts["W"]["score"] == 1.0
    assert progress_of(app, "ana", STEPS).best_score == pytest.approx(after[ana].score)
    with app.app_context():
        page = db.session.get(Variant, after[ben].variant_id).page
    assert [p["name"] for p in page["parts"]] == ["S", "W"]


def services_user_id(app, username: str) -> int:
    with app.app_context():
        return services.find_user(db.session, username).id


def test_a_regrade_cannot_add_a_part_to_variants_already_shown(app) -> None:
    from quizapp.instructor import regrade_exercise

    S, W = scores_of(app, "ana")
    submit(app, "ana", STEPS, {"S": lines(S, 0), "W": lines(W, 2)})
    _edit(
        app,
        STEPS,
        "    points: 6\n",
        "    points: 3\n  - name: T\n    prompt: 'The transpose of S.'\n    answer: S.T\n    points: 3\n",
    )
    sync(app)
    with app.app_context():
        summary = regrade_exercise(db.session, STEPS, dry_run=True)
    assert summary.regraded == 0 and len(summary.unkeyable) == 1
    assert "parts (S, W, T) are not the variant's (S, W)" in summary.unkeyable[0]


def test_statistics_and_gradebook_show_per_part_scores_and_follow_through(app) -> None:
    from quizapp.instructor import (
        exercise_statistics,
        gradebook,
        gradebook_parts_table,
    )

    S_a, W_a = scores_of(app, "ana")
    bad = wrong_scores(S_a)
    submit(app, "ana", STEPS, {"S": lines(bad, 0), "W": lines(softmax_rows(bad / np.sqrt(2)), 2)})
    S_b, W_b = scores_of(app, "ben")
    submit(app, "ben", STEPS, {"S": lines(S_b, 0), "W": lines(W_b, 2)})
    add_user(app, "cy")
    S_c, W_c = scores_of(app, "cy")
    submit(
        app, "cy", STEPS, {"S": lines(np.zeros_like(S_c), 0), "W": lines(np.full((2, 3), 1 / 3), 2)}
    )
    with app.app_context():
        stats = exercise_statistics(db.session, STEPS)
        by = {p.name: p for p in stats.parts}
        assert [p.name for p in stats.parts] == ["S", "W"]
        assert by["S"].points == 4.0 and by["W"].points == 6.0
        assert by["S"].correct == 1 and by["W"].correct == 1  # ben
        assert by["W"].follow_through_students == 1 and by["W"].follow_through == 1  # ana
        assert by["W"].refused == 1  # cy: an all-zero S makes W trivial
        assert stats.wrong_answers == []  # counted per part instead
        zeros = "[" + ", ".join(["[0, 0, 0]"] * 2) + "]"
        assert (zeros, 1) in by["S"].wrong_answers
        # cy's zeros and thirds are right where the true S is 0 and W rounds to 0.33
        s_c = float(np.mean(S_c == 0))
        w_c = float(np.mean(np.abs(np.round(1 / 3, 2) - W_c) <= 0.0051))
        cy_score = 0.4 * s_c + 0.6 * w_c
        assert by["S"].mean_best_score == pytest.approx((5 / 6 + 1 + (s_c if cy_score else 0)) / 3)
        assert by["W"].mean_best_score == pytest.approx((1 + 1 + (w_c if cy_score else 0)) / 3)
        gb = gradebook(db.session, quiz_id="05-attention")
        cells = {r.username: r.cells[STEPS] for r in gb.rows}
        assert cells["ana"].parts["S"].points == pytest.approx(4 * 5 / 6)
        assert cells["ana"].parts["W"].follow_through and cells["ana"].parts["W"].points == 6.0
        assert (
            cells["ben"].parts["W"].available == 6.0 and not cells["ben"].parts["W"].follow_through
        )
        assert cells["ana"].points == pytest.approx(
            sum(p.points for p in cells["ana"].parts.values())
        )
        table = gradebook_parts_table(gb)
        assert table[0][3:] == [
            "exercise",
            "part",
            "points available",
            "points",
            "score",
            "follow-through",
        ]
        ana_w = [r for r in table if r[0] == "ana" and r[4] == "W"]
        assert ana_w == [["ana", "", "", STEPS, "W", 6.0, 6.0, 1.0, 1]]
        # recompute_progress gives what submit maintained
        before = progress_of(app, "ana", STEPS).best_parts
        services.recompute_progress(db.session, services_user_id(app, "ana"), STEPS)
        db.session.commit()
    assert progress_of(app, "ana", STEPS).best_parts == before


def test_instructor_pages_show_the_parts(app) -> None:
    S_a, _ = scores_of(app, "ana")
    bad = wrong_scores(S_a)
    submit(app, "ana", STEPS, {"S": lines(bad, 0), "W": lines(softmax_rows(bad / np.sqrt(2)), 2)})
    prof = instructor(app)
    stats = text(prof.get(f"/instructor/exercises/{STEPS}"))
    assert "By part" in stats and "Follow-through given" in stats
    book = text(prof.get("/instructor/gradebook?quiz=05-attention"))
    assert re.search(r"S 3\.333/4 · W 6/6<abbr title=\"by follow-through\">", book), book[-3000:]
    resp = prof.get("/instructor/gradebook-parts.csv?quiz=05-attention")
    assert resp.status_code == 200 and resp.mimetype == "text/csv"
    rows = list(csv.reader(io.StringIO(resp.get_data(as_text=True).lstrip("\ufeff"))))
    assert rows[0][3] == "exercise" and {r[4] for r in rows[1:]} == {"S", "W"}
    student_page = text(prof.get(f"/instructor/students/{services_user_id(app, 'ana')}"))
    assert "S: (partial)" in student_page and "W: (correct by follow-through)" in student_page
    preview = text(prof.get(f"/instructor/exercises/{STEPS}/preview?seed=3"))
    assert "Part S" in preview and "follow-through from S" in preview
    page = prof.get(f"/instructor/exercises/{STEPS}/preview?seed=3").get_data(as_text=True)
    resp = prof.post(
        f"/instructor/exercises/{STEPS}/preview?seed=3",
        data={"csrf_token": csrf_from(page), "part-S": "1 2 3\n4 5 6", "part-W": ""},
    )
    assert resp.status_code == 200
    assert "Part S: <strong>" in text(resp) and "Part W: <strong>unanswered" in text(resp)


def test_every_bundled_multi_part_exercise_shows_its_parts(app) -> None:
    """The student's page and the instructor's preview of each bundled multi-part exercise
    list its parts in order (the names the bank gives them)."""
    from test_web_support import EXERCISES

    from quizapp.bank import load_bank

    bank = load_bank(EXERCISES)
    multi = {
        eid: [p.name for p in ex.generate(0).parts]
        for eid, ex in bank.exercises.items()
        if ex.generate(0).parts
    }
    assert len(multi) >= 6
    client = signed_in(app, "ana")
    prof = instructor(app)
    for eid, names in multi.items():
        page = page_of(client, eid)
        at = [page.index(f"Part {n}") for n in names]
        assert at == sorted(at), eid
        preview = prof.get(f"/instructor/exercises/{eid}/preview?seed=0")
        assert preview.status_code == 200, eid
        assert all(f'id="part-{n}"' in preview.get_data(as_text=True) for n in names), eid


def test_regrade_of_a_built_in_kind_with_steps_applies_the_new_tolerance_to_its_parts(
    app,
) -> None:
    """attention with steps: true keeps its stored parts' answers (the kind computes them only
    while drawing); a regrade gives every part the current tolerance."""
    from quizapp.instructor import regrade_exercise

    values = variant_values(app, "ana", PIPELINE)
    Q, K, V = (np.asarray(values[k], float) for k in ("Q", "K", "V"))
    S = Q @ K.T
    Z = S / np.sqrt(Q.shape[1])
    W = softmax_rows(Z)
    off = W + 0.008  # wrong at {decdig: 2} (0.0051), right within one unit (atol 0.01)
    result = submit(
        app,
        "ana",
        PIPELINE,
        {"S": lines(S, 0), "Z": lines(Z, 2), "W": lines(off, 3), "O": lines(W @ V, 2)},
    )
    assert result.verdict["parts"]["W"]["status"] == "incorrect"
    # (a looser tolerance that still agrees with the parts' "2 decimal places": one unit)
    _edit(app, PIPELINE, "tolerance: {decdig: 2}", "tolerance: {rtol: 0, atol: 0.01}")
    sync(app)
    with app.app_context():
        summary = regrade_exercise(db.session, PIPELINE)
    assert summary.rekeyed == 1 and summary.changed == 1
    (sub,) = rows_of(app, PIPELINE)
    assert sub.verdict["parts"]["W"]["status"] == "correct"
    assert [sub.verdict["parts"][n]["status"] for n in "SZO"] == ["correct"] * 3
    with app.app_context():
        stored = services.stored_variant(db.session.get(Variant, sub.variant_id))
    # every part the exercise's new tolerance, but S, whose prompt says exact (graded exactly)
    assert [(p.tolerance.rtol, p.tolerance.atol) for p in stored.parts] == [
        (0.0, 0.0),
        (0.0, 0.01),
        (0.0, 0.01),
        (0.0, 0.01),
    ]
    assert "exact" in stored.parts[0].prompt and stored.parts[0].tolerance.atol == 0
    np.testing.assert_allclose(stored.parts[2].expected, W, rtol=1e-12)  # the stored key


def test_a_button_naming_no_part_is_refused_not_read_as_an_empty_answer(app) -> None:
    # A hand-made (or stale) form whose "only" names a part the exercise does not have: it says
    # so, rather than "Type an answer for at least one part" over the answers typed; nothing
    # is stored and no attempt is used.
    client = signed_in(app, "ana")
    S, _W = scores_of(app, "ana")
    resp = post_parts(client, STEPS, {"S": grid(S, 0)}, only="zzz")
    page = text(resp)
    assert resp.status_code == 400
    assert "names a part this exercise does not have" in page and "used no attempt" in page
    assert "Type an answer for at least one part" not in page
    assert rows_of(app, STEPS) == []


def test_per_part_statistics_count_only_the_students_whose_variant_has_the_part(app) -> None:
    # ana's variant was drawn from the text with parts S and W; a part T (S transposed) is then
    # added and synced, and ben's variant has S, W and T. Part T's figures are over ben alone
    # (his best on T is full: mean 1, not 0.5 with ana's missing T counted as 0); S and W are
    # over both.
    from quizapp.instructor import exercise_statistics

    S_a, W_a = scores_of(app, "ana")
    submit(app, "ana", STEPS, {"S": lines(S_a, 0), "W": lines(W_a, 2)})
    _edit(
        app,
        STEPS,
        "    points: 6\n",
        "    points: 3\n  - name: T\n    prompt: 'The transpose of S.'\n    answer: S.T\n"
        "    points: 3\n",
    )
    sync(app)
    S_b, W_b = scores_of(app, "ben")
    result = submit(
        app, "ben", STEPS, {"S": lines(S_b, 0), "W": lines(W_b, 2), "T": lines(S_b.T, 0)}
    )
    assert result.submission.status == "correct"
    with app.app_context():
        stats = exercise_statistics(db.session, STEPS)
    by = {p.name: p for p in stats.parts}
    assert [p.name for p in stats.parts] == ["S", "W", "T"]
    assert by["T"].students == 1 and by["T"].mean_best_score == pytest.approx(1.0)
    assert by["T"].correct == 1
    assert by["S"].students == 2 and by["S"].mean_best_score == pytest.approx(1.0)
    assert by["W"].students == 2 and by["W"].correct == 2
