"""The ``/instructor`` pages and the public reset/leaderboard pages through the Flask test client:
role checks on EVERY instructor route (taken from the app's URL map, so a new route cannot slip
through untested), the scoreboard and gradebook pages and CSV download, statistics with the SVG
chart, preview and "try an answer" (no submission stored), one student's page (answers escaped),
excusals, regrade button (CSRF), roster import and the one-time reset-link flow, the anonymized
leaderboard."""

from __future__ import annotations

import csv
import hashlib
import html
import io
import re
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select
from test_instructor_support import (
    DECK,
    PASSWORD,
    TWO,
    add_user,
    at,
    bank_app,
    instructor,
    signed_in,
    solution_of,
    stored_submissions,
    submit,
    text_of,
)
from test_web_support import csrf_from, gradebook_column

from quizapp import instructor as inst
from quizapp.models import Submission, User, db
from quizapp.models_instructor import Excusal, PasswordReset, Regrade

DECK_URL = "/instructor/exercises/01-linear-systems/05-deck-system"


@pytest.fixture()
def app(tmp_path: Path):
    return bank_app(tmp_path)


def _page(resp) -> str:
    return html.unescape(resp.get_data(as_text=True))


def _instructor_urls(app, student_id: int) -> list[tuple[str, str]]:
    """(method, URL) of every rule of the instructor blueprint, with sample arguments."""
    values = {
        "quiz_id": "01-linear-systems",
        "name": "05-deck-system",
        "user_id": student_id,
        "regrade_id": 1,
        "variant_id": 1,
    }
    out = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if not rule.endpoint.startswith("instructor."):
                continue
            args = {k: values[k] for k in rule.arguments}
            url = app.url_for(rule.endpoint, **args)
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                out.append((method, url))
    return out


def test_every_instructor_route_requires_the_instructor_role(app) -> None:
    sid = add_user(app, "ana")
    submit(app, "ana", DECK, "2, 5", at(1))  # variant 1 exists, so its page has something
    with app.app_context():  # regrade 1 exists, so its page has something to show
        assert inst.regrade_exercise(db.session, DECK).regrade_id == 1
    routes = _instructor_urls(app, sid)
    endpoints = {u for _, u in routes}
    assert len(routes) >= 14, routes  # all the pages below, GET and POST
    assert "/instructor/gradebook.csv" in endpoints and "/instructor/roster.csv" in endpoints

    # POSTs carry a valid CSRF token of the client's session, so the role check is what answers.
    anonymous = app.test_client()
    token = csrf_from(anonymous.get("/login").get_data(as_text=True))
    for method, url in routes:
        data = {"csrf_token": token} if method == "POST" else None
        resp = anonymous.open(url, method=method, headers={"Accept": "text/html"}, data=data)
        assert resp.status_code == 302, (method, url, resp.status_code)
        assert "/login" in resp.headers["Location"]
        csv_resp = anonymous.open(url, method="GET", headers={"Accept": "text/csv"})
        assert csv_resp.status_code in (302, 401, 405), (url, csv_resp.status_code)
    assert (
        anonymous.get("/instructor/gradebook.csv", headers={"Accept": "text/csv"}).status_code
        == 401
    )

    student = signed_in(app, "ana")
    token = csrf_from(student.get("/").get_data(as_text=True))
    for method, url in routes:
        data = {"csrf_token": token} if method == "POST" else None
        resp = student.open(url, method=method, data=data)
        assert resp.status_code == 403, (method, url, resp.status_code)

    prof = instructor(app)
    for method, url in routes:
        if method == "GET":
            resp = prof.get(url)
            assert resp.status_code == 200, (url, resp.status_code)
        else:  # without the CSRF token every POST is refused, and changes nothing
            resp = prof.post(url, data={})
            assert resp.status_code == 400, (url, resp.status_code)
    with app.app_context():
        assert db.session.scalar(select(func.count(Regrade.id))) == 1
        assert db.session.scalar(select(func.count(Excusal.id))) == 0


