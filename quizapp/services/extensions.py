"""Extensions: a later closing time (and its credit) for one student on one quiz, set or removed
by an instructor, one at a time or for a roster from a CSV file; every change audited.  How an
extension moves the schedule: :mod:`quizapp.services.schedules`."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quizapp import coursetime
from quizapp.models import Quiz, User, utcnow
from quizapp.models_instructor import Extension
from quizapp.services.audit import REASON_MAX, Actor, _audit, _live_quiz, _student, reason_text
from quizapp.services.errors import BadRequest, NotFound
from quizapp.services.schedules import quiz_zone, student_extension
from quizapp.services.transactions import begin_write


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
    """One extension to grant: student, until (written or an instant), credit, reason (None:
    not given, so a replaced extension keeps its reason)."""

    username: str
    until: Any
    credit: Any = 1.0
    reason: str | None = None
    line: int | None = None


def _checked_extension(
    session: Session, quiz: Quiz, request: ExtensionRequest
) -> tuple[User, datetime, float, str | None]:
    user = _student(session, request.username)
    until = _extension_until(quiz, request.until)
    credit = parse_credit(1.0 if request.credit in (None, "") else request.credit)
    reason = None if request.reason is None else reason_text(request.reason)
    return user, until, credit, reason


def _write_extension(
    session: Session,
    quiz_id: str,
    user_id: int,
    until: datetime,
    credit: float,
    reason: str | None,
    actor: Actor,
) -> Extension:
    row = student_extension(session, quiz_id, user_id)
    before = _extension_values(row)
    if reason is None:  # not given: a replaced extension keeps its reason
        reason = row.reason if row is not None else ""
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
    reason: str | None = None,
    by: User | None = None,
) -> Extension:
    """Give student ``username`` their own closing time ``until`` on quiz ``quiz_id`` (replacing
    an extension they had; ``reason`` None keeps its reason), answers after the quiz's
    ``closes`` and before ``until`` earning ``credit``; the quiz's late periods follow
    ``until``.  Audited; commits.

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
        reason=reason_text(reason),
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
    text: str, *, until: Any = None, credit: Any = None, reason: str | None = None
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
    checked: list[tuple[User, datetime, float, str | None]] = []
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


__all__ = [
    "REASON_MAX",
    "ExtensionRequest",
    "ExtensionsError",
    "extend_roster",
    "parse_credit",
    "parse_extensions_csv",
    "remove_extension",
    "set_extension",
]
