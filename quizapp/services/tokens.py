"""API tokens: created, looked up (use recorded), revoked.  Only SHA-256 digests are stored."""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from quizapp.models import (
    ApiToken,
    User,
    utcnow,
)

if TYPE_CHECKING:
    pass


from quizapp.services.transactions import begin_write

log = logging.getLogger(__name__)


def hash_token(token: str) -> str:
    """SHA-256 hex digest of an API token (what the database stores)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def create_api_token(session: Session, user: User, name: str = "") -> str:
    """Create a token for ``user``, commit, and return it (the only time it is visible)."""
    import secrets

    token = "qz_" + secrets.token_urlsafe(32)
    begin_write(session)
    session.add(ApiToken(user_id=user.id, token_hash=hash_token(token), name=name[:120]))
    session.commit()
    return token


def user_for_token(session: Session, token: str) -> User | None:
    """The active user owning the unrevoked ``token`` (and record its use), or None."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    if row is None or row.revoked_at is not None or not row.user.active:
        return None
    now = utcnow()
    user_id, token_id = row.user_id, row.id
    if row.last_used_at is None or (now - row.last_used_at).total_seconds() > TOKEN_TOUCH_SECONDS:
        _touch_token(session, token_id, now)
    return session.get(User, user_id)


#: ``ApiToken.last_used_at`` is written at most once per this many seconds per token.
TOKEN_TOUCH_SECONDS = 60


def _touch_token(session: Session, token_id: int, now: datetime) -> None:
    """Record a token's use, best-effort, in its own short write transaction.

    The caller's read transaction is ended first and the update runs in one begun by
    :func:`begin_write` (``BEGIN IMMEDIATE`` on SQLite): upgrading the read transaction in place
    fails at once with "database is locked" when another connection wrote since it began (SQLite
    returns SQLITE_BUSY without waiting, whatever the busy timeout).  The update is conditional
    (only an older ``last_used_at`` is replaced), so concurrent requests write it once; if the
    write still fails (lock timeout), the request goes on: the timestamp is informational.
    """
    from sqlalchemy.exc import OperationalError

    try:
        begin_write(session)
        cutoff = now - timedelta(seconds=TOKEN_TOUCH_SECONDS)
        session.execute(
            update(ApiToken)
            .where(
                ApiToken.id == token_id,
                (ApiToken.last_used_at.is_(None)) | (ApiToken.last_used_at < cutoff),
            )
            .values(last_used_at=now)
        )
        session.commit()
    except OperationalError:
        session.rollback()
        log.warning("could not record the use of API token %s (database busy)", token_id)


def revoke_api_token(session: Session, token: str) -> bool:
    """Revoke ``token``; True if it existed and was live."""
    begin_write(session)
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    if row is None or row.revoked_at is not None:
        session.rollback()
        return False
    row.revoked_at = utcnow()
    session.commit()
    return True
