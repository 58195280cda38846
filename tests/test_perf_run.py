"""``python benchmarks/run.py --quick`` runs every section end to end and prints the table
(timings are not asserted: the machine is shared and noisy)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk (the HTTP load generator) is absent")
def test_run_quick(tmp_path: Path) -> None:
    out = tmp_path / "BENCH.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for figure in (
        "grade(): 4x4 matrix, text with fractions",
        "generate + render: linear_system",
        "submit share of bare-route throughput",
        "submit latency p99",
        "scoreboard HTTP page",
        "gradebook CSV HTTP download",
        "peak RSS of a gunicorn worker",
        "validate + sync of",
        "quizapp check throughput",
    ):
        assert figure in proc.stdout, figure
    text = out.read_text()
    assert "## Machine" in text and "| figure | target | measured" in text
