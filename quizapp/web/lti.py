"""The LMS connection's routes (LTI 1.3): ``/lti/...`` and the instructor's ``/instructor/lms``.

Thin: the logic is in ``quizapp.lti``; this module turns Flask requests into plain values,
applies the cookies and redirects it gets back, and renders.

- ``GET /lti/jwks``: the tool's public keys; ``GET /lti/config.json``: the tool configuration
  (Canvas's JSON format; the same URLs ``quizapp lti config`` prints).
- ``GET|POST /lti/login``: OIDC login initiation.  First answered with a page that checks
  whether this browser keeps cookies here (in the LMS's frame, third-party cookies are often
  blocked); if it does, on to the platform, else it says so and offers a new window.
- ``POST /lti/launch``: the platform's launch.  When the state cookie is missing (a cross-site
  POST does not carry a ``SameSite=Lax`` cookie), the page posts the launch once more to itself,
  now a same-site request; still missing means cookies are blocked here: the page says so and
  offers a new window that restarts the login.
- ``GET|POST /lti/deep-link``: the instructor picks quizzes or exercises for the LMS.
- ``GET /lti/quiz/<id>``: a linked quiz's exercises.

Framing: pages of a session that came from a launch may be framed by the LMS page that launched
it (CSP ``frame-ancestors`` with the launch's ``Origin``; otherwise the app forbids framing),
and over HTTPS that session's cookie is ``SameSite=None; Secure`` so the frame keeps it.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    abort,
    current_app,
    flash,
    has_request_context,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask import session as flask_session
from flask.sessions import SecureCookieSessionInterface
from flask_login import current_user, login_required, login_user
from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from quizapp import services, signals
from quizapp.config import ConfigError, flag
from quizapp.lti import grades, keys, registry, roster, toolconfig
from quizapp.lti.adapters import PlainRequest, SetCookie
from quizapp.lti.claims import DEEP_LINK_LAUNCH, NONCE_LIFETIME, RELAUNCH_FIELD, LaunchRefused
from quizapp.lti.deep_linking import deep_link_answer, deep_link_request
from quizapp.lti.http import TimeoutSession
from quizapp.lti.launch import validate_launch
from quizapp.lti.login import LOGIN_PARAMS, check_login, login_params_for_state, start_login
from quizapp.lti.models import LtiContext, LtiLineItem, LtiLink, LtiMember, LtiRegistration
from quizapp.lti.worker import DEFAULT_POLL, GradeWorker
from quizapp.models import Exercise, Quiz, User, current_session, db
from quizapp.web.extensions import csrf, login_manager
from quizapp.web.security import CONTENT_SECURITY_POLICY

log = logging.getLogger(__name__)

bp = Blueprint("lti", __name__, url_prefix="/lti")
admin = Blueprint("lti_admin", __name__, url_prefix="/instructor/lms")

#: The session key of a session that came from a launch (``frame``: the LMS origin allowed to
#: frame its pages; ``launch``: the launch id the deep-linking page reads back).
SESSION_KEY = "lti"
#: The login query parameter saying the cookie check passed (or a new window was opened).
CHECKED = "checked"


# --------------------------------------------------------------------------------------------
# Per-app state: keys, HTTP, the grade worker


class LtiState:
    """What the LMS connection keeps per app: the background grade worker (started on first
    need when ``QUIZAPP_LTI_WORKER`` is on, the default) and helpers for keys and sessions."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        worker = app.config.get("QUIZAPP_LTI_WORKER", os.environ.get("QUIZAPP_LTI_WORKER"))
        self.worker_enabled = flag("QUIZAPP_LTI_WORKER", _text(worker), True)
        poll = app.config.get("QUIZAPP_LTI_POLL", os.environ.get("QUIZAPP_LTI_POLL"))
        try:
            self.poll = float(poll) if poll not in (None, "") else DEFAULT_POLL
        except (TypeError, ValueError):
            self.poll = -1.0
        if not 0.05 <= self.poll <= 3600:
            raise ConfigError(
                "QUIZAPP_LTI_POLL must be the seconds between looks at the grade queue "
                f"(0.05 to 3600), got {poll!r}"
            )
        self._worker: GradeWorker | None = None
        self._lock = threading.Lock()
        self._jwks_url = ""

    def key(self, session: Session) -> keys.ToolKey:
        """The tool's key pair (created on first use)."""
        return keys.tool_key(session, self.app.config["SECRET_KEY"])

    def new_session(self) -> Session:
        """A database session of its own (the worker's; the signal receiver's)."""
        with self.app.app_context():
            engine = db.engine
        return Session(engine)

    def note_urls(self) -> None:
        """Remember the tool's JWKS URL as requests see it (named in failure advice)."""
        if not self._jwks_url and has_request_context():
            self._jwks_url = url_for("lti.jwks", _external=True)

    @property
    def worker(self) -> GradeWorker:
        with self._lock:
            if self._worker is None:
                self._worker = GradeWorker(
                    self.new_session, self.key, poll=self.poll, jwks_url=lambda: self._jwks_url
                )
            return self._worker

    def wake_worker(self) -> None:
        """Have the background worker look at the queue now, if workers are enabled."""
        if self.worker_enabled:
            self.worker.wake()

    def stop_worker(self) -> None:
        """Stop this app's worker thread (tests, shutdown)."""
        with self._lock:
            worker = self._worker
        if worker is not None:
            worker.stop()


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return "1" if value else "0"


