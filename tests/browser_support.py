"""The headless Chromium the browser tests drive (Playwright's sync API).  No tests here.

Every test that launches Chromium is marked ``browser`` (``pytestmark = pytest.mark.browser``);
``tests/conftest.py`` skips such a test with :func:`browser_unavailable`'s reason before its
fixtures run, or fails it when ``QUIZAPP_TEST_REQUIRE`` contains ``browser`` (``.ci/run``).
Chromium is Debian's (``/usr/bin/chromium``) or ``$QUIZAPP_CHROMIUM``; Playwright's own browser
download is never used.
"""

from __future__ import annotations

import os
from pathlib import Path

CHROMIUM = os.environ.get("QUIZAPP_CHROMIUM") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def browser_unavailable() -> str | None:
    """Why the browser tests cannot run here (no Chromium binary, no playwright), or None."""
    if not Path(CHROMIUM).exists():
        return (
            f"no Chromium at {CHROMIUM} (apt-get install chromium, or set QUIZAPP_CHROMIUM to a "
            "Chromium binary)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    return None
