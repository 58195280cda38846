"""Deadlines: when a student may still answer a quiz and the credit an answer graded at an
instant earns (issue 17).  Every rule about time and late credit lives here.

**Schedule.**  A quiz closes at ``quizzes.closes_at`` (an instant; ``quiz.yaml`` writes it as a
wall-clock time in the course zone, read by ``quizapp.coursetime``) and may have late periods
``quizzes.late = [{until, credit}, ...]`` (each ``until`` later than the one before, the first
later than ``closes``).  An answer graded at instant ``t`` earns, by the first rule that holds:

1. ``t < closes`` (or the quiz never closes, or the user is an instructor): credit 1, on time;
2. the student has an extension ``(until E, credit c)`` with ``E > closes`` and ``t < E``:
   credit ``c`` (1 unless the instructor said otherwise), not late;
3. ``t < until_k`` for the first late period ``k`` with that property: credit ``credit_k``, late.
   With an extension the late periods *follow* ``E``: each ``until_k`` moves by the wall-clock
   time from ``closes`` to ``E`` (so "a week after closing, at 23:59" stays a week after the
   student's own closing time, at 23:59, across a DST change);
4. otherwise the answer is refused (``Forbidden``) with a message saying when the quiz closed.

Each boundary is an instant at which the next rule starts: an answer at exactly ``closes`` is
late (or refused), one at exactly ``until_k`` falls in period ``k+1``.  The credit and lateness
are stored with the submission (``submissions.credit``, ``.late``); its ``points`` are
``score x credit x`` the exercise's points, and regrades keep the stored credit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp import coursetime
from quizapp.models import User, utcnow
from quizapp.models_instructor import Extension
from quizapp.services.errors import Forbidden


class QuizTimes(Protocol):
    """What a schedule reads of a quiz: an ORM ``Quiz``, or the page's ``QuizRow``
    (``quizapp.services.page_rows``)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def opens_at(self) -> datetime | None: ...
    @property
    def closes_at(self) -> datetime | None: ...
    @property
    def late(self) -> list[dict[str, Any]]: ...
    @property
    def timezone(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Period:
    """Answers before ``end`` (and at or after the previous period's end) earn ``credit``;
    ``late`` is True for a late period, False for an extension's own time."""

    end: datetime
    credit: float
    late: bool


@dataclass(frozen=True, slots=True)
class Credit:
    """What an answer at some instant earns: ``credit`` in [0, 1] and whether it was ``late``."""

    credit: float = 1.0
    late: bool = False


ON_TIME = Credit()


@dataclass(frozen=True)
class Schedule:
    """One student's deadlines on one quiz: the quiz's own ``closes`` (None: never closes), the
    extension (``extended_until`` / ``extension_credit``, None without one) and the periods
    after ``closes`` in order (the extension's, then the late periods, already moved to follow
    the extension).  ``zone``: the course zone the times are shown in."""

    zone: ZoneInfo
    closes: datetime | None
    periods: tuple[Period, ...] = ()
    extended_until: datetime | None = None
    extension_credit: float | None = None

    @property
    def own_closes(self) -> datetime | None:
        """When this student's on-time answers end: the extension's ``until`` or ``closes``."""
        return self.extended_until or self.closes

    @property
    def final(self) -> datetime | None:
        """The last instant answers are accepted before (None: always accepted)."""
        return self.periods[-1].end if self.periods else self.closes

    @property
    def late_periods(self) -> tuple[Period, ...]:
        return tuple(p for p in self.periods if p.late)

    def credit_at(self, t: datetime) -> Credit | None:
        """The credit an answer graded at ``t`` earns, None when it comes too late (see the
        module docstring: half-open periods, each boundary belongs to what follows)."""
        if self.closes is None or t < self.closes:
            return ON_TIME
        for period in self.periods:
            if t < period.end:
                return Credit(period.credit, period.late)
        return None

    def closed_message(self, title: str) -> str:
        """The refusal of an answer after :attr:`final`: when the quiz closed, and the
        extension and the last late period if any, in the course zone."""
        show = coursetime.show_deadline
        if self.extended_until is not None:
            text = f"Your extension of the quiz '{title}' ended on {show(self.extended_until, self.zone)}"
        else:
            text = f"The quiz '{title}' closed on {show(self.closes, self.zone)}"
        late = self.late_periods
        if late:
            text += f" and its last late period ended on {show(late[-1].end, self.zone)}"
        return text + "; answers are no longer accepted."


def late_periods(quiz: QuizTimes) -> list[tuple[datetime, float]]:
    """The quiz's late periods as ``[(until, credit), ...]`` (aware UTC), in order."""
    out = []
    for entry in quiz.late or []:
        until = datetime.fromisoformat(str(entry["until"]))
        if until.tzinfo is None:
            until = until.replace(tzinfo=coursetime.UTC)
        out.append((until, float(entry["credit"])))
    return out


def store_late_periods(periods: Iterable[tuple[datetime, float]]) -> list[dict[str, Any]]:
    """``quizzes.late`` for ``[(until, credit), ...]``: ISO 8601 UTC texts and floats."""
    return [
        {"until": until.astimezone(coursetime.UTC).isoformat(), "credit": float(credit)}
        for until, credit in periods
    ]


def quiz_zone(quiz: QuizTimes) -> ZoneInfo:
    """The zone the quiz's times were read in (``quizzes.timezone``; UTC if unknown)."""
    try:
        return coursetime.parse_zone(quiz.timezone or coursetime.DEFAULT_ZONE)
    except coursetime.TimeError:
        return coursetime.parse_zone(coursetime.DEFAULT_ZONE)


def schedule_for(quiz: QuizTimes, extension: Extension | None = None) -> Schedule:
    """The schedule of ``quiz`` for a student with ``extension`` (or none).

    An extension only counts when the quiz closes and the extension's ``until`` is later than
    that (after ``closes`` moved past it in ``quiz.yaml``, the quiz's own schedule applies).
    """
    zone = quiz_zone(quiz)
    closes = quiz.closes_at
    late = late_periods(quiz)
    if closes is None:
        return Schedule(zone, None)
    if extension is None or extension.until <= closes:
        return Schedule(zone, closes, tuple(Period(u, c, True) for u, c in late))
    until = extension.until
    delta = coursetime.wall_clock_delta(closes, until, zone)
    moved = [Period(coursetime.shift_wall_clock(u, delta, zone), c, True) for u, c in late]
    periods = (Period(until, float(extension.credit), False), *moved)
    return Schedule(zone, closes, periods, until, float(extension.credit))


_EXTENSION = select(Extension)


def student_extension(session: Session, quiz_id: str, user_id: int) -> Extension | None:
    """Student ``user_id``'s extension of quiz ``quiz_id``, or None."""
    return session.scalar(
        _EXTENSION.where(Extension.user_id == user_id, Extension.quiz_id == quiz_id)
    )


def student_schedule(session: Session, quiz: QuizTimes, user: User) -> Schedule:
    """``user``'s schedule on ``quiz`` (their extension read from the database); an instructor's
    is the quiz's own."""
    if user.is_instructor or quiz.closes_at is None:
        return schedule_for(quiz)
    return schedule_for(quiz, student_extension(session, quiz.id, user.id))


def attempt_credit(session: Session, quiz: QuizTimes, user: User, now: datetime) -> Credit:
    """What an answer by ``user`` to an exercise of ``quiz`` graded at ``now`` earns.

    Instructors always answer on time.  Before the quiz's own ``closes`` no query is made;
    after it, the student's extension is read.  Raises ``Forbidden`` with the message of
    :meth:`Schedule.closed_message` when the answer comes after the last period."""
    if user.is_instructor or quiz.closes_at is None or now < quiz.closes_at:
        return ON_TIME
    schedule = student_schedule(session, quiz, user)
    credit = schedule.credit_at(now)
    if credit is None:
        raise Forbidden(schedule.closed_message(quiz.title))
    return credit


def accepting(session: Session, quiz: QuizTimes, user: User, now: datetime | None = None) -> bool:
    """True when an answer by ``user`` at ``now`` would be graded (not refused as too late)."""
    now = now or utcnow()
    if user.is_instructor or quiz.closes_at is None or now < quiz.closes_at:
        return True
    return student_schedule(session, quiz, user).credit_at(now) is not None


__all__ = [
    "ON_TIME",
    "Credit",
    "Period",
    "Schedule",
    "accepting",
    "attempt_credit",
    "late_periods",
    "quiz_zone",
    "schedule_for",
    "store_late_periods",
    "student_extension",
    "student_schedule",
]
