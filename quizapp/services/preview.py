"""The answer preview: how an answer would be read on the student's variant, storing nothing."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from quizapp.models import User, Variant
from quizapp.services.answer_input import check_grid_shape, normalize_answer
from quizapp.services.errors import ServiceError, Unavailable
from quizapp.services.variants import (
    _current_variant,
    check_quiz_visible,
    generate_preview,
    generate_variant,
    get_exercise,
    get_progress,
)

if TYPE_CHECKING:
    from quizapp.bank import Variant as BankVariant

log = logging.getLogger(__name__)


@dataclass
class PreviewResult:
    """The outcome of :func:`preview_answer`: how the answer is read (``preview``, a
    ``quizapp.bank.AnswerPreview``) on the student's variant (``bank_variant``, whose answer
    form the page uses to show it)."""

    preview: Any
    bank_variant: BankVariant


def preview_answer(
    session: Session,
    user: User,
    exercise_id: str,
    answer: Any,
    *,
    seed_secret: str | bytes,
    variant: Variant | None = None,
) -> PreviewResult:
    """How ``answer`` would be read if ``user`` submitted it now to their current variant of
    ``exercise_id``: the answer preview.  Reads only: no submission, no attempt, no progress, and
    no variant is stored (a student who never opened the exercise gets the variant they will be
    given, generated from the same seed and the exercise's current version).

    ``answer`` is what :func:`submit` takes (text, or a grid of cell strings), checked the same
    way: raises ``BadRequest`` for a malformed answer or a grid whose shape differs from the
    form's (:func:`check_grid_shape`), ``NotFound`` (unknown exercise), ``Forbidden`` (quiz not
    open yet).  Whether an attempt is left, or the quiz is closed, is not checked: a preview
    costs nothing, and the submission says so.  ``variant``: the student's current variant when
    the caller already loaded it (the web route does).
    """
    from quizapp.bank import AnswerPreview, derive_seed
    from quizapp.bank import preview_answer as read_answer

    answer = normalize_answer(answer)
    exercise = get_exercise(session, exercise_id)
    check_quiz_visible(exercise.quiz, user)
    if variant is None or variant.user_id != user.id or variant.exercise_id != exercise.id:
        variant = _current_variant(session, user.id, exercise.id)
    if variant is not None:
        bank_variant = generate_variant(variant)
    else:
        progress = get_progress(session, user, exercise)
        number = progress.current_variant if progress else 1
        seed = derive_seed(seed_secret, user.id, exercise.id, number)
        try:
            bank_variant = generate_preview(exercise, seed)
        except ServiceError:
            raise
        except Exception as exc:
            log.exception("cannot generate %s seed %s", exercise.id, seed)
            raise Unavailable(
                f"This exercise cannot be shown right now ({exc}); please tell your instructor."
            ) from exc
    check_grid_shape(bank_variant.answer_form, answer)
    try:
        preview = read_answer(bank_variant, answer)
    except Exception:  # a reader bug must not be a 500: the submission would be invalid too
        log.exception("preview failed for %s seed %s", exercise.id, bank_variant.seed)
        preview = AnswerPreview(
            "invalid", "This answer could not be read; please check its format."
        )
    return PreviewResult(preview=preview, bank_variant=bank_variant)
