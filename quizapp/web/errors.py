"""Error pages: HTML for the pages, ``{"error": message}`` JSON under ``/api/``.

Every HTTP error (400, 401, 403, 404, 405, 409, 413, 429, ...) and every ``ServiceError`` is
answered with a clear message.  An unexpected exception is logged and answered 500 without
details (no stack trace, no data).
"""

from __future__ import annotations

import logging

from flask import Flask, Response, g, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import HTTPException

from quizapp.services import ServiceError, Unavailable, is_conflict
from quizapp.services.errors import STUDENT_MESSAGE

log = logging.getLogger(__name__)

MESSAGES = {
    400: "The request could not be understood.",
    401: "Sign in first.",
    403: "You may not see this page.",
    404: "There is no such page.",
    405: "This method is not allowed here.",
    409: "This cannot be done in the current state.",
    413: "The request is too large.",
    429: "Too many requests; wait a moment and try again.",
    500: "Something went wrong on our side; it has been logged.",
    503: "This is not available right now; try again later.",
}


def not_utf8_message(field: str | None, *, answer: bool) -> str:
    """The 400 message for a form whose ``field`` (its name as posted) is not valid UTF-8
    (``student.check_request_encoding``); ``answer`` for the exercise form (no attempt used).  An
    answer box is named by its place (``display.answer_field_words``), any other field by its
    name."""
    from quizapp.web.display import answer_field_words

    box = answer_field_words(field) if field is not None else None
    if field is None:
        where = ""
    elif box is not None:
        where = f" in {box}"
    else:
        shown = "".join(ch if ch.isprintable() else "\ufffd" for ch in field)[:40]
        where = f" in the form's field \u201c{shown}\u201d"
    if answer and box is None:  # a field of the page itself (the token, the variant): not typed
        return (
            f"The form is not valid text (invalid UTF-8){where}; nothing was graded and it "
            "used no attempt. Reload the page and answer again."
        )
    if answer:
        return (
            f"The answer is not valid text (invalid UTF-8){where}; nothing was graded and it "
            "used no attempt. Type it again, or paste it from a plain-text source."
        )
    return (
        f"The form is not valid text (invalid UTF-8){where}; nothing was stored. Reload the "
        "page and type it again."
    )


def not_utf8_query_message(name: str) -> str:
    """The 400 message for an address whose query parameter ``name`` (as written, invalid bytes
    replaced) is not valid UTF-8 (``student.check_request_encoding``): nothing was read or done.
    """
    shown = "".join(ch if ch.isprintable() else "\ufffd" for ch in name)[:40]
    return (
        f"The address is not valid text (invalid UTF-8) in its query parameter \u201c{shown}"
        "\u201d; nothing was done. Check the link, or go back and follow it again."
    )


def wants_json() -> bool:
    """True for API paths (they always answer JSON)."""
    return request.path.startswith("/api/")


def error_response(status: int, message: str | None = None) -> tuple[Response | str, int]:
    """The error answer for ``status``: JSON under /api/, else the HTML error page."""
    message = message or MESSAGES.get(status, "Error.")
    if wants_json():
        return jsonify({"error": message}), status
    try:
        return render_template(
            "errors/error.html", status=status, message=message, typed=_typed_answer()
        ), status
    except Exception:  # no URL adapter (e.g. an untrusted Host header): plain text
        return Response(message, status=status, mimetype="text/plain"), status


#: The endpoints whose form posts a student's answer: an error page answering such a post (an
#: expired form token, too many requests, an exercise withdrawn while it was open) shows what
#: was typed, so that it is not lost.
ANSWER_ENDPOINTS = frozenset({"student.exercise"})


def _typed_answer() -> list[tuple[str, str]]:
    """What the student typed in the answer form this request posted, as (label, text) pairs for
    the error page (``display.typed_answer``); empty for any other request, or when the body
    cannot be read (too large, not a form)."""
    if request.method != "POST" or request.endpoint not in ANSWER_ENDPOINTS:
        return []
    from quizapp.web.display import typed_answer

    # A box that is not UTF-8 holds what Werkzeug made of its bytes, not what was typed
    # (``student.check_request_encoding``): the other boxes are shown, that one as empty.
    unreadable = g.get("form_bad_fields") or frozenset()
    try:
        return typed_answer(
            MultiDict((k, "" if k in unreadable else v) for k, v in request.form.items(multi=True))
        )
    except Exception:  # a body that does not parse (413, a bad encoding): nothing to show
        return []


