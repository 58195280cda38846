"""The exercise page's read: the exercise, its quiz and the student's current variant as plain
rows (frozen dataclasses), in one SQLAlchemy Core statement.

A page GET only reads these three: it never changes them, so it needs no ORM objects.  Loading
the same columns as ORM objects (identity map, instrumented state, the joined eager load of the
quiz) cost about twice as much per GET on SQLite (measured in benchmarks/NOTES.md, issue 11).
The write paths (submit, a variant's creation) keep the ORM objects; the page they render takes
these rows, converted with ``ExerciseRow.of`` and ``VariantRow.of``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, select
from sqlalchemy.orm import Session

from quizapp.models import Exercise, Quiz, User, Variant
from quizapp.services.variants import CURRENT_NUMBER, check_exercise_id, live_exercise


@dataclass(frozen=True, slots=True)
class QuizRow:
    """What the exercise page reads of a quiz (``quizzes`` columns of the same names)."""

    id: str
    title: str
    opens_at: datetime | None
    closes_at: datetime | None
    late: list[dict[str, Any]]
    timezone: str
    archived: bool

    @classmethod
    def of(cls, quiz: Quiz) -> QuizRow:
        """The row of an ORM ``Quiz``."""
        return cls(*(getattr(quiz, name) for name in _QUIZ_FIELDS))


@dataclass(frozen=True, slots=True)
class ExerciseRow:
    """What the exercise page reads of an exercise (``exercises`` columns), with its quiz."""

    quiz: QuizRow
    id: str
    quiz_id: str
    title: str
    points: float
    attempts: int
    practice: bool
    archived: bool

    @classmethod
    def of(cls, exercise: Exercise) -> ExerciseRow:
        """The row of an ORM ``Exercise`` (its quiz loaded with it)."""
        values = [getattr(exercise, name) for name in _EXERCISE_FIELDS]
        return cls(QuizRow.of(exercise.quiz), *values)


@dataclass(frozen=True, slots=True)
class VariantRow:
    """A stored variant as the exercise page reads it (``variants`` columns): what the student
    is shown (``page``) and graded against (``record``), both as stored at creation."""

    id: int
    user_id: int
    exercise_id: str
    variant_number: int
    version_id: int
    finished_at: datetime | None
    rekeyed_at: datetime | None
    record: dict[str, Any]
    page: dict[str, Any]

    @property
    def is_practice(self) -> bool:
        """A practice variant (number 2, 3, ...): only variant 1 counts for the score."""
        return self.variant_number > 1

    @classmethod
    def of(cls, variant: Variant) -> VariantRow:
        """The row of an ORM ``Variant`` (its stored columns loaded)."""
        return cls(*(getattr(variant, name) for name in _VARIANT_FIELDS))


_QUIZ_FIELDS = tuple(f for f in QuizRow.__dataclass_fields__)
_EXERCISE_FIELDS = tuple(f for f in ExerciseRow.__dataclass_fields__ if f != "quiz")
_VARIANT_FIELDS = tuple(VariantRow.__dataclass_fields__)

_Q, _E, _V = Quiz.__table__, Exercise.__table__, Variant.__table__
#: The exercise with its quiz and, when it exists, the student's current variant (the number in
#: their progress row, 1 without one); parameters ``eid``, ``uid``.  Built once.
_PAGE_ROWS = (
    select(
        *(_E.c[name] for name in _EXERCISE_FIELDS),
        *(_Q.c[name] for name in _QUIZ_FIELDS),
        *(_V.c[name] for name in _VARIANT_FIELDS),
    )
    .select_from(
        _E.join(_Q, _Q.c.id == _E.c.quiz_id).outerjoin(
            _V,
            and_(
                _V.c.exercise_id == _E.c.id,
                _V.c.user_id == bindparam("uid"),
                _V.c.variant_number == CURRENT_NUMBER,
            ),
        )
    )
    .where(_E.c.id == bindparam("eid"))
)
_NE, _NQ = len(_EXERCISE_FIELDS), len(_QUIZ_FIELDS)


def read_exercise_page(
    session: Session, exercise_id: str, user: User
) -> tuple[ExerciseRow, VariantRow | None]:
    """The exercise ``exercise_id`` with its quiz, and ``user``'s current variant of it (None
    when they have none yet: ``services.get_or_create_variant`` creates it), in one statement.

    Raises ``NotFound`` for an unknown or malformed id and for an archived exercise or quiz
    (as ``services.get_exercise``)."""
    check_exercise_id(exercise_id)
    row = session.connection().execute(_PAGE_ROWS, {"eid": exercise_id, "uid": user.id}).first()
    exercise = live_exercise(
        None if row is None else ExerciseRow(QuizRow(*row[_NE : _NE + _NQ]), *row[:_NE])
    )
    assert row is not None  # no row: live_exercise raised NotFound
    stored = row[_NE + _NQ :]
    return exercise, (VariantRow(*stored) if stored[0] is not None else None)
