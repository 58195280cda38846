"""Registration, sign-in, sign-out: join code, usernames unique by case and Unicode normalization,
CSRF on every form, safe ``next=`` redirects, cookie flags and security headers."""

from __future__ import annotations

import html
import unicodedata
from pathlib import Path

import pytest
from test_web_support import csrf_from, login, make_app, register

from quizapp import services
from quizapp.models import User, db, username_key


@pytest.fixture()
def app(tmp_path: Path):
    return make_app(tmp_path)


def test_register_then_home_then_logout_then_login(app) -> None:
    client = app.test_client()
    resp = register(client, "ana", display_name="Ana Lima")
    assert resp.status_code == 302 and resp.headers["Location"] == "/"
    home = client.get("/")
    assert home.status_code == 200 and "Ana Lima" in home.get_data(as_text=True)
    token = csrf_from(home.get_data(as_text=True))
    assert client.post("/logout", data={"csrf_token": token}).status_code == 302
    assert client.get("/").status_code == 302  # signed out: redirected to login
    resp = login(client, "ANA")  # usernames are not case-sensitive
    assert resp.status_code == 302
    assert client.get("/").status_code == 200
    with app.app_context():
        user = db.session.query(User).one()
        assert user.username == "ana" and user.role == "student"
        assert user.password_hash.startswith("scrypt:")
        assert user.check_password("correct horse") and not user.check_password("wrong")


def test_wrong_password_is_refused(app) -> None:
    client = app.test_client()
    register(client, "ana")
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    resp = login(client, "ana", "not the password")
    assert resp.status_code == 200
    assert "Wrong username or password." in resp.get_data(as_text=True)
    assert client.get("/").status_code == 302


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Ana", "ana"),
        ("ANA", "aNa"),
        (unicodedata.normalize("NFC", "José"), unicodedata.normalize("NFD", "José")),
        ("Ana", "Ａｎａ"),  # full-width letters (NFKC)
        ("strasse", "STRASSE"),
    ],
)
def test_usernames_differing_by_case_or_normalization_are_duplicates(app, first, second) -> None:
    assert first != second
    c1, c2 = app.test_client(), app.test_client()
    assert register(c1, first).status_code == 302
    resp = register(c2, second)
    assert resp.status_code == 200
    assert "That username is taken." in resp.get_data(as_text=True)
    with app.app_context():
        assert db.session.query(User).count() == 1


def test_username_key_is_nfkc_casefold() -> None:
    assert username_key("José") == username_key(unicodedata.normalize("NFD", "JOSÉ"))
    assert username_key("Straße") == username_key("STRASSE") == "strasse"
    assert username_key("ａｂｃ") == "abc"


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("x" * 10_000, "Field cannot be longer than 64 characters."),
        ("a b", "A username may contain only letters"),
        ("bad\x00name", "A username may contain only letters"),
        ("<script>", "A username may contain only letters"),
    ],
)
def test_bad_usernames_get_a_message_not_a_crash(app, username, message) -> None:
    resp = register(app.test_client(), username)
    assert resp.status_code == 200
    assert message in resp.get_data(as_text=True)
    with app.app_context():
        assert db.session.query(User).count() == 0


def test_join_code_required_when_configured(tmp_path: Path) -> None:
    app = make_app(tmp_path, QUIZAPP_JOIN_CODE="LINALG-2026")
    client = app.test_client()
    page = client.get("/register").get_data(as_text=True)
    assert 'name="join_code"' in page and 'for="join_code"' in page
    resp = register(client, "ana", join_code="wrong")
    assert resp.status_code == 200 and "That join code is not right." in resp.get_data(as_text=True)
    resp = register(client, "ana")
    assert resp.status_code == 200 and "That join code is not right." in resp.get_data(as_text=True)
    assert register(client, "ana", join_code="LINALG-2026").status_code == 302
    with app.app_context():
        assert [u.username for u in db.session.query(User)] == ["ana"]


def test_registration_can_be_closed(tmp_path: Path) -> None:
    app = make_app(tmp_path, QUIZAPP_REGISTRATION=False)
    assert app.test_client().get("/register").status_code == 403


def test_forms_without_csrf_token_are_refused(app) -> None:
    client = app.test_client()
    resp = client.post(
        "/register",
        data={"username": "ana", "password": "correct horse", "confirm": "correct horse"},
    )
    assert resp.status_code == 400
    assert "security token" in resp.get_data(as_text=True)
    # Another session's token is refused too.
    other = app.test_client()
    token = csrf_from(other.get("/register").get_data(as_text=True))
    client.get("/register")
    resp = client.post(
        "/register",
        data={
            "csrf_token": token,
            "username": "ana",
            "password": "correct horse",
            "confirm": "correct horse",
        },
    )
    assert resp.status_code == 400
    with app.app_context():
        assert db.session.query(User).count() == 0


