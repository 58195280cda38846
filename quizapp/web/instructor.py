"""The instructor's pages (``/instructor``), and two small public pages (``/reset/<token>``,
``/leaderboard``).

Every ``/instructor`` route requires the instructor role: anonymous visitors are sent to the sign-in
page (401 for a non-HTML client such as the CSV download), students get 403.  State-changing routes
are POST with Flask-WTF's CSRF token.  The logic lives in ``quizapp.instructor``; this module parses
the request, calls it and renders.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    stream_with_context,
    url_for,
)
from flask_login import current_user, login_user
from markupsafe import Markup, escape
from werkzeug.wrappers import Response as WResponse

from quizapp import instructor as inst
from quizapp import services
from quizapp.models import Exercise, User, current_session, db
from quizapp.page import page_markup, render_page
from quizapp.services import audit, extensions, overrides
from quizapp.services.incidents import recent_incidents
from quizapp.web.extensions import login_manager
from quizapp.web.forms import EmptyForm

bp = Blueprint("instructor", __name__, url_prefix="/instructor")
public = Blueprint("instructor_public", __name__)

PER_PAGE = 50
#: Students per gradebook page (a page of 2,000 students was 6.2 MB; the CSV has them all).
GRADEBOOK_PER_PAGE = 100


@bp.before_request
def _require_instructor() -> Any:
    """Anonymous: the sign-in redirect (401 when HTML is not accepted); students: 403."""
    if not current_user.is_authenticated:
        if request.accept_mimetypes.accept_html or request.method != "GET":
            return login_manager.unauthorized()
        abort(401)
    if not current_user.is_instructor:
        abort(403)
    return None


def _me() -> User:
    return current_user._get_current_object()


def _course_config() -> tuple[inst.CourseConfig, str | None]:
    try:
        return inst.load_course_config(current_app.config.get("QUIZAPP_EXERCISES")), None
    except inst.CourseConfigError as err:
        return inst.CourseConfig(), str(err)


def _exercise(quiz_id: str, name: str) -> Exercise:
    return services.get_exercise(current_session(), f"{quiz_id}/{name}", include_archived=True)


def _int_arg(name: str, default: int, lo: int, hi: int) -> int:
    raw = request.args.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        abort(400, f"The parameter '{name}' must be a whole number.")
    if not lo <= value <= hi:
        abort(400, f"The parameter '{name}' must be between {lo} and {hi}.")
    return value


def _quiz_arg() -> str | None:
    quiz = request.args.get("quiz") or None
    if quiz is not None:
        if "\x00" in quiz:  # PostgreSQL refuses NUL in a text parameter (SQLite does not)
            raise services.NotFound(f"There is no quiz {quiz!r}.")
        inst.get_quiz(current_session(), quiz)
    return quiz


# --------------------------------------------------------------------------------------------
# Overview, scoreboard, gradebook


@bp.route("/")
def index() -> str:
    quizzes = inst.live_quizzes(current_session())
    exercises = {q.id: [e for e in q.exercises if not e.archived] for q in quizzes}
    students = db.session.query(User).filter(User.role == "student").count()
    return render_template(
        "instructor/index.html", quizzes=quizzes, exercises=exercises, students=students
    )


@bp.route("/scoreboard")
def scoreboard() -> str:
    quiz = _quiz_arg()
    sort = request.args.get("sort", "rank")
    if sort not in inst.SCOREBOARD_SORTS:
        abort(400, f"Unknown sort '{sort}'; use one of: {', '.join(inst.SCOREBOARD_SORTS)}.")
    descending = request.args.get("dir", "asc") == "desc"
    page = _int_arg("page", 1, 1, 10**6)
    per_page = _int_arg("per_page", PER_PAGE, 1, 500)
    board = inst.scoreboard(
        current_session(),
        quiz_id=quiz,
        sort=sort,
        descending=descending,
        page=page,
        per_page=per_page,
    )
    return render_template(
        "instructor/scoreboard.html",
        board=board,
        quizzes=inst.live_quizzes(current_session()),
        quiz=quiz,
    )


@bp.route("/gradebook")
def gradebook() -> str:
    quiz = _quiz_arg()
    config, problem = _course_config()
    page = _int_arg("page", 1, 1, 10**6)
    per_page = _int_arg("per_page", GRADEBOOK_PER_PAGE, 1, 1000)
    gb = inst.gradebook(
        current_session(), quiz_id=quiz, config=config, page=page, per_page=per_page
    )
    quizzes = inst.live_quizzes(current_session())
    return render_template(
        "instructor/gradebook.html",
        gb=gb,
        has_parts=any(c.parts for r in gb.rows for c in r.cells.values()),
        quizzes=quizzes,
        quiz=quiz,
        config_problem=problem,
        warnings=inst.course_config_warnings(config, [q.id for q in quizzes]),
    )


@bp.route("/gradebook.csv")
def gradebook_csv() -> Response:
    quiz = _quiz_arg()
    config, _ = _course_config()
    # Streamed one student at a time (flat memory for any class size); an unknown quiz raises
    # NotFound here, before the first byte.
    lines = inst.iter_gradebook_csv(current_session(), quiz_id=quiz, config=config)
    name = f"gradebook-{quiz}.csv" if quiz else "gradebook.csv"
    resp = Response(stream_with_context(_with_bom(lines)), mimetype="text/csv")
    resp.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.route("/gradebook-parts.csv")
def gradebook_parts_csv() -> Response:
    """The per-part scores of the multi-part exercises (``inst.gradebook_parts_table``)."""
    quiz = _quiz_arg()
    config, _ = _course_config()
    gb = inst.gradebook(current_session(), quiz_id=quiz, config=config)
    text = inst.write_csv(inst.gradebook_parts_table(gb))
    name = f"gradebook-parts-{quiz}.csv" if quiz else "gradebook-parts.csv"
    resp = Response("\ufeff" + text, mimetype="text/csv")
    resp.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    resp.headers["Cache-Control"] = "no-store"
    return resp


#: Lines per chunk of a streamed CSV: one write per line cost ~25% of a 10,000-student download.
CSV_CHUNK_LINES = 256


def _with_bom(lines: Iterator[str]) -> Iterator[str]:
    """The byte order mark (see _csv_response), then the lines joined in chunks of
    ``CSV_CHUNK_LINES``; memory stays bounded by one chunk."""
    yield "\ufeff"
    while chunk := "".join(islice(lines, CSV_CHUNK_LINES)):
        yield chunk


def _csv_response(text: str, filename: str) -> Response:
    # A UTF-8 byte order mark makes Excel read accented names right; csv and LMS importers skip it.
    resp = Response("\ufeff" + text, mimetype="text/csv")
    resp.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    resp.headers["Cache-Control"] = "no-store"
    return resp


# --------------------------------------------------------------------------------------------
# Exercise statistics, preview, regrade


def bar_chart_svg(bins: list[tuple[str, int]], *, title: str = "Score distribution") -> Markup:
    """A small SVG bar chart of ``(label, count)`` bins: presentation attributes only (the CSP
    forbids inline style and script), with a ``<title>`` per bar for screen readers."""
    width_bar, gap, height, top, bottom, left = 34, 6, 120, 16, 46, 28
    peak = max((c for _, c in bins), default=0) or 1
    width = left + len(bins) * (width_bar + gap) + gap
    total_h = top + height + bottom
    parts = [
        f'<svg class="bar-chart" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {width} {total_h}" width="{width}" height="{total_h}">',
        f"<title>{escape(title)}</title>",
        f'<line x1="{left}" y1="{top + height}" x2="{width}" y2="{top + height}" '
        f'stroke="#555" stroke-width="1"/>',
        f'<text x="{left - 4}" y="{top + 4}" text-anchor="end" font-size="10" fill="#333">'
        f"{peak}</text>",
        f'<text x="{left - 4}" y="{top + height}" text-anchor="end" font-size="10" '
        f'fill="#333">0</text>',
    ]
    for i, (label, count) in enumerate(bins):
        x = left + gap + i * (width_bar + gap)
        h = round(height * count / peak, 1)
        y = top + height - h
        parts.append(
            f'<rect x="{x}" y="{y}" width="{width_bar}" height="{h}" fill="#1746a0">'
            f"<title>{escape(label)}: {count}</title></rect>"
        )
        if count:
            parts.append(
                f'<text x="{x + width_bar / 2}" y="{y - 3}" text-anchor="middle" '
                f'font-size="10" fill="#111">{count}</text>'
            )
        parts.append(
            f'<text x="{x + width_bar / 2}" y="{top + height + 12}" text-anchor="end" '
            f'font-size="9" fill="#333" transform="rotate(-40 {x + width_bar / 2} '
            f'{top + height + 12})">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


@bp.route("/exercises/<quiz_id>/<name>")
def exercise(quiz_id: str, name: str) -> str:
    ex = _exercise(quiz_id, name)
    stats = inst.exercise_statistics(current_session(), ex.id)
    return render_template(
        "instructor/exercise.html",
        ex=ex,
        stats=stats,
        chart=bar_chart_svg(stats.histogram, title=f"Best scores on {ex.title}"),
        regrades=inst.regrade_history(current_session(), ex.id),
        incidents=recent_incidents(current_session(), ex.id),
        csrf_form=EmptyForm(),
    )


@bp.route("/exercises/<quiz_id>/<name>/preview", methods=["GET", "POST"])
def preview(quiz_id: str, name: str) -> tuple[str, int]:
    """Any seed of the exercise's current version; POST grades a typed answer against it
    with ``quizapp.bank.grade_answer`` and stores nothing."""
    ex = _exercise(quiz_id, name)
    seed = _int_arg("seed", 7, 0, 2**63 - 1)
    try:
        bank_variant = services.generate_preview(ex, seed)
    except services.ServiceError:
        raise
    except Exception as err:  # the stored YAML no longer generates: say so, do not 500
        return render_template(
            "errors/error.html", status=500, message=f"This exercise does not generate: {err}"
        ), 500
    # The same page a student with this seed would get (rendered as a new variant is).
    page = page_markup(render_page(bank_variant))
    form = EmptyForm()
    verdict = None
    answer = ""
    status = 200
    if request.method == "POST":
        if not form.validate_on_submit():
            abort(400, "The form's security token is missing or expired; reload the page.")
        if bank_variant.parts:
            posted: Any = {
                p.name: request.form.get(f"part-{p.name}", "") for p in bank_variant.parts
            }
            texts = list(posted.values())
        else:
            posted = request.form.get("answer", "")
            texts = [posted]
        answer = posted
        if any(len(t) > services.MAX_ANSWER_CHARS for t in texts):
            status = 400  # shown on the preview, with the answer kept in its box
            verdict = {
                "status": "invalid",
                "score": 0.0,
                "message": f"The answer is too long (at most {services.MAX_ANSWER_CHARS} "
                "characters, as for a student); it was not graded.",
            }
        elif not any(t.strip() for t in texts):
            status = 400
            verdict = {"status": "invalid", "score": 0.0, "message": "Type an answer first."}
        else:
            from quizapp.bank import grade_answer

            v = grade_answer(bank_variant, posted)
            verdict = {
                "status": v.status,
                "score": v.score,
                "message": v.message,
                "cells": v.cells,
                "mistakes": [(m.code, m.message) for m in v.mistakes],
                "parts": [
                    {
                        "name": n,
                        "status": pv.status,
                        "score": pv.score,
                        "follow_through": pv.follow_through,
                        "message": pv.message,
                        "mistakes": [(m.code, m.message) for m in pv.mistakes],
                    }
                    for n, pv in (v.parts or {}).items()
                ],
            }
    return render_template(
        "instructor/preview.html",
        ex=ex,
        seed=seed,
        v=bank_variant,
        prompt_html=page["prompt_html"],
        hints=page["hints"],
        choices=page["choices"] or [],
        given=bank_variant.answer_form.given,
        expected=page["expected"],
        solution=page["solution"],
        page_parts=page["parts"],
        detectors=list(bank_variant.detectors or ()),
        params=inst.variant_parameters(bank_variant),
        form=form,
        verdict=verdict,
        answer=answer,
    ), status


@bp.route("/exercises/<quiz_id>/<name>/regrade", methods=["POST"])
def regrade(quiz_id: str, name: str) -> tuple[str, int]:
    ex = _exercise(quiz_id, name)
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400, "The form's security token is missing or expired; reload the page.")
    dry_run = request.form.get("dry_run") == "1"
    # The apply button of a dry run posts its plan's digest: the regrade writes only that plan.
    reviewed = request.form.get("reviewed") or None
    summary = inst.regrade_exercise(
        current_session(), ex.id, dry_run=dry_run, started_by=_me(), reviewed=reviewed
    )
    return render_template("instructor/regrade.html", ex=ex, summary=summary), 200


@bp.route("/variants/<int:variant_id>")
def variant(variant_id: int) -> str:
    """A student's variant as it was stored when it was created and shown to them (prompt,
    hints, parts, expected answer and worked solution: ``variants.page``), whatever was synced
    since; the seed's preview (``preview``) draws the exercise's current version instead."""
    from quizapp.models import Variant

    row = db.session.get(Variant, variant_id)
    if row is None:
        abort(404, "There is no such variant.")
    from quizapp.services.points import part_points

    ex = services.get_exercise(current_session(), row.exercise_id, include_archived=True)
    return render_template(
        "instructor/variant.html",
        ex=ex,
        variant=row,
        student=db.session.get(User, row.user_id),
        page=page_markup(row.page),
        # each part's points as the student's page shows them (one rule: points.part_points)
        part_points=part_points(services.stored_part_forms(row), ex.points),
    )


@bp.route("/regrades/<int:regrade_id>")
def regrade_run(regrade_id: int) -> str:
    """A past regrade's stored summary."""
    from quizapp.models_instructor import Regrade

    run = db.session.get(Regrade, regrade_id)
    if run is None:
        abort(404)
    summary = inst.RegradeSummary.from_dict(run.summary or {}, run.id)
    ex = services.get_exercise(current_session(), run.exercise_id, include_archived=True)
    return render_template("instructor/regrade.html", ex=ex, summary=summary, run=run)


