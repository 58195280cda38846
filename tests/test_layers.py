"""The pure layers (grading, bank, linalg) must not import Flask or a database library."""

from __future__ import annotations

import subprocess
import sys

import pytest

PURE = ["quizapp.grading", "quizapp.bank", "quizapp.linalg", "quizapp.render"]
FORBIDDEN = ["flask", "sqlalchemy", "flask_sqlalchemy", "werkzeug", "alembic", "psycopg"]


@pytest.mark.parametrize("module", PURE)
def test_pure_module_imports_no_web_or_database(module: str) -> None:
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        "import quizapp.bank.kinds as k; k.all_kinds()\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulls in {out.stdout.strip()}"