def state() -> LtiState:
    """The LMS connection state of the current app."""
    return current_app.extensions["quizapp_lti"]


def _key() -> keys.ToolKey:
    return state().key(current_session())


def _http() -> TimeoutSession:
    return TimeoutSession()


# --------------------------------------------------------------------------------------------
# The grade queue's hook on submits


def _on_score_changed(
    sender: Any, *, user_id: int, quiz_id: str, exercise_id: str, **_: Any
) -> None:
    """Queue the LMS grades a graded submit may have changed; never raises (a grade that cannot
    be queued is logged, and ``quizapp lti send-grades`` sends it later).  Only sessions that
    came from a launch can have LMS grades, so other submits cost nothing here."""
    if not has_request_context() or SESSION_KEY not in flask_session:
        return
    lti = current_app.extensions.get("quizapp_lti")
    if lti is None:
        return
    try:
        with lti.new_session() as session:
            queued = grades.queue_for_submit(
                session, user_id=user_id, quiz_id=quiz_id, exercise_id=exercise_id
            )
        if queued:
            lti.wake_worker()
    except Exception:
        log.exception("could not queue the LMS grade of user %s on %s", user_id, exercise_id)


signals.score_changed.connect(_on_score_changed, weak=False)


# --------------------------------------------------------------------------------------------
# Cookies, framing


class LtiSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions; a session that came from a launch gets
    ``SameSite=None`` over HTTPS, so that the LMS's frame (a third-party context) keeps it."""

    def get_cookie_samesite(self, app: Flask) -> str | None:
        if (
            has_request_context()
            and SESSION_KEY in flask_session
            and app.config.get("SESSION_COOKIE_SECURE")
        ):
            return "None"
        return super().get_cookie_samesite(app)


def _origin(url: str | None) -> str | None:
    parts = urlsplit(url or "")
    if parts.scheme in ("https", "http") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return None


def _csp(frame_ancestors: str, form_action: str = "'self'") -> str:
    return CONTENT_SECURITY_POLICY.replace(
        "frame-ancestors 'none'", f"frame-ancestors {frame_ancestors}"
    ).replace("form-action 'self'", f"form-action {form_action}")


def _frame_headers(response: Response) -> Response:
    """Let the LMS frame the pages of launch sessions, and the login and launch answers (the
    pages in the LMS's frame before a session exists: the cookie check, refusals)."""
    if request.endpoint in ("lti.login", "lti.launch"):
        frame = "*"
    else:
        info = flask_session.get(SESSION_KEY)
        origins = info.get("frame") if isinstance(info, dict) else None
        if not origins:
            return response
        frame = " ".join(["'self'", *origins])
    current = response.headers.get("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers["Content-Security-Policy"] = current.replace(
        "frame-ancestors 'none'", f"frame-ancestors {frame}"
    )
    response.headers.pop("X-Frame-Options", None)
    return response


