"""The exercise page, second pass (issue 15), through the test client (no JavaScript): the answer
preview's "Check how it is read" button, the way on (k of n, next, back to the quiz), the last
answer with its marks once the variant is finished, picks shown as letters, invalid answers said
once, worked solutions of expression exercises as math, the focus after a submit.

Expected values come from the YAML (quiz order) and NumPy, not from the page under test.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
from test_web_support import (
    EXERCISES,
    bank_variant_of,
    csrf_from,
    fmt,
    post_cells,
    post_text,
    student,
    synced_app,
    url_of,
)

from quizapp.models import Progress, Submission, Variant, db

PRODUCT = "03-transpose-and-products/05-matrix-product"
TRANSPOSE = "03-transpose-and-products/01-transpose"
CHOICE = "02-matrices-and-maps/03-which-is-linear"
DECK = "01-linear-systems/05-deck-system"
EXPRESSION = "05-attention/10-attention-expression"
FIRST = "01-linear-systems/01-one-unknown"


@pytest.fixture()
def app(tmp_path: Path):
    return synced_app(tmp_path)


def body(resp) -> str:
    return html.unescape(resp.get_data(as_text=True))


def rows(app) -> tuple[int, int, int]:
    with app.app_context():
        return (
            db.session.query(Submission).count(),
            db.session.query(Variant).count(),
            db.session.query(Progress).count(),
        )


def product(app, user: str = "ana") -> np.ndarray:
    v = bank_variant_of(app, user, PRODUCT)
    return np.asarray(v.values["A"], dtype=float) @ np.asarray(v.values["B"], dtype=float)


# --------------------------------------------------------------------------------------------
# The answer preview without JavaScript


def test_check_how_it_is_read_shows_the_reading_and_stores_nothing(app) -> None:
    client = student(app)
    page = client.get(url_of(PRODUCT)).get_data(as_text=True)
    assert page.count('name="action" value="preview"') == 2  # under the grid and the text box
    before = rows(app)
    token = csrf_from(page)
    resp = client.post(
        url_of(PRODUCT),
        data={"csrf_token": token, "via": "text", "answer": "1 2/4\n-3 0.4", "action": "preview"},
    )
    assert resp.status_code == 200
    text = body(resp)
    assert re.search(
        r'<p class="preview-message" aria-live="polite">Read as a 2×2 matrix\. <span class="meta">Not graded yet: no attempt used\.</span></p>',
        text,
    )
    box = re.search(
        r'<div class="preview preview-valid" data-preview="text">(.*?)</div>\s*</div>', text, re.S
    )
    assert box, "no preview under the text box"
    assert all(f"<mn>{n}</mn>" in box.group(1) for n in ("1", "0.5", "3", "0.4"))
    assert ">1 2/4\n-3 0.4</textarea>" in text  # the typed answer is kept
    assert 'id="attempts-left">3<' in text
    assert rows(app) == before
    # The grid's button previews the grid's boxes, under the grid.
    resp = client.post(
        url_of(PRODUCT),
        data={
            "csrf_token": token,
            "via": "cells",
            "action": "preview",
            "cell-0-0": "x",
            "cell-0-1": "1",
            "cell-1-0": "2",
            "cell-1-1": "3",
        },
    )
    text = body(resp)
    assert 'class="preview preview-invalid" data-preview="cells"' in text
    assert "Cannot be read: Row 1, column 1: Unknown name 'x'" in text
    assert rows(app) == before


def test_previews_do_not_count_against_the_submit_limit(tmp_path: Path) -> None:
    app = synced_app(tmp_path, QUIZAPP_LIMIT_SUBMIT="2 per minute", RATELIMIT_ENABLED=True)
    client = student(app)
    token = csrf_from(client.get(url_of(PRODUCT)).get_data(as_text=True))
    for _ in range(3):
        resp = client.post(
            url_of(PRODUCT),
            data={"csrf_token": token, "via": "text", "answer": "1 2\n3 4", "action": "preview"},
        )
        assert resp.status_code == 200
    resp = client.post(
        url_of(PRODUCT), data={"csrf_token": token, "via": "text", "answer": "1 2\n3 4"}
    )
    assert resp.status_code == 200 and "Your answer:" in body(resp)


# --------------------------------------------------------------------------------------------
# The way on


def test_every_exercise_page_says_where_it_is_and_links_on(app) -> None:
    from quizapp.bank import load_bank

    bank = load_bank(EXERCISES)
    client = student(app)
    home = body(client.get("/"))
    for quiz in bank.quizzes.values():
        ids = quiz.exercise_ids
        assert f'id="quiz-{quiz.id}"' in home  # the target of "Back to the quiz"
        for k, eid in enumerate(ids):
            page = body(client.get(url_of(eid)))
            assert f"Exercise {k + 1} of {len(ids)} ·" in page, eid
            assert f'<a class="nav-quiz" href="/#quiz-{quiz.id}">Back to the quiz</a>' in page
            nxt = re.search(r'class="nav-next" rel="next" href="([^"]+)"', page)
            prev = re.search(r'class="nav-previous" rel="prev" href="([^"]+)"', page)
            if k + 1 < len(ids):
                assert nxt and nxt.group(1) == url_of(ids[k + 1]), eid
            else:
                assert nxt is None and "Last exercise of this quiz" in page
            if k > 0:
                assert prev and prev.group(1) == url_of(ids[k - 1]), eid
            else:
                assert prev is None


def test_the_quiz_progress_counts_finished_exercises(app) -> None:
    client = student(app)
    page = body(client.get(url_of(PRODUCT)))
    assert re.search(r'<progress aria-labelledby="quiz-place-label" max="(\d+)" value="0">', page)
    ab = product(app)
    post_text(client, PRODUCT, "\n".join(" ".join(fmt(x) for x in r) for r in ab))
    page = body(client.get(url_of(PRODUCT)))
    assert "· 1 done (1 solved) ·" in page
    assert 'value="1">' in page


# --------------------------------------------------------------------------------------------
# After the last attempt


def test_a_finished_page_whose_last_answer_was_worse_shows_the_best_that_counts(app) -> None:
    """A wrong shape, then one entry wrong, then a wrong shape again (the tester's steps): the
    last answer scored 0, the best (kept, and counted) is named with its points."""
    client = student(app)
    ab = product(app)
    rows, cols = ab.shape
    one_wrong = ab.copy()
    one_wrong[0, 0] += 5
    wrong_shape = " ".join("7" for _ in range(cols + 1))
    post_text(client, PRODUCT, wrong_shape)
    page = body(
        post_text(client, PRODUCT, "\n".join(" ".join(fmt(x) for x in r) for r in one_wrong))
    )
    assert "Your best answer" not in page  # the answer shown is the best so far
    # The same answer again uses no attempt and carries its score: still no best line.
    page = body(
        post_text(client, PRODUCT, "\n".join(" ".join(fmt(x) for x in r) for r in one_wrong))
    )
    assert "used no attempt" in page and "Your best answer" not in page
    page = body(post_text(client, PRODUCT, wrong_shape.replace("7", "8")))
    with app.app_context():
        subs = db.session.scalars(db.select(Submission).order_by(Submission.id)).all()
        points = float(db.session.scalars(db.select(Progress.best_points)).one())
    assert [s.used_attempt for s in subs] == [True, True, False, True]
    subs = [s for s in subs if s.used_attempt]
    assert subs[2].score == 0.0 and 0 < subs[1].score < 1
    expected_score = (rows * cols - 1) / (rows * cols)  # one entry of the grid wrong
    assert subs[1].score == pytest.approx(expected_score)
    assert points == pytest.approx(expected_score * 10)
    best = (
        f"Your best answer on this variant: {round(100 * expected_score)}% · "
        f"{points:g} of 10 points (it is the one that counts)."
    )
    assert "No attempts left on this variant" in page and best in page
    assert best in body(client.get(url_of(PRODUCT)))  # the page read again says the same


@pytest.mark.parametrize(
    "exercise_id", ["05-attention/08-fill-in-weights", "05-attention/09-fill-in-output"]
)
def test_a_fill_in_grids_marked_answer_speaks_of_the_entries_filled_in(app, exercise_id) -> None:
    """A partly given matrix, out of attempts with one typed entry wrong: the given cells are
    shown as given, the one wrong entry is marked, and the caption is about the entries the
    student filled in."""
    client = student(app)
    page = client.get(url_of(exercise_id)).get_data(as_text=True)
    expected = np.asarray(bank_variant_of(app, "ana", exercise_id).expected, dtype=float)
    inputs = re.findall(r'<input name="(cell-(\d+)-(\d+))" value="([^"]*)"([^>]*)>', page)
    given = {
        (int(r), int(c)): html.unescape(v) for _, r, c, v, rest in inputs if "readonly" in rest
    }
    typed = [(int(r), int(c)) for _, r, c, _, rest in inputs if "readonly" not in rest]
    assert given and len(typed) >= 2, (len(given), typed)
    wrong_at = typed[-1]
    for attempt in range(10):
        data = {"csrf_token": csrf_from(page), "via": "cells"}
        data["variant"] = re.search(r'name="variant" value="(\d+)"', page).group(1)
        for (r, c), value in given.items():
            data[f"cell-{r}-{c}"] = value
        for r, c in typed:
            data[f"cell-{r}-{c}"] = fmt(expected[r, c])
        data[f"cell-{wrong_at[0]}-{wrong_at[1]}"] = str(50 + attempt)  # a new wrong value
        page = client.post(url_of(exercise_id), data=data).get_data(as_text=True)
        if "No attempts left on this variant" in page:
            break
    else:
        raise AssertionError("the attempts never ran out")
    marked = re.search(r'<table class="grid marked-grid[^"]*">(.*?)</table>', page, re.S)
    assert marked is not None
    grid = marked.group(1)
    assert (
        '<caption class="visually-hidden">Every entry you filled in is right unless marked wrong</caption>'
        in grid
    )
    assert grid.count('class="given"') == len(given)
    assert grid.count('class="mark-wrong"') == 1 and grid.count("mark-right") == 0
    cells = re.findall(r"<td( class=\"[^\"]*\")?>", grid.split("<tbody>")[1])
    flat = [cls for cls in cells]
    ncols = expected.shape[1]
    assert flat[wrong_at[0] * ncols + wrong_at[1]] == ' class="mark-wrong"'


def test_no_attempts_left_is_not_the_solved_box_and_the_marked_answer_stays(app) -> None:
    client = student(app)
    ab = product(app)
    wrong = ab.copy()
    wrong[0, 0] += 5
    for k in range(3):
        attempt = wrong.copy()
        attempt[1, 1] += k + 1  # three different answers, each with two wrong cells
        resp = post_cells(client, PRODUCT, [[fmt(x) for x in r] for r in attempt])
    page = body(resp)
    assert '<p class="alert alert-out">No attempts left on this variant.' in page
    assert "alert-done" not in page
    assert 'class="grid-form"' not in page  # no form any more ...
    grid = re.search(r'<table class="grid marked-grid all-(right|wrong)">(.*?)</table>', page, re.S)
    assert grid, "the last answer with its marks is gone"  # ... but the marked answer stays
    # The most common mark is the table's (its caption says so), the others are the cells'.
    most = grid.group(1)
    assert f'<caption class="visually-hidden">Every entry {most} unless marked' in grid.group(2)
    tbody = grid.group(2).split("<tbody>", 1)[1]
    cells = re.findall(r'<td(?: class="mark-(right|wrong)")?>([^<]*)<', tbody)
    assert [float(v) for _, v in cells] == pytest.approx(attempt.ravel().tolist())
    marks = [m or most for m, _ in cells]
    assert marks == ["wrong", "right", "right", "wrong"]
    # And again on a later visit.
    assert "marked-grid" in body(client.get(url_of(PRODUCT)))


def test_solved_shows_the_solved_box_and_the_marked_answer(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", TRANSPOSE)  # answered in the text box only
    at = np.asarray(v.values["A"], dtype=float).T
    page = body(post_text(client, TRANSPOSE, "\n".join(" ".join(fmt(x) for x in r) for r in at)))
    assert '<p class="alert alert-done">Solved!' in page and "alert-out" not in page
    # Every entry right: said once, on the table (its class and caption), each value in a cell.
    grid = re.search(r'<table class="grid marked-grid all-right">(.*?)</table>', page, re.S)
    assert grid and "Every entry right" in grid.group(1)
    values = re.findall(r"<td>([^<]*)</td>", grid.group(1).split("<tbody>", 1)[1])
    assert [float(x) for x in values] == pytest.approx(at.ravel().tolist())


# --------------------------------------------------------------------------------------------
# Multiple choice


def test_choice_answers_are_letters_everywhere(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", CHOICE)
    right = int(v.expected)  # 0-based
    wrong = (right + 1) % len(v.answer_form.choices)
    token = csrf_from(client.get(url_of(CHOICE)).get_data(as_text=True))
    resp = client.post(url_of(CHOICE), data={"csrf_token": token})  # nothing chosen
    assert resp.status_code == 400
    assert "Choose one of the options before submitting." in body(resp)
    assert "Type an answer" not in body(resp)
    post_text(client, CHOICE, str(wrong + 1), via="")
    page = body(post_text(client, CHOICE, str(right + 1), via=""))
    letters = "abcdefghijklmnopqrstuvwxyz"
    history = re.search(r'<table class="submissions">(.*?)</table>', page, re.S).group(1)
    shown = re.findall(r'<pre class="answer-text"><bdi>([^<]*)</bdi></pre>', history)
    assert shown == [f"({letters[right]})", f"({letters[wrong]})"]  # newest first
    # The worked solution names the right option by its letter and shows it, as math.
    sol = re.search(r'<section class="solution card".*?</section>', page, re.S).group(0)
    m = re.search(
        r'The right answer: <span class="choice-letter">\((\w)\)</span> (.*?)</p>\s*</div>',
        sol,
        re.S,
    )
    assert m and m.group(1) == letters[right] and "<math" in m.group(2)


# --------------------------------------------------------------------------------------------
# Invalid answers


def test_an_invalid_cell_is_said_once(app) -> None:
    client = student(app)
    page = body(post_cells(client, PRODUCT, [["x", "1"], ["2", "3"]]))
    verdict = re.search(r'<section class="verdict card.*?</section>', page, re.S).group(0)
    assert "Row 1, column 1: Unknown name 'x'" in verdict
    assert "(in 'x')" not in verdict
    assert verdict.count("Unknown name") == 1
    page = body(post_cells(client, PRODUCT, [["x", "y"], ["2", "3"]]))
    verdict = re.search(r'<section class="verdict card.*?</section>', page, re.S).group(0)
    assert "2 boxes cannot be read:" in verdict
    assert verdict.count("Unknown name 'x'") == 1 and verdict.count("Unknown name 'y'") == 1


# --------------------------------------------------------------------------------------------
# Worked solutions of expression exercises


def test_expression_solutions_show_math_not_code(app) -> None:
    client = student(app)
    for answer in ("9 9", "8 8", "7 7"):  # three wrong answers: the solution is shown
        page = body(post_text(client, EXPRESSION, answer))
    sol = re.search(r'<section class="solution card".*?</section>', page, re.S).group(0)
    steps = re.findall(r'<li class="step">\s*<h3>(.*?)</h3>(.*?)</li>', sol, re.S)
    assert len(steps) >= 3
    for title, text in steps:
        assert "`" not in title + text and "<code>" not in title + text, title
    titles = [t for t, _ in steps]
    assert all("<math" in t for t in titles[:-1])  # each step named by its formula
    assert "<mfrac>" in "".join(titles) and "<msqrt>" in "".join(titles)  # q K^T / sqrt(4)


# --------------------------------------------------------------------------------------------
# Focus after a submit


def test_the_verdict_takes_the_focus_after_a_submit_only(app) -> None:
    client = student(app)
    page = body(client.get(url_of(DECK)))
    assert "autofocus" not in page
    page = body(post_text(client, DECK, "1 1"))
    assert re.search(
        r'<section class="verdict card verdict-\w+" id="verdict" tabindex="-1" aria-labelledby="verdict-title" autofocus data-announce>',
        page,
    )
    assert '<p id="announce" class="visually-hidden" role="status" aria-live="polite"></p>' in page
    # An empty answer: the error takes the focus instead.
    token = csrf_from(client.get(url_of(DECK)).get_data(as_text=True))
    resp = client.post(url_of(DECK), data={"csrf_token": token, "via": "text", "answer": " "})
    page = body(resp)
    assert re.search(r'role="alert" id="form-error" tabindex="-1" autofocus', page)
    assert "data-announce" not in page
