"""Shared fixtures.  Tests that read ``../shared/`` skip cleanly when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``../shared`` folder beside the repository; skips the test when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is not present (only CI and developers have it)")
    return SHARED