# --------------------------------------------------------------------------------------------
# Students, excusals, roster


@bp.route("/students")
def students() -> str:
    rows = inst.roster_table(current_session())[1:]
    users = {u.username: u for u in db.session.query(User).filter(User.role == "student").all()}
    return render_template(
        "instructor/students.html",
        rows=rows,
        users=users,
        csrf_form=EmptyForm(),
    )


@bp.route("/students/<int:user_id>")
def student(user_id: int) -> str:
    user, items = inst.student_detail(current_session(), user_id)
    ids = [s.id for item in items for _, subs in item.variants for s in subs]
    live = [e for e in inst.live_exercises(current_session())]
    return render_template(
        "instructor/student.html",
        user=user,
        items=items,
        history=inst.submission_history(current_session(), ids),
        exercises=live,
        quizzes=[q for q in inst.live_quizzes(current_session()) if q.closes_at is not None],
        dates=audit.student_deadlines(current_session(), user_id),
        timezone=current_app.config["QUIZAPP_TIMEZONE"],
        csrf_form=EmptyForm(),
        answer_text=inst.answer_text,
        audit_values=_audit_text,
    )


def _audit_text(values: dict[str, Any] | None) -> str:
    """An audit entry's before/after values as text: ``until 2026-12-10 12:00 CST, credit 1``
    or ``7.5 points``; ``—`` for none."""
    from datetime import datetime

    if not values:
        return "—"
    parts = []
    if "until" in values:
        parts.append(f"until {_deadline(datetime.fromisoformat(values['until']))}")
    if "credit" in values:
        parts.append(f"credit {float(values['credit']):g}")
    if "points" in values:
        parts.append(f"{float(values['points']):g} points")
    return ", ".join(parts)


