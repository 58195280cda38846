"""End-to-end tests in headless Chromium (Playwright, sync API) against the real app.

The app is served by Werkzeug on a free loopback port in a background thread, with a temporary
instance folder and the bundled ``exercises/``, on SQLite and (when ``QUIZAPP_TEST_POSTGRES_URL``
is set) on PostgreSQL.  Chromium is Debian's (``/usr/bin/chromium``, or ``$QUIZAPP_CHROMIUM``);
the tests skip with the reason when it is absent (tests/browser_support.py).  Playwright's own browser download is never used.

Screenshots of every key page go to ``test-output/browser/<backend>/`` (gitignored); the paths
are printed (``pytest -s`` or the captured output of a failure shows them).  Expected answers are
computed here with NumPy from the numbers of the student's variant (the service layer's stored
seed and ``quizapp.bank``) or from the exercise's YAML, never read from the page under test.
"""

from __future__ import annotations

import csv
import io
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
import yaml
from browser_support import CHROMIUM, CHROMIUM_ARGS
from test_postgres_support import PostgresSchema, postgres_base_url, skip_or_fail
from test_web_support import EXERCISES, gradebook_column, make_app

from quizapp import services
from quizapp.models import Exercise, db

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "test-output" / "browser"
PASSWORD = "correct horse battery"

DECK = "01-linear-systems/05-deck-system"
TRANSPOSE = "03-transpose-and-products/01-transpose"
WEIGHTS = "05-attention/01-attention-weights"
PRODUCT = "03-transpose-and-products/05-matrix-product"

# Colours of style.css (light scheme): a right cell's and a wrong cell's background.
RIGHT_BG = "rgb(230, 244, 234)"
WRONG_BG = "rgb(253, 236, 234)"


pytestmark = pytest.mark.browser


# --------------------------------------------------------------------------------------------
# The live server and the browser


@dataclass
class LiveServer:
    """The app served on ``url``; ``app`` gives direct access (service layer) for set-up."""

    app: Any
    url: str
    backend: str
    #: the path of every request the server received, in order
    hits: list[str] = field(default_factory=list)

    def shots(self) -> Path:
        folder = OUTPUT / self.backend
        folder.mkdir(parents=True, exist_ok=True)
        return folder


