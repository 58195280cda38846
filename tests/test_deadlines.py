"""Deadlines (issue 17): the course time zone, late credit, extensions, overrides, and the one
value of a student's points that the pages, the API, the scoreboard and the gradebook share.

Expected instants are written out in UTC from the US rules (daylight saving time in Chicago ends
on 2026-11-01: CDT is UTC-5 before, CST UTC-6 after), not computed with the code under test.
Database tests run on SQLite and PostgreSQL (tests/conftest.py).
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from test_web_support import EXERCISES, csrf_from, make_app
from werkzeug.datastructures import MultiDict

from quizapp import coursetime, services
from quizapp import instructor as inst
from quizapp.bank import load_bank
from quizapp.cli import main
from quizapp.config import ConfigError
from quizapp.models import Progress, Quiz, Submission, User, db
from quizapp.models_instructor import AuditEntry, Extension
from quizapp.services import extensions, overrides, points, schedules

ZONE = "America/Chicago"
QUIZ = "01-linear-systems"
DECK = f"{QUIZ}/05-deck-system"  # 5x + y = 15, 3x + 2y = 16: (2, 5) for every seed
TWO = f"{QUIZ}/06-two-by-two"
SECRET = "deadline-tests"
PASSWORD = "correct horse"

#: opens before the end of DST (CDT, UTC-5), closes after it (CST, UTC-6)
QUIZ_YAML = """\
title: Late quiz
order: 1
opens: 2026-10-30 09:00
closes: 2026-11-06 17:00
late:
  - until: 2026-11-13 17:00
    credit: 0.5
  - until: 2026-11-20
    credit: 0.25
"""
OPENS = datetime(2026, 10, 30, 14, 0, tzinfo=UTC)  # 09:00 CDT
CLOSES = datetime(2026, 11, 6, 23, 0, tzinfo=UTC)  # 17:00 CST
UNTIL1 = datetime(2026, 11, 13, 23, 0, tzinfo=UTC)  # 17:00 CST
UNTIL2 = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)  # the midnight ending 2026-11-20, CST
SECOND = timedelta(seconds=1)


def make_bank(root: Path, quiz_yaml: str = QUIZ_YAML) -> Path:
    """A bank of one quiz (``01-linear-systems``: the deck system and two-by-two exercises of
    the repository's bank) with ``quiz_yaml``."""
    folder = root / QUIZ
    folder.mkdir(parents=True)
    for stem in ("05-deck-system", "06-two-by-two"):
        shutil.copy(EXERCISES / QUIZ / f"{stem}.yaml", folder / f"{stem}.yaml")
    (folder / "quiz.yaml").write_text(quiz_yaml, encoding="utf-8")
    return root


@pytest.fixture()
def app(tmp_path: Path):
    bank = make_bank(tmp_path / "exercises")
    app = make_app(
        tmp_path, QUIZAPP_EXERCISES=bank, QUIZAPP_TIMEZONE=ZONE, QUIZAPP_SEED_SECRET=SECRET
    )
    with app.app_context():
        report = services.sync_folder(db.session, bank, ZONE)
        assert report.errors == [], report.errors
        for name in ("ana", "ben", "cleo", "dan", "eve", "fay", "gus"):
            services.create_user(db.session, name, PASSWORD)
        services.create_user(db.session, "prof", PASSWORD, role="instructor")
    return app


def _user(name: str) -> User:
    user = services.find_user(db.session, name)
    assert user is not None
    return user


def _submit(name: str, answer: str, when: datetime, exercise: str = DECK):
    return services.submit(db.session, _user(name), exercise, answer, seed_secret=SECRET, now=when)


def _progress(name: str, exercise: str = DECK) -> Progress:
    row = db.session.scalar(
        select(Progress).where(Progress.user_id == _user(name).id, Progress.exercise_id == exercise)
    )
    assert row is not None
    return row


# --------------------------------------------------------------------------------------------
# Reading and showing times (pure)


def test_wall_clock_times_are_read_in_the_course_zone() -> None:
    chicago = coursetime.parse_zone(ZONE)
    read = coursetime.parse_instant
    assert read("2026-12-01 17:00", chicago, "closes", end_of_day=True) == datetime(
        2026, 12, 1, 23, 0, tzinfo=UTC
    )
    # A date alone: the start of the day when opening, its end when closing.
    assert read("2026-12-01", chicago, "opens", end_of_day=False) == datetime(
        2026, 12, 1, 6, 0, tzinfo=UTC
    )
    assert read("2026-12-01", chicago, "closes", end_of_day=True) == datetime(
        2026, 12, 2, 6, 0, tzinfo=UTC
    )
    # An explicit offset or Z is an absolute instant, whatever the zone.
    assert read("2026-12-01T17:00Z", chicago, "x", end_of_day=True) == datetime(
        2026, 12, 1, 17, 0, tzinfo=UTC
    )
    assert read("2026-12-01 17:00+0100", chicago, "x", end_of_day=True) == datetime(
        2026, 12, 1, 16, 0, tzinfo=UTC
    )
    # Shown back in the zone, with its abbreviation; the end of a day as 24:00.
    assert coursetime.show(datetime(2026, 12, 1, 23, 0, tzinfo=UTC), chicago) == (
        "2026-12-01 17:00 CST"
    )
    assert coursetime.show_deadline(datetime(2026, 12, 2, 6, 0, tzinfo=UTC), chicago) == (
        "2026-12-01 24:00 CST"
    )
    assert coursetime.iso(datetime(2026, 7, 1, 22, 0, tzinfo=UTC), chicago) == (
        "2026-07-01T17:00:00-05:00"
    )
    # The spring-forward gap (02:30 does not exist on 2026-03-08) and the fall-back repeat.
    assert read("2026-03-08 02:30", chicago, "x", end_of_day=True) == datetime(
        2026, 3, 8, 8, 30, tzinfo=UTC
    )
    assert read("2026-11-01 01:30", chicago, "x", end_of_day=True) == datetime(
        2026, 11, 1, 6, 30, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("value", "field", "words"),
    [
        ("tomorrow", "until", "until: 'tomorrow' is not a time"),
        ("2026-13-01", "closes", "closes: '2026-13-01' is not a valid date"),
        ("2026-12-01 25:00", "until", "until: '2026-12-01 25:00' is not a valid date"),
        (12, "opens", "opens: expected a date and time"),
    ],
)
def test_an_unreadable_time_is_one_line_naming_the_field(value, field, words) -> None:
    with pytest.raises(coursetime.TimeError) as err:
        coursetime.parse_wall_time(value, field)
    assert str(err.value).startswith(words) and "\n" not in str(err.value)


def test_an_unknown_time_zone_is_refused_naming_the_setting(tmp_path: Path, monkeypatch) -> None:
    for bad in ("Mars/Olympus_Mons", "CST6", "../etc/passwd", "America/Chicgo"):
        with pytest.raises(coursetime.TimeError, match="QUIZAPP_TIMEZONE: unknown time zone"):
            coursetime.parse_zone(bad)
    with pytest.raises(ConfigError) as err:
        make_app(tmp_path, QUIZAPP_TIMEZONE="America/Chicgo")
    assert str(err.value) == (
        "QUIZAPP_TIMEZONE: unknown time zone 'America/Chicgo'; use an IANA zone name such as "
        "America/Chicago, Europe/Berlin or UTC"
    )
    monkeypatch.setenv("QUIZAPP_TIMEZONE", "Europe/Atlantis")
    result = CliRunner().invoke(main, ["validate", str(make_bank(tmp_path / "b"))])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: configuration: QUIZAPP_TIMEZONE: unknown time zone 'Europe/Atlantis'; use an "
        "IANA zone name such as America/Chicago, Europe/Berlin or UTC"
    )