def register(app: Flask) -> None:
    """Install the handlers on ``app``."""

    @app.errorhandler(CSRFError)
    def _csrf(err: CSRFError) -> tuple[Response | str, int]:
        field = g.get("form_bad_field")
        if field is not None:
            # Werkzeug drops a whole URL-encoded body holding a raw non-UTF-8 byte, token and
            # all: the cause is the encoding, not the token (``student.check_request_encoding``).
            return error_response(400, not_utf8_message(field, answer=True))
        return error_response(
            400,
            "The form's security token is missing or expired; reload the page and try again "
            f"({err.description})",
        )

    @app.errorhandler(ServiceError)
    def _service(err: ServiceError) -> tuple[Response | str, int]:
        if isinstance(err, Unavailable):
            return _unavailable(err)
        return error_response(err.status, err.message)

    @app.errorhandler(HTTPException)
    def _http(err: HTTPException) -> tuple[Response | str, int] | HTTPException:
        status = err.code or 500
        if status < 400:
            return err
        message = MESSAGES.get(status)
        if status == 413:
            limit = app.config.get("MAX_CONTENT_LENGTH")
            message = f"The request is too large (at most {limit} bytes)." if limit else message
        elif status == 429:
            message = f"Too many requests ({err.description}); {_retry_after_text()}"
        elif status in (400, 403, 409) and err.description and not _is_default(err):
            message = err.description
        resp, code = error_response(status, message)
        if status == 405 and hasattr(err, "valid_methods") and err.valid_methods:
            if isinstance(resp, Response):
                resp.headers["Allow"] = ", ".join(err.valid_methods)
        return resp, code

    @app.errorhandler(Exception)
    def _unexpected(err: Exception) -> tuple[Response | str, int] | HTTPException:
        if isinstance(err, HTTPException):
            return _http(err)
        if is_conflict(err):  # aborted by the database even after the services' retries
            log.warning("transaction conflict on %s %s: %s", request.method, request.path, err)
            return error_response(
                503,
                "The database was busy with other requests and nothing was stored; "
                "please try again in a moment.",
            )
        log.exception("unexpected error on %s %s", request.method, request.path)
        return error_response(500)


def _unavailable(err: Unavailable) -> tuple[Response | str, int]:
    """A 503 for an exercise that cannot be shown: the student gets a plain message and an
    incident id; the details (``err.message``: seed, file and line, the error) are logged and
    stored for the instructor's exercise page.  An instructor sees them on the page too."""
    from flask_login import current_user

    from quizapp.models import current_session
    from quizapp.services.incidents import record_incident

    args = request.view_args or {}
    exercise_id = err.exercise_id
    if exercise_id is None and "quiz_id" in args and "name" in args:
        exercise_id = f"{args['quiz_id']}/{args['name']}"
    # The API's user (a bearer token) or the signed-in one: the incident names the student.
    user = g.get("api_user") or (
        current_user if current_user and current_user.is_authenticated else None
    )
    user_id = int(user.id) if user is not None else None
    cause = err.__cause__
    detail = err.message + (f" [{type(cause).__name__}: {cause}]" if cause is not None else "")
    incident = record_incident(
        current_session(),
        detail=detail,
        exercise_id=exercise_id,
        user_id=user_id,
        path=f"{request.method} {request.path}",
    )
    message = STUDENT_MESSAGE.format(incident=incident)
    if user_id is not None and getattr(user, "is_instructor", False):
        message += f" Details (shown to instructors only): {detail}"
    if wants_json():
        return jsonify({"error": message, "incident": incident}), 503
    return error_response(503, message)


def _retry_after_text() -> str:
    """'try again in N minutes' (or seconds) from the rate limit that was hit."""
    import math
    import time

    from quizapp.web.extensions import limiter

    try:
        current = limiter.current_limit
        wait = int(math.ceil(current.reset_at - time.time())) if current is not None else 0
    except Exception:  # no limit context (e.g. a 429 raised by hand)
        wait = 0
    if wait <= 0:
        return "wait a moment and try again."
    if wait < 120:
        return f"try again in {wait} seconds."
    # Nearest whole minute: the header Retry-After carries the exact seconds, and rounding up
    # turned a 15-minute window (900 s plus a fraction) into "16 minutes".
    return f"try again in {round(wait / 60)} minutes."


def _is_default(err: HTTPException) -> bool:
    return err.description == type(err).description
