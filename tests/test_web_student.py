"""The student's path in the browser, on REAL bank exercises (``exercises/``): quiz list, answer
forms, verdicts (correct, partial, incorrect, invalid), identical resubmission, attempts running
out, the worked solution only afterwards, practice variants, progress, restart safety.

Expected answers are computed here with NumPy from the variant's numbers, not taken from the app.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
from test_web_support import (
    bank_variant_of,
    csrf_from,
    fmt,
    login,
    post_cells,
    post_text,
    student,
    synced_app,
    url_of,
)

from quizapp.models import Progress, Submission, Variant, db

DECK = "01-linear-systems/05-deck-system"
TWO = "01-linear-systems/06-two-by-two"
SOFTMAX = "04-retrieval-and-softmax/05-softmax-vector"
WEIGHTS = "05-attention/01-attention-weights"
TRANSPOSE = "03-transpose-and-products/01-transpose"
CHOICE = "02-matrices-and-maps/03-which-is-linear"
FILL = "05-attention/08-fill-in-weights"
LINE = "01-linear-systems/03-deck-line"
TOP = "04-retrieval-and-softmax/04-top-keyword"


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention_weights(values: dict) -> np.ndarray:
    Q = np.asarray(values["Q"], dtype=float)
    K = np.asarray(values["K"], dtype=float)
    return np_softmax(Q @ K.T / np.sqrt(Q.shape[1]), axis=1)


def text(resp) -> str:
    return html.unescape(resp.get_data(as_text=True))


def subs(app, exercise_id: str) -> list[Submission]:
    with app.app_context():
        rows = db.session.query(Submission).filter_by(exercise_id=exercise_id)
        return list(rows.order_by(Submission.id))


def progress_of(app, exercise_id: str) -> Progress | None:
    with app.app_context():
        return db.session.query(Progress).filter_by(exercise_id=exercise_id).one_or_none()


@pytest.fixture()
def app(tmp_path: Path):
    return synced_app(tmp_path)


def test_home_lists_quizzes_with_a_progress_bar_per_quiz(app) -> None:
    from test_web_support import EXERCISES

    from quizapp.bank import load_bank

    bank = load_bank(EXERCISES)
    page = text(student(app).get("/"))
    for quiz in bank.quizzes.values():
        assert quiz.title in page
        available = sum(bank.exercises[e].spec.points for e in quiz.exercise_ids)
        assert f"Points: 0 of {available} (0%)" in page
    assert page.count("<progress ") == len(bank.quizzes)
    assert page.count("not started") == len(bank.exercises)


def test_deck_system_correct_answer_in_the_grid(app) -> None:
    client = student(app)
    page = text(client.get(url_of(DECK)))
    # The grid has one labelled input per unknown; no solution before answering.
    assert re.search(r'<input name="cell-0-0" value="" aria-label="x">', page)
    assert re.search(r'<input name="cell-1-0" value="" aria-label="y">', page)
    assert "Worked solution" not in page and "A correct answer" not in page
    assert "<math" in page  # prompt rendered to MathML
    x = np.linalg.solve([[5, 1], [3, 2]], [15, 16])  # the deck's system: x = 2, y = 5
    resp = post_cells(client, DECK, [[fmt(x[0])], [fmt(x[1])]])
    assert resp.status_code == 200
    page = text(resp)
    assert "✓ correct" in page and "Score 100%" in page and "10 of 10 points" in page
    assert "Worked solution" in page and "Eliminate" in page
    assert "Try a new variant" not in page  # the deck system has practice: false
    (sub,) = subs(app, DECK)
    assert sub.status == "correct" and sub.score == 1.0 and sub.points == 10.0
    assert sub.used_attempt and sub.attempt_number == 1 and sub.answer_format == "cells"
    assert sub.raw_answer == '[["2.000000"], ["5.000000"]]'
    assert sub.parsed == pytest.approx([2.0, 5.0])
    p = progress_of(app, DECK)
    assert p.best_points == 10.0 and p.attempts_used == 1 and p.solved_at is not None
    assert p.best_reached_at == p.solved_at
    progress = text(client.get("/progress"))
    assert "Total: <strong>10</strong>" in progress and "✓ solved" in progress


def test_softmax_exercise_pasted_as_text(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", SOFTMAX)
    x = np.asarray(v.values["x"], dtype=float)
    expected = np_softmax(x)
    assert expected.sum() == pytest.approx(1.0)
    resp = post_text(client, SOFTMAX, "  ".join(fmt(e) for e in expected))
    page = text(resp)
    assert "✓ correct" in page and "Worked solution" in page
    (sub,) = subs(app, SOFTMAX)
    assert sub.answer_format == "text" and sub.status == "correct"


def test_partial_answer_marks_each_cell_right_or_wrong(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", WEIGHTS)
    w = attention_weights(v.values)
    assert w.shape == (2, 3)
    grid = [[fmt(c) for c in row] for row in w]
    grid[1][2] = fmt(w[1, 2] + 0.5)  # one wrong cell out of six
    page = text(post_cells(client, WEIGHTS, grid))
    assert "◐ partly right" in page
    assert page.count('<td class="mark-right"><input') == 5
    assert page.count('<td class="mark-wrong"><input') == 1
    # Not by colour alone: the box's name says it (the sign comes from the stylesheet).
    assert re.search(r'name="cell-1-2" [^>]*aria-label="[^"]*\(wrong\)"', page)
    (sub,) = subs(app, WEIGHTS)
    assert sub.status == "partial"
    assert sub.score == pytest.approx(5 / 6)
    assert sub.points == pytest.approx(10 * 5 / 6, abs=1e-6)
    assert progress_of(app, WEIGHTS).best_points == pytest.approx(10 * 5 / 6, abs=1e-6)
    # Row/column labels of the variant (queries x keys) label the grid.
    for label in v.answer_form.row_labels + v.answer_form.col_labels:
        assert label in page
    assert "Worked solution" not in page


def test_incorrect_answer_names_the_mistake(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", WEIGHTS)
    Q = np.asarray(v.values["Q"], dtype=float)
    K = np.asarray(v.values["K"], dtype=float)
    unscaled = np_softmax(Q @ K.T, axis=1)  # forgot to divide by sqrt(d)
    assert not np.allclose(unscaled, attention_weights(v.values), rtol=1e-2)
    page = text(post_cells(client, WEIGHTS, [[fmt(c) for c in row] for row in unscaled]))
    (sub,) = subs(app, WEIGHTS)
    assert "missing_scale" in sub.mistakes
    assert sub.used_attempt and sub.status in ("incorrect", "partial")
    for message in sub.mistake_messages:
        assert message in page
    assert 'attempts left: <strong id="attempts-left">2</strong>' in page


def test_invalid_answer_keeps_the_text_and_uses_no_attempt(app) -> None:
    client = student(app)
    resp = post_text(client, DECK, "2, abc")
    page = resp.get_data(as_text=True)
    assert "⚠ invalid" in page
    assert ">2, abc</textarea>" in page  # the typed text is kept
    assert "used no attempt" in page
    assert 'id="attempts-left">3</strong>' in page
    (sub,) = subs(app, DECK)
    assert sub.status == "invalid" and not sub.used_attempt and sub.raw_answer == "2, abc"
    assert sub.verdict["message"] and sub.verdict["message"] in html.unescape(page)


def test_script_in_an_answer_is_stored_as_typed_and_shown_escaped(app) -> None:
    client = student(app)
    attack = "<script>alert(1)</script>"
    page = post_text(client, DECK, attack).get_data(as_text=True)
    assert attack not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    (sub,) = subs(app, DECK)
    assert sub.raw_answer == attack and sub.status == "invalid"


def test_identical_resubmission_uses_no_attempt(app) -> None:
    client = student(app)
    post_text(client, DECK, "1 1")
    page = text(post_text(client, DECK, " 1   1 "))  # same answer, other spacing
    assert "You already submitted this answer; it used no attempt." in page
    assert 'id="attempts-left">2</strong>' in page
    first, second = subs(app, DECK)
    assert first.used_attempt and not second.used_attempt
    assert second.duplicate_of_id == first.id and second.status == first.status == "incorrect"
    assert progress_of(app, DECK).attempts_used == 1


def test_attempts_run_out_then_solution_and_refusal(app) -> None:
    client = student(app)
    for answer in ("1 1", "3 3", "4 4"):  # all wrong in both cells (x = 2, y = 5)
        page = text(post_text(client, DECK, answer))
        if answer != "4 4":
            assert "Worked solution" not in page
    assert "No attempts left on this variant." in page
    assert "Worked solution" in page and "A correct answer" in page
    assert 'name="answer"' not in page  # no answer form any more
    page_get = text(client.get(url_of(DECK)))
    assert "Worked solution" in page_get
    # A fourth, new answer is refused and not stored.
    token = csrf_from(client.get(url_of(DECK)).get_data(as_text=True))
    resp = client.post(url_of(DECK), data={"csrf_token": token, "via": "text", "answer": "6 6"})
    assert resp.status_code == 409
    assert "No attempts left: all 3 attempts on this variant are used." in text(resp)
    assert len(subs(app, DECK)) == 3
    p = progress_of(app, DECK)
    assert p.attempts_used == 3 and p.best_score == 0.0 and p.solved_at is None
    home = text(client.get("/"))
    assert "no attempts left" in home


def test_solution_heatmap_after_finishing_attention_weights(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", WEIGHTS)
    w = attention_weights(v.values)
    before = client.get(url_of(WEIGHTS)).get_data(as_text=True)
    assert 'class="heatmap"' not in before
    page = post_cells(client, WEIGHTS, [[fmt(c) for c in row] for row in w]).get_data(as_text=True)
    assert "✓ correct" in page
    svg = re.search(r'<svg class="heatmap".*?</svg>', page, re.S)
    assert svg, "no heatmap"
    assert svg.group(0).count("<rect ") >= w.size
    assert " style=" not in page and "<script>" not in page


def test_practice_variant_after_solving(app) -> None:
    client = student(app)
    v1 = bank_variant_of(app, "ana", TWO)
    x = np.linalg.solve(np.asarray(v1.values["A"], float), np.asarray(v1.values["y"], float))
    page = text(post_cells(client, TWO, [[fmt(x[0])], [fmt(x[1])]]))
    assert "Try a new variant" in page
    token = csrf_from(page)
    resp = client.post(url_of(TWO) + "/new-variant", data={"csrf_token": token})
    assert resp.status_code == 302
    page = text(client.get(url_of(TWO)))
    assert "practice variant 2" in page and "Worked solution" not in page
    v2 = bank_variant_of(app, "ana", TWO)
    assert v2.seed != v1.seed
    # A wrong answer on the practice variant does not lower the score of variant 1.
    post_text(client, TWO, "0 0")
    p = progress_of(app, TWO)
    assert p.best_points == 10.0 and p.attempts_used == 1 and p.current_variant == 2
    with app.app_context():
        assert db.session.query(Variant).filter_by(exercise_id=TWO).count() == 2


def test_double_clicking_try_a_new_variant_lands_on_the_new_variant(app) -> None:
    """The second click of "Try a new variant" (same page, same form) showed a 409 page although
    the first click had made the variant; now it lands on that variant, and no third is made."""
    client = student(app)
    v1 = bank_variant_of(app, "ana", TWO)
    x = np.linalg.solve(np.asarray(v1.values["A"], float), np.asarray(v1.values["y"], float))
    page = text(post_cells(client, TWO, [[fmt(x[0])], [fmt(x[1])]]))
    form = {"csrf_token": csrf_from(page), "after": "1"}
    assert 'name="after" value="1"' in page
    first = client.post(url_of(TWO) + "/new-variant", data=form)
    second = client.post(url_of(TWO) + "/new-variant", data=form)
    assert first.status_code == 302 and second.status_code == 302
    assert second.headers["Location"].endswith(url_of(TWO))
    assert "practice variant 2" in text(client.get(url_of(TWO)))
    with app.app_context():
        assert db.session.query(Variant).filter_by(exercise_id=TWO).count() == 2
    # Variant 2 is not finished: a click from its own page is still refused.
    resp = client.post(url_of(TWO) + "/new-variant", data=dict(form, after="2"))
    assert resp.status_code == 409 and "Finish this variant first" in text(resp)


def test_new_variant_refused_before_finishing(app) -> None:
    client = student(app)
    page = client.get(url_of(TWO)).get_data(as_text=True)
    resp = client.post(url_of(TWO) + "/new-variant", data={"csrf_token": csrf_from(page)})
    assert resp.status_code == 409
    assert "Finish this variant first" in text(resp)


@pytest.mark.parametrize(
    "after",
    ["\u00b2", "\u2460", "9" * 5000, "-1", "1.0", "", "\u0663"],
    ids=["superscript-2", "circled-1", "5000-digits", "negative", "decimal", "empty", "arabic-3"],
)
def test_new_variant_with_a_bad_after_field_is_refused_not_a_500(app, after: str) -> None:
    # "²" and "①" pass str.isdigit but not int(); 5,000 digits are over int()'s limit: each was
    # a 500.  Any field that is no variant number reads as none: the unfinished variant refuses.
    client = student(app)
    page = text(post_cells(client, TWO, [["0"], ["0"]]))  # a wrong answer: a progress row
    assert 'attempts left: <strong id="attempts-left">2</strong>' in page
    resp = client.post(
        url_of(TWO) + "/new-variant", data={"csrf_token": csrf_from(page), "after": after}
    )
    assert resp.status_code == 409
    assert "Finish this variant first" in text(resp)


@pytest.mark.parametrize("via", ["", "banana"], ids=["no-via", "unknown-via"])
def test_a_typed_answer_to_a_grid_form_without_a_known_via_is_graded(app, via: str) -> None:
    # The grid form's text box posts via=text; without it (a hand-made or cut-off post) the
    # typed answer was taken for an empty grid: "Type an answer before submitting."
    client = student(app)
    v = bank_variant_of(app, "ana", TWO)
    x = np.linalg.solve(np.asarray(v.values["A"], float), np.asarray(v.values["y"], float))
    page = text(post_text(client, TWO, f"{fmt(x[0])}\n{fmt(x[1])}", via=via))
    assert "✓ correct" in page and "Type an answer" not in page


def test_choice_exercise_uses_labelled_radio_buttons(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", CHOICE)
    page = client.get(url_of(CHOICE)).get_data(as_text=True)
    radios = re.findall(r'<input type="radio" id="(choice-\d+)" name="answer" value="(\d+)"', page)
    assert len(radios) == len(v.answer_form.choices)
    for rid, _ in radios:
        assert f'<label for="{rid}">' in page
    # variant.expected is the 0-based index of the right option; the form posts 1-based numbers.
    resp = post_text(client, CHOICE, str(int(v.expected) + 1), via="")
    assert "✓ correct" in text(resp)


def test_index_exercise_single_input(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", TOP)
    page = client.get(url_of(TOP)).get_data(as_text=True)
    assert 'id="answer-single"' in page and 'for="answer-single"' in page
    assert "✓ correct" in text(post_text(client, TOP, str(int(v.expected)), via=""))


def test_partly_filled_matrix_has_read_only_given_cells(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", FILL)
    given = v.answer_form.given
    page = client.get(url_of(FILL)).get_data(as_text=True)
    n_given = sum(c is not None for row in given for c in row)
    assert page.count(" readonly") == n_given
    w = attention_weights(v.values)
    grid = [[("" if given[i][j] is not None else fmt(w[i, j])) for j in range(3)] for i in range(3)]
    page = text(post_cells(client, FILL, grid))
    assert "✓ correct" in page


def test_point_on_line_has_x_and_y_inputs(app) -> None:
    client = student(app)
    v = bank_variant_of(app, "ana", LINE)
    page = client.get(url_of(LINE)).get_data(as_text=True)
    assert 'name="cell-0-0" value="" aria-label="Point, x"' in page
    assert 'name="cell-0-1" value="" aria-label="Point, y"' in page
    a, b = (float(c) for c in np.ravel(v.context["coefficients"]))
    c = float(np.ravel(v.context["rhs"])[0])
    x = 7.0
    y = (c - a * x) / b  # any point of a x + b y = c
    assert "✓ correct" in text(post_cells(client, LINE, [[fmt(x), fmt(y)]]))


def test_every_exercise_page_renders_for_a_student(app) -> None:
    client = student(app)
    home = client.get("/").get_data(as_text=True)
    links = sorted(set(re.findall(r'href="(/exercises/[^"]+)"', home)))
    assert len(links) >= 40
    for link in links:
        page = client.get(link)
        assert page.status_code == 200, link
        body = page.get_data(as_text=True)
        assert "Worked solution" not in body, link
        assert " style=" not in body and "<script>" not in body, link
        for m in re.finditer(r'<input (?![^>]*type="hidden")[^>]*id="([^"]+)"[^>]*>', body):
            named = re.search(r' aria-label="[^"]+"', m.group(0))  # a grid box: row, column
            assert named or f'for="{m.group(1)}"' in body, f"{link}: input {m.group(1)} unnamed"
        for m in re.finditer(r'<textarea[^>]*id="([^"]+)"', body):
            assert f'for="{m.group(1)}"' in body


def test_unknown_exercise_and_path_traversal_are_404(app) -> None:
    client = student(app)
    for path in ("/exercises/nope/nothing", "/exercises/../../etc/passwd", "/exercises/%2e%2e/x"):
        assert client.get(path).status_code == 404


def test_restart_sees_everything(tmp_path: Path) -> None:
    app = synced_app(tmp_path)
    client = student(app)
    v = bank_variant_of(app, "ana", SOFTMAX)
    post_text(client, SOFTMAX, "1 2 3 4")
    post_text(
        client, SOFTMAX, " ".join(fmt(e) for e in np_softmax(np.asarray(v.values["x"], float)))
    )
    before = [(s.id, s.status, s.raw_answer) for s in subs(app, SOFTMAX)]
    # A new app instance (as after a server restart) on the same database and instance folder.
    app2 = synced_app(tmp_path)
    assert app2.config["SECRET_KEY"] == app.config["SECRET_KEY"]
    c2 = app2.test_client()
    assert login(c2, "ana").status_code == 302
    assert [(s.id, s.status, s.raw_answer) for s in subs(app2, SOFTMAX)] == before
    assert bank_variant_of(app2, "ana", SOFTMAX).seed == v.seed
    page = text(c2.get(url_of(SOFTMAX)))
    assert "✓ correct" in page and "Worked solution" in page
    assert "Total: <strong>10</strong>" in text(c2.get("/progress"))
    # The old session cookie still works with the new instance (same generated secret key).
    assert client.application is app
    old_cookie_client = app2.test_client()
    old_cookie_client._cookies = client._cookies
    assert old_cookie_client.get("/progress").status_code == 200


def test_invalid_cell_in_the_grid_is_highlighted_and_kept(app) -> None:
    client = student(app)
    page = post_cells(client, WEIGHTS, [["0.1", "0.2", "0.3"], ["0.4", "abc", "0.6"]]).get_data(
        as_text=True
    )
    assert "⚠ invalid" in page
    assert '<td class="mark-invalid"><input' in page
    assert re.search(r'name="cell-1-1" [^>]*aria-label="[^"]*\(cannot be read\)"', page)
    assert 'name="cell-1-1" value="abc"' in page  # typed values kept
    assert 'id="attempts-left">3</strong>' in page


def test_an_answer_to_an_exercise_withdrawn_while_open_is_shown_back(app) -> None:
    # The instructor archived the exercise while the student had it open: the post is a 404
    # that grades nothing, and the page gives back what was typed (it is not lost).
    from quizapp.models import Exercise

    client = student(app)
    token = csrf_from(client.get(url_of(DECK)).get_data(as_text=True))
    with app.app_context():
        db.session.get(Exercise, DECK).archived = True
        db.session.commit()
    resp = client.post(url_of(DECK), data={"csrf_token": token, "via": "text", "answer": "2, 5"})
    page = text(resp)
    assert resp.status_code == 404 and "There is no such exercise." in page
    assert "Your answer was not graded" in page and "<pre>2, 5</pre>" in page
    assert subs(app, DECK) == []


def test_an_expired_form_token_gives_the_typed_grid_back(app) -> None:
    client = student(app)
    client.get(url_of(DECK))
    data = {"csrf_token": "expired", "via": "cells", "cell-0-0": "2", "cell-1-0": " "}
    resp = client.post(url_of(DECK), data=data)
    page = text(resp)
    assert resp.status_code == 400 and "security token" in page
    assert "<pre>[2; ?]</pre>" in page  # row by row, an empty cell as ?
    assert subs(app, DECK) == []
    # Any other form's error page shows nothing of what was posted (a password, say).
    resp = client.post("/login", data={"csrf_token": "x", "username": "ana", "password": "s3cr"})
    assert resp.status_code == 400 and "s3cr" not in text(resp)
    assert "Your answer was not graded" not in text(resp)


def test_typed_answer_reads_text_cells_and_parts() -> None:
    from werkzeug.datastructures import MultiDict

    from quizapp.web.display import typed_answer

    assert typed_answer(MultiDict({"answer": " 1/3 ", "via": "text", "cell-0-0": "9"})) == [
        ("", "1/3")
    ]
    cells = {"via": "cells", "cell-0-0": "1", "cell-0-1": "", "cell-1-0": "3", "cell-1-1": "4"}
    assert typed_answer(MultiDict(cells)) == [("", "[1, ?; 3, 4]")]
    parts = {
        "part-a-answer": "2",
        "part-x-y-cell-0-0": "5",
        "part-x-y-cell-0-1": "6",
        "part-x-y-via": "cells",
        "part-c-answer": " ",
    }
    assert typed_answer(MultiDict(parts)) == [("Part a", "2"), ("Part x-y", "[5, 6]")]
    assert typed_answer(MultiDict({"csrf_token": "t", "answer": "  "})) == []


def test_an_answer_over_the_limits_is_refused_and_kept_in_the_form(app) -> None:
    # A cell over 200 characters: refused (400, nothing stored), and every box keeps what was
    # typed, the valid cells and the long one; a text over 20,000 characters stays in the box.
    client = student(app)
    url = "/exercises/02-matrices-and-maps/10-transpose-maps-back"
    page = client.get(url).get_data(as_text=True)
    long_cell = "1" * 201
    resp = client.post(
        url,
        data={
            "csrf_token": csrf_from(page),
            "via": "cells",
            "cell-0-0": long_cell,
            "cell-1-0": "22/7",
            "cell-2-0": "-13/9",
        },
    )
    body = resp.get_data(as_text=True)
    assert resp.status_code == 400 and "too long" in body
    assert f'value="{long_cell}"' in body and 'value="22/7"' in body and 'value="-13/9"' in body
    long_text = "1 " * 10_001
    resp = client.post(
        url, data={"csrf_token": csrf_from(page), "via": "text", "answer": long_text}
    )
    body = resp.get_data(as_text=True)
    assert resp.status_code == 400 and "too long" in body
    assert long_text.strip() in body
    with app.app_context():
        assert db.session.scalars(db.select(Submission)).all() == []


def test_a_form_with_a_box_outside_the_answer_grid_is_refused_not_graded(app) -> None:
    # A hand-made form: a fourth cell for the 3 x 1 grid, or a third row for a part's 2 x 1
    # grid. Refused (400, nothing stored) as the API refuses a grid of another shape, where
    # it was graded before without the extra cell.
    client = student(app)
    url = "/exercises/02-matrices-and-maps/10-transpose-maps-back"
    page = client.get(url).get_data(as_text=True)
    cells = {"cell-0-0": "1", "cell-1-0": "2", "cell-2-0": "3"}
    resp = client.post(
        url, data={"csrf_token": csrf_from(page), "via": "cells", **cells, "cell-3-0": "4"}
    )
    body = html.unescape(resp.get_data(as_text=True))
    assert resp.status_code == 400
    assert "a box outside the answer grid (row 4, column 1)" in body and "no attempt" in body
    assert 'value="2"' in body  # the typed cells stay
    parts_url = "/exercises/03-transpose-and-products/15-transpose-is-not-the-inverse"
    page = client.get(parts_url).get_data(as_text=True)
    resp = client.post(
        parts_url,
        data={
            "csrf_token": csrf_from(page),
            "part-P-answer": "1",
            "part-y-cell-0-0": "1",
            "part-y-cell-1-0": "2",
            "part-y-cell-2-0": "3",
        },
    )
    body = html.unescape(resp.get_data(as_text=True))
    assert resp.status_code == 400 and "(part y, row 3, column 1)" in body
    with app.app_context():
        assert db.session.scalars(db.select(Submission)).all() == []
