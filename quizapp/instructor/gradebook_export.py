"""The gradebook as tables (the page's and the per-part one) and as CSV, safe against formula
injection (:func:`csv_cell`); :func:`iter_gradebook_csv` streams the whole course in batches
without building the gradebook in memory."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import reduce
from itertools import chain, groupby
from operator import add, itemgetter
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.instructor.course import CourseConfig
from quizapp.instructor.gradebook import (
    _ROSTER,
    Gradebook,
    GradebookQuiz,
    GradebookRow,
    QuizTotal,
    _number,
    _scope,
    cell_marker,
    course_percent,
    fmt_points,
)
from quizapp.models import (
    Exercise,
    Progress,
    User,
)
from quizapp.models_instructor import Excusal

#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str | float | int:
    """A value as a CSV cell, safe against formula injection.

    Numbers stay numbers (a negative number is data, not a formula).  A text starting with
    ``= + - @``, a tab or a carriage return gets a leading apostrophe, which spreadsheets show as
    text (OWASP's recommendation for CSV injection).  None becomes an empty cell.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return _number(value)
    text = services.printable_text(str(value))  # no NUL or lone surrogate in the file
    if text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


#: The cell text of an excused exercise (Canvas's gradebook import reads ``EX`` as excused).
EXCUSED = "EX"


def gradebook_table(gb: Gradebook) -> list[list[Any]]:
    """The gradebook as rows of cells (header first), one row per student.

    Columns: ``username``, ``display_name``, ``email``, one column per exercise
    (:func:`exercise_column`, ``<exercise id> <title> (<points>)``: the student's points, empty
    if never attempted, ``EX`` if excused), one per quiz (``<quiz id> total (<points>)``: earned
    points), ``<quiz id> %``, ``course total %`` (weighted, see :func:`course_percent`), then
    ``late credit`` and ``overrides``: the student's cells whose points came from a late (or
    reduced-credit) attempt, ``<exercise id>: late 50%``, and those an instructor set by hand,
    ``<exercise id>: <reason>``, each list joined by ``; `` (empty when none).
    """
    table = [_header(gb.quizzes)]
    table.extend(_table_row(gb.quizzes, row) for row in gb.rows)
    return table


#: The two note columns at the end of the CSV.
LATE_COLUMN = "late credit"


OVERRIDES_COLUMN = "overrides"


def exercise_column(exercise: Exercise) -> str:
    """The CSV header of an exercise's column: ``<id> <title> (<points>)``."""
    return f"{exercise.id} {exercise.title} ({fmt_points(exercise.points)})"


def _header(quizzes: Sequence[GradebookQuiz]) -> list[Any]:
    header: list[Any] = ["username", "display_name", "email"]
    for q in quizzes:
        for ex in q.exercises:
            header.append(exercise_column(ex))
    for q in quizzes:
        header.append(f"{q.id} total ({fmt_points(q.points)})")
        header.append(f"{q.id} %")
    header.append("course total %")
    header.append(LATE_COLUMN)
    header.append(OVERRIDES_COLUMN)
    return header


def _notes(marks: Iterable[tuple[str, str]]) -> tuple[str, str]:
    """The ``late credit`` and ``overrides`` cells from (exercise id, marker) pairs."""
    late: list[str] = []
    over: list[str] = []
    for ex_id, marker in marks:
        if marker.startswith("override: "):
            over.append(f"{ex_id}: {marker.removeprefix('override: ')}")
        elif marker:
            late.append(f"{ex_id}: {marker}")
    return "; ".join(late), "; ".join(over)


def _table_row(quizzes: Sequence[GradebookQuiz], row: GradebookRow) -> list[Any]:
    out: list[Any] = [row.username, row.display_name, row.email]
    marks: list[tuple[str, str]] = []
    for q in quizzes:
        for ex in q.exercises:
            cell = row.cells[ex.id]
            out.append(EXCUSED if cell.excused else cell.points)
            if not cell.excused and cell.marker:
                marks.append((ex.id, cell.marker))
    for q in quizzes:
        t = row.quiz_totals[q.id]
        out.append(t.earned)
        out.append(None if t.percent is None else round(t.percent, 2))
    out.append(None if row.course_percent is None else round(row.course_percent, 2))
    out.extend(_notes(marks))
    return out


def gradebook_parts_table(gb: Gradebook) -> list[list[Any]]:
    """The per-part scores of the multi-part exercises, one row per student, exercise and part
    of their best submission (header first): ``username``, ``display_name``, ``email``,
    ``exercise``, ``part``, ``points available``, ``points``, ``score``, ``follow-through``
    (1 when the part's points came from the student's own earlier answers).  Excused cells are
    left out.  The main gradebook CSV keeps one column per exercise (what an LMS imports)."""
    table: list[list[Any]] = [
        [
            "username",
            "display_name",
            "email",
            "exercise",
            "part",
            "points available",
            "points",
            "score",
            "follow-through",
        ]
    ]
    for row in gb.rows:
        for ex in gb.exercises:
            cell = row.cells[ex.id]
            if cell.excused or not cell.parts:
                continue
            for name, part in cell.parts.items():
                table.append(
                    [
                        row.username,
                        row.display_name,
                        row.email,
                        ex.id,
                        name,
                        part.available,
                        part.points,
                        round(part.score, 4),
                        int(part.follow_through),
                    ]
                )
    return table


def write_csv(table: Iterable[Sequence[Any]]) -> str:
    """CSV text (RFC 4180, CRLF line ends) of ``table``, every cell through :func:`csv_cell`."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    for row in table:
        writer.writerow([csv_cell(v) for v in row])
    return buf.getvalue()


def gradebook_csv(gb: Gradebook) -> str:
    """The gradebook as CSV text (see :func:`gradebook_table` for the columns)."""
    return write_csv(gradebook_table(gb))


def _csv_line(row: Sequence[Any]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow([csv_cell(v) for v in row])
    return buf.getvalue()


def iter_gradebook_csv(
    session: Session, *, quiz_id: str | None = None, config: CourseConfig | None = None
) -> Iterator[str]:
    """The gradebook CSV (same text as ``gradebook_csv(gradebook(...))``) as lines, streamed.

    Two Core queries ordered alike (username key, id): the students (id and the three text
    columns), and their attempted (or overridden) cells (user id, exercise id, best points, late,
    credit, override points and reason) read in batches
    (``yield_per``) and consumed in step with the students, so memory holds the roster's
    tuples and one student's row whatever the class size.  Each line is built directly from the
    tuples: the number cells are formatted once per distinct value (what :func:`csv_cell` and the
    ``csv`` writer make of a number) and only the three text cells go through :func:`csv_cell`
    and the ``csv`` writer.
    Raises ``services.NotFound`` for an unknown quiz (before the first line).
    """
    config, exercises, quizzes = _scope(session, quiz_id, config)
    ids = [e.id for e in exercises]
    columns = [(e.id, e.quiz_id, float(e.points)) for e in exercises]
    groups = list(quizzes.values())
    excused: dict[int, set[str]] = {}
    for user_id, exercise_id in session.execute(
        select(Excusal.user_id, Excusal.exercise_id).where(Excusal.exercise_id.in_(ids))
    ):
        excused.setdefault(user_id, set()).add(exercise_id)
    cells = (
        select(
            User.id,
            Progress.exercise_id,
            Progress.best_points,
            Progress.best_late,
            Progress.best_credit,
            Progress.override_points,
            Progress.override_reason,
        )
        .select_from(User)
        .join(
            Progress,
            and_(
                Progress.user_id == User.id,
                or_(Progress.attempts_used > 0, Progress.override_points.is_not(None)),
            ),
        )
        .where(User.role == "student")
        .order_by(User.username_key, User.id)
    )
    return _stream_lines(session, _ROSTER, cells, groups, columns, excused, config)


class _CellText(dict[Any, str]):
    """Number -> its CSV cell text (what :func:`csv_cell` and the ``csv`` writer make of it),
    computed once per distinct value; None -> the empty cell."""

    def __missing__(self, value: float) -> str:
        text = self[value] = str(_number(value))
        return text


def _sequential_sum(values: Iterable[float]) -> float:
    """``0.0 + v1 + v2 + ...`` left to right (what ``_student_row`` computes; ``sum()`` of floats
    is compensated from Python 3.12 on and could differ in the last bit)."""
    return reduce(add, values, 0.0)


def _raw_rows(conn: Any, stmt: Any, batch: int = 2000) -> Iterator[Sequence[Any]]:
    """The rows of ``stmt`` as the driver's tuples, fetched ``batch`` at a time."""
    return chain.from_iterable(_raw_batches(conn, stmt, batch))


def _raw_batches(conn: Any, stmt: Any, batch: int) -> Iterator[Sequence[Sequence[Any]]]:
    """The rows of ``stmt`` in lists of up to ``batch`` rows.

    On SQLite straight from the DBAPI cursor (the statement's parameters are plain strings and
    integers, which need no SQLAlchemy bind processing): 400,000 rows cost about a third less
    than through SQLAlchemy's ``Row`` objects.  Elsewhere ``yield_per`` (a server-side cursor
    on PostgreSQL, so memory stays flat)."""
    if conn.dialect.name != "sqlite":
        yield from conn.execute(stmt).yield_per(batch).partitions()
        return
    compiled = stmt.compile(dialect=conn.dialect)
    params = compiled.construct_params()
    args = tuple(params[name] for name in compiled.positiontup or ())
    cursor = conn.connection.cursor()
    try:
        cursor.execute(str(compiled), args)
        while chunk := cursor.fetchmany(batch):
            yield chunk
    finally:
        cursor.close()


def _stream_lines(
    session: Session,
    students: Any,
    cells_stmt: Any,
    groups: list[GradebookQuiz],
    columns: list[tuple[str, str, float]],
    excused: dict[int, set[str]],
    config: CourseConfig,
) -> Iterator[str]:
    """The CSV lines.  ``students`` (id, username, display name, email) and ``cells_stmt`` (user
    id, exercise id, best points of attempted exercises) are ordered alike (username key, id), so
    the cells are consumed in step with the students: a student without a cell row has none."""
    yield _csv_line(_header(groups))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="")
    shown = _CellText()
    shown[None] = ""
    quiz_ids = [q.id for q in groups]
    ids = [ex_id for ex_id, _, _ in columns]
    # Each quiz's columns as one slice (live_exercises orders them quiz by quiz, as the header).
    slices: list[tuple[int, int]] = []
    runs: list[str] = []
    for k, (_, ex_quiz, _) in enumerate(columns):
        if runs and runs[-1] == ex_quiz:
            slices[-1] = (slices[-1][0], k + 1)
        else:
            runs.append(ex_quiz)
            slices.append((k, k + 1))
    contiguous = runs == quiz_ids
    available_all = [_sequential_sum(ex[2] for ex in columns[a:b]) for a, b in slices]
    conn = session.connection()
    roster = conn.execute(students).all()  # 10,000 students: a few MB
    listed = {r[0] for r in roster}
    # (user id, that student's cell rows), in the roster's order
    per_student = groupby(_raw_rows(conn, cells_stmt), itemgetter(0))
    pending = next(per_student, None)
    for user_id, username, display_name, email in roster:
        while pending is not None and pending[0] not in listed:
            pending = next(per_student, None)  # a student who registered after the roster
        mine: dict[str, float] = {}
        marked: dict[str, str] = {}
        if pending is not None and pending[0] == user_id:
            # exercise id -> best points; only the live exercises' columns are read below
            for _, ex_id, points, late, credit, over, why in pending[1]:
                mine[ex_id] = points
                if late or over is not None or credit < 1:
                    marked[ex_id] = cell_marker(
                        bool(late), credit, (why or "") if over is not None else None
                    )
            pending = next(per_student, None)
        skip = excused.get(user_id)
        if contiguous and not skip:
            values = list(map(mine.get, ids))
            line = list(map(shown.__getitem__, values))
            earned = [_sequential_sum(filter(None, values[a:b])) for a, b in slices]
            available = available_all
        else:
            line, earned, available = _cells_one_by_one(mine, columns, quiz_ids, skip, shown)
        totals = {
            q: QuizTotal(round(earned[k], 6), round(available[k], 6))
            for k, q in enumerate(quiz_ids)
        }
        for t in totals.values():
            line.append(shown[t.earned])
            percent = t.percent
            line.append("" if percent is None else shown[round(percent, 2)])
        overall = course_percent(totals, config)
        line.append("" if overall is None else shown[round(overall, 2)])
        late_note, over_note = _notes(
            (ex_id, marked[ex_id])
            for ex_id in ids
            if ex_id in marked and not (skip and ex_id in skip)
        )
        writer.writerow(
            [
                csv_cell(username),
                csv_cell(display_name or ""),
                csv_cell(email or ""),
                csv_cell(late_note),
                csv_cell(over_note),
            ]
        )
        text = buf.getvalue()
        buf.seek(0)
        buf.truncate()
        first, _, rest = _split_three(text)
        yield first + "," + ",".join(line) + "," + rest + "\r\n"


