"""Bad bytes and recursive aliases are reported at their line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizapp.bank.loader import load_bank, load_exercise_file, load_exercise_source
from quizapp.bank.yamlio import BankError


def _write(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "q" / "x.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def test_nul_byte_has_line_and_column(tmp_path: Path) -> None:
    p = _write(tmp_path, b'title: A\nkind: softmax\nprompt: "x\x00y"\n')
    _, errors = load_exercise_file(p)
    assert [(e.line, e.column) for e in errors] == [(3, 11)]
    assert "NUL byte" in errors[0].message


def test_latin1_byte_has_line_and_column(tmp_path: Path) -> None:
    p = _write(tmp_path, 'title: A\nkind: softmax\nprompt: "café"\n'.encode("latin-1"))
    _, errors = load_exercise_file(p)
    assert [(e.line, e.column) for e in errors] == [(3, 13)]
    assert "0xe9 is not UTF-8" in errors[0].message


def test_latin1_column_counts_characters_before_it(tmp_path: Path) -> None:
    # "é" (2 bytes in UTF-8) before the bad byte counts as one column.
    p = _write(tmp_path, "title: é\xe9\n".encode().replace(b"\xc3\xa9\n", b"\xe9\n", 1))
    _, errors = load_exercise_file(p)
    assert (errors[0].line, errors[0].column) == (1, 9)


def test_latin1_quiz_yaml(tmp_path: Path) -> None:
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "quiz.yaml").write_bytes("title: Qé\n".encode("latin-1"))
    bank = load_bank(tmp_path)
    assert any(e.line == 1 and e.column == 9 and "not UTF-8" in e.message for e in bank.errors)


def test_recursive_alias_is_named_at_its_anchor() -> None:
    with pytest.raises(BankError) as info:
        load_exercise_source("q/x", "title: C\nkind: softmax\nprompt: &a [*a]\n")
    assert (info.value.line, info.value.column) == (3, 9)
    assert "recursive alias" in info.value.message


def test_shared_alias_that_is_not_recursive_still_works(tmp_path: Path) -> None:
    src = (
        "title: C\nkind: softmax\nprompt: Softmax of $z$.\nconcepts: &c [softmax_vector]\n"
        "hints: [a, b]\n"
    )
    assert load_exercise_source("q/x", src).spec.concepts == ["softmax_vector"]
