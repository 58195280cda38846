"""The student's pages: quiz list, exercise (answer, verdict, worked solution), progress."""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_required
from werkzeug.wrappers import Response

from quizapp import services
from quizapp.models import User, Variant, current_session
from quizapp.page import page_markup
from quizapp.services import ExerciseRow, VariantRow, schedules
from quizapp.services.points import best_attempt, credited, exercise_points
from quizapp.web import display, errors, parts_view
from quizapp.web.extensions import limit, limiter
from quizapp.web.forms import EmptyForm

bp = Blueprint("student", __name__)

#: The submissions the exercise page lists (newest first); the rest are on the variant's
#: submissions page (``student.submissions``), linked from there.  Three keep the page light
#: (docs/exercise-page.md: its weight) and show the last answers a student compares.
HISTORY_ROWS = 3


def _user() -> User:
    return current_user._get_current_object()


@bp.route("/")
@login_required
def home() -> str:
    quizzes = services.quiz_summaries(current_session(), _user())
    return render_template("student/home.html", quizzes=quizzes)


@bp.route("/progress")
@login_required
def progress() -> str:
    quizzes = services.quiz_summaries(current_session(), _user())
    total, available = services.course_points(quizzes)
    return render_template(
        "student/progress.html", quizzes=quizzes, total=total, available=available
    )


def _pick_view(stored: Any, choices_html: Any) -> Any:
    """The right option of a choice (its letter and stored text) or index exercise, for the
    worked solution; None for other forms."""
    form = stored.answer_form
    if form.type not in ("choice", "index"):
        return None
    return display.expected_pick_html(form, stored.expected, choices_html)


