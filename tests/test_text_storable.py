"""Free text that reaches a text column is refused or cleaned before the database sees it.

PostgreSQL text cannot hold a NUL character (psycopg raises DataError, which was a 500); SQLite
stores it.  A fresh tester found 500s on PostgreSQL from a NUL in the registration e-mail, in a
roster's e-mail column and in an override's reason.  Each input now gets a clear message (or, for
the platform's LTI e-mail claim, is dropped), on both databases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from test_web_support import make_app, register

from quizapp import services
from quizapp.instructor.roster import RosterError, parse_roster_csv
from quizapp.lti.accounts import platform_email
from quizapp.models import User, db


@pytest.fixture()
def app(tmp_path: Path) -> Any:
    return make_app(tmp_path)


def users(app: Any) -> int:
    with app.app_context():
        return int(db.session.scalar(select(func.count()).select_from(User)) or 0)


@pytest.mark.parametrize("email", ["a\x00@b.c", "\x00", "ana@exa\x00mple.org", "a b@c.d"])
def test_registration_refuses_an_unstorable_or_malformed_email_on_its_field(
    app: Any, email: str
) -> None:
    resp = register(app.test_client(), "ana", email=email)
    assert resp.status_code == 200  # the form again, with the message on the e-mail field
    page = resp.get_data(as_text=True)
    assert "e-mail address" in page
    assert users(app) == 0


def test_registration_keeps_a_good_email(app: Any) -> None:
    assert register(app.test_client(), "ana", email=" ana@example.org ").status_code == 302
    with app.app_context():
        assert db.session.scalar(select(User.email)) == "ana@example.org"


@pytest.mark.parametrize(
    "email, says",
    [
        ("a\x00@b.c", "control character (U+0000"),
        ("a" * 250 + "@b.cd", "too long"),
        ("no-at-sign", "is not an e-mail address"),
    ],
)
def test_validate_email_says_what_is_wrong(email: str, says: str) -> None:
    with pytest.raises(services.BadRequest) as err:
        services.validate_email(email)
    assert says in err.value.message
    assert services.validate_email("  ") is None
    assert services.validate_email(" x@y.org ") == "x@y.org"


def test_create_user_refuses_a_nul_in_the_email(app: Any) -> None:
    with app.app_context(), pytest.raises(services.BadRequest, match="U\\+0000"):
        services.create_user(db.session, "ana", "correct horse", email="a\x00@b.c")
    assert users(app) == 0


def test_roster_refuses_a_nul_in_the_email_column_naming_the_line() -> None:
    with pytest.raises(RosterError) as err:
        parse_roster_csv("username,name,email\nana,Ana,a\x00@b.c\n")
    assert err.value.problems == [
        "line 2: The e-mail address contains a control character (U+0000, position 2); remove it."
    ]


def test_a_platform_email_claim_that_cannot_be_stored_is_dropped() -> None:
    assert platform_email("a\x00@b.c") is None
    assert platform_email(["not", "text"]) is None
    assert platform_email(" ana@example.org ") == "ana@example.org"