@contextmanager
def serve(tmp: Path, backend: str, **config: Any) -> Iterator[LiveServer]:
    """The real app (bundled exercises synced, fresh instance folder, real secrets, CSRF and
    rate limits on; ``config`` added) served by Werkzeug's threaded server on 127.0.0.1 and a
    free port, on SQLite or on a fresh PostgreSQL schema."""
    from werkzeug.serving import make_server

    schema = None
    if backend == "postgres":
        base = postgres_base_url()
        if base is None:
            skip_or_fail("postgres", "QUIZAPP_TEST_POSTGRES_URL is not set: no PostgreSQL")
        schema = PostgresSchema(base, f"qt_browser_{os.getpid()}")
        schema.created = True
        schema.drop()  # a leftover of an interrupted run
        schema.create()
        url = schema.url
    else:
        url = f"sqlite:///{tmp / 'quizapp.sqlite'}"
    app = make_app(
        tmp,
        SQLALCHEMY_DATABASE_URI=url,
        TESTING=False,
        QUIZAPP_EXERCISES=EXERCISES,
        INSTANCE_PATH=tmp / "instance",
        **config,
    )
    with app.app_context():
        report = services.sync_folder(db.session, EXERCISES)
        assert report.errors == [], report.errors
    hits: list[str] = []
    wsgi = app.wsgi_app

    def counting(environ: Any, start_response: Any) -> Any:
        hits.append(environ.get("PATH_INFO", ""))
        return wsgi(environ, start_response)

    server = make_server("127.0.0.1", 0, counting, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    try:
        yield LiveServer(app, f"http://127.0.0.1:{server.server_port}", backend, hits)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
        if schema is not None:
            schema.drop()


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def live_server(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[LiveServer]:
    """The app on each database backend (the student's and instructor's paths)."""
    backend = request.param
    # Each test registers its own student from 127.0.0.1: the module's ~30 tests would pass the
    # registration limit of 10 per minute per address on a fast machine (a 429 instead of the
    # page).  The other limits stay as configured.
    with serve(
        tmp_path_factory.mktemp(f"browser-{backend}"),
        backend,
        QUIZAPP_LIMIT_REGISTER="500 per minute",
    ) as server:
        yield server


@pytest.fixture(scope="module")
def sweep_server(tmp_path_factory) -> Iterator[LiveServer]:
    """The app on SQLite only, for the sweeps over every exercise and page type (layout, axe,
    weight, caching: nothing there depends on the database), with the students' leaderboard on
    so that its page is swept too."""
    with serve(
        tmp_path_factory.mktemp("browser-sweep"), "sqlite", QUIZAPP_STUDENT_LEADERBOARD=True
    ) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture()
def context(browser, live_server: LiveServer) -> Iterator[Any]:
    ctx = browser.new_context(
        base_url=live_server.url,
        viewport={"width": 1100, "height": 900},
        color_scheme="light",
        accept_downloads=True,
        permissions=["clipboard-read", "clipboard-write"],
    )
    ctx.set_default_timeout(15_000)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture()
def page(context) -> Any:
    return context.new_page()


# --------------------------------------------------------------------------------------------
# Helpers


def shot(page: Any, server: LiveServer, name: str) -> Path:
    """A full-page screenshot into test-output/browser/<backend>/<name>.png (path printed)."""
    path = server.shots() / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def assert_math_rendered(page: Any) -> int:
    """Every visible MathML ``math`` element is laid out by the browser's MathML engine with a
    non-zero box; returns how many there are (at least one)."""
    found = page.evaluate(
        """() => Array.from(document.getElementsByTagNameNS(
                'http://www.w3.org/1998/Math/MathML', 'math'))
            .filter(m => !m.closest('details:not([open])'))
            .map(m => { const r = m.getBoundingClientRect();
                        return {w: r.width, h: r.height,
                                display: getComputedStyle(m).display}; })"""
    )
    assert found, "no MathML <math> element on the page"
    for i, m in enumerate(found):
        assert m["w"] > 0 and m["h"] > 0, f"math element {i} has an empty box: {m}"
        # Chromium's MathML Core layout gives math elements display 'math' / 'block math'.
        assert "math" in m["display"], f"math element {i} is not laid out as MathML: {m}"
    # The brackets around a matrix stretch to its height (needs an OpenType MATH font, which
    # style.css names and .ci/run installs).
    fences = page.evaluate(
        """() => Array.from(document.querySelectorAll('mtable'))
            .filter(t => !t.closest('details:not([open])'))
            .map(t => { const prev = t.previousElementSibling;
                        if (!prev || prev.localName !== 'mo') return null;
                        return [prev.getBoundingClientRect().height,
                                t.getBoundingClientRect().height]; })
            .filter(x => x !== null)"""
    )
    for bracket, table in fences:
        assert bracket >= 0.9 * table, (
            f"a matrix's bracket is {bracket:.0f}px tall around a {table:.0f}px matrix: no math "
            "font? (apt-get install fonts-dejavu-extra)"
        )
    return len(found)


def exercise_url(exercise_id: str) -> str:
    return "/exercises/" + exercise_id


def register(page: Any, username: str, display_name: str = "") -> None:
    """Register through the form, by label (checks the labels are associated with inputs)."""
    page.goto("/register")
    page.get_by_label("Username").fill(username)
    if display_name:
        page.get_by_label("Your name (shown to your instructor)").fill(display_name)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Repeat the password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(re.compile(r"/$"))


def sign_in(page: Any, username: str) -> None:
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/$"))


def variant_values(server: LiveServer, username: str, exercise_id: str) -> dict[str, Any]:
    """The numbers of the variant ``username`` sees: the stored seed, regenerated by the bank."""
    from quizapp.bank import load_bank

    with server.app.app_context():
        user = services.find_user(db.session, username)
        exercise = db.session.get(Exercise, exercise_id)
        row = services.get_or_create_variant(
            db.session, user, exercise, server.app.config["QUIZAPP_SEED_SECRET"]
        )
        seed = row.seed
    # Regenerate from the seed with the bank loaded straight from the YAML files.
    return load_bank(EXERCISES).exercises[exercise_id].generate(seed).values


def np_softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def fill_grid(page: Any, grid: list[list[Any]]) -> None:
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            page.locator(f"[name=cell-{r}-{c}]").fill(str(value))


def submit_grid(page: Any) -> None:
    with page.expect_navigation():
        page.locator("form.grid-form button[type=submit]:not([name=action])").click()


def submit_text(page: Any, text: str) -> None:
    page.locator("#answer-text").fill(text)
    with page.expect_navigation():
        page.locator("form.text-form button[type=submit]:not([name=action])").click()


def verdict(page: Any) -> str:
    return page.locator("section.verdict").inner_text()


def attempts_left(page: Any) -> int:
    return int(page.locator("#attempts-left").inner_text())


def cell_background(page: Any, r: int, c: int) -> str:
    return page.locator(f"[name=cell-{r}-{c}]").evaluate("e => getComputedStyle(e).backgroundColor")


def fmt(x: float) -> str:
    return f"{float(x):.4f}"


def matrix_text(m: np.ndarray) -> str:
    return "\n".join(" ".join(fmt(v) for v in row) for row in np.atleast_2d(m))


def paste_into(page: Any, selector: str, text: str) -> None:
    """A real paste: ``text`` on the system clipboard, then Ctrl+V in the focused element."""
    page.evaluate("t => navigator.clipboard.writeText(t)", text)
    page.locator(selector).focus()
    page.keyboard.press("Control+V")


# --------------------------------------------------------------------------------------------
# The student's path


def test_student_registers_answers_and_sees_the_worked_solution(
    page: Any, live_server: LiveServer
) -> None:
    server = live_server
    register(page, "ana", display_name="Ana Lima")
    assert "Ana Lima" in page.locator("header").inner_text()
    shot(page, server, "01-home")

    # The deck's system, typed into the grid.  Its numbers come from the YAML file; NumPy solves.
    spec = yaml.safe_load((EXERCISES / f"{DECK}.yaml").read_text(encoding="utf-8"))
    A = np.array(spec["params"]["fixed"]["A"], dtype=float)
    b = np.array(spec["params"]["fixed"]["y"], dtype=float)
    x = np.linalg.solve(A, b)
    page.get_by_role("link", name=spec["title"], exact=True).click()
    page.wait_for_url(re.compile(re.escape(exercise_url(DECK)) + "$"))
    assert_math_rendered(page)
    shot(page, server, "02-deck-exercise")
    assert attempts_left(page) == 3

    # x right, y wrong: partly right, the right cell green, the wrong one red.
    fill_grid(page, [[fmt(x[0])], [fmt(x[1] + 3)]])
    submit_grid(page)
    text = verdict(page)
    assert "partly right" in text and "Score 50%" in text, text
    assert cell_background(page, 0, 0) == RIGHT_BG
    assert cell_background(page, 1, 0) == WRONG_BG
    assert page.locator("td.mark-right [name=cell-0-0]").count() == 1
    assert page.locator("td.mark-wrong [name=cell-1-0]").count() == 1
    assert attempts_left(page) == 2
    shot(page, server, "03-deck-partly-right")

    # x and y swapped: incorrect, and the mistake is named.
    fill_grid(page, [[fmt(x[1])], [fmt(x[0])]])
    submit_grid(page)
    text = verdict(page)
    assert "incorrect" in text and "swapped x and y" in text, text
    assert cell_background(page, 0, 0) == WRONG_BG and cell_background(page, 1, 0) == WRONG_BG
    assert attempts_left(page) == 1

    # Right, on the last attempt: the worked solution appears, the form is gone.
    fill_grid(page, [[fmt(x[0])], [fmt(x[1])]])
    submit_grid(page)
    text = verdict(page)
    assert "correct" in text and "Score 100%" in text and "10 of 10 points" in text, text
    assert page.locator("section.solution").is_visible()
    assert page.locator("form.grid-form").count() == 0
    assert_math_rendered(page)
    shot(page, server, "04-deck-solved")

    # Transpose (answered in the text box only: the grid would give away the shape): paste the
    # matrix A itself, not its transpose.
    A = np.asarray(variant_values(server, "ana", TRANSPOSE)["A"], dtype=float)
    page.goto(exercise_url(TRANSPOSE))
    assert_math_rendered(page)
    assert page.locator("form.grid-form").count() == 0
    paste_into(page, "#answer-text", matrix_text(A))
    assert page.locator("#answer-text").input_value() == matrix_text(A)
    with page.expect_navigation():
        page.locator("form.text-form button[type=submit]:not([name=action])").click()
    text = verdict(page)
    # When A's off-diagonal entries are opposite, A is also "A^T with two signs flipped": the
    # feedback then names both slips, "either of these slips gives: you transposed ...".
    assert "incorrect" in text and "transposed the matrix" in text.lower(), text
    shot(page, server, "05-transpose-mistake-named")

    # A matrix product, answered in a grid: the transposed product pasted into the text box is
    # marked cell by cell in the grid and named; then AB pasted into the first grid box spreads
    # over the grid (app.js) and is right.
    values = variant_values(server, "ana", PRODUCT)
    AB = np.asarray(values["A"], dtype=float) @ np.asarray(values["B"], dtype=float)
    symmetric = np.allclose(AB, AB.T)
    wrong = -AB if symmetric else AB.T  # a transpose is only detectable when AB is not symmetric
    page.goto(exercise_url(PRODUCT))
    paste_into(page, "#answer-text", matrix_text(wrong))
    with page.expect_navigation():
        page.locator("form.text-form button[type=submit]:not([name=action])").click()
    text = verdict(page)
    named = "wrong sign" if symmetric else "transposed the matrix"
    # -AB keeps a zero entry right (-0 = 0): then the answer is partly right, not incorrect.
    status = "partly right" if symmetric and np.any(np.isclose(AB, 0)) else "incorrect"
    assert status in text and named in text.lower(), text
    for r, c in np.ndindex(AB.shape):  # the pasted numbers in the grid, each marked
        # A transposed answer scores 0 and no cell counts (its equal diagonal included).
        right = symmetric and bool(np.isclose(wrong[r, c], AB[r, c]))
        assert cell_background(page, r, c) == (RIGHT_BG if right else WRONG_BG), (r, c)
        assert float(page.locator(f"[name=cell-{r}-{c}]").input_value()) == pytest.approx(
            wrong[r, c]
        )
    shot(page, server, "06-product-cells-coloured")
    for r, c in np.ndindex(AB.shape):
        page.locator(f"[name=cell-{r}-{c}]").fill("")
    paste_into(page, "[name=cell-0-0]", matrix_text(AB))
    # The page asks the server how the paste reads (the text box's reader), then fills the grid.
    expect(page.locator("form.grid-form .paste-status")).to_contain_text("Filled")
    for (r, c), value in np.ndenumerate(AB):
        assert float(page.locator(f"[name=cell-{r}-{c}]").input_value()) == pytest.approx(value)
    submit_grid(page)
    assert "Score 100%" in verdict(page)
    assert page.locator("form.grid-form").count() == 0  # solved: the worked solution instead
    assert page.locator("section.solution").is_visible()


def test_student_runs_out_of_attempts_and_sees_the_heatmap(
    page: Any, live_server: LiveServer
) -> None:
    server = live_server
    register(page, "ben")
    values = variant_values(server, "ben", WEIGHTS)
    Q = np.asarray(values["Q"], dtype=float)
    K = np.asarray(values["K"], dtype=float)
    d = Q.shape[1]
    weights = np_softmax_rows(Q @ K.T / np.sqrt(d))
    unscaled = np_softmax_rows(Q @ K.T)
    page.goto(exercise_url(WEIGHTS))
    assert_math_rendered(page)
    assert page.locator("form.grid-form input[name^=cell-]").count() == weights.size

    # 1: forgot the 1/sqrt(d) (the mistake is named); 2: uniform weights; 3: a transpose.
    fill_grid(page, np.round(unscaled, 2).tolist())
    submit_grid(page)
    text = verdict(page)
    assert "You forgot to divide the scores by" in text and f"d = {d}" in text, text
    assert attempts_left(page) == 2
    shot(page, server, "07-attention-missing-scale")
    fill_grid(page, np.full(weights.shape, 0.33).tolist())
    submit_grid(page)
    assert attempts_left(page) == 1
    submit_text(page, matrix_text(np.round(weights, 2) * 0 + 0.5))
    assert attempts_left(page) == 0
    assert "No attempts left on this variant" in page.locator("main").inner_text()
    assert page.locator("form.grid-form").count() == 0

    # The worked solution with the SVG heatmap of the weights: one cell per weight, each number
    # the NumPy weight.
    solution = page.locator("section.solution")
    assert solution.is_visible()
    heatmap = page.locator("svg.heatmap").last
    box = heatmap.bounding_box()
    assert box is not None and box["width"] > 50 and box["height"] > 50
    assert heatmap.locator("rect").count() == weights.size
    numbers = [
        t for t in heatmap.locator("text").all_text_contents() if re.fullmatch(r"[-\d.]+", t)
    ]
    assert np.allclose(np.array(numbers, dtype=float), weights.ravel(), atol=0.006), numbers
    assert_math_rendered(page)
    shot(page, server, "08-attention-solution-heatmap")

    # The same page on a phone: no sideways scrolling of the page itself.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width}px wide on a 390px phone"
    assert_math_rendered(page)
    shot(page, server, "09-phone-390px-solution")


def test_exercise_form_works_with_the_keyboard_alone(page: Any, live_server: LiveServer) -> None:
    server = live_server
    register(page, "cleo")
    values = variant_values(server, "cleo", PRODUCT)
    expected = np.asarray(values["A"], dtype=float) @ np.asarray(values["B"], dtype=float)
    page.goto(exercise_url(PRODUCT))
    page.locator("body").focus()

    # Tab from the top of the page until the first grid box has the focus.
    order: list[str] = []
    for _ in range(60):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "document.activeElement.id || document.activeElement.name || document.activeElement.tagName"
        )
        order.append(focused)
        if focused == "cell-0-0":
            break
    assert order[-1] == "cell-0-0", f"Tab never reached the grid: {order}"
    assert "answer-text" not in order  # the grid comes before the paste box

    # Then every box in row-major order, then the grid's Submit button.
    cells = [f"cell-{r}-{c}" for r, c in np.ndindex(expected.shape)]
    seen = ["cell-0-0"]
    for _ in cells[1:]:
        page.keyboard.press("Tab")
        seen.append(page.evaluate("document.activeElement.name"))
    assert seen == cells
    page.keyboard.press("Tab")
    button = page.evaluate(
        "[document.activeElement.tagName, document.activeElement.type,"
        " !!document.activeElement.closest('form.grid-form')]"
    )
    assert button == ["BUTTON", "submit", True]
    focus_ring = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert focus_ring != "none"  # the keyboard focus is visible

    # Type the answer with the keyboard only, Shift+Tab back to the first box; Enter submits.
    for _ in cells:
        page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.name") == "cell-0-0"
    for i, (r, c) in enumerate(np.ndindex(expected.shape)):
        page.keyboard.type(fmt(expected[r, c]))
        if i < len(cells) - 1:
            page.keyboard.press("Tab")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    text = verdict(page)
    assert "correct" in text and "Score 100%" in text, text
    shot(page, server, "10-keyboard-answer-correct")

    # Enter in the single-line answer of another exercise submits too (invalid: no attempt).
    page.goto(exercise_url(DECK))
    page.locator("[name=cell-0-0]").focus()
    page.keyboard.type("abc")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "invalid" in verdict(page)
    assert attempts_left(page) == 3


# --------------------------------------------------------------------------------------------
# The instructor's side


def test_instructor_sees_the_scoreboard_and_downloads_the_gradebook(
    page: Any, live_server: LiveServer
) -> None:
    server = live_server
    app = server.app
    with app.app_context():
        services.create_user(db.session, "prof", PASSWORD, role="instructor")
        dora = services.create_user(db.session, "dora", PASSWORD, display_name="Dora Diaz")
        secret = app.config["QUIZAPP_SEED_SECRET"]
        # Dora: the deck's system right on the 2nd attempt (10 points), the transpose wrong once.
        services.submit(db.session, dora, DECK, "1, 1", seed_secret=secret)
        services.submit(db.session, dora, DECK, "2, 5", seed_secret=secret)
        services.submit(
            db.session, dora, TRANSPOSE, "999 999\n999 999\n999 999", seed_secret=secret
        )
    sign_in(page, "prof")
    page.get_by_role("link", name="Instructor").click()
    page.get_by_role("navigation", name="Instructor").get_by_role("link", name="Scoreboard").click()
    page.wait_for_url(re.compile(r"/instructor/scoreboard"))
    row = page.locator("table.scoreboard tbody tr", has_text="Dora Diaz")
    cells = row.locator("td").all_inner_texts()
    # rank, points, solved, attempts, last improvement
    assert cells[1:4] == ["10", "1", "3"], cells
    shot(page, server, "11-instructor-scoreboard")

    page.get_by_role("navigation", name="Instructor").get_by_role("link", name="Gradebook").click()
    page.wait_for_url(re.compile(r"/instructor/gradebook"))
    shot(page, server, "12-instructor-gradebook")
    with page.expect_download() as info:
        page.get_by_role("link", name="Download CSV").click()
    download = info.value
    assert download.suggested_filename == "gradebook.csv"
    target = server.shots() / "gradebook.csv"
    download.save_as(str(target))
    text = target.read_text(encoding="utf-8-sig")
    rows = {r["username"]: r for r in csv.DictReader(io.StringIO(text))}
    dora_row = rows["dora"]
    assert dora_row["display_name"] == "Dora Diaz"
    assert dora_row[gradebook_column(DECK)] == "10"
    assert dora_row[gradebook_column(TRANSPOSE)] == "0"
    assert "prof" not in rows  # instructors are not graded
    print(f"gradebook: {target}")


def test_a_page_is_usable_on_a_phone(browser, live_server: LiveServer) -> None:
    """A 390px-wide phone: the exercise page and the grid fit without sideways page scrolling."""
    server = live_server
    ctx = browser.new_context(
        base_url=server.url,
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        color_scheme="light",
    )
    try:
        page = ctx.new_page()
        register(page, "eve")
        shot(page, server, "13-phone-390px-home")
        page.goto(exercise_url(WEIGHTS))
        assert_math_rendered(page)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width}px wide on a 390px phone"
        last = page.locator("form.grid-form button[type=submit]:not([name=action])").bounding_box()
        assert last is not None and last["x"] + last["width"] <= 390
        # The whole 2 x 3 grid is on screen: no box hidden behind a sideways scroll.
        rows, cols = 2, 3
        for r, c in np.ndindex(rows, cols):
            box = page.locator(f"[name=cell-{r}-{c}]").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (r, c)
        wrap = page.locator("form.grid-form .table-wrap")
        assert wrap.evaluate("e => e.scrollWidth <= e.clientWidth"), "the grid scrolls sideways"
        shot(page, server, "14-phone-390px-exercise")
    finally:
        ctx.close()


