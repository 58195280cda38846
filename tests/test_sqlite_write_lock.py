"""SQLite write transactions queue on ``quizapp.web.database.WriteLock`` (a thread lock plus
``flock`` on ``<database>.writelock``): they never overlap, the lock is released however the
transaction ends, it orders processes too, and it never deadlocks (a wait longer than the busy
timeout falls back to SQLite's busy handler)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from quizapp.services import WRITE_OPTION
from quizapp.web import database
from quizapp.web.database import WriteLock, write_lock_for

pytestmark = pytest.mark.sqlite_only


def _engine(path: Path) -> sa.Engine:
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS t (n INTEGER)")
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS log (who TEXT, event TEXT, k INTEGER)")
    return engine


def _write(engine: sa.Engine):
    return engine.connect().execution_options(**{WRITE_OPTION: True})


def test_write_transactions_of_many_threads_never_overlap(tmp_path: Path, monkeypatch) -> None:
    engine = _engine(tmp_path / "db.sqlite")
    counts = {"acquire": 0, "release": 0}
    real_acquire, real_release = WriteLock.acquire, WriteLock.release

    def acquire(self):  # noqa: ANN001, ANN202
        got = real_acquire(self)
        counts["acquire"] += got
        return got

    def release(self):  # noqa: ANN001, ANN202
        counts["release"] += 1
        return real_release(self)

    monkeypatch.setattr(WriteLock, "acquire", acquire)
    monkeypatch.setattr(WriteLock, "release", release)
    inside = 0
    most = 0
    guard = threading.Lock()
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        nonlocal inside, most
        try:
            for _ in range(40):
                with _write(engine) as conn, conn.begin():
                    with guard:
                        inside += 1
                        most = max(most, inside)
                    conn.exec_driver_sql("UPDATE t SET n = n + 1")
                    conn.exec_driver_sql(
                        "INSERT INTO t (n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM t)"
                    )
                    time.sleep(0.0005)
                    with guard:
                        inside -= 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    assert most == 1  # one write transaction at a time
    # ... each of them queued on the lock (not on SQLite's sleeping busy handler).
    assert counts == {"acquire": 6 * 40, "release": 6 * 40}
    monkeypatch.undo()
    lock = write_lock_for(str(tmp_path / "db.sqlite"))
    assert lock is not None and lock.acquire()  # free again
    lock.release()
    assert oct(os.stat(lock.path).st_mode & 0o777) == "0o600"


def test_the_lock_is_released_when_the_transaction_fails_or_is_abandoned(tmp_path: Path) -> None:
    engine = _engine(tmp_path / "db.sqlite")
    lock = write_lock_for(str(tmp_path / "db.sqlite"))
    assert lock is not None
    # A failing statement, rolled back.
    with _write(engine) as conn:
        with pytest.raises(sa.exc.OperationalError), conn.begin():
            conn.exec_driver_sql("INSERT INTO no_such_table VALUES (1)")
    assert _free(lock)
    # A connection closed in the middle of a write transaction.
    conn = _write(engine)
    conn.begin()
    conn.exec_driver_sql("UPDATE t SET n = 1")
    assert not _free(lock)
    conn.close()
    assert _free(lock)
    # A commit.
    with _write(engine) as conn, conn.begin():
        conn.exec_driver_sql("UPDATE t SET n = 2")
    assert _free(lock)
    # Reads take no lock.
    with engine.connect() as reader, reader.begin():
        reader.exec_driver_sql("SELECT count(*) FROM t").scalar()
        assert _free(lock)


def _free(lock: WriteLock) -> bool:
    """True if ``lock`` can be taken now (and releases it again)."""
    keep = lock.timeout
    lock.timeout = 0.05
    try:
        got = lock.acquire()
    finally:
        lock.timeout = keep
    if got:
        lock.release()
    return got


HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[3])
from quizapp.web.database import WriteLock
lock = WriteLock(sys.argv[1], 10)
assert lock.acquire()
print("held", flush=True)
time.sleep(float(sys.argv[2]))
lock.release()
print("released", flush=True)
"""


def _hold_in_another_process(path: str, seconds: float) -> subprocess.Popen[str]:
    repo = str(Path(__file__).resolve().parent.parent)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, path, str(seconds), repo],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_another_process_waits_for_the_lock(tmp_path: Path) -> None:
    path = str(tmp_path / "db.sqlite.writelock")
    proc = _hold_in_another_process(path, 0.6)
    lock = WriteLock(path, 10)
    t0 = time.monotonic()
    assert lock.acquire()
    waited = time.monotonic() - t0
    lock.release()
    proc.wait(timeout=10)
    assert waited > 0.3  # it queued behind the other process's write


def test_a_wait_longer_than_the_timeout_gives_up_instead_of_deadlocking(tmp_path: Path) -> None:
    path = str(tmp_path / "db.sqlite.writelock")
    proc = _hold_in_another_process(path, 1.5)
    lock = WriteLock(path, 0.2)
    t0 = time.monotonic()
    assert lock.acquire() is False
    assert time.monotonic() - t0 < 1.0
    proc.wait(timeout=10)
    # Once the holder is gone the lock works again (the abandoned wait let go of it).
    deadline = time.monotonic() + 5
    while not _free(lock):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_the_services_write_through_the_lock(tmp_path: Path, monkeypatch) -> None:
    """A submit on the app's SQLite database takes and releases the lock once."""
    from test_instructor_support import TWO, add_user, bank_app, submit

    app = bank_app(tmp_path)
    add_user(app, "ana")
    taken = []
    real_acquire = WriteLock.acquire

    def counting(self):  # noqa: ANN001, ANN202
        taken.append(self.path)
        return real_acquire(self)

    monkeypatch.setattr(WriteLock, "acquire", counting)
    submit(app, "ana", TWO, "1, 2")
    assert taken and all(p.endswith(".sqlite.writelock") for p in taken)
    assert _free(
        database.write_lock_for(app.config["SQLALCHEMY_DATABASE_URI"][len("sqlite:///") :])
    )