def test_serve_says_which_zone_is_in_force() -> None:
    from quizapp.cli.server import time_zone_line

    line = time_zone_line(ZONE)
    assert line.startswith("Course time zone: America/Chicago (now ")
    assert (" CST, UTC-06:00)" in line) or (" CDT, UTC-05:00)" in line)
    assert "QUIZAPP_TIMEZONE" in line


def _transient_quiz(closes: datetime, late: list[tuple[datetime, float]]) -> Quiz:
    return Quiz(
        id="q",
        title="Q",
        closes_at=closes,
        late=schedules.store_late_periods(late),
        timezone=ZONE,
    )


def test_the_boundary_seconds_belong_to_what_follows() -> None:
    schedule = schedules.schedule_for(_transient_quiz(CLOSES, [(UNTIL1, 0.5), (UNTIL2, 0.25)]))
    assert schedule.credit_at(CLOSES - timedelta(microseconds=1)) == schedules.Credit(1.0, False)
    assert schedule.credit_at(CLOSES) == schedules.Credit(0.5, True)
    assert schedule.credit_at(UNTIL1 - timedelta(microseconds=1)) == schedules.Credit(0.5, True)
    assert schedule.credit_at(UNTIL1) == schedules.Credit(0.25, True)
    assert schedule.credit_at(UNTIL2 - timedelta(microseconds=1)) == schedules.Credit(0.25, True)
    assert schedule.credit_at(UNTIL2) is None
    assert schedule.closed_message("Q") == (
        "The quiz 'Q' closed on 2026-11-06 17:00 CST and its last late period ended on "
        "2026-11-20 24:00 CST; answers are no longer accepted."
    )
    plain = schedules.schedule_for(_transient_quiz(CLOSES, []))
    assert plain.credit_at(CLOSES) is None
    assert plain.closed_message("Q") == (
        "The quiz 'Q' closed on 2026-11-06 17:00 CST; answers are no longer accepted."
    )


def test_late_periods_follow_an_extension_in_wall_clock_time_across_dst() -> None:
    # Closes Friday 2026-10-30 17:00 CDT; late until Friday 2026-11-06 17:00 CST (the clocks
    # moved back in between).  An extension to Saturday 17:00 CDT moves the late period to
    # Saturday 2026-11-07 17:00 CST: 23:00 UTC, not the 22:00 UTC a fixed 24 hours would give.
    closes = datetime(2026, 10, 30, 22, 0, tzinfo=UTC)
    until = datetime(2026, 11, 6, 23, 0, tzinfo=UTC)
    quiz = _transient_quiz(closes, [(until, 0.5)])
    extension = Extension(until=datetime(2026, 10, 31, 22, 0, tzinfo=UTC), credit=0.9)
    schedule = schedules.schedule_for(quiz, extension)
    assert schedule.own_closes == datetime(2026, 10, 31, 22, 0, tzinfo=UTC)
    assert [(p.end, p.credit, p.late) for p in schedule.periods] == [
        (datetime(2026, 10, 31, 22, 0, tzinfo=UTC), 0.9, False),
        (datetime(2026, 11, 7, 23, 0, tzinfo=UTC), 0.5, True),
    ]
    # On time before the quiz's own closing, the extension's credit after it.
    assert schedule.credit_at(closes - SECOND) == schedules.Credit(1.0, False)
    assert schedule.credit_at(closes) == schedules.Credit(0.9, False)
    # An extension that no longer extends (closes moved past it) is not in force.
    stale = Extension(until=closes - timedelta(hours=1), credit=1.0)
    assert schedules.schedule_for(quiz, stale) == schedules.schedule_for(quiz)


def test_best_attempt_counts_the_credited_score_and_keeps_the_first_reaching_it() -> None:
    class A:
        def __init__(self, score, credit, status, hour):
            self.score, self.credit, self.status = score, credit, status
            self.late = credit < 1
            self.created_at = datetime(2026, 1, 1, hour, tzinfo=UTC)

    best = points.best_attempt(
        [A(0.5, 1.0, "partial", 1), A(1.0, 0.5, "correct", 2), A(1.0, 0.25, "correct", 3)]
    )
    assert (best.score, best.credit, best.late) == (0.5, 1.0, False)
    assert best.reached_at.hour == 1 and best.solved_at.hour == 2
    assert points.exercise_points(0.5, 10, None) == 5.0
    assert points.exercise_points(0.5, 10, 7.5) == 7.5