# --------------------------------------------------------------------------------------------
# The exercise page, second pass (issue 15): every bullet of the issue, with screenshots.

AXE = REPO / "tests" / "js" / "node_modules" / "axe-core" / "axe.min.js"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
MULTI_HEAD = "05-attention/06-multi-head"
#: A prompt whose formula is wider than a 390 px phone (it scrolls in its own box).
WIDE_AT_390 = "04-retrieval-and-softmax/10-why-sqrt-d"
CHOICE = "02-matrices-and-maps/03-which-is-linear"
FILL = "05-attention/08-fill-in-weights"
EXPRESSION = "05-attention/10-attention-expression"
SCALAR = "01-linear-systems/01-one-unknown"
LINE = "01-linear-systems/03-deck-line"
INDEX = "04-retrieval-and-softmax/04-top-keyword"
#: Records every Content-Security-Policy violation of the page (an init script is injected by
#: the DevTools protocol, which the page's CSP does not govern, as is page.evaluate).
CSP_WATCH = (
    "window.__csp = []; document.addEventListener('securitypolicyviolation',"
    " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
)


def expect(target: Any) -> Any:
    """Playwright's ``expect`` (polls through its selector engine, not by ``eval`` in the page,
    which the page's CSP refuses); imported here so the module loads without Playwright."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(target)


def new_context(browser: Any, server: LiveServer, width: int, **kw: Any) -> Any:
    ctx = browser.new_context(
        base_url=server.url,
        viewport={"width": width, "height": 900},
        color_scheme=kw.pop("color_scheme", "light"),
        permissions=["clipboard-read", "clipboard-write"],
        **kw,
    )
    ctx.set_default_timeout(15_000)
    ctx.add_init_script(CSP_WATCH)
    return ctx


def make_student(server: LiveServer, username: str) -> Any:
    with server.app.app_context():
        return services.create_user(db.session, username, PASSWORD).id


def finish(server: LiveServer, username: str, exercise_id: str, answers: list[str]) -> None:
    """Submit ``answers`` for ``username`` through the service layer (set-up, not under test)."""
    with server.app.app_context():
        user = services.find_user(db.session, username)
        for answer in answers:
            services.submit(
                db.session,
                user,
                exercise_id,
                answer,
                seed_secret=server.app.config["QUIZAPP_SEED_SECRET"],
            )


def wrong_texts(server: LiveServer, username: str, exercise_id: str, n: int) -> list[str]:
    """``n`` different wrong but readable answers to the student's variant (its numbers + k)."""
    from test_web_page_weight import _wrong_answers

    from quizapp.bank import load_bank

    with server.app.app_context():
        user = services.find_user(db.session, username)
        exercise = db.session.get(Exercise, exercise_id)
        seed = services.get_or_create_variant(
            db.session, user, exercise, server.app.config["QUIZAPP_SEED_SECRET"]
        ).seed
    return _wrong_answers(load_bank(EXERCISES).exercises[exercise_id].generate(seed), n)


