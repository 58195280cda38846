"""The instructor services (``quizapp.instructor``) on the real bank: scoreboard totals, ranks and
tie-breaks, pagination and sorting, gradebook totals and weights, excusals, the CSV (parsed back
with ``csv``), formula injection, statistics, and regrade after an exercise's YAML is fixed.

Expected values are computed here from the submissions the test created (plain Python) or with
NumPy from the variants' numbers, never read back from the code under test.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import event, select
from test_instructor_support import (
    DECK,
    SEED_SECRET,
    TRANSPOSE,
    TWO,
    add_user,
    at,
    bank_app,
    best_by_student,
    instructor,
    solution_of,
    stored_submissions,
    submit,
    sync,
    text_of,
    variant_values,
)

from quizapp import instructor as inst
from quizapp import services
from quizapp.bank import load_bank
from quizapp.models import Exercise, Progress, Variant, db
from quizapp.models_instructor import Excusal, Regrade, VerdictHistory

Q1 = "01-linear-systems"
Q3 = "03-transpose-and-products"


@pytest.fixture()
def app(tmp_path: Path):
    """The app on the test's database: SQLite, and PostgreSQL when ``QUIZAPP_TEST_POSTGRES_URL``
    is set (tests/conftest.py runs each test on both: the scoreboard's window function, rounding
    and timestamps differ between the two)."""
    return bank_app(tmp_path)


def _class(app) -> dict[str, int]:
    """Four students; ana and ben tie on points, ben reached his first; cleo leads; dan idle."""
    ids = {
        name: add_user(app, name, display_name=display)
        for name, display in [
            ("ana", "Ana Alves"),
            ("ben", "Ben Brook"),
            ("cleo", "Cleo Cruz"),
            ("dan", ""),
        ]
    }
    submit(app, "ana", DECK, "2, 5", at(2))  # correct: 10 points at +2h
    submit(app, "ana", TRANSPOSE, "1 2\n3 4\n5 6", at(3))  # (almost surely) wrong
    two_ben = solution_of(app, "ben", TWO)
    submit(app, "ben", TWO, text_of(two_ben), at(1))  # correct: 10 points at +1h (first)
    submit(app, "cleo", DECK, "0, 0", at(3.5))  # wrong
    submit(app, "cleo", DECK, "2, 5", at(4))  # correct
    two_cleo = solution_of(app, "cleo", TWO)
    submit(app, "cleo", TWO, text_of([two_cleo[0], two_cleo[1] + 7]), at(5))  # one cell right
    return ids


def _expected_ranking(app, *, quiz=None, excused=frozenset()) -> list[tuple]:
    stats = best_by_student(stored_submissions(app), excused, quiz)
    names = ["ana", "ben", "cleo", "dan"]
    rows = []
    for n in names:
        s = stats.get(n, {"points": 0.0, "solved": 0, "attempts": 0, "reached": None})
        rows.append((n, round(s["points"], 6), s["solved"], s["attempts"], s["reached"]))
    far = at(10**5)
    rows.sort(key=lambda r: (-r[1], r[4] is None, r[4] or far, r[0]))
    return rows


def test_scoreboard_totals_ranks_and_tie_break_match_the_submissions(app) -> None:
    _class(app)
    expected = _expected_ranking(app)
    with app.app_context():
        board = inst.scoreboard(db.session)
    got = [(r.username, round(r.points, 6), r.solved, r.attempts, r.reached_at) for r in board.rows]
    assert got == expected
    assert [r.rank for r in board.rows] == [1, 2, 3, 4]
    assert board.total == 4
    # The tie: ana and ben both have 10 points; ben reached them first (+1h vs +2h), so he
    # ranks above ana although "ana" sorts first and her account is older.
    names = [r.username for r in board.rows]
    assert expected[0][0] == "cleo" and expected[0][1] > 10  # cleo: 10 + partial credit
    assert names.index("ben") < names.index("ana")
    assert {r.username: r.points for r in board.rows}["ana"] == 10.0
    assert {r.username: r.points for r in board.rows}["ben"] == 10.0
    assert board.rows[-1].username == "dan" and board.rows[-1].points == 0.0
    assert board.rows[-1].reached_at is None


def test_tie_break_follows_time_not_name(app) -> None:
    """Swap who is first: with ana reaching 10 points before ben, ana ranks first."""
    add_user(app, "ana")
    add_user(app, "ben")
    submit(app, "ben", DECK, "2, 5", at(5))
    submit(app, "ana", DECK, "2, 5", at(6))
    with app.app_context():
        first = [r.username for r in inst.scoreboard(db.session).rows]
    assert first == ["ben", "ana"]
    # ana improves later on another exercise but ben catches up: equal points again, and now
    # ana's total was reached at +8h, ben's at +9h.
    submit(app, "ana", TWO, text_of(solution_of(app, "ana", TWO)), at(8))
    submit(app, "ben", TWO, text_of(solution_of(app, "ben", TWO)), at(9))
    with app.app_context():
        rows = inst.scoreboard(db.session).rows
    assert [(r.username, r.points) for r in rows] == [("ana", 20.0), ("ben", 20.0)]


def test_scoreboard_per_quiz_pagination_and_sorting(app) -> None:
    _class(app)
    with app.app_context():
        q3 = inst.scoreboard(db.session, quiz_id=Q3)
        expected = _expected_ranking(app, quiz=Q3)
        assert [(r.username, r.points, r.attempts) for r in q3.rows] == [
            (n, p, a) for n, p, _, a, _ in expected
        ]
        board = inst.scoreboard(db.session)
        page1 = inst.scoreboard(db.session, per_page=3)
        page2 = inst.scoreboard(db.session, per_page=3, page=2)
        assert page1.pages == 2 and page1.total == 4
        assert [r.username for r in page1.rows + page2.rows] == [r.username for r in board.rows]
        assert [r.rank for r in page2.rows] == [4]
        by_name = inst.scoreboard(db.session, sort="name")
        assert [r.name for r in by_name.rows] == sorted((r.name for r in board.rows), key=str.lower)
        by_attempts = inst.scoreboard(db.session, sort="attempts", descending=True)
        assert [r.attempts for r in by_attempts.rows] == sorted(
            (r.attempts for r in board.rows), reverse=True
        )
        for descending in (False, True):
            by_last = inst.scoreboard(db.session, sort="last", descending=descending).rows
            times = [r.reached_at for r in by_last]
            assert times[-1] is None and by_last[-1].username == "dan"  # never scored: last
            assert times[:-1] == sorted(times[:-1], reverse=descending)
        # The rank does not depend on the sort.
        assert {r.username: r.rank for r in by_name.rows} == {
            r.username: r.rank for r in board.rows
        }
        mine = inst.scoreboard(db.session, only_user_id=board.rows[2].user_id)
        assert [(r.username, r.rank) for r in mine.rows] == [(board.rows[2].username, 3)]
        with pytest.raises(inst.services.BadRequest, match="Unknown sort"):
            inst.scoreboard(db.session, sort="password")
        with pytest.raises(inst.services.NotFound):
            inst.scoreboard(db.session, quiz_id="no-such-quiz")


def test_scoreboard_is_one_query_whatever_the_class_size(app) -> None:
    """The rows come from ONE query over the students' totals rows (``score_totals``, kept by
    submit): the statement count does not grow with the number of students, and no statement
    reads the progress or submissions tables."""
    _class(app)
    with app.app_context():
        inst.scoreboard(db.session)  # the first call after the bank sync builds the totals

    def statements() -> list[str]:
        seen: list[str] = []
        with app.app_context():
            engine = db.engine

            def record(conn, cursor, statement, *args):  # noqa: ANN001
                seen.append(statement)

            event.listen(engine, "before_cursor_execute", record)
            try:
                db.session.expire_all()
                inst.scoreboard(db.session)
            finally:
                event.remove(engine, "before_cursor_execute", record)
        return [s for s in seen if s.lstrip().upper().startswith("SELECT")]

    few = statements()
    for i in range(6):
        add_user(app, f"extra{i}")
        submit(app, f"extra{i}", DECK, "2, 5" if i % 2 else "1, 1", at(20 + i))
    many = statements()
    assert len(many) == len(few) <= 3
    assert not any("submissions" in s or "progress" in s for s in many)
    ranked = [s for s in many if "row_number()" in s.lower()]
    assert len(ranked) == 1 and "score_totals" in ranked[0] and "GROUP BY" not in ranked[0]


def _read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_gradebook_csv_matches_the_submissions_with_course_yaml_weights(app) -> None:
    _class(app)
    bank = load_bank(Path(app.config["QUIZAPP_EXERCISES"]))
    points = {e.id: float(e.spec.points) for e in bank.exercises.values()}
    titles = {e.id: e.spec.title for e in bank.exercises.values()}
    quiz_points: dict[str, float] = {}
    for ex_id, p in points.items():
        quiz_points[ex_id.split("/")[0]] = quiz_points.get(ex_id.split("/")[0], 0.0) + p
    config = inst.parse_course_config(f"weights:\n  {Q1}: 30\n  {Q3}: 70\n")
    subs = stored_submissions(app)
    with app.app_context():
        text = inst.gradebook_csv(inst.gradebook(db.session, config=config))
    rows = _read_csv(text)
    assert [r["username"] for r in rows] == ["ana", "ben", "cleo", "dan"]
    header = list(rows[0])
    assert header[:3] == ["username", "display_name", "email"]
    assert header[-3:] == ["course total %", inst.LATE_COLUMN, inst.OVERRIDES_COLUMN]
    ex_columns = [h for h in header if h.endswith(")") and " total " not in h]
    assert len(ex_columns) == len(points)  # every exercise of the bank, in course order
    for row in rows:
        user = row["username"]
        best: dict[str, float] = {}
        for s in subs:
            if s["user"] == user and s["variant"] == 1 and s["used"]:
                best[s["exercise"]] = max(best.get(s["exercise"], 0.0), s["score"])
        for ex_id, p in points.items():
            cell = row[f"{ex_id} {titles[ex_id]} ({p:g})"]
            assert row[inst.LATE_COLUMN] == row[inst.OVERRIDES_COLUMN] == ""
            if ex_id in best:
                assert float(cell) == pytest.approx(best[ex_id] * p)
            else:
                assert cell == ""
        totals = {q: 0.0 for q in quiz_points}
        for ex_id, score in best.items():
            totals[ex_id.split("/")[0]] += score * points[ex_id]
        for q, avail in quiz_points.items():
            assert float(row[f"{q} total ({avail:g})"]) == pytest.approx(totals[q], abs=1e-4)
            assert float(row[f"{q} %"]) == pytest.approx(100 * totals[q] / avail, abs=0.01)
        weighted = (30 * totals[Q1] / quiz_points[Q1] + 70 * totals[Q3] / quiz_points[Q3]) / 100
        assert float(row["course total %"]) == pytest.approx(100 * weighted, abs=0.01)

    # Without weights: points earned over points available.
    with app.app_context():
        plain = _read_csv(inst.gradebook_csv(inst.gradebook(db.session)))
    total_avail = sum(points.values())
    for row in plain:
        earned = sum(float(row[f"{q} total ({a:g})"]) for q, a in quiz_points.items())
        assert float(row["course total %"]) == pytest.approx(100 * earned / total_avail, abs=0.01)

    # One quiz only.
    with app.app_context():
        only = _read_csv(inst.gradebook_csv(inst.gradebook(db.session, quiz_id=Q3)))
    assert all(not h.startswith(Q1) for h in only[0])
    assert any(h.startswith(Q3) for h in only[0])


def test_excusal_removes_the_exercise_from_available_points(app) -> None:
    ids = _class(app)
    bank = load_bank(Path(app.config["QUIZAPP_EXERCISES"]))
    q1_points = sum(float(e.spec.points) for e in bank.exercises.values() if e.quiz_id == Q1)
    two_points = float(bank.exercises[TWO].spec.points)
    two_title = bank.exercises[TWO].spec.title
    subs = stored_submissions(app)
    cleo_two = max(
        s["score"] for s in subs if s["user"] == "cleo" and s["exercise"] == TWO and s["used"]
    )
    assert 0 < cleo_two < 1  # partial credit on TWO
    with app.app_context():
        inst.excuse(db.session, ids["cleo"], TWO, reason="ill")
        inst.excuse(db.session, ids["cleo"], TWO, reason="ill, certificate")  # idempotent
        assert db.session.scalar(select(db.func.count(Excusal.id))) == 1
        gb = inst.gradebook(db.session)
        row = next(r for r in gb.rows if r.username == "cleo")
        assert row.cells[TWO].excused
        assert row.quiz_totals[Q1].available == pytest.approx(q1_points - two_points)
        assert row.quiz_totals[Q1].earned == pytest.approx(10.0)  # only DECK counts now
        assert row.course_percent == pytest.approx(100 * 10.0 / (row.available))
        rows = _read_csv(inst.gradebook_csv(gb))
        assert (
            next(r for r in rows if r["username"] == "cleo")[f"{TWO} {two_title} ({two_points:g})"]
            == "EX"
        )
        board = {r.username: r.points for r in inst.scoreboard(db.session).rows}
        expected = _expected_ranking(app, excused={("cleo", TWO)})
        assert board == {n: p for n, p, *_ in expected}
        assert board["cleo"] == 10.0
        assert inst.unexcuse(db.session, ids["cleo"], TWO) is True
        assert inst.unexcuse(db.session, ids["cleo"], TWO) is False
        back = next(r for r in inst.gradebook(db.session).rows if r.username == "cleo")
        assert back.quiz_totals[Q1].available == pytest.approx(q1_points)
        assert back.quiz_totals[Q1].earned == pytest.approx(10.0 + cleo_two * two_points)


def test_course_percent_renormalizes_when_a_quiz_is_wholly_excused() -> None:
    config = inst.parse_course_config("weights: {a: 30, b: 70}")
    totals = {"a": inst.QuizTotal(5, 10), "b": inst.QuizTotal(0, 0)}
    assert inst.course_percent(totals, config) == pytest.approx(50.0)
    totals = {"a": inst.QuizTotal(5, 10), "b": inst.QuizTotal(9, 10), "c": inst.QuizTotal(1, 1)}
    assert inst.course_percent(totals, config) == pytest.approx((30 * 0.5 + 70 * 0.9) / 100 * 100)
    assert inst.course_percent(totals) == pytest.approx(100 * 15 / 21)
    assert inst.course_percent({"a": inst.QuizTotal(0, 0)}) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("weights: {a: -1}", "a weight must be a number >= 0"),
        ("weights: {a: x}", "weights.a"),
        ("weight: {a: 1}", "weight"),
        ("weights: {a: 0}", "sum to 0"),
        ("weights: [a", "invalid YAML"),
        ("- a", "must be a mapping"),
        ("weights: {a: 1}\nweights: {b: 2}", "course.yaml:2: invalid YAML: duplicate key"),
        ("title: x\nweights:\n  a: x\n", "course.yaml:3: weights.a"),
    ],
)
def test_course_yaml_errors_say_what_and_where(text: str, message: str) -> None:
    with pytest.raises(inst.CourseConfigError, match="course.yaml:") as err:
        inst.parse_course_config(text)
    assert message in str(err.value)


def test_course_yaml_file_is_optional(tmp_path: Path) -> None:
    assert inst.load_course_config(tmp_path).weights is None
    (tmp_path / "course.yaml").write_text("weights:\n  q1: 1\n  q2: 3\n", encoding="utf-8")
    assert inst.load_course_config(tmp_path).weights == {"q1": 1.0, "q2": 3.0}


def test_csv_neutralizes_formulas_in_text_but_keeps_negative_numbers(app) -> None:
    assert inst.csv_cell(-2.5) == -2.5
    assert inst.csv_cell(-3) == -3
    assert inst.csv_cell(10.0) == 10
    for text in ["=1+2", "+1", "-1", "@SUM(A1)", "\tx", "\rx", '=HYPERLINK("http://x")']:
        assert inst.csv_cell(text) == "'" + text
    assert inst.csv_cell("Ana") == "Ana"
    assert inst.csv_cell(None) == ""
    out = list(csv.reader(io.StringIO(inst.write_csv([["a", -1.5, "-1.5", "=cmd|' /C calc'!A0"]]))))
    assert out == [["a", "-1.5", "'-1.5", "'=cmd|' /C calc'!A0"]]

    # Usernames cannot start with a formula character (services.USERNAME_BAD_START), so the
    # identifier column is never altered; other text is neutralized.
    # (An e-mail address cannot start with "@" any more, services.validate_email; it can with
    # "=" or "+".)
    add_user(app, "mallory", display_name='=HYPERLINK("http://evil","x")', email="=cmd@x.org")
    with app.app_context():
        rows = _read_csv(inst.gradebook_csv(inst.gradebook(db.session)))
    assert rows[0]["username"] == "mallory"
    assert rows[0]["display_name"] == '\'=HYPERLINK("http://evil","x")'
    assert rows[0]["email"] == "'=cmd@x.org"


def _stats_class(app) -> dict[str, np.ndarray]:
    """Four students on TWO: s1 wrong then right, s2 swapped then right, s3 right at once,
    s4 three different wrong answers (out of attempts)."""
    sol = {}
    for name in ["s1", "s2", "s3", "s4"]:
        add_user(app, name)
        sol[name] = solution_of(app, name, TWO)
    submit(app, "s1", TWO, "0, 0", at(1))
    submit(app, "s1", TWO, text_of(sol["s1"]), at(2))
    submit(app, "s2", TWO, text_of(sol["s2"][::-1]), at(1))
    submit(app, "s2", TWO, text_of(sol["s2"]), at(2))
    submit(app, "s3", TWO, text_of(sol["s3"]), at(1))
    for i, wrong in enumerate(["0, 0", "100, 100", "101, 101"]):
        submit(app, "s4", TWO, wrong, at(3 + i))
    return sol


def test_exercise_statistics_match_the_submissions(app) -> None:
    sol = _stats_class(app)
    subs = [s for s in stored_submissions(app) if s["exercise"] == TWO]
    with app.app_context():
        st = inst.exercise_statistics(db.session, TWO)
    assert st.tried == 4
    assert st.solved == 3 and st.percent_solved == pytest.approx(75.0)
    assert st.mean_best_score == pytest.approx(0.75)
    assert st.mean_attempts_to_solve == pytest.approx((2 + 2 + 1) / 3)
    hist = dict(st.histogram)
    assert hist["100%"] == 3 and hist["0–9%"] == 1 and sum(hist.values()) == 4
    assert st.submissions == sum(1 for s in subs if s["used"] and not s["duplicate"])
    expected_mistakes: dict[str, int] = {}
    for s in subs:
        if s["used"] and not s["duplicate"]:
            for m in s["mistakes"]:
                expected_mistakes[m] = expected_mistakes.get(m, 0) + 1
    assert dict(st.mistakes) == expected_mistakes
    if not np.isclose(sol["s2"][0], sol["s2"][1]):
        assert expected_mistakes.get("swapped_unknowns", 0) >= 1
    wrong = dict(st.wrong_answers)
    assert st.wrong_answers[0] == ("(0, 0)", 2)
    assert wrong["(100, 100)"] == 1 and wrong["(101, 101)"] == 1


def test_statistics_break_down_by_a_parameter_that_changed_between_versions(app) -> None:
    """TWO is 2x2; after its YAML switches to size 3, new students get 3x3 variants: the solve
    rate is reported per size."""
    _stats_class(app)  # 4 students on n = 2, 3 solved
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{TWO}.yaml"
    path.write_text(path.read_text().replace("size: 2", "size: 3"), encoding="utf-8")
    sync(app)
    for name in ["t1", "t2"]:
        add_user(app, name)
    submit(app, "t1", TWO, text_of(solution_of(app, "t1", TWO)), at(7))
    assert solution_of(app, "t2", TWO).shape == (3,)
    submit(app, "t2", TWO, "0, 0, 0", at(7))
    with app.app_context():
        st = inst.exercise_statistics(db.session, TWO)
    by = {b.name: {v.value: (v.students, v.solved) for v in b.values} for b in st.parameters}
    assert by["n"] == {"2": (4, 3), "3": (2, 1)}
    assert by["answer shape"] == {"2": (4, 3), "3": (2, 1)}


MAPS_BACK = "02-matrices-and-maps/10-transpose-maps-back"  # expression: transpose(A) @ y


def _edit(app, exercise_id: str, old: str, new: str) -> None:
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{exercise_id}.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    sync(app)


def test_regrade_after_fixing_a_wrong_answer_key_uses_the_numbers_each_student_saw(app) -> None:
    """The instructor published a wrong key (2 A^T y instead of A^T y), fixed it (and, in the same
    edit, the prompt, a require line and the variables' range), and regraded: every student is
    graded against A^T y computed HERE from the numbers of their own stored variant; their
    numbers and prompt do not change; the dry run lists the changes first and writes nothing."""
    _edit(app, MAPS_BACK, "answer: transpose(A) @ y", "answer: 2 * (transpose(A) @ y)")
    add_user(app, "ana")
    add_user(app, "ben")
    ana_values = variant_values(app, "ana", MAPS_BACK)
    ben_values = variant_values(app, "ben", MAPS_BACK)

    def right(values):
        return np.asarray(values["A"], float).T @ np.asarray(values["y"], float)

    submit(app, "ana", MAPS_BACK, text_of(2 * right(ana_values)), at(1))  # the wrong key
    submit(app, "ben", MAPS_BACK, text_of(right(ben_values)), at(1))  # right, marked wrong
    submit(app, "ben", MAPS_BACK, "9, 9, 9", at(2))  # wrong either way
    before = stored_submissions(app)
    assert [s["status"] for s in before] == ["correct", "incorrect", "incorrect"]
    with app.app_context():
        pages_before = {
            v.user_id: (v.page["prompt_html"], v.seed)
            for v in db.session.scalars(select(Variant).where(Variant.exercise_id == MAPS_BACK))
        }

    _edit(app, MAPS_BACK, "answer: 2 * (transpose(A) @ y)", "answer: transpose(A) @ y")
    _edit(app, MAPS_BACK, "rank(A) == 2", "rank(A) >= 1")
    _edit(app, MAPS_BACK, "integers: [-3, 3]", "integers: [-9, 9]")
    _edit(app, MAPS_BACK, "compute $A^T", "Now compute $A^T")

    with app.app_context():
        dry = inst.regrade_exercise(db.session, MAPS_BACK, dry_run=True)
        assert dry.changed == 2 and dry.regrade_id is None and dry.rekeyed == 2
        assert [c.username for c in dry.changes] == ["ana", "ben"]  # per student
        assert db.session.scalar(select(db.func.count(VerdictHistory.id))) == 0
        assert db.session.scalar(select(db.func.count(Regrade.id))) == 0
    assert stored_submissions(app) == before

    with app.app_context():
        summary = inst.regrade_exercise(db.session, MAPS_BACK)
        text = summary.text()
    assert summary.regraded == 3 and summary.changed == 2
    assert "ana" in text and "correct 1 -> incorrect 0" in text
    after = stored_submissions(app)
    assert [s["status"] for s in after] == ["incorrect", "correct", "incorrect"]
    assert [s["score"] for s in after] == [0.0, 1.0, 0.0]
    assert len(after) == len(before)  # nothing added, nothing lost

    # Each student still has the numbers and the prompt they saw; the key is A^T y of them.
    assert variant_values(app, "ana", MAPS_BACK).keys() == ana_values.keys()
    for name, values in (("ana", ana_values), ("ben", ben_values)):
        now = variant_values(app, name, MAPS_BACK)
        assert all(np.array_equal(now[k], values[k]) for k in ("A", "y"))
    with app.app_context():
        for v in db.session.scalars(select(Variant).where(Variant.exercise_id == MAPS_BACK)):
            assert (v.page["prompt_html"], v.seed) == pages_before[v.user_id]
            assert "Now compute" not in v.page["prompt_html"]
            assert v.rekeyed_at is not None
        history = list(db.session.scalars(select(VerdictHistory).order_by(VerdictHistory.id)))
        by_sub = {h.submission_id: h for h in history}
        assert by_sub[before[0]["id"]].status == "correct"
        assert by_sub[before[0]["id"]].score == 1.0
        assert by_sub[before[1]["id"]].status == "incorrect"
        run = db.session.scalars(select(Regrade)).one()
        assert run.submissions_changed == 2
        changes = {c["username"]: c for c in run.summary["progress_changes"]}
        assert changes["ana"]["old_best_points"] == 10.0
        assert changes["ana"]["new_best_points"] == 0.0
        assert changes["ben"]["old_best_points"] == 0.0
        ana_variant = db.session.scalars(
            select(Variant).where(
                Variant.exercise_id == MAPS_BACK, Variant.user.has(username="ana")
            )
        ).one()
        assert ana_variant.finished_at is None  # open again: 1 of 3 attempts used
    # ana's page says her verdict is a regrade's, and what it was when she sent it.
    from test_instructor_support import signed_in

    page = signed_in(app, "ana").get(f"/exercises/{MAPS_BACK}").get_data(as_text=True)
    assert "Regraded by your instructor: when you sent it, this answer was correct." in page

    with app.app_context():
        assert [(r.username, r.points) for r in inst.scoreboard(db.session).rows][:2] == [
            ("ben", 10.0),
            ("ana", 0.0),
        ]
    # ana can now answer with the corrected key, on her own numbers.
    result = submit(app, "ana", MAPS_BACK, text_of(right(ana_values)), at(5))
    assert result.verdict["status"] == "correct"
    # A second regrade with nothing new changes nothing.
    with app.app_context():
        again = inst.regrade_exercise(db.session, MAPS_BACK)
    assert again.changed == 0 and again.progress_changes == [] and again.rekeyed == 0


@pytest.mark.parametrize(
    ("key", "shown"),
    [("A", "a 2×3 matrix"), ("sum(transpose(A) @ y)", "a single number")],
)
def test_a_new_key_of_another_shape_is_not_regraded_and_the_form_stays(
    app, key: str, shown: str
) -> None:
    """A key whose answer has another shape than the form the student answered (a vector of 3
    entries) cannot grade those answers: each variant is listed as not regraded, with the
    reason, in the dry run and the run; no verdict, attempt or form changes.  (The form was
    replaced by the new key's, so the page showed another grid, and a scalar key turned a
    graded answer into "invalid" while it kept its attempt.)"""
    add_user(app, "ana")
    add_user(app, "ben")
    values = variant_values(app, "ana", MAPS_BACK)
    right = np.asarray(values["A"], float).T @ np.asarray(values["y"], float)
    submit(app, "ana", MAPS_BACK, text_of(right), at(1))
    submit(app, "ben", MAPS_BACK, "9, 9, 9", at(1))
    before = stored_submissions(app)
    with app.app_context():
        records = {
            v.id: dict(v.record)
            for v in db.session.scalars(select(Variant).where(Variant.exercise_id == MAPS_BACK))
        }
    _edit(app, MAPS_BACK, "answer: transpose(A) @ y", f"answer: {key}")
    for dry_run in (True, False):
        with app.app_context():
            summary = inst.regrade_exercise(db.session, MAPS_BACK, dry_run=dry_run)
        assert summary.changed == 0 and summary.regraded == 0 and summary.rekeyed == 0
        assert [u.split(",")[0] for u in summary.unkeyable] == ["ana", "ben"]
        reason = (
            f"this version's answer is {shown}, but the student was given a form for a vector "
            "of 3 entries; answers to that form cannot be graded against it"
        )
        assert all(reason in line for line in summary.unkeyable), summary.unkeyable
        assert stored_submissions(app) == before
        with app.app_context():
            now = db.session.scalars(select(Variant).where(Variant.exercise_id == MAPS_BACK))
            assert {v.id: dict(v.record) for v in now} == records
    assert "not regraded: ana, variant 1" in summary.text()


def test_a_regrade_in_processes_writes_what_one_process_computes(app, monkeypatch) -> None:
    """A large regrade keys and grades its variants in forked processes (``regrade_work``; here
    forced, one variant per task).  On either database the dry run in two processes lists what
    the dry run in one lists, the regrade writes those verdicts, and each variant's stored page
    is the new key's worked answer over the prompt the student saw."""
    from quizapp.bank.stored import thaw
    from quizapp.instructor import regrade_work
    from quizapp.page import render_key_page

    monkeypatch.setattr(regrade_work, "CHUNK", 1)
    _edit(app, MAPS_BACK, "answer: transpose(A) @ y", "answer: 2 * (transpose(A) @ y)")

    def right(name: str) -> np.ndarray:
        values = variant_values(app, name, MAPS_BACK)
        return np.asarray(values["A"], float).T @ np.asarray(values["y"], float)

    for name in ("ana", "ben", "cleo"):
        add_user(app, name)
    submit(app, "ana", MAPS_BACK, text_of(2 * right("ana")), at(1))  # the wrong key
    submit(app, "ben", MAPS_BACK, text_of(right("ben")), at(1))  # right, marked wrong
    submit(app, "ben", MAPS_BACK, "9, 9, 9", at(2))
    submit(app, "cleo", MAPS_BACK, "9, 9, 9", at(1))
    submit(app, "cleo", MAPS_BACK, text_of(right("cleo")), at(2))
    with app.app_context():
        shown = {
            v.id: v.page
            for v in db.session.scalars(select(Variant).where(Variant.exercise_id == MAPS_BACK))
        }
    _edit(app, MAPS_BACK, "answer: 2 * (transpose(A) @ y)", "answer: transpose(A) @ y")

    with app.app_context():
        alone = inst.regrade_exercise(db.session, MAPS_BACK, dry_run=True, workers=1)
        spread = inst.regrade_exercise(db.session, MAPS_BACK, dry_run=True, workers=2)
        assert spread.to_dict() == alone.to_dict()
        assert alone.changed == 3 and alone.rekeyed == 3
        summary = inst.regrade_exercise(db.session, MAPS_BACK, workers=2)
    assert summary.changes == alone.changes
    assert summary.progress_changes == alone.progress_changes
    assert [(s["user"], s["status"]) for s in stored_submissions(app)] == [
        ("ana", "incorrect"),
        ("ben", "correct"),
        ("ben", "incorrect"),
        ("cleo", "incorrect"),
        ("cleo", "correct"),
    ]
    with app.app_context():
        for v in db.session.scalars(select(Variant).where(Variant.exercise_id == MAPS_BACK)):
            assert v.rekeyed_at is not None
            assert v.page == render_key_page(thaw(v.record), shown[v.id])
            assert v.page["prompt_html"] == shown[v.id]["prompt_html"]
            assert v.page["expected_html"] != shown[v.id]["expected_html"]


def test_a_regrade_that_takes_back_a_solve_brings_the_student_back_from_practice(app) -> None:
    """ana solved her graded variant under a wrong key and moved on to a practice variant; the
    regrade with the fixed key takes the solve back: her current variant is her graded one again
    (2 attempts left), not the practice one that does not count."""
    _edit(app, MAPS_BACK, "answer: transpose(A) @ y", "answer: 2 * (transpose(A) @ y)")
    add_user(app, "ana")
    values = variant_values(app, "ana", MAPS_BACK)
    right = np.asarray(values["A"], float).T @ np.asarray(values["y"], float)
    assert submit(app, "ana", MAPS_BACK, text_of(2 * right), at(1)).verdict["status"] == "correct"
    with app.app_context():
        user = services.find_user(db.session, "ana")
        exercise = db.session.get(Exercise, MAPS_BACK)
        practice = services.new_practice_variant(db.session, user, exercise, SEED_SECRET)
        assert practice.variant_number == 2
    _edit(app, MAPS_BACK, "answer: 2 * (transpose(A) @ y)", "answer: transpose(A) @ y")
    with app.app_context():
        inst.regrade_exercise(db.session, MAPS_BACK)
        db.session.commit()
    with app.app_context():
        user = services.find_user(db.session, "ana")
        exercise = db.session.get(Exercise, MAPS_BACK)
        current = services.get_or_create_variant(db.session, user, exercise, SEED_SECRET)
        assert current.variant_number == 1
        assert services.variant_state(db.session, current).attempts_left == 2
    result = submit(app, "ana", MAPS_BACK, text_of(right), at(2))
    assert result.verdict["status"] == "correct"
    with app.app_context():
        progress = db.session.scalars(
            select(Progress).where(Progress.exercise_id == MAPS_BACK)
        ).one()
        assert progress.best_points == 10.0


def test_regrade_does_not_follow_new_numbers_in_the_yaml(app) -> None:
    """The deck system's right-hand side edited from (15, 16) to (15, 23) (solution (1, 10)):
    students who answered (2, 5) saw (15, 16); a regrade leaves them correct, and their page
    keeps (15, 16).  (An exact prompt needs an answer a student can type exactly: (15, 17)
    gives 13/7, which the linear_system kind's key holds rounded to 9 decimals, so validation
    refuses it.)"""
    add_user(app, "ana")
    submit(app, "ana", DECK, "2, 5", at(1))
    _edit(app, DECK, "y: [15, 16]", "y: [15, 23]")
    with app.app_context():
        summary = inst.regrade_exercise(db.session, DECK)
    assert summary.changed == 0 and summary.rekeyed == 0
    assert [s["status"] for s in stored_submissions(app)] == ["correct"]
    assert np.asarray(variant_values(app, "ana", DECK)["y"]).ravel().tolist() == [15, 16]


def test_a_regrade_whose_new_key_needs_a_variable_the_variant_lacks_leaves_it(app) -> None:
    add_user(app, "ana")
    submit(app, "ana", MAPS_BACK, "1, 2, 3", at(1))
    _edit(app, MAPS_BACK, "  y: {vector: 2", "  z: {vector: 2, integers: [1, 2]}\n  y: {vector: 2")
    _edit(app, MAPS_BACK, "answer: transpose(A) @ y", "answer: transpose(A) @ z")
    with app.app_context():
        summary = inst.regrade_exercise(db.session, MAPS_BACK)
    assert summary.regraded == 0 and len(summary.unkeyable) == 1
    assert "ana, variant 1" in summary.unkeyable[0] and "'z'" in summary.unkeyable[0]
    assert [s["status"] for s in stored_submissions(app)] == ["incorrect"]


def test_a_regrade_that_fails_midway_changes_nothing(app, monkeypatch) -> None:
    """All or nothing: when reading the second student's variant fails, the first student's
    already-regraded submission and progress are rolled back too."""
    _edit(app, MAPS_BACK, "answer: transpose(A) @ y", "answer: 2 * (transpose(A) @ y)")
    add_user(app, "ana")
    add_user(app, "ben")
    for name in ("ana", "ben"):
        values = variant_values(app, name, MAPS_BACK)
        wrong_key = 2 * np.asarray(values["A"], float).T @ np.asarray(values["y"], float)
        submit(app, name, MAPS_BACK, text_of(wrong_key), at(1))
    _edit(app, MAPS_BACK, "answer: 2 * (transpose(A) @ y)", "answer: transpose(A) @ y")
    real = inst.services.stored_variant
    calls = []

    def flaky(variant):  # noqa: ANN001, ANN202
        calls.append(variant.id)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real(variant)

    monkeypatch.setattr(inst.services, "stored_variant", flaky)
    with app.app_context(), pytest.raises(RuntimeError, match="disk on fire"):
        inst.regrade_exercise(db.session, MAPS_BACK)
    assert len(calls) == 2
    assert [s["status"] for s in stored_submissions(app)] == ["correct", "correct"]
    with app.app_context():
        assert db.session.scalar(select(db.func.count(VerdictHistory.id))) == 0
        assert db.session.scalar(select(db.func.count(Regrade.id))) == 0
        points = db.session.scalars(
            select(Progress.best_points).where(Progress.exercise_id == MAPS_BACK)
        ).all()
        assert points == [10.0, 10.0]
        assert all(
            v.rekeyed_at is None
            for v in db.session.scalars(select(Variant).where(Variant.exercise_id == MAPS_BACK))
        )


def test_a_regrade_meeting_an_unreadable_stored_variant_names_it(app) -> None:
    """A variant whose stored record cannot be read (a database edited by hand) stops the
    regrade with the services' message naming the variant, and changes nothing."""
    add_user(app, "ana")
    submit(app, "ana", MAPS_BACK, "1, 2, 3", at(1))
    with app.app_context():
        variant = db.session.scalars(select(Variant).where(Variant.exercise_id == MAPS_BACK)).one()
        variant.record = {"format": "no such format"}
        db.session.commit()
        variant_id = variant.id
    with app.app_context(), pytest.raises(inst.services.Unavailable) as caught:
        inst.regrade_exercise(db.session, MAPS_BACK)
    assert caught.value.message.startswith(
        f"The stored variant {variant_id} (variant 1 of {MAPS_BACK}) cannot be read: "
    )
    assert [s["status"] for s in stored_submissions(app)] == ["incorrect"]
    with app.app_context():
        assert db.session.scalar(select(db.func.count(Regrade.id))) == 0


def test_regrade_of_an_unknown_exercise_is_refused(app) -> None:
    with app.app_context(), pytest.raises(inst.services.NotFound):
        inst.regrade_exercise(db.session, "01-linear-systems/no-such")


def test_course_yaml_warns_about_unknown_and_unweighted_quizzes() -> None:
    config = inst.parse_course_config("weights:\n  01-linear-sytems: 30\n  q2: 70\n")
    warnings = inst.course_config_warnings(config, ["01-linear-systems", "q2"])
    assert warnings == [
        "course.yaml: weights.01-linear-sytems: there is no quiz '01-linear-sytems' "
        "(known: 01-linear-systems, q2)",
        "course.yaml: quiz '01-linear-systems' has no weight, so it does not count in the "
        "course total",
    ]
    assert inst.course_config_warnings(inst.CourseConfig(), ["a"]) == []


def test_a_regrade_after_a_change_of_kind_says_the_old_variants_keep_their_key(app) -> None:
    """The deck system rewritten from the ``linear_system`` kind to an ``expression`` with other
    numbers: ana's variant (drawn by linear_system, answered (2, 5)) cannot be keyed by the
    expression from its numbers, so it keeps its own key and stays correct; the dry run, the
    regrade and its page say so (``other_kind``) instead of listing nothing."""
    add_user(app, "ana")
    submit(app, "ana", DECK, "2, 5", at(1))
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{DECK}.yaml"
    path.write_text(
        "title: A system\nkind: expression\npoints: 10\nattempts: 3\npractice: false\n"
        "variables:\n  A: {matrix: [2, 2], integers: [1, 4]}\n  x: {vector: 2, integers: [1, 3]}\n"
        "require:\n  - abs(det(A)) > 0.5\nderived:\n  y: A @ x\nanswer: solve(A, y)\n"
        "prompt: |\n  Solve $A\\mathbf{x} = \\mathbf{y}$ for $A = {{ A }}$, "
        "$\\mathbf{y} = {{ y }}$. Give exact values.\n",
        encoding="utf-8",
    )
    sync(app)
    with app.app_context():
        dry = inst.regrade_exercise(db.session, DECK, dry_run=True)
        assert dry.other_kind == 1 and dry.unkeyable == [] and dry.changed == 0
        assert "1 variant drawn by another kind" in dry.text()
        done = inst.regrade_exercise(db.session, DECK, reviewed=dry.plan_digest())
        assert done.other_kind == 1 and not done.stale
    assert [s["status"] for s in stored_submissions(app)] == ["correct"]
    assert np.asarray(variant_values(app, "ana", DECK)["y"]).ravel().tolist() == [15, 16]
    with app.app_context():
        run = db.session.scalar(select(Regrade).order_by(Regrade.id.desc()))
        assert inst.RegradeSummary.from_dict(run.summary or {}, run.id).other_kind == 1
        run_id = run.id
    page = instructor(app).get(f"/instructor/regrades/{run_id}").get_data(as_text=True)
    assert "drawn by another kind than the current version" in page
