"""The answer preview: how an answer would be read on the student's variant, storing nothing."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from quizapp.models import User, Variant
from quizapp.services.answer_input import check_grid_shape, normalize_answer
from quizapp.services.errors import BadRequest, Conflict
from quizapp.services.part_answers import check_part_shapes, normalize_part_answers
from quizapp.services.variants import (
    _current_variant,
    _prepare,
    check_answered_variant,
    check_quiz_visible,
    get_exercise,
    get_progress,
    stored_variant,
)

if TYPE_CHECKING:
    from quizapp.bank import Variant as BankVariant

log = logging.getLogger(__name__)


@dataclass
class PreviewResult:
    """The outcome of :func:`preview_answer`: how the answer is read (``preview``, a
    ``quizapp.bank.AnswerPreview``) on the student's variant (``bank_variant``, as stored or as
    it would be stored), with that variant's stored option HTML (``choices_html``, None unless a
    choice) for showing a chosen option as the student saw it."""

    preview: Any
    bank_variant: BankVariant
    choices_html: list[str] | None = None


def preview_answer(
    session: Session,
    user: User,
    exercise_id: str,
    answer: Any,
    *,
    seed_secret: str | bytes,
    variant: Variant | None = None,
    for_variant: int | None = None,
) -> PreviewResult:
    """How ``answer`` would be read if ``user`` submitted it now to their current variant of
    ``exercise_id``: the answer preview.  Reads only: no submission, no attempt, no progress, and
    no variant is stored.  The variant is the stored one (``stored_variant``: what the student
    was shown); a student who never opened the exercise gets the one they will be given (drawn
    as :func:`quizapp.services.variants.get_or_create_variant` would draw it, but not stored).

    ``answer`` and ``for_variant`` are what :func:`submit` takes (text, or a grid of cell
    strings; the id of the variant the answer was written for), checked the same way: raises
    ``BadRequest`` for a malformed answer or a grid whose shape differs from the form's
    (:func:`check_grid_shape`), ``Conflict`` when ``for_variant`` is not the current variant,
    ``NotFound`` (unknown exercise), ``Forbidden`` (quiz not open yet), ``Unavailable`` (the
    variant cannot be read or drawn).  Whether an attempt is left, or the quiz is closed, is not
    checked: a preview costs nothing, and the submission says so.  ``variant``: the student's
    current variant when the caller already loaded it (the web route does).
    """
    from quizapp.bank import AnswerPreview
    from quizapp.bank import preview_answer as read_answer
    from quizapp.bank.stored import thaw

    multi = isinstance(answer, dict)
    answer = normalize_part_answers(answer) if multi else normalize_answer(answer)
    exercise = get_exercise(session, exercise_id)
    check_quiz_visible(exercise.quiz, user)
    if variant is None or variant.user_id != user.id or variant.exercise_id != exercise.id:
        variant = _current_variant(session, user.id, exercise.id)
    if variant is not None:
        check_answered_variant(variant, for_variant)
        bank_variant = stored_variant(variant)
        page = variant.page
    else:
        if for_variant is not None:
            raise Conflict("You have no variant of this exercise yet; open it first.")
        progress = get_progress(session, user, exercise)
        number = progress.current_variant if progress else 1
        _version, drawn = _prepare(exercise, user.id, number, seed_secret)
        bank_variant, page = thaw(drawn.record), drawn.page
    if bank_variant.parts:
        if not multi:
            raise BadRequest('This exercise has parts: preview them by name ({"parts": ...}).')
        check_part_shapes(bank_variant, answer)
    elif multi:
        raise BadRequest("This exercise has one answer, not parts: send the answer itself.")
    else:
        check_grid_shape(bank_variant.answer_form, answer)
    try:
        preview = read_answer(bank_variant, answer)
    except Exception:  # a reader bug must not be a 500: the submission would be invalid too
        log.exception("preview failed for %s seed %s", exercise.id, bank_variant.seed)
        preview = AnswerPreview(
            "invalid", "This answer could not be read; please check its format."
        )
    choices = (page or {}).get("choices_html")
    return PreviewResult(preview=preview, bank_variant=bank_variant, choices_html=choices)
