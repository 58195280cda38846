"""Incidents: a student's request that failed because an exercise could not be shown or graded
(``Unavailable``, a 503).  The student is told an incident id only; the details (the error, with
the seed and the YAML file and line) are logged and stored for the instructor's exercise page."""

from __future__ import annotations

import logging
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from quizapp.models import Exercise
from quizapp.models_instructor import Incident
from quizapp.services.text import db_safe
from quizapp.services.transactions import begin_write

log = logging.getLogger(__name__)

#: Incidents listed per exercise on the instructor's page.
RECENT_INCIDENTS = 20


def new_incident_id() -> str:
    """A random incident id a student can quote (12 hex digits, e.g. ``3f9c0a1b7e42``)."""
    return secrets.token_hex(6)


def record_incident(
    session: Session,
    *,
    detail: str,
    exercise_id: str | None = None,
    user_id: int | None = None,
    path: str = "",
) -> str:
    """Log and store an incident; return its id.  Runs in its own write transaction, after
    rolling back whatever the failed request left open; if storing it fails, the incident is
    still logged (with its id) and the id returned: the student's answer is the same."""
    incident_id = new_incident_id()
    log.error(
        "incident %s: %s (exercise %s, user %s, %s)",
        incident_id,
        detail,
        exercise_id,
        user_id,
        path,
    )
    try:
        session.rollback()
        begin_write(session)
        if exercise_id is not None and session.get(Exercise, exercise_id) is None:
            exercise_id = None
        session.add(
            Incident(
                id=incident_id,
                exercise_id=exercise_id,
                user_id=user_id,
                path=_clean(path)[:500],
                detail=_clean(detail)[:20_000],
            )
        )
        session.commit()
    except Exception:  # the log line above is the record then
        session.rollback()
        log.exception("incident %s could not be stored", incident_id)
    return incident_id


def recent_incidents(
    session: Session, exercise_id: str, limit: int = RECENT_INCIDENTS
) -> list[Incident]:
    """The latest ``limit`` incidents of ``exercise_id``, newest first."""
    return list(
        session.scalars(
            select(Incident)
            .where(Incident.exercise_id == exercise_id)
            .order_by(Incident.created_at.desc())
            .limit(limit)
        )
    )


def _clean(text: str) -> str:
    """``text`` storable on every database (NUL and lone surrogates replaced)."""
    text = str(text).replace("\x00", "\ufffd")
    return text if db_safe(text) else text.encode("utf-8", "replace").decode("utf-8")


__all__ = ["RECENT_INCIDENTS", "new_incident_id", "recent_incidents", "record_incident"]
