"""The gradebook (students x exercises, quiz totals, weighted course total), its CSV export
safe against formula injection, and excusals."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import chain, groupby
from operator import add, itemgetter
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.instructor._scope import get_quiz, live_exercises
from quizapp.instructor.course import CourseConfig
from quizapp.models import (
    Exercise,
    Progress,
    User,
)
from quizapp.models_instructor import Excusal
from quizapp.services import totals


@dataclass(slots=True)
class PartCell:
    """One part of a multi-part exercise in a student's cell: the points its best submission
    earned on it of those ``available``, and whether they came by follow-through."""

    points: float
    available: float
    score: float
    follow_through: bool = False


@dataclass(slots=True)
class GradebookCell:
    """One student x exercise cell: ``points`` (None: never attempted), or excused; ``late``
    and ``credit`` of the attempt that gave the points, ``override`` (the reason) when the
    instructor set them by hand; for a multi-part exercise ``parts`` (part name ->
    :class:`PartCell`) of the best submission (None when the points were set by hand)."""

    points: float | None
    excused: bool = False
    score: float | None = None
    late: bool = False
    credit: float = 1.0
    override: str | None = None
    parts: dict[str, PartCell] | None = None

    @property
    def marker(self) -> str:
        """The cell's note: ``override: REASON``, ``late 50%`` / ``credit 80%``, or ``""``."""
        return cell_marker(self.late, self.credit, self.override, self.points is not None)


def part_cells(
    best_parts: Any, exercise_points: float, credit: float = 1.0
) -> dict[str, PartCell] | None:
    """A progress row's ``best_parts`` as :class:`PartCell` objects, in points of the exercise's
    current ``exercise_points`` (each part's share of them) times the best attempt's late
    ``credit`` (so they add up to the cell's points); None for a single-answer exercise."""
    if not best_parts:
        return None
    out = {}
    for name, figures in best_parts.items():
        share = float(figures.get("share") or 0.0)
        score = float(figures.get("score") or 0.0)
        available = round(share * float(exercise_points), 6)
        out[str(name)] = PartCell(
            round(score * float(credit) * available, 6),
            available,
            score,
            bool(figures.get("follow_through")),
        )
    return out


def cell_marker(late: bool, credit: float, override: str | None, attempted: bool = True) -> str:
    """How the gradebook notes a cell's points: ``override: REASON`` when set by hand, else
    ``late 50%`` (the late credit of the best attempt) or ``credit 80%`` (an extension's reduced
    credit), else ``""``."""
    if override is not None:
        return f"override: {override}"
    if not attempted:
        return ""
    percent = f"{round(100 * float(credit), 2):g}%"
    if late:
        return f"late {percent}"
    if float(credit) < 1:
        return f"credit {percent}"
    return ""


@dataclass(slots=True)
class QuizTotal:
    """A student's points on one quiz, excused exercises left out of ``available``."""

    earned: float
    available: float

    @property
    def percent(self) -> float | None:
        return 100.0 * self.earned / self.available if self.available > 0 else None


@dataclass
class GradebookRow:
    """One student's row of the gradebook."""

    user_id: int
    username: str
    display_name: str
    email: str
    cells: dict[str, GradebookCell]
    quiz_totals: dict[str, QuizTotal]
    course_percent: float | None

    @property
    def earned(self) -> float:
        return sum(t.earned for t in self.quiz_totals.values())

    @property
    def available(self) -> float:
        return sum(t.available for t in self.quiz_totals.values())


@dataclass
class GradebookQuiz:
    """A quiz column group: its live exercises, points available, and its weight from
    ``course.yaml`` (None when the course total is weighted by points)."""

    id: str
    title: str
    exercises: list[Exercise]
    points: float
    weight: float | None  # from course.yaml; None when weighting by points