def _split_three(text: str) -> tuple[str, str, str]:
    """A CSV line of five cells (username, display name, email, late note, overrides note) as
    (the first three, "", the last two), splitting at the third unquoted comma."""
    quoted = False
    commas = 0
    for k, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            commas += 1
            if commas == 3:
                return text[:k], "", text[k + 1 :]
    raise AssertionError("a line of five cells has four commas")


def _cells_one_by_one(
    mine: Mapping[str, float],
    columns: Sequence[tuple[str, str, float]],
    quiz_ids: list[str],
    skip: set[str] | None,
    shown: _CellText,
) -> tuple[list[str], list[float], list[float]]:
    """A student's cell texts, earned and available points per quiz (in ``quiz_ids`` order),
    column by column: for a student with excusals (``EX`` cells, left out of both sums)."""
    slot = {q: k for k, q in enumerate(quiz_ids)}
    earned = [0.0] * len(quiz_ids)
    available = [0.0] * len(quiz_ids)
    line: list[str] = []
    for ex_id, ex_quiz, ex_points in columns:
        if skip and ex_id in skip:
            line.append(EXCUSED)
            continue
        points = mine.get(ex_id)
        line.append(shown[points])
        if points is not None:
            earned[slot[ex_quiz]] += points
        available[slot[ex_quiz]] += ex_points
    return line, earned, available