def test_scoreboard_page_shows_two_students_submissions(app) -> None:
    add_user(app, "ana", display_name="Ana Alves")
    add_user(app, "ben", display_name="Ben <b>Brook</b>")
    prof = instructor(app)
    assert "No students yet" not in _page(prof.get("/instructor/scoreboard"))
    submit(app, "ben", DECK, "2, 5", at(1))
    submit(app, "ana", DECK, "0, 0", at(2))
    page = prof.get("/instructor/scoreboard").get_data(as_text=True)
    assert "Ben &lt;b&gt;Brook&lt;/b&gt;" in page  # escaped
    rows = re.findall(r"<tr>\s*<td>(\d+)</td>\s*<th[^>]*><a[^>]*><bdi>([^<]+)</bdi></a>", page)
    assert [(int(r), html.unescape(n)) for r, n in rows] == [
        (1, "Ben <b>Brook</b>"),
        (2, "Ana Alves"),
    ]
    paged = prof.get("/instructor/scoreboard?per_page=1&page=2&sort=points&dir=desc")
    assert paged.status_code == 200 and "Page 2 of 2" in _page(paged)
    assert prof.get("/instructor/scoreboard?sort=evil").status_code == 400
    assert prof.get("/instructor/scoreboard?page=x").status_code == 400
    assert prof.get("/instructor/scoreboard?quiz=nope").status_code == 404
    quiz = prof.get("/instructor/scoreboard?quiz=01-linear-systems")
    assert quiz.status_code == 200


def test_gradebook_csv_download_in_chunks_equals_the_in_memory_csv(app, monkeypatch) -> None:
    """The download joins lines into chunks; any chunk size gives the same text as
    gradebook_csv(gradebook()), with one byte order mark in front."""
    import quizapp.web.instructor as views

    for name in ("ana", "ben", "cy", "dee", "eve"):
        add_user(app, name)
        submit(app, name, DECK, "2, 5", at(1))
    with app.app_context():
        expected = inst.gradebook_csv(inst.gradebook(db.session))
    prof = instructor(app)
    for size in (1, 2, 3, 256):
        monkeypatch.setattr(views, "CSV_CHUNK_LINES", size)
        with prof.get("/instructor/gradebook.csv") as resp:  # closed: the stream's session ends
            chunks = list(resp.response)
        body = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
        assert body.decode("utf-8") == "\ufeff" + expected
        assert len(chunks) == 1 + -(-len(expected.splitlines()) // size)


def test_gradebook_csv_download_parses_back(app, tmp_path: Path) -> None:
    (Path(app.config["QUIZAPP_EXERCISES"]) / "course.yaml").write_text(
        "weights:\n  01-linear-systems: 1\n", encoding="utf-8"
    )
    add_user(app, "ana", display_name="Ana Álves", email="ana@example.org")
    add_user(app, "ben")
    submit(app, "ana", DECK, "2, 5", at(1))
    two = solution_of(app, "ben", TWO)
    submit(app, "ben", TWO, text_of(two), at(1))
    prof = instructor(app)
    resp = prof.get("/instructor/gradebook.csv")
    assert resp.status_code == 200
    assert resp.mimetype == "text/csv"
    assert "attachment" in resp.headers["Content-Disposition"]
    text = resp.get_data().decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["username"], r["display_name"], r["email"]) for r in rows] == [
        ("ana", "Ana Álves", "ana@example.org"),
        ("ben", "", ""),
    ]
    # Only quiz 01 weighs: both have 10 of its points.
    with app.app_context():
        q1 = sum(e.points for e in inst.live_exercises(db.session, "01-linear-systems"))
    for r in rows:
        assert float(r["course total %"]) == pytest.approx(100 * 10 / q1, abs=0.01)
    assert [r[gradebook_column(DECK)] for r in rows] == ["10", ""]  # ben never tried DECK
    assert [r[gradebook_column(TWO)] for r in rows] == ["", "10"]
    page = _page(prof.get("/instructor/gradebook"))
    assert "01-linear-systems 1" in page  # the weights are shown
    assert "quiz '05-attention' has no weight" in page  # and what they leave out
    only = prof.get("/instructor/gradebook.csv?quiz=03-transpose-and-products")
    assert "gradebook-03-transpose-and-products.csv" in only.headers["Content-Disposition"]
    # A broken course.yaml is reported on the page, not a 500.
    (Path(app.config["QUIZAPP_EXERCISES"]) / "course.yaml").write_text("weights: [", "utf-8")
    broken = prof.get("/instructor/gradebook")
    assert broken.status_code == 200 and "course.yaml is not used" in _page(broken)


