"""The exercise page stays light: for every bundled exercise, as first shown and once finished
(every attempt used on a wrong answer, so the page carries the submissions table, the marked
answer and the worked solution with its heatmaps), its HTML plus the CSS and JavaScript it loads
is under 40 KB (40,000 bytes, uncompressed); it loads nothing from another origin and needs no
build step (the static files it names are the repository's own files, served as they are)."""

from __future__ import annotations

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


def _wrong_answers(bank_variant, n: int) -> list[str]:
    """``n`` different readable wrong answers for the variant (computed from its numbers), with
    6 decimals, longer than a student types (the answers appear in the page three times)."""
    form = bank_variant.answer_form
    if form.type == "choice":
        right = int(bank_variant.expected)
        return ["abcdefghij"[k] for k in range(len(form.choices)) if k != right][:n]
    if form.type == "index":
        right = int(bank_variant.expected)
        return [str(k) for k in range(1, 50) if k != right][:n]
    exp = np.asarray(bank_variant.expected, dtype=float)
    if form.type == "point_on_line":
        a = np.atleast_2d(np.asarray(bank_variant.context["coefficients"], dtype=float))
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


def _weight(page: str) -> int:
    refs = _Refs()
    refs.feed(page)
    size = len(page.encode("utf-8"))
    for tag, attr, url in refs.urls:
        assert not re.match(r"(?i)^(https?:)?//", url), f"{tag} {attr}={url} leaves the origin"
        assert not url.lower().startswith("javascript:"), url
        if tag in ("script", "link") and url.startswith("/static/"):
            name = url.split("?", 1)[0][len("/static/") :]
            size += (STATIC / name).stat().st_size  # the file as committed: no build step
    return size


def test_every_exercise_page_is_under_40_kb_before_and_after_answering(tmp_path: Path) -> None:
    app = synced_app(tmp_path, RATELIMIT_ENABLED=False)
    client = student(app)
    client.get("/")
    weights: dict[str, tuple[int, int]] = {}
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
        assert "Worked solution" in finished and "marked" in finished, eid
        weights[eid] = (_weight(first), _weight(finished))
    heaviest = max(weights, key=lambda e: max(weights[e]))
    print("heaviest exercise page:", heaviest, weights[heaviest], "bytes (before, after)")
    over = {e: w for e, w in weights.items() if max(w) >= BUDGET}
    assert not over, over
