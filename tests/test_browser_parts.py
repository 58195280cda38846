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


def test_each_part_previews_as_typed_and_a_paste_fills_its_grid(
    page: Any, live_server: LiveServer
) -> None:
    """Issue 15 on a multi-part page: a matrix pasted into a part's grid box fills that part's
    grid (the server reads it, as the part's text box would), or says why not; each part shows
    how its answer is read as the student types; none of it is stored or uses an attempt."""
    server = live_server
    register(page, "parts-pia")
    values = variant_values(server, "parts-pia", STEPS)
    S = np.asarray(values["Q"], float) @ np.asarray(values["K"], float).T
    page.goto(f"/exercises/{STEPS}")
    before = tb.row_counts(server)
    status = part_section(page, "S").locator(".paste-status")
    # A NumPy-style paste into the last box of S fills all of S (the whole answer, the whole grid).
    text = "[" + ", ".join("[" + ", ".join(f"{v:g}" for v in row) + "]" for row in S) + "]"
    tb.paste_into(page, f"[name=part-S-cell-{S.shape[0] - 1}-{S.shape[1] - 1}]", text)
    tb.expect(status).to_contain_text("Filled")
    assert f"Filled {S.size} boxes from the pasted answer." == status.inner_text()
    filled = [
        [page.locator(f"[name=part-S-cell-{r}-{c}]").input_value() for c in range(S.shape[1])]
        for r in range(S.shape[0])
    ]
    assert np.allclose(np.array(filled, dtype=float), S)
    # S's own preview shows the matrix as read; W's grid is untouched and W shows nothing yet.
    s_preview = part_section(page, "S").locator(".preview")
    s_preview.locator(".preview-math math").wait_for()
    rows, cols = S.shape
    assert f"Read as a {rows}×{cols} matrix. Not graded yet: no attempt used." in (
        s_preview.inner_text()
    )
    assert np.allclose(
        [float(x.replace("−", "-")) for x in s_preview.locator("mn").all_text_contents()],
        np.abs(S).ravel(),
    )
    assert page.locator("[name=part-W-cell-0-0]").input_value() == ""
    assert part_section(page, "W").locator(".preview-message").inner_text() == ""
    # A row wider than W's grid pasted into W: nothing filled, and the part says why.
    w_status = part_section(page, "W").locator(".paste-status")
    wide = " ".join(["0.1"] * (cols + 1))
    tb.paste_into(page, "[name=part-W-cell-0-0]", wide)
    tb.expect(w_status).to_contain_text("nothing was filled")
    assert f"1 × {cols + 1}, but the grid is {rows} × {cols}" in w_status.inner_text()
    assert page.locator("[name=part-W-cell-0-0]").input_value() == ""
    # Words the reader cannot read fill nothing; a decimal comma (one spreadsheet cell of a
    # comma-decimal locale) goes into the one box, whose reader explains it, never two boxes.
    tb.paste_into(page, "[name=part-W-cell-0-0]", "hello world")
    tb.expect(w_status).to_contain_text("cannot be read")
    assert "Nothing was filled" in w_status.inner_text()
    assert page.locator("[name=part-W-cell-0-1]").input_value() == ""
    tb.paste_into(page, "[name=part-W-cell-0-0]", "0,25")
    assert page.locator("[name=part-W-cell-0-0]").input_value() == "0,25"
    assert page.locator("[name=part-W-cell-0-1]").input_value() == ""
    page.locator("[name=part-W-cell-0-0]").fill("")
    # W's text box, typed unreadable: W's preview gives the reader's message.
    page.locator("[name=part-W-answer]").press_sequentially("[[0.5, 0.5, x]]", delay=10)
    w_message = part_section(page, "W").locator(".preview-message")
    tb.expect(w_message).to_contain_text("Cannot be read")
    assert "Unknown name 'x'" in w_message.inner_text()
    shot(page, server, "parts-03-paste-and-preview")
    assert tb.row_counts(server) == before  # nothing stored
    assert int(page.locator("#attempts-left").inner_text()) == 4
    assert tb.csp_violations(page) == []
    # The pasted S is what is submitted: graded correct (W's unreadable text makes W invalid).
    page.locator("[name=part-W-answer]").fill("")
    click(page, "Check part S only")
    assert "✓ correct" in part_section(page, "S").inner_text()