def _signer() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt="quizapp-lti-frame")


def _plain_request() -> PlainRequest:
    params = request.args if request.method == "GET" else request.form
    return PlainRequest({k: v for k, v in params.items()}, dict(request.cookies), request.is_secure)


def _set_cookies(response: Response, cookies: list[SetCookie]) -> Response:
    for c in cookies:
        response.set_cookie(
            c.name,
            c.value,
            max_age=c.max_age,
            secure=c.secure,
            httponly=True,
            path="/",
            samesite=c.samesite,
        )
    return response


def _refused(err: LaunchRefused) -> tuple[str, int]:
    return render_template("lti/refused.html", message=err.message, status=err.status), err.status


# --------------------------------------------------------------------------------------------
# Keys and configuration


@bp.route("/jwks")
def jwks() -> Response:
    """The tool's public keys (JWK set, RFC 7517)."""
    state().note_urls()
    body = keys.public_jwks(current_session(), current_app.config["SECRET_KEY"])
    resp = jsonify(body)
    resp.headers["Cache-Control"] = "public, max-age=300"
    return resp


def tool_urls() -> dict[str, str]:
    """The tool's URLs as this request reaches the app (see ``quizapp.lti.toolconfig``)."""
    return toolconfig.tool_urls(url_for("student.home", _external=True))


@bp.route("/config.json")
def config() -> Response:
    """The tool configuration for Canvas (and any LMS that reads the same fields)."""
    return jsonify(toolconfig.canvas_config(tool_urls()))


# --------------------------------------------------------------------------------------------
# Login and launch


@bp.route("/login", methods=["GET", "POST"])
def login() -> Response | tuple[str, int] | str:
    """OIDC login initiation: the cookie check first, then the redirect to the platform."""
    state().note_urls()
    req = _plain_request()
    params = {k: req.get_param(k) for k in LOGIN_PARAMS if req.get_param(k)}
    try:
        check_login(current_session(), params)
        if not req.get_param(CHECKED):
            values: dict[str, Any] = {**params, CHECKED: "1"}
            go = url_for("lti.login", **values)
            return render_template("lti/cookie_check.html", continue_url=go)
        start = start_login(current_session(), req, url_for("lti.launch", _external=True), _key)
    except LaunchRefused as err:
        return _refused(err)
    except keys.KeyUnavailable as err:
        return _refused(LaunchRefused(str(err), 500))
    return _set_cookies(redirect(start.url), start.cookies)


def _new_window_url(state_value: str) -> str | None:
    params = login_params_for_state(current_session(), state_value)
    if not params:
        return None
    values: dict[str, Any] = {**params, CHECKED: "1"}
    return url_for("lti.login", **values)


def _frame_origins(req: PlainRequest, registration_id: int) -> list[str]:
    """The origins allowed to frame this launch's pages: the LMS page that posted the launch
    (its ``Origin``, carried signed through the tool's own re-post), else the registration's
    issuer and authorization URL origins.  The tool's own origin needs no entry."""
    if req.get_param(RELAUNCH_FIELD):
        try:
            posted = _signer().loads(req.get_param("quizapp_frame") or "") or None
        except BadSignature:
            posted = None
    else:
        posted = _origin(request.headers.get("Origin"))
    own = _origin(request.host_url)
    if posted:
        return [] if posted == own else [posted]
    reg = db.session.get(LtiRegistration, registration_id)
    found = [_origin(reg.issuer), _origin(reg.auth_login_url)] if reg is not None else []
    return sorted({o for o in found if o and o != own})


