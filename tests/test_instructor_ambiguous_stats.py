"""The instructor's mistake statistics show how many of a code's answers were ambiguous (another
named mistake gave the same answer on that student's variant)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_instructor_support import add_user, bank_app, submit, variant_values

from quizapp import instructor as inst
from quizapp.models import db

# Variants whose named mistakes coincide, as stored ones may (new ones are drawn again).
pytestmark = pytest.mark.usefixtures("no_redraws")


BA = "03-transpose-and-products/09-ba-given-ab"


@pytest.fixture()
def app(tmp_path: Path):
    return bank_app(tmp_path)


def _matrix(a: np.ndarray) -> str:
    return "\n".join(" ".join(repr(float(x)) for x in row) for row in a)


def test_statistics_count_ambiguous_answers_apart(app) -> None:
    symmetric = plain = None  # a student whose AB is symmetric, one whose AB is not
    for i in range(200):
        name = f"s{i}"
        add_user(app, name)
        values = variant_values(app, name, BA)
        ab = np.asarray(values["A"], dtype=float) @ np.asarray(values["B"], dtype=float)
        ba = np.asarray(values["B"], dtype=float) @ np.asarray(values["A"], dtype=float)
        if np.allclose(ab, ba):
            continue
        if np.allclose(ab, ab.T) and symmetric is None:
            symmetric = (name, ab)
        elif not np.allclose(ab, ab.T) and plain is None:
            plain = (name, ab)
        if symmetric and plain:
            break
    assert symmetric is not None and plain is not None
    one = submit(app, symmetric[0], BA, _matrix(symmetric[1]))  # AB = (AB)^T: either slip
    two = submit(app, plain[0], BA, _matrix(plain[1]))  # AB only
    assert one.verdict["mistakes"] == ["wrong_order", "ab_transposed"]
    assert one.verdict["ambiguous_mistakes"] == ["wrong_order", "ab_transposed"]
    [told] = one.verdict["mistake_messages"][:1]
    assert told.startswith("Your answer is what either of these slips gives: ")
    assert one.verdict["mistake_messages"] == [told, told]  # one per code, as the API says
    assert two.verdict["mistakes"] == ["wrong_order"] and "ambiguous_mistakes" not in two.verdict
    with app.app_context():
        st = inst.exercise_statistics(db.session, BA)
    assert dict(st.mistakes) == {"wrong_order": 2, "ab_transposed": 1}
    assert st.ambiguous_mistakes == {"wrong_order": 1, "ab_transposed": 1}
