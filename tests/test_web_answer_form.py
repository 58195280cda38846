"""Multiple choice: the radio labels carry the letters the prompt refers to, and a wrong
option's mistake sentence is shown once (not in the message and again in the list)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from test_web_support import (
    bank_variant_of,
    post_text,
    student,
    synced_app,
    url_of,
)

CHOICE = "02-matrices-and-maps/03-which-is-linear"


def test_choice_labels_have_letters_and_mistakes_are_said_once(tmp_path: Path) -> None:
    app = synced_app(tmp_path)
    client = student(app, "ana")
    page = client.get(url_of(CHOICE)).get_data(as_text=True)
    variant = bank_variant_of(app, "ana", CHOICE)
    n = len(variant.answer_form.choices)
    labels = re.findall(r'<label for="choice-(\d+)">(.*?)</label>', page, re.S)
    assert [int(i) for i, _ in labels] == list(range(n))
    for i, text in labels:
        assert text.startswith(f'<span class="choice-letter">({"abcd"[int(i)]})</span> ')
    mistakes = variant.context["choice_mistakes"]
    wrong = next(i for i in range(n) if i != int(variant.expected) and i in mistakes)
    sentence = mistakes[wrong][1]
    resp = post_text(client, CHOICE, str(wrong + 1), via="")
    body = html.unescape(resp.get_data(as_text=True))
    assert "incorrect" in body.lower()
    assert body.count(sentence) == 1, sentence


def test_every_unreadable_cell_of_an_invalid_grid_is_marked_and_listed(tmp_path: Path) -> None:
    from test_web_support import post_cells

    matrix = "01-linear-systems/08-matrix-form"  # a 2 x 3 grid
    app = synced_app(tmp_path)
    client = student(app, "ana")
    resp = post_cells(client, matrix, [["1", "abc", "3"], ["1,5", "2", ""]])
    page = resp.get_data(as_text=True)
    marked = re.findall(r'name="(cell-\d-\d)"[^>]*aria-invalid="true"', page)
    assert marked == ["cell-0-1", "cell-1-0", "cell-1-2"]
    items = re.findall(r'<ul class="cell-problems">(.*?)</ul>', page, re.S)
    assert items and len(re.findall(r"<li>", items[0])) == 3
    assert "used no attempt" in page or "no attempt" in page
