"""The JSON API, ``/api/v1``: same grading and storage as the pages.

Authentication: ``Authorization: Bearer TOKEN`` (from ``POST /api/v1/token``), or the browser
session.  Token-authenticated calls need no CSRF token (a cross-site page cannot set the header);
session-authenticated writes must send the CSRF token (``X-CSRFToken`` header), as forms do.
``POST .../preview`` answers how an answer would be read (the answer preview), storing nothing.
Errors are ``{"error": message}`` with the status code: 400 malformed request, 401 not
authenticated, 403 not allowed (quiz not open), 404 unknown exercise, 409 state conflict (no
attempts left, variant finished), 413 body too large, 429 rate limited.

The expected answer and the worked solution appear only once the variant is finished.

``GET /api/v1/openapi.json`` serves the OpenAPI 3.1 description of every endpoint
(``quizapp/web/openapi.yaml``, hand-kept; ``tests/test_openapi.py`` checks it against the
registered routes and real responses).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import yaml
from flask import Blueprint, Response, current_app, g, jsonify, request
from flask_login import current_user
from flask_wtf.csrf import CSRFError, generate_csrf, validate_csrf
from werkzeug.exceptions import BadRequest as HTTPBadRequest
from werkzeug.exceptions import HTTPException
from wtforms import ValidationError

from quizapp import coursetime, services
from quizapp.models import Exercise, User, Variant, current_session
from quizapp.services.points import part_points, shown_score
from quizapp.web import display
from quizapp.web.auth import sign_in_limits
from quizapp.web.extensions import limit, limiter

bp = Blueprint("api", __name__, url_prefix="/api/v1")

#: The hand-kept OpenAPI 3.1 document of this blueprint's endpoints.
OPENAPI_FILE = Path(__file__).with_name("openapi.yaml")


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (:data:`OPENAPI_FILE`, read once) as a dict."""
    with OPENAPI_FILE.open(encoding="utf-8") as f:
        document: dict[str, Any] = yaml.safe_load(f)
    return document


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@bp.errorhandler(ApiError)
def _api_error(err: ApiError) -> tuple[Response, int]:
    resp = jsonify({"error": err.message})
    if err.status == 401:
        resp.headers["WWW-Authenticate"] = 'Bearer realm="quizapp"'
    return resp, err.status


def _json_body() -> dict[str, Any]:
    """The request's JSON object; ApiError 400 for a wrong content type or malformed JSON."""
    if not request.is_json:
        raise ApiError(400, "Send a JSON body with 'Content-Type: application/json'.")
    try:
        body = request.get_json(force=False, silent=False)
    except HTTPBadRequest:
        raise ApiError(400, _json_problem(request.get_data(cache=True))) from None
    except RecursionError:
        raise ApiError(400, "The JSON body is nested too deeply.") from None
    if not isinstance(body, dict):
        raise ApiError(400, "The JSON body must be an object.")
    return body


def _json_problem(raw: bytes) -> str:
    """What is wrong with a JSON body that does not parse: its encoding (JSON is UTF-8, RFC
    8259 section 8.1) with the byte, else the parser's message with its line and column."""
    import json

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"The body is not valid JSON: it is not UTF-8 text (byte {err.start + 1})."
    try:
        json.loads(text)
    except json.JSONDecodeError as err:
        return f"The body is not valid JSON ({err.msg}, line {err.lineno}, column {err.colno})."
    except (ValueError, RecursionError):
        pass
    return "The body is not valid JSON."


def _bearer_token() -> str | None:
    header = request.headers.get("Authorization", "")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "Use 'Authorization: Bearer TOKEN' (get a token from /api/v1/token).")
    return token.strip()