def _student_or_404(user_id: int) -> User:
    user = db.session.get(User, user_id)
    if user is None or user.role != "student":
        abort(404)
    return user


@bp.route("/students/<int:user_id>/extensions", methods=["POST"])
def extension(user_id: int) -> WResponse:
    """Give (``action=extend``: ``quiz_id``, ``until``, ``credit``, ``reason``) or remove
    (``action=remove``: ``quiz_id``) the student's extension of a quiz.  A refused request is
    flashed as one line naming the field; nothing changes then."""
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400, "The form's security token is missing or expired; reload the page.")
    user = _student_or_404(user_id)
    quiz_id = request.form.get("quiz_id", "")
    action = request.form.get("action", "extend")
    try:
        if action == "remove":
            if extensions.remove_extension(
                current_session(),
                quiz_id,
                user.username,
                by=_me(),
                reason=request.form.get("reason", ""),
            ):
                flash(f"The extension of {quiz_id} is removed.", "success")
            else:
                flash(f"There was no extension of {quiz_id}.", "info")
        elif action == "extend":
            row = extensions.set_extension(
                current_session(),
                quiz_id,
                user.username,
                request.form.get("until", ""),
                credit=request.form.get("credit", "") or 1.0,
                reason=request.form.get("reason", ""),
                by=_me(),
            )
            flash(f"{user.username} may answer {quiz_id} until {_deadline(row.until)}.", "success")
        else:
            abort(400, "The action must be 'extend' or 'remove'.")
    except services.ServiceError as err:
        db.session.rollback()
        flash(f"Nothing changed: {err.message}", "error")
    return redirect(url_for("instructor.student", user_id=user_id))


