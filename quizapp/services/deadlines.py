"""Deadlines and credit: when a student may still answer, what an attempt earns, and the points
that count (issue 17).  Every rule about time, late credit, extensions and overrides lives here.

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

**Points.**  A student's points on an exercise are :func:`exercise_points`: the instructor's
override when there is one, else the best *credited* score of the graded attempts on variant 1
(:func:`best_attempt`) times the exercise's points.  ``progress.best_points`` holds that value,
written by the submit, the regrade, :func:`quizapp.services.recompute_progress`, the sync (new
points) and the override functions here; the student's pages, the JSON API, the scoreboard
totals and the gradebook all read it, so they agree.

**Audit.**  Every extension and override set or removed adds a ``grade_audit`` row (who, when,
before, after, why); nothing is ever deleted from it.
"""

from __future__ import annotations

import csv
import getpass
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from sqlalchemy import case, select
from sqlalchemy.orm import Session

from quizapp import coursetime
from quizapp.models import Exercise, Progress, Quiz, User, utcnow
from quizapp.models_instructor import AuditEntry, Extension
from quizapp.services.errors import BadRequest, Forbidden, NotFound
from quizapp.services.totals import refresh_user_totals
from quizapp.services.transactions import begin_write
from quizapp.services.variants import EXERCISE_ID_RE, ensure_progress

#: Longest reason kept with an extension (an override's reason is text of any length).
REASON_MAX = 500


# --------------------------------------------------------------------------------------------
# The schedule of one student on one quiz (pure)


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


def late_periods(quiz: Quiz) -> list[tuple[datetime, float]]:
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


def quiz_zone(quiz: Quiz) -> ZoneInfo:
    """The zone the quiz's times were read in (``quizzes.timezone``; UTC if unknown)."""
    try:
        return coursetime.parse_zone(quiz.timezone or coursetime.DEFAULT_ZONE)
    except coursetime.TimeError:
        return coursetime.parse_zone(coursetime.DEFAULT_ZONE)


def schedule_for(quiz: Quiz, extension: Extension | None = None) -> Schedule:
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


def student_schedule(session: Session, quiz: Quiz, user: User) -> Schedule:
    """``user``'s schedule on ``quiz`` (their extension read from the database); an instructor's
    is the quiz's own."""
    if user.is_instructor or quiz.closes_at is None:
        return schedule_for(quiz)
    return schedule_for(quiz, student_extension(session, quiz.id, user.id))


def attempt_credit(session: Session, quiz: Quiz, user: User, now: datetime) -> Credit:
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


def accepting(session: Session, quiz: Quiz, user: User, now: datetime | None = None) -> bool:
    """True when an answer by ``user`` at ``now`` would be graded (not refused as too late)."""
    now = now or utcnow()
    if user.is_instructor or quiz.closes_at is None or now < quiz.closes_at:
        return True
    return student_schedule(session, quiz, user).credit_at(now) is not None


# --------------------------------------------------------------------------------------------
# A student's points on an exercise: the one definition


class GradedAttempt(Protocol):
    score: float
    credit: float
    late: bool
    status: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Best:
    """The best credited attempt: ``score`` (score x credit, 0 without attempts), its ``credit``
    and ``late``, when it was first reached, and when the first correct answer came."""

    score: float = 0.0
    credit: float = 1.0
    late: bool = False
    reached_at: datetime | None = None
    solved_at: datetime | None = None


def credited(score: float, credit: float) -> float:
    """The score an attempt counts with: ``score x credit``, in [0, 1]."""
    return min(1.0, max(0.0, float(score) * float(credit)))


def best_attempt(graded: Sequence[GradedAttempt]) -> Best:
    """The best of the graded attempts (oldest first) of variant 1, by credited score; the
    earliest one reaching it wins (the scoreboard's tie-break).  A late correct answer still
    solves the exercise (``solved_at``); only its credit is reduced."""
    best: GradedAttempt | None = None
    best_score = 0.0
    for sub in graded:
        value = credited(sub.score, sub.credit)
        if best is None or value > best_score:
            best, best_score = sub, value
    solved_at = next((s.created_at for s in graded if s.status == "correct"), None)
    if best is None:
        return Best(solved_at=solved_at)
    return Best(best_score, float(best.credit), bool(best.late), best.created_at, solved_at)