def axe(page: Any) -> list[str]:
    """axe-core's critical and serious violations on the page, as ``rule: targets`` lines.  The
    script is evaluated through the DevTools protocol (``page.evaluate``), which the page's CSP
    does not govern, so the policy stays exactly as served."""
    if not AXE.exists():
        skip_or_fail("browser", f"axe-core is not installed ({AXE}): run npm ci --prefix tests/js")
    if page.evaluate("typeof window.axe") == "undefined":
        page.evaluate(AXE.read_text(encoding="utf-8"))
    found = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .filter(v => v.impact === 'critical' || v.impact === 'serious')
            .map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).slice(0, 4).join(' | '))"""
    )
    return list(found)


def csp_violations(page: Any) -> list[str]:
    return list(page.evaluate("window.__csp || []"))


def wait_ready(page: Any) -> None:
    """app.js has run (DOMContentLoaded) and laid out the page."""
    page.wait_for_load_state("load")
    page.wait_for_timeout(150)


def test_axe_finds_nothing_serious_on_any_page_with_the_csp_intact(
    browser: Any, sweep_server: LiveServer
) -> None:
    """Every student and instructor page type, at 1280 and 390 px (and the exercise pages in the
    dark scheme too), before and after answering: 0 critical, 0 serious axe-core violations; the
    page's CSP is the one served, enforced (a script tag is refused), and nothing violated it."""
    server = sweep_server
    app = server.app
    secret = app.config["QUIZAPP_SEED_SECRET"]
    with app.app_context():
        services.create_user(db.session, "axeprof", PASSWORD, role="instructor")
        uid = make_student(server, "axe")
        services.create_user(db.session, "axereset", PASSWORD)
        from quizapp import instructor as inst

        reset_token = inst.create_reset_link(
            db.session, services.find_user(db.session, "axereset").id, note="test"
        )
        user = services.find_user(db.session, "axe")
        # Before answering: the grid, text-only, single-number, index, choice, partly filled and
        # point forms; after: marks (partly right), invalid, solved with the heatmap, out of
        # attempts (choice), the worked solution of an expression exercise.
        services.submit(db.session, user, PRODUCT, "1 2\n3 4", seed_secret=secret)
        services.submit(db.session, user, DECK, "abc\n1", seed_secret=secret)
    weights = variant_values(server, "axe", WEIGHTS)
    w = np_softmax_rows(
        np.asarray(weights["Q"], float)
        @ np.asarray(weights["K"], float).T
        / np.sqrt(np.asarray(weights["Q"]).shape[1])
    )
    finish(server, "axe", WEIGHTS, [matrix_text(w)])
    finish(server, "axe", CHOICE, wrong_texts(server, "axe", CHOICE, 2))
    finish(server, "axe", EXPRESSION, wrong_texts(server, "axe", EXPRESSION, 3))
    fresh = [TRANSPOSE, SCALAR, INDEX, FILL, LINE, MULTI_HEAD]
    student_pages = (
        ["/", "/progress", "/exercises/nope/nothing"]
        + [exercise_url(e) for e in fresh]
        + [exercise_url(e) for e in (PRODUCT, DECK, WEIGHTS, CHOICE, EXPRESSION)]
    )
    instructor_pages = [
        "/instructor/",
        "/instructor/scoreboard",
        "/instructor/gradebook",
        f"/instructor/exercises/{PRODUCT}",
        f"/instructor/exercises/{PRODUCT}/preview?seed=7",
        "/instructor/students",
        f"/instructor/students/{uid}",
        "/leaderboard",
    ]
    problems: list[str] = []
    checked = 0

    def check(page: Any, label: str) -> None:
        nonlocal checked
        wait_ready(page)
        found = axe(page)
        problems.extend(f"{label}: {v}" for v in found)
        problems.extend(f"{label}: CSP {v}" for v in csp_violations(page))
        checked += 1

    for width in (1280, 390):
        schemes = ["light", "dark"] if width == 390 else ["light"]
        for scheme in schemes:
            # Anonymous pages.
            ctx = new_context(browser, server, width, color_scheme=scheme)
            page = ctx.new_page()
            for url in ("/login", "/register", f"/reset/{reset_token}"):
                response = page.goto(url)
                assert response.headers["content-security-policy"] == CSP, url
                check(page, f"{width}px {scheme} {url}")
            ctx.close()
            ctx = new_context(browser, server, width, color_scheme=scheme)
            page = ctx.new_page()
            sign_in(page, "axe")
            pages = student_pages if scheme == "light" else student_pages[3:]
            for url in pages:
                response = page.goto(url)
                assert response.headers["content-security-policy"] == CSP, url
                check(page, f"{width}px {scheme} {url}")
            # The live preview shown, and a paste refused: the page in those states too.
            page.goto(exercise_url(TRANSPOSE))
            page.locator("#answer-text").fill("[[1, 2], [3, 4]]")
            page.locator(".preview-math math").wait_for()
            check(page, f"{width}px {scheme} preview")
            if scheme == "light":
                shot(page, server, f"20-axe-preview-{width}px")
            ctx.close()
        ctx = new_context(browser, server, width)
        page = ctx.new_page()
        sign_in(page, "axeprof")
        for url in instructor_pages:
            response = page.goto(url)
            assert response.status == 200, url
            assert response.headers["content-security-policy"] == CSP, url
            check(page, f"{width}px {url}")
        # The instructor pages reached by a form: a graded try in the preview, a dry-run
        # regrade, a reset link, a roster upload with errors.
        page.goto(f"/instructor/exercises/{PRODUCT}/preview?seed=7")
        page.locator("textarea#answer").fill("1 2\n3 4")
        with page.expect_navigation():
            page.get_by_role("button", name="Grade").click()
        check(page, f"{width}px instructor preview graded")
        for name, url in (
            ("reset link", f"/instructor/students/{uid}"),
            ("regrade", f"/instructor/exercises/{PRODUCT}"),
        ):
            page.goto(url)
            form = page.locator(
                "form[action$='/reset-link']"
                if name == "reset link"
                else "form[action$='/regrade']"
            ).first
            with page.expect_navigation():
                form.locator("button[type=submit]").first.click()
            check(page, f"{width}px instructor {name}")
        page.goto("/instructor/students")
        upload = page.locator("input[type=file]")
        if upload.count():
            upload.set_input_files(
                files=[{"name": "roster.csv", "mimeType": "text/csv", "buffer": b"nope\n1,2,3\n"}]
            )
            with page.expect_navigation():
                page.locator("form[action$='/roster/import'] button[type=submit]").click()
            check(page, f"{width}px instructor roster errors")
        # The policy is enforced: an inline script tag added to the page is refused.
        with pytest.raises(Exception):  # noqa: B017 - Playwright's error for a blocked script
            page.add_script_tag(content="window.__ran = 1")
        assert page.evaluate("window.__ran") is None
        assert any("script-src" in v for v in csp_violations(page))
        ctx.close()
    assert checked >= 60
    assert not problems, "\n".join(problems)


