"""The exercise page lists the latest submissions only (student.HISTORY_ROWS), and links to the
variant's submissions page, which lists them all with their answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_web_support import csrf_from, post_text, student, synced_app, url_of

from quizapp.models import Variant, db
from quizapp.web.student import HISTORY_ROWS

PRODUCT = "03-transpose-and-products/05-matrix-product"
STEPS = "05-attention/01a-weights-step-by-step"


@pytest.fixture()
def app(tmp_path: Path):
    return synced_app(tmp_path, RATELIMIT_ENABLED=False)


def history_rows(page: str) -> list[list[str]]:
    """The cells of each row of the page's submissions table."""
    table = re.search(r'<table class="submissions">(.*?)</table>', page, re.S)
    assert table, "no submissions table"
    body = table.group(1).split("<tbody>", 1)[1]
    return [
        re.findall(r"<td>(.*?)</td>", tr, re.S) for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_the_page_lists_the_latest_and_links_to_all_of_them(app) -> None:
    client = student(app)
    answers = [f"{k} {k} +" for k in range(HISTORY_ROWS + 2)]  # unreadable: no attempt used
    for text in answers:
        resp = post_text(client, PRODUCT, text)
        assert "could not be graded" in resp.get_data(as_text=True)
    page = client.get(url_of(PRODUCT)).get_data(as_text=True)
    shown = history_rows(page)
    assert [r[0] for r in shown] == [str(len(answers) - k) for k in range(HISTORY_ROWS)]
    assert all(answers[-1 - k] in shown[k][1 + 1] for k in range(HISTORY_ROWS))  # the answer
    link = f'href="{url_of(PRODUCT)}/submissions">All {len(answers)} submissions'
    assert link in page
    full = client.get(url_of(PRODUCT) + "/submissions")
    assert full.status_code == 200
    rows = history_rows(full.get_data(as_text=True))
    assert [r[0] for r in rows] == [str(len(answers) - k) for k in range(len(answers))]
    assert [answers[-1 - k] in r[2] for k, r in enumerate(rows)] == [True] * len(answers)


def test_a_few_submissions_need_no_link(app) -> None:
    client = student(app)
    post_text(client, PRODUCT, "1 2 +")
    page = client.get(url_of(PRODUCT)).get_data(as_text=True)
    assert len(history_rows(page)) == 1
    assert "/submissions" not in page


def test_an_exercise_never_opened_has_no_variant_and_gets_none(app) -> None:
    client = student(app)
    with app.app_context():
        before = db.session.query(Variant).count()
    resp = client.get(url_of(PRODUCT) + "/submissions")
    assert resp.status_code == 200
    assert "You have not opened this exercise yet." in resp.get_data(as_text=True)
    with app.app_context():
        assert db.session.query(Variant).count() == before
    assert client.get("/exercises/03-transpose-and-products/nothing/submissions").status_code == 404


def test_a_multi_part_page_lists_no_answers_and_links_to_them(app) -> None:
    client = student(app)
    page = client.get(url_of(STEPS)).get_data(as_text=True)
    data = {"csrf_token": csrf_from(page), "part-S-answer": "1 2 3\n4 5 6"}
    resp = client.post(url_of(STEPS), data=data)
    assert resp.status_code == 200
    page = client.get(url_of(STEPS)).get_data(as_text=True)
    assert '<th scope="col">Answer</th>' not in page  # the part tables show the last answer
    assert "Your submissions with their answers" in page
    full = client.get(url_of(STEPS) + "/submissions").get_data(as_text=True)
    assert '<th scope="col">Answer</th>' in full
    (row,) = history_rows(full)
    assert re.search(r"S: 1 2 3\s*\n?\s*4 5 6", re.sub(r"<[^>]+>", "", row[2]))
