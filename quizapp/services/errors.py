"""The errors services raise; each carries the HTTP status the web layer answers with."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Errors


class ServiceError(Exception):
    """A request the service refuses.  ``status`` is the matching HTTP status code."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(ServiceError):
    """Malformed input (wrong type, too large, invalid username/password)."""

    status = 400


class NotFound(ServiceError):
    """Unknown or archived exercise/quiz."""

    status = 404


class Forbidden(ServiceError):
    """The quiz is not open (before ``opens`` or after ``closes``)."""

    status = 403


class Unavailable(ServiceError):
    """The exercise cannot be shown or graded (e.g. its stored YAML no longer generates).

    ``message`` may hold details for the instructor (the seed, the YAML file and line): the web
    layer never shows it to a student, who gets :data:`STUDENT_MESSAGE` and an incident id
    while the details go to the log and the instructor's exercise page
    (``quizapp.services.incidents``).  ``exercise_id``: the exercise, when the raiser knows it.
    """

    status = 503

    def __init__(self, message: str, *, exercise_id: str | None = None) -> None:
        super().__init__(message)
        self.exercise_id = exercise_id


#: What a student is told when an exercise cannot be shown (with the incident id).
STUDENT_MESSAGE = (
    "This exercise cannot be shown right now. Your instructor has been told; quote incident "
    "{incident} if you write to them, and try another exercise meanwhile."
)


class Conflict(ServiceError):
    """The state forbids it: no attempts left, variant finished, username taken, no practice."""

    status = 409