@bp.route("/students/<int:user_id>/overrides", methods=["POST"])
def override(user_id: int) -> WResponse:
    """Set (``action=override``: ``exercise_id``, ``points``, ``reason``) or remove
    (``action=remove``: ``exercise_id``) the student's score override on an exercise."""
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400, "The form's security token is missing or expired; reload the page.")
    user = _student_or_404(user_id)
    exercise_id = request.form.get("exercise_id", "")
    action = request.form.get("action", "override")
    try:
        if action == "remove":
            if overrides.remove_override(
                current_session(),
                exercise_id,
                user.username,
                by=_me(),
                reason=request.form.get("reason", ""),
            ):
                flash(
                    f"The override on {exercise_id} is removed: its points are computed again.",
                    "success",
                )
            else:
                flash(f"There was no override on {exercise_id}.", "info")
        elif action == "override":
            row = overrides.set_override(
                current_session(),
                exercise_id,
                user.username,
                request.form.get("points", ""),
                request.form.get("reason", ""),
                by=_me(),
            )
            flash(
                f"{user.username} has {row.best_points:g} points on {exercise_id} (override).",
                "success",
            )
        else:
            abort(400, "The action must be 'override' or 'remove'.")
    except services.ServiceError as err:
        db.session.rollback()
        flash(f"Nothing changed: {err.message}", "error")
    return redirect(url_for("instructor.student", user_id=user_id))


