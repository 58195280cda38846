"""A platform's failure in words: what the LMS (or the network on the way) answered, and what to
do about it, for the grade queue's list of failures and the roster sync's messages.

- :func:`lms_message`: the platform's own words from an error answer;
- :func:`host_of`: the host a URL names, for "the LMS at <host> ...";
- :func:`explain`: an exception from a send, as a :class:`Failure` (the HTTP status when there
  was one, and a sentence saying what went wrong and what to do);
- :func:`cause_in_words`: why a request got no answer, in a few words.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import requests
from pylti1p3.exception import LtiException, LtiServiceException

from quizapp.lti.http import TokenError


def lms_message(resp: requests.Response) -> str:
    """The platform's own words from an error answer: OAuth2's ``error_description`` /
    ``error``, Canvas's ``errors[].message``, Moodle's ``message``, else the text (cut)."""
    try:
        body = resp.json()
    except ValueError:
        body = None
    parts: list[str] = []
    if isinstance(body, dict):
        for key in ("error_description", "error", "message", "reason"):
            if isinstance(body.get(key), str):
                parts.append(body[key])
        errors = body.get("errors")
        if isinstance(errors, dict):
            errors = [errors]
        if isinstance(errors, list):
            for err in errors:
                if isinstance(err, dict) and isinstance(err.get("message"), str):
                    parts.append(err["message"])
                elif isinstance(err, str):
                    parts.append(err)
    text = "; ".join(dict.fromkeys(p.strip() for p in parts if p.strip()))
    if not text:
        text = " ".join((resp.text or "").split())[:300] or (resp.reason or "no message")
    return text


def host_of(url: str | None) -> str:
    """The host (``netloc``) of ``url`` for a message, or the text itself when it has none."""
    return urlsplit(url or "").netloc or str(url)


@dataclass(frozen=True)
class Failure:
    """Why a send failed: ``status`` (HTTP status, None when the LMS was not reached), the
    explanation shown to the instructor, and whether the whole registration's batch failed
    (token endpoint, LMS unreachable) rather than this one grade."""

    status: int | None
    message: str
    whole_batch: bool = False


def explain(exc: BaseException, *, client_id: str = "", jwks_url: str = "") -> Failure:
    """The LMS's answer to a failed token request or AGS call, in words, with what to do.

    ``client_id`` and ``jwks_url`` (the tool's public key URL) are named in the advice when the
    LMS refused the tool's credentials.  Covers: the LMS unreachable or timing out, the token
    endpoint refusing (credentials, scopes), a server error, a missing grade column (404), a
    course refusing grades (403, e.g. Canvas's unpublished course), a student the course does
    not accept (400/422), and pylti1p3's own refusals (a scope the LMS did not grant).
    """
    if isinstance(exc, TokenError):
        if exc.response is None:
            return Failure(
                None,
                f"The LMS's token endpoint ({exc.url}) could not be reached ({cause_in_words(exc.cause)}). "
                "The grades stay queued and are sent when it answers again; if this lasts, "
                "check the token URL shown by `quizapp lti list`.",
                whole_batch=True,
            )
        status = exc.response.status_code
        said = lms_message(exc.response)
        if status >= 500:
            advice = "The LMS had an error; the grades stay queued and are retried."
        elif "scope" in said.lower():
            advice = (
                "The LMS did not grant the tool the grade scopes: enable the LTI Advantage "
                "services (Canvas: the developer key's scopes 'Can create and view assignment "
                "data in the gradebook' and 'Can create and update submission results'; "
                "Moodle: 'IMS LTI Assignment and Grade Services' set to use this service for "
                "grade sync and column management), then press 'Send again'."
            )
        else:
            advice = (
                f"The LMS refused the tool's credentials: check that the LMS has client id "
                f"{client_id or '(see quizapp lti list)'} and the tool's public key URL "
                f"{jwks_url or '/lti/jwks'} (Canvas: 'Public JWK URL'; Moodle: 'Public keyset "
                "URL'), and that the developer key / tool is on, then press 'Send again'."
            )
        return Failure(
            status,
            f"The LMS's token endpoint answered HTTP {status}: {said}. {advice}",
            whole_batch=True,
        )
    if isinstance(exc, requests.RequestException):
        url = getattr(exc.request, "url", None) if exc.request is not None else None
        return Failure(
            None,
            f"The LMS ({host_of(url)}) could not be reached ({cause_in_words(exc)}). The grades stay "
            "queued and are sent when it answers again.",
            whole_batch=True,
        )
    if isinstance(exc, LtiServiceException):
        resp = exc.response
        status = resp.status_code
        said = lms_message(resp)
        if status >= 500:
            advice = "The LMS had an error; the grade stays queued and is retried."
        elif status == 404:
            advice = (
                "The LMS has no such grade column any more (deleted?); the tool looks it up "
                "again, or creates it, at the next try."
            )
        elif status == 401:
            advice = "The LMS refused the access token; a new one is requested at the next try."
        elif status == 403:
            advice = (
                "The LMS refuses grades for this course or column: publish the course (Canvas "
                "accepts grades only in a published course) and check that the assignment still "
                "exists and takes grades from the tool, then press 'Send again'."
            )
        elif status in (400, 409, 422):
            advice = (
                "The LMS does not take this grade: check that the student is still enrolled "
                "as a student in the LMS course, then press 'Send again'."
            )
        else:
            advice = "Press 'Send again' once the cause is fixed in the LMS."
        return Failure(status, f"The LMS answered HTTP {status}: {said}. {advice}")
    if isinstance(exc, LtiException):
        text = str(exc)
        if "scope" in text.lower():
            return Failure(
                None,
                f"{text}: the LMS did not grant the tool the grade scopes for this course. "
                "Enable them for the tool in the LMS (see docs/lms.md), launch the link once "
                "more, then press 'Send again'.",
            )
        return Failure(None, f"{text}.")
    return Failure(None, f"{type(exc).__name__}: {exc}")


def cause_in_words(exc: BaseException | None) -> str:
    """Why a request got no answer, in a few words (timeout, refused or unknown host)."""
    if isinstance(exc, requests.ConnectTimeout | requests.ReadTimeout):
        return "no answer in time"
    if isinstance(exc, requests.ConnectionError):
        return "connection refused or the host is unknown"
    return type(exc).__name__ if exc is not None else "no answer"


__all__ = [
    "Failure",
    "explain",
]
