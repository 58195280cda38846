"""The exercise bank: YAML authoring, schema, seeded variants, expression exercises.

Pure: no Flask, no database.  Public API::

    load_bank(root) -> Bank                      # never raises for a bad file (Bank.errors)
    load_exercise_source(exercise_id, yaml) -> Exercise   # raises BankError; cached by hash
    Exercise.generate(seed) -> Variant           # pure, deterministic
    derive_seed(secret, user_id, exercise_id, variant_number) -> int
    grade_answer(variant, answer) -> Verdict     # from quizapp.bank.answers (bank kinds)
    expected_answer_text(variant) -> str         # idem
    preview_answer(variant, answer) -> AnswerPreview   # idem: how an answer is read, ungraded
"""

from __future__ import annotations

from typing import Any

from quizapp.bank.loader import (
    Bank,
    Exercise,
    Quiz,
    load_bank,
    load_exercise_file,
    load_exercise_source,
)
from quizapp.bank.seeds import derive_seed
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep, Variant
from quizapp.bank.yamlio import BankError

_FROM_ANSWERS = ("grade_answer", "expected_answer_text", "preview_answer", "AnswerPreview")


def __getattr__(name: str) -> Any:
    # grade_answer/expected_answer_text live in quizapp.bank.answers (written with the exercise
    # kinds); imported on first use so this package works without it and without an import cycle.
    if name in _FROM_ANSWERS:
        try:
            from quizapp.bank import answers
        except ImportError as exc:
            # AttributeError, so that hasattr()/getattr(..., default) work as for any attribute.
            raise AttributeError(
                f"quizapp.bank.{name} needs quizapp.bank.answers, which is not installed ({exc})"
            ) from None
        return getattr(answers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AnswerForm",
    "AnswerPreview",
    "Bank",
    "BankError",
    "Exercise",
    "Generated",
    "Kind",
    "KindParams",
    "Quiz",
    "SolutionStep",
    "Variant",
    "derive_seed",
    "expected_answer_text",
    "grade_answer",
    "load_bank",
    "load_exercise_file",
    "load_exercise_source",
    "preview_answer",
]