# --------------------------------------------------------------------------------------------
# quiz.yaml


def test_quiz_yaml_dates_are_read_in_the_course_zone_across_a_dst_change(tmp_path: Path) -> None:
    bank = load_bank(make_bank(tmp_path / "b"), ZONE)
    assert bank.errors == [] and bank.warnings == []
    quiz = bank.quizzes[QUIZ]
    assert (quiz.opens, quiz.closes) == (OPENS, CLOSES)
    assert quiz.late == [(UNTIL1, 0.5), (UNTIL2, 0.25)]
    assert quiz.closes - quiz.opens == timedelta(days=7, hours=8) + timedelta(hours=1)
    utc = load_bank(make_bank(tmp_path / "u"))  # the default zone
    assert utc.quizzes[QUIZ].closes == datetime(2026, 11, 6, 17, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("yaml_text", "error"),
    [
        (
            "title: T\norder: 1\ncloses: 2026-12-01\nlate:\n  - until: 2026-11-30\n    credit: 0.5\n",
            "quiz.yaml:5:12: late[1].until (2026-11-30) must be later than closes (2026-12-01)",
        ),
        (
            "title: T\norder: 1\ncloses: 2026-12-01\nlate:\n  - until: 2026-12-08\n    credit: 0.5\n"
            "  - until: 2026-12-05\n    credit: 0.2\n",
            "quiz.yaml:7:12: late[2].until (2026-12-05) must be later than late[1].until (2026-12-08)",
        ),
        (
            "title: T\norder: 1\ncloses: 2026-12-01\nlate:\n  - until: 2026-12-08\n    credit: 1.5\n",
            "quiz.yaml:6:13: late[1].credit: Input should be less than or equal to 1 (got 1.5)",
        ),
        (
            "title: T\norder: 1\nlate:\n  - until: 2026-12-08\n    credit: 0.5\n",
            "quiz.yaml:3:1: late: late periods need a closes: time to follow",
        ),
        (
            "title: T\norder: 1\ncloses: next friday\n",
            "quiz.yaml:3:9: closes: 'next friday' is not a time",
        ),
    ],
)
def test_bad_quiz_yaml_dates_are_reported_at_their_line(tmp_path, yaml_text, error) -> None:
    bank = load_bank(make_bank(tmp_path / "b", yaml_text), ZONE)
    texts = [str(e) for e in bank.errors]
    assert len(texts) == 1 and QUIZ not in bank.quizzes, texts
    assert texts[0].split(f"{QUIZ}/", 1)[1].startswith(error), texts[0]


def test_quizzes_are_ordered_by_order_then_opening_then_id(app, tmp_path: Path) -> None:
    root = tmp_path / "ordered"
    quizzes = {
        "a": "title: A\norder: 2\n",
        "b": "title: B\nopens: 2026-01-01\n",
        "c": "title: C\n",
        "d": "title: D\norder: 1\n",
        "e": "title: E\nopens: 2025-06-01\n",
    }
    for name, text in quizzes.items():
        (root / name).mkdir(parents=True)
        (root / name / "quiz.yaml").write_text(text, encoding="utf-8")
        shutil.copy(EXERCISES / QUIZ / "05-deck-system.yaml", root / name / "x.yaml")
    bank = load_bank(root, ZONE)
    assert [q.id for q in bank.quiz_list()] == ["d", "a", "e", "b", "c"]
    assert [w.split("/")[-2] for w in bank.warnings] == ["b", "c", "e"]
    assert all("no order: given" in w for w in bank.warnings)
    result = CliRunner().invoke(main, ["validate", str(root)])
    assert result.exit_code == 0
    assert result.output.count("warning: ") == 3
    with app.app_context():
        # Another folder than the course's: its quizzes are added, the course's left live.
        report = services.sync_folder(db.session, root, ZONE, archive_missing=False)
        assert report.errors == []
        listed = [q.quiz.id for q in services.quiz_summaries(db.session, _user("prof"))]
        assert [q for q in listed if q in quizzes] == ["d", "a", "e", "b", "c"]
        assert [q.id for q in inst.live_quizzes(db.session) if q.id in quizzes] == listed[-5:]


# --------------------------------------------------------------------------------------------
# Submitting after the closing time


def test_answers_at_the_boundaries_earn_the_credit_of_the_period_they_start(app) -> None:
    with app.app_context():
        quiz = db.session.get(Quiz, QUIZ)
        assert (quiz.opens_at, quiz.closes_at, quiz.timezone) == (OPENS, CLOSES, ZONE)
        cases = [
            ("ana", CLOSES - SECOND, 1.0, False),
            ("ben", CLOSES, 0.5, True),
            ("cleo", UNTIL1, 0.25, True),
            ("dan", UNTIL2 - SECOND, 0.25, True),
        ]
        for name, when, credit, late in cases:
            result = _submit(name, "2, 5", when)
            assert result.verdict["status"] == "correct"
            assert (result.submission.credit, result.submission.late) == (credit, late)
            assert result.points == pytest.approx(10 * credit)
            assert result.to_dict()["credit"] == credit and result.to_dict()["late"] is late
            p = _progress(name)
            assert (p.best_score, p.best_points, p.best_late) == (credit, 10 * credit, late)
            assert p.solved_at == when  # a late right answer still solves the exercise
        before = db.session.scalar(select(func.count(Submission.id)))
        with pytest.raises(services.Forbidden) as err:
            _submit("eve", "2, 5", UNTIL2)
        assert err.value.message == (
            "The quiz 'Late quiz' closed on 2026-11-06 17:00 CST and its last late period "
            "ended on 2026-11-20 24:00 CST; answers are no longer accepted."
        )
        assert db.session.scalar(select(func.count(Submission.id))) == before
        # Instructors answer at any time, at full credit.
        assert _submit("prof", "2, 5", UNTIL2 + timedelta(days=30)).submission.credit == 1.0


