"""Grades to the LMS (LTI Assignment and Grade Services 2.0): the queue and its delivery.

Every grade goes through the queue table ``lti_grades`` (one row per line item and student):

1. **Queue.**  After a graded submit (:func:`queue_for_submit`, from the ``score_changed``
   signal), at a student's launch, or on demand (:func:`queue_resource`: ``quizapp lti
   send-grades`` and the instructor page), the rows of the student's line items are marked
   ``pending``.  Queuing is a short local write: nothing here waits for the LMS, so a submit is
   never slowed down or failed by it.
2. **Deliver.**  :func:`deliver_due` (the background worker, ``quizapp lti retry``) claims due
   rows (a lease, ``claimed_until``, so several hosts never send one row at once), computes the
   score with :func:`quizapp.lti.scores.lms_score` and sends it only when it differs from the last
   score the LMS accepted (``sent_*``), unless ``force`` is set (``send-grades --force``).
3. **Line items, idempotently.**  A line item is found by our ``resourceId`` (``quiz:<id>``)
   before one is created: the URL from the launch's AGS claim when there is one, else a lookup
   of the context's line items filtered by ``resource_id`` (checked on our side too, in case the
   platform ignores the filter), else a create.  One host at a time does this for a line item
   (``lti_lineitems.claimed_at``); the others put their grades back for a few seconds.
4. **Failures** are retried with exponential backoff (30 s, 1, 2, 4 ... minutes, at most an
   hour) and listed on the instructor page with the LMS's answer in words and what to do
   (:func:`quizapp.lti.failures.explain`).  An unreachable token endpoint fails the whole batch
   of that registration at once (no request per grade), and the grades stay queued until it
   answers again.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.utils import add_param_to_url
from sqlalchemy import func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.lti.failures import Failure, explain
from quizapp.lti.http import Connector, TokenError
from quizapp.lti.keys import ToolKey
from quizapp.lti.models import (
    LtiContext,
    LtiGrade,
    LtiLineItem,
    LtiMember,
    LtiRegistration,
    LtiUser,
)
from quizapp.lti.registry import DatabaseToolConf
from quizapp.lti.scores import LmsScore, lms_score, resource_id, resource_points
from quizapp.models import User, utcnow

log = logging.getLogger(__name__)


SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"


SCOPE_LINEITEM_READONLY = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"


SCOPE_RESULT_READONLY = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"


SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


#: The AGS scopes the tool asks for (in the tool configuration it prints).
AGS_SCOPES = (SCOPE_LINEITEM, SCOPE_LINEITEM_READONLY, SCOPE_RESULT_READONLY, SCOPE_SCORE)


#: The ``tag`` of the line items the tool creates.
TAG = "quizapp"


#: First retry delay and the largest one (seconds); delay = first x 2^(tries - 1).
BACKOFF_FIRST = 30


BACKOFF_MAX = 3600


#: How long a host owns the rows it claimed (seconds): past it, another host may send them.
CLAIM_SECONDS = 120


#: A line item lookup/create claim older than this is abandoned (crashed host) and retaken.
LINEITEM_CLAIM = timedelta(minutes=5)


#: Delay before trying again a grade put back because another host creates its line item.
DEFER_SECONDS = 10


def backoff(tries: int) -> timedelta:
    """The wait after the ``tries``-th failure in a row (1-based): 30 s doubled each time, at
    most an hour."""
    return timedelta(seconds=min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** max(0, tries - 1)))


# --------------------------------------------------------------------------------------------
# Queueing


def _upsert_pending(
    session: Session, pairs: Iterable[tuple[int, int]], *, force: bool, now: datetime
) -> int:
    """Mark the (line item, user) rows pending, creating missing ones; commits.  A row waiting
    after failures keeps its backoff unless ``force`` (an explicit request) is given."""
    wanted = sorted(set(pairs))
    if not wanted:
        return 0
    for attempt in range(2):
        services.begin_write(session)
        try:
            by_item: dict[int, set[int]] = defaultdict(set)
            for lineitem_id, user_id in wanted:
                by_item[lineitem_id].add(user_id)
            existing: dict[tuple[int, int], LtiGrade] = {}
            for lineitem_id, users in by_item.items():
                ids = sorted(users)
                for k in range(0, len(ids), 500):
                    for found in session.scalars(
                        select(LtiGrade).where(
                            LtiGrade.lineitem_id == lineitem_id,
                            LtiGrade.user_id.in_(ids[k : k + 500]),
                        )
                    ):
                        existing[(found.lineitem_id, found.user_id)] = found
            for pair in wanted:
                row = existing.get(pair)
                if row is None:
                    session.add(
                        LtiGrade(
                            lineitem_id=pair[0],
                            user_id=pair[1],
                            pending=True,
                            force=force,
                            queued_at=now,
                            next_try_at=now,
                        )
                    )
                    continue
                row.pending = True
                row.force = row.force or force
                row.queued_at = now
                if force or row.tries == 0:
                    row.next_try_at = min(row.next_try_at, now)
            session.commit()
            return len(wanted)
        except IntegrityError:
            session.rollback()  # another host inserted one of them meanwhile: once more
            if attempt:
                raise
        except BaseException:
            session.rollback()
            raise
    return 0  # pragma: no cover  (the loop returns or raises)


def queue_for_submit(
    session: Session,
    *,
    user_id: int,
    quiz_id: str,
    exercise_id: str,
    now: datetime | None = None,
) -> int:
    """Queue the grades a graded submit may have changed: the student's line items of the
    exercise's quiz and of the exercise itself, in every course they are an active member of.
    Returns how many rows were queued (0, without writing, for a student outside any LMS
    course).  Commits when it queues."""
    targets = [resource_id(quiz_id=quiz_id), resource_id(exercise_id=exercise_id)]
    lineitems = session.scalars(
        select(LtiLineItem.id)
        .join(LtiMember, LtiMember.context_id == LtiLineItem.context_id)
        .where(
            LtiMember.user_id == user_id,
            LtiMember.active.is_(True),
            LtiLineItem.resource_id.in_(targets),
        )
    ).all()
    if not lineitems:
        session.rollback()  # end the read transaction
        return 0
    return _upsert_pending(
        session, [(li, user_id) for li in lineitems], force=False, now=now or utcnow()
    )


def queue_user(
    session: Session, user_id: int, lineitem_ids: Sequence[int], now: datetime | None = None
) -> int:
    """Queue one student's grades on ``lineitem_ids`` (at launch: a score earned before the
    link existed gets sent); commits."""
    return _upsert_pending(
        session, [(li, user_id) for li in lineitem_ids], force=False, now=now or utcnow()
    )


def queue_resource(
    session: Session,
    *,
    quiz_id: str | None = None,
    exercise_id: str | None = None,
    force: bool = False,
    lineitem_ids: Sequence[int] | None = None,
    now: datetime | None = None,
) -> list[int]:
    """Queue the grades of every active student member on every line item of the quiz (or
    exercise), or only on ``lineitem_ids`` if given, and return the queued rows' ids (to
    deliver them now).  ``force`` resends even unchanged scores and clears backoff.  Commits.
    Raises ``services.NotFound`` when no LMS course links that quiz or exercise."""
    rid = resource_id(quiz_id=quiz_id, exercise_id=exercise_id)
    stmt = select(LtiLineItem.id).where(LtiLineItem.resource_id == rid)
    if lineitem_ids is not None:
        stmt = stmt.where(LtiLineItem.id.in_(list(lineitem_ids)))
    items = session.scalars(stmt).all()
    if not items:
        what = f"quiz '{quiz_id}'" if quiz_id is not None else f"exercise '{exercise_id}'"
        raise services.NotFound(
            f"No LMS course has a grade column for {what} yet: link it from the LMS (deep "
            "linking) and launch it once, then send the grades."
        )
    members = session.execute(
        select(LtiLineItem.id, LtiMember.user_id)
        .join(LtiMember, LtiMember.context_id == LtiLineItem.context_id)
        .join(User, User.id == LtiMember.user_id)
        .where(LtiLineItem.id.in_(items), LtiMember.active.is_(True), User.role == "student")
    ).all()
    when = now or utcnow()
    _upsert_pending(session, [(li, uid) for li, uid in members], force=force, now=when)
    if not members:
        return []
    ids: list[int] = []
    for li in items:
        ids += session.scalars(
            select(LtiGrade.id).where(LtiGrade.lineitem_id == li, LtiGrade.pending.is_(True))
        ).all()
    session.rollback()
    return ids


# --------------------------------------------------------------------------------------------
# Delivery


@dataclass
class Outcome:
    """What happened to one queued grade: ``result`` is ``sent``, ``unchanged`` (equal to the
    last score sent), ``nothing`` (no score to send yet), ``failed`` or ``deferred`` (put back
    briefly: another host creates the line item); ``score`` the score computed, ``error`` the
    explanation of a failure."""

    grade_id: int
    user_id: int
    lineitem_id: int
    result: str
    score: LmsScore | None = None
    error: str | None = None


@dataclass
class DeliveryReport:
    """The outcomes of one :func:`deliver_due` run."""

    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, result: str) -> int:
        return sum(1 for o in self.outcomes if o.result == result)

    def summary(self) -> str:
        """``sent N, unchanged N, nothing to send N, failed N[, deferred N]``."""
        parts = [
            f"sent {self.count('sent')}",
            f"unchanged {self.count('unchanged')}",
            f"nothing to send {self.count('nothing')}",
            f"failed {self.count('failed')}",
        ]
        if self.count("deferred"):
            parts.append(f"deferred {self.count('deferred')}")
        return ", ".join(parts)

    def errors(self) -> list[str]:
        """The distinct failure explanations, in order."""
        return list(dict.fromkeys(o.error for o in self.outcomes if o.error))


@dataclass
class _Claimed:
    grade_id: int
    user_id: int
    force: bool
    sent: tuple[float | None, float | None, str | None]
    lineitem_id: int
    resource: str
    lineitem_url: str | None
    resource_link_id: str | None
    context_row: int
    context_title: str
    lineitems_url: str | None
    scopes: list[str]
    registration_id: int


def _claim(
    session: Session, now: datetime, limit: int, only: Sequence[int] | None
) -> tuple[list[_Claimed], datetime]:
    """Lease up to ``limit`` due rows (or the pending rows among ``only``) for this host."""
    until = now + timedelta(seconds=CLAIM_SECONDS, microseconds=random.randrange(1, 10**6))
    services.begin_write(session)
    try:
        stmt = (
            select(LtiGrade.id)
            .where(
                LtiGrade.pending.is_(True),
                or_(LtiGrade.claimed_until.is_(None), LtiGrade.claimed_until < now),
            )
            .order_by(LtiGrade.next_try_at, LtiGrade.id)
            .limit(limit)
        )
        if only is not None:
            stmt = stmt.where(LtiGrade.id.in_(list(only)))
        else:
            stmt = stmt.where(LtiGrade.next_try_at <= now)
        if session.get_bind().dialect.name == "postgresql":
            stmt = stmt.with_for_update(skip_locked=True)
        ids = session.scalars(stmt).all()
        if ids:
            session.execute(
                update(LtiGrade)
                .where(LtiGrade.id.in_(ids))
                .values(claimed_until=until)
                .execution_options(synchronize_session=False)
            )
        rows = (
            session.execute(
                select(
                    LtiGrade.id,
                    LtiGrade.user_id,
                    LtiGrade.force,
                    LtiGrade.sent_given,
                    LtiGrade.sent_maximum,
                    LtiGrade.sent_progress,
                    LtiLineItem.id,
                    LtiLineItem.resource_id,
                    LtiLineItem.url,
                    LtiLineItem.resource_link_id,
                    LtiContext.id,
                    LtiContext.title,
                    LtiContext.lineitems_url,
                    LtiContext.ags_scopes,
                    LtiContext.registration_id,
                )
                .join(LtiLineItem, LtiLineItem.id == LtiGrade.lineitem_id)
                .join(LtiContext, LtiContext.id == LtiLineItem.context_id)
                .where(LtiGrade.id.in_(ids))
                .order_by(LtiContext.registration_id, LtiLineItem.id, LtiGrade.id)
            ).all()
            if ids
            else []
        )
        session.commit()
    except BaseException:
        session.rollback()
        raise
    claimed = [
        _Claimed(
            grade_id=r[0],
            user_id=r[1],
            force=bool(r[2]),
            sent=(r[3], r[4], r[5]),
            lineitem_id=r[6],
            resource=r[7],
            lineitem_url=r[8],
            resource_link_id=r[9],
            context_row=r[10],
            context_title=r[11],
            lineitems_url=r[12],
            scopes=list(r[13] or []),
            registration_id=r[14],
        )
        for r in rows
    ]
    return claimed, until


class _Deferred(Exception):
    """Another host is creating this line item: put the grades back for a few seconds."""


def _service(
    connector: Connector, c: _Claimed, lineitems_url: str | None
) -> AssignmentsGradesService:
    data: dict[str, Any] = {"scope": c.scopes}
    if lineitems_url:
        data["lineitems"] = lineitems_url
    return AssignmentsGradesService(connector, data)  # type: ignore[arg-type]  # pylti1p3's TypedDict allows 4 scope literals; ours are the platform's strings


def _lineitem_url(session: Session, connector: Connector, c: _Claimed, now: datetime) -> str:
    """The URL of ``c``'s line item: stored, or found by ``resourceId``, or created (once,
    across hosts: the row is claimed first).  Commits its writes; raises :class:`_Deferred`
    when another host holds the claim, ``LtiException`` when the platform offers no line items
    service, or whatever the platform call raised."""
    if c.lineitem_url:
        return c.lineitem_url
    services.begin_write(session)
    try:
        took = session.execute(  # type: ignore[attr-defined]  # DML gives a CursorResult; Session.execute is typed as Result
            update(LtiLineItem)
            .where(
                LtiLineItem.id == c.lineitem_id,
                LtiLineItem.url.is_(None),
                or_(
                    LtiLineItem.claimed_at.is_(None),
                    LtiLineItem.claimed_at < now - LINEITEM_CLAIM,
                ),
            )
            .values(claimed_at=now)
            .execution_options(synchronize_session=False)
        ).rowcount
        url = session.scalar(select(LtiLineItem.url).where(LtiLineItem.id == c.lineitem_id))
        session.commit()
    except BaseException:
        session.rollback()
        raise
    if url:
        return url
    if not took:
        raise _Deferred()
    try:
        if not c.lineitems_url:
            raise LtiException(
                f"The LMS offered no line items service in course '{c.context_title}', so the "
                "tool cannot find or create its grade column"
            )
        label, points = resource_points(session, c.resource) or (c.resource, 1.0)
        session.rollback()
        wanted = LineItem().set_resource_id(c.resource).set_label(label).set_tag(TAG)
        wanted.set_score_maximum(points if points > 0 else 1.0)
        if c.resource_link_id:
            wanted.set_resource_link_id(c.resource_link_id)
        filtered = add_param_to_url(c.lineitems_url, "resource_id", c.resource)
        found = _service(connector, c, filtered).find_lineitem_by_resource_id(c.resource)
        if found is None:
            found = _service(connector, c, c.lineitems_url).find_or_create_lineitem(
                wanted, find_by="resource_id"
            )
        url = found.get_id()
        if not url:
            raise LtiException("The LMS answered a line item without an id")
    except BaseException:
        _release_lineitem(session, c.lineitem_id, None)
        raise
    _release_lineitem(session, c.lineitem_id, url)
    return url


def _release_lineitem(session: Session, lineitem_id: int, url: str | None) -> None:
    services.begin_write(session)
    try:
        values: dict[str, Any] = {"claimed_at": None}
        if url:
            values["url"] = url
        session.execute(
            update(LtiLineItem)
            .where(LtiLineItem.id == lineitem_id)
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        session.commit()
    except BaseException:
        session.rollback()
        raise


def _forget_lineitem(session: Session, lineitem_id: int, url: str) -> None:
    """The platform said 404 for ``url``: forget it, so the next try looks it up again."""
    services.begin_write(session)
    try:
        session.execute(
            update(LtiLineItem)
            .where(LtiLineItem.id == lineitem_id, LtiLineItem.url == url)
            .values(url=None, claimed_at=None)
            .execution_options(synchronize_session=False)
        )
        session.commit()
    except BaseException:
        session.rollback()
        raise


def _timestamp(now: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and ``Z``, as AGS asks for a score's ``timestamp``."""
    utc = now.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _record(
    session: Session,
    outcomes: Sequence[Outcome],
    until: datetime,
    now: datetime,
    statuses: dict[int, int],
) -> None:
    """Store the outcomes: sent scores, cleared or re-armed queue entries, failures with their
    backoff.  A row queued again while it was being sent stays pending."""
    services.begin_write(session)
    try:
        for o in outcomes:
            row = session.get(LtiGrade, o.grade_id)
            if row is None or row.claimed_until != until:
                continue  # deleted, or the lease expired and another host took it
            requeued = row.queued_at > now
            row.claimed_until = None
            if o.result == "sent" and o.score is not None:
                row.sent_given, row.sent_maximum = o.score.given, o.score.maximum
                row.sent_progress, row.sent_at = o.score.activity, now
            if o.result in ("sent", "unchanged", "nothing"):
                row.pending = requeued
                row.force = False if not requeued else row.force
                row.tries = 0
                row.last_status = row.last_error = row.last_error_at = None
            elif o.result == "deferred":
                row.next_try_at = now + timedelta(seconds=DEFER_SECONDS)
            else:
                row.tries = (row.tries or 0) + 1
                row.next_try_at = now + backoff(row.tries)
                row.last_status = statuses.get(o.grade_id)
                row.last_error = o.error
                row.last_error_at = now
        session.commit()
    except BaseException:
        session.rollback()
        raise


