"""The pure layers (grading, bank, linalg) must not import Flask or a database library."""

from __future__ import annotations

import subprocess
import sys

import pytest

PURE = ["quizapp.grading", "quizapp.bank", "quizapp.linalg", "quizapp.render", "quizapp.coursetime"]
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


def _import_graph() -> dict[str, set[str]]:
    """quizapp module -> the quizapp modules it imports (module level or inside functions)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "quizapp"
    files: dict[str, Path] = {}
    for f in root.rglob("*.py"):
        parts = f.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = f

    def resolve(name: str) -> str:
        while name and name not in files:
            name = name.rsplit(".", 1)[0] if "." in name else ""
        return name

    graph: dict[str, set[str]] = {}
    for name, f in files.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {resolve(a.name) for a in node.names if a.name.startswith("quizapp")}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("quizapp"):
                assert node.module is not None
                deps.add(resolve(node.module))
                deps |= {f"{node.module}.{a.name}" for a in node.names} & set(files)
        graph[name] = deps - {name, ""}
    return graph


#: Which top-level rooms of quizapp a room may not import (imports point down only).
UPWARD = {
    "services": {"web", "cli", "instructor"},
    "instructor": {"web", "cli"},
    "models": {"services", "web", "cli", "instructor"},
    "models_instructor": {"services", "web", "cli", "instructor"},
    "grading": {"services", "web", "cli", "instructor", "models", "bank"},
    "bank": {"services", "web", "cli", "instructor", "models"},
    "linalg": {"services", "web", "cli", "instructor", "models", "bank", "grading"},
    "coursetime": {"services", "web", "cli", "instructor", "models", "bank", "grading"},
}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_imports_point_down_only() -> None:
    graph = _import_graph()
    upward = sorted(
        (m, d) for m, deps in graph.items() for d in deps if _room(d) in UPWARD.get(_room(m), ())
    )
    assert upward == []


def test_the_services_modules_import_no_cycle() -> None:
    """Inside quizapp.services every module imports only modules below it (the package's
    ``__init__`` re-exports them and is imported by none of them)."""
    graph = _import_graph()
    services = {
        m: {d for d in deps if d.startswith("quizapp.services")} for m, deps in graph.items()
    }
    services = {m: deps for m, deps in services.items() if m.startswith("quizapp.services.")}
    assert all("quizapp.services" not in deps for deps in services.values())
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import cycle: {' -> '.join((*path, module))}"
        if module in done:
            return
        for dep in services.get(module, ()):
            visit(dep, (*path, module))
        done.add(module)

    for module in services:
        visit(module, ())
    assert len(services) >= 8
