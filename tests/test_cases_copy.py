"""``tests/cases/`` is an exact copy of the handed cases in ``../shared/cases/`` (when that folder
is beside the repository, as in CI: ``.ci/run`` requires it), so a clone without ``../shared``
runs the same cases."""

from __future__ import annotations

from pathlib import Path


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_the_copied_cases_equal_the_handed_ones(shared_dir: Path, cases_dir: Path) -> None:
    handed, copied = _files(shared_dir / "cases"), _files(cases_dir)
    assert sorted(copied) == sorted(handed), "tests/cases/ and ../shared/cases/ list other files"
    differ = [name for name in handed if copied[name] != handed[name]]
    assert differ == [], f"tests/cases/ differs from ../shared/cases/ in {differ}: copy them again"


def test_the_copies_hold_every_kind_of_case(cases_dir: Path) -> None:
    names = set(_files(cases_dir))
    assert {"grading.yaml", "bad-requests.md", "bad-yaml/expected.yaml"} <= names
    assert len([n for n in names if n.startswith("bad-yaml/")]) > 10
