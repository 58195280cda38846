"""The background sender of grades: one daemon thread per process, started on first need.

It loops on :func:`quizapp.lti.grades.deliver_due` with its own database sessions: after a
graded submit it is woken at once (:meth:`GradeWorker.wake`); otherwise it sleeps until the
earliest queued grade is due, at most ``poll`` seconds, so that grades queued by another host
(which may have stopped) are sent too.  Every host's worker may send any due grade: rows are
leased, never sent twice at once.  Without a running server, ``quizapp lti retry`` (e.g. from
cron) does one pass.

A failure of the database or of the worker's own code is logged and retried after ``poll``
seconds; the LMS's refusals are recorded on the grades themselves (see ``grades``).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from datetime import timedelta

import requests
from sqlalchemy.orm import Session

from quizapp.lti.grades import deliver_due, next_due
from quizapp.lti.http import TimeoutSession
from quizapp.lti.keys import ToolKey
from quizapp.models import utcnow

log = logging.getLogger(__name__)

#: Longest sleep between two looks at the queue (seconds).
DEFAULT_POLL = 30.0
#: Grades claimed per pass.
BATCH = 100


class GradeWorker:
    """Sends due grades in a daemon thread.

    ``sessions`` makes a new SQLAlchemy session (the worker closes it), ``key`` gives the
    tool's key pair from a session, ``jwks_url`` names the tool's public key URL in failure
    advice.  :meth:`start` is idempotent; :meth:`stop` ends the thread (tests, shutdown).
    """

    def __init__(
        self,
        sessions: Callable[[], Session],
        key: Callable[[Session], ToolKey],
        *,
        poll: float = DEFAULT_POLL,
        jwks_url: Callable[[], str] = lambda: "",
        http: Callable[[], requests.Session] = TimeoutSession,
    ) -> None:
        self._sessions = sessions
        self._key = key
        self._poll = poll
        self._jwks_url = jwks_url
        self._http = http
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        #: passes run and grades handled (for tests and the instructor page).
        self.passes = 0
        self.handled = 0

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the thread unless it runs."""
        with self._lock:
            if self.running:
                return
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._run, name="quizapp-lti-grades", daemon=True
            )
            self._thread.start()

    def wake(self) -> None:
        """Look at the queue now (starting the thread if needed)."""
        self.start()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the thread to end and wait for it (at most ``timeout`` seconds)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        self._thread = None

    def run_once(self) -> int:
        """One pass: deliver due grades until none is left; returns how many were handled."""
        total = 0
        http = self._http()
        try:
            while not self._stop.is_set():
                with self._sessions() as session:
                    report = deliver_due(
                        session,
                        functools.partial(self._key, session),
                        http,
                        limit=BATCH,
                        jwks_url=self._jwks_url(),
                    )
                total += len(report.outcomes)
                if len(report.outcomes) < BATCH:
                    break
        finally:
            http.close()
        self.passes += 1
        self.handled += total
        return total

    def _sleep_time(self) -> float:
        with self._sessions() as session:
            due = next_due(session)
        if due is None:
            return self._poll
        wait = (due - utcnow()) / timedelta(seconds=1)
        return min(self._poll, max(0.05, wait))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
                wait = self._sleep_time()
            except Exception:
                log.exception("the LMS grade worker failed; trying again in %s s", self._poll)
                wait = self._poll
            if self._wake.wait(wait):
                self._wake.clear()


__all__ = ["BATCH", "DEFAULT_POLL", "GradeWorker"]
