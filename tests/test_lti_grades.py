"""Grades to the LMS (AGS) against the test platform: the queue after a graded submit, a token
endpoint that is down (grades queued and sent later, with backoff), an unreachable one, line
items looked up by resourceId before any is created (and created once), a deleted line item,
only changed grades sent (``--force`` resends), excusals, refusals explained, the background
worker, several hosts sharing one database."""

from __future__ import annotations

import html
import logging
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from lti_platform import Platform
from lti_support import (
    COURSE,
    QUIZ,
    TWO,
    Tool,
    platform_fixture,  # noqa: F401  (fixture)
    quiz_points,
    register_platform,
    serve,
    solve_two,
    stop,
    submit_cells,
    tool_fixture,  # noqa: F401  (fixture)
    username_of,
)
from sqlalchemy import select, update
from test_web_support import csrf_from, make_app

from quizapp.lti import grades
from quizapp.lti.http import forget_tokens
from quizapp.lti.models import LtiGrade, LtiLineItem
from quizapp.models import utcnow

EXERCISE_POINTS = 10.0  # 06-two-by-two.yaml


def linked(platform: Platform, with_item: bool = True) -> str:
    item = {
        "scoreMaximum": quiz_points(QUIZ),
        "label": "Linear systems",
        "resourceId": f"quiz:{QUIZ}",
    }
    return platform.add_link(
        COURSE, "Linear systems", {"quizapp_quiz": QUIZ}, item if with_item else None
    )


def launched(tool: Tool, sub: str, link: str) -> requests.Session:
    browser = requests.Session()
    resp = tool.launch(browser, sub, {"kind": "resource", "link": link})
    assert resp.status_code == 302, resp.text[:800]
    return browser


_WRONG = iter(range(1, 10**6))


def answer(tool: Tool, browser: requests.Session, sub: str, right: bool) -> str:
    """Submit the right or a (new each time: no duplicate) wrong answer to the 2x2 system."""
    x = solve_two(tool, username_of(tool, sub))
    k = next(_WRONG)
    grid = [[x[0]], [x[1]]] if right else [[x[0] + k], [x[1] - 2 * k]]
    return submit_cells(tool, browser, TWO, grid)


def grade_row(tool: Tool, sub: str) -> LtiGrade:
    from quizapp.lti.models import LtiUser

    def get(s: Any) -> LtiGrade:
        row = s.scalars(
            select(LtiGrade)
            .join(LtiUser, LtiUser.user_id == LtiGrade.user_id)
            .where(LtiUser.sub == sub)
        ).one()
        s.expunge(row)
        return row

    return tool.query(get)


def the_item(platform: Platform, link: str | None = None) -> str:
    if link is not None and platform.links[link]["lineitem"]:
        return platform.links[link]["lineitem"]
    found = platform.lineitem_for(f"quiz:{QUIZ}", COURSE)
    assert found is not None
    return found["id"]


def test_graded_submit_queues_the_grade_and_the_worker_sends_it(
    tool: Tool, platform: Platform
) -> None:
    link = linked(platform)
    student = launched(tool, "student-1", link)
    # The launch queued the student's grade; before a graded attempt there is nothing to send.
    assert tool.deliver().summary() == "sent 0, unchanged 0, nothing to send 1, failed 0"
    assert platform.scores[platform.links[link]["lineitem"]] == []
    answer(tool, student, "student-1", right=False)
    row = grade_row(tool, "student-1")
    assert row.pending and row.sent_at is None
    report = tool.deliver()
    assert report.summary() == "sent 1, unchanged 0, nothing to send 0, failed 0"
    score = platform.last_score(the_item(platform, link), "student-1")
    assert (score["scoreGiven"], score["scoreMaximum"]) == (0.0, quiz_points(QUIZ))
    assert score["timestamp"].endswith("Z") and len(score["timestamp"]) == len(
        "2026-01-01T00:00:00.000Z"
    )
    assert not grade_row(tool, "student-1").pending
    # Another wrong answer leaves the best score as it was: nothing is sent.
    answer(tool, student, "student-1", right=False)
    assert tool.deliver().summary() == "sent 0, unchanged 1, nothing to send 0, failed 0"
    assert len(platform.scores[the_item(platform, link)]) == 1
    answer(tool, student, "student-1", right=True)
    assert tool.deliver().count("sent") == 1
    assert (
        platform.last_score(the_item(platform, link), "student-1")["scoreGiven"] == EXERCISE_POINTS
    )


