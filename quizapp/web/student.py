"""The student's pages: quiz list, exercise (answer, verdict, worked solution), progress."""

from __future__ import annotations

from flask import (
    Blueprint,
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
from quizapp.models import Exercise, User, Variant, db
from quizapp.page import page_markup
from quizapp.web import display
from quizapp.web.extensions import limit, limiter
from quizapp.web.forms import EmptyForm

bp = Blueprint("student", __name__)


def _user() -> User:
    return current_user._get_current_object()  # type: ignore[no-any-return]


@bp.route("/")
@login_required
def home() -> str:
    quizzes = services.quiz_summaries(db.session, _user())
    return render_template("student/home.html", quizzes=quizzes)


@bp.route("/progress")
@login_required
def progress() -> str:
    quizzes = services.quiz_summaries(db.session, _user())
    total = sum(q.points_earned for q in quizzes)
    available = sum(q.points_available for q in quizzes)
    return render_template(
        "student/progress.html", quizzes=quizzes, total=total, available=available
    )


def render_exercise(
    exercise: Exercise,
    *,
    result: services.SubmitResult | None = None,
    posted: str | list[list[str]] | None = None,
    error: str | None = None,
    status: int = 200,
) -> tuple[str, int]:
    """Render the exercise page for the signed-in student (their current variant).

    After a submit, the variant and its submissions are ``result.variant`` and
    ``result.submissions`` (read by the submit under its lock: no query here); the variant's state
    is computed from its submissions, which the page lists anyway (same figures as
    ``services.variant_state``).
    """
    user = _user()
    if result is not None:
        variant = result.variant
    else:
        secret = current_app.config["QUIZAPP_SEED_SECRET"]
        variant = services.get_or_create_variant(db.session, user, exercise, secret)
    # What the student is shown was rendered when the variant was created (never again).
    page = page_markup(variant.page)
    form = services.stored_answer_form(variant)
    submissions: list[services.SubmissionRow]
    if result is not None:
        submissions = result.submissions
    else:
        submissions = list(services.submission_rows(db.session, variant.id))
    graded = [s for s in submissions if s.used_attempt]
    state = services.VariantState(
        attempts=int(exercise.attempts),
        attempts_used=len(graded),
        solved=any(s.status == "correct" for s in graded),
        best_score=max((float(s.score) for s in graded), default=0.0),
    )
    current: services.SubmissionRow | None = result.submission if result else None
    if current is None and posted is None and submissions:
        current = submissions[-1]
    if posted is not None:
        answer = posted
    elif current is not None:
        answer = services.decode_raw_answer(current.answer_format, current.raw_answer)
    else:
        answer = None
    cells = current.cells if current is not None else None
    invalid_cell = (current.verdict or {}).get("invalid_cell") if current is not None else None
    form_view = display.build_form_view(
        form,
        choices_html=page["choices"],
        answer=answer,
        cells=cells,
        invalid_cell=invalid_cell,
        check_cells=current is not None and current.status == "invalid",
        parsed=current.parsed if current is not None and isinstance(answer, str) else None,
    )
    quiz = exercise.quiz
    now = services.utcnow()
    closed = not user.is_instructor and quiz.closes_at is not None and now >= quiz.closes_at
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
        "error": error,
        "closed": closed,
        "finished": state.finished,
        "solution": page["solution"] if state.finished else None,
        "expected": page["expected"] if state.finished else None,
        "can_practice": state.finished and exercise.practice,
        "decode": services.decode_raw_answer,
        "extra_mistakes": display.extra_mistake_messages,
    }
    return render_template("student/exercise.html", **context), status


def check_form_encoding() -> None:
    """``before_request`` hook, run FIRST (before CSRF reads the form): remember in
    ``g.form_utf8`` whether the URL-encoded form body holds only UTF-8 percent-escapes.

    Werkzeug decodes form values leniently (an invalid byte sequence is kept as its literal
    ``%FF`` escape), so a student's answer would be stored and graded as text they never typed.
    Strict decoding of the raw body (``urllib.parse.parse_qsl(..., errors="strict")``) tells.
    The body is cached, so ``request.form`` parses the same bytes afterwards.  Multipart bodies
    are not checked (the exercise form is URL-encoded).
    """
    from urllib.parse import parse_qsl

    g.form_utf8 = True
    if request.method != "POST" or request.mimetype != "application/x-www-form-urlencoded":
        return
    raw = request.get_data(cache=True)
    try:
        parse_qsl(raw.decode("latin-1"), keep_blank_values=True, encoding="utf-8", errors="strict")
    except (UnicodeDecodeError, ValueError):
        g.form_utf8 = False


def _form_body_is_utf8() -> bool:
    return bool(g.get("form_utf8", True))


def _posted_variant_id() -> int | None:
    """The id of the variant the posted form was shown for (its hidden ``variant`` field), or
    None when the form did not say (an old page, a hand-made request)."""
    raw = request.form.get("variant", "")
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 19 else None


@bp.route("/exercises/<quiz_id>/<name>", methods=["GET", "POST"])
@login_required
@limiter.limit(limit("QUIZAPP_LIMIT_SUBMIT"), methods=["POST"])
def exercise(quiz_id: str, name: str) -> tuple[str, int] | Response:
    exercise = services.get_exercise(db.session, f"{quiz_id}/{name}")
    services.check_quiz_visible(exercise.quiz, _user())
    if request.method == "GET":
        return render_exercise(exercise)
    secret = current_app.config["QUIZAPP_SEED_SECRET"]
    variant = services.get_or_create_variant(db.session, _user(), exercise, secret)
    form = services.stored_answer_form(variant)
    if not _form_body_is_utf8():
        return render_exercise(
            exercise,
            error="The answer is not valid text (invalid UTF-8); it used no attempt. "
            "Type it again, or paste it from a plain-text source.",
            status=400,
        )
    posted = display.read_posted_answer(form, request.form)
    for_variant = _posted_variant_id()
    if posted is None or (isinstance(posted, str) and not posted.strip()):
        return render_exercise(
            exercise, posted=posted, error="Type an answer before submitting.", status=400
        )
    try:
        result = services.submit(
            db.session,
            _user(),
            exercise.id,
            posted,
            seed_secret=secret,
            source="web",
            variant=variant,
            for_variant=for_variant,
        )
    except services.BadRequest as err:
        return render_exercise(exercise, posted=None, error=err.message, status=400)
    except (services.Conflict, services.Forbidden) as err:
        return render_exercise(exercise, posted=posted, error=err.message, status=err.status)
    keep = posted if result.verdict.get("status") == "invalid" else None
    return render_exercise(exercise, result=result, posted=keep)


@bp.route("/exercises/<quiz_id>/<name>/new-variant", methods=["POST"])
@login_required
def new_variant(quiz_id: str, name: str) -> Response | tuple[str, int]:
    exercise = services.get_exercise(db.session, f"{quiz_id}/{name}")
    services.check_quiz_visible(exercise.quiz, _user())
    form = EmptyForm()
    if not form.validate_on_submit():
        return redirect(url_for("student.exercise", quiz_id=quiz_id, name=name))
    try:
        variant: Variant = services.new_practice_variant(
            db.session, _user(), exercise, current_app.config["QUIZAPP_SEED_SECRET"]
        )
    except services.Conflict as err:
        return render_exercise(exercise, error=err.message, status=409)
    flash(
        f"This is variant {variant.variant_number}: new numbers, for practice "
        "(your score stays that of variant 1).",
        "info",
    )
    return redirect(url_for("student.exercise", quiz_id=quiz_id, name=name))