_DEFERRED = object()


def deliver_due(
    session: Session,
    key: Callable[[], ToolKey],
    http: requests.Session,
    *,
    now: datetime | None = None,
    limit: int = 100,
    only: Sequence[int] | None = None,
    jwks_url: str = "",
) -> DeliveryReport:
    """Send up to ``limit`` due grades (or the pending ones among the row ids ``only``, due or
    not) and record the outcomes; returns them.  ``key`` gives the tool's key pair, ``http``
    the requests session (with timeouts) used for every call, ``jwks_url`` the tool's public
    key URL (named in the advice when the LMS refuses the tool's credentials).  Never raises
    for what the LMS answers: failures are recorded with :func:`explain`'s message and retried
    later (with :func:`backoff`)."""
    now = now or utcnow()
    claimed, until = _claim(session, now, limit, only)
    report = DeliveryReport()
    if not claimed:
        return report
    statuses: dict[int, int] = {}

    def fail(c: _Claimed, failure: Failure, score: LmsScore | None = None) -> None:
        report.outcomes.append(
            Outcome(c.grade_id, c.user_id, c.lineitem_id, "failed", score, failure.message)
        )
        if failure.status is not None:
            statuses[c.grade_id] = failure.status

    conf = DatabaseToolConf(session, key)
    by_reg: dict[int, list[_Claimed]] = defaultdict(list)
    for c in claimed:
        by_reg[c.registration_id].append(c)
    for reg_id, items in by_reg.items():
        reg_row = session.get(LtiRegistration, reg_id)
        if reg_row is None:  # removed meanwhile: its grades were deleted with it
            continue
        subs = dict(
            session.execute(
                select(LtiUser.user_id, LtiUser.sub).where(
                    LtiUser.registration_id == reg_id,
                    LtiUser.user_id.in_(sorted({c.user_id for c in items})),
                )
            ).all()
        )
        client_id = reg_row.client_id
        connector = Connector(conf.to_registration(reg_row), http)
        session.rollback()  # no transaction stays open across the platform's answers
        batch_failure: Failure | None = None
        urls: dict[int, Any] = {}
        for c in items:
            if batch_failure is not None:
                fail(c, batch_failure)
                continue
            score = lms_score(session, c.user_id, c.resource)
            session.rollback()
            if score is None:
                report.outcomes.append(Outcome(c.grade_id, c.user_id, c.lineitem_id, "nothing"))
                continue
            if not c.force and score.same_as(*c.sent):
                report.outcomes.append(
                    Outcome(c.grade_id, c.user_id, c.lineitem_id, "unchanged", score)
                )
                continue
            sub = subs.get(c.user_id)
            if sub is None:
                fail(
                    c,
                    Failure(
                        None,
                        "This student has no account in this LMS (never launched the tool "
                        "from it, roster not synced): run `quizapp lti sync-roster`, then press "
                        "'Send again'.",
                    ),
                    score,
                )
                continue
            url = urls.get(c.lineitem_id)
            if url is None:
                try:
                    url = _lineitem_url(session, connector, c, now)
                except _Deferred:
                    url = _DEFERRED
                except Exception as exc:  # recorded and retried, never propagated
                    url = explain(exc, client_id=client_id, jwks_url=jwks_url)
                    _log_unexpected(exc, c)
                urls[c.lineitem_id] = url
            if url is _DEFERRED:
                report.outcomes.append(
                    Outcome(c.grade_id, c.user_id, c.lineitem_id, "deferred", score)
                )
                continue
            if isinstance(url, Failure):
                fail(c, url, score)
                batch_failure = url if url.whole_batch else None
                continue
            assert isinstance(url, str)  # neither deferred nor failed: the line item's URL
            grade = (
                Grade()
                .set_score_given(score.given)
                .set_score_maximum(score.maximum)
                .set_activity_progress(score.activity)
                .set_grading_progress(score.grading)
                .set_timestamp(_timestamp(now))
                .set_user_id(sub)
            )
            try:
                _service(connector, c, c.lineitems_url).put_grade(grade, LineItem({"id": url}))
            except Exception as exc:  # recorded and retried, never propagated
                failure = explain(exc, client_id=client_id, jwks_url=jwks_url)
                _log_unexpected(exc, c)
                if isinstance(exc, LtiServiceException) and exc.response.status_code == 404:
                    _forget_lineitem(session, c.lineitem_id, url)
                    urls[c.lineitem_id] = failure
                fail(c, failure, score)
                batch_failure = failure if failure.whole_batch else None
                continue
            report.outcomes.append(Outcome(c.grade_id, c.user_id, c.lineitem_id, "sent", score))
    _record(session, report.outcomes, until, now, statuses)
    return report


