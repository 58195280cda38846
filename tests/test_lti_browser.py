"""The LMS flow in headless Chromium (Playwright): the test platform's course page frames the
tool as an LMS does.  An instructor adds a quiz through deep linking, a student opens it from
the course, answers an exercise inside the frame, and the background sender delivers the score
to the platform.  Then the frame is cross-site (platform on ``localhost``, tool on
``127.0.0.1``) so the tool's cookies are blocked there: the tool says so, and the new window it
offers signs the student in.

Conventions of tests/test_browser.py: Debian's Chromium (``$QUIZAPP_CHROMIUM``), skipped (or
failed under ``QUIZAPP_TEST_REQUIRE=browser``) without it; screenshots go to
``test-output/browser/lti-<backend>/``; expected answers are computed with NumPy from the stored
variant, never read from the page.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser_support import CHROMIUM, CHROMIUM_ARGS
from lti_platform import LEARNER, Platform
from lti_support import (
    COURSE,
    QUIZ,
    TWO,
    Tool,
    platform_fixture,  # noqa: F401  (fixture)
    quiz_points,
    register_platform,
    solve_two,
    tool_fixture,  # noqa: F401  (fixture)
    username_of,
)
from test_postgres_support import current_backend
from test_web_support import EXERCISES

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "test-output" / "browser"


@pytest.fixture()
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def new_page(chromium: Any) -> Any:
    ctx = chromium.new_context(viewport={"width": 1200, "height": 1000}, color_scheme="light")
    ctx.set_default_timeout(15_000)
    return ctx.new_page()


def shot(page: Any, name: str) -> None:
    folder = OUTPUT / f"lti-{current_backend()}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


def titles() -> tuple[str, str]:
    quiz = yaml.safe_load((EXERCISES / QUIZ / "quiz.yaml").read_text(encoding="utf-8"))["title"]
    ex = yaml.safe_load((EXERCISES / f"{TWO}.yaml").read_text(encoding="utf-8"))["title"]
    return quiz, ex


def wait_for_score(platform: Platform, item: str, sub: str, seconds: float = 20) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        score = platform.last_score(item, sub)
        if score is not None:
            return score
        time.sleep(0.1)
    raise AssertionError(f"no score for {sub} on {item} after {seconds} s")


def test_deep_link_launch_answer_and_score_in_the_lms_frame(
    tool: Tool, platform: Platform, chromium: Any
) -> None:
    tool.app.extensions["quizapp_lti"].worker_enabled = True
    quiz_title, exercise_title = titles()

    teacher = new_page(chromium)
    teacher.goto(f"{platform.url}/course/{COURSE}/select?user=teacher-1")
    frame = teacher.frame_locator("#tool")
    frame.get_by_label(f"Quiz: {quiz_title}").check()
    shot(teacher, "lti-01-deep-link-picker")
    frame.get_by_role("button", name="Add to the course").click()
    frame.locator("#added").wait_for()
    assert frame.locator("#added").inner_text() == "Added 1 items"
    (link,) = platform.contexts[COURSE]["links"]
    item = platform.links[link]["lineitem"]
    assert platform.lineitems[item]["scoreMaximum"] == quiz_points(QUIZ)
    assert platform.lineitems[item]["resourceId"] == f"quiz:{QUIZ}"

    student = new_page(chromium)
    student.goto(f"{platform.url}/course/{COURSE}/link/{link}?user=student-1")
    frame = student.frame_locator("#tool")
    frame.get_by_role("heading", name=quiz_title).wait_for()
    assert "Ana Álvarez" in frame.locator(".who").inner_text()
    shot(student, "lti-02-quiz-in-frame")
    frame.get_by_role("link", name=exercise_title).click()
    x = solve_two(tool, username_of(tool, "student-1"))
    frame.locator("[name=cell-0-0]").fill(f"{x[0]:.6f}")
    frame.locator("[name=cell-1-0]").fill(f"{x[1]:.6f}")
    frame.locator("form.grid-form button[type=submit]:not([value=preview])").click()
    frame.locator("section.verdict").wait_for()
    assert "correct" in frame.locator("section.verdict").inner_text().lower()
    shot(student, "lti-03-answer-in-frame")
    score = wait_for_score(platform, item, "student-1")
    assert (score["scoreGiven"], score["scoreMaximum"]) == (10.0, quiz_points(QUIZ))
    assert score["gradingProgress"] == "FullyGraded"


def test_blocked_cookies_in_a_cross_site_frame_offer_a_new_window(
    tool: Tool, platform: Platform, chromium: Any
) -> None:
    quiz_title, _ = titles()
    lms = Platform(host="localhost").start()  # another site than the tool's 127.0.0.1
    try:
        lms.tool_login, lms.tool_launch, lms.tool_jwks = (
            platform.tool_login,
            platform.tool_launch,
            platform.tool_jwks,
        )
        lms.add_user("student-9", "Zoe Zed", [LEARNER])
        lms.add_context(COURSE, "Cross-site course", ["student-9"])
        link = lms.add_link(COURSE, "Linear", {"quizapp_quiz": QUIZ})
        register_platform(tool.app, lms)
        page = new_page(chromium)
        page.goto(f"{lms.url}/course/{COURSE}/link/{link}?user=student-9")
        frame = page.frame_locator("#tool")
        blocked = frame.get_by_role("heading", name="Your browser blocks cookies for quizapp here")
        blocked.wait_for()
        shot(page, "lti-04-cookies-blocked-in-frame")
        with page.expect_popup() as popup_info:
            frame.get_by_role("link", name="Open quizapp in a new window").click()
        popup = popup_info.value
        popup.get_by_role("heading", name=quiz_title).wait_for()
        assert re.search(rf"/lti/quiz/{QUIZ}$", popup.url)
        assert "Zoe Zed" in popup.locator(".who").inner_text()
        shot(popup, "lti-05-new-window")
    finally:
        lms.stop()
