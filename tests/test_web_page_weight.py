"""The exercise page stays light: for every bundled exercise, single-answer and multi-part, in
each state a student sees it in, its HTML plus the CSS and JavaScript it loads is under 40 KB
(40,000 bytes) uncompressed and as sent compressed (gzip, what every browser accepts).  The
states: as first shown; after one wrong answer (marked boxes, a submission listed); with one
attempt left (the form still open, the submissions it lists); once out of
attempts (every attempt used on a wrong answer: the marked answer, the worked solution with its
heatmaps, the submissions table); once solved (every part answered right); and with many
submissions (ten unreadable answers, which use no attempt, then every attempt wrong).  Every
figure is measured on the page the server sends.  The page loads nothing from another origin and
needs no build step (the static files it names are the repository's own files, served as they
are).  docs/exercise-page.md lists the figures.
"""

from __future__ import annotations

import gzip
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
from test_web_support import REPO, student, synced_app, url_of

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


def fmt(x: float) -> str:
    """A number as NumPy prints it, to 8 decimals: longer than a student types."""
    return f"{float(x):.8f}"


def _wrong_answers(bank_variant, n: int) -> list:
    """``n`` different readable wrong answers for the variant (computed from its numbers), with
    8 decimals, longer than a student types (the answers appear in the page three times); for a
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


def _right_for(form, expected, context) -> str:
    """The stored expected answer of one answer form, typed as a student would."""
    if form.type == "choice":
        return "abcdefghij"[int(expected)]
    if form.type == "index":
        return str(int(expected))
    exp = np.asarray(expected, dtype=float)
    if form.type == "point_on_line":
        points = exp.reshape(form.count, -1)
        return "\n".join("(" + ", ".join(fmt(v) for v in p) + ")" for p in points)
    right = np.atleast_1d(exp)
    rows = right.reshape(-1, right.shape[-1]) if right.ndim == 2 else right.reshape(1, -1)
    return "\n".join(" ".join(fmt(v) for v in row) for row in rows)


def _right_answer(bank_variant):
    """The right answer to the variant: every part of a multi-part one."""
    if bank_variant.parts:
        return {
            p.name: _right_for(p.answer_form, p.expected, p.context) for p in bank_variant.parts
        }
    return _right_for(bank_variant.answer_form, bank_variant.expected, bank_variant.context)


#: Unreadable answers the "many submissions" state starts with (they use no attempt).
UNREADABLE = 10


def _unreadable(bank_variant):
    """An answer that cannot be read (in every part of a multi-part variant)."""
    return {p.name: "x?" for p in bank_variant.parts} if bank_variant.parts else "x?"


def test_every_exercise_page_is_under_40_kb_in_every_state(tmp_path: Path) -> None:
    app = synced_app(tmp_path, RATELIMIT_ENABLED=False)
    secret = app.config["QUIZAPP_SEED_SECRET"]
    # One student per state that needs its own variant history.
    clients = {name: student(app, name) for name in ("ana", "bo", "cy")}
    with app.app_context():
        ids = sorted(e.id for e in db.session.query(Exercise).filter_by(archived=False))
    assert len(ids) >= 50
    weights: dict[tuple[str, str], int] = {}
    sent: dict[tuple[str, str], int] = {}
    multi_part: set[str] = set()

    def page(who: str, eid: str) -> str:
        resp = clients[who].get(url_of(eid))
        assert resp.status_code == 200, (who, eid)
        return resp.get_data(as_text=True)

    def submit(who: str, eid: str, answers) -> tuple:
        """Submit ``answers(bank_variant)`` (a list) on ``who``'s variant of ``eid``, in order."""
        with app.app_context():
            user = services.find_user(db.session, who)
            exercise = db.session.get(Exercise, eid)
            row = services.get_or_create_variant(db.session, user, exercise, secret)
            bank_variant = services.stored_variant(row)
            results = [
                services.submit(db.session, user, eid, answer, seed_secret=secret)
                for answer in answers(bank_variant)
            ]
            return bank_variant, results

    def measure(eid: str, state: str, html: str) -> None:
        weights[eid, state] = _weight(html)
        sent[eid, state] = _weight(html, compressed=True)

    for eid in ids:
        with app.app_context():
            attempts = int(db.session.get(Exercise, eid).attempts)
        measure(eid, "first shown", page("ana", eid))
        bank_variant, (first,) = submit("ana", eid, lambda v: _wrong_answers(v, 1))
        assert first.used_attempt, (eid, first.verdict)
        after_one = page("ana", eid)
        assert "Your last answer" in after_one, eid
        measure(eid, "one wrong answer", after_one)
        if bank_variant.parts:
            multi_part.add(eid)
        if attempts > 2:  # the form still open, with the most submissions it shows
            _, results = submit("ana", eid, lambda v, n=attempts: _wrong_answers(v, n)[1:-1])
            assert all(r.used_attempt and not r.finished for r in results), eid
            measure(eid, "one attempt left", page("ana", eid))
        _, results = submit("ana", eid, lambda v, n=attempts: _wrong_answers(v, n)[max(1, n - 1) :])
        assert all(r.used_attempt for r in results), eid
        out = page("ana", eid)
        assert "Worked solution" in out and "No attempts left" in out, eid
        # The last answer stays on the page, marked: a multi-part one in each part's grid.
        assert re.search(r"mark-wrong|all-wrong" if bank_variant.parts else "marked", out), eid
        measure(eid, "out of attempts", out)
        page("bo", eid)
        _, results = submit(
            "bo", eid, lambda v, n=attempts: [*_wrong_answers(v, 1)[: n - 1], _right_answer(v)]
        )
        assert results[-1].finished, (eid, results[-1].verdict)
        solved = page("bo", eid)
        assert "Solved!" in solved and "Worked solution" in solved, eid
        measure(eid, "solved", solved)
        page("cy", eid)
        _, results = submit(
            "cy", eid, lambda v, n=attempts: [_unreadable(v)] * UNREADABLE + _wrong_answers(v, n)
        )
        assert not any(r.used_attempt for r in results[:UNREADABLE]), eid
        many = page("cy", eid)
        assert f"All {UNREADABLE + attempts} submissions" in many, eid  # the rest: linked
        measure(eid, "many submissions", many)
    assert len(multi_part) >= 5, sorted(multi_part)  # the step-by-step exercises are measured
    for key in sorted(weights, key=weights.__getitem__, reverse=True)[:8]:  # docs' table (-s)
        print("heavy exercise page:", *key, weights[key], "bytes,", sent[key], "gzip")
    assert not {k: w for k, w in weights.items() if w >= BUDGET}, "over 40 KB uncompressed"
    assert not {k: w for k, w in sent.items() if w >= BUDGET}, "over 40 KB as sent"