def _log_unexpected(exc: Exception, c: _Claimed) -> None:
    """Log with a traceback what is not an answer of the platform (a bug, not the LMS)."""
    if not isinstance(exc, LtiException | requests.RequestException | TokenError):
        log.error("sending grade %s failed unexpectedly", c.grade_id, exc_info=exc)


def next_due(session: Session) -> datetime | None:
    """When the earliest pending grade is due (None when nothing is pending)."""
    when = session.scalar(select(func.min(LtiGrade.next_try_at)).where(LtiGrade.pending.is_(True)))
    session.rollback()
    return when


# --------------------------------------------------------------------------------------------
# The instructor's view


@dataclass
class FailedGrade:
    """A grade whose last send failed: who, where, how often, what the LMS said, next try."""

    grade_id: int
    username: str
    display_name: str
    resource: str
    course: str
    tries: int
    status: int | None
    error: str
    failed_at: datetime | None
    next_try_at: datetime | None
    pending: bool


def failed_grades(session: Session, limit: int = 200) -> list[FailedGrade]:
    """The grades whose last send failed, newest failure first (at most ``limit``)."""
    rows = session.execute(
        select(
            LtiGrade.id,
            User.username,
            User.display_name,
            LtiLineItem.resource_id,
            LtiContext.title,
            LtiContext.context_id,
            LtiGrade.tries,
            LtiGrade.last_status,
            LtiGrade.last_error,
            LtiGrade.last_error_at,
            LtiGrade.next_try_at,
            LtiGrade.pending,
        )
        .join(User, User.id == LtiGrade.user_id)
        .join(LtiLineItem, LtiLineItem.id == LtiGrade.lineitem_id)
        .join(LtiContext, LtiContext.id == LtiLineItem.context_id)
        .where(LtiGrade.last_error.is_not(None))
        .order_by(LtiGrade.last_error_at.desc(), LtiGrade.id)
        .limit(limit)
    ).all()
    return [
        FailedGrade(
            grade_id=r[0],
            username=r[1],
            display_name=r[2] or "",
            resource=r[3],
            course=r[4] or r[5],
            tries=r[6],
            status=r[7],
            error=r[8] or "",
            failed_at=r[9],
            next_try_at=r[10] if r[11] else None,
            pending=bool(r[11]),
        )
        for r in rows
    ]