def exercise_points(best_score: float, points: float, override_points: float | None) -> float:
    """A student's points on an exercise worth ``points``: ``override_points`` when an
    instructor set them, else ``best_score`` (already credited) x ``points``, rounded to 6
    decimals (as every stored points value)."""
    if override_points is not None:
        return float(override_points)
    return round(float(best_score) * float(points), 6)


def exercise_points_sql(points: float) -> Any:
    """:func:`exercise_points` of every progress row as a SQL expression, for an exercise now
    worth ``points`` (the bank sync's update when an exercise's points change)."""
    return case(
        (Progress.override_points.is_not(None), Progress.override_points),
        else_=Progress.best_score * float(points),
    )


def apply_best(progress: Progress, best: Best, points: float) -> None:
    """Write ``best`` into ``progress`` (best score, its credit and lateness, when reached,
    solved at) and the points of :func:`exercise_points`."""
    progress.best_score = best.score
    progress.best_credit = best.credit
    progress.best_late = best.late
    progress.best_reached_at = best.reached_at or (
        progress.override_at if progress.override_points is not None else None
    )
    progress.solved_at = best.solved_at
    progress.best_points = exercise_points(best.score, points, progress.override_points)


# --------------------------------------------------------------------------------------------
# Extensions and overrides (instructor actions, audited)


@dataclass(frozen=True)
class Actor:
    """Who made a change: a signed-in instructor, or the command line (``name`` then says
    which system user ran it)."""

    user_id: int | None
    name: str

    @classmethod
    def of(cls, user: User | None) -> Actor:
        if user is not None:
            return cls(user.id, user.username)
        try:
            who = getpass.getuser()
        except Exception:  # no login name (a container without one)
            who = "unknown"
        return cls(None, f"command line ({who})")


def _audit(
    session: Session,
    actor: Actor,
    action: str,
    user_id: int,
    *,
    quiz_id: str | None = None,
    exercise_id: str | None = None,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    reason: str,
) -> AuditEntry:
    entry = AuditEntry(
        created_at=utcnow(),
        actor_id=actor.user_id,
        actor=actor.name[:200],
        action=action,
        user_id=user_id,
        quiz_id=quiz_id,
        exercise_id=exercise_id,
        before=before,
        after=after,
        reason=reason,
    )
    session.add(entry)
    return entry


def _student(session: Session, username: str) -> User:
    from quizapp.services.accounts import find_user

    user = find_user(session, username) if isinstance(username, str) else None
    if user is None or user.role != "student":
        raise NotFound(f"username: there is no student {str(username)[:100]!r}")
    return user


def _live_quiz(session: Session, quiz_id: str) -> Quiz:
    quiz = session.get(Quiz, quiz_id) if isinstance(quiz_id, str) and quiz_id else None
    if quiz is None or quiz.archived:
        raise NotFound(f"quiz: there is no quiz {str(quiz_id)[:100]!r}")
    return quiz


def parse_credit(value: Any, field: str = "credit") -> float:
    """A credit (a number from 0 to 1, ``0.5`` or ``50%``).  Raises ``BadRequest`` naming
    ``field``."""
    text = str(value).strip() if value is not None else ""
    try:
        number = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise BadRequest(f"{field}: must be a number from 0 to 1 (0.5 = half credit), got {text!r}")
    return number


def _extension_until(quiz: Quiz, until: Any, field: str = "until") -> datetime:
    zone = quiz_zone(quiz)
    if quiz.closes_at is None:
        raise BadRequest(f"quiz: {quiz.id} has no closes: time, so there is no deadline to extend")
    if isinstance(until, datetime):
        instant = until if until.tzinfo else until.replace(tzinfo=zone)
        instant = instant.astimezone(coursetime.UTC)
    else:
        try:
            instant = coursetime.parse_instant(until, zone, field, end_of_day=True)
        except coursetime.TimeError as err:
            raise BadRequest(str(err)) from None
    if instant <= quiz.closes_at:
        raise BadRequest(
            f"{field}: {coursetime.show_deadline(instant, zone)} is not later than the quiz's "
            f"closes ({coursetime.show_deadline(quiz.closes_at, zone)})"
        )
    return instant


def _extension_values(ext: Extension | None) -> dict[str, Any] | None:
    if ext is None:
        return None
    return {"until": ext.until.isoformat(), "credit": float(ext.credit), "reason": ext.reason}


@dataclass(frozen=True)
class ExtensionRequest:
    """One extension to grant: student, until (written or an instant), credit, reason."""

    username: str
    until: Any
    credit: Any = 1.0
    reason: str = ""
    line: int | None = None


