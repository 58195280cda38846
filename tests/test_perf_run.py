"""``python benchmarks/run.py --quick`` runs every section end to end and prints the table
(timings are not asserted: the machine is shared and noisy)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.run import SECTIONS  # noqa: E402


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk (the HTTP load generator) is absent")
def test_run_quick(tmp_path: Path) -> None:
    out = tmp_path / "BENCH.md"
    env = dict(os.environ)
    cmd = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--out", str(out)]
    postgres = os.environ.get("QUIZAPP_TEST_POSTGRES_URL")
    if postgres:  # the PostgreSQL figures run on the tests' database, in a schema of their own
        env["QUIZAPP_BENCH_POSTGRES_URL"] = postgres
    else:
        cmd += ["--only", ",".join(s for s in SECTIONS if s != "http_pg")]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for figure in (
        "grade(): 4x4 matrix, text with fractions",
        "generate + render: linear_system",
        "submit share of bare-route throughput",
        "submit latency p99",
        "server CPU per submit",
        "submit CPU in SQL (SQLAlchemy, driver, write lock)",
        "class of 40: errors",
        "class of 40: submit p99",
        "scoreboard HTTP page",
        "gradebook CSV HTTP download",
        "peak RSS of a gunicorn worker",
        "validate + sync of",
        "quizapp check throughput",
    ):
        assert figure in proc.stdout, figure
    if postgres:
        assert "PostgreSQL, 4 workers: submit latency p99" in proc.stdout
    text = out.read_text()
    assert "## Machine" in text and "| figure | target | measured" in text
