"""docs/type-checking.md is true: the commands it shows are the ones ``.ci/run`` runs, in that
order; the modules it names as untyped are exactly those ``pyproject.toml`` lets mypy skip; and
every ``# type: ignore`` in the package names its error code and says why on the same line."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "type-checking.md").read_text(encoding="utf-8")


def _sh_commands(text: str) -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_documented_checks_are_what_ci_runs_in_that_order() -> None:
    commands = _sh_commands(DOC)
    assert commands == ["ruff check .", "ruff format --check .", "mypy quizapp"]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    at = [ci.index(c) for c in commands]
    assert at == sorted(at) and at[-1] - at[0] == len(commands) - 1  # one after the other


def test_only_the_documented_untyped_modules_skip_type_checking() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert "ignore_missing_imports" not in config  # never globally
    skipped = {
        m.removesuffix(".*")
        for o in config.get("overrides", [])
        if o.get("ignore_missing_imports")
        for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])
    }
    section = DOC.split("## Configuration")[1]
    sentence = section[section.index("ignore_missing_imports") :].split(").")[0]
    documented = set(re.findall(r"`([\w.]+)`", sentence)) - {"ignore_missing_imports"}
    assert skipped == documented == {"flask_login", "flask_wtf", "flask_migrate.cli"}
    assert config["python_version"] == "3.11" and config["warn_unused_ignores"] is True


def test_every_type_ignore_names_its_code_and_says_why() -> None:
    bare = []
    for path in sorted((ROOT / "quizapp").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "type: ignore" in line and not re.search(
                r"# type: ignore\[[a-z-]+(, ?[a-z-]+)*\]  # \S", line
            ):
                bare.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert bare == []
