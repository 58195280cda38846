"""Answers and names holding characters a page cannot carry (lone surrogates, NUL, other control
characters) are stored as typed but shown with visible stand-ins on every page and in every CSV,
never a 500 (UnicodeEncodeError) and never a raw NUL in the HTML."""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path

import pytest
from test_instructor_support import DECK, add_user, bank_app, instructor, signed_in, submit

from quizapp import services
from quizapp.models import Submission, User, db
from quizapp.web.display import showable

SURROGATE = "\ud800"


def test_printable_text_replaces_only_unshowable_characters() -> None:
    assert services.printable_text("3\x00") == "3\u2400"
    assert services.printable_text("a\ud800b") == "a\ufffdb"
    assert services.printable_text("\x01\x1f\x7f\x85") == "\u2401\u241f\u2421\ufffd"
    kept = "ok\tline\r\nÁ é 😀 <b>"
    assert services.printable_text(kept) is kept
    for text in ("\ud800", "\udfff\x00", "x\x0b"):
        services.printable_text(text).encode("utf-8")  # never raises


def test_showable_keeps_markup_safe_and_other_values() -> None:
    from markupsafe import Markup

    out = showable(Markup("<b>\x00</b>"))
    assert isinstance(out, Markup) and out == Markup("<b>\u2400</b>")
    assert showable(None) is None and showable(3) == 3


def _assert_clean(resp) -> str:
    assert resp.status_code == 200, resp.status_code
    body = resp.get_data()
    text = body.decode("utf-8")  # strictly valid UTF-8
    assert "\x00" not in text and "\x01" not in text
    return text


def test_surrogate_and_nul_answers_render_on_every_page(tmp_path: Path) -> None:
    app = bank_app(tmp_path)
    uid = add_user(app, "ana", display_name="Ana")
    with app.app_context():  # a legacy display name with control characters (now refused)
        db.session.get(User, uid).display_name = "Ana\x01Alves"
        db.session.commit()
    api = app.test_client()
    token = api.post("/api/v1/token", json={"username": "ana", "password": "correct horse"})
    headers = {"Authorization": "Bearer " + token.get_json()["token"]}
    first = api.post(
        f"/api/v1/exercises/{DECK}/submissions", json={"answer": SURROGATE}, headers=headers
    )
    assert first.status_code == 201, first.get_data(as_text=True)
    submit(app, "ana", DECK, [["3\x00"], ["5"]])
    submit(app, "ana", DECK, "1, 1")  # a graded wrong answer too (statistics)
    with app.app_context():  # stored exactly as typed
        raws = [
            services.decode_raw_answer(s.answer_format, s.raw_answer)
            for s in db.session.scalars(db.select(Submission).order_by(Submission.id))
        ]
    assert raws[:2] == [SURROGATE, [["3\x00"], ["5"]]]

    page = _assert_clean(signed_in(app, "ana").get("/exercises/" + DECK))
    assert "\ufffd" in page  # the surrogate answer in the submission history
    assert "\u2400" in page  # the NUL answer, visibly
    prof = instructor(app)
    drill = _assert_clean(prof.get(f"/instructor/students/{uid}"))
    assert "\ufffd" in drill and "3\u2400" in drill and "Ana\u2401Alves" in drill
    stats = _assert_clean(prof.get("/instructor/exercises/" + DECK))
    assert "1, 1" in stats  # the frequent wrong answers
    for url in (
        "/instructor/scoreboard",
        "/instructor/gradebook",
        "/instructor/students",
    ):
        # Names are isolated (<bdi>) so bidi characters cannot reorder the text around them.
        assert "<bdi>Ana\u2401Alves</bdi>" in _assert_clean(prof.get(url)), url
    for url in ("/instructor/gradebook.csv", "/instructor/roster.csv"):
        resp = prof.get(url)
        assert resp.status_code == 200
        rows = list(csv.reader(io.StringIO(resp.get_data().decode("utf-8-sig"))))
        assert rows[1][1] == "Ana\u2401Alves", url


def test_nul_in_a_posted_cell_is_echoed_visibly_not_raw(tmp_path: Path) -> None:
    app = bank_app(tmp_path)
    add_user(app, "ana")
    client = signed_in(app, "ana")
    page = client.get("/exercises/" + DECK).get_data(as_text=True)
    from test_web_support import csrf_from

    resp = client.post(
        "/exercises/" + DECK,
        data={"csrf_token": csrf_from(page), "via": "text", "answer": "3\x00"},
    )
    text = resp.get_data().decode("utf-8")
    assert "\x00" not in text and "3\u2400" in text


