"""The default bank covers every concept of the course (issue 3): each concept id in
``quizapp/bank/concepts.py`` is listed by at least one exercise in ``exercises/``."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from quizapp.bank.concepts import CONCEPTS, concept_ids, get_concept

REPO = Path(__file__).resolve().parent.parent
EXERCISES = REPO / "exercises"


def exercise_files() -> dict[str, dict]:
    out = {}
    for f in sorted(EXERCISES.glob("*/*.yaml")):
        if f.name != "quiz.yaml":
            out[f"{f.parent.name}/{f.stem}"] = yaml.safe_load(f.read_text(encoding="utf-8"))
    return out


def test_every_concept_has_an_exercise() -> None:
    covered: dict[str, list[str]] = {c: [] for c in concept_ids()}
    for ex_id, data in exercise_files().items():
        for c in data.get("concepts") or []:
            covered.setdefault(c, []).append(ex_id)
    missing = [c for c, ids in covered.items() if not ids]
    assert not missing, f"concepts without an exercise: {missing}"


def test_exercises_list_only_known_concepts() -> None:
    for ex_id, data in exercise_files().items():
        assert data.get("concepts"), f"{ex_id} lists no concepts"
        for c in data["concepts"]:
            assert c in CONCEPTS, f"{ex_id}: unknown concept {c!r}"


def test_the_issue_list_is_covered_by_concept_ids() -> None:
    # the concepts issue 3 names, in its order
    assert concept_ids()[:3] == [
        "one_equation_one_unknown",
        "one_equation_two_unknowns",
        "two_equations_two_unknowns",
    ]
    # 23 from the issue, plus token_embeddings (embeddings as rows of a matrix, a deck gap),
    # plus the 13 ideas of the second edition (issue 16)
    assert len(concept_ids()) == len(set(concept_ids())) == 37
    assert "token_embeddings" in concept_ids()
    assert get_concept("scaling_by_sqrt_d").title == "Scaling by √d"


def test_the_bank_loads_without_errors_and_covers_every_concept() -> None:
    """Through the real loader."""
    from quizapp.bank import load_bank

    bank = load_bank(EXERCISES)
    assert bank.errors == [], [str(e) for e in bank.errors]
    listed = {c for ex in bank.exercises.values() for c in (ex.spec.concepts or [])}
    assert set(concept_ids()) <= listed
    for ex in bank.exercises.values():
        ex.generate(1)


def test_quiz_folders_in_course_order() -> None:
    folders = sorted(p for p in EXERCISES.iterdir() if p.is_dir())
    orders = [yaml.safe_load((p / "quiz.yaml").read_text())["order"] for p in folders]
    assert orders == sorted(orders) == list(range(1, len(folders) + 1))


def test_the_decks_example_is_in_the_bank() -> None:
    deck = [
        d
        for d in exercise_files().values()
        if (d.get("params") or {}).get("fixed") == {"A": [[5, 1], [3, 2]], "y": [15, 16]}
    ]
    assert deck, "the deck's 5x + y = 15, 3x + 2y = 16 must be an exercise"


COURSE_MAP = REPO / "docs" / "course.md"


def test_every_concept_and_exercise_is_in_the_course_map() -> None:
    """Each concept id of concepts.py has a line in the course map, at the quiz that introduces
    it; every bundled exercise appears there too; and every exercise's concepts exist."""
    text = COURSE_MAP.read_text(encoding="utf-8")
    course_map = text.split("## Course map", 1)[1].split("\n## ", 1)[0]
    lines = {
        c: [ln for ln in course_map.splitlines() if ln.startswith(f"- `{c}`")] for c in CONCEPTS
    }
    assert [c for c, found in lines.items() if len(found) != 1] == []
    for ex_id, data in exercise_files().items():
        assert f"`{ex_id.split('/', 1)[1]}`" in course_map, f"{ex_id} is not in the course map"
        for c in data.get("concepts") or []:
            assert c in CONCEPTS, f"{ex_id}: unknown concept {c!r}"
    # the quizzes in the deck's order
    quizzes = [
        course_map.index(f"Quiz `{q.name}`") for q in sorted(EXERCISES.iterdir()) if q.is_dir()
    ]
    assert quizzes == sorted(quizzes)


def test_the_second_edition_adds_the_exercises_it_promises() -> None:
    """At least 20 new exercises, at least 12 of them conceptual (a choice or a position, or a
    computation whose prompt asks for a prediction first), every one with named mistakes."""
    from quizapp.bank import load_bank

    first = {p.stem for p in (REPO / "tests" / "golden" / "bank").glob("*/*.yaml")}
    bank = load_bank(EXERCISES)
    # The step-by-step (multi-part) versions of first-edition exercises, numbered like 06a-,
    # are not this edition's (docs/multi-part.md): their parts name mistakes through their
    # detectors, if at all.  A "predict, then compute" exercise asks its prediction as a part.
    new = [
        ex
        for ex in bank.exercises.values()
        if ex.id.split("/", 1)[1] not in first
        and not (ex.generate(0).parts and re.match(r"\d+a-", ex.id.split("/", 1)[1]))
    ]
    assert len(new) >= 20
    conceptual = []
    for ex in new:
        v = ex.generate(0)
        named = v.detectors or v.context.get("choice_mistakes") or v.context.get("index_mistakes")
        named = named or any(p.detectors for p in v.parts)
        assert named, f"{ex.id} names no mistake"
        assert v.solution, ex.id
        prompts = " ".join([v.prompt, *(p.prompt for p in v.parts)]).lower()
        if v.answer_form.type in ("choice", "index") or "predict" in prompts:
            conceptual.append(ex.id)
    assert len(conceptual) >= 12, conceptual
