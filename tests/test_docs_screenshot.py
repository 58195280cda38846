"""``docs/screenshot.py`` still takes the README's screenshot, and the committed one is its."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "docs" / "screenshot.py"

pytestmark = pytest.mark.browser


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_script_takes_the_screenshot_the_readme_shows(tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    taken = out.read_bytes()
    committed = (REPO / "docs" / "screenshot.png").read_bytes()
    assert _png_size(taken) == _png_size(committed) == (960, 1000)
    assert len(taken) > 30_000  # a page, not a blank image