def _checked_extension(
    session: Session, quiz: Quiz, request: ExtensionRequest
) -> tuple[User, datetime, float, str]:
    user = _student(session, request.username)
    until = _extension_until(quiz, request.until)
    credit = parse_credit(1.0 if request.credit in (None, "") else request.credit)
    reason = (request.reason or "").strip()
    if len(reason) > REASON_MAX:
        raise BadRequest(f"reason: at most {REASON_MAX} characters, got {len(reason)}")
    return user, until, credit, reason


def _write_extension(
    session: Session,
    quiz_id: str,
    user_id: int,
    until: datetime,
    credit: float,
    reason: str,
    actor: Actor,
) -> Extension:
    row = student_extension(session, quiz_id, user_id)
    before = _extension_values(row)
    if row is None:
        row = Extension(user_id=user_id, quiz_id=quiz_id)
        session.add(row)
    row.until, row.credit, row.reason = until, credit, reason
    row.created_by_id, row.created_at = actor.user_id, utcnow()
    _audit(
        session,
        actor,
        "extend",
        user_id,
        quiz_id=quiz_id,
        before=before,
        after=_extension_values(row),
        reason=reason,
    )
    return row


def set_extension(
    session: Session,
    quiz_id: str,
    username: str,
    until: Any,
    *,
    credit: Any = 1.0,
    reason: str = "",
    by: User | None = None,
) -> Extension:
    """Give student ``username`` their own closing time ``until`` on quiz ``quiz_id`` (replacing
    an extension they had), answers after the quiz's ``closes`` and before ``until`` earning
    ``credit``; the quiz's late periods follow ``until``.  Audited; commits.

    ``until``: a written time in the course zone (``2026-12-10 12:00``; a date alone is the end
    of that day) or an aware datetime.  Raises ``NotFound`` (unknown quiz or student) or
    ``BadRequest`` (a quiz without ``closes``, an unreadable ``until`` or one not later than
    ``closes``, a credit outside [0, 1], a reason too long), each one line naming the field;
    nothing is changed then.
    """
    quiz = _live_quiz(session, quiz_id)
    user, instant, number, text = _checked_extension(
        session, quiz, ExtensionRequest(username, until, credit, reason)
    )
    actor = Actor.of(by)
    quiz_key, user_id = quiz.id, user.id
    begin_write(session)
    row = _write_extension(session, quiz_key, user_id, instant, number, text, actor)
    session.commit()
    return row


def remove_extension(
    session: Session, quiz_id: str, username: str, *, by: User | None = None, reason: str = ""
) -> bool:
    """Remove student ``username``'s extension of ``quiz_id``; True if there was one.  Audited;
    commits.  Raises ``NotFound`` for an unknown quiz or student."""
    quiz = _live_quiz(session, quiz_id)
    user = _student(session, username)
    actor = Actor.of(by)
    quiz_key, user_id = quiz.id, user.id
    begin_write(session)
    row = student_extension(session, quiz_key, user_id)
    if row is None:
        session.rollback()
        return False
    _audit(
        session,
        actor,
        "remove-extension",
        user_id,
        quiz_id=quiz_key,
        before=_extension_values(row),
        after=None,
        reason=(reason or "").strip(),
    )
    session.delete(row)
    session.commit()
    return True


class ExtensionsError(BadRequest):
    """A roster CSV of extensions with problems; ``problems`` lists each as ``line N: ...``.
    Nothing was changed."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems[:5]) + (" ..." if len(problems) > 5 else ""))
        self.problems = problems


def parse_extensions_csv(
    text: str, *, until: Any = None, credit: Any = None, reason: str = ""
) -> list[ExtensionRequest]:
    """The rows of a roster CSV (a header with ``username``; optional ``until``, ``credit``,
    ``reason`` columns; other columns such as ``display_name`` and ``email`` of the roster
    export are ignored) as extension requests; ``until`` / ``credit`` / ``reason`` given here
    fill the cells left empty.  Raises :class:`ExtensionsError` for a file without a
    ``username`` column, a row without a username, or a row without an ``until``."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [h.strip().lower() for h in (reader.fieldnames or [])]
    if "username" not in header:
        raise ExtensionsError(["line 1: the header must have a 'username' column"])
    reader.fieldnames = header
    problems: list[str] = []
    out: list[ExtensionRequest] = []
    for row in reader:
        line = reader.line_num
        name = (row.get("username") or "").strip()
        if not name and not any((v or "").strip() for v in row.values() if isinstance(v, str)):
            continue  # a blank line
        when = (row.get("until") or "").strip() or until
        if not name:
            problems.append(f"line {line}: username: empty")
            continue
        if when in (None, ""):
            problems.append(f"line {line}: until: no until in the row and none given")
            continue
        out.append(
            ExtensionRequest(
                name,
                when,
                (row.get("credit") or "").strip() or credit,
                (row.get("reason") or "").strip() or reason,
                line,
            )
        )
    if problems:
        raise ExtensionsError(problems)
    if not out:
        raise ExtensionsError(["the file lists no student"])
    return out