@dataclass
class Gradebook:
    """Students x exercises with per-quiz totals and the weighted course total (percent)."""

    quizzes: list[GradebookQuiz]
    rows: list[GradebookRow]
    weighted_by: str  # "course.yaml" or "points"
    #: paging (HTML page): 1-based page, students per page (None: all), students in all
    page: int = 1
    per_page: int | None = None
    students: int = 0

    @property
    def pages(self) -> int:
        if not self.per_page:
            return 1
        return max(1, -(-self.students // self.per_page))

    @property
    def exercises(self) -> list[Exercise]:
        return [e for q in self.quizzes for e in q.exercises]


def course_percent(
    totals: Mapping[str, QuizTotal], config: CourseConfig | None = None
) -> float | None:
    """The weighted course total in percent: ``sum_q w_q * earned_q / available_q / sum_q w_q``
    over the quizzes with points available to the student (a quiz the student is wholly excused
    from drops out and the other weights are renormalized).  Without ``weights`` in the course
    configuration, ``w_q = available_q`` (so it is total earned / total available).  None when no
    quiz with a positive weight has points available."""
    config = config or CourseConfig()
    num = den = 0.0
    for quiz_id, t in totals.items():
        if t.available <= 0:
            continue
        w = config.weight_of(quiz_id, t.available)
        if w <= 0:
            continue
        num += w * t.earned / t.available
        den += w
    return 100.0 * num / den if den > 0 else None


def _student_row(
    student: tuple[int, str, str | None, str | None],
    attempted: Mapping[str, tuple[Any, ...]],
    columns: Sequence[tuple[str, str, float]],
    quizzes: Mapping[str, GradebookQuiz],
    excused: set[tuple[int, str]],
    config: CourseConfig,
) -> GradebookRow:
    """One student's gradebook row from their attempted cells (exercise id -> (best points, best
    score, late, credit, override reason or None[, best parts])); ``columns`` are (exercise id,
    quiz id, points) of the live exercises, in order."""
    user_id, username, display_name, email = student
    cells: dict[str, GradebookCell] = {}
    per_quiz: dict[str, list[tuple[float, float | None, bool]]] = {q: [] for q in quizzes}
    for ex_id, ex_quiz, ex_points in columns:
        points, score, late, credit, override, *more = attempted.get(
            ex_id, (None, None, False, 1.0, None)
        )
        parts = part_cells(more[0], ex_points, credit) if more and override is None else None
        is_excused = bool(excused) and (user_id, ex_id) in excused
        if is_excused:
            cells[ex_id] = GradebookCell(points, excused=True, score=score, parts=parts)
        else:
            cells[ex_id] = GradebookCell(points, False, score, late, credit, override, parts)
        per_quiz[ex_quiz].append((ex_points, points, is_excused))
    totals = {q: QuizTotal(*services.quiz_points(cells_of)) for q, cells_of in per_quiz.items()}
    return GradebookRow(
        user_id=user_id,
        username=username,
        display_name=display_name or "",
        email=email or "",
        cells=cells,
        quiz_totals=totals,
        course_percent=course_percent(totals, config),
    )


def _quiz_groups(exercises: Sequence[Exercise], config: CourseConfig) -> dict[str, GradebookQuiz]:
    quizzes: dict[str, GradebookQuiz] = {}
    for ex in exercises:
        q = quizzes.get(ex.quiz_id)
        if q is None:
            weight = None if config.weights is None else config.weight_of(ex.quiz_id, 0)
            q = quizzes[ex.quiz_id] = GradebookQuiz(ex.quiz_id, ex.quiz.title, [], 0.0, weight)
        q.exercises.append(ex)
        q.points += float(ex.points)
    return quizzes


def _scope(
    session: Session, quiz_id: str | None, config: CourseConfig | None
) -> tuple[CourseConfig, list[Exercise], dict[str, GradebookQuiz]]:
    """The gradebook's columns: the course config (default if None), the live exercises (of
    ``quiz_id`` only if given) and their quiz groups.  Raises ``services.NotFound`` for an
    unknown quiz."""
    config = config or CourseConfig()
    if quiz_id is not None:
        get_quiz(session, quiz_id)
    exercises = live_exercises(session, quiz_id)
    return config, exercises, _quiz_groups(exercises, config)


#: The students, in gradebook order (username key, then id): id and the three text columns.
_ROSTER = (
    select(User.id, User.username, User.display_name, User.email)
    .where(User.role == "student")
    .order_by(User.username_key, User.id)
)


def gradebook(
    session: Session,
    *,
    quiz_id: str | None = None,
    config: CourseConfig | None = None,
    page: int = 1,
    per_page: int | None = None,
) -> Gradebook:
    """The gradebook of every student over the live exercises (of ``quiz_id`` only if given).

    Three queries (exercises, progress rows, excusals) whatever the class size.  A cell is the
    student's ``best_points`` (``services.deadlines.exercise_points``: an override, or the best
    credited score x points) with its late credit and override noted; an excused cell counts
    neither earned nor available points.  With ``per_page``, only the students of page
    ``page`` (1-based, in gradebook order) are read and returned (``Gradebook.students`` counts
    them all).  Raises ``services.NotFound`` for an unknown quiz.
    """
    config, exercises, quizzes = _scope(session, quiz_id, config)
    ids = [e.id for e in exercises]
    students = session.execute(_ROSTER).all()
    total = len(students)
    if per_page:
        page = max(1, min(int(page), max(1, -(-total // per_page))))
        students = students[(page - 1) * per_page : page * per_page]
    student_ids = {row[0] for row in students}
    wanted = set(ids)
    # Plain column tuples, not ORM objects (a class of 10,000 x 40 is 400,000 progress rows), and
    # for the whole course one sequential scan filtered here rather than 40 index range lookups.
    # -> (best points, best score, late, credit, override reason[, best parts (multi-part)])
    attempted: dict[tuple[int, str], tuple[Any, ...]] = {}
    stmt = select(
        Progress.user_id,
        Progress.exercise_id,
        Progress.best_points,
        Progress.best_score,
        Progress.attempts_used,
        Progress.best_late,
        Progress.best_credit,
        Progress.override_points,
        Progress.override_reason,
        Progress.best_parts,
    )
    if quiz_id is not None:
        stmt = stmt.where(Progress.exercise_id.in_(ids))
    if per_page:
        stmt = stmt.where(Progress.user_id.in_(sorted(student_ids)))
    if ids and student_ids:
        for row in session.execute(stmt):
            user_id, exercise_id, best_points, best_score, used, late, credit, over, why, parts = (
                row
            )
            if (used or over is not None) and exercise_id in wanted and user_id in student_ids:
                attempted[(user_id, exercise_id)] = (
                    float(best_points),
                    float(best_score),
                    bool(late),
                    float(credit),
                    (why or "") if over is not None else None,
                    *((parts,) if parts else ()),
                )
    excused = {
        (user_id, exercise_id)
        for user_id, exercise_id in session.execute(
            select(Excusal.user_id, Excusal.exercise_id).where(Excusal.exercise_id.in_(ids))
        )
    }
    columns = [(e.id, e.quiz_id, float(e.points)) for e in exercises]
    rows = []
    for user_id, username, display_name, email in students:
        mine = {
            ex_id: attempted[(user_id, ex_id)] for ex_id in ids if (user_id, ex_id) in attempted
        }
        rows.append(
            _student_row(
                (user_id, username, display_name, email), mine, columns, quizzes, excused, config
            )
        )
    return Gradebook(
        list(quizzes.values()),
        rows,
        "points" if config.weights is None else "course.yaml",
        page=page if per_page else 1,
        per_page=per_page,
        students=total,
    )


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


def _number(value: float) -> float | int:
    """Round to 4 decimals; integral values as ints (``10`` not ``10.0``)."""
    v = round(float(value), 4)
    return int(v) if v == int(v) else v


def fmt_points(p: float) -> str:
    """Points as short text: ``10`` not ``10.0``, at most 4 decimals."""
    v = _number(p)
    return str(v)


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


@services.retry_conflicts
def excuse(
    session: Session,
    user_id: int,
    exercise_id: str,
    *,
    reason: str = "",
    by: User | None = None,
) -> Excusal:
    """Excuse student ``user_id`` from ``exercise_id`` (idempotent; updates the reason); commit.

    Raises ``services.NotFound`` for an unknown student or exercise and
    ``services.BadRequest`` for a reason over 500 characters or holding NUL or a lone surrogate.
    """
    user = session.get(User, user_id)
    if user is None or user.role != "student":
        raise services.NotFound("There is no such student.")
    exercise = services.get_exercise(session, exercise_id, include_archived=True)
    reason = (reason or "").strip()
    if not services.db_safe(reason):  # PostgreSQL refuses NUL in text (a 500 before)
        raise services.BadRequest(
            "The reason holds a NUL character or an invalid (surrogate) character; remove it."
        )
    if len(reason) > 500:
        raise services.BadRequest(
            f"The reason is too long ({len(reason)} characters; at most 500)."
        )
    ex_id, by_id = exercise.id, by.id if by is not None else None
    services.begin_write(session)
    row = session.scalar(
        select(Excusal).where(Excusal.user_id == user_id, Excusal.exercise_id == ex_id)
    )
    if row is None:
        row = Excusal(user_id=user_id, exercise_id=ex_id, created_by_id=by_id)
        session.add(row)
    row.reason = reason
    totals.refresh_user_totals(session, user_id)
    session.commit()
    return row


@services.retry_conflicts
def unexcuse(session: Session, user_id: int, exercise_id: str) -> bool:
    """Remove the excusal of ``user_id`` from ``exercise_id``; True if there was one.  Commits."""
    services.begin_write(session)
    row = session.scalar(
        select(Excusal).where(Excusal.user_id == user_id, Excusal.exercise_id == exercise_id)
    )
    if row is None:
        session.rollback()
        return False
    session.delete(row)
    totals.refresh_user_totals(session, user_id)
    session.commit()
    return True


def excused_exercises(session: Session, user_id: int) -> dict[str, Excusal]:
    """Exercise id -> excusal, for one student."""
    return {
        e.exercise_id: e for e in session.scalars(select(Excusal).where(Excusal.user_id == user_id))
    }
