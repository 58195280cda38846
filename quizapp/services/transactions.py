"""Transaction helpers: every write of the services runs in a transaction begun by
:func:`begin_write`; :func:`retry_conflicts` runs a service again when the database aborted its
transaction to resolve a conflict (PostgreSQL serialization failures and deadlocks)."""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy.exc import DBAPIError
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


# --------------------------------------------------------------------------------------------
# Retrying transactions the database aborted

#: SQLSTATEs of a transaction PostgreSQL aborted to resolve a conflict; running it again is the
#: documented remedy ("Applications using this level must be prepared to retry transactions due
#: to serialization failures", PostgreSQL manual 13.2; 40P01 is ``deadlock_detected``).
RETRY_SQLSTATES = frozenset({"40001", "40P01"})
#: Runs of a service in all (the first and the retries).
RETRY_ATTEMPTS = 5
#: First back-off in seconds, doubled per retry, with full jitter (so two retried transactions
#: that conflicted do not meet again at once).
RETRY_BACKOFF = 0.02

F = TypeVar("F", bound=Callable[..., Any])
_retrying: ContextVar[bool] = ContextVar("quizapp_retrying", default=False)


def is_conflict(exc: BaseException) -> bool:
    """True if ``exc`` is a database error whose transaction may succeed when run again: a
    SQLSTATE of :data:`RETRY_SQLSTATES` (psycopg's ``sqlstate``/``pgcode``)."""
    if not isinstance(exc, DBAPIError):
        return False
    orig = exc.orig
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    return code in RETRY_SQLSTATES


def retry_conflicts(fn: F) -> F:
    """Decorator for a service whose first argument is the ``Session``: when the database aborts
    its transaction with a serialization failure or a deadlock (:func:`is_conflict`), the
    session is rolled back and the service runs again, up to :data:`RETRY_ATTEMPTS` runs in all,
    after a jittered exponential back-off; the last failure is raised.  Only for services whose
    writes are one transaction (or idempotent steps): a retry repeats the whole call.

    A service called by another decorated one is not retried on its own: the outermost call
    repeats, so that attempts do not multiply.
    """

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if _retrying.get():
            return fn(*args, **kwargs)
        session = args[0] if args else kwargs["session"]
        token = _retrying.set(True)
        try:
            for attempt in range(1, RETRY_ATTEMPTS + 1):
                try:
                    return fn(*args, **kwargs)
                except DBAPIError as exc:
                    if not is_conflict(exc) or attempt == RETRY_ATTEMPTS:
                        raise
                    session.rollback()
                    log.warning(
                        "%s: transaction aborted by the database (%s); retry %d of %d",
                        fn.__qualname__,
                        getattr(exc.orig, "sqlstate", "?"),
                        attempt,
                        RETRY_ATTEMPTS - 1,
                    )
                    time.sleep(random.uniform(0, RETRY_BACKOFF * 2 ** (attempt - 1)))
            raise AssertionError("unreachable")  # pragma: no cover
        finally:
            _retrying.reset(token)

    return cast(F, run)  # functools.wraps keeps the signature; mypy types it as _Wrapped


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