def test_exercise_statistics_page_has_an_svg_chart_and_no_script(app) -> None:
    add_user(app, "ana")
    submit(app, "ana", DECK, "5, 2", at(1))
    submit(app, "ana", DECK, "2, 5", at(2))
    prof = instructor(app)
    page = prof.get(DECK_URL).get_data(as_text=True)
    assert '<svg class="bar-chart"' in page
    assert "<script>" not in page and "style=" not in page
    assert re.search(r"<title>100%: 1</title>", page)
    assert "(5, 2)" in page  # the wrong answer, normalized
    assert "Students who tried</dt><dd>1<" in page


def test_preview_at_seed_7_and_try_an_answer_stores_nothing(app) -> None:
    prof = instructor(app)
    page = prof.get(DECK_URL + "/preview?seed=7")
    assert page.status_code == 200
    body = _page(page)
    assert "seed 7" in body and "Worked solution" in body and "Expected answer" in body
    assert "swapped_unknowns" in body  # the kind's detectors are listed
    token = csrf_from(page.get_data(as_text=True))
    right = prof.post(DECK_URL + "/preview?seed=7", data={"csrf_token": token, "answer": "2, 5"})
    assert right.status_code == 200 and "<strong>correct</strong>" in _page(right)
    wrong = prof.post(DECK_URL + "/preview?seed=7", data={"csrf_token": token, "answer": "5, 2"})
    assert "<strong>incorrect</strong>" in _page(wrong)
    empty = prof.post(DECK_URL + "/preview?seed=7", data={"csrf_token": token, "answer": " "})
    assert empty.status_code == 400
    # Over the students' limit: the preview page says so, with the answer still in its box.
    long = "1 " * 10_001
    over = prof.post(DECK_URL + "/preview?seed=7", data={"csrf_token": token, "answer": long})
    assert over.status_code == 400
    assert "too long" in _page(over) and "Worked solution" in _page(over)
    assert long.strip() in _page(over)
    assert prof.post(DECK_URL + "/preview?seed=7", data={"answer": "2, 5"}).status_code == 400
    assert prof.get(DECK_URL + "/preview?seed=-1").status_code == 400
    assert prof.get("/instructor/exercises/01-linear-systems/nope/preview").status_code == 404
    with app.app_context():
        assert db.session.scalar(select(func.count(Submission.id))) == 0


def test_student_page_lists_variants_and_escapes_answers(app) -> None:
    sid = add_user(app, "ana")
    submit(app, "ana", DECK, "<script>alert(1)</script>", at(1))
    submit(app, "ana", DECK, [["<b>1</b>"], ["9"]], at(1.5))  # a grid, as the form posts it
    submit(app, "ana", DECK, "2, 5", at(2))
    prof = instructor(app)
    page = prof.get(f"/instructor/students/{sid}").get_data(as_text=True)
    assert "&lt;b&gt;1&lt;/b&gt;\n9</bdi></pre>" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    assert "Variant 1" in page and "seed " in page
    assert prof.get("/instructor/students/99999").status_code == 404


