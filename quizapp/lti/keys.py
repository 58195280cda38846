"""The tool's key pair: generated once, shared by every host through the database.

The platform checks what the tool signs (the client assertion of the OAuth2 token request, the
deep-linking response) against the public keys the tool publishes at ``/lti/jwks`` (RFC 7517);
the key id ``kid`` is the key's RFC 7638 thumbprint.

Where the private key lives, and why: in ``lti_keys``, encrypted with Fernet (AES-128-CBC +
HMAC-SHA256, from ``cryptography``) under a key derived by HKDF-SHA256 from the app's
``SECRET_KEY``.  Every host of a deployment must share ``SECRET_KEY`` already (sessions signed
on one host are read on another; see ``quizapp.config``), so every host can use the key pair
without copying a file, which an instance-folder file (mode 0600) would need for several hosts;
and a database dump or backup alone does not give away the key that obtains grade-writing
tokens from the LMS.  The cost: after ``SECRET_KEY`` changes, the stored key cannot be read;
``quizapp lti rotate-key`` then makes a new pair (the LMS fetches ``/lti/jwks`` again when it
sees the new ``kid``, nothing needs re-pasting).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from jwcrypto import jwk
from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.lti.models import LtiKey
from quizapp.models import utcnow

#: RSA modulus size of a new key (bits).  2048 is what the IMS Security Framework requires at
#: least and what Canvas and Moodle use for their own keys.
KEY_BITS = 2048
#: HKDF ``info`` (context string) of the key-encryption key.
_HKDF_INFO = b"quizapp lti private key v1"


class KeyUnavailable(Exception):
    """The stored private key cannot be decrypted with this app's ``SECRET_KEY``."""


@dataclass(frozen=True)
class ToolKey:
    """The active key pair: ``kid``, the private and public key as PEM text, the public JWK."""

    kid: str
    private_pem: str
    public_pem: str
    public_jwk: dict[str, Any]


def _fernet(secret_key: str | bytes) -> Fernet:
    secret = secret_key.encode() if isinstance(secret_key, str) else secret_key
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(secret)
    return Fernet(base64.urlsafe_b64encode(derived))


def _public_jwk(key: jwk.JWK) -> dict[str, Any]:
    public = json.loads(key.export_public())
    public.update(kid=key.thumbprint(), alg="RS256", use="sig")
    return public


def _to_tool_key(row: LtiKey, secret_key: str | bytes) -> ToolKey:
    try:
        pem = _fernet(secret_key).decrypt(row.private_key.encode("ascii"))
    except InvalidToken:
        raise KeyUnavailable(
            "The tool's private key was stored under another SECRET_KEY and cannot be read; "
            "run `quizapp lti rotate-key` to make a new one (the LMS reads the new public key "
            "from /lti/jwks by itself)."
        ) from None
    key = jwk.JWK.from_pem(pem)
    return ToolKey(
        kid=row.kid,
        private_pem=pem.decode("ascii"),
        public_pem=key.export_to_pem().decode("ascii"),
        public_jwk=dict(row.public_jwk),
    )


def _lock_keys(session: Session) -> None:
    if session.get_bind().dialect.name == "postgresql":
        session.connection().exec_driver_sql("LOCK TABLE lti_keys IN EXCLUSIVE MODE")


def _new_row(secret_key: str | bytes) -> LtiKey:
    key = jwk.JWK.generate(kty="RSA", size=KEY_BITS)
    pem = key.export_to_pem(private_key=True, password=None)
    return LtiKey(
        kid=key.thumbprint(),
        public_jwk=_public_jwk(key),
        private_key=_fernet(secret_key).encrypt(pem).decode("ascii"),
    )


_ACTIVE = select(LtiKey).where(LtiKey.retired_at.is_(None)).order_by(LtiKey.id.desc())


def tool_key(session: Session, secret_key: str | bytes) -> ToolKey:
    """The active key pair; generated (once, whatever the number of hosts) when there is none.

    Creation runs in a write transaction (``BEGIN IMMEDIATE`` on SQLite, the table locked on
    PostgreSQL) that looks again first, so hosts starting at once agree on one key.  Commits
    when it creates one.  Raises :class:`KeyUnavailable` when the key was encrypted under
    another ``SECRET_KEY``.
    """
    row = session.scalars(_ACTIVE).first()
    if row is None:
        services.begin_write(session)
        try:
            _lock_keys(session)
            row = session.scalars(_ACTIVE).first()
            if row is None:
                row = _new_row(secret_key)
                session.add(row)
            session.commit()
        except BaseException:
            session.rollback()
            raise
    return _to_tool_key(row, secret_key)


def rotate_key(session: Session, secret_key: str | bytes) -> ToolKey:
    """Retire every active key and make a new one; commits.  ``/lti/jwks`` then publishes the
    new public key only."""
    services.begin_write(session)
    try:
        _lock_keys(session)
        now = utcnow()
        for row in session.scalars(select(LtiKey).where(LtiKey.retired_at.is_(None))):
            row.retired_at = now
        row = _new_row(secret_key)
        session.add(row)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return _to_tool_key(row, secret_key)


def public_jwks(session: Session, secret_key: str | bytes) -> dict[str, Any]:
    """The JWK set served at ``/lti/jwks``: ``{"keys": [the active public key]}`` (created on
    first use, see :func:`tool_key`).  Needs no decryption once the key exists."""
    row = session.scalars(_ACTIVE).first()
    if row is None:
        return {"keys": [tool_key(session, secret_key).public_jwk]}
    return {"keys": [dict(row.public_jwk)]}


__all__ = ["KEY_BITS", "KeyUnavailable", "ToolKey", "public_jwks", "rotate_key", "tool_key"]