def render_exercise(
    exercise: ExerciseRow,
    variant: VariantRow | None = None,
    *,
    result: services.SubmitResult | None = None,
    posted: str | list[list[str]] | dict[str, Any] | None = None,
    error: str | None = None,
    status: int = 200,
    preview: dict[str, Any] | None = None,
) -> tuple[str, int]:
    """Render the exercise page for the signed-in student (their current variant: ``variant``
    when the caller read it, else read again, or created).  The page reads plain rows
    (``services.read_exercise_page``); a write path passes its ORM objects through
    ``ExerciseRow.of`` / ``VariantRow.of``.

    After a submit, the variant and its submissions are ``result.variant`` and
    ``result.submissions`` (read by the submit under its lock: no query here); the variant's state
    is computed from its submissions, which the page lists anyway (same figures as
    ``services.variant_state``).  ``preview`` (the no-JavaScript answer preview: ``via``,
    ``status``, ``message``, ``html``) is shown under the form it came from.  A multi-part
    variant's parts are shown each with its own inputs and verdict (``student/_parts.html``).
    """
    user = _user()
    if result is not None:
        variant = VariantRow.of(result.variant)
    elif variant is None:
        exercise, variant = _current_rows(exercise.id)
    form = services.stored_answer_form(variant)
    # The whole stored variant (expected answer, context) is decoded only when the page needs
    # it: a pick's right option once finished, an index form's count.  A multi-part variant's
    # parts are decoded alone (their forms).
    picks = form.type in ("choice", "index")
    multi = form.type == "parts"
    stored = services.stored_variant(variant) if picks else None
    pick_context = stored.context if stored is not None else None
    submissions: list[services.SubmissionRow]
    if result is not None:
        submissions = result.submissions
    else:
        submissions = list(services.submission_rows(current_session(), variant.id))
    state = services.VariantState.of(submissions, exercise.attempts, variant.finished_at)
    if state.finished:  # its worked solution and answer are shown: the whole stored page
        variant = services.with_key_page(current_session(), variant)
    # What the student is shown was rendered when the variant was created (never again).
    page = page_markup(variant.page)
    current: services.SubmissionRow | None = result.submission if result else None
    # A multi-part form refused before grading keeps the page's state: the last submission's
    # verdicts and locks, with the parts just sent over its answers (parts_view.over_last).
    if current is None and (posted is None or multi) and submissions:
        current = submissions[-1]
    if posted is not None:
        answer = posted
    elif current is not None:
        answer = services.decode_raw_answer(current.answer_format, current.raw_answer)
    else:
        answer = None
    cells = current.cells if current is not None else None
    invalid_cell = (current.verdict or {}).get("invalid_cell") if current is not None else None
    parts = None
    if multi:
        form_view = display.FormView(mode="parts", type="parts")
        part_verdict = current.verdict if current is not None else None
        if posted is not None and current is not None and result is None:
            last = services.decode_raw_answer(current.answer_format, current.raw_answer)
            answer, part_verdict = parts_view.over_last(posted, last, part_verdict)
        parts = parts_view.build_part_views(
            services.stored_part_forms(variant),
            page["parts"],
            answers=answer if isinstance(answer, dict) else None,
            verdict=part_verdict,
            # a repeat carries the earlier verdict: "graded again with the x you sent now" is
            # not true of it
            kept_notes=current is None or current.duplicate_of_id is None,
            parsed=current.parsed if current is not None else None,
            finished=state.finished,
            exercise_points=exercise.points,
        )
    else:
        form_view = display.build_form_view(
            form,
            choices_html=page["choices"],
            answer=None if isinstance(answer, dict) else answer,  # parts fill no single form
            cells=cells,
            invalid_cell=invalid_cell,
            check_cells=current is not None and current.status == "invalid",
            parsed=current.parsed if current is not None and isinstance(answer, str) else None,
        )
    quiz = exercise.quiz
    now = services.utcnow()
    schedule = schedules.student_schedule(current_session(), quiz, user)
    credit_now = schedule.credit_at(now)
    closed = not user.is_instructor and credit_now is None
    context = {
        "exercise": exercise,
        "quiz": quiz,
        "variant": variant,
        "title": page["title"],
        "prompt_html": page["prompt_html"],
        "hints": page["hints"],
        "state": state,
        "submissions": list(reversed(submissions)),
        "current": current,
        "result": result,
        "form": form_view,
        "parts": parts,
        "error": error,
        "closed": closed,
        "schedule": schedule,
        "late_now": credit_now if credit_now is not None and credit_now.late else None,
        "finished": state.finished,
        "solution": page["solution"] if state.finished else None,
        "expected": page["expected"] if state.finished else None,
        "can_practice": state.finished and exercise.practice,
        "decode": services.decode_raw_answer,
        "extra_mistakes": display.extra_mistake_messages,
        # The second pass of the page (issue 15): where the exercise sits in its quiz, the
        # answer preview, the last answer with its marks once the form is gone, picks shown as
        # letters, and where the focus goes after a submit.
        "position": services.quiz_position(current_session(), user, exercise),
        "preview": preview,
        "marked": display.marked_answer(
            form,
            services.decode_raw_answer(current.answer_format, current.raw_answer),
            current.parsed,
            current.cells,
            current.status,
            pick_context,
            page["choices"],
        )
        if current is not None and (state.finished or closed) and not multi
        else None,
        "expected_pick": _pick_view(stored, page["choices"])
        if state.finished and stored is not None
        else None,
        "best": _best_answer(submissions, current, exercise.points),
        "answer_text": lambda sub: _answer_text(form, sub, pick_context),
        "history_rows": HISTORY_ROWS,
        "focus_verdict": result is not None and error is None,
    }
    return render_template("student/exercise.html", **context), status


def _best_answer(
    submissions: list[services.SubmissionRow],
    current: services.SubmissionRow | None,
    points: float,
) -> dict[str, float] | None:
    """The best graded answer on this variant as the verdict shows it beside the last one
    (``score``: credited, a fraction; ``points``), when it is better than the answer shown: a
    student whose last answer scored 0 % after a 25 % one sees that the 25 % was kept.  The
    best is ``services.points.best_attempt``'s (the rule the score uses); None when the answer
    shown is the best."""
    best = best_attempt([s for s in submissions if s.used_attempt])
    # a repeat of an earlier answer (no attempt used) carries that answer's score
    shown = (
        credited(current.score, current.credit)
        if current is not None and current.status != "invalid"
        else 0.0
    )
    if best.score <= 0.0 or best.score <= shown:
        return None
    return {"score": best.score, "points": exercise_points(best.score, points, None)}


def _current_rows(exercise_id: str) -> tuple[ExerciseRow, VariantRow]:
    """The exercise and the signed-in student's current variant as the page reads them
    (``services.read_exercise_page``), the variant drawn and stored first when they have none.
    The caller checked that the quiz is visible (``services.check_quiz_visible``)."""
    exercise, variant = services.read_exercise_page(current_session(), exercise_id, _user())
    return exercise, variant if variant is not None else _create_variant(exercise_id)