def test_excusal_buttons_change_the_gradebook(app) -> None:
    sid = add_user(app, "ana")
    submit(app, "ana", DECK, "0, 0", at(1))
    prof = instructor(app)
    page = prof.get(f"/instructor/students/{sid}")
    token = csrf_from(page.get_data(as_text=True))
    resp = prof.post(
        f"/instructor/students/{sid}/excusals",
        data={"csrf_token": token, "exercise_id": DECK, "reason": "ill", "action": "excuse"},
    )
    assert resp.status_code == 302
    rows = list(
        csv.DictReader(
            io.StringIO(prof.get("/instructor/gradebook.csv").get_data().decode("utf-8-sig"))
        )
    )
    assert rows[0][gradebook_column(DECK)] == "EX"
    assert "Excused: ill" in _page(prof.get(f"/instructor/students/{sid}"))
    bad = prof.post(
        f"/instructor/students/{sid}/excusals",
        data={"csrf_token": token, "exercise_id": "x/y", "action": "excuse"},
    )
    assert bad.status_code == 404
    prof.post(
        f"/instructor/students/{sid}/excusals",
        data={"csrf_token": token, "exercise_id": DECK, "action": "remove"},
    )
    with app.app_context():
        assert db.session.scalar(select(func.count(Excusal.id))) == 0


def _deck_at(app, figures: int) -> None:
    """The deck system's prompt and tolerance set to ``figures`` significant figures (each
    tolerance agreeing with its prompt, which sync requires), synced.  The bundled deck says
    exact."""
    from test_instructor_support import sync

    bundled = Path(__file__).resolve().parents[1] / "exercises" / f"{DECK}.yaml"
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{DECK}.yaml"
    text = bundled.read_text().replace(
        "Give exact values.", f"Give each value to {figures} significant figures."
    )
    path.write_text(text + f"tolerance: {{sigfig: {figures}}}\n", encoding="utf-8")
    sync(app)


def test_regrade_button_needs_csrf_and_shows_the_summary(app) -> None:
    # Graded to 2 significant figures, then regraded to a tightened 7.
    _deck_at(app, 2)
    add_user(app, "ana")
    submit(app, "ana", DECK, "2.01, 5", at(1))  # x 0.01 off: correct to 2 significant figures
    _deck_at(app, 7)
    prof = instructor(app)
    token = csrf_from(prof.get(DECK_URL).get_data(as_text=True))
    assert prof.post(DECK_URL + "/regrade", data={}).status_code == 400
    page = prof.get(DECK_URL).get_data(as_text=True)
    assert 'name="dry_run" value="1" checked' in page  # the dry run is the default
    dry = prof.post(DECK_URL + "/regrade", data={"csrf_token": token, "dry_run": "1"})
    assert dry.status_code == 200 and "would change" in _page(dry)
    assert "Regrade now: apply these changes" in _page(dry)
    assert [s["status"] for s in stored_submissions(app)] == ["correct"]
    done = prof.post(DECK_URL + "/regrade", data={"csrf_token": token})
    body = _page(done)
    assert "Regraded" in body and "1 verdict changed" in body
    assert [s["status"] for s in stored_submissions(app)] == ["partial"]
    assert "before regrade: correct" in _page(prof.get("/instructor/students/1"))
    stored = re.search(
        r'href="(/instructor/regrades/\d+)"', prof.get(DECK_URL).get_data(as_text=True)
    )
    assert stored is not None
    again = _page(prof.get(stored.group(1)))
    assert "1 verdict changed" in again and "correct 100%" in again and "partial 50%" in again
    assert prof.get("/instructor/regrades/999").status_code == 404


def _upload(client, token: str, text: str, name: str = "roster.csv"):
    return client.post(
        "/instructor/roster/import",
        data={"csrf_token": token, "roster": (io.BytesIO(text.encode("utf-8")), name)},
        content_type="multipart/form-data",
    )


