"""Transaction helpers: every write of the services runs in a transaction begun by
:func:`begin_write`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sqlalchemy.orm import Session, scoped_session

if TYPE_CHECKING:
    pass


log = logging.getLogger(__name__)

#: Execution option that makes the SQLite ``begin`` listener emit ``BEGIN IMMEDIATE``.
WRITE_OPTION = "quizapp_write"
# --------------------------------------------------------------------------------------------
# Transactions


def begin_write(session: Session, *, expire: bool = True) -> None:
    """End the session's current transaction (committing it) and begin a write transaction.

    On SQLite the new transaction starts with ``BEGIN IMMEDIATE`` (see
    ``quizapp.web.database``), taking the database's write lock at once; other dialects begin
    normally (rows are locked with ``FOR UPDATE`` where it matters).

    ``expire=False`` keeps the objects loaded so far as they are (no reload on next access): for
    a caller that re-reads, with ``populate_existing``, every row its writes depend on (as
    :func:`submit` does), so the rest (the user, the quiz) need not be read again.
    """
    real = session() if isinstance(session, scoped_session) else session
    if real.in_transaction():
        if expire:
            real.commit()
        else:
            keep = real.expire_on_commit
            real.expire_on_commit = False
            try:
                real.commit()
            finally:
                real.expire_on_commit = keep
    real.connection(execution_options={WRITE_OPTION: True})


def commit_keeping_loaded(session: Session) -> None:
    """Commit without expiring the session's objects: for a caller that goes on showing rows it
    has just read or written in this transaction (they are what the database now holds), so the
    page issues no query to load them again."""
    real = session() if isinstance(session, scoped_session) else session
    keep = real.expire_on_commit
    real.expire_on_commit = False
    try:
        real.commit()
    finally:
        real.expire_on_commit = keep
