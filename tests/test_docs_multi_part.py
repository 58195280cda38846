"""docs/multi-part.md is true: its YAML example is the bundled exercise as it is, and every
command it shows prints what the page says (run here with the bundled bank)."""

from __future__ import annotations

import json
import shlex

from click.testing import CliRunner
from test_web_support import EXERCISES

from quizapp.cli import main

DOC = EXERCISES.parent / "docs" / "multi-part.md"
EXAMPLE = EXERCISES / "05-attention" / "01a-weights-step-by-step.yaml"


def _blocks(language: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return [b.split("```", 1)[0] for b in text.split(f"```{language}\n")[1:]]


def test_the_yaml_example_is_the_bundled_exercise() -> None:
    (yaml_block,) = _blocks("yaml")
    assert yaml_block == EXAMPLE.read_text(encoding="utf-8")


def test_every_command_prints_what_the_page_shows() -> None:
    blocks = _blocks("console")
    assert len(blocks) == 2
    for block in blocks:
        command, *shown = block.rstrip("\n").split("\n")
        assert command.startswith("$ quizapp grade ")
        args = shlex.split(command[len("$ quizapp ") :])
        result = CliRunner().invoke(main, [*args, "--bank", str(EXERCISES)])
        assert result.exit_code == 0, result.output
        if "--json" in args:
            assert json.loads(result.output) == json.loads("\n".join(shown))
        else:
            assert result.output.rstrip("\n").split("\n") == shown


def test_the_readme_links_the_page() -> None:
    readme = (EXERCISES.parent / "README.md").read_text(encoding="utf-8")
    assert "(docs/multi-part.md)" in readme
