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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from browser_support import CHROMIUM, CHROMIUM_ARGS
from test_postgres_support import PostgresSchema, postgres_base_url, skip_or_fail
from test_web_support import EXERCISES, make_app

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

    def shots(self) -> Path:
        folder = OUTPUT / self.backend
        folder.mkdir(parents=True, exist_ok=True)
        return folder


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def live_server(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[LiveServer]:
    """The real app (bundled exercises synced, fresh instance folder, real secrets, CSRF and
    rate limits on) served by Werkzeug's threaded server on 127.0.0.1 and a free port."""
    from werkzeug.serving import make_server

    backend = request.param
    tmp = tmp_path_factory.mktemp(f"browser-{backend}")
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
    )
    with app.app_context():
        report = services.sync_folder(db.session, EXERCISES)
        assert report.errors == [], report.errors
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    try:
        yield LiveServer(app, f"http://127.0.0.1:{server.server_port}", backend)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
        if schema is not None:
            schema.drop()


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
            page.locator(f"#cell-{r}-{c}").fill(str(value))


def submit_grid(page: Any) -> None:
    with page.expect_navigation():
        page.locator("form.grid-form button[type=submit]").click()


def submit_text(page: Any, text: str) -> None:
    page.locator("#answer-text").fill(text)
    with page.expect_navigation():
        page.locator("form.text-form button[type=submit]").click()


def verdict(page: Any) -> str:
    return page.locator("section.verdict").inner_text()


def attempts_left(page: Any) -> int:
    return int(page.locator("#attempts-left").inner_text())


def cell_background(page: Any, r: int, c: int) -> str:
    return page.locator(f"#cell-{r}-{c}").evaluate("e => getComputedStyle(e).backgroundColor")


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
    assert page.locator("td.mark-right #cell-0-0").count() == 1
    assert page.locator("td.mark-wrong #cell-1-0").count() == 1
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
        page.locator("form.text-form button[type=submit]").click()
    text = verdict(page)
    assert "incorrect" in text and "You transposed the matrix" in text, text
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
        page.locator("form.text-form button[type=submit]").click()
    text = verdict(page)
    named = "wrong sign" if symmetric else "You transposed the matrix"
    # -AB keeps a zero entry right (-0 = 0): then the answer is partly right, not incorrect.
    status = "partly right" if symmetric and np.any(np.isclose(AB, 0)) else "incorrect"
    assert status in text and named in text, text
    for r, c in np.ndindex(AB.shape):  # the pasted numbers in the grid, each marked
        # A transposed answer scores 0 and no cell counts (its equal diagonal included).
        right = symmetric and bool(np.isclose(wrong[r, c], AB[r, c]))
        assert cell_background(page, r, c) == (RIGHT_BG if right else WRONG_BG), (r, c)
        assert float(page.locator(f"#cell-{r}-{c}").input_value()) == pytest.approx(wrong[r, c])
    shot(page, server, "06-product-cells-coloured")
    for r, c in np.ndindex(AB.shape):
        page.locator(f"#cell-{r}-{c}").fill("")
    paste_into(page, "#cell-0-0", matrix_text(AB))
    for (r, c), value in np.ndenumerate(AB):
        assert float(page.locator(f"#cell-{r}-{c}").input_value()) == pytest.approx(value)
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
    assert page.locator("form.grid-form input[id^=cell-]").count() == weights.size

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
        focused = page.evaluate("document.activeElement.id || document.activeElement.tagName")
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
        seen.append(page.evaluate("document.activeElement.id"))
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
    assert page.evaluate("document.activeElement.id") == "cell-0-0"
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
    page.locator("#cell-0-0").focus()
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
    assert dora_row[f"{DECK} (10)"] == "10"
    assert dora_row[f"{TRANSPOSE} (5)"] == "0"
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
        last = page.locator("form.grid-form button[type=submit]").bounding_box()
        assert last is not None and last["x"] + last["width"] <= 390
        # The whole 2 x 3 grid is on screen: no box hidden behind a sideways scroll.
        rows, cols = 2, 3
        for r, c in np.ndindex(rows, cols):
            box = page.locator(f"#cell-{r}-{c}").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (r, c)
        wrap = page.locator("form.grid-form .table-wrap")
        assert wrap.evaluate("e => e.scrollWidth <= e.clientWidth"), "the grid scrolls sideways"
        shot(page, server, "14-phone-390px-exercise")
    finally:
        ctx.close()