def _layout_report(page: Any) -> dict[str, Any]:
    """What sticks out at this width: the page's width, elements whose box ends right of the
    viewport outside any scroll box, and every box that scrolls sideways with how it says so."""
    return page.evaluate(
        """() => {
      const W = document.documentElement.clientWidth;
      const scrollers = [];
      const isScroller = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)
                              && e.scrollWidth > e.clientWidth + 1;
      for (const e of document.querySelectorAll('main *')) {
        if (!isScroller(e)) continue;
        const focusable = e.tabIndex >= 0 || !!e.querySelector('input, button, a[href], textarea');
        scrollers.push({cls: e.className, tab: e.tabIndex, focusable,
                        role: e.getAttribute('role'), label: e.getAttribute('aria-label'),
                        cue: getComputedStyle(e, '::before').content,
                        right: Math.round(e.getBoundingClientRect().right)});
      }
      const out = [];
      for (const e of document.querySelectorAll('main *')) {
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.right <= W + 1) continue;
        let p = e.parentElement, inside = false;
        while (p && p !== document.body) { if (isScroller(p)) { inside = true; break; } p = p.parentElement; }
        if (!inside) out.push(e.tagName + '.' + e.className + ' ' + Math.round(r.right));
      }
      return {pageWidth: document.documentElement.scrollWidth, W, sticking: out.slice(0, 5), scrollers};
    }"""
    )


def test_every_part_of_every_prompt_is_reachable_from_320_px_up(
    browser: Any, sweep_server: LiveServer
) -> None:
    """All bundled exercises at 320, 390 and 1280 px, before answering and (at 320 px) with the
    worked solution shown: nothing is cut off or widens the page; what is wider than the screen
    sits in a box that scrolls sideways, is reachable by the keyboard (focusable, or holding the
    inputs), is labelled and shows a cue.  At 1280 px the multi-head prompt needs no scrolling
    at all; at 390 px a formula wider than the phone (``WIDE_AT_390``) scrolls with the arrow
    keys."""
    server = sweep_server
    make_student(server, "lay")
    make_student(server, "laydone")
    with server.app.app_context():
        ids = sorted(e.id for e in db.session.query(Exercise).filter_by(archived=False))
    for eid in ids:
        answers = wrong_texts(server, "laydone", eid, 3)
        with server.app.app_context():
            attempts = int(db.session.get(Exercise, eid).attempts)
        finish(server, "laydone", eid, answers[:attempts])
    problems: list[str] = []
    scrolled = 0
    for width, user in ((320, "lay"), (390, "lay"), (1280, "lay"), (320, "laydone")):
        ctx = new_context(browser, server, width)
        page = ctx.new_page()
        sign_in(page, user)
        for eid in ids:
            page.goto(exercise_url(eid))
            wait_ready(page)
            r = _layout_report(page)
            where = f"{width}px {user} {eid}"
            if r["pageWidth"] > width:
                problems.append(f"{where}: the page is {r['pageWidth']}px wide {r['sticking']}")
            if r["sticking"]:
                problems.append(f"{where}: cut off {r['sticking']}")
            for s in r["scrollers"]:
                scrolled += 1
                if not s["focusable"]:
                    problems.append(f"{where}: the keyboard cannot scroll {s}")
                if s["tab"] == 0 and not (
                    s["role"] == "region" and s["label"] and "scroll" in s["cue"]
                ):
                    problems.append(f"{where}: a scroll box without label or cue {s}")
            if width == 1280 and eid == MULTI_HEAD:
                assert not r["scrollers"], r  # W_Q, W_K, W_V and W_O all in sight
                card = page.locator("section.prompt").bounding_box()
                for m in page.locator("section.prompt math").all():
                    box = m.bounding_box()
                    assert (
                        box["x"] >= card["x"]
                        and box["x"] + box["width"] <= card["x"] + card["width"]
                    )
                shot(page, server, "21-multi-head-1280px")
            if width == 390 and eid == WIDE_AT_390:
                shot(page, server, "22-wide-formula-390px")
                box = page.locator(".math-display.scrolls").first
                assert box.get_attribute("role") == "region"
                # Tab reaches the box, and the arrow keys scroll it.
                page.locator("body").focus()
                for _ in range(40):
                    page.keyboard.press("Tab")
                    if page.evaluate("document.activeElement.classList.contains('scrolls')"):
                        break
                assert page.evaluate("document.activeElement.classList.contains('math-display')")
                assert page.evaluate("document.activeElement.scrollLeft") == 0
                for _ in range(10):
                    page.keyboard.press("ArrowRight")
                page.wait_for_timeout(300)
                assert page.evaluate("document.activeElement.scrollLeft") > 0
                shot(page, server, "23-wide-formula-390px-scrolled-by-keyboard")
            if width == 320 and user == "laydone" and eid == "05-attention/03-self-attention":
                shot(page, server, "24-self-attention-solution-320px")
        ctx.close()
    assert scrolled > 0  # some matrices are wider than a phone: they scroll, and say so
    assert not problems, "\n".join(problems[:40])


PASTES = {
    "python": lambda m: (
        "[" + ", ".join("[" + ", ".join(fmt(v) for v in row) + "]" for row in m) + "]"
    ),
    "mathematica": lambda m: (
        "{" + ", ".join("{" + ", ".join(fmt(v) for v in row) + "}" for row in m) + "}"
    ),
    "latex": lambda m: (
        r"\begin{pmatrix} "
        + r" \\ ".join(" & ".join(fmt(v) for v in row) for row in m)
        + r" \end{pmatrix}"
    ),
    "numpy": lambda m: (
        "array(["
        + ",\n       ".join("[" + ", ".join(fmt(v) for v in row) + "]" for row in m)
        + "])"
    ),
    "spreadsheet": lambda m: "\n".join("\t".join(fmt(v) for v in row) for row in m),
    "matlab": lambda m: "[" + "; ".join(" ".join(fmt(v) for v in row) for row in m) + "]",
}


