"""Roster sync (NRPS) against the test platform: accounts created and updated from the LMS
course's member list (paged), members who left marked inactive, the LMS's refusal explained;
from the instructor page's button."""

from __future__ import annotations

import requests
from lti_platform import INSTRUCTOR, LEARNER, Platform
from lti_support import (
    COURSE,
    QUIZ,
    Tool,
    platform_fixture,  # noqa: F401  (fixture)
    tool_fixture,  # noqa: F401  (fixture)
)
from sqlalchemy import select
from test_web_support import csrf_from

from quizapp.lti import keys, roster
from quizapp.lti.http import TimeoutSession, forget_tokens
from quizapp.lti.models import LtiContext, LtiMember, LtiUser
from quizapp.models import User, db


def sync(tool: Tool) -> roster.RosterSync:
    with tool.app.app_context(), TimeoutSession() as http:
        ctx = db.session.scalars(select(LtiContext.id)).one()
        key = lambda: keys.tool_key(db.session, tool.app.config["SECRET_KEY"])  # noqa: E731
        return roster.sync_roster(db.session, ctx, key, http)


def people(tool: Tool) -> dict[str, tuple]:
    def read(s):
        rows = s.execute(
            select(
                LtiUser.sub,
                User.username,
                User.display_name,
                User.email,
                User.role,
                LtiMember.active,
            )
            .join(User, User.id == LtiUser.user_id)
            .join(LtiMember, LtiMember.user_id == User.id)
        ).all()
        return {r[0]: tuple(r[1:]) for r in rows}

    return tool.query(read)


def teacher_launch(tool: Tool, platform: Platform) -> requests.Session:
    link = platform.add_link(COURSE, "Linear", {"quizapp_quiz": QUIZ})
    browser = requests.Session()
    assert tool.launch(browser, "teacher-1", {"kind": "resource", "link": link}).status_code == 302
    return browser


def test_sync_creates_updates_and_marks_leavers(tool: Tool, platform: Platform) -> None:
    platform.page_size = 2  # three members: two pages
    teacher_launch(tool, platform)
    result = sync(tool)
    assert result.error is None
    assert sorted(result.created) == ["student-1", "student-2"]
    assert result.summary() == "Linear Algebra 101: 2 created, 0 updated, 1 unchanged, 0 inactive"
    got = people(tool)
    assert got["student-1"] == (
        "student-1",
        "Ana Álvarez",
        "student-1@example.edu",
        "student",
        True,
    )
    assert got["teacher-1"][3] == "instructor"
    # Nothing changed: nothing to do.
    assert (
        sync(tool).summary() == "Linear Algebra 101: 0 created, 0 updated, 3 unchanged, 0 inactive"
    )
    # A new student, a renamed one, one who left and one listed as inactive.
    platform.add_user("student-3", "Cy Cole", [LEARNER])
    platform.add_user("student-4", "Di Dee", [LEARNER])
    platform.users["student-1"].name = "Ana Álvarez-Ruiz"
    platform.contexts[COURSE]["members"] = ["teacher-1", "student-1", "student-3"]
    platform.contexts[COURSE]["inactive"] = ["student-4"]
    result = sync(tool)
    assert sorted(result.created) == ["Di.Dee", "student-3"]  # no email: from the name
    assert result.updated == ["student-1"] and result.inactive == ["student-2"]
    got = people(tool)
    assert got["student-1"][1] == "Ana Álvarez-Ruiz"
    assert (
        got["student-2"][4] is False
        and got["student-4"][4] is False
        and got["student-3"][4] is True
    )


def test_sync_refused_by_the_lms_changes_nothing(tool: Tool, platform: Platform) -> None:
    teacher_launch(tool, platform)
    forget_tokens()
    platform.token_down = True
    result = sync(tool)
    assert result.error is not None and "HTTP 503" in result.error
    assert "not synced" in result.summary()
    assert set(people(tool)) == {"teacher-1"}


def test_instructor_page_button_syncs(tool: Tool, platform: Platform) -> None:
    teacher = teacher_launch(tool, platform)
    page = teacher.get(tool.url + "/instructor/lms/")
    assert "Sync the roster from the LMS" in page.text
    ctx = tool.query(lambda s: s.scalars(select(LtiContext.id)).one())
    resp = teacher.post(
        tool.url + f"/instructor/lms/sync/{ctx}", data={"csrf_token": csrf_from(page.text)}
    )
    assert resp.status_code == 200
    assert "Linear Algebra 101: 2 created, 0 updated, 1 unchanged, 0 inactive" in resp.text
    assert platform.users["teacher-1"].roles == [INSTRUCTOR]