def authenticated(view: Callable[..., Any]) -> Callable[..., Any]:
    """Require a bearer token or a signed-in session; CSRF for session-authenticated writes."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _bearer_token()
        if token is not None:
            user = services.user_for_token(current_session(), token)
            if user is None:
                raise ApiError(401, "The token is invalid or revoked.")
            g.api_user = user
            g.api_token = token
        elif current_user.is_authenticated:
            if request.method not in ("GET", "HEAD", "OPTIONS"):
                try:
                    validate_csrf(request.headers.get("X-CSRFToken") or "")
                except (ValidationError, CSRFError) as err:
                    raise ApiError(400, f"CSRF token missing or invalid: {err}") from None
            g.api_user = current_user._get_current_object()
            g.api_token = None
        else:
            raise ApiError(401, "Authenticate with 'Authorization: Bearer TOKEN'.")
        return view(*args, **kwargs)

    return wrapper


def _user() -> User:
    return g.api_user


def _exercise(quiz_id: str, name: str) -> Exercise:
    try:
        exercise = services.get_exercise(current_session(), f"{quiz_id}/{name}")
        services.check_quiz_visible(exercise.quiz, _user())
    except services.ServiceError as err:
        raise ApiError(err.status, err.message) from None
    return exercise


def _course_zone() -> ZoneInfo:
    """The course time zone (``QUIZAPP_TIMEZONE``): the API's times carry its offset."""
    return coursetime.parse_zone(current_app.config["QUIZAPP_TIMEZONE"])


@bp.route("/openapi.json", methods=["GET"])
def openapi() -> Response:
    """The OpenAPI 3.1 description of this API (no authentication needed)."""
    return jsonify(openapi_document())


@bp.route("/token", methods=["POST"])
@sign_in_limits()  # shared with POST /login
def token() -> tuple[Response, int]:
    """``{"username", "password"[, "name"]}`` -> 201 ``{"token"}``; 401 on wrong credentials."""
    body = _json_body()
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not isinstance(password, str):
        raise ApiError(400, "Send {'username': TEXT, 'password': TEXT}.")
    name = body.get("name", "api")
    if not isinstance(name, str):
        raise ApiError(400, "'name' must be text.")
    user = services.authenticate(current_session(), username, password)
    if user is None:
        raise ApiError(401, "Wrong username or password.")
    return jsonify({"token": services.create_api_token(current_session(), user, name)}), 201


@bp.route("/token", methods=["DELETE"])
@authenticated
def revoke_token() -> tuple[Response, int]:
    """Revoke the bearer token of this request -> 200 ``{"revoked": true}``."""
    token = g.get("api_token")
    if not token:
        raise ApiError(400, "Only a bearer token can revoke itself.")
    services.revoke_api_token(current_session(), token)
    return jsonify({"revoked": True}), 200


@bp.route("/csrf-token", methods=["GET"])
@authenticated
def csrf_token() -> Response:
    """The CSRF token for session-authenticated writes (send it as ``X-CSRFToken``)."""
    return jsonify({"csrf_token": generate_csrf()})


@bp.route("/quizzes", methods=["GET"])
@authenticated
def quizzes() -> Response:
    """Visible quizzes with their exercises (id, title, points, attempts, my status)."""
    summaries = services.quiz_summaries(current_session(), _user())
    return jsonify({"quizzes": [q.to_dict() for q in summaries]})


