"""Write ``docs/course-map.md``, the course map: the bundled quizzes and exercises, and the concepts.

Usage, from the repository root, after changing anything under ``exercises/``::

    python docs/course_map.py            # rewrites docs/course-map.md
    python docs/course_map.py --check    # exit 1 if docs/course-map.md is not up to date

``tests/test_docs_course.py`` fails while the committed page differs from what this writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "course-map.md"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(bank_root: Path) -> str:
    """The Markdown of the course map of the bank at ``bank_root``.

    Raises ``ValueError`` naming the problems when the bank does not load cleanly (a map of a
    broken bank would leave exercises out silently).
    """
    from quizapp.bank import load_bank
    from quizapp.bank.concepts import CONCEPTS

    bank = load_bank(bank_root)
    if bank.errors:
        raise ValueError("the bank has problems: " + "; ".join(str(e) for e in bank.errors))
    quizzes = bank.quiz_list()
    total_points = sum(ex.points for ex in bank.exercises.values())
    out = [
        "# The course",
        "",
        "The bundled bank (`exercises/`), quiz by quiz in the order students see them: "
        f"{len(quizzes)} quizzes, {len(bank.exercises)} exercises, {total_points} points. "
        "Written by `python docs/course_map.py` from the YAML files; how to write such files: "
        "[authoring.md](authoring.md).",
        "",
    ]
    covered: dict[str, list[str]] = {c: [] for c in CONCEPTS}
    for number, quiz in enumerate(quizzes, start=1):
        exercises = [bank.exercises[i] for i in quiz.exercise_ids if i in bank.exercises]
        points = sum(ex.points for ex in exercises)
        out += [f"## {number}. {quiz.title}", ""]
        if quiz.description.strip():
            out += [" ".join(quiz.description.split()), ""]
        out += [
            f"Quiz `{quiz.id}`: {len(exercises)} exercises, {points} points.",
            "",
            "| exercise | title | kind | points | concepts |",
            "|---|---|---|---|---|",
        ]
        for ex in exercises:
            concepts = list(ex.spec.concepts or [])
            for c in concepts:
                covered.setdefault(c, []).append(ex.id)
            out.append(
                f"| `{ex.id.split('/', 1)[1]}` | {_cell(ex.title)} | {ex.kind.name} | "
                f"{ex.points} | {', '.join(concepts)} |"
            )
        out.append("")
    out += [
        "## Concepts",
        "",
        "Each concept of the course (`quizapp/bank/concepts.py`) and the exercises that practise it.",
        "",
        "| concept | title | exercises |",
        "|---|---|---|",
    ]
    for concept_id, concept in CONCEPTS.items():
        where = ", ".join(f"`{i}`" for i in covered.get(concept_id, [])) or "none"
        out.append(f"| `{concept_id}` | {_cell(concept.title)} | {where} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the page is up to date")
    parser.add_argument("--bank", type=Path, default=REPO / "exercises")
    args = parser.parse_args(argv)
    text = render(args.bank)
    if args.check:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date: run python docs/course_map.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
