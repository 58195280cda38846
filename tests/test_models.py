"""Model helpers: username keys, UTC timestamps, lossless raw answers, safe redirects, display."""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from test_web_support import make_app

from quizapp import page, services
from quizapp.models import User, db, username_key
from quizapp.web.security import is_safe_next


def test_timestamps_come_back_as_aware_utc(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    when = datetime(2026, 3, 1, 12, 30, tzinfo=timezone(timedelta(hours=2)))
    with app.app_context():
        user = services.create_user(db.session, "ana", "correct horse")
        user.created_at = when
        db.session.commit()
        db.session.expire_all()
        got = db.session.get(User, user.id).created_at
    assert got.tzinfo is not None and got.utcoffset() == timedelta(0)
    assert got == when == datetime(2026, 3, 1, 10, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "answer",
    ["1 2\n3 4", "x\x00y", "\ud800 lone", "\u202e2 1", [["1", "2"]], [["\x00", "\udfff"]], ""],
)
def test_raw_answers_round_trip_losslessly(answer) -> None:
    fmt, raw = services.encode_raw_answer(answer)
    assert "\x00" not in raw
    raw.encode("utf-8")  # storable: no lone surrogates
    assert services.decode_raw_answer(fmt, raw) == answer
    if isinstance(answer, list):
        assert fmt == "cells" and json.loads(raw) == answer


def test_username_keys_fold_case_and_compatibility_forms() -> None:
    assert username_key("Ana") == username_key("ANA") == username_key("Ａｎａ") == "ana"
    assert username_key("é") == username_key(unicodedata.normalize("NFD", "É"))
    assert username_key("ana") != username_key("anna")


@pytest.mark.parametrize(
    ("target", "ok"),
    [
        ("/", True),
        ("/exercises/a/b?x=1", True),
        ("", False),
        (None, False),
        ("https://evil.example/", False),
        ("//evil.example", False),
        ("/\\evil.example", False),
        ("\\\\evil", False),
        ("/ok\r\nSet-Cookie: x", False),
        ("javascript:alert(1)", False),
    ],
)
def test_is_safe_next(target, ok) -> None:
    assert is_safe_next(target) is ok


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.0, "2"),
        (-3, "-3"),
        (0.123456, "0.1235"),
        (1e-13, "0"),
        (2.5e-7, "2.5e-7"),
        (float("nan"), "NaN"),
        (1234567.0, "1234567"),
    ],
)
def test_format_number(value, text) -> None:
    assert page.format_number(value) == text


def test_value_latex_of_vector_and_matrix() -> None:
    assert page.value_latex(np.array([1.0, 0.5])) == ("\\begin{pmatrix} 1 \\\\ 0.5 \\end{pmatrix}")
    assert page.value_latex([[1, 2], [3, 4]]) == (
        "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}"
    )


def test_heatmap_colours_follow_the_weights() -> None:
    w = np.array([[0.0, 1.0], [0.25, 0.75]])
    svg = str(page.heatmap_svg(w, ["q1", "q2"], ["k1", "k2"]))
    fills = [f for f in __import__("re").findall(r'<rect [^>]*fill="(#[0-9a-f]{6})"', svg)]
    assert fills[0] == "#ffffff" and fills[1] == "#1746a0"  # 0 -> white, 1 -> full blue
    # Darker (smaller sum of RGB) for larger weights.
    lum = [sum(int(f[i : i + 2], 16) for i in (1, 3, 5)) for f in fills]
    assert lum[0] > lum[2] > lum[3] > lum[1]
    assert "<title>" in svg and "q1" in svg and "k2" in svg and "style=" not in svg
    assert str(page.heatmap_svg(np.zeros((2, 2, 2)))) == ""