def test_roster_import_reset_link_flow_and_export(app) -> None:
    prof = instructor(app)
    token = csrf_from(prof.get("/instructor/students").get_data(as_text=True))
    roster = (
        'Username,Display name,Email\nzoe,Zoë Zed,zoe@example.org\nyan,=HYPERLINK("http://evil"),\n'
    )
    resp = _upload(prof, token, roster)
    assert resp.status_code == 200, _page(resp)[:500]
    links = dict(
        re.findall(
            r"<th scope=\"row\"><bdi>(\w+)</bdi></th><td><bdi>[^<]*</bdi></td>"
            r"<td><code class=\"link\">([^<]+)</code>",
            resp.get_data(as_text=True),
        )
    )
    assert set(links) == {"zoe", "yan"}
    tokens = {u: link.rsplit("/reset/", 1)[1] for u, link in links.items()}
    with app.app_context():
        stored = {r.user.username: r for r in db.session.scalars(select(PasswordReset))}
        for user, t in tokens.items():
            assert stored[user].token_hash == hashlib.sha256(t.encode()).hexdigest()
            assert t not in stored[user].token_hash
        zoe = db.session.scalar(select(User).where(User.username == "zoe"))
        assert zoe.role == "student" and zoe.display_name == "Zoë Zed"
        assert zoe.email == "zoe@example.org"
        assert not zoe.check_password("")  # no password works before the reset

    # The account cannot sign in yet.
    blocked = app.test_client()
    page = blocked.get("/login")
    resp = blocked.post(
        "/login",
        data={
            "csrf_token": csrf_from(page.get_data(as_text=True)),
            "username": "zoe",
            "password": "whatever1",
        },
    )
    assert resp.status_code != 302

    student = app.test_client()
    form = student.get(f"/reset/{tokens['zoe']}")
    assert form.status_code == 200 and "zoe" in _page(form)
    t = csrf_from(form.get_data(as_text=True))
    mismatch = student.post(
        f"/reset/{tokens['zoe']}",
        data={"csrf_token": t, "password": "new password 1", "confirm": "x"},
    )
    assert mismatch.status_code == 400 and "differ" in _page(mismatch)
    short = student.post(
        f"/reset/{tokens['zoe']}", data={"csrf_token": t, "password": "short", "confirm": "short"}
    )
    assert short.status_code == 400
    done = student.post(
        f"/reset/{tokens['zoe']}",
        data={"csrf_token": t, "password": "new password 1", "confirm": "new password 1"},
    )
    assert done.status_code == 302
    assert student.get("/").status_code == 200  # signed in
    assert app.test_client().get(f"/reset/{tokens['zoe']}").status_code == 404  # once only
    signed_in(app, "zoe", "new password 1")

    # Importing again skips the existing usernames and creates nothing.
    again = _upload(prof, token, roster)
    assert again.status_code == 200 and "the username exists already" in _page(again)
    with app.app_context():
        assert db.session.scalar(select(func.count(User.id))) == 3

    # Export, parse back.
    exported = prof.get("/instructor/roster.csv").get_data().decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows == [
        ["username", "display_name", "email"],
        ["yan", '\'=HYPERLINK("http://evil")', ""],
        ["zoe", "Zoë Zed", "zoe@example.org"],
    ]
    # ... and the exported file imports back to the same people (the apostrophe undone).
    with app.app_context():
        entries = inst.parse_roster_csv(exported)
    assert [(e.username, e.display_name, e.email) for e in entries] == [
        ("yan", '=HYPERLINK("http://evil")', ""),
        ("zoe", "Zoë Zed", "zoe@example.org"),
    ]


def test_bad_roster_imports_nothing_and_lists_every_problem(app) -> None:
    prof = instructor(app)
    token = csrf_from(prof.get("/instructor/students").get_data(as_text=True))
    bad = "username,name,email\nok1,A,a@b.org\nbad name,B,\nok2,C,not-an-email\nOK1,D,\n"
    resp = _upload(prof, token, bad)
    assert resp.status_code == 400
    body = _page(resp)
    assert "line 3:" in body and "line 4:" in body and "line 5:" in body
    assert "already on line 2" in body
    with app.app_context():
        assert db.session.scalar(select(func.count(User.id))) == 1  # the instructor only
    latin1 = prof.post(
        "/instructor/roster/import",
        data={"csrf_token": token, "roster": (io.BytesIO("é,x\n".encode("latin-1")), "r.csv")},
        content_type="multipart/form-data",
    )
    assert latin1.status_code == 400 and "UTF-8" in _page(latin1)
    none = prof.post(
        "/instructor/roster/import", data={"csrf_token": token}, content_type="multipart/form-data"
    )
    assert none.status_code == 400


