"""Database plumbing: SQLite pragmas and ``BEGIN IMMEDIATE``, Alembic upgrades.

SQLite (the embedded default) gets, on every new connection: its files made private (mode 0600,
like the secrets in the instance folder), WAL journal (readers never block the writer), ``busy_timeout`` (a writer waits for the lock instead of failing with "database is
locked"), ``foreign_keys=ON``, and ``synchronous`` from the app's ``QUIZAPP_SQLITE_SYNCHRONOUS``
setting (NORMAL by default: no fsync per commit; see ``quizapp.config`` for the durability
trade-off; registered per engine by :func:`init_app`).  The Python driver's own transaction handling is switched off
and SQLAlchemy's ``begin`` event emits ``BEGIN`` itself: ``BEGIN IMMEDIATE`` when the connection
carries the ``quizapp_write`` execution option (``quizapp.services.begin_write``), so write
transactions take the lock up front and cannot deadlock by upgrading a read lock.  This is the
recipe from SQLAlchemy's pysqlite documentation ("Serializable isolation / Savepoints /
Transactional DDL").

Write transactions on SQLite also queue on a :class:`WriteLock` (a lock in the process plus
``fcntl.flock`` on ``<database>.writelock`` across processes), taken before ``BEGIN IMMEDIATE``
and released when the transaction ends.  SQLite's busy handler does not queue waiters: it
sleeps and retries (1, 2, 5, 10 ... 100 ms), so a writer that waited once may sleep long after
the lock is free.  Measured on this machine (2 processes x 4 threads, ~1 ms write transactions):
busy_timeout alone gave p99 80-105 ms at ~970 transactions/s, the blocking lock p99 19-21 ms at
~1,140/s.  Reads take no lock (WAL).  ``busy_timeout`` stays the fallback: for writers outside
this lock (another program), and when the lock cannot be had within the busy timeout.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import time
from functools import partial
from typing import Any

from flask import Flask
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import Pool

from quizapp.config import SQLITE_BUSY_TIMEOUT_MS, SQLITE_SYNCHRONOUS_VALUES
from quizapp.resources import migrations_dir
from quizapp.services import WRITE_OPTION

log = logging.getLogger(__name__)

#: The Alembic history (Flask-Migrate layout): ``migrations/`` of the checkout, or the copy the
#: wheel ships inside the package (see :mod:`quizapp.resources`).
MIGRATIONS_DIR = migrations_dir()


#: Mode of the SQLite database file and of its -wal, -shm and -journal files: the owner's only,
#: like the secrets beside it in the instance folder (sqlite3 creates them with the umask's,
#: typically 0644: readable by every user of the machine).
SQLITE_FILE_MODE = 0o600


def make_private(database: str) -> None:
    """Give the SQLite file ``database`` and its -wal, -shm and -journal files mode 0600 when
    they belong to this user and others may read them.  SQLite creates a new -wal/-shm/-journal
    file with the database file's mode, so fixing the database first (before WAL mode is set)
    makes those private too.  Never raises (a read-only or foreign file is left as it is)."""
    if not database:
        return
    for path in (database, database + "-wal", database + "-shm", database + "-journal"):
        try:
            st = os.stat(path)
            if st.st_uid == os.getuid() and st.st_mode & 0o077:
                os.chmod(path, SQLITE_FILE_MODE)
        except OSError:
            continue


@event.listens_for(Engine, "connect")
def _sqlite_on_connect(dbapi_connection: Any, connection_record: Any) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _sqlite_on_begin)
    cur = dbapi_connection.cursor()
    try:
        for _seq, name, file in cur.execute("PRAGMA database_list").fetchall():
            if name == "main":
                make_private(file)
        cur.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_MS)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA foreign_keys = ON")
    finally:
        cur.close()


def _sqlite_set_synchronous(level: str, dbapi_connection: Any, connection_record: Any) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    assert level in SQLITE_SYNCHRONOUS_VALUES  # checked by quizapp.config; never interpolate more
    cur = dbapi_connection.cursor()
    try:
        cur.execute(f"PRAGMA synchronous = {level}")
    finally:
        cur.close()


def init_app(app: Flask) -> None:
    """Apply ``app.config["QUIZAPP_SQLITE_SYNCHRONOUS"]`` to every new connection of the app's
    SQLite engines (``db.init_app`` must have run; Flask-SQLAlchemy creates the engines there,
    before any connection is opened).  Other dialects are left alone."""
    from quizapp.models import db

    level = app.config["QUIZAPP_SQLITE_SYNCHRONOUS"]
    with app.app_context():
        engines = list(db.engines.values())
    for engine in engines:
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", partial(_sqlite_set_synchronous, level))


class WriteLock:
    """Serializes the SQLite write transactions of every thread and process on one database file.

    A ``threading.Lock`` orders the threads of a process (FIFO enough: the waiters block instead
    of polling), an exclusive ``fcntl.flock`` on ``path`` (``<database>.writelock``, created
    0600) orders processes.  The lock file is opened once per process (a descriptor inherited
    across ``fork`` would share its lock with the parent).  :meth:`acquire` gives up after
    ``timeout`` seconds and returns False (the write then relies on SQLite's busy timeout), so
    the lock can never deadlock a request.
    """

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._pid: int | None = None

    def _descriptor(self) -> int:
        if self._pid != os.getpid() or self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            self._pid = os.getpid()
        return self._fd

    def acquire(self) -> bool:
        """Take the lock (True), or give up after ``timeout`` seconds (False)."""
        deadline = time.monotonic() + self.timeout
        if not self._thread_lock.acquire(timeout=self.timeout):
            return False
        try:
            fd = self._descriptor()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                pass
            # Another process writes: wait for it in a helper thread, so the wait can end at the
            # deadline (flock itself has no timeout).
            done = threading.Event()
            result: list[bool] = []

            def wait() -> None:
                fcntl.flock(fd, fcntl.LOCK_EX)
                result.append(True)
                done.set()

            waiter = threading.Thread(target=wait, daemon=True)
            waiter.start()
            if done.wait(max(0.0, deadline - time.monotonic())):
                return True
            # Too long: give up. The waiter still takes the lock when it can, and drops it.
            threading.Thread(target=self._drop_when_taken, args=(waiter, fd), daemon=True).start()
            return False
        except BaseException:
            self._thread_lock.release()
            raise

    def _drop_when_taken(self, waiter: threading.Thread, fd: int) -> None:
        waiter.join()
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            self._thread_lock.release()

    def release(self) -> None:
        """Release the lock taken by a successful :meth:`acquire`."""
        try:
            if self._fd is not None and self._pid == os.getpid():
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._thread_lock.release()


_WRITE_LOCKS: dict[str, WriteLock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()
#: Key of ``Connection.info`` (the DBAPI connection's info) holding the lock a write holds.
_HELD = "quizapp_write_lock"


def write_lock_for(database: str) -> WriteLock | None:
    """The :class:`WriteLock` of the SQLite database file ``database`` (None for ``:memory:``)."""
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    path = os.path.abspath(database) + ".writelock"
    with _WRITE_LOCKS_GUARD:
        lock = _WRITE_LOCKS.get(path)
        if lock is None:
            lock = _WRITE_LOCKS[path] = WriteLock(path, SQLITE_BUSY_TIMEOUT_MS / 1000)
        return lock


@event.listens_for(Engine, "begin")
def _sqlite_on_begin(conn: Connection) -> None:
    if conn.dialect.name != "sqlite":
        return
    if not conn.get_execution_options().get(WRITE_OPTION):
        conn.exec_driver_sql("BEGIN")
        return
    lock = write_lock_for(conn.engine.url.database or "")
    held = lock is not None and lock.acquire()
    if lock is not None and not held:
        log.warning("the write lock of %s was busy too long; relying on busy_timeout", lock.path)
    try:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    except BaseException:
        if lock is not None and held:
            lock.release()
        raise
    if held:
        conn.info[_HELD] = lock


def _release_write_lock(conn: Connection) -> None:
    lock = conn.info.pop(_HELD, None)
    if lock is not None:
        lock.release()


event.listen(Engine, "commit", _release_write_lock)
event.listen(Engine, "rollback", _release_write_lock)


@event.listens_for(Pool, "checkin")
def _release_on_checkin(dbapi_connection: Any, connection_record: Any) -> None:
    """A connection returned to the pool still holding the lock (its transaction ended without
    a ``commit``/``rollback`` event, e.g. the pool's own reset) releases it."""
    if connection_record is None:
        return
    lock = connection_record.info.pop(_HELD, None)
    if lock is not None:
        lock.release()


def upgrade_database(app: Flask, revision: str = "head") -> None:
    """Run the Alembic migrations up to ``revision`` on ``app``'s database (Flask-Migrate)."""
    from flask_migrate import upgrade

    with app.app_context():
        upgrade(directory=str(MIGRATIONS_DIR), revision=revision)


def downgrade_database(app: Flask, revision: str) -> None:
    """Undo the Alembic migrations after ``revision`` (``base``: all) on ``app``'s database.
    The tables and columns those revisions created are dropped, with their data."""
    from flask_migrate import downgrade

    with app.app_context():
        downgrade(directory=str(MIGRATIONS_DIR), revision=revision)


def script_directory() -> Any:
    """Alembic's view of ``migrations/`` (revisions, their order)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return ScriptDirectory.from_config(config)


def database_revision(app: Flask) -> str | None:
    """The revision ``app``'s database is at (None: not under Alembic, e.g. empty)."""
    from alembic.migration import MigrationContext

    from quizapp.models import db

    with app.app_context(), db.engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    return heads[0] if heads else None


def resolve_revision(revision: str) -> str | None:
    """The revision id ``revision`` names (``head``, ``base``, an id or a unique prefix of one);
    None for base.  Raises ``ValueError`` naming the known revisions when there is none such."""
    from alembic.util import CommandError

    script = script_directory()
    if revision == "base":
        return None
    try:
        found = script.get_revision(revision)
    except CommandError as exc:
        known = ", ".join(r.revision for r in script.walk_revisions())
        raise ValueError(f"there is no revision {revision!r} ({exc}); known: {known}") from None
    if found is None:
        raise ValueError(f"there is no revision {revision!r}")
    return str(found.revision)


def revisions_between(older: str | None, newer: str | None) -> list[str]:
    """The revision ids after ``older`` up to and including ``newer`` (None: base), newest
    first; empty when ``newer`` is not a descendant of ``older``."""
    from alembic.script.revision import RevisionError
    from alembic.util import CommandError

    if newer is None or older == newer:
        return []
    script = script_directory()
    out = []
    try:
        for rev in script.iterate_revisions(newer, older or "base"):
            if rev.revision == older:
                break
            out.append(str(rev.revision))
    except (CommandError, RevisionError):  # e.g. RangeNotAncestorError: newer is not after older
        return []
    return out
