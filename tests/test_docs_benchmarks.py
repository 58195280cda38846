"""docs/benchmarks.md: every command of its ``sh`` blocks is one the scripts accept (run.py's
options and sections, the modules' own arguments), and the sections it lists are run.py's."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import run as run_module  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"


def _commands() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    lines = [
        line.split("#", 1)[0].strip()
        for block in re.findall(r"```sh\n(.*?)```", text, re.S)
        for line in block.splitlines()
    ]
    return [shlex.split(line) for line in lines if line]


def test_the_page_lists_run_py_s_sections() -> None:
    listed = re.search(r"Sections \(`--only`\): (.*?)\. Each", DOC.read_text(), re.S)
    assert listed is not None
    names = re.findall(r"`([a-z_]+)`", listed.group(1))
    assert names == list(run_module.SECTIONS)


@pytest.mark.parametrize("command", _commands(), ids=" ".join)
def test_each_command_is_accepted(command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The arguments parse as the page says (the scripts are not run: that takes minutes;
    tests/test_perf_run.py and tests/test_perf_benchmarks.py run them)."""
    assert command[0] == "python"
    if command[1] == "benchmarks/run.py":
        args = run_module.build_parser().parse_args(command[2:])
        only = [s for s in args.only.split(",") if s]
        assert set(only) <= set(run_module.SECTIONS), only
    else:
        assert command[1] == "-m"
        module = __import__(command[2], fromlist=["main"])
        assert callable(module.main)
        if command[2] == "benchmarks.profile_submit":
            seen = {}
            monkeypatch.setattr(module, "profile", lambda n, html_dir=None: seen.update(
                n=n, html=html_dir) or {})  # fmt: skip
            monkeypatch.setattr(module, "report", lambda profiles: "")
            module.main(command[3:])
            assert seen["n"] == 300 and seen["html"] == Path("/tmp/profile")
        elif command[2] == "benchmarks.bench_classroom":
            assert command[3:] and command[3].isdigit()
