"""``docs/course-map.md`` is the course map of the bundled bank as ``docs/course_map.py`` writes it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from quizapp.bank import load_bank

REPO = Path(__file__).resolve().parent.parent


def _course_map():
    spec = importlib.util.spec_from_file_location("course_map", REPO / "docs" / "course_map.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_course_map_is_up_to_date() -> None:
    expected = _course_map().render(REPO / "exercises")
    page = (REPO / "docs" / "course-map.md").read_text(encoding="utf-8")
    assert page == expected, "docs/course-map.md is out of date: run python docs/course_map.py"


def test_the_course_map_lists_every_exercise_once() -> None:
    page = (REPO / "docs" / "course-map.md").read_text(encoding="utf-8")
    bank = load_bank(REPO / "exercises")
    for exercise_id in bank.exercises:
        quiz, stem = exercise_id.split("/", 1)
        assert page.count(f"| `{stem}` |") >= 1, exercise_id
        assert f"Quiz `{quiz}`" in page
    assert page.count("\n| `") == len(bank.exercises) + len(_course_map_concepts())


def _course_map_concepts() -> list[str]:
    from quizapp.bank.concepts import CONCEPTS

    return list(CONCEPTS)
