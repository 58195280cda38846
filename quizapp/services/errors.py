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
    """The exercise's stored YAML no longer generates (e.g. its kind was removed from the code)."""

    status = 503


class Conflict(ServiceError):
    """The state forbids it: no attempts left, variant finished, username taken, no practice."""

    status = 409