def retry_now(session: Session, grade_ids: Sequence[int] | None = None) -> list[int]:
    """Make failed grades (all, or ``grade_ids``) due now and return their ids; commits."""
    services.begin_write(session)
    try:
        stmt = select(LtiGrade.id).where(LtiGrade.last_error.is_not(None))
        if grade_ids is not None:
            stmt = stmt.where(LtiGrade.id.in_(list(grade_ids)))
        ids = list(session.scalars(stmt))
        if ids:
            session.execute(
                update(LtiGrade)
                .where(LtiGrade.id.in_(ids))
                .values(pending=True, next_try_at=utcnow())
                .execution_options(synchronize_session=False)
            )
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return ids


def queue_counts(session: Session) -> dict[str, int]:
    """``{"pending": n, "failed": n, "sent": n}``: grades waiting, whose last try failed, and
    accepted by the LMS at least once."""
    pending = session.scalar(select(func.count()).where(LtiGrade.pending.is_(True))) or 0
    failed = session.scalar(select(func.count()).where(LtiGrade.last_error.is_not(None))) or 0
    sent = session.scalar(select(func.count()).where(LtiGrade.sent_at.is_not(None))) or 0
    return {"pending": int(pending), "failed": int(failed), "sent": int(sent)}


__all__ = [
    "AGS_SCOPES",
    "BACKOFF_FIRST",
    "BACKOFF_MAX",
    "DeliveryReport",
    "FailedGrade",
    "Outcome",
    "backoff",
    "deliver_due",
    "failed_grades",
    "next_due",
    "queue_counts",
    "queue_for_submit",
    "queue_resource",
    "queue_user",
    "retry_now",
]
