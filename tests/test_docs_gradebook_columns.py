"""docs/instructor-guide.md names the gradebook CSV's columns as the export writes them: an
exercise's column with its id, title and points (its example is a bundled exercise's header),
and after the course total the late-credit and overrides notes."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from quizapp.bank import load_bank
from quizapp.instructor.gradebook_export import (
    LATE_COLUMN,
    OVERRIDES_COLUMN,
    _header,
    exercise_column,
)

ROOT = Path(__file__).resolve().parent.parent
GUIDE = " ".join((ROOT / "docs" / "instructor-guide.md").read_text(encoding="utf-8").split())


def test_the_guides_column_example_is_the_exports_header_of_that_exercise() -> None:
    example = re.search(r"headed `<exercise id> <title> \(<points>\)` \(e\.g\. `([^`]+)`\)", GUIDE)
    assert example is not None
    ex_id = example.group(1).split(" ")[0]
    spec = load_bank(ROOT / "exercises").exercises[ex_id].spec
    row = SimpleNamespace(id=ex_id, title=spec.title, points=spec.points)
    assert exercise_column(row) == example.group(1)


def test_the_guide_lists_the_columns_after_the_course_total_in_order() -> None:
    quiz = SimpleNamespace(id="q", points=10.0, exercises=[])
    tail = _header([quiz])[-3:]
    assert tail == ["course total %", LATE_COLUMN, OVERRIDES_COLUMN]
    said = GUIDE.index("then `course total %`, `late credit`")
    assert GUIDE.index("`overrides`", said) > said