def extend_roster(
    session: Session,
    quiz_id: str,
    requests: Sequence[ExtensionRequest],
    *,
    by: User | None = None,
) -> list[Extension]:
    """Grant every extension of ``requests`` (from :func:`parse_extensions_csv`) on ``quiz_id``
    in one transaction, or none: every row is checked first, and any problem (unknown
    student, bad ``until`` or credit, a student listed twice) raises
    :class:`ExtensionsError` listing them all by line.  Audited; commits."""
    quiz = _live_quiz(session, quiz_id)
    problems: list[str] = []
    checked: list[tuple[User, datetime, float, str]] = []
    seen: dict[int, int | None] = {}
    for request in requests:
        where = f"line {request.line}: " if request.line is not None else ""
        try:
            values = _checked_extension(session, quiz, request)
        except (BadRequest, NotFound) as err:
            problems.append(where + err.message)
            continue
        if values[0].id in seen:
            problems.append(f"{where}username: {request.username!r} is listed twice")
            continue
        seen[values[0].id] = request.line
        checked.append(values)
    if problems:
        raise ExtensionsError(problems)
    actor = Actor.of(by)
    plan = [(user.id, until, credit, reason) for user, until, credit, reason in checked]
    quiz_key = quiz.id
    begin_write(session)
    rows = [_write_extension(session, quiz_key, *values, actor) for values in plan]
    session.commit()
    return rows


def _override_values(progress: Progress | None) -> dict[str, Any] | None:
    if progress is None or progress.override_points is None:
        return None
    return {"points": float(progress.override_points), "reason": progress.override_reason}


def parse_points(value: Any, most: float, field: str = "points") -> float:
    """Override points: a number from 0 to ``most`` (the exercise's points).  Raises
    ``BadRequest`` naming ``field``."""
    text = str(value).strip() if value is not None else ""
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or not 0.0 <= number <= float(most):
        shown = int(most) if float(most).is_integer() else most
        raise BadRequest(
            f"{field}: must be a number from 0 to {shown} (the exercise's points), got {text!r}"
        )
    return number


def _exercise(session: Session, exercise_id: str) -> Exercise:
    exercise = (
        session.get(Exercise, exercise_id)
        if isinstance(exercise_id, str) and EXERCISE_ID_RE.fullmatch(exercise_id)
        else None
    )
    if exercise is None:
        raise NotFound(f"exercise: there is no exercise {str(exercise_id)[:200]!r}")
    return exercise


def _score_changed(session: Session, user_id: int, exercise_id: str) -> None:
    """Tell the receivers of ``quizapp.signals.score_changed`` (the LMS grade queue) that the
    student's points on ``exercise_id`` changed, after the commit."""
    from quizapp import signals

    quiz_id = exercise_id.split("/", 1)[0]
    signals.score_changed.send(session, user_id=user_id, exercise_id=exercise_id, quiz_id=quiz_id)


def set_override(
    session: Session,
    exercise_id: str,
    username: str,
    points: Any,
    reason: str,
    *,
    by: User | None = None,
) -> Progress:
    """Set student ``username``'s points on ``exercise_id`` to ``points`` by hand, for
    ``reason`` (required).  The override wins over every computed score (later attempts and
    regrades change the computed best, not the points) until removed; the scoreboard totals are
    refreshed in the same transaction.  Audited; commits.

    Raises ``NotFound`` (unknown exercise or student) or ``BadRequest`` (points not a number
    from 0 to the exercise's points, an empty reason), one line naming the field; nothing is
    changed then.
    """
    exercise = _exercise(session, exercise_id)
    user = _student(session, username)
    number = parse_points(points, exercise.points)
    text = (reason or "").strip()
    if not text:
        raise BadRequest("reason: a reason is required (it is kept in the audit history)")
    actor = Actor.of(by)
    ex_id, user_id, ex_points = exercise.id, user.id, float(exercise.points)
    begin_write(session)
    progress = ensure_progress(session, user, exercise, lock=True)
    before = _override_values(progress)
    progress.override_points = number
    progress.override_reason = text
    progress.override_by_id = actor.user_id
    progress.override_at = utcnow()
    progress.best_points = exercise_points(progress.best_score, ex_points, number)
    if progress.best_reached_at is None:
        progress.best_reached_at = progress.override_at
    _audit(
        session,
        actor,
        "override",
        user_id,
        exercise_id=ex_id,
        before=before,
        after=_override_values(progress),
        reason=text,
    )
    refresh_user_totals(session, user_id)
    session.commit()
    _score_changed(session, user_id, ex_id)
    return progress