@bp.route("/launch", methods=["POST"])
def launch() -> Response | tuple[str, int] | str:
    """The platform's launch: checked, the user signed in, sent to what the link opens."""
    state().note_urls()
    req = _plain_request()
    state_value = req.get_param("state") or ""
    cookie_missing = state_value and request.cookies.get(f"lti1p3-{state_value}") is None
    if cookie_missing and req.get_param("id_token") and not req.get_param("error"):
        if login_params_for_state(current_session(), state_value) is None:
            # Not a sign-in this tool started and has not finished: replayed, forged or too old
            # (a blocked cookie is told apart: its sign-in is still pending here).
            return _refused(
                LaunchRefused(
                    "This launch belongs to no sign-in in progress here: it was already used, "
                    f"is older than {NONCE_LIFETIME // 60} minutes, or was not started by "
                    "this tool. Open the link from the LMS again.",
                    401,
                )
            )
        if not req.get_param(RELAUNCH_FIELD):
            frame = _origin(request.headers.get("Origin"))
            return render_template(
                "lti/relaunch.html",
                id_token=req.get_param("id_token") or "",
                state=state_value,
                frame=_signer().dumps(frame or ""),
            )
        return render_template(
            "lti/cookies_blocked.html", new_window=_new_window_url(state_value)
        ), 401
    try:
        result = validate_launch(current_session(), req, _key, _http())
    except LaunchRefused as err:
        return _refused(err)
    except keys.KeyUnavailable as err:
        return _refused(LaunchRefused(str(err), 500))
    frames = _frame_origins(req, result.registration_id)
    user = db.session.get(User, result.user_id)
    if user is None or not login_user(user):
        return _refused(
            LaunchRefused("Your quizapp account is deactivated; ask the course's instructor.", 403)
        )
    flask_session[SESSION_KEY] = {"frame": frames, "launch": result.launch_id}
    state().wake_worker()  # the launch may have queued a grade; others' may be due too
    if result.message_type == DEEP_LINK_LAUNCH:
        if result.role != "instructor":
            return _refused(LaunchRefused("Only the course's instructors choose content.", 403))
        return redirect(url_for("lti.deep_link"))
    if result.problem:
        return render_template("lti/no_target.html", problem=result.problem, title=result.title)
    if result.exercise_id:
        quiz_id, name = result.exercise_id.split("/", 1)
        return redirect(url_for("student.exercise", quiz_id=quiz_id, name=name))
    return redirect(url_for("lti.quiz", quiz_id=result.quiz_id))


@bp.route("/quiz/<quiz_id>")
@login_required
def quiz(quiz_id: str) -> str | tuple[str, int]:
    """A linked quiz: its exercises and the student's points, as on the quiz list."""
    found = db.session.get(Quiz, quiz_id)
    if found is None or found.archived:
        abort(404)
    user = current_user._get_current_object()
    quizzes = services.quiz_summaries(current_session(), user, [quiz_id])
    return render_template("lti/quiz.html", quiz=found, quizzes=quizzes)


# --------------------------------------------------------------------------------------------
# Deep linking


def _deep_link_id() -> str:
    info = flask_session.get(SESSION_KEY)
    launch_id = info.get("launch") if isinstance(info, dict) else None
    if not launch_id:
        abort(
            400,
            "There is no content selection in progress: open the LMS's 'add content' dialog "
            "for this tool.",
        )
    return str(launch_id)


@bp.route("/deep-link", methods=["GET", "POST"])
@login_required
def deep_link() -> str | tuple[str, int] | Response:
    """The content picker of a deep-linking launch (instructors only)."""
    if not current_user.is_instructor:
        abort(403)
    launch_id = _deep_link_id()
    try:
        wanted = deep_link_request(current_session(), launch_id, _key)
    except LaunchRefused as err:
        return _refused(err)
    from quizapp.instructor import live_exercises, live_quizzes

    quizzes = live_quizzes(current_session())
    exercises = live_exercises(current_session())
    error = None
    if request.method == "POST":
        choices = []
        for value in request.form.getlist("item"):
            kind, _, ident = value.partition(":")
            choices.append((kind, ident))
        try:
            answer = deep_link_answer(
                current_session(), launch_id, choices, url_for("lti.launch", _external=True), _key
            )
        except services.BadRequest as err:
            error = err.message
        except LaunchRefused as err:
            return _refused(err)
        else:
            page = render_template("lti/deep_link_return.html", answer=answer)
            resp = current_app.make_response(page)
            target = _origin(answer.return_url) or "'self'"
            resp.headers["Content-Security-Policy"] = _csp("*", f"'self' {target}")
            return resp
    return render_template(
        "lti/deep_link.html",
        request_info=wanted,
        quizzes=quizzes,
        exercises=exercises,
        error=error,
    ), (400 if error else 200)


