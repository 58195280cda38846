"""Roster CSV import: every problem of every line is reported at once; names with control, bidi
or invisible characters and usernames a spreadsheet would read as formulas are refused."""

from __future__ import annotations

import pytest

from quizapp.instructor.roster import RosterError, parse_roster_csv


def _problems(text: str) -> list[str]:
    with pytest.raises(RosterError) as info:
        parse_roster_csv(text)
    return list(info.value.problems)


def test_every_problem_of_every_line_is_reported() -> None:
    text = (
        "username,name,email\n"
        "ok1,Ana,ana@example.org\n"
        "bad name,Ben\u202eevil,not-an-email\n"  # three problems on one line
        "-carl,Carl\x00,carl@example.org\n"  # two
        "OK1,Dora,dora@example.org,extra\n"  # duplicate and an extra column
    )
    problems = _problems(text)
    by_line: dict[int, list[str]] = {}
    for p in problems:
        number, _, message = p.partition(": ")
        by_line.setdefault(int(number.removeprefix("line ")), []).append(message)
    assert sorted(by_line) == [3, 4, 5]
    assert len(by_line[3]) == 3
    assert any("letters, digits" in m for m in by_line[3])
    assert any("not an e-mail address" in m for m in by_line[3])
    assert any("U+202E" in m for m in by_line[3])
    assert len(by_line[4]) == 2
    assert any("may not start with '-'" in m for m in by_line[4])
    assert any("control character (U+0000" in m for m in by_line[4])
    assert len(by_line[5]) == 2
    assert any("already on line 2" in m for m in by_line[5])
    assert any("columns, expected at most 3" in m for m in by_line[5])


def test_a_clean_roster_parses() -> None:
    entries = parse_roster_csv("username,name,email\nana,Ana Álves,ana@example.org\nben,,\n")
    assert [(e.username, e.display_name, e.email) for e in entries] == [
        ("ana", "Ana Álves", "ana@example.org"),
        ("ben", "", ""),
    ]
