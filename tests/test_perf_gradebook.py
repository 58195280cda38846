"""The streamed gradebook CSV (``iter_gradebook_csv``, used by the download and
``quizapp export-grades``) is the same text as the in-memory one, whose values
``tests/test_instructor.py`` checks against the stored submissions."""

from __future__ import annotations

import pytest
from test_instructor import Q1, Q3, TWO, _class, app  # noqa: F401  (fixture)

from quizapp import instructor as inst
from quizapp import services
from quizapp.models import db


@pytest.mark.parametrize("quiz", [None, Q1, Q3])
def test_streamed_gradebook_csv_equals_the_in_memory_one(app, quiz) -> None:  # noqa: F811
    ids = _class(app)
    config = inst.parse_course_config(f"weights:\n  {Q1}: 30\n  {Q3}: 70\n")
    with app.app_context():
        inst.excuse(db.session, ids["cleo"], TWO, reason="ill")
        expected = inst.gradebook_csv(inst.gradebook(db.session, quiz_id=quiz, config=config))
        lines = list(inst.iter_gradebook_csv(db.session, quiz_id=quiz, config=config))
    assert len(lines) == 1 + 4  # header + ana, ben, cleo, dan (dan never answered)
    assert all(line.endswith("\r\n") and line.count("\r\n") == 1 for line in lines)
    assert "".join(lines) == expected
    if quiz != Q3:  # cleo (third row) is excused from TWO, a Q1 exercise
        assert ",EX," in lines[3]


def test_streamed_gradebook_rejects_an_unknown_quiz_before_any_line(app) -> None:  # noqa: F811
    with app.app_context(), pytest.raises(services.NotFound):
        inst.iter_gradebook_csv(db.session, quiz_id="no-such-quiz")