def remove_override(
    session: Session,
    exercise_id: str,
    username: str,
    *,
    reason: str = "",
    by: User | None = None,
) -> bool:
    """Remove the override of ``username`` on ``exercise_id``: their points are computed from
    their attempts again.  True if there was one.  Audited; commits.  Raises ``NotFound``."""
    exercise = _exercise(session, exercise_id)
    user = _student(session, username)
    actor = Actor.of(by)
    ex_id, user_id, ex_points = exercise.id, user.id, float(exercise.points)
    begin_write(session)
    progress = session.scalar(
        select(Progress)
        .where(Progress.user_id == user_id, Progress.exercise_id == ex_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if progress is None or progress.override_points is None:
        session.rollback()
        return False
    before = _override_values(progress)
    if progress.best_reached_at == progress.override_at and not progress.attempts_used:
        progress.best_reached_at = None
    progress.override_points = None
    progress.override_reason = None
    progress.override_by_id = None
    progress.override_at = None
    progress.best_points = exercise_points(progress.best_score, ex_points, None)
    _audit(
        session,
        actor,
        "remove-override",
        user_id,
        exercise_id=ex_id,
        before=before,
        after=None,
        reason=(reason or "").strip(),
    )
    refresh_user_totals(session, user_id)
    session.commit()
    _score_changed(session, user_id, ex_id)
    return True


def student_progress(session: Session, exercise_id: str, username: str) -> Progress | None:
    """Student ``username``'s progress row on ``exercise_id`` (None when they have none).
    Raises ``NotFound`` for an unknown exercise or student."""
    exercise = _exercise(session, exercise_id)
    user = _student(session, username)
    return session.scalar(
        select(Progress).where(Progress.user_id == user.id, Progress.exercise_id == exercise.id)
    )


def live_quiz(session: Session, quiz_id: str) -> Quiz:
    """The quiz ``quiz_id`` if it is live; raises ``NotFound`` (``quiz: there is no quiz ...``)."""
    return _live_quiz(session, quiz_id)


@dataclass
class StudentDeadlines:
    """What the instructor's student page lists: the student's extensions (with each quiz's
    schedule for them) and the audit history of their extensions and overrides, newest first."""

    extensions: list[tuple[Extension, Schedule]] = field(default_factory=list)
    history: list[AuditEntry] = field(default_factory=list)


def student_deadlines(session: Session, user_id: int) -> StudentDeadlines:
    """The extensions and the audit history of student ``user_id`` (two queries)."""
    rows = session.scalars(
        select(Extension).where(Extension.user_id == user_id).order_by(Extension.quiz_id)
    ).all()
    history = session.scalars(
        select(AuditEntry).where(AuditEntry.user_id == user_id).order_by(AuditEntry.id.desc())
    ).all()
    return StudentDeadlines([(e, schedule_for(e.quiz, e)) for e in rows], list(history))


__all__ = [
    "ON_TIME",
    "REASON_MAX",
    "Actor",
    "Best",
    "Credit",
    "ExtensionRequest",
    "ExtensionsError",
    "Period",
    "Schedule",
    "StudentDeadlines",
    "accepting",
    "apply_best",
    "attempt_credit",
    "best_attempt",
    "credited",
    "exercise_points",
    "exercise_points_sql",
    "extend_roster",
    "late_periods",
    "live_quiz",
    "parse_credit",
    "parse_extensions_csv",
    "parse_points",
    "quiz_zone",
    "remove_extension",
    "remove_override",
    "schedule_for",
    "set_extension",
    "set_override",
    "store_late_periods",
    "student_deadlines",
    "student_extension",
    "student_progress",
    "student_schedule",
]