def _deadline(value: Any) -> str:
    from quizapp import coursetime

    zone = coursetime.parse_zone(current_app.config["QUIZAPP_TIMEZONE"])
    return coursetime.show_deadline(value, zone)


@bp.route("/students/<int:user_id>/excusals", methods=["POST"])
def excusal(user_id: int) -> WResponse:
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400, "The form's security token is missing or expired; reload the page.")
    exercise_id = request.form.get("exercise_id", "")
    action = request.form.get("action", "excuse")
    if action == "remove":
        if inst.unexcuse(current_session(), user_id, exercise_id):
            flash(f"The excusal from {exercise_id} is removed.", "success")
        else:
            flash(f"There was no excusal from {exercise_id}.", "info")
    elif action == "excuse":
        inst.excuse(
            current_session(), user_id, exercise_id, reason=request.form.get("reason", ""), by=_me()
        )
        flash(f"Excused from {exercise_id}: it no longer counts in the totals.", "success")
    else:
        abort(400, "The action must be 'excuse' or 'remove'.")
    return redirect(url_for("instructor.student", user_id=user_id))


@bp.route("/students/<int:user_id>/sign-out", methods=["POST"])
def sign_out_student(user_id: int) -> WResponse:
    """Sign a student out everywhere: every session, remember-me cookie and API token of theirs
    ends (a lost laptop, a shared account).  Students only: instructors sign themselves out on
    their account page."""
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400, "The form's security token is missing or expired; reload the page.")
    user = db.session.get(User, user_id)
    if user is None:
        abort(404)
    if user.role != "student":
        raise services.Forbidden("Only a student can be signed out from here.")
    services.end_sessions(current_session(), user_id, tokens=True)
    flash(f"{user.name} is signed out everywhere; their API tokens are revoked.", "success")
    return redirect(url_for("instructor.student", user_id=user_id))


@bp.route("/students/<int:user_id>/reset-link", methods=["POST"])
def reset_link(user_id: int) -> str:
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400, "The form's security token is missing or expired; reload the page.")
    token = inst.create_reset_link(current_session(), user_id, note="instructor")
    user = db.session.get(User, user_id)
    if user is None:
        abort(404, "No such student.")
    return render_template(
        "instructor/links.html",
        links=[
            (
                user.username,
                user.name,
                url_for("instructor_public.reset", token=token, _external=True),
            )
        ],
        skipped=[],
        expires_at=None,
    )


