"""BENCHMARKS.md keeps the latest figures on its front page and leaves the history of the passes to
benchmarks/HISTORY.md, exactly as ``benchmarks/run.py`` writes it (its notes: benchmarks/NOTES.md)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # benchmarks/ is not installed

from benchmarks.run import HISTORY_LINK, markdown  # noqa: E402

FRONT = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
NOTES = (REPO / "benchmarks" / "NOTES.md").read_text(encoding="utf-8")
HISTORY = (REPO / "benchmarks" / "HISTORY.md").read_text(encoding="utf-8")


def test_benchmarks_md_ends_as_run_py_writes_it() -> None:
    written = markdown([], {}, 0.0, False, {}, NOTES)
    tail = written.split("## What each figure measures\n", 1)[1].lstrip("\n")
    assert FRONT.endswith(tail)
    assert FRONT.rstrip().endswith(HISTORY_LINK)


def test_the_front_page_has_the_figures_and_not_the_history() -> None:
    for heading in ("## Machine", "## Results", "## Status of each target"):
        assert heading in FRONT
    assert "| figure | target | measured" in FRONT
    assert "## History" not in FRONT and "(branch perf" not in FRONT
    assert HISTORY.startswith("# Benchmark history\n") and "(branch perf2)" in HISTORY
    assert len(FRONT.encode()) < len(HISTORY.encode())
