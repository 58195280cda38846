"""``services.grid_text``: the one way a grid answer is written as text (the submissions tables,
a multi-part answer's parts, the error page's typed answer), and what it writes is read back by
the answer parser as the same grid."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from quizapp import services
from quizapp.grading import parse_answer
from quizapp.web import display, parts_view


@pytest.mark.parametrize("one_line", [False, True])
def test_a_grid_written_as_text_parses_back_to_the_same_numbers(one_line: bool) -> None:
    grid = [["1", "-2.5"], ["3/4", "1e-3"]]
    text = services.grid_text(grid, one_line=one_line)
    assert text == ("[1, -2.5; 3/4, 1e-3]" if one_line else "1  -2.5\n3/4  1e-3")
    np.testing.assert_allclose(parse_answer(text), [[1, -2.5], [0.75, 0.001]])


def test_every_view_of_a_grid_answer_uses_it() -> None:
    grid = [["1", "2"], ["3", "4"]]
    assert display.answer_text(SimpleNamespace(type="matrix"), grid) == "1  2\n3  4"
    assert parts_view.answer_text({"S": grid, "k": "7"}) == "S: [1, 2; 3, 4]\nk: 7"
    typed = display.typed_answer(
        {"via": "cells", "cell-0-0": "1", "cell-0-1": "2", "cell-1-0": "", "cell-1-1": "4"}
    )
    assert typed == [("", "[1, 2; ?, 4]")]
