"""quiz.yaml checks: duplicate and missing entries in exercises:, shared orders, dates."""

from __future__ import annotations

from pathlib import Path

from quizapp.bank.loader import load_bank

EXERCISE = "title: E\nkind: softmax\ntolerance: {decdig: 2}\nprompt: Softmax of $z$, to 2 decimal places.\n"


def _bank(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def _errors(root: Path) -> list[tuple[str, int | None, int | None, str]]:
    return [(Path(e.file).name, e.line, e.column, e.message) for e in load_bank(root).errors]


def test_duplicate_entry_is_an_error_at_its_line(tmp_path: Path) -> None:
    root = _bank(
        tmp_path,
        {
            "q/quiz.yaml": "title: Q\nexercises:\n  - a\n  - b\n  - a\n",
            "q/a.yaml": EXERCISE,
            "q/b.yaml": EXERCISE,
        },
    )
    assert _errors(root) == [("quiz.yaml", 5, 5, "exercises: a is listed twice (first at line 3)")]
    assert load_bank(root).quizzes["q"].exercise_ids == ["q/a", "q/b"]


def test_unlisted_file_is_an_error(tmp_path: Path) -> None:
    root = _bank(
        tmp_path,
        {
            "q/quiz.yaml": "title: Q\nexercises: [b]\n",
            "q/a.yaml": EXERCISE,
            "q/b.yaml": EXERCISE,
        },
    )
    errors = _errors(root)
    assert [(f, line) for f, line, _, _ in errors] == [("quiz.yaml", 2)]
    assert "a.yaml is in q/ but not listed" in errors[0][3]


def test_two_quizzes_with_the_same_order(tmp_path: Path) -> None:
    root = _bank(
        tmp_path,
        {
            "p/quiz.yaml": "title: P\norder: 2\n",
            "p/a.yaml": EXERCISE,
            "q/quiz.yaml": "title: Q\ndescription: d\norder: 2\n",
            "q/a.yaml": EXERCISE,
        },
    )
    assert _errors(root) == [
        ("quiz.yaml", 3, 8, "order 2 is also the order of quiz 'p': give each quiz its own order")
    ]


def test_quizzes_without_order_are_fine(tmp_path: Path) -> None:
    root = _bank(
        tmp_path,
        {
            "p/quiz.yaml": "title: P\n",
            "p/a.yaml": EXERCISE,
            "q/quiz.yaml": "title: Q\n",
            "q/a.yaml": EXERCISE,
        },
    )
    assert _errors(root) == []


def test_closes_before_opens_is_at_closes_and_other_errors_still_show(tmp_path: Path) -> None:
    root = _bank(
        tmp_path,
        {
            "q/quiz.yaml": "title: Q\nopens: 2026-03-01 09:00\ncloses: 2026-02-01\ndescrption: x\n",
            "q/a.yaml": EXERCISE,
        },
    )
    errors = _errors(root)
    assert [(line, col) for _, line, col, _ in errors] == [(3, 9), (4, 1)]
    assert "must be after opens" in errors[0][3]
    assert "unknown key 'descrption'" in errors[1][3]