def grid_values(page: Any, shape: tuple[int, int]) -> np.ndarray:
    return np.array(
        [
            [page.locator(f"[name=cell-{r}-{c}]").input_value() or "nan" for c in range(shape[1])]
            for r in range(shape[0])
        ],
        dtype=float,
    )


def test_pasting_any_format_the_text_box_reads_fills_the_grid_or_says_why_not(
    page: Any, live_server: LiveServer
) -> None:
    server = live_server
    register(page, "pia")
    values = variant_values(server, "pia", PRODUCT)
    ab = np.asarray(values["A"], dtype=float) @ np.asarray(values["B"], dtype=float)
    page.goto(exercise_url(PRODUCT))
    status = page.locator("form.grid-form .paste-status")
    for name, make in PASTES.items():
        for r, c in np.ndindex(ab.shape):
            page.locator(f"[name=cell-{r}-{c}]").fill("")
        # Into the first box, and (the whole matrix) into the last box: both fill the grid.
        target = (
            "[name=cell-0-0]"
            if name != "numpy"
            else f"[name=cell-{ab.shape[0] - 1}-{ab.shape[1] - 1}]"
        )
        paste_into(page, target, make(ab))
        expect(status).to_contain_text("Filled")
        assert np.allclose(grid_values(page, ab.shape), ab), name
        assert f"Filled {ab.size} boxes" in status.inner_text(), name
    shot(page, server, "25-grid-paste-filled")
    # The preview under the grid shows the matrix as read, from the pasted boxes.
    page.locator("[data-preview=cells] .preview-math math").wait_for()
    assert "Read as a 2×2 matrix" in page.locator("[data-preview=cells]").inner_text()
    # Another shape: nothing is filled, and the page says why.
    before = grid_values(page, ab.shape)
    paste_into(page, "[name=cell-0-0]", "1 2 3")
    expect(status).to_contain_text("nothing was filled")
    text = status.inner_text()
    assert "1 × 3, but the grid is 2 × 2" in text, text
    assert np.array_equal(grid_values(page, ab.shape), before)
    # Unreadable: the reader's own message.
    paste_into(page, "[name=cell-0-0]", "[[1, 2], [3, 4]")
    expect(status).to_contain_text("cannot be read")
    assert "is not closed" in status.inner_text() or "brackets" in status.inner_text()
    assert np.array_equal(grid_values(page, ab.shape), before)
    shot(page, server, "26-grid-paste-refused")
    # One number pastes as a browser paste does.
    page.locator("[name=cell-0-0]").fill("")
    paste_into(page, "[name=cell-0-0]", "0.25")
    assert page.locator("[name=cell-0-0]").input_value() == "0.25"
    # A vector pasted as a row fills the column of the system's unknowns; the answer is right.
    spec = yaml.safe_load((EXERCISES / f"{DECK}.yaml").read_text(encoding="utf-8"))
    x = np.linalg.solve(
        np.array(spec["params"]["fixed"]["A"], dtype=float),
        np.array(spec["params"]["fixed"]["y"], dtype=float),
    )
    page.goto(exercise_url(DECK))
    status = page.locator("form.grid-form .paste-status")
    paste_into(page, "[name=cell-0-0]", "[" + ", ".join(fmt(v) for v in x) + "]")
    expect(status).to_contain_text("Filled")
    assert np.allclose(grid_values(page, (2, 1)).ravel(), x)
    submit_grid(page)
    assert "Score 100%" in verdict(page)
    # A partly filled matrix: the given boxes keep their values.
    page.goto(exercise_url(FILL))
    status = page.locator("form.grid-form .paste-status")
    given = {
        (r, c): page.locator(f"[name=cell-{r}-{c}]").input_value()
        for r, c in np.ndindex(3, 3)
        if page.locator(f"[name=cell-{r}-{c}]").get_attribute("readonly") is not None
    }
    paste_into(page, "[name=cell-0-0]", "\n".join(" ".join(["9"] * 3) for _ in range(3)))
    expect(status).to_contain_text("Filled")
    for (r, c), v in given.items():
        assert page.locator(f"[name=cell-{r}-{c}]").input_value() == v
    filled = [
        page.locator(f"[name=cell-{r}-{c}]").input_value()
        for r, c in np.ndindex(3, 3)
        if (r, c) not in given
    ]
    assert filled == ["9"] * (9 - len(given))


def row_counts(server: LiveServer) -> tuple[int, int]:
    from quizapp.models import Progress, Submission

    with server.app.app_context():
        return db.session.query(Submission).count(), db.session.query(Progress).count()


def test_the_answer_preview_shows_the_reading_as_you_type_and_costs_nothing(
    browser: Any, live_server: LiveServer
) -> None:
    server = live_server
    ctx = new_context(browser, server, 1100)
    page = ctx.new_page()
    register(page, "pre")
    page.goto(exercise_url(TRANSPOSE))
    page.evaluate("window.__same_page = 1")
    before = row_counts(server)
    box = page.locator("[data-preview=text]")
    assert page.locator("form.text-form .check-button").is_hidden()  # JS: the live preview
    page.locator("#answer-text").press_sequentially(
        "[[1, 2/4], [-3, 4e-1], [5, sqrt(9)]]", delay=20
    )
    page.locator("[data-preview=text] .preview-math math").wait_for()
    assert "Read as a 3×2 matrix. Not graded yet: no attempt used." in box.inner_text()
    numbers = box.locator("mn").all_text_contents()
    assert numbers == ["1", "0.5", "3", "0.4", "5", "3"]  # the minus sign is its own <mo>
    assert_math_rendered(page)
    shot(page, server, "27-preview-valid")
    page.locator("#answer-text").fill("[[1, 2], [3, x]]")
    expect(box.locator(".preview-message")).to_contain_text("Cannot be read")
    assert "Row 2, column 2: Unknown name 'x'" in box.inner_text()
    assert box.locator("math").count() == 0
    shot(page, server, "28-preview-invalid")
    # A grid: the preview appears once every box holds something.
    page.goto(exercise_url(PRODUCT))
    page.evaluate("window.__same_page = 2")
    page.locator("[name=cell-0-0]").fill("3/4")
    page.locator("[name=cell-0-1]").fill("1")
    page.wait_for_timeout(600)
    assert page.locator("[data-preview=cells] .preview-message").inner_text() == ""
    page.locator("[name=cell-1-0]").fill("-2")
    page.locator("[name=cell-1-1]").fill("2^3")
    page.locator("[data-preview=cells] .preview-math math").wait_for()
    grid_box = page.locator("[data-preview=cells]")
    assert grid_box.locator("mn").all_text_contents() == ["0.75", "1", "2", "8"]
    assert page.evaluate("window.__same_page") == 2  # no page load
    assert row_counts(server) == before  # nothing stored
    assert attempts_left(page) == 3
    # The preview API call answered in the page's origin, with the policy intact.
    assert csp_violations(page) == []
    ctx.close()

    # Without JavaScript: "Check how it is read" shows the same reading after a page load.
    ctx = new_context(browser, server, 390, java_script_enabled=False)
    page = ctx.new_page()
    sign_in(page, "pre")
    page.goto(exercise_url(TRANSPOSE))
    page.locator("#answer-text").fill("1 2/4\n-3 0.4")
    with page.expect_navigation():
        page.locator("form.text-form .check-button").click()
    box = page.locator("[data-preview=text]")
    # A 2×2 answer to a 3×2 question: read, and said to be of the wrong shape before it is sent.
    assert (
        "Read as a 2×2 matrix, but a 3×2 matrix is asked for. Submitted as it is, it would be "
        "marked incorrect. Not graded yet: no attempt used."
    ) in box.inner_text()
    assert box.locator("mn").all_text_contents() == ["1", "0.5", "3", "0.4"]
    assert page.locator("#answer-text").input_value() == "1 2/4\n-3 0.4"
    assert row_counts(server) == before and attempts_left(page) == 3
    shot(page, server, "29-preview-without-javascript-390px")
    ctx.close()