def test_token_endpoint_down_keeps_grades_queued_until_it_answers(
    tool: Tool, platform: Platform
) -> None:
    link = linked(platform)
    student = launched(tool, "student-1", link)
    platform.token_down = True
    page = answer(tool, student, "student-1", right=True)
    assert "correct" in page.lower()  # the submit itself is untouched
    start = utcnow()
    report = tool.deliver()
    assert report.count("failed") == 1
    (message,) = report.errors()
    assert "token endpoint" in message and "HTTP 503" in message and "stay queued" in message
    row = grade_row(tool, "student-1")
    assert row.pending and row.tries == 1 and row.last_status == 503 and row.sent_at is None
    wait = (row.next_try_at - start).total_seconds()
    assert grades.BACKOFF_FIRST - 1 <= wait <= grades.BACKOFF_FIRST + 5
    assert platform.scores[the_item(platform, link)] == []
    assert tool.deliver().outcomes == []  # not due yet: no request at all
    # A second failure doubles the wait.
    later = start + timedelta(seconds=grades.BACKOFF_FIRST + 6)
    assert tool.deliver(now=later).count("failed") == 1
    row = grade_row(tool, "student-1")
    assert row.tries == 2
    assert (row.next_try_at - later).total_seconds() == pytest.approx(
        2 * grades.BACKOFF_FIRST, abs=1
    )
    # The instructor sees it, in words.
    teacher = launched(tool, "teacher-1", link)
    admin = teacher.get(tool.url + "/instructor/lms/")
    assert admin.status_code == 200
    assert "HTTP 503" in html.unescape(admin.text) and "Ana Álvarez" in admin.text
    # The endpoint answers again: the grade goes out at the next try.
    platform.token_down = False
    report = tool.deliver(now=later + timedelta(seconds=2 * grades.BACKOFF_FIRST + 1))
    assert report.count("sent") == 1
    assert (
        platform.last_score(the_item(platform, link), "student-1")["scoreGiven"] == EXERCISE_POINTS
    )
    row = grade_row(tool, "student-1")
    assert not row.pending and row.tries == 0 and row.last_error is None


def test_unreachable_token_endpoint_is_explained_and_retried(
    tool: Tool, platform: Platform
) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    register_platform(tool.app, platform, token_url=f"http://127.0.0.1:{closed}/token")
    link = linked(platform)
    student = launched(tool, "student-1", link)
    answer(tool, student, "student-1", right=True)
    report = tool.deliver()
    (message,) = report.errors()
    assert "could not be reached" in message and str(closed) in message
    assert grade_row(tool, "student-1").last_status is None
    register_platform(tool.app, platform)  # the right token URL again
    ids = tool.query(lambda s: grades.retry_now(s))
    assert tool.deliver(only=ids).count("sent") == 1


def test_line_item_is_looked_up_by_resource_id_before_one_is_created(
    tool: Tool, platform: Platform
) -> None:
    platform.page_size = 2
    for n in range(3):  # other columns first, so the lookup needs the second page
        platform._create_lineitem(
            COURSE, {"scoreMaximum": 5, "label": f"other {n}", "resourceId": f"other:{n}"}
        )
    existing = platform._create_lineitem(
        COURSE, {"scoreMaximum": quiz_points(QUIZ), "label": "Linear", "resourceId": f"quiz:{QUIZ}"}
    )
    creates = platform.lineitem_creates
    link = linked(platform, with_item=False)  # a link added by hand: no line item claim
    student = launched(tool, "student-1", link)
    answer(tool, student, "student-1", right=True)
    assert tool.deliver().count("sent") == 1
    assert platform.lineitem_creates == creates  # found, not created
    assert platform.last_score(existing, "student-1")["scoreGiven"] == EXERCISE_POINTS


def test_line_item_is_created_once_when_none_exists(tool: Tool, platform: Platform) -> None:
    link = linked(platform, with_item=False)
    one = launched(tool, "student-1", link)
    two = launched(tool, "student-2", link)
    answer(tool, one, "student-1", right=True)
    answer(tool, two, "student-2", right=False)
    assert tool.deliver().count("sent") == 2
    assert platform.lineitem_creates == 1
    item = platform.lineitem_for(f"quiz:{QUIZ}", COURSE)
    assert item["scoreMaximum"] == quiz_points(QUIZ) and item["tag"] == "quizapp"
    assert item["resourceLinkId"] == link
    assert {s["userId"] for s in platform.scores[item["id"]]} == {"student-1", "student-2"}
    answer(tool, two, "student-2", right=True)
    assert tool.deliver().count("sent") == 1
    assert platform.lineitem_creates == 1