def _student_on_deck(tmp_path: Path):
    """(app, signed-in client of a new student, the deck exercise form's CSRF token)."""
    from test_web_support import csrf_from

    app = bank_app(tmp_path)
    add_user(app, "ana")
    client = signed_in(app, "ana")
    return app, client, csrf_from(client.get("/exercises/" + DECK).get_data(as_text=True))


def _post_raw(client, body: str | bytes):
    """POST ``body`` as it is (a URL-encoded form) to the deck exercise."""
    return client.post(
        "/exercises/" + DECK, data=body, content_type="application/x-www-form-urlencoded"
    )


def test_invalid_utf8_in_a_form_post_is_refused_not_stored_as_percent_escapes(
    tmp_path: Path,
) -> None:
    app, client, token = _student_on_deck(tmp_path)
    resp = _post_raw(client, f"csrf_token={token}&via=text&answer=%FF%FE")
    assert resp.status_code == 400
    assert "not valid text (invalid UTF-8)" in resp.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(db.select(Submission)).all() == []
    # Valid UTF-8 percent-escapes still work: "2, 5" with a non-breaking space.
    ok = client.post(
        "/exercises/" + DECK,
        data=f"csrf_token={token}&via=text&answer=2%2C%C2%A05",
        content_type="application/x-www-form-urlencoded",
    )
    assert ok.status_code == 200
    with app.app_context():
        assert len(db.session.scalars(db.select(Submission)).all()) == 1


@pytest.mark.parametrize(
    "where",
    ["answer", "unrelated field", "before the token"],
)
def test_a_raw_non_utf8_byte_in_a_form_post_is_named_not_taken_for_a_missing_token(
    tmp_path: Path, where: str
) -> None:
    """Werkzeug drops a URL-encoded body holding a raw non-UTF-8 byte whole, token and all: the
    message names the encoding (not the token), and nothing is stored."""
    app, client, text_token = _student_on_deck(tmp_path)
    token = text_token.encode()
    body = {
        "answer": b"csrf_token=" + token + b"&via=text&answer=2,5\xff",
        "unrelated field": b"csrf_token=" + token + b"&via=text&answer=2,5&x=\xff",
        "before the token": b"\xff&csrf_token=" + token + b"&via=text&answer=2,5",
    }[where]
    resp = _post_raw(client, body)
    text = resp.get_data(as_text=True)
    assert resp.status_code == 400
    assert "not valid text (invalid UTF-8)" in text and "security token" not in text
    with app.app_context():
        assert db.session.scalars(db.select(Submission)).all() == []
    # Raw (unescaped) UTF-8 is valid and graded: "2, 5" with a raw non-breaking space.
    ok = client.post(
        "/exercises/" + DECK,
        data=b"csrf_token=" + token + b"&via=text&answer=2,\xc2\xa05",
        content_type="application/x-www-form-urlencoded",
    )
    assert ok.status_code == 200
    with app.app_context():
        assert len(db.session.scalars(db.select(Submission)).all()) == 1


@pytest.mark.parametrize(
    "field,says",
    [
        (
            "x",
            "The form is not valid text (invalid UTF-8) in the form's field \u201cx\u201d; "
            "nothing was graded and it used no attempt. Reload the page and answer again.",
        ),
        (
            "variant",
            "The form is not valid text (invalid UTF-8) in the form's field \u201cvariant\u201d;"
            " nothing was graded and it used no attempt. Reload the page and answer again.",
        ),
        (
            "answer",
            "The answer is not valid text (invalid UTF-8) in the answer box; nothing was graded "
            "and it used no attempt. Type it again",
        ),
    ],
)
def test_a_percent_escape_that_is_not_utf8_names_the_field_it_is_in(
    tmp_path: Path, field: str, says: str
) -> None:
    app, client, token = _student_on_deck(tmp_path)
    resp = _post_raw(client, f"csrf_token={token}&via=text&answer=2,5&{field}=1%FF")
    text = html.unescape(resp.get_data(as_text=True))
    assert resp.status_code == 400
    assert says in text
    with app.app_context():
        assert db.session.scalars(db.select(Submission)).all() == []