def test_expired_and_unknown_reset_links_are_refused(app) -> None:
    with app.app_context():
        result = inst.import_roster(
            db.session, "old,Old,\n", valid_for=timedelta(days=1), now=at(-48)
        )
    token = result.created[0][2]
    assert app.test_client().get(f"/reset/{token}").status_code == 404
    assert app.test_client().get("/reset/" + "x" * 43).status_code == 404
    sid = add_user(app, "ana")
    prof = instructor(app)
    t = csrf_from(prof.get(f"/instructor/students/{sid}").get_data(as_text=True))
    page = prof.post(f"/instructor/students/{sid}/reset-link", data={"csrf_token": t})
    link = re.search(r"/reset/([\w-]+)", page.get_data(as_text=True)).group(1)
    assert app.test_client().get(f"/reset/{link}").status_code == 200
    # A newer link retires the older one.
    page2 = prof.post(f"/instructor/students/{sid}/reset-link", data={"csrf_token": t})
    link2 = re.search(r"/reset/([\w-]+)", page2.get_data(as_text=True)).group(1)
    assert app.test_client().get(f"/reset/{link}").status_code == 404
    assert app.test_client().get(f"/reset/{link2}").status_code == 200
    assert PASSWORD  # the old password still works until the link is used
    signed_in(app, "ana")


def test_student_leaderboard_is_anonymous_and_highlights_me(tmp_path: Path) -> None:
    app = bank_app(tmp_path, QUIZAPP_STUDENT_LEADERBOARD=True)
    add_user(app, "ana", display_name="Ana Alves")
    add_user(app, "ben", display_name="Ben Brook")
    submit(app, "ben", DECK, "2, 5", at(1))
    ana = signed_in(app, "ana")
    page = ana.get("/leaderboard").get_data(as_text=True)
    table = page[page.index("<table") : page.index("</table>")]
    assert "Ana Alves" not in table and "Ben Brook" not in table and "ben" not in page
    assert "Ben Brook" not in page
    assert re.search(r'<tr class="me" aria-current="true"><td>2</td><td><strong>You</strong>', page)
    assert "You are <strong>#2</strong> of 2" in page
    assert 'href="/leaderboard">Leaderboard</a>' in ana.get("/").get_data(as_text=True)
    assert app.test_client().get("/leaderboard").status_code == 302  # sign in first


def test_student_leaderboard_is_off_by_default(app) -> None:
    add_user(app, "ana")
    ana = signed_in(app, "ana")
    assert ana.get("/leaderboard").status_code == 404
    assert 'href="/leaderboard"' not in ana.get("/").get_data(as_text=True)


@pytest.mark.parametrize(
    "url",
    [
        "/instructor/scoreboard?page=0",
        "/instructor/scoreboard?page=99999999999999999999",
        "/instructor/scoreboard?per_page=501",
        "/instructor/scoreboard?quiz=%00",
        "/instructor/scoreboard?dir=sideways",
        "/instructor/gradebook?quiz=../etc",
        "/instructor/gradebook.csv?quiz=%E2%80%AE",
        DECK_URL + "/preview?seed=99999999999999999999999",
        DECK_URL + "/preview?seed=1e3",
        "/instructor/exercises/01-linear-systems/..%2F..%2Fsecret",
        "/instructor/exercises/NOPE/x",
        "/instructor/students/0",
        "/reset/%00%01",
        "/reset/" + "a" * 5000,
    ],
)
def test_bad_parameters_get_a_clear_answer_not_a_500(app, url: str) -> None:
    prof = instructor(app)
    resp = prof.get(url)
    assert 200 <= resp.status_code < 500, (url, resp.status_code)
    assert resp.status_code in (200, 400, 404)


