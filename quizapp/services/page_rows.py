"""The exercise page's read: the exercise, its quiz and the student's current variant as plain
rows (frozen dataclasses), in one SQLAlchemy Core statement.

A page GET only reads these three: it never changes them, so it needs no ORM objects.  Loading
the same columns as ORM objects (identity map, instrumented state, the joined eager load of the
quiz) cost about twice as much per GET on SQLite (measured in benchmarks/NOTES.md, issue 11).
The write paths (submit, a variant's creation) keep the ORM objects; the page they render takes
these rows, converted with ``ExerciseRow.of`` and ``VariantRow.of``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, and_, bindparam, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from quizapp.models import Exercise, Quiz, User, Variant
from quizapp.page import has_key_page, key_page_paths
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
    is shown (``page``) and graded against (``record``), both as stored at creation.

    :func:`read_exercise_page` reads the ``page`` of a variant not finished (``finished_at``
    NULL) without its answer key's keys (``quizapp.page.KEY_PAGE_KEYS``: the worked solution
    and the expected answer, about half of its bytes), which such a page never shows;
    :attr:`keyed` says whether they are there and :func:`with_key_page` reads them."""

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
    def keyed(self) -> bool:
        """The ``page`` holds its answer key's keys (a whole stored page)."""
        return has_key_page(self.page)

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


class _ShownPage(FunctionElement[Any]):
    """``variants.page`` as the exercise page needs it: whole once the variant is finished
    (``finished_at`` set), else without :data:`~quizapp.page.KEY_PAGE_KEYS` (at the top and in
    its parts, ``quizapp.page.key_page_paths``), removed in the database (SQLite's
    ``json_remove``, PostgreSQL's ``jsonb #-`` operator), so the worked
    solution is neither sent to Python nor decoded there.  Decoding it was about 8 % of an
    unfinished page's GET on SQLite (benchmarks/NOTES.md, issue 11).  Other databases read the
    whole page."""

    type = JSON()
    inherit_cache = True
    name = "shown_page"


@compiles(_ShownPage)
def _shown_page_whole(element: _ShownPage, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(_V.c.page, **kw)


@compiles(_ShownPage, "sqlite")
def _shown_page_sqlite(element: _ShownPage, compiler: SQLCompiler, **kw: Any) -> str:
    page = compiler.process(_V.c.page, **kw)
    paths = ", ".join(
        "'$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) + "'"
        for path in key_page_paths()
    )
    finished = compiler.process(_V.c.finished_at, **kw)
    return f"CASE WHEN {finished} IS NULL THEN json_remove({page}, {paths}) ELSE {page} END"


@compiles(_ShownPage, "postgresql")
def _shown_page_postgresql(element: _ShownPage, compiler: SQLCompiler, **kw: Any) -> str:
    page = compiler.process(_V.c.page, **kw)
    trimmed = f"CAST({page} AS JSONB)"
    for path in key_page_paths():
        trimmed = f"({trimmed} #- '{{{','.join(str(p) for p in path)}}}')"
    finished = compiler.process(_V.c.finished_at, **kw)
    return f"CASE WHEN {finished} IS NULL THEN CAST({trimmed} AS JSON) ELSE {page} END"


#: The exercise with its quiz and, when it exists, the student's current variant (the number in
#: their progress row, 1 without one; its page as :class:`_ShownPage` reads it); parameters
#: ``eid``, ``uid``.  Built once.
_PAGE_ROWS = (
    select(
        *(_E.c[name] for name in _EXERCISE_FIELDS),
        *(_Q.c[name] for name in _QUIZ_FIELDS),
        *(_V.c[name] for name in _VARIANT_FIELDS if name != "page"),
        _ShownPage().label("page"),
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
_WHOLE_PAGE = select(_V.c.page).where(_V.c.id == bindparam("vid"))
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


def with_key_page(session: Session, variant: VariantRow) -> VariantRow:
    """``variant`` with its whole stored page: itself when :attr:`VariantRow.keyed`, else with
    the page read again in full (one primary-key SELECT; a page that shows the worked solution
    of a variant whose ``finished_at`` is not set yet, e.g. one finished by its submissions
    before a regrade recorded it).  Raises nothing of its own."""
    if variant.keyed:
        return variant
    page = session.connection().execute(_WHOLE_PAGE, {"vid": variant.id}).scalar_one()
    return replace(variant, page=page)