def test_another_host_creating_the_line_item_makes_this_one_wait(
    tool: Tool, platform: Platform
) -> None:
    link = linked(platform, with_item=False)
    student = launched(tool, "student-1", link)
    answer(tool, student, "student-1", right=True)

    def claim(s: Any, when: Any) -> None:
        s.execute(update(LtiLineItem).values(claimed_at=when))
        s.commit()

    tool.query(lambda s: claim(s, utcnow()))
    report = tool.deliver()
    assert report.summary().endswith("deferred 1") and platform.lineitem_creates == 0
    # A claim older than LINEITEM_CLAIM is a crashed host's: retaken.
    tool.query(lambda s: claim(s, utcnow() - grades.LINEITEM_CLAIM - timedelta(seconds=1)))
    assert (
        tool.deliver(now=utcnow() + timedelta(seconds=grades.DEFER_SECONDS + 1)).count("sent") == 1
    )
    assert platform.lineitem_creates == 1


def test_deleted_line_item_is_found_again_or_recreated(tool: Tool, platform: Platform) -> None:
    link = linked(platform)
    student = launched(tool, "student-1", link)
    answer(tool, student, "student-1", right=False)
    assert tool.deliver().count("sent") == 1
    first = the_item(platform, link)
    del platform.lineitems[first]  # the instructor deleted the column in the LMS
    answer(tool, student, "student-1", right=True)
    report = tool.deliver()
    (message,) = report.errors()
    assert "HTTP 404" in message and "no such grade column" in message
    url = tool.query(lambda s: s.scalars(select(LtiLineItem.url)).one())
    assert url is None  # forgotten: looked up again next time
    assert (
        tool.deliver(now=utcnow() + timedelta(seconds=grades.BACKOFF_FIRST + 1)).count("sent") == 1
    )
    again = platform.lineitem_for(f"quiz:{QUIZ}", COURSE)
    assert (
        again["id"] != first
        and platform.last_score(again["id"], "student-1")["scoreGiven"] == EXERCISE_POINTS
    )


def test_excusal_lowers_the_maximum_and_send_grades_sends_the_change(
    tool: Tool, platform: Platform
) -> None:
    from quizapp import instructor as inst
    from quizapp.models import db

    link = linked(platform)
    student = launched(tool, "student-1", link)
    answer(tool, student, "student-1", right=True)
    tool.deliver()
    name = username_of(tool, "student-1")
    with tool.app.app_context():
        from quizapp import services

        user = services.find_user(db.session, name)
        inst.excuse(db.session, user.id, "01-linear-systems/07-three-by-three", reason="ill")
    ids = tool.query(lambda s: grades.queue_resource(s, quiz_id=QUIZ))
    report = tool.deliver(only=ids)
    assert report.count("sent") == 1, report.summary()
    score = platform.last_score(the_item(platform, link), "student-1")
    assert score["scoreMaximum"] == quiz_points(QUIZ) - 15.0  # 07-three-by-three.yaml: 15 points
    assert score["scoreGiven"] == EXERCISE_POINTS


def test_refusals_of_the_lms_are_explained(tool: Tool, platform: Platform) -> None:
    link = linked(platform)
    student = launched(tool, "student-1", link)
    answer(tool, student, "student-1", right=True)
    platform.score_refusal = (403, {"errors": [{"message": "Course not published"}]})
    (message,) = tool.deliver().errors()
    assert "HTTP 403: Course not published" in message and "publish the course" in message
    platform.score_refusal = (
        422,
        {"errors": [{"message": "User not found in course or is not a student"}]},
    )
    later = utcnow() + timedelta(seconds=grades.BACKOFF_FIRST + 1)
    (message,) = tool.deliver(now=later).errors()
    assert "User not found in course" in message and "still enrolled" in message
    platform.score_refusal = None
    platform.granted = [s for s in platform.granted if not s.endswith("/score")]
    forget_tokens()  # the token held would still work until it expires
    later += timedelta(seconds=2 * grades.BACKOFF_FIRST + 1)
    (message,) = tool.deliver(now=later).errors()
    assert "invalid_scope" in message and "Can create and update submission results" in message