def test_after_a_submit_the_verdict_has_the_focus_and_is_announced(
    browser: Any, live_server: LiveServer
) -> None:
    server = live_server
    for js in (True, False):
        ctx = new_context(browser, server, 390, java_script_enabled=js)
        page = ctx.new_page()
        name = "foc" if js else "focnojs"
        register(page, name)
        values = variant_values(server, name, PRODUCT)
        ab = np.asarray(values["A"], dtype=float) @ np.asarray(values["B"], dtype=float)
        page.goto(exercise_url(PRODUCT))
        wrong = ab.copy()
        wrong[0, 0] += 7
        fill_grid(page, [[fmt(v) for v in row] for row in wrong])
        submit_grid(page)
        assert page.evaluate("document.activeElement.id") == "verdict", js
        box = page.locator("#verdict").bounding_box()
        assert box is not None and 0 <= box["y"] < 900  # scrolled into view
        if js:
            expect(page.locator("#announce")).to_contain_text("Attempts left")
            said = page.locator("#announce").inner_text()
            assert "partly right" in said and "Score 75%" in said and "Attempts left: 2." in said, (
                said
            )
            shot(page, server, "30-verdict-focused-and-announced-390px")
        ctx.close()


def _unsplit_tokens(page: Any, selector: str) -> list[str]:
    """The numbers of the answers in ``selector`` that a line break splits (-0. / 7)."""
    return page.evaluate(
        """sel => { const bad = [];
        for (const pre of document.querySelectorAll(sel)) {
          const node = pre.querySelector('bdi') || pre;
          const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
          const texts = []; let t; while ((t = walker.nextNode())) texts.push(t);
          for (const text of texts) {
            const re = /[^\\s,;\\[\\]]+/g; let m;
            while ((m = re.exec(text.data))) {
              const range = document.createRange();
              range.setStart(text, m.index); range.setEnd(text, m.index + m[0].length);
              const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
              if (tops.size > 1) bad.push(m[0]);
            }
          }
        }
        return bad; }""",
        selector,
    )


def test_a_finished_variant_keeps_its_marked_answer_and_tells_out_of_attempts_from_solved(
    browser: Any, live_server: LiveServer
) -> None:
    server = live_server
    ctx = new_context(browser, server, 390, is_mobile=True, has_touch=True, device_scale_factor=2)
    page = ctx.new_page()
    register(page, "fin")
    values = variant_values(server, "fin", WEIGHTS)
    q, k = (np.asarray(values[n], dtype=float) for n in ("Q", "K"))
    w = np_softmax_rows(q @ k.T / np.sqrt(q.shape[1]))
    page.goto(exercise_url(WEIGHTS))
    for i in range(3):  # long answers with negative decimals, as pasted from a notebook
        wrong = -w - 0.7 - i
        submit_text(page, "\n".join(", ".join(f"{v:.6f}" for v in row) for row in wrong))
    out = page.locator("p.alert-out")
    assert out.is_visible() and "No attempts left on this variant" in out.inner_text()
    assert page.locator("p.alert-done").count() == 0
    marked = page.locator("table.marked-grid")
    assert marked.is_visible()
    # Every entry wrong: said once (the table's class and caption), each cell crossed by the
    # stylesheet, not by colour alone.
    assert "all-wrong" in marked.get_attribute("class")
    assert marked.locator("caption").text_content() == "Every entry wrong"
    cells = marked.locator("tbody td")
    assert cells.count() == w.size
    assert "✗" in cells.first.evaluate("e => getComputedStyle(e, '::after').content")
    shown = [
        float(re.match(r"\s*(-?[\d.]+(?:e-?\d+)?)", t).group(1)) for t in cells.all_inner_texts()
    ]
    assert np.allclose(shown, (-w - 2.7).ravel())  # the last answer, cell by cell
    assert _unsplit_tokens(page, "pre.answer-text") == []
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    out_bg = out.evaluate("e => getComputedStyle(e).backgroundColor")
    shot(page, server, "31-out-of-attempts-marked-390px")
    # Solved looks different (green), and keeps its marked answer too.
    page.goto(exercise_url(PRODUCT))
    values = variant_values(server, "fin", PRODUCT)
    ab = np.asarray(values["A"], dtype=float) @ np.asarray(values["B"], dtype=float)
    fill_grid(page, [[fmt(v) for v in row] for row in ab])
    submit_grid(page)
    done = page.locator("p.alert-done")
    assert done.is_visible() and page.locator("p.alert-out").count() == 0
    assert done.evaluate("e => getComputedStyle(e).backgroundColor") != out_bg
    assert page.locator("table.marked-grid.all-right tbody td").count() == ab.size
    shot(page, server, "32-solved-marked-390px")
    ctx.close()


def test_an_unreadable_box_is_named_once(page: Any, live_server: LiveServer) -> None:
    server = live_server
    register(page, "inv")
    page.goto(exercise_url(PRODUCT))
    fill_grid(page, [["x", "1"], ["2", "3"]])
    submit_grid(page)
    text = verdict(page)
    assert text.count("Unknown name 'x'") == 1 and "(in 'x')" not in text, text
    assert page.locator("[name=cell-0-0][aria-invalid=true]").count() == 1
    fill_grid(page, [["x", "y"], ["2", "3"]])
    submit_grid(page)
    text = verdict(page)
    assert "2 boxes cannot be read" in text
    assert text.count("Unknown name 'x'") == 1 and text.count("Unknown name 'y'") == 1, text
    assert attempts_left(page) == 3
    shot(page, server, "33-invalid-boxes-named-once")


def test_multiple_choice_shows_letters_and_the_right_option_in_full(
    page: Any, live_server: LiveServer
) -> None:
    server = live_server
    register(page, "mc")
    from quizapp.bank import load_bank

    with server.app.app_context():
        user = services.find_user(db.session, "mc")
        row = services.get_or_create_variant(
            db.session,
            user,
            db.session.get(Exercise, CHOICE),
            server.app.config["QUIZAPP_SEED_SECRET"],
        )
        seed = row.seed
    bv = load_bank(EXERCISES).exercises[CHOICE].generate(seed)
    right = int(bv.expected)
    wrong = (right + 1) % len(bv.answer_form.choices)
    letters = "abcdefghijklmnopqrstuvwxyz"
    page.goto(exercise_url(CHOICE))
    with page.expect_navigation():
        page.locator("form.choice-form button[type=submit]").click()
    assert (
        "Choose one of the options before submitting." in page.locator(".alert-error").inner_text()
    )
    assert page.evaluate("document.activeElement.id") == "form-error"
    page.locator(f"#choice-{wrong}").check()
    with page.expect_navigation():
        page.locator("form.choice-form button[type=submit]").click()
    page.locator(f"#choice-{right}").check()
    with page.expect_navigation():
        page.locator("form.choice-form button[type=submit]").click()
    shown = page.locator("table.submissions pre.answer-text").all_inner_texts()
    assert shown == [f"({letters[right]})", f"({letters[wrong]})"]
    expected = page.locator("section.solution .expected")
    assert expected.inner_text().startswith(f"The right answer: ({letters[right]})")
    assert expected.locator("math").count() >= 1  # the option itself, as math
    size = expected.locator(".choice-letter").evaluate(
        "e => parseFloat(getComputedStyle(e).fontSize)"
    )
    assert size >= 15  # not a tiny bare letter
    assert page.locator(".marked-pick.mark-right").is_visible()
    assert_math_rendered(page)
    shot(page, server, "34-choice-letters-and-right-option")


