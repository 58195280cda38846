"""docs/deploying.md: every command it shows exists with the options it shows, and its figures
are the code's (deadlines, limits, sample size)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click

from quizapp.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "deploying.md"


def _shell_lines() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def _command(words: list[str]) -> tuple[click.Command, list[str]]:
    command: click.Command = main
    rest = list(words)
    while isinstance(command, click.Group) and rest and rest[0] in command.commands:
        command = command.commands[rest.pop(0)]
    return command, rest


def test_every_quizapp_command_shown_exists_with_its_options() -> None:
    lines = [line for line in _shell_lines() if line.startswith("quizapp ")]
    assert len(lines) >= 6
    for line in lines:
        words = shlex.split(line, comments=True)[1:]
        command, rest = _command(words)
        assert command is not main, line
        known = {opt: param for param in command.params for opt in param.opts}
        arguments = [p for p in command.params if isinstance(p, click.Argument)]
        positional = 0
        given = iter(rest)
        for word in given:
            if word.startswith("--"):
                option = known.get(word.split("=")[0])
                assert isinstance(option, click.Option), (line, word)
                if not option.is_flag and "=" not in word:
                    next(given, None)  # the option's value
            elif not re.fullmatch(r"\d+(\.\d+)?", word):
                positional += 1
        assert positional <= len(arguments), line
        ctx = command.make_context(command.name, rest, parent=click.Context(main))
        assert ctx is not None


def test_the_measuring_script_shown_takes_the_options_shown() -> None:
    (line,) = [line for line in _shell_lines() if "slow_clients.py" in line]
    source = (DOC.parent.parent / "tests" / "slow_clients.py").read_text()
    for option in re.findall(r"--[a-z-]+", line):
        assert f'"{option}"' in source, option


def test_the_figures_in_the_page_are_the_codes(tmp_path: Path) -> None:
    from quizapp.bank.check import SAMPLE_SEEDS
    from quizapp.bank.expression import MAX_EXPONENT
    from quizapp.bank.schema import MAX_HINT_CHARS, MAX_HINTS, MAX_PROMPT_CHARS
    from quizapp.cli.buffering import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_HEADER_BYTES
    from quizapp.config import build_config

    text = DOC.read_text(encoding="utf-8")
    assert f"| {HEADER_TIMEOUT:g} s | `--header-timeout`" in text
    assert f"| {BODY_TIMEOUT:g} s | `--body-timeout`" in text
    assert f"| {MAX_HEADER_BYTES // 1024} KiB |" in text
    assert f"samples {SAMPLE_SEEDS} seeds" in text
    assert f"{MAX_HINTS} hints of {MAX_HINT_CHARS:,}" in text
    assert f"a prompt of {MAX_PROMPT_CHARS:,}" in text and f"exponents of {MAX_EXPONENT}" in text
    cfg = build_config(tmp_path, {"SECRET_KEY": "x", "QUIZAPP_SEED_SECRET": "y"})
    assert cfg["QUIZAPP_LIMIT_LOGIN_ACCOUNT"] == "20 per 15 minutes"
    assert cfg["QUIZAPP_LIMIT_LOGIN"] == "60 per minute"
    assert cfg["QUIZAPP_LIMIT_LOGIN_FAILURES"] == "10 per 15 minutes"
