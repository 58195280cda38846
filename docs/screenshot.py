"""Take the README's screenshot: a student's attention exercise after a wrong answer.

Usage (from the repository root; needs Chromium and the ``playwright`` package of the test
extra, never a browser download)::

    python docs/screenshot.py                 # writes docs/screenshot.png
    python docs/screenshot.py --out shot.png  # elsewhere

It serves the app with the bundled exercises from a temporary instance folder on a free loopback
port, creates the student ``ana``, opens ``05-attention/01-attention-weights`` in headless
Chromium (``$QUIZAPP_CHROMIUM`` or ``/usr/bin/chromium``), enters the softmax of the unscaled
scores (the weights computed here with NumPy from ana's variant, without the division by the
square root of d) and photographs the page with its verdict: the cells marked, the mistake named.
``tests/test_docs_screenshot.py`` runs it (marked ``browser``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
EXERCISE = "05-attention/01-attention-weights"
USER, PASSWORD = "ana", "correct horse battery"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
#: The browser window: wide enough for the page's column, tall enough for prompt and verdict.
VIEWPORT = {"width": 960, "height": 1000}


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def take(out: Path, chromium: str) -> Path:
    """Serve the app, answer as described above, and write the PNG to ``out``; returns ``out``.

    Raises ``RuntimeError`` if the verdict does not name the missing scale (the page changed).
    """
    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    from quizapp import services
    from quizapp.bank import load_bank
    from quizapp.models import Exercise, db
    from quizapp.web import create_app
    from quizapp.web.database import upgrade_database

    exercises = REPO / "exercises"
    with tempfile.TemporaryDirectory(prefix="quizapp-shot-") as tmp:
        app = create_app(
            {
                "INSTANCE_PATH": Path(tmp) / "instance",
                "SQLALCHEMY_DATABASE_URI": f"sqlite:///{Path(tmp) / 'quizapp.sqlite'}",
                "QUIZAPP_EXERCISES": exercises,
                "RATELIMIT_ENABLED": False,
            }
        )
        upgrade_database(app)
        with app.app_context():
            report = services.sync_folder(db.session, exercises)
            if report.errors:
                raise RuntimeError(f"the bundled exercises do not sync: {report.errors}")
            user = services.create_user(db.session, USER, PASSWORD, display_name="Ana")
            row = services.get_or_create_variant(
                db.session,
                user,
                db.session.get(Exercise, EXERCISE),
                app.config["QUIZAPP_SEED_SECRET"],
            )
            seed = row.seed
        values = load_bank(exercises).exercises[EXERCISE].generate(seed).values
        q, k = np.asarray(values["Q"], dtype=float), np.asarray(values["K"], dtype=float)
        unscaled = np.round(_softmax_rows(q @ k.T), 2)

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page(
                        base_url=f"http://127.0.0.1:{server.server_port}",
                        viewport=VIEWPORT,
                        color_scheme="light",
                    )
                    page.goto("/login")
                    page.get_by_label("Username").fill(USER)
                    page.get_by_label("Password", exact=True).fill(PASSWORD)
                    page.get_by_role("button", name="Sign in").click()
                    page.wait_for_url("**/")
                    page.goto(f"/exercises/{EXERCISE}")
                    for r, row_values in enumerate(unscaled):
                        for c, value in enumerate(row_values):
                            page.locator(f'[name="cell-{r}-{c}"]').fill(f"{value:.2f}")
                    with page.expect_navigation():
                        page.locator(
                            "form.grid-form button[type=submit]:not([name=action])"
                        ).click()
                    text = page.locator("main").inner_text()
                    if "You forgot to divide the scores by" not in text:
                        raise RuntimeError(
                            f"the verdict does not name the missing scale: {text[:500]}"
                        )
                    out.parent.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(out), full_page=False)
                finally:
                    browser.close()
        finally:
            server.shutdown()
            thread.join(timeout=10)
            with app.app_context():
                db.engine.dispose()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshot.png")
    args = parser.parse_args(argv)
    chromium = os.environ.get("QUIZAPP_CHROMIUM") or "/usr/bin/chromium"
    print(f"wrote {take(args.out, chromium)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