def test_submit_never_fails_when_the_grade_cannot_be_queued(
    tool: Tool,
    platform: Platform,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    link = linked(platform)
    student = launched(tool, "student-1", link)

    def broken(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("queue table unavailable")

    monkeypatch.setattr(grades, "queue_for_submit", broken)
    with caplog.at_level(logging.ERROR):
        page = answer(tool, student, "student-1", right=True)
    assert "correct" in page.lower()
    assert any("could not queue the LMS grade" in r.getMessage() for r in caplog.records)
    monkeypatch.undo()
    # send-grades finds the grade the queue missed.
    ids = tool.query(lambda s: grades.queue_resource(s, quiz_id=QUIZ))
    assert tool.deliver(only=ids).count("sent") == 1


def test_background_worker_sends_after_a_submit(tool: Tool, platform: Platform) -> None:
    state = tool.app.extensions["quizapp_lti"]
    state.worker_enabled = True
    link = linked(platform)
    student = launched(tool, "student-1", link)
    answer(tool, student, "student-1", right=True)
    deadline = time.monotonic() + 20
    item = the_item(platform, link)
    while platform.last_score(item, "student-1") is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert platform.last_score(item, "student-1")["scoreGiven"] == EXERCISE_POINTS
    assert state.worker.running
    state.stop_worker()
    assert not state.worker.running


def test_instructor_page_resends_a_column(tool: Tool, platform: Platform) -> None:
    link = linked(platform)
    student = launched(tool, "student-1", link)
    answer(tool, student, "student-1", right=True)
    tool.deliver()
    teacher = launched(tool, "teacher-1", link)
    page = teacher.get(tool.url + "/instructor/lms/")
    assert page.status_code == 200 and "Linear Algebra 101" in page.text
    item_id = tool.query(lambda s: s.scalars(select(LtiLineItem.id)).one())
    token = csrf_from(page.text)
    resp = teacher.post(tool.url + f"/instructor/lms/send/{item_id}", data={"csrf_token": token})
    assert resp.status_code == 200  # redirected back to the page, with the outcome
    assert "sent 0, unchanged 1" in resp.text
    resp = teacher.post(
        tool.url + f"/instructor/lms/send/{item_id}", data={"csrf_token": token, "force": "1"}
    )
    assert "sent 1, unchanged 0" in resp.text
    assert len(platform.scores[the_item(platform, link)]) == 2
    # Students may not see the page.
    assert student.get(tool.url + "/instructor/lms/").status_code == 403


def test_two_hosts_share_registration_keys_nonces_and_the_queue(
    tool: Tool, platform: Platform, tmp_path: Path
) -> None:
    other = make_app(
        tmp_path / "host-b",
        SQLALCHEMY_DATABASE_URI=tool.app.config["SQLALCHEMY_DATABASE_URI"],
        SECRET_KEY=tool.app.config["SECRET_KEY"],
        QUIZAPP_SEED_SECRET=tool.app.config["QUIZAPP_SEED_SECRET"],
        RATELIMIT_ENABLED=False,
        QUIZAPP_LTI_WORKER=False,
    )
    server, thread, url_b = serve(other)
    try:
        assert (
            requests.get(url_b + "/lti/jwks").json() == requests.get(tool.url + "/lti/jwks").json()
        )
        link = linked(platform)
        browser = requests.Session()
        action, fields = tool.id_token_post(
            browser, "student-1", {"kind": "resource", "link": link}
        )
        # The login was answered by host A; the launch lands on host B.
        done = browser.post(url_b + "/lti/launch", data=fields, allow_redirects=False)
        assert done.status_code == 302, done.text[:800]
        # Replayed on host A: the nonce is gone for every host.
        again = browser.post(action, data=fields, allow_redirects=False)
        assert again.status_code == 401 and "already used" in again.text
        # A graded submit on host B; both hosts' senders run at once: one sends.
        x = solve_two(tool, username_of(tool, "student-1"))
        page = browser.get(url_b + "/exercises/" + TWO).text
        data = {
            "csrf_token": csrf_from(page),
            "via": "cells",
            "cell-0-0": f"{x[0]:.6f}",
            "cell-1-0": f"{x[1]:.6f}",
        }
        assert browser.post(url_b + "/exercises/" + TWO, data=data).status_code == 200
        host_b = Tool(other, url_b, platform)
        reports: list[Any] = []
        runners = [
            threading.Thread(target=lambda t=t: reports.append(t.deliver())) for t in (tool, host_b)
        ]
        for r in runners:
            r.start()
        for r in runners:
            r.join(30)
        assert sorted(r.count("sent") for r in reports) == [0, 1]
        assert len(platform.scores[the_item(platform, link)]) == 1
    finally:
        stop(other, server, thread)
