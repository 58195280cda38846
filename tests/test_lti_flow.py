"""The whole LMS flow at API level against the test platform: OIDC login -> deep-linking launch
-> the instructor picks a quiz -> the platform creates the link and its grade column -> a
student's launch -> a graded submit -> the score arrives at the platform."""

from __future__ import annotations

import requests
from lti_platform import Platform
from lti_support import (
    COURSE,
    QUIZ,
    TWO,
    Tool,
    deep_link,
    platform_fixture,  # noqa: F401  (fixture)
    quiz_points,
    solve_two,
    submit_cells,
    tool_fixture,  # noqa: F401  (fixture)
    username_of,
)


def test_login_launch_deep_link_submit_score(tool: Tool, platform: Platform) -> None:
    teacher = requests.Session()
    back = deep_link(tool, teacher, [f"quiz:{QUIZ}"])
    assert "Added 1 items" in back.text
    (link_id,) = platform.contexts[COURSE]["links"]
    link = platform.links[link_id]
    item = platform.lineitems[link["lineitem"]]
    assert item["resourceId"] == f"quiz:{QUIZ}"
    assert item["scoreMaximum"] == quiz_points(QUIZ)
    assert link["custom"] == {"quizapp_quiz": QUIZ}

    student = requests.Session()
    resp = tool.launch(student, "student-1", {"kind": "resource", "link": link_id})
    assert resp.status_code == 302, resp.text[:800]
    assert resp.headers["Location"].endswith(f"/lti/quiz/{QUIZ}")
    page = student.get(tool.url + f"/lti/quiz/{QUIZ}")
    assert page.status_code == 200 and "Ana Álvarez" in page.text

    x = solve_two(tool, username_of(tool, "student-1"))
    verdict = submit_cells(tool, student, TWO, [[x[0]], [x[1]]])
    assert "correct" in verdict.lower()
    report = tool.deliver()
    assert report.summary().startswith("sent 1"), report.summary()
    score = platform.last_score(link["lineitem"], "student-1")
    assert score["scoreGiven"] == 10.0
    assert score["scoreMaximum"] == quiz_points(QUIZ)
    assert score["gradingProgress"] == "FullyGraded"
    assert score["activityProgress"] == "InProgress"
    assert platform.lineitem_creates == 1  # the deep link's; the tool created none