def test_other_forms_refuse_text_that_is_not_utf8_instead_of_keeping_percent_escapes(
    tmp_path: Path,
) -> None:
    """Registration stored ``display_name=%FF`` as the text "%FF"; sign-in and the instructor's
    "Try an answer" took it for what was typed.  Each form now says the cause (no word of
    attempts outside the exercise form) and stores nothing."""
    from test_web_support import csrf_from

    app = bank_app(tmp_path)
    fresh = app.test_client()
    token = csrf_from(fresh.get("/register").get_data(as_text=True))
    body = (
        f"csrf_token={token}&username=zoe&password=correct+horse&confirm=correct+horse"
        "&display_name=%FF&email="
    )
    resp = fresh.post("/register", data=body, content_type="application/x-www-form-urlencoded")
    text = html.unescape(resp.get_data(as_text=True))
    assert resp.status_code == 400
    assert (
        "The form is not valid text (invalid UTF-8) in the form's field \u201cdisplay_name\u201d"
        in text
    )
    assert "attempt" not in text
    with app.app_context():
        assert services.find_user(db.session, "zoe") is None
    # A raw byte on the sign-in form: the same cause, not "security token missing".
    token = csrf_from(fresh.get("/login").get_data(as_text=True)).encode()
    raw = b"csrf_token=" + token + b"&username=zo\xe9&password=x"
    resp = fresh.post("/login", data=raw, content_type="application/x-www-form-urlencoded")
    text = html.unescape(resp.get_data(as_text=True))
    assert resp.status_code == 400 and "invalid UTF-8" in text and "security token" not in text
    assert "\u201cusername\u201d" in text
    # The instructor's "Try an answer".
    prof = instructor(app)
    url = "/instructor/exercises/" + DECK + "/preview?seed=7"
    token = csrf_from(prof.get(url).get_data(as_text=True))
    resp = prof.post(
        url,
        data=f"csrf_token={token}&answer=1%FF",
        content_type="application/x-www-form-urlencoded",
    )
    text = html.unescape(resp.get_data(as_text=True))
    assert resp.status_code == 400 and "not valid text (invalid UTF-8)" in text
    assert "is not accepted" not in text


@pytest.mark.parametrize(
    "path",
    [
        "/instructor/scoreboard?quiz=%FF",  # was a 404 "There is no quiz '%FF'"
        "/instructor/scoreboard?quiz=ok&page=%E2%82",  # a cut multi-byte escape, second
        b"/instructor/scoreboard?quiz=\xff",  # a raw byte, not escaped
        "/api/quizzes?quiz=%FF",
    ],
)
def test_a_query_string_that_is_not_utf8_is_refused_naming_its_parameter(
    tmp_path: Path, path: str | bytes
) -> None:
    app = bank_app(tmp_path)
    prof = instructor(app)
    if isinstance(path, bytes):  # the test client would escape it: the WSGI environ, as sent
        path, _, query = path.partition(b"?")
        resp = prof.get(path.decode(), environ_overrides={"QUERY_STRING": query.decode("latin-1")})
    else:
        resp = prof.get(path)
    name = "page" if "page=" in str(path) else "quiz"
    message = (
        "The address is not valid text (invalid UTF-8) in its query parameter \u201c"
        + name
        + "\u201d; nothing was done. Check the link, or go back and follow it again."
    )
    assert resp.status_code == 400
    if resp.is_json:
        assert resp.get_json()["error"] == message
    else:
        assert message in html.unescape(resp.get_data(as_text=True))
    # The same address in valid UTF-8 is read as before: the quiz is named, not the encoding.
    ok = prof.get("/instructor/scoreboard?quiz=%C3%A9")
    assert ok.status_code == 404 and "invalid UTF-8" not in ok.get_data(as_text=True)


def test_the_429_page_shows_the_readable_boxes_not_werkzeugs_reading_of_a_bad_one(
    tmp_path: Path,
) -> None:
    """A rate-limited answer post is not graded; its error page gives back what was typed.  A
    box whose percent-escape is not UTF-8 holds Werkzeug's lenient reading (``%FF`` kept as
    text), not what was typed: it is left out, the other boxes are shown."""
    from test_web_support import csrf_from

    app = bank_app(tmp_path, QUIZAPP_LIMIT_SUBMIT="1/minute")
    add_user(app, "ana")
    client = signed_in(app, "ana")
    page = client.get("/exercises/" + DECK).get_data(as_text=True)
    token = csrf_from(page)
    assert _post_raw(client, f"csrf_token={token}&via=text&answer=1,1").status_code == 200
    before = _count_submissions(app)
    resp = _post_raw(
        client, f"csrf_token={token}&via=grid&cell-0-0=7&cell-1-0=8%FF&answer=4%2C%204"
    )
    text = html.unescape(resp.get_data(as_text=True))
    assert resp.status_code == 429
    assert "%FF" not in text and "8\ufffd" not in text
    assert "[7; ?]" in text  # the grid as typed, its unreadable cell shown empty
    assert _count_submissions(app) == before


def _count_submissions(app) -> int:
    with app.app_context():
        return len(db.session.scalars(db.select(Submission)).all())