# --------------------------------------------------------------------------------------------
# The instructor's page


@admin.before_request
def _require_instructor() -> Any:
    if not current_user.is_authenticated:
        return login_manager.unauthorized()
    if not current_user.is_instructor:
        abort(403)
    return None


@admin.route("/")
def lms() -> str:
    """Registrations, the tool configuration, the LMS courses with their links and grade
    columns, the grade queue and the failed sends with what to do."""
    state().note_urls()
    contexts = list(db.session.query(LtiContext).order_by(LtiContext.title, LtiContext.id))
    members = {
        ctx_id: count
        for ctx_id, count in db.session.query(LtiMember.context_id, db.func.count())
        .filter(LtiMember.active.is_(True))
        .group_by(LtiMember.context_id)
    }
    links = db.session.query(LtiLink).order_by(LtiLink.id).all()
    items = db.session.query(LtiLineItem).order_by(LtiLineItem.resource_id).all()
    titles = {q.id: q.title for q in db.session.query(Quiz)}
    titles.update({e.id: e.title for e in db.session.query(Exercise)})
    return render_template(
        "lti/admin.html",
        registrations=registry.list_registrations(current_session()),
        urls=tool_urls(),
        scopes=toolconfig.SCOPES,
        contexts=contexts,
        members=members,
        links=links,
        items=items,
        titles=titles,
        counts=grades.queue_counts(current_session()),
        failed=grades.failed_grades(current_session()),
    )


@admin.route("/sync/<int:context_row>", methods=["POST"])
def sync(context_row: int) -> Response:
    """Roster sync of one course (NRPS)."""
    result = roster.sync_roster(current_session(), context_row, _key, _http())
    flash(result.summary(), "error" if result.error else "success")
    return redirect(url_for("lti_admin.lms"))


@admin.route("/send/<int:lineitem_id>", methods=["POST"])
def send(lineitem_id: int) -> Response:
    """Queue and send now every student's grade on one grade column (changed ones only, or
    all with ``force``)."""
    item = db.session.get(LtiLineItem, lineitem_id)
    if item is None:
        abort(404)
    kind, ident = item.resource_id.split(":", 1)
    ids = grades.queue_resource(
        current_session(),
        quiz_id=ident if kind == "quiz" else None,
        exercise_id=ident if kind == "exercise" else None,
        force=bool(request.form.get("force")),
        lineitem_ids=[lineitem_id],
    )
    report = grades.deliver_due(
        current_session(), _key, _http(), only=ids, jwks_url=url_for("lti.jwks", _external=True)
    )
    flash(
        f"Grades of {item.resource_id}: {report.summary()}.",
        "error" if report.count("failed") else "success",
    )
    for message in report.errors()[:3]:
        flash(message, "error")
    return redirect(url_for("lti_admin.lms"))


@admin.route("/retry", methods=["POST"])
def retry() -> Response:
    """Send every failed grade again now."""
    ids = grades.retry_now(current_session())
    report = grades.deliver_due(
        current_session(), _key, _http(), only=ids, jwks_url=url_for("lti.jwks", _external=True)
    )
    flash(
        f"Failed grades sent again: {report.summary()}.",
        "error" if report.count("failed") else "success",
    )
    for message in report.errors()[:3]:
        flash(message, "error")
    return redirect(url_for("lti_admin.lms"))


# --------------------------------------------------------------------------------------------


def init_app(app: Flask) -> None:
    """Wire the LMS connection into ``app`` (called by ``create_app``): the admin blueprint,
    CSRF exemptions of the platform's posts, the session interface, framing headers, the
    per-app state (grade worker)."""
    app.register_blueprint(admin)
    app.extensions["quizapp_lti"] = LtiState(app)
    csrf.exempt(login)
    csrf.exempt(launch)
    app.session_interface = LtiSessionInterface()
    app.after_request(_frame_headers)
