"""Found by the HTTP benchmark (issue 7): the first requests of a gthread worker ask for kinds from
several threads at once; every thread must see the whole kind registry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import threading
from quizapp.bank.kinds import get_kind
barrier = threading.Barrier(8)
errors = []
def ask():
    barrier.wait()
    try:
        get_kind("linear_system")
        get_kind("multi_head_attention")
    except KeyError as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=ask) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(errors))
"""


def test_kinds_registry_complete_for_concurrent_first_use() -> None:
    for _ in range(3):  # a fresh interpreter each time: the registry starts empty
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        assert out.stdout.strip() == "0", out.stdout + out.stderr