def test_bad_posts_get_a_clear_answer_not_a_500(app) -> None:
    sid = add_user(app, "ana")
    prof = instructor(app)
    token = csrf_from(prof.get("/instructor/students").get_data(as_text=True))
    cases = [
        (DECK_URL + "/preview?seed=7", {"answer": "\x00\u202e" + "9" * 100}),
        (DECK_URL + "/preview?seed=7", {"answer": "[" * 5000}),
        (DECK_URL + "/preview?seed=7", {"answer": "1" * 30000}),
        (f"/instructor/students/{sid}/excusals", {"exercise_id": DECK, "action": "delete"}),
        (f"/instructor/students/{sid}/excusals", {"exercise_id": DECK, "reason": "r" * 9000}),
        ("/instructor/students/424242/excusals", {"exercise_id": DECK}),
        ("/instructor/students/424242/reset-link", {}),
    ]
    for url, data in cases:
        resp = prof.post(url, data={"csrf_token": token, **data})
        assert resp.status_code in (200, 302, 400, 404), (url, data, resp.status_code)
    for content in [b"\x00\x01\x02", b"username\n" + b"x" * 70 + b"\n", b"\xef\xbb\xbf"]:
        resp = _upload(prof, token, content.decode("utf-8", "replace"))
        assert resp.status_code in (200, 400), resp.status_code


def test_preview_shows_the_choices_of_a_multiple_choice_exercise(app) -> None:
    from quizapp.bank import load_bank

    bank = load_bank(Path(app.config["QUIZAPP_EXERCISES"]))
    choice = next(
        e
        for e in sorted(bank.exercises.values(), key=lambda e: e.id)
        if e.generate(7).answer_form.type == "choice"
    )
    variant = choice.generate(7)
    quiz_id, name = choice.id.split("/")
    prof = instructor(app)
    page = prof.get(f"/instructor/exercises/{quiz_id}/{name}/preview?seed=7")
    assert page.status_code == 200
    body = page.get_data(as_text=True)
    items = re.search(r'<ol type="a" class="choices">(.*?)</ol>', body, re.S)
    assert items is not None
    assert items.group(1).count("<li>") == len(variant.answer_form.choices)
    letter = "abcdefghij"[int(variant.expected)]
    token = csrf_from(body)
    right = prof.post(
        f"/instructor/exercises/{quiz_id}/{name}/preview?seed=7",
        data={"csrf_token": token, "answer": letter},
    )
    assert "<strong>correct</strong>" in _page(right)


def test_the_apply_button_applies_only_the_dry_run_it_was_shown_with(app) -> None:
    # The instructor reviews a dry run; before they press "apply", another student submits an
    # answer the new key grades otherwise: the apply writes nothing and shows the new plan.
    _deck_at(app, 2)
    add_user(app, "ana")
    add_user(app, "ben")
    submit(app, "ana", DECK, "2.01, 5", at(1))  # correct to 2 significant figures
    prof = instructor(app)
    token = csrf_from(prof.get(DECK_URL).get_data(as_text=True))
    _deck_at(app, 7)
    dry = _page(prof.post(DECK_URL + "/regrade", data={"csrf_token": token, "dry_run": "1"}))
    assert "1 verdict would change" in dry
    reviewed = re.search(r'name="reviewed" value="([0-9a-f]{32})"', dry)
    assert reviewed is not None
    # Between the dry run and the click, ben answers under the loose version (a sync back and
    # forth): the regrade now has two verdicts to change, not the one reviewed.
    _deck_at(app, 2)
    submit(app, "ben", DECK, "2.01, 5", at(2))
    _deck_at(app, 7)
    stale = prof.post(
        DECK_URL + "/regrade", data={"csrf_token": token, "reviewed": reviewed.group(1)}
    )
    body = _page(stale)
    assert stale.status_code == 200 and "Nothing was regraded" in body
    assert "2 verdicts would change" in body and "Regrade now: apply these changes" in body
    assert [s["status"] for s in stored_submissions(app)] == ["correct", "correct"]
    with app.app_context():
        assert db.session.scalar(select(func.count(Regrade.id))) == 0
    # Applying the new dry run's plan writes it.
    again = re.search(r'name="reviewed" value="([0-9a-f]{32})"', body)
    assert again is not None and again.group(1) != reviewed.group(1)
    done = _page(
        prof.post(DECK_URL + "/regrade", data={"csrf_token": token, "reviewed": again.group(1)})
    )
    assert "Regraded" in done and "2 verdicts changed" in done
    assert [s["status"] for s in stored_submissions(app)] == ["partial", "partial"]