@pytest.mark.parametrize(
    ("next_value", "expected"),
    [
        ("/progress", "/progress"),
        ("https://elsewhere.example/", "/"),
        ("//elsewhere.example/", "/"),
        ("/\\elsewhere.example", "/"),
        ("javascript:alert(1)", "/"),
    ],
)
def test_login_next_redirects_only_to_relative_paths(app, next_value, expected) -> None:
    client = app.test_client()
    register(client, "ana")
    client.post("/logout", data={"csrf_token": csrf_from(client.get("/").get_data(as_text=True))})
    resp = login(client, "ana", query_string={"next": next_value})
    assert resp.status_code == 302
    assert resp.headers["Location"] == expected


def test_login_required_redirects_with_next(app) -> None:
    resp = app.test_client().get("/progress")
    assert resp.status_code == 302
    assert resp.headers["Location"].startswith("/login?next=")


def test_cookies_and_security_headers(app) -> None:
    client = app.test_client()
    resp = register(client, "ana")
    cookie = resp.headers.get("Set-Cookie", "")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    page = client.get("/")
    csp = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    assert page.headers["X-Frame-Options"] == "DENY"
    html = page.get_data(as_text=True)
    assert "<script>" not in html and " style=" not in html  # no inline script or style


def test_secure_cookie_over_https(tmp_path: Path) -> None:
    app = make_app(tmp_path, QUIZAPP_HTTPS=True)
    client = app.test_client()
    client.environ_base.update(
        {"wsgi.url_scheme": "https", "HTTP_REFERER": "https://localhost/register"}
    )
    resp = register(client, "ana")
    assert resp.status_code == 302
    assert "Secure" in resp.headers.get("Set-Cookie", "")


def test_error_pages_are_html_and_never_500(app) -> None:
    client = app.test_client()
    resp = client.get("/no/such/page")
    assert resp.status_code == 404 and "text/html" in resp.content_type
    resp = client.post("/login", data={"x": "y" * 400_000})
    assert resp.status_code == 413


def test_secrets_are_generated_into_the_instance_folder_once(tmp_path: Path) -> None:
    app1 = make_app(tmp_path, SECRET_KEY=None, QUIZAPP_SEED_SECRET=None)
    app2 = make_app(tmp_path, SECRET_KEY=None, QUIZAPP_SEED_SECRET=None)
    inst = tmp_path / "instance"
    key = (inst / "secret_key").read_text().strip()
    seed = (inst / "seed_secret").read_text().strip()
    assert len(key) == 64 and len(seed) == 64 and key != seed
    assert app1.config["SECRET_KEY"] == app2.config["SECRET_KEY"] == key
    assert app1.config["QUIZAPP_SEED_SECRET"] == app2.config["QUIZAPP_SEED_SECRET"] == seed
    assert (inst / "secret_key").stat().st_mode & 0o077 == 0


def test_create_user_service_rejects_short_passwords_and_bad_roles(app) -> None:
    with app.app_context():
        with pytest.raises(services.BadRequest, match="at least 8"):
            services.create_user(db.session, "bob", "short")
        with pytest.raises(services.BadRequest, match="role"):
            services.create_user(db.session, "bob", "long enough", role="admin")
        user = services.create_user(db.session, "Bob", "long enough", role="instructor")
        assert user.is_instructor
        assert services.authenticate(db.session, "BOB", "long enough") is not None
        assert services.authenticate(db.session, "bob", "wrong one") is None
        assert services.authenticate(db.session, "nobody", "long enough") is None


@pytest.mark.parametrize(
    ("display_name", "expected"),
    [
        ("evil\x00name", "a control character (U+0000"),
        ("Ana\u202eevil", "right-to-left/left-to-right control character (U+202E"),
        ("Ben\u200bBrook", "invisible formatting character (U+200B"),
    ],
)
def test_register_refuses_control_and_bidi_characters_in_display_names(
    tmp_path: Path, display_name: str, expected: str
) -> None:
    app = make_app(tmp_path)
    client = app.test_client()
    resp = register(client, "ana", display_name=display_name)
    assert resp.status_code == 200
    assert expected in html.unescape(resp.get_data(as_text=True))
    with app.app_context():
        assert services.find_user(db.session, "ana") is None  # nothing stored, not truncated


@pytest.mark.parametrize("username", ["-ana", "+ana", "@ana", "ana\u202e", "a\x00b"])
def test_register_refuses_usernames_spreadsheets_or_bidi_would_mangle(
    tmp_path: Path, username: str
) -> None:
    app = make_app(tmp_path)
    resp = register(app.test_client(), username)
    assert resp.status_code == 200
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(User)) == 0
