"""The exercise page stays light: for every bundled exercise, as first shown and once finished
(every attempt used on a wrong answer, so the page carries the submissions table, the marked
answer and the worked solution with its heatmaps), its HTML plus the CSS and JavaScript it loads
is under 40 KB (40,000 bytes) as sent compressed (gzip, what every browser accepts), and under
40 KB uncompressed for every single-answer exercise; it loads nothing from another origin and
needs no build step (the static files it names are the repository's own files, served as they
are).  The multi-part step-by-step exercises (six answer grids, each part's worked solution) are
over 40 KB uncompressed: that is known and open (issue 15's budget predates them)."""

from __future__ import annotations

import gzip
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
from test_web_support import REPO, fmt, student, synced_app, url_of

from quizapp import services
from quizapp.models import Exercise, db

BUDGET = 40_000
STATIC = REPO / "quizapp" / "web" / "static"


class _Refs(HTMLParser):
    """Every URL a page makes the browser fetch or follow (src, href, action, data...)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "action", "data", "poster", "srcset") and value:
                self.urls.append((tag, name, value))


def _wrong_answers(bank_variant, n: int) -> list:
    """``n`` different readable wrong answers for the variant (computed from its numbers), with
    6 decimals, longer than a student types (the answers appear in the page three times); for a
    multi-part variant, ``n`` answers naming every part, each part wrong."""
    if bank_variant.parts:
        per_part = {
            p.name: _wrong_for(p.answer_form, p.expected, p.context, n) for p in bank_variant.parts
        }
        return [{name: wrong[k] for name, wrong in per_part.items()} for k in range(n)]
    return _wrong_for(bank_variant.answer_form, bank_variant.expected, bank_variant.context, n)


def _wrong_for(form, expected, context, n: int) -> list[str]:
    if form.type == "choice":
        right = int(expected)
        return ["abcdefghij"[k] for k in range(len(form.choices)) if k != right][:n]
    if form.type == "index":
        right = int(expected)
        return [str(k) for k in range(1, 50) if k != right][:n]
    exp = np.asarray(expected, dtype=float)
    if form.type == "point_on_line":
        a = np.atleast_2d(np.asarray(context["coefficients"], dtype=float))
        step = a.sum(axis=0)  # A (p + k step) = c + k A step, never c
        points = exp.reshape(form.count, -1)
        return [
            "\n".join(
                "(" + ", ".join(fmt(v) for v in p + 1000 * (k + 1) * step) + ")" for p in points
            )
            for k in range(n)
        ]
    out = []
    for k in range(n):
        wrong = np.atleast_1d(exp + 1000.0 * (k + 1))
        rows = wrong.reshape(-1, wrong.shape[-1]) if wrong.ndim == 2 else wrong.reshape(1, -1)
        out.append("\n".join(" ".join(fmt(v) for v in row) for row in rows))
    return out


def _weight(page: str, compressed: bool = False) -> int:
    """Bytes of the page plus the CSS and JavaScript it loads (gzip-compressed if asked)."""

    def size(data: bytes) -> int:
        return len(gzip.compress(data, 6)) if compressed else len(data)

    refs = _Refs()
    refs.feed(page)
    total = size(page.encode("utf-8"))
    for tag, attr, url in refs.urls:
        assert not re.match(r"(?i)^(https?:)?//", url), f"{tag} {attr}={url} leaves the origin"
        assert not url.lower().startswith("javascript:"), url
        if tag in ("script", "link") and url.startswith("/static/"):
            name = url.split("?", 1)[0][len("/static/") :]
            total += size((STATIC / name).read_bytes())  # the file as committed: no build step
    return total


def test_every_exercise_page_is_under_40_kb_before_and_after_answering(tmp_path: Path) -> None:
    app = synced_app(tmp_path, RATELIMIT_ENABLED=False)
    client = student(app)
    client.get("/")
    weights: dict[str, tuple[int, int]] = {}
    sent: dict[str, tuple[int, int]] = {}
    multi_part: set[str] = set()
    with app.app_context():
        ids = sorted(e.id for e in db.session.query(Exercise).filter_by(archived=False))
    assert len(ids) >= 50
    for eid in ids:
        first = client.get(url_of(eid)).get_data(as_text=True)
        with app.app_context():
            user = services.find_user(db.session, "ana")
            exercise = db.session.get(Exercise, eid)
            row = services.get_or_create_variant(
                db.session, user, exercise, app.config["QUIZAPP_SEED_SECRET"]
            )
            bank_variant = services.stored_variant(row)
            for answer in _wrong_answers(bank_variant, int(exercise.attempts)):
                result = services.submit(
                    db.session, user, eid, answer, seed_secret=app.config["QUIZAPP_SEED_SECRET"]
                )
                assert result.used_attempt, (eid, answer, result.verdict)
            assert result.finished, eid
        finished = client.get(url_of(eid)).get_data(as_text=True)
        assert "Worked solution" in finished, eid
        # The last answer stays on the page, marked: a multi-part one in each part's grid.
        assert ("mark-wrong" if bank_variant.parts else "marked") in finished, eid
        weights[eid] = (_weight(first), _weight(finished))
        sent[eid] = (_weight(first, compressed=True), _weight(finished, compressed=True))
        if bank_variant.parts:
            multi_part.add(eid)
    heaviest = max(weights, key=lambda e: max(weights[e]))
    print("heaviest exercise page:", heaviest, weights[heaviest], "bytes (before, after)")
    over = {e: w for e, w in weights.items() if max(w) >= BUDGET and e not in multi_part}
    assert not over, over
    assert not {e: w for e, w in sent.items() if max(w) >= BUDGET}, "over 40 KB as sent"
