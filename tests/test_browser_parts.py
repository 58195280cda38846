"""A multi-part exercise in headless Chromium (issue 18), with the conventions and the live
server of tests/test_browser.py: the parts in order with their own grids, all parts submitted
together with a slip carried forward, one part checked on its own, a locked part, the worked
solution part by part.

The expected values are computed here with NumPy from the numbers of the student's variant
(its stored seed, regenerated from the YAML by the bank), never read from the page.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import test_browser as tb
from test_browser import (
    RIGHT_BG,
    WRONG_BG,
    LiveServer,
    assert_math_rendered,
    np_softmax_rows,
    register,
    shot,
    variant_values,
)

# The live server, browser and page fixtures of tests/test_browser.py, used here by name (the
# ``browser`` mark skips, or fails under .ci/run, when Chromium or Playwright is missing:
# tests/browser_support.py).
live_server = tb.live_server
browser = tb.browser
context = tb.context
page = tb.page

pytestmark = pytest.mark.browser

STEPS = "05-attention/01a-weights-step-by-step"


def fill_part(page: Any, name: str, grid: np.ndarray, digits: int) -> None:
    for (r, c), value in np.ndenumerate(grid):
        page.locator(f"[name=part-{name}-cell-{r}-{c}]").fill(f"{value:.{digits}f}")


def click(page: Any, label: str) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name=label).click()


def part_section(page: Any, name: str) -> Any:
    return page.locator(f"section#part-{name}")


def background(page: Any, name: str, r: int, c: int) -> str:
    return page.locator(f"[name=part-{name}-cell-{r}-{c}]").evaluate(
        "e => getComputedStyle(e).backgroundColor"
    )


def test_a_slip_carried_forward_then_one_part_at_a_time(page: Any, live_server: LiveServer) -> None:
    server = live_server
    register(page, "parts-ana")
    page.goto(f"/exercises/{STEPS}")
    assert page.locator("section.part").count() == 2
    titles = page.locator("section.part h2").all_inner_texts()
    assert titles[0].startswith("Part S") and titles[1].startswith("Part W")
    assert "4 points" in titles[0] and "6 points" in titles[1]
    assert_math_rendered(page)
    assert page.get_by_label("Part S, row 1, column 1").is_editable()

    values = variant_values(server, "parts-ana", STEPS)
    S = np.asarray(values["Q"], float) @ np.asarray(values["K"], float).T
    W = np_softmax_rows(S / np.sqrt(2))
    # A slip in S's first row, chosen so that W's first row changes at 2 decimals.
    bad = S.copy()
    for j in range(3):
        bad = S.copy()
        bad[0, j] += 3
        if np.any(np.abs(np.round(np_softmax_rows(bad / np.sqrt(2)), 2) - W) > 0.0051):
            break
    w_bad = np_softmax_rows(bad / np.sqrt(2))
    fill_part(page, "S", bad, 0)
    fill_part(page, "W", w_bad, 2)
    click(page, "Submit all parts")
    s_text = part_section(page, "S").inner_text()
    w_text = part_section(page, "W").inner_text()
    assert "partly right" in s_text and "5 of 6 entries are correct" in s_text
    assert "✓ correct" in w_text and "Correct given your S" in w_text
    assert "(follow-through)" in w_text
    slipped = int(np.argmax(bad[0] != S[0]))
    assert background(page, "S", 0, slipped) == WRONG_BG
    assert background(page, "S", 1, 0) == RIGHT_BG
    assert background(page, "W", 0, 0) == RIGHT_BG  # right given the student's own S
    assert int(page.locator("#attempts-left").inner_text()) == 3
    shot(page, server, "parts-01-follow-through")

    # Fix S alone, with its own button: S locks, W (from the old S) is graded again.
    fill_part(page, "S", S, 0)
    click(page, "Check part S only")
    s_text = part_section(page, "S").inner_text()
    assert "✓ correct" in s_text and "locked" in s_text
    assert not page.get_by_label(re.compile(r"^Part S, row 1, column 1")).is_editable()
    assert page.get_by_role("button", name="Check part S only").count() == 0
    assert "Correct given your S" not in part_section(page, "W").inner_text()
    assert int(page.locator("#attempts-left").inner_text()) == 2

    # Then W alone: solved, each part's answer and the worked solution step by step.
    fill_part(page, "W", W, 2)
    click(page, "Check part W only")
    assert "Solved!" in page.locator("main").inner_text()
    assert page.get_by_text("A correct answer to part W").is_visible()
    steps = page.locator("ol.steps h3").all_inner_texts()
    assert steps[0].startswith("S · ") and steps[-1] == "W · Answer"
    assert_math_rendered(page)
    shot(page, server, "parts-02-solved")


def test_an_unreadable_part_uses_no_attempt_and_says_which(
    page: Any, live_server: LiveServer
) -> None:
    register(page, "parts-ben")
    page.goto(f"/exercises/{STEPS}")
    page.locator("[name=part-S-cell-0-0]").fill("1,5")
    page.locator("[name=part-W-cell-0-0]").fill("0.5")
    click(page, "Submit all parts")
    assert "could not be read" in page.locator("section.verdict").inner_text()
    assert "used no attempt" in page.locator("main").inner_text()
    assert int(page.locator("#attempts-left").inner_text()) == 4
    assert page.locator("[name=part-S-cell-0-0]").get_attribute("aria-invalid") == "true"