def test_the_best_score_counts_the_credited_value(app) -> None:
    with app.app_context():
        early = _submit("eve", "2, 0", CLOSES - timedelta(hours=1))  # half right, on time
        assert early.verdict["status"] == "partial"
        late = _submit("eve", "2, 5", CLOSES + timedelta(hours=1))  # right, at 50 %
        assert late.points == pytest.approx(5.0)
        p = _progress("eve")
        expected = max(early.submission.score * 1.0, late.submission.score * 0.5)
        assert p.best_score == pytest.approx(expected)
        assert p.best_points == pytest.approx(10 * expected)
        assert p.solved_at == CLOSES + timedelta(hours=1)
        # Recomputing the progress row from the submissions gives the same.
        services.recompute_progress(db.session, _user("eve").id, DECK)
        again = _progress("eve")
        assert (again.best_score, again.best_points) == (p.best_score, p.best_points)


def test_regrade_keeps_the_stored_late_credit(app) -> None:
    with app.app_context():
        _submit("ben", "2, 5", CLOSES + timedelta(minutes=5))
        _submit("ana", "2, 5", CLOSES - timedelta(minutes=5))
        summary = inst.regrade_exercise(db.session, DECK)
        assert summary.changed == 0 and summary.progress_changes == []
        assert _progress("ben").best_points == 5.0 and _progress("ana").best_points == 10.0
        points = dict(
            db.session.execute(
                select(Submission.user_id, Submission.points).where(Submission.exercise_id == DECK)
            ).all()
        )
        assert points == {_user("ben").id: 5.0, _user("ana").id: 10.0}


# --------------------------------------------------------------------------------------------
# Extensions


def test_an_extension_inside_a_late_period_moves_the_late_periods_after_it(app) -> None:
    # fay's own closing time falls in the first late period of the others.
    extended = datetime(2026, 11, 10, 18, 0, tzinfo=UTC)  # 2026-11-10 12:00 CST
    with app.app_context():
        row = extensions.set_extension(
            db.session, QUIZ, "fay", "2026-11-10 12:00", reason="surgery"
        )
        assert (row.until, row.credit) == (extended, 1.0)
        schedule = schedules.student_schedule(db.session, db.session.get(Quiz, QUIZ), _user("fay"))
        # + 3 days 19 hours of wall-clock time (17:00 -> 12:00 four days later)
        assert [(p.end, p.credit, p.late) for p in schedule.periods] == [
            (extended, 1.0, False),
            (datetime(2026, 11, 17, 18, 0, tzinfo=UTC), 0.5, True),  # 11-17 12:00 CST
            (datetime(2026, 11, 25, 1, 0, tzinfo=UTC), 0.25, True),  # 11-24 19:00 CST
        ]
        inside = _submit("fay", "2, 0", extended - SECOND)  # on time for fay
        assert (inside.submission.credit, inside.submission.late) == (1.0, False)
        at_end = _submit("fay", "2, 5", extended)  # exactly at her closing time: late
        assert (at_end.submission.credit, at_end.submission.late) == (0.5, True)
        # gus has no extension: the same day is in the second period for him.
        day = datetime(2026, 11, 16, 12, 0, tzinfo=UTC)
        assert _submit("gus", "2, 5", day).submission.credit == 0.25
        # An extension with reduced credit: after closes, before until.
        extensions.set_extension(db.session, QUIZ, "dan", "2026-11-08", credit="0.8")
        assert _submit("dan", "2, 5", CLOSES + SECOND).submission.credit == 0.8
        assert extensions.remove_extension(db.session, QUIZ, "fay", reason="done") is True
        assert extensions.remove_extension(db.session, QUIZ, "fay") is False
        actions = [
            (e.action, e.user.username, e.reason)
            for e in db.session.scalars(select(AuditEntry).order_by(AuditEntry.id))
        ]
        assert actions == [
            ("extend", "fay", "surgery"),
            ("extend", "dan", ""),
            ("remove-extension", "fay", "done"),
        ]
        first = db.session.scalars(select(AuditEntry).order_by(AuditEntry.id)).first()
        assert first.before is None and first.after["until"] == extended.isoformat()
        assert first.actor.startswith("command line (")