def _form_json(form: Any, page: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": form.type}
    if form.type == "parts":
        return out
    if form.show_shape and form.shape is not None:
        out["shape"] = list(form.shape)
    if form.type == "partial_matrix" and form.given is not None:
        out["given"] = form.given
    if form.type == "choice":
        out["choices"] = list(form.choices or [])
        out["choices_html"] = list(page.get("choices_html") or [])
        out["choice_base"] = display.CHOICE_BASE
    for key in ("row_labels", "col_labels", "unknowns"):
        if getattr(form, key, None):
            out[key] = list(getattr(form, key))
    if form.type == "point_on_line":
        out["count"] = form.count
    return out


def _answer_format(stored: str) -> str:
    """The answer format as the API names it: ``text``, ``cells`` or ``parts``."""
    if stored in ("text", "json"):
        return "text"
    return "parts" if stored == "parts" else "cells"


def _parts_json(
    bank_variant: Any, page: dict[str, Any], finished: bool, exercise_points: float
) -> list[dict[str, Any]]:
    """Each part of a multi-part variant: name, points (its share of the exercise's points now,
    ``points.part_points``, as the page shows them), prompt, answer form, hints, the earlier
    parts it uses (follow-through), and once finished its correct answer and worked steps."""
    pages = {p["name"]: p for p in page.get("parts", [])}
    points_now = part_points(bank_variant.parts, exercise_points)
    out = []
    for part in bank_variant.parts:
        shown = pages.get(part.name, {})
        one: dict[str, Any] = {
            "name": part.name,
            "points": points_now[part.name],
            "prompt": part.prompt,
            "prompt_html": shown.get("prompt_html", ""),
            "answer_form": _form_json(part.answer_form, shown),
            "hints": list(part.hints),
            "uses": list(part.uses),
        }
        if finished:
            one["expected"] = shown.get("expected_text", "")
            one["solution"] = [
                {
                    "title": s.title,
                    "text": s.text,
                    "value": services.json_safe(s.value) if s.value is not None else None,
                }
                for s in part.solution
            ]
        out.append(one)
    return out


def _submission_json(sub: Any, exercise_points: float) -> dict[str, Any]:
    out = services.verdict_json(sub.verdict or {}, exercise_points)
    out.update(
        {
            "id": sub.id,
            "score": shown_score(sub.score),  # the column: the score that counts
            "answer": services.decode_raw_answer(sub.answer_format, sub.raw_answer),
            "answer_format": _answer_format(sub.answer_format),
            "used_attempt": sub.used_attempt,
            "points": sub.points,
            "late": sub.late,
            "credit": shown_score(sub.credit),
            "created_at": coursetime.iso(sub.created_at, _course_zone()),
        }
    )
    return out


def _variant_json(exercise: Exercise, variant: Variant) -> dict[str, Any]:
    """The stored variant as the API shows it (never drawn or rendered again)."""
    bank_variant = services.stored_variant(variant)
    page = variant.page
    state = services.variant_state(current_session(), variant)
    out: dict[str, Any] = {
        "exercise_id": exercise.id,
        "variant_id": variant.id,
        "title": bank_variant.title,
        "variant_number": variant.variant_number,
        "points": exercise.points,
        "prompt": bank_variant.prompt,
        "prompt_html": page["prompt_html"],
        "answer_form": _form_json(bank_variant.answer_form, page),
        "hints": list(bank_variant.hints or []),
        "attempts": state.attempts,
        "attempts_left": state.attempts_left,
        "solved": state.solved,
        "finished": state.finished,
        "practice_available": state.finished and exercise.practice,
    }
    if bank_variant.parts:
        out["parts"] = _parts_json(bank_variant, page, state.finished, exercise.points)
    if state.finished:
        out["expected"] = page["expected_text"]
        if bank_variant.parts:  # each part's, one per line (as quizapp grade --answer takes it)
            out["expected"] = "\n".join(
                f"{p['name']} = {p['expected_text']}" for p in page.get("parts", [])
            )
        out["solution"] = [
            {
                "title": s.title,
                "text": s.text,
                "value": services.json_safe(s.value) if s.value is not None else None,
            }
            for s in bank_variant.solution
        ]
    return out


@bp.route("/exercises/<quiz_id>/<name>/variant", methods=["GET"])
@authenticated
def variant(quiz_id: str, name: str) -> Response:
    """My current variant of the exercise (created on first request)."""
    exercise = _exercise(quiz_id, name)
    row = services.get_or_create_variant(
        current_session(), _user(), exercise, current_app.config["QUIZAPP_SEED_SECRET"]
    )
    return jsonify(_variant_json(exercise, row))


@bp.route("/exercises/<quiz_id>/<name>/variants", methods=["POST"])
@authenticated
def new_variant(quiz_id: str, name: str) -> tuple[Response, int]:
    """Open a new practice variant (409 unless the current one is finished and practice allowed)."""
    exercise = _exercise(quiz_id, name)
    try:
        row = services.new_practice_variant(
            current_session(), _user(), exercise, current_app.config["QUIZAPP_SEED_SECRET"]
        )
    except services.ServiceError as err:
        raise ApiError(err.status, err.message) from None
    return jsonify(_variant_json(exercise, row)), 201


@bp.route("/exercises/<quiz_id>/<name>/submissions", methods=["GET"])
@authenticated
def list_submissions(quiz_id: str, name: str) -> Response:
    """My submissions on my current variant, oldest first."""
    exercise = _exercise(quiz_id, name)
    row = services.get_or_create_variant(
        current_session(), _user(), exercise, current_app.config["QUIZAPP_SEED_SECRET"]
    )
    subs = services.variant_submissions(current_session(), row)
    return jsonify(
        {
            "variant_number": row.variant_number,
            "submissions": [_submission_json(s, exercise.points) for s in subs],
        }
    )


def _answer_body() -> tuple[str | list[list[Any]] | dict[str, Any], int | None]:
    """The answer of a submission's JSON body, ``{"answer": TEXT}``, ``{"cells": [[TEXT]]}``
    or, for a multi-part exercise, ``{"parts": {NAME: TEXT or [[TEXT]], ...}}`` (exactly one of
    them), and its optional ``"variant_id"``; ApiError 400 otherwise."""
    body = _json_body()
    keys = {"answer", "cells", "parts"} & set(body)
    if len(keys) != 1:
        raise ApiError(
            400,
            "Send exactly one of {'answer': TEXT}, {'cells': [[TEXT, ...], ...]} or, for an "
            "exercise with parts, {'parts': {NAME: TEXT or [[TEXT, ...], ...], ...}}.",
        )
    try:
        for_variant = services.answered_variant_id(body.get("variant_id"), "'variant_id'")
    except services.BadRequest as err:
        raise ApiError(400, err.message) from None
    extra = set(body) - {"answer", "cells", "parts", "variant_id"}
    if extra:
        raise ApiError(400, f"Unknown field(s): {', '.join(sorted(map(str, extra)))[:200]}.")
    answer: Any
    if "parts" in body:
        answer = body["parts"]
        if not isinstance(answer, dict):
            raise ApiError(400, "'parts' must map each part's name to its text or grid.")
        for part_name, value in answer.items():
            if not isinstance(value, str) and not (
                isinstance(value, list) and all(isinstance(r, list) for r in value)
            ):
                raise ApiError(
                    400,
                    f"Part {str(part_name)[:40]!r}: give its answer as text or as a list of "
                    "rows, each a list of cell texts.",
                )
    elif "answer" in body:
        answer = body["answer"]
        if not isinstance(answer, str):
            raise ApiError(400, "'answer' must be text (the answer as you would type it).")
    else:
        answer = body["cells"]
        if not isinstance(answer, list) or not all(isinstance(r, list) for r in answer):
            raise ApiError(400, "'cells' must be a list of rows, each a list of cell texts.")
    if _blank(answer):
        # As the exercise form says it: nothing to grade, nothing stored, no attempt used.
        raise ApiError(
            400,
            "The answer is empty: type an answer before submitting (it was not graded and "
            "used no attempt).",
        )
    return answer, for_variant


def _blank(answer: Any) -> bool:
    """True for a one-answer body with nothing typed: empty or blank text, or a grid whose
    cells are all blank.  A grid with some cells typed is not blank (the verdict names its
    empty cells); a multi-part body is left to the service."""
    if isinstance(answer, str):
        return not answer.strip()
    if isinstance(answer, dict):  # (blank parts: the service's own 400, "at least one part")
        return False
    cells = [c for row in answer for c in row]  # (no cell at all: "the grid is empty")
    return bool(cells) and all(isinstance(c, str) and not c.strip() for c in cells)


@bp.route("/exercises/<quiz_id>/<name>/submissions", methods=["POST"])
@limiter.limit(limit("QUIZAPP_LIMIT_SUBMIT"))
@authenticated
def submit(quiz_id: str, name: str) -> tuple[Response, int]:
    """``{"answer": TEXT}`` or ``{"cells": [[TEXT]]}`` (a multi-part exercise: ``{"parts":
    {NAME: TEXT or [[TEXT]], ...}}``, some parts or all), optionally with ``"variant_id"`` (the
    id the variant's GET gave: an answer to a variant that is no longer current is refused with
    409 and uses no attempt) -> 201 verdict (with ``parts`` for a multi-part exercise) +
    attempts left + points."""
    exercise = _exercise(quiz_id, name)
    answer, for_variant = _answer_body()
    try:
        result = services.submit(
            current_session(),
            _user(),
            exercise.id,
            answer,
            seed_secret=current_app.config["QUIZAPP_SEED_SECRET"],
            source="api",
            for_variant=for_variant,
        )
    except services.ServiceError as err:
        raise ApiError(err.status, err.message) from None
    return jsonify(result.to_dict()), 201


@bp.route("/exercises/<quiz_id>/<name>/preview", methods=["POST"])
@limiter.limit(limit("QUIZAPP_LIMIT_PREVIEW"))
@authenticated
def preview(quiz_id: str, name: str) -> tuple[Response, int]:
    """The answer preview: the body of a submission -> 200 ``{"status": "valid" | "invalid",
    "read_as", "read_as_html", "message", "cells", "invalid_cell"}``, how the answer would be
    read on my current variant.  Stores nothing and uses no attempt (docs/answer-syntax.md)."""
    exercise = _exercise(quiz_id, name)
    answer, for_variant = _answer_body()
    try:
        result = services.preview_answer(
            current_session(),
            _user(),
            exercise.id,
            answer,
            seed_secret=current_app.config["QUIZAPP_SEED_SECRET"],
            for_variant=for_variant,
        )
    except services.ServiceError as err:
        raise ApiError(err.status, err.message) from None
    out = result.preview.to_dict()
    out["read_as_html"] = str(
        display.preview_html(result.preview, result.bank_variant.answer_form, result.choices_html)
    )
    forms = {p.name: p.answer_form for p in result.bank_variant.parts}
    for part_name, one in (result.preview.parts or {}).items():
        out["parts"][part_name]["read_as_html"] = str(display.preview_html(one, forms[part_name]))
    return jsonify(services.json_safe(out)), 200


@bp.route("/progress", methods=["GET"])
@authenticated
def progress() -> Response:
    """My progress per exercise, grouped by quiz, with point totals."""
    summaries = services.quiz_summaries(current_session(), _user())
    exercises = [
        dict(e.to_dict(_course_zone()), quiz_id=q.quiz.id) for q in summaries for e in q.exercises
    ]
    earned, available = services.course_points(summaries)
    return jsonify({"points_earned": earned, "points_available": available, "exercises": exercises})


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


@bp.route("/<path:anything>", methods=list(_METHODS))
def not_found(anything: str) -> tuple[Response, int]:
    """404 for a path no endpoint has; 405 with ``Allow`` for an endpoint's path asked with a
    method it does not take (this catch-all would otherwise answer 404 for it)."""
    adapter = current_app.url_map.bind_to_environ(request.environ)
    allowed = []
    for method in _METHODS:
        try:
            endpoint, _ = adapter.match(method=method)
        except HTTPException:
            continue
        if endpoint != "api.not_found":
            allowed.append(method)
    if allowed:
        response = jsonify(
            {"error": f"This endpoint does not take {request.method}: use {', '.join(allowed)}."}
        )
        response.headers["Allow"] = ", ".join(allowed)
        return response, 405
    return jsonify({"error": "There is no such API endpoint."}), 404
