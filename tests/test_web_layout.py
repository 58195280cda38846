"""Phone layout (390 px wide, Chromium through Playwright): a 2 x 3 answer grid fits, and wide
matrices in prompts scroll sideways inside their own box (overflow-x; a focusable, labelled
region) instead of being cut off or widening the page.  Marked ``browser``
(tests/browser_support.py: skipped, or failed under ``.ci/run``, when Chromium or Playwright is
missing); tests/test_browser.py checks every exercise at 320, 390 and 1280 px."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from browser_support import CHROMIUM, CHROMIUM_ARGS
from test_web_support import synced_app

pytestmark = pytest.mark.browser

MEASURE = """() => {
  const out = {pageWidth: document.documentElement.scrollWidth, inputs: [], clipped: [],
               mathOverflow: []};
  for (const el of document.querySelectorAll('table.grid input')) {
    const right = el.getBoundingClientRect().right;
    out.inputs.push(Math.round(right));
    // a box its scrolling grid hides (in part) until the student scrolls it into view
    if (right > el.closest('.table-wrap').getBoundingClientRect().right + 0.5) {
      out.clipped.push(el.getAttribute('aria-label'));
    }
  }
  for (const el of document.querySelectorAll('.math-display')) {
    if (el.scrollWidth > el.clientWidth + 1) {
      out.mathOverflow.push([getComputedStyle(el).overflowX,
                             Math.round(el.getBoundingClientRect().right),
                             el.tabIndex, el.getAttribute('role'), el.getAttribute('aria-label')]);
    }
  }
  return out;
}"""


LONGEST_LABELS = """(label) => {
  for (const th of document.querySelectorAll('table.grid tbody th')) th.textContent = label;
}"""


def longest_label() -> str:
    """The widest row label a bundled kind draws (a token of a sentence, a query word)."""
    from quizapp.bank.kinds._util import QUERY_WORDS, SENTENCES

    return max([t for s in SENTENCES for t in s] + QUERY_WORDS, key=len)


def test_phone_layout_grid_fits_and_wide_math_scrolls(tmp_path: Path) -> None:
    from playwright import sync_api
    from werkzeug.serving import make_server

    app = synced_app(tmp_path, RATELIMIT_ENABLED=False)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(base + "/register")
            page.fill("#username", "ana")
            page.fill("#password", "correct horse")
            page.fill("#confirm", "correct horse")
            page.click("button[type=submit]")
            wide_seen = 0
            for exercise in (
                "04-retrieval-and-softmax/01-retrieval-scores",  # a 2 x 3 grid
                "05-attention/01-attention-weights",  # Q and K side by side in the prompt
                "05-attention/02-attention-output",
                "05-attention/06-multi-head",
                "04-retrieval-and-softmax/10-why-sqrt-d",  # a formula wider than a phone
            ):
                page.goto(base + "/exercises/" + exercise)
                # The variant drawn decides the row labels: measure with the longest the bank
                # draws (a token, a query word), whatever this student's variant holds.
                page.evaluate(LONGEST_LABELS, longest_label())
                m = page.evaluate(MEASURE)
                assert m["pageWidth"] <= 390, (exercise, m)  # nothing widens the page
                if "why-sqrt-d" not in exercise:  # (a choice: no grid)
                    assert m["inputs"] and max(m["inputs"]) <= 390, (exercise, m)  # grid fits
                    assert m["clipped"] == [], (exercise, m)  # every box shown whole
                for overflow_x, right, tabindex, role, label in m["mathOverflow"]:
                    wide_seen += 1
                    assert overflow_x in ("auto", "scroll") and right <= 390, (exercise, m)
                    # app.js: the keyboard reaches it, and it says what it is
                    assert tabindex == 0 and role == "region" and "scroll" in label, (exercise, m)
            page.screenshot(path=str(tmp_path / "phone.png"), full_page=True)
            browser.close()
    finally:
        server.shutdown()
        thread.join(5)
    assert wide_seen >= 1  # at least one prompt matrix is wider than a phone: it scrolls
