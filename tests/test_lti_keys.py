"""The tool's key pair: generated once, in the database, the private key encrypted under
SECRET_KEY, the public one published; what it signs verifies with what is published."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.fernet import InvalidToken
from jwcrypto import jwk, jws
from sqlalchemy import select
from test_web_support import make_app

from quizapp.lti import keys
from quizapp.lti.models import LtiKey
from quizapp.models import db


def test_key_is_made_once_stored_encrypted_and_published(tmp_path: Path, db_url: str) -> None:
    app = make_app(tmp_path, SECRET_KEY="s1" * 16)
    with app.app_context():
        first = keys.tool_key(db.session, app.config["SECRET_KEY"])
        again = keys.tool_key(db.session, app.config["SECRET_KEY"])
        assert first == again
        (row,) = db.session.scalars(select(LtiKey)).all()
        assert "PRIVATE KEY" not in row.private_key and row.private_key.startswith("gAAAAA")
        with pytest.raises(InvalidToken):
            keys._fernet("another secret").decrypt(row.private_key.encode())
        published = keys.public_jwks(db.session, app.config["SECRET_KEY"])
    (public,) = published["keys"]
    assert public["kty"] == "RSA" and public["alg"] == "RS256" and public["use"] == "sig"
    assert "d" not in public  # no private part
    key = jwk.JWK(**public)
    assert public["kid"] == key.thumbprint() == first.kid
    # What the private key signs verifies with the published key.
    token = jws.JWS(b"payload")
    token.add_signature(
        jwk.JWK.from_pem(first.private_pem.encode()),
        alg="RS256",
        protected=json.dumps({"alg": "RS256"}),
    )
    check = jws.JWS()
    check.deserialize(token.serialize(compact=True))
    check.verify(key)
    assert check.payload == b"payload"


def test_hosts_sharing_database_and_secret_share_the_key(tmp_path: Path, db_url: str) -> None:
    a = make_app(tmp_path, SECRET_KEY="shared" * 6)
    b = make_app(
        tmp_path / "b",
        SQLALCHEMY_DATABASE_URI=a.config["SQLALCHEMY_DATABASE_URI"],
        SECRET_KEY="shared" * 6,
    )
    with a.app_context():
        ka = keys.tool_key(db.session, a.config["SECRET_KEY"])
    with b.app_context():
        kb = keys.tool_key(db.session, b.config["SECRET_KEY"])
    assert ka == kb


def test_another_secret_cannot_read_the_key_and_says_what_to_do(
    tmp_path: Path, db_url: str
) -> None:
    a = make_app(tmp_path, SECRET_KEY="old" * 10)
    with a.app_context():
        old = keys.tool_key(db.session, a.config["SECRET_KEY"])
        with pytest.raises(keys.KeyUnavailable, match="quizapp lti rotate-key"):
            keys.tool_key(db.session, "new" * 10)
        new = keys.rotate_key(db.session, "new" * 10)
        assert new.kid != old.kid
        assert keys.tool_key(db.session, "new" * 10) == new
        assert [k["kid"] for k in keys.public_jwks(db.session, "new" * 10)["keys"]] == [new.kid]
        retired = db.session.scalars(select(LtiKey).where(LtiKey.kid == old.kid)).one()
        assert retired.retired_at is not None