def _create_variant(exercise_id: str) -> VariantRow:
    """The signed-in student's current variant of ``exercise_id``, drawn and stored (their
    first view; ``services.get_or_create_variant`` takes the ORM exercise)."""
    session = current_session()
    exercise = services.get_exercise(session, exercise_id)
    secret = current_app.config["QUIZAPP_SEED_SECRET"]
    return VariantRow.of(services.get_or_create_variant(session, _user(), exercise, secret))


def _answer_text(form: Any, sub: Any, pick_context: Any) -> str:
    """A submission's answer as the submissions table shows it (a multi-part answer one part
    per line, ``S: ...``)."""
    answer = services.decode_raw_answer(sub.answer_format, sub.raw_answer)
    if isinstance(answer, dict):
        return parts_view.answer_text(answer)
    return display.answer_text(form, answer, pick_context)


def check_request_encoding() -> None:
    """``before_request`` hook, run FIRST (before CSRF reads the form): refuse a query string
    that is not UTF-8 (400 naming its parameter), and find the fields of a form body that are
    not UTF-8, in their raw bytes or in their percent-escapes: the first one's name in
    ``g.form_bad_field`` (None when the body is fine), all of them in ``g.form_bad_fields``.

    Werkzeug decodes query and form values leniently (an invalid percent-escape is kept as its
    literal ``%FF`` text) and drops a body with a raw non-UTF-8 byte whole, token and all;
    either way a request would be answered, stored or refused as something the user never
    typed (``?quiz=%FF`` was a 404 for a quiz named ``%FF``).  The exercise form
    (``errors.ANSWER_ENDPOINTS``) answers with its own page (``_answer``) or, when the token was
    lost with the body, the CSRF handler says the cause; any other form is refused here with
    400 (:func:`quizapp.web.errors.not_utf8_message`).  The body is cached, so
    ``request.form`` parses the same bytes afterwards.  A multipart body (the roster upload's
    kind) is read by Werkzeug with invalid bytes as U+FFFD: a field holding one is a bad
    field (its files are not checked: the roster import reads its own bytes).
    """
    g.form_bad_field = None
    g.form_bad_fields = frozenset()
    bad_query = _non_utf8_fields(request.query_string)
    if bad_query:
        abort(400, description=errors.not_utf8_query_message(bad_query[0]))
    if request.method != "POST":
        return
    bad: list[str] = []
    if request.mimetype == "multipart/form-data":
        # Werkzeug reads a multipart field's invalid bytes as U+FFFD (never typed on purpose)
        bad = [k for k, v in request.form.items(multi=True) if "\ufffd" in k + v]
    elif request.mimetype == "application/x-www-form-urlencoded":
        bad = _non_utf8_fields(request.get_data(cache=True))
    if bad:
        g.form_bad_field, g.form_bad_fields = bad[0], frozenset(bad)
    if g.form_bad_field is not None and request.endpoint not in errors.ANSWER_ENDPOINTS:
        abort(400, description=errors.not_utf8_message(g.form_bad_field, answer=False))


