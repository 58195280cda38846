"""Use cases of the app: accounts and tokens, bank sync, variants, submissions, progress.

Pure of Flask: every function takes a SQLAlchemy ``Session`` and plain values (no request, no
``current_user``), so the web pages, the JSON API, the CLI and tests share one implementation.
One module per use case; imports point down only (``transactions`` and ``errors`` at the bottom,
then ``text``, ``totals``, ``accounts``, ``tokens``, the deadline rules ``schedules`` and
``points``, ``sync``, ``variants``, the audited instructor actions ``audit``, ``extensions`` and
``overrides``, then ``answer_input``, ``part_answers``, ``preview``, ``submissions``,
``progress``). This package re-exports the public names of the use cases, so callers write
``services.submit(...)``; the deadline and instructor-action modules are imported by name
(``from quizapp.services import extensions``).

Transactions: functions that write end the caller's open (read) transaction and run their writes
in a transaction begun with :func:`begin_write`, which on SQLite is ``BEGIN IMMEDIATE`` (the write
lock is taken up front, so concurrent writers queue instead of failing with "database is locked")
and on PostgreSQL locks the student's progress row with ``SELECT ... FOR UPDATE``.  Either way,
concurrent submits of one (user, exercise) are serialized and cannot use more than the allowed
attempts.  They commit before returning.
"""

from __future__ import annotations

from quizapp.models import utcnow
from quizapp.services.accounts import (
    PASSWORD_MAX,
    PASSWORD_MIN,
    USERNAME_BAD_START,
    USERNAME_RE,
    authenticate,
    change_password,
    create_user,
    end_sessions,
    expire_reset_links,
    find_user,
    revoke_everything,
    set_password,
    validate_display_name,
    validate_email,
    validate_password,
    validate_username,
)
from quizapp.services.answer_input import (
    MAX_ANSWER_CHARS,
    MAX_CELL_CHARS,
    MAX_GRID,
    answer_grid_shape,
    canonical_answer,
    check_grid_shape,
    decode_raw_answer,
    encode_raw_answer,
    grid_text,
    normalize_answer,
)
from quizapp.services.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    ServiceError,
    Unavailable,
)
from quizapp.services.page_rows import (
    ExerciseRow,
    QuizRow,
    VariantRow,
    read_exercise_page,
    with_key_page,
)
from quizapp.services.preview import PreviewResult, preview_answer
from quizapp.services.progress import (
    ExerciseSummary,
    PositionEntry,
    QuizPosition,
    QuizSummary,
    course_points,
    quiz_points,
    quiz_position,
    quiz_summaries,
    recompute_progress,
)
from quizapp.services.submissions import (
    SubmissionRow,
    SubmitResult,
    json_safe,
    stored_verdict,
    submission_rows,
    submit,
    variant_submissions,
    verdict_json,
)
from quizapp.services.sync import SyncReport, sync_bank, sync_folder
from quizapp.services.text import db_safe, name_problem, printable_text
from quizapp.services.tokens import (
    TOKEN_TOUCH_SECONDS,
    create_api_token,
    hash_token,
    revoke_api_token,
    user_for_token,
)
from quizapp.services.transactions import (
    WRITE_OPTION,
    begin_write,
    is_conflict,
    retry_conflicts,
)
from quizapp.services.variants import (
    EXERCISE_ID_RE,
    MAX_VARIANT_ID,
    Drawn,
    StoredRecord,
    VariantState,
    answered_variant_id,
    bank_exercise,
    check_quiz_visible,
    create_progress,
    draw_variant,
    ensure_progress,
    generate_preview,
    get_exercise,
    get_exercise_and_variant,
    get_or_create_variant,
    get_progress,
    new_practice_variant,
    stored_answer_form,
    stored_part_forms,
    stored_variant,
    variant_state,
)

__all__ = [
    "EXERCISE_ID_RE",
    "MAX_VARIANT_ID",
    "MAX_ANSWER_CHARS",
    "MAX_CELL_CHARS",
    "MAX_GRID",
    "PASSWORD_MAX",
    "PASSWORD_MIN",
    "TOKEN_TOUCH_SECONDS",
    "USERNAME_BAD_START",
    "USERNAME_RE",
    "WRITE_OPTION",
    "BadRequest",
    "Drawn",
    "ExerciseRow",
    "QuizRow",
    "VariantRow",
    "read_exercise_page",
    "with_key_page",
    "Conflict",
    "ExerciseSummary",
    "Forbidden",
    "NotFound",
    "PreviewResult",
    "PositionEntry",
    "QuizPosition",
    "QuizSummary",
    "ServiceError",
    "SubmissionRow",
    "SubmitResult",
    "SyncReport",
    "Unavailable",
    "VariantState",
    "authenticate",
    "change_password",
    "end_sessions",
    "expire_reset_links",
    "revoke_everything",
    "set_password",
    "validate_password",
    "answered_variant_id",
    "bank_exercise",
    "preview_answer",
    "quiz_position",
    "begin_write",
    "is_conflict",
    "retry_conflicts",
    "canonical_answer",
    "answer_grid_shape",
    "check_grid_shape",
    "check_quiz_visible",
    "create_progress",
    "create_api_token",
    "create_user",
    "db_safe",
    "decode_raw_answer",
    "draw_variant",
    "encode_raw_answer",
    "ensure_progress",
    "find_user",
    "generate_preview",
    "get_exercise",
    "grid_text",
    "get_exercise_and_variant",
    "get_or_create_variant",
    "get_progress",
    "hash_token",
    "json_safe",
    "stored_verdict",
    "verdict_json",
    "name_problem",
    "new_practice_variant",
    "normalize_answer",
    "printable_text",
    "course_points",
    "quiz_points",
    "quiz_summaries",
    "recompute_progress",
    "revoke_api_token",
    "stored_answer_form",
    "stored_part_forms",
    "stored_variant",
    "StoredRecord",
    "submission_rows",
    "submit",
    "sync_bank",
    "sync_folder",
    "user_for_token",
    "utcnow",
    "validate_display_name",
    "validate_email",
    "validate_username",
    "variant_state",
    "variant_submissions",
]