def test_a_students_variant_is_shown_to_the_instructor_as_stored_after_a_sync(app) -> None:
    # The deck system's right-hand side edited from (15, 16) to (15, 23): the student's
    # variant, linked from their page, still shows 16 and the key (2, 5); the current
    # version's preview of the same seed shows 23.
    from test_instructor_support import sync

    add_user(app, "ana")
    submit(app, "ana", DECK, "2, 5", at(1))
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{DECK}.yaml"
    text = path.read_text()
    assert "y: [15, 16]" in text
    path.write_text(text.replace("y: [15, 16]", "y: [15, 23]"), encoding="utf-8")
    sync(app)
    prof = instructor(app)
    with app.app_context():
        ana = db.session.scalar(select(User).where(User.username == "ana"))
        assert ana is not None
        ana_id = ana.id
    student_page = prof.get(f"/instructor/students/{ana_id}").get_data(as_text=True)
    link = re.search(r'href="(/instructor/variants/\d+)">as shown</a>', student_page)
    assert link is not None
    shown = _page(prof.get(link.group(1)))
    assert "<mn>16</mn>" in shown and "<mn>23</mn>" not in shown
    assert "As typed: <code>[2, 5]</code>" in shown  # the stored key: x = 2, y = 5
    preview = re.search(r'href="([^"]*/preview\?seed=\d+)"', shown)
    assert preview is not None
    assert "<mn>23</mn>" in _page(prof.get(html.unescape(preview.group(1))))
    assert prof.get("/instructor/variants/999999").status_code == 404


def test_the_instructors_view_of_a_variant_shows_the_worked_solution_the_student_sees(app) -> None:
    # Attention weights, three wrong answers: the student's page now shows the worked solution,
    # with the heat map of the weights; the instructor's view of that stored variant shows the
    # same steps (one macro), headings one level down under its "Worked solution" section.
    from test_instructor_support import variant_values

    weights = "05-attention/01-attention-weights"
    add_user(app, "ana")
    values = variant_values(app, "ana", weights)  # (the variant is drawn and stored)
    n_queries, n_keys = len(values["Q"]), len(values["K"])
    for hour, weight in ((1, 0.5), (2, 0.4), (3, 0.3)):  # (a repeated answer uses no attempt)
        wrong = text_of(np.full((n_queries, n_keys), weight))
        assert submit(app, "ana", weights, wrong, at(hour)).submission.status == "incorrect"
    student = _page(signed_in(app, "ana").get(f"/exercises/{weights}"))
    assert "No attempts left on this variant" in student
    steps = re.search(r'<ol class="steps">.*?</ol>', student, re.S)
    assert steps is not None and "heatmap-figure" in steps.group(0)
    with app.app_context():
        variant_id = db.session.scalar(select(Submission.variant_id))
    shown = _page(instructor(app).get(f"/instructor/variants/{variant_id}"))
    ours = re.search(r'<ol class="steps">.*?</ol>', shown, re.S)
    assert ours is not None
    assert ours.group(0).replace("h4>", "h3>") == steps.group(0)