def test_expression_solutions_show_formulas_not_code(page: Any, live_server: LiveServer) -> None:
    server = live_server
    register(page, "expr")
    page.goto(exercise_url(EXPRESSION))
    for answer in wrong_texts(server, "expr", EXPRESSION, 3):
        submit_text(page, answer)
    solution = page.locator("section.solution")
    text = solution.inner_text()
    assert "`" not in text and "@" not in text and ".T" not in text, text
    assert solution.locator("li.step code").count() == 0
    titles = solution.locator("li.step > h3")
    assert titles.count() >= 3
    assert all(titles.nth(i).locator("math").count() == 1 for i in range(titles.count() - 1))
    assert solution.locator("h3 mfrac msqrt").count() >= 1  # q K^T / sqrt(4) as a fraction
    assert_math_rendered(page)
    shot(page, server, "35-expression-solution-as-math")


def _luminance(rgb: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", rgb)[:3])

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio of two opaque CSS colours."""
    a, b = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


#: A right (wrong) cell of a marked answer: marked itself, or unmarked in a table whose most
#: common mark it is.
MARKED_RIGHT = ".marked-grid td.mark-right, .marked-grid.all-right tbody td:not([class])"
MARKED_WRONG = ".marked-grid td.mark-wrong, .marked-grid.all-wrong tbody td:not([class])"


def test_right_and_wrong_colours_meet_wcag_aa_in_both_schemes(
    browser: Any, live_server: LiveServer
) -> None:
    server = live_server
    make_student(server, "col")
    values = variant_values(server, "col", PRODUCT)
    ab = np.asarray(values["A"], dtype=float) @ np.asarray(values["B"], dtype=float)
    half = ab.copy()
    half[0, :] += 9
    finish(server, "col", PRODUCT, [matrix_text(half)])
    finish(server, "col", TRANSPOSE, wrong_texts(server, "col", TRANSPOSE, 3))
    weights = variant_values(server, "col", WEIGHTS)
    w = np_softmax_rows(
        np.asarray(weights["Q"], float)
        @ np.asarray(weights["K"], float).T
        / np.sqrt(np.asarray(weights["Q"]).shape[1])
    )
    finish(server, "col", WEIGHTS, [matrix_text(w)])
    pairs = {
        # The signs beside the boxes (the cell's ::after, in the cell's colour); once finished,
        # a marked table carries its most common mark, a cell the other one.
        PRODUCT: [".badge-partial", "td.mark-right", "td.mark-wrong"],
        TRANSPOSE: [".alert-out", ".badge-incorrect", MARKED_WRONG],
        WEIGHTS: [".alert-done", ".badge-correct", MARKED_RIGHT],
    }
    for scheme in ("light", "dark"):
        ctx = new_context(browser, server, 1100, color_scheme=scheme)
        page = ctx.new_page()
        sign_in(page, "col")
        for eid, selectors in pairs.items():
            page.goto(exercise_url(eid))
            for sel in selectors:
                el = page.locator(sel).first
                fg, bg = el.evaluate(
                    """e => { const fg = getComputedStyle(e).color; let n = e, bg;
                        do { bg = getComputedStyle(n).backgroundColor; n = n.parentElement; }
                        while (n && (bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent'));
                        return [fg, bg]; }"""
                )
                ratio = contrast(fg, bg)
                assert ratio >= 4.5, (scheme, eid, sel, fg, bg, round(ratio, 2))
        if scheme == "dark":
            shot(page, server, "36-dark-scheme-solved")
        ctx.close()


def test_every_exercise_page_has_a_way_on(page: Any, live_server: LiveServer) -> None:
    from quizapp.bank import load_bank

    server = live_server
    register(page, "nav")
    quiz = load_bank(EXERCISES).quizzes["01-linear-systems"]
    ids = quiz.exercise_ids
    page.goto(exercise_url(ids[0]))
    place = page.locator(".quiz-place")
    assert f"Exercise 1 of {len(ids)}" in place.inner_text()
    assert page.locator(".quiz-nav .nav-previous").count() == 0
    for k in range(1, len(ids)):
        with page.expect_navigation():
            page.get_by_role("link", name=re.compile(r"^Next exercise")).click()
        assert page.url.endswith(exercise_url(ids[k])), (k, page.url)
        assert f"Exercise {k + 1} of {len(ids)}" in place.inner_text()
    assert page.locator(".quiz-nav .nav-next").count() == 0
    assert "Last exercise of this quiz" in page.locator(".quiz-nav").inner_text()
    shot(page, server, "37-last-exercise-of-the-quiz")
    with page.expect_navigation():
        page.get_by_role("link", name="Back to the quiz").click()
    assert page.url.endswith(f"/#quiz-{quiz.id}")
    section = page.locator(f"#quiz-{quiz.id}")
    assert section.is_visible()
    assert section.bounding_box()["y"] < 200  # the browser went to the quiz
    # Solving one exercise moves the quiz's progress bar.
    page.goto(exercise_url(DECK))
    progress = page.locator(".quiz-place progress")
    assert progress.get_attribute("value") == "0"
    spec = yaml.safe_load((EXERCISES / f"{DECK}.yaml").read_text(encoding="utf-8"))
    x = np.linalg.solve(
        np.array(spec["params"]["fixed"]["A"], dtype=float),
        np.array(spec["params"]["fixed"]["y"], dtype=float),
    )
    fill_grid(page, [[fmt(x[0])], [fmt(x[1])]])
    submit_grid(page)
    assert progress.get_attribute("value") == "1"
    assert "1 done (1 solved)" in place.inner_text()
    assert page.locator(".quiz-nav .nav-next").is_visible()
    shot(page, server, "38-solved-with-the-way-on")


def test_static_files_are_cached_for_good_and_everything_comes_compressed_from_this_origin(
    browser: Any, sweep_server: LiveServer
) -> None:
    import hashlib

    server = sweep_server
    make_student(server, "net")
    ctx = new_context(browser, server, 1100)
    page = ctx.new_page()
    responses: list[Any] = []
    page.on("response", lambda r: responses.append(r))
    sign_in(page, "net")
    responses.clear()
    page.goto(exercise_url(PRODUCT))
    wait_ready(page)
    by_path = {urlsplit(r.url).path: r for r in responses}
    assert all(r.url.startswith(server.url + "/") for r in responses), [r.url for r in responses]
    html = by_path[exercise_url(PRODUCT)]
    assert html.headers.get("content-encoding") in ("br", "zstd", "gzip"), html.headers
    for name in ("style.css", "app.js"):
        r = by_path[f"/static/{name}"]
        digest = hashlib.sha256(
            (REPO / "quizapp" / "web" / "static" / name).read_bytes()
        ).hexdigest()[:12]
        assert r.url.endswith(f"?v={digest}"), r.url
        assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert r.headers.get("content-encoding") in ("br", "zstd", "gzip"), (name, r.headers)
    # Later pages use the cached files: the server is not asked for them again.
    server.hits.clear()
    page.goto(exercise_url(DECK))
    page.goto(exercise_url(PRODUCT))
    wait_ready(page)
    assert [h for h in server.hits if h.startswith("/static/")] == [], server.hits
    # The preview travels the same origin, compressed when large enough.
    page.locator("#answer-text").fill("1 2\n3 4")
    page.locator("[data-preview=text] .preview-math math").wait_for()
    assert all(r.url.startswith(server.url + "/") for r in responses)
    ctx.close()
