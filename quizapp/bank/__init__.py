"""The exercise bank: YAML authoring, schema, seeded variants, expression exercises.

Pure: no Flask, no database.  Public API::

    load_bank(root) -> Bank                      # never raises for a bad file (Bank.errors)
    load_exercise_source(exercise_id, yaml) -> Exercise   # raises BankError; cached by hash
    Exercise.generate(seed) -> Variant           # pure, deterministic
    derive_seed(secret, user_id, exercise_id, variant_number) -> int
    grade_answer(variant, answer) -> Verdict     # from quizapp.bank.answers
    expected_answer_text(variant) -> str         # idem
    shown_answer_text(variant) -> str            # idem: without float noise, still correct
    preview_answer(variant, answer) -> AnswerPreview   # idem: how an answer is read, ungraded
"""

from __future__ import annotations

from quizapp.bank.answers import (
    AnswerPreview,
    expected_answer_text,
    grade_answer,
    preview_answer,
    shown_answer_text,
)
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
    "shown_answer_text",
]
