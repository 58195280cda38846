"""Where the folders kept at the top of the repository are: ``migrations/`` and ``exercises/``.

The repository keeps them beside the ``quizapp`` package (the project's layout names them); the
wheel ships them inside it, as ``quizapp/migrations`` and ``quizapp/exercises`` (``pyproject.toml``
maps the folders into the package with setuptools' ``package-dir``).  So a source checkout (an
editable install, or ``PYTHONPATH`` pointing at the clone) finds them one level up, and an
installed wheel (``pip install .``, ``pipx install .``) finds them inside the package.
"""

from __future__ import annotations

from pathlib import Path

#: The ``quizapp`` package folder.
PACKAGE_DIR = Path(__file__).resolve().parent

#: The top-level folders the wheel ships inside the package.
BUNDLED_FOLDERS = ("migrations", "exercises")


def bundled_folder(name: str) -> Path | None:
    """The folder ``name`` (one of :data:`BUNDLED_FOLDERS`): ``quizapp/<name>`` in an installed
    wheel, else ``<checkout>/<name>`` beside the package; ``None`` when neither exists.

    Raises ``ValueError`` for a name that is not one of :data:`BUNDLED_FOLDERS`.
    """
    if name not in BUNDLED_FOLDERS:
        raise ValueError(f"{name!r} is not a bundled folder ({', '.join(BUNDLED_FOLDERS)})")
    for candidate in (PACKAGE_DIR / name, PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    return None


def migrations_dir() -> Path:
    """The Alembic history (Flask-Migrate layout).

    Raises ``RuntimeError`` when the installation has none (a wheel built without it): the
    database cannot be created or upgraded then.
    """
    found = bundled_folder("migrations")
    if found is None:
        raise RuntimeError(
            f"quizapp has no migrations folder (looked in {PACKAGE_DIR / 'migrations'} and "
            f"{PACKAGE_DIR.parent / 'migrations'}): reinstall the package from a complete wheel"
        )
    return found