@bp.route("/roster/import", methods=["POST"])
def roster_import() -> tuple[str, int]:
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400, "The form's security token is missing or expired; reload the page.")
    upload = request.files.get("roster")
    if upload is None or not upload.filename:
        abort(400, "Choose a roster CSV file to upload.")
    raw = upload.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        abort(400, "The roster file must be UTF-8 text (save it as 'CSV UTF-8').")
    try:
        result = inst.import_roster(current_session(), text)
    except inst.RosterError as err:
        return render_template("instructor/roster_errors.html", problems=err.problems), 400
    links = [
        (
            e.username,
            e.display_name or e.username,
            url_for("instructor_public.reset", token=t, _external=True),
        )
        for e, _, t in result.created
    ]
    return render_template(
        "instructor/links.html",
        links=links,
        skipped=[(e.username, why) for e, why in result.skipped],
        expires_at=result.expires_at,
    ), 200


@bp.route("/roster/links.csv", methods=["POST"])
def links_csv() -> Response:
    """The reset links just shown (posted back by the links page's download button) as a CSV
    file: ``username``, ``display_name``, ``reset_link``.  The links exist nowhere else (only
    their SHA-256 is stored), so the page carries them to this download."""
    form = EmptyForm()
    if not form.validate_on_submit():
        abort(400, "The form's security token is missing or expired; reload the page.")
    names = request.form.getlist("username")
    shown = request.form.getlist("name")
    links = request.form.getlist("link")
    if not names or not len(names) == len(shown) == len(links):
        abort(400, "The links to download are missing; import the roster again.")
    rows = [
        ["username", "display_name", "reset_link"],
        *map(list, zip(names, shown, links, strict=True)),
    ]
    return _csv_response(inst.write_csv(rows), "reset-links.csv")


@bp.route("/roster.csv")
def roster_csv() -> Response:
    return _csv_response(inst.roster_csv(current_session()), "roster.csv")


# --------------------------------------------------------------------------------------------
# Public: password reset, students' anonymized leaderboard


@public.route("/reset/<token>", methods=["GET", "POST"])
def reset(token: str) -> Any:
    row = inst.find_reset(current_session(), token)
    if row is None:
        return render_template(
            "errors/error.html",
            status=404,
            message="This link is unknown, used or expired; ask your instructor for a new one.",
        ), 404
    form = EmptyForm()
    error = None
    if request.method == "POST":
        if not form.validate_on_submit():
            abort(400, "The form's security token is missing or expired; reload the page.")
        password = request.form.get("password", "")
        if password != request.form.get("confirm", ""):
            error = "The passwords differ."
        else:
            try:
                user = inst.use_reset(current_session(), token, password)
            except services.ServiceError as err:
                error = err.message
            else:
                login_user(user)
                flash(f"Your password is set, {user.name}. Welcome!", "success")
                return redirect(url_for("student.home"))
    return render_template(
        "instructor/reset.html",
        form=form,
        user=row.user,
        error=error,
        password_min=services.PASSWORD_MIN,
    ), (400 if error else 200)


@public.route("/leaderboard")
def leaderboard() -> Any:
    """The anonymized class leaderboard (config ``QUIZAPP_STUDENT_LEADERBOARD``): ranks, points
    and exercises solved, no names; the signed-in student's own row highlighted."""
    if not current_app.config.get("QUIZAPP_STUDENT_LEADERBOARD"):
        abort(404)
    if not current_user.is_authenticated:
        return login_manager.unauthorized()
    page = _int_arg("page", 1, 1, 10**6)
    board = inst.scoreboard(current_session(), page=page, per_page=PER_PAGE)
    mine = inst.scoreboard(current_session(), only_user_id=int(current_user.id))
    me = mine.rows[0] if mine.rows else None
    return render_template("instructor/leaderboard.html", board=board, me=me)


def init_app(app: Any) -> None:
    """Called by ``create_app`` after it registered ``bp``: register the public blueprint
    (``/reset/<token>``, ``/leaderboard``; the leaderboard only with
    ``QUIZAPP_STUDENT_LEADERBOARD`` on, a setting of :mod:`quizapp.config`, default off)."""
    app.register_blueprint(public)
