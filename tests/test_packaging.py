"""The package installs: the wheel ships migrations, the course, py.typed and the LICENSE, and an
installed wheel serves from an empty folder (``.ci/wheel_smoke.py``)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from quizapp.resources import BUNDLED_FOLDERS, bundled_folder, migrations_dir

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_every_package_folder_of_quizapp_is_listed_for_the_wheel() -> None:
    """``[tool.setuptools] packages`` is an explicit list (it also maps migrations/ and
    exercises/ into the package), so a new subpackage must be added to it."""
    folders = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "quizapp").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    listed = set(SETUPTOOLS["packages"])
    assert folders - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    mapped = {f"quizapp.{name}" for name in BUNDLED_FOLDERS}
    assert listed - folders == mapped | {"quizapp.migrations.versions"}


def test_the_top_level_folders_are_mapped_into_the_package() -> None:
    assert SETUPTOOLS["package-dir"] == {f"quizapp.{n}": n for n in BUNDLED_FOLDERS}
    data = SETUPTOOLS["package-data"]
    assert "py.typed" in data["quizapp"] and (REPO / "quizapp" / "py.typed").is_file()
    # every non-Python file of migrations/ is listed, every file of exercises/ is YAML
    migration_data = {
        p.name for p in (REPO / "migrations").iterdir() if p.is_file() and p.suffix != ".py"
    }
    assert migration_data == set(data["quizapp.migrations"])
    assert data["quizapp.exercises"] == ["**/*.yaml"]
    assert {p.suffix for p in (REPO / "exercises").rglob("*") if p.is_file()} == {".yaml"}


def test_the_license_is_the_mit_license_the_metadata_declares() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text


def test_a_checkout_finds_its_folders_beside_the_package() -> None:
    assert bundled_folder("migrations") == migrations_dir() == REPO / "migrations"
    assert bundled_folder("exercises") == REPO / "exercises"
    with pytest.raises(ValueError, match="not a bundled folder"):
        bundled_folder("tests")


@pytest.mark.slow
def test_the_wheel_installs_and_serves_from_an_empty_folder() -> None:
    """Builds the wheel, installs it in a virtual environment (this interpreter's packages as
    the dependencies) and serves ``/login`` from an empty folder; ``.ci/run`` runs the same
    check with a fully fresh environment."""
    done = subprocess.run(
        [sys.executable, str(REPO / ".ci" / "wheel_smoke.py"), "--offline"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("wheel smoke check passed")
    assert "the wheel ships all" in done.stdout and "answers /login" in done.stdout