def _counts() -> tuple[int, int, int]:
    return (
        db.session.scalar(select(func.count(Extension.id))),
        db.session.scalar(select(func.count(AuditEntry.id))),
        db.session.scalar(
            select(func.count(Progress.id)).where(Progress.override_points.is_not(None))
        ),
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: extensions.set_extension(db.session, QUIZ, "ana", "2026-11-06 16:00"),
            "until: 2026-11-06 16:00 CST is not later than the quiz's closes "
            "(2026-11-06 17:00 CST)",
        ),
        (
            lambda: extensions.set_extension(db.session, QUIZ, "ana", "2026-11-06 17:00"),
            "until: 2026-11-06 17:00 CST is not later than the quiz's closes",
        ),
        (
            lambda: extensions.set_extension(db.session, QUIZ, "ana", "soon"),
            "until: 'soon' is not a time",
        ),
        (
            lambda: extensions.set_extension(db.session, QUIZ, "ana", "2026-11-09", credit="1.01"),
            "credit: must be a number from 0 to 1 (0.5 = half credit), got '1.01'",
        ),
        (
            lambda: extensions.set_extension(db.session, QUIZ, "ana", "2026-11-09", credit=-0.5),
            "credit: must be a number from 0 to 1",
        ),
        (
            lambda: extensions.set_extension(db.session, QUIZ, "zoe", "2026-11-09"),
            "username: there is no student 'zoe'",
        ),
        (
            lambda: extensions.set_extension(db.session, QUIZ, "prof", "2026-11-09"),
            "username: there is no student 'prof'",
        ),
        (
            lambda: extensions.set_extension(db.session, "02-nope", "ana", "2026-11-09"),
            "quiz: there is no quiz '02-nope'",
        ),
        (
            lambda: overrides.set_override(db.session, DECK, "ana", "5", "  "),
            "reason: a reason is required (it is kept in the audit history)",
        ),
        (
            lambda: overrides.set_override(db.session, DECK, "ana", "10.5", "x"),
            "points: must be a number from 0 to 10 (the exercise's points), got '10.5'",
        ),
        # One reason rule for overrides, extensions and excusals (services.audit.reason_text):
        # at most REASON_MAX characters, and no NUL (a 500 on PostgreSQL before).
        (
            lambda: overrides.set_override(db.session, DECK, "ana", "5", "a\x00b"),
            "reason: holds a NUL character",
        ),
        (
            lambda: overrides.set_override(db.session, DECK, "ana", "5", "x" * 501),
            "reason: at most 500 characters, got 501",
        ),
        (
            lambda: extensions.set_extension(
                db.session, QUIZ, "ana", "2026-11-09", reason="a\x00b"
            ),
            "reason: holds a NUL character",
        ),
        (
            lambda: extensions.set_extension(
                db.session, QUIZ, "ana", "2026-11-09", reason="y" * 501
            ),
            "reason: at most 500 characters, got 501",
        ),
        (
            lambda: extensions.remove_extension(db.session, QUIZ, "ben", reason="a\x00b"),
            "reason: holds a NUL character",
        ),
        (
            lambda: overrides.set_override(db.session, DECK, "ana", "nan", "x"),
            "points: must be a number from 0 to 10",
        ),
        (
            lambda: overrides.set_override(db.session, f"{QUIZ}/nope", "ana", "5", "x"),
            "exercise: there is no exercise '01-linear-systems/nope'",
        ),
        (
            lambda: overrides.set_override(db.session, DECK, "zoe", "5", "x"),
            "username: there is no student 'zoe'",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(app, call, message) -> None:
    with app.app_context():
        extensions.set_extension(db.session, QUIZ, "ben", "2026-11-08", reason="kept")
        before = _counts()
        with pytest.raises(services.ServiceError) as err:
            call()
        assert err.value.message.startswith(message), err.value.message
        assert "\n" not in err.value.message
        db.session.rollback()
        assert _counts() == before


def test_a_roster_of_extensions_is_granted_whole_or_not_at_all(app) -> None:
    text = "username,display_name,until,credit\nben,Ben,,\ncleo,Cleo,2026-11-09 08:00,0.9\n"
    with app.app_context():
        bad = text + "zoe,,,\nana,,,2\n"
        with pytest.raises(extensions.ExtensionsError) as err:
            extensions.extend_roster(
                db.session, QUIZ, extensions.parse_extensions_csv(bad, until="2026-11-08")
            )
        assert err.value.problems == [
            "line 4: username: there is no student 'zoe'",
            "line 5: credit: must be a number from 0 to 1 (0.5 = half credit), got '2'",
        ]
        assert _counts() == (0, 0, 0)
        with pytest.raises(extensions.ExtensionsError, match="line 2: until: no until"):
            extensions.parse_extensions_csv(text)
        rows = extensions.extend_roster(
            db.session, QUIZ, extensions.parse_extensions_csv(text, until="2026-11-08")
        )
        assert [(r.user.username, r.until, r.credit) for r in rows] == [
            ("ben", datetime(2026, 11, 9, 6, 0, tzinfo=UTC), 1.0),
            ("cleo", datetime(2026, 11, 9, 14, 0, tzinfo=UTC), 0.9),
        ]


# --------------------------------------------------------------------------------------------
# Overrides and the four readers of a student's points


def _api_points(app, name: str) -> dict[str, float]:
    with app.app_context():
        token = services.create_api_token(db.session, _user(name), "t")
    body = (
        app.test_client()
        .get("/api/v1/progress", headers={"Authorization": f"Bearer {token}"})
        .get_json()
    )
    assert "exercises" in body, body
    return {
        e["id"]: e["best_points"]
        for e in body["exercises"]
        if e["attempts_used"] or e["overridden"]
    }


def _everywhere(app, name: str) -> dict[str, object]:
    """The student's points as the student page, the API, the scoreboard and the gradebook
    (page and CSV) give them."""
    with app.app_context():
        user = _user(name)
        summaries = services.quiz_summaries(db.session, user)
        page = {e.exercise.id: e.best_points for q in summaries for e in q.exercises if e.progress}
        board = {r.username: r.points for r in inst.scoreboard(db.session).rows}
        gb = inst.gradebook(db.session)
        row = next(r for r in gb.rows if r.username == name)
        cells = {k: c.points for k, c in row.cells.items() if c.points is not None}
        lines = list(csv.DictReader(io.StringIO(inst.gradebook_csv(gb))))
        line = next(r for r in lines if r["username"] == name)
        columns = {e.id: inst.exercise_column(e) for e in gb.exercises}
        from_csv = {k: float(line[c]) for k, c in columns.items() if line[c] != ""}
        total = sum(q.points_earned for q in summaries)
    return {
        "page": page,
        "api": _api_points(app, name),
        "gradebook": cells,
        "csv": from_csv,
        "totals": (total, board[name], row.earned),
        "notes": (line[inst.LATE_COLUMN], line[inst.OVERRIDES_COLUMN]),
    }


def test_an_override_wins_everywhere_and_survives_a_regrade(app) -> None:
    with app.app_context():
        _submit("ben", "2, 5", CLOSES + timedelta(hours=2))  # late: 5 points
        _submit("ben", "0 0", CLOSES - timedelta(days=1), exercise=TWO)  # on time, wrong
    late = _everywhere(app, "ben")
    assert late["page"] == late["api"] == late["gradebook"] == late["csv"] == {DECK: 5.0, TWO: 0.0}
    assert late["totals"] == (5.0, 5.0, 5.0)
    assert late["notes"] == (f"{DECK}: late 50%", "")
    with app.app_context():
        overrides.set_override(db.session, TWO, "ben", "7.5", "answered on paper", by=_user("prof"))
        overrides.set_override(db.session, DECK, "cleo", 4, "no attempt, oral exam")
    over = _everywhere(app, "ben")
    cleo = _everywhere(app, "cleo")
    want = {DECK: 5.0, TWO: 7.5}
    assert over["page"] == over["api"] == over["gradebook"] == over["csv"] == want
    assert over["totals"] == (12.5, 12.5, 12.5)
    assert over["notes"] == (f"{DECK}: late 50%", f"{TWO}: answered on paper")
    assert cleo["page"] == cleo["api"] == cleo["gradebook"] == cleo["csv"] == {DECK: 4.0}
    assert cleo["totals"] == (4.0, 4.0, 4.0)
    with app.app_context():
        # A later attempt and a regrade change the computed best, not the points.
        _submit("ben", "0 0", CLOSES - timedelta(hours=1), exercise=TWO)
        inst.regrade_exercise(db.session, TWO)
        p = _progress("ben", TWO)
        assert (p.best_points, p.best_score, p.override_reason) == (7.5, 0.0, "answered on paper")
        services.recompute_progress(db.session, _user("ben").id, TWO)
        assert _progress("ben", TWO).best_points == 7.5
    # The student sees it as set by the instructor.
    page = _sign_in(app, "ben").get("/").get_data(as_text=True)
    assert "set by your instructor" in page and "late: 50% credit" in page
    with app.app_context():
        assert overrides.remove_override(db.session, TWO, "ben", by=_user("prof")) is True
    back = _everywhere(app, "ben")
    with app.app_context():
        history = [
            (e.action, e.actor, e.before, e.after, e.reason)
            for e in db.session.scalars(
                select(AuditEntry)
                .where(AuditEntry.user_id == _user("ben").id)
                .order_by(AuditEntry.id)
            )
        ]
    assert back["page"] == back["gradebook"] == back["csv"] == {DECK: 5.0, TWO: 0.0}
    assert back["totals"] == (5.0, 5.0, 5.0)
    assert history == [
        (
            "override",
            "prof",
            None,
            {"points": 7.5, "reason": "answered on paper"},
            "answered on paper",
        ),
        ("remove-override", "prof", {"points": 7.5, "reason": "answered on paper"}, None, ""),
    ]


def test_a_change_of_points_in_the_bank_keeps_an_override(app, tmp_path: Path) -> None:
    bank = Path(app.config["QUIZAPP_EXERCISES"])
    with app.app_context():
        _submit("ana", "2, 5", CLOSES + SECOND)  # 0.5 credited
        overrides.set_override(db.session, DECK, "ben", "3", "makeup")
    path = bank / QUIZ / "05-deck-system.yaml"
    path.write_text(path.read_text().replace("points: 10", "points: 20"))
    with app.app_context():
        assert services.sync_folder(db.session, bank, ZONE).errors == []
        assert _progress("ana").best_points == 10.0  # 0.5 x 20
        assert _progress("ben").best_points == 3.0


# --------------------------------------------------------------------------------------------
# Pages and the JSON API


def test_the_api_gives_times_with_the_course_zone_offset(app) -> None:
    with app.app_context():
        extensions.set_extension(db.session, QUIZ, "fay", "2026-11-10 12:00")
        token = services.create_api_token(db.session, _user("fay"), "t")
    body = (
        app.test_client()
        .get("/api/v1/quizzes", headers={"Authorization": f"Bearer {token}"})
        .get_json()
    )
    quiz = next(q for q in body["quizzes"] if q["id"] == QUIZ)
    assert quiz["timezone"] == ZONE
    assert quiz["opens"] == "2026-10-30T09:00:00-05:00"
    assert quiz["closes"] == "2026-11-06T17:00:00-06:00"
    assert quiz["my_closes"] == "2026-11-10T12:00:00-06:00"
    assert quiz["late"] == [
        {"until": "2026-11-17T12:00:00-06:00", "credit": 0.5},
        {"until": "2026-11-24T19:00:00-06:00", "credit": 0.25},
    ]
    assert quiz["open"] is False  # the real clock is past all of it


def test_the_api_gives_submission_and_activity_times_with_the_course_zone_offset(app) -> None:
    when = datetime(2026, 11, 5, 18, 30, tzinfo=UTC)  # 12:30 in Chicago (CST, UTC-06:00)
    with app.app_context():
        _submit("fay", "2, 5", when)
        token = services.create_api_token(db.session, _user("fay"), "t")
    client = app.test_client()
    auth = {"Authorization": f"Bearer {token}"}
    subs = client.get(f"/api/v1/exercises/{DECK}/submissions", headers=auth).get_json()
    assert [s["created_at"] for s in subs["submissions"]] == ["2026-11-05T12:30:00-06:00"]
    progress = client.get("/api/v1/progress", headers=auth).get_json()
    (mine,) = [e for e in progress["exercises"] if e["id"] == DECK]
    assert mine["last_activity"] == "2026-11-05T12:30:00-06:00"
    quizzes = client.get("/api/v1/quizzes", headers=auth).get_json()["quizzes"]
    (listed,) = [e for q in quizzes for e in q["exercises"] if e["id"] == DECK]
    assert listed["last_activity"] == "2026-11-05T12:30:00-06:00"


def _sign_in(app, name: str):
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    resp = client.post(
        "/login", data={"csrf_token": csrf_from(page), "username": name, "password": PASSWORD}
    )
    assert resp.status_code == 302
    return client


@pytest.fixture()
def open_app(tmp_path: Path):
    """The quiz closed an hour ago (real clock), with a late period for a week."""
    zone = coursetime.parse_zone(ZONE)
    now = datetime.now(UTC)
    closes = coursetime.local(now - timedelta(hours=1), zone).strftime("%Y-%m-%d %H:%M")
    until = coursetime.local(now + timedelta(days=7), zone).strftime("%Y-%m-%d %H:%M")
    text = f'title: Open quiz\norder: 1\ncloses: "{closes}"\nlate:\n  - until: "{until}"\n    credit: 0.5\n'
    bank = make_bank(tmp_path / "exercises", text)
    app = make_app(
        tmp_path, QUIZAPP_EXERCISES=bank, QUIZAPP_TIMEZONE=ZONE, QUIZAPP_SEED_SECRET=SECRET
    )
    with app.app_context():
        assert services.sync_folder(db.session, bank, ZONE).errors == []
        for name in ("ana", "ben"):
            services.create_user(db.session, name, PASSWORD)
        services.create_user(db.session, "prof", PASSWORD, role="instructor")
    app.config["closes_text"] = closes
    return app


def test_pages_show_the_late_period_and_the_credit_in_the_course_zone(open_app) -> None:
    ana = _sign_in(open_app, "ana")
    home = ana.get("/").get_data(as_text=True)
    abbreviation = coursetime.local(datetime.now(UTC), coursetime.parse_zone(ZONE)).tzname()
    assert f"Closed {open_app.config['closes_text']} {abbreviation}; late answers until" in home, (
        home[home.find("<h2") :][:900]
    )
    assert "50% credit" in home
    url = f"/exercises/{DECK}"
    page = ana.get(url).get_data(as_text=True)
    assert "an answer now is late and earns 50% of its score" in page
    resp = ana.post(url, data={"csrf_token": csrf_from(page), "via": "text", "answer": "2, 5"})
    shown = resp.get_data(as_text=True)
    assert resp.status_code == 200 and "late: 50% credit" in shown
    assert "5 of 10 points" in shown


def test_the_instructor_student_page_gives_and_removes_extensions_and_overrides(open_app) -> None:
    prof = _sign_in(open_app, "prof")
    with open_app.app_context():
        sid = _user("ana").id
    page = prof.get(f"/instructor/students/{sid}").get_data(as_text=True)
    token = csrf_from(page)
    url = f"/instructor/students/{sid}/extensions"
    bad = prof.post(url, data={"csrf_token": token, "quiz_id": QUIZ, "until": "2000-01-01"})
    assert bad.status_code == 302
    shown = prof.get(f"/instructor/students/{sid}").get_data(as_text=True)
    assert "Nothing changed: until: 2000-01-01 24:00 CST is not later than" in shown.replace(
        "CDT", "CST"
    )
    with open_app.app_context():
        assert _counts() == (0, 0, 0)
    until = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%d")
    prof.post(url, data={"csrf_token": token, "quiz_id": QUIZ, "until": until, "reason": "flu"})
    shown = prof.get(f"/instructor/students/{sid}").get_data(as_text=True)
    assert "may answer" in shown and f"{until} 24:00" in shown and "flu" in shown
    # ana is on time again: her answer earns full credit.
    ana = _sign_in(open_app, "ana")
    page = ana.get(f"/exercises/{DECK}").get_data(as_text=True)
    assert "Your extension: answers until" in page
    ana.post(
        f"/exercises/{DECK}", data={"csrf_token": csrf_from(page), "via": "text", "answer": "2, 5"}
    )
    with open_app.app_context():
        assert _progress("ana").best_points == 10.0
    # An override through the page; a missing reason changes nothing.
    ovr = f"/instructor/students/{sid}/overrides"
    prof.post(ovr, data={"csrf_token": token, "exercise_id": TWO, "points": "6"})
    shown = prof.get(f"/instructor/students/{sid}").get_data(as_text=True)
    assert "Nothing changed: reason: a reason is required" in shown
    prof.post(ovr, data={"csrf_token": token, "exercise_id": TWO, "points": "6", "reason": "oral"})
    shown = prof.get(f"/instructor/students/{sid}").get_data(as_text=True)
    assert "Override: 6 points" in shown and "History of extensions and overrides" in shown
    gb = prof.get("/instructor/gradebook").get_data(as_text=True)
    assert 'title="override: oral"' in gb and "Two equations, two unknowns" in gb
    prof.post(ovr, data={"csrf_token": token, "exercise_id": TWO, "action": "remove"})
    prof.post(url, data={"csrf_token": token, "quiz_id": QUIZ, "action": "remove"})
    with open_app.app_context():
        assert _counts() == (0, 4, 0)


def test_the_gradebook_page_is_paged(open_app) -> None:
    with open_app.app_context():
        for k in range(5):
            services.create_user(db.session, f"s{k}", PASSWORD)
    prof = _sign_in(open_app, "prof")
    first = prof.get("/instructor/gradebook?per_page=3").get_data(as_text=True)
    second = prof.get("/instructor/gradebook?per_page=3&page=3").get_data(as_text=True)
    assert "Page 1 of 3 (7 students)" in first and "Page 3 of 3" in second
    assert first.count('<th scope="row">') == 3 and second.count('<th scope="row">') == 1


def test_reset_links_of_a_roster_import_download_as_csv(open_app) -> None:
    prof = _sign_in(open_app, "prof")
    page = prof.get("/instructor/students").get_data(as_text=True)
    resp = prof.post(
        "/instructor/roster/import",
        data={
            "csrf_token": csrf_from(page),
            "roster": (io.BytesIO(b"username,display_name,email\nzed,Zed,\nyan,Yan,\n"), "r.csv"),
        },
        content_type="multipart/form-data",
    )
    html = resp.get_data(as_text=True)
    assert "Download these links as CSV" in html
    fields = re.findall(r'<input type="hidden" name="(username|name|link)" value="([^"]*)">', html)
    data = {"csrf_token": csrf_from(html)}
    form = [(k, v.replace("&amp;", "&")) for k, v in fields]
    download = prof.post(
        "/instructor/roster/links.csv",
        data=MultiDict([("csrf_token", data["csrf_token"]), *form]),
    )
    assert download.headers["Content-Disposition"] == 'attachment; filename="reset-links.csv"'
    rows = list(csv.reader(io.StringIO(download.get_data().decode("utf-8-sig"))))
    assert rows[0] == ["username", "display_name", "reset_link"]
    assert [r[0] for r in rows[1:]] == [v for k, v in form if k == "username"]
    assert all("/reset/" in r[2] for r in rows[1:])
    with open_app.app_context():
        assert db.session.scalar(select(func.count(User.id)).where(User.username == "zed")) == 1


# --------------------------------------------------------------------------------------------
# The migration


def _filled(table, values: dict, now: datetime) -> dict:
    """``values`` plus a neutral value for every other NOT NULL column of ``table`` without a
    server default (columns another revision added: this test is about deadlines_0001)."""
    import sqlalchemy as sa

    out = dict(values)
    for col in table.columns:
        if col.name in out or col.nullable or col.server_default is not None:
            continue
        kind = col.type
        if isinstance(kind, sa.JSON):
            out[col.name] = {}
        elif isinstance(kind, sa.DateTime):
            out[col.name] = now
        elif isinstance(kind, sa.Integer | sa.Float | sa.Numeric):
            out[col.name] = 0
        elif isinstance(kind, sa.Boolean):
            out[col.name] = False
        else:
            out[col.name] = ""
    return out


def test_the_migration_keeps_what_existing_rows_meant(tmp_path: Path) -> None:
    """Rows written before deadlines_0001 read after it as before: no late periods, zone UTC,
    every submission on time at full credit, no override (and back down again)."""
    import sqlalchemy as sa
    from flask_migrate import downgrade

    from quizapp.web.database import MIGRATIONS_DIR, upgrade_database

    app = make_app(tmp_path)
    with app.app_context():
        downgrade(directory=str(MIGRATIONS_DIR), revision="lti_0001")
        now = datetime(2026, 1, 1, tzinfo=UTC)
        with db.engine.begin() as conn:
            meta = sa.MetaData()
            t = {
                n: sa.Table(n, meta, autoload_with=conn)
                for n in ("users", "quizzes", "exercises", "exercise_versions", "variants")
            }
            t["submissions"] = sa.Table("submissions", meta, autoload_with=conn)
            t["progress"] = sa.Table("progress", meta, autoload_with=conn)
            conn.execute(
                t["users"].insert(),
                dict(id=1, username="ana", username_key="ana", display_name="", role="student",
                     password_hash="x", active=True, created_at=now),
            )  # fmt: skip
            conn.execute(
                t["quizzes"].insert(),
                dict(id="q", title="Q", description="", position=3, content_hash="", archived=False,
                     created_at=now, updated_at=now),
            )  # fmt: skip
            conn.execute(
                t["exercises"].insert(),
                dict(id="q/x", quiz_id="q", title="X", kind="k", points=10.0, attempts=3,
                     practice=True, position=0, concepts=[], current_hash="h", archived=False,
                     created_at=now, updated_at=now),
            )  # fmt: skip
            conn.execute(
                t["exercise_versions"].insert(),
                dict(id=1, exercise_id="q/x", content_hash="h", source="s", title="X", points=10.0,
                     attempts=3, created_at=now),
            )  # fmt: skip
            conn.execute(
                t["variants"].insert(),
                _filled(t["variants"], dict(id=1, user_id=1, exercise_id="q/x", variant_number=1,
                        seed=7, version_id=1, created_at=now), now),
            )  # fmt: skip
            conn.execute(
                t["submissions"].insert(),
                dict(id=1, variant_id=1, user_id=1, exercise_id="q/x", version_id=1,
                     answer_format="text", raw_answer="1", answer_hash="a", verdict={},
                     status="correct", score=1.0, points=10.0, mistakes=[], used_attempt=True,
                     attempt_number=1, source="web", created_at=now),
            )  # fmt: skip
            conn.execute(
                t["progress"].insert(),
                dict(id=1, user_id=1, exercise_id="q/x", best_score=1.0, best_points=10.0,
                     attempts_used=1, submissions_count=1, current_variant=1),
            )  # fmt: skip
    upgrade_database(app)
    with app.app_context():
        quiz = db.session.get(Quiz, "q")
        assert (quiz.position, quiz.late, quiz.timezone) == (3, [], "UTC")
        sub = db.session.get(Submission, 1)
        assert (sub.late, sub.credit, sub.points) == (False, 1.0, 10.0)
        p = db.session.get(Progress, 1)
        assert (p.best_credit, p.best_late, p.override_points, p.best_points) == (
            1.0,
            False,
            None,
            10.0,
        )
        db.session.remove()
        downgrade(directory=str(MIGRATIONS_DIR), revision="lti_0001")
        with db.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT position FROM quizzes")).scalar() == 3
    upgrade_database(app)


def test_the_lms_score_holds_late_credit_and_overrides(app) -> None:
    from quizapp.lti.scores import lms_score, resource_id

    with app.app_context():
        _submit("ben", "2, 5", CLOSES + SECOND)  # 5 of 10 (late, 50 %)
        overrides.set_override(db.session, TWO, "cleo", "4", "oral exam")  # no attempt at all
        ben, cleo = _user("ben").id, _user("cleo").id
        quiz = resource_id(quiz_id=QUIZ)
        assert (
            lms_score(db.session, ben, quiz).given,
            lms_score(db.session, ben, quiz).maximum,
        ) == (
            5.0,
            20.0,
        )
        only = lms_score(db.session, cleo, resource_id(exercise_id=TWO))
        assert (only.given, only.maximum, only.activity) == (4.0, 10.0, "Completed")
        assert lms_score(db.session, cleo, resource_id(exercise_id=DECK)) is None


@pytest.mark.parametrize(
    "value, says",
    [
        ([datetime(2026, 3, 1).date()], "got a list [2026-03-01]"),
        ({"at": datetime(2026, 3, 1, 9, 0)}, "got a mapping {at: 2026-03-01 09:00}"),
        (None, "got nothing"),
        (5, "got 5"),
    ],
)
def test_a_time_that_is_not_one_says_what_was_written_not_a_python_repr(value, says) -> None:
    from quizapp import coursetime

    with pytest.raises(coursetime.TimeError) as err:
        coursetime.parse_wall_time(value, "opens")
    assert str(err.value) == f"opens: expected a date and time such as 2026-12-01 17:00, {says}"
    assert "datetime" not in str(err.value)


def test_extending_again_without_a_reason_keeps_the_reason_and_a_given_one_replaces_it(
    app,
) -> None:
    with app.app_context():
        extensions.set_extension(db.session, QUIZ, "ana", "2026-11-08", reason="flu")
        row = extensions.set_extension(db.session, QUIZ, "ana", "2026-11-09", credit="90%")
        assert (row.reason, row.credit) == ("flu", 0.9)
        row = extensions.set_extension(db.session, QUIZ, "ana", "2026-11-10", reason="")
        assert row.reason == ""  # given empty: cleared on purpose
        row = extensions.set_extension(db.session, QUIZ, "ana", "2026-11-10", reason=" again ")
        assert row.reason == "again"