def _non_utf8_fields(raw: bytes) -> list[str]:
    """The names, in order, of the ``name=value`` pairs of a URL-encoded body or query string
    whose name or value is not UTF-8 (raw, or once ``+`` and percent-escapes are decoded), as
    text (invalid bytes replaced); empty when every pair is UTF-8."""
    from urllib.parse import unquote_to_bytes

    bad = []
    for pair in raw.split(b"&"):
        name, _, value = pair.partition(b"=")
        decoded_name = unquote_to_bytes(name.replace(b"+", b" "))
        try:
            decoded_name.decode("utf-8")
            unquote_to_bytes(value.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            bad.append(decoded_name.decode("utf-8", errors="replace"))
    return bad


def _form_body_is_utf8() -> bool:
    return g.get("form_bad_field") is None


def _form_number(raw: str) -> int | None:
    """A form field's positive whole number: ASCII digits, at most 18 of them (every 64-bit id),
    or None.  (``str.isdigit`` also accepts ``²`` and ``①``, which ``int`` refuses, and ``int``
    refuses more than 4,300 digits: neither may reach it.)"""
    return int(raw) if raw.isascii() and raw.isdigit() and 0 < len(raw) < 19 else None


def _posted_variant_id() -> int | None:
    """The id of the variant the posted form was shown for (its hidden ``variant`` field), or
    None when the form did not say (a page older than the field).  Raises ``BadRequest`` for a
    field that is not a variant id (``services.answered_variant_id``): such an answer is not
    graded and uses no attempt."""
    return services.answered_variant_id(request.form.get("variant"), "The form's variant field")


def _previewing() -> bool:
    """The form's "Check how it is read" button (the answer preview without JavaScript)."""
    return request.method == "POST" and request.form.get("action") == "preview"


def _preview(exercise: ExerciseRow, variant: Variant, posted: Any) -> tuple[str, int]:
    """The page with the answer preview of ``posted`` under its form; nothing is stored."""
    via = "cells" if isinstance(posted, list) else request.form.get("via") or "text"
    try:
        result = services.preview_answer(
            current_session(),
            _user(),
            exercise.id,
            posted if posted is not None else "",
            seed_secret=current_app.config["QUIZAPP_SEED_SECRET"],
            variant=variant,
            for_variant=_posted_variant_id(),
        )
    except (services.BadRequest, services.Conflict) as err:
        return render_exercise(exercise, posted=posted, error=err.message, status=err.status)
    view = {
        "via": via,
        "status": result.preview.status,
        "message": result.preview.message,
        "html": display.preview_html(
            result.preview, result.bank_variant.answer_form, result.choices_html
        ),
    }
    return render_exercise(exercise, posted=posted, preview=view)


@bp.route("/exercises/<quiz_id>/<name>", methods=["GET", "POST"])
@login_required
@limiter.limit(limit("QUIZAPP_LIMIT_SUBMIT"), methods=["POST"], exempt_when=_previewing)
@limiter.limit(
    limit("QUIZAPP_LIMIT_PREVIEW"),
    methods=["POST"],
    scope="exercise-preview",
    exempt_when=lambda: not _previewing(),
)
def exercise(quiz_id: str, name: str) -> tuple[str, int] | Response:
    exercise_id = f"{quiz_id}/{name}"
    if request.method != "POST":  # GET, and HEAD (Flask answers it with the GET's headers)
        # The exercise, its quiz and the student's current variant as plain rows, in one read;
        # the variant is created (drawn and stored) only once the quiz is known to be open.
        row, variant_row = services.read_exercise_page(current_session(), exercise_id, _user())
        services.check_quiz_visible(row.quiz, _user())
        return render_exercise(row, variant_row or _create_variant(exercise_id))
    return _answer(exercise_id)


def _answer(exercise_id: str) -> tuple[str, int]:
    """A posted answer (or its preview) to the student's current variant of ``exercise_id``:
    graded and stored (``services.submit``), then the page with its verdict.  The submit and
    the preview take the ORM objects; the page is rendered from their rows."""
    exercise, variant = services.get_exercise_and_variant(current_session(), exercise_id, _user())
    services.check_quiz_visible(exercise.quiz, _user())
    secret = current_app.config["QUIZAPP_SEED_SECRET"]
    if variant is None:
        variant = services.get_or_create_variant(current_session(), _user(), exercise, secret)
    page = ExerciseRow.of(exercise)
    form = services.stored_answer_form(variant)
    part_forms = services.stored_part_forms(variant) if form.type == "parts" else None
    posted: str | list[list[str]] | dict[str, Any] | None
    only: str | None = None
    if part_forms is not None:
        only = request.form.get("only") or None
        if only is not None and only not in {part.name for part in part_forms}:
            return render_exercise(
                page,
                VariantRow.of(variant),
                error="The button you pressed names a part this exercise does not have; the "
                "answer was not graded and used no attempt. Reload the page and answer again.",
                status=400,
            )
        posted = parts_view.read_posted_parts(part_forms, request.form, only=only)
    else:
        posted = display.read_posted_answer(form, request.form)
    if not _form_body_is_utf8():  # the boxes come back as read (the bad one as its escapes)
        return render_exercise(
            page,
            VariantRow.of(variant),
            posted=posted,
            error=errors.not_utf8_message(g.get("form_bad_field"), answer=True),
            status=400,
        )
    forms = (
        [("", form)]
        if part_forms is None
        else [(f"part-{p.name}-", p.answer_form) for p in part_forms]
    )
    for prefix, one_form in forms:
        stray = display.stray_cell(one_form, request.form, prefix)
        if stray is not None:
            where = f"part {prefix[5:-1]}, " if prefix else ""
            return render_exercise(
                page,
                VariantRow.of(variant),
                posted=posted,
                error=f"The form has a box outside the answer grid ({where}row {stray[0]}, "
                f"column {stray[1]}); the answer was not graded and used no attempt. Reload "
                "the page and answer again.",
                status=400,
            )
    if _previewing():
        return _preview(page, variant, posted)
    if request.form.get("action", "submit") not in ("", "submit"):
        return render_exercise(
            page,
            VariantRow.of(variant),
            posted=posted,
            error="The form asked for something this page does not do (its action field is "
            "neither a submit nor a preview); the answer was not graded and used no attempt. "
            "Reload the page and answer again.",
            status=400,
        )
    try:
        for_variant = _posted_variant_id()
    except services.BadRequest as err:
        return render_exercise(page, posted=posted, error=err.message, status=400)
    if part_forms is not None and not posted:
        which = f"part {only}" if only is not None else "at least one part"
        return render_exercise(
            page,
            error=f"Type an answer for {which} first; nothing was graded and no attempt was used.",
            status=400,
        )
    if posted is None or (isinstance(posted, str) and not posted.strip()):
        return render_exercise(
            page,
            VariantRow.of(variant),
            posted=posted,
            error=display.empty_answer_message(form),
            status=400,
        )
    try:
        result = services.submit(
            current_session(),
            _user(),
            exercise.id,
            posted,
            seed_secret=secret,
            source="web",
            variant=variant,
            for_variant=for_variant,
        )
    except services.BadRequest as err:  # (too long, a grid of another shape): kept as typed
        return render_exercise(
            page, VariantRow.of(variant), posted=posted, error=err.message, status=400
        )
    except (services.Conflict, services.Forbidden) as err:
        return render_exercise(page, posted=posted, error=err.message, status=err.status)
    # An invalid multi-part answer is stored whole (merged): the page shows it from the row.
    keep = posted if result.verdict.get("status") == "invalid" and part_forms is None else None
    # The exercise's attempts and points as the submit read them under its lock.
    return render_exercise(ExerciseRow.of(exercise), result=result, posted=keep)


@bp.route("/exercises/<quiz_id>/<name>/submissions")
@login_required
def submissions(quiz_id: str, name: str) -> str:
    """Every submission of the signed-in student on their current variant of the exercise,
    newest first (the exercise page lists the latest ``HISTORY_ROWS``).  Creates no variant: an
    exercise never opened has none to list."""
    exercise, variant = services.read_exercise_page(current_session(), f"{quiz_id}/{name}", _user())
    services.check_quiz_visible(exercise.quiz, _user())
    rows: list[services.SubmissionRow] = []
    title = exercise.title
    answer_text: Any = None
    if variant is not None:
        title = page_markup(variant.page)["title"]
        form = services.stored_answer_form(variant)
        pick_context = (
            services.stored_variant(variant).context if form.type in ("choice", "index") else None
        )
        rows = list(reversed(services.submission_rows(current_session(), variant.id)))

        def answer_text(sub: Any) -> str:
            return _answer_text(form, sub, pick_context)

    return render_template(
        "student/submissions.html",
        exercise=exercise,
        variant=variant,
        title=title,
        submissions=rows,
        answer_text=answer_text,
    )


@bp.route("/exercises/<quiz_id>/<name>/new-variant", methods=["POST"])
@login_required
def new_variant(quiz_id: str, name: str) -> Response | tuple[str, int]:
    exercise = services.get_exercise(current_session(), f"{quiz_id}/{name}")
    services.check_quiz_visible(exercise.quiz, _user())
    form = EmptyForm()
    if not form.validate_on_submit():
        return redirect(url_for("student.exercise", quiz_id=quiz_id, name=name))
    try:
        variant: Variant = services.new_practice_variant(
            current_session(), _user(), exercise, current_app.config["QUIZAPP_SEED_SECRET"]
        )
    except services.Conflict as err:
        # A second click of the same button (the form says after which variant it was shown):
        # the first click made the new variant, so this one lands on it instead of a 409.
        after = _form_number(request.form.get("after", ""))
        progress = services.get_progress(current_session(), _user(), exercise)
        if after is not None and progress is not None and progress.current_variant > after:
            return redirect(url_for("student.exercise", quiz_id=quiz_id, name=name))
        return render_exercise(ExerciseRow.of(exercise), error=err.message, status=409)
    flash(
        f"This is variant {variant.variant_number}: new numbers, for practice "
        "(your score stays that of variant 1).",
        "info",
    )
    return redirect(url_for("student.exercise", quiz_id=quiz_id, name=name))
