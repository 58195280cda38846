"""The house's layers: the pure rooms (grading, bank, linalg, ...) import no Flask, no database
library and no room above them; imports point down only; no quizapp module imports another that
(through module-level imports) imports it back."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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


def _files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of quizapp."""
    root = Path(__file__).resolve().parent.parent / "quizapp"
    files: dict[str, Path] = {}
    for f in root.rglob("*.py"):
        parts = f.relative_to(root.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return files


def _is_type_checking(node: ast.If) -> bool:
    return ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports run when the module is imported: its top-level statements, also inside
    top-level ``if`` / ``try`` blocks, but not under ``if TYPE_CHECKING:`` and not in functions."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            elif isinstance(node, ast.If):
                if not _is_type_checking(node):
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                for handler in node.handlers:
                    walk(handler.body)
                walk(node.orelse)
                walk(node.finalbody)

    walk(tree.body)
    return found


def _module_level_graph() -> dict[str, set[str]]:
    """quizapp module -> the quizapp modules its module-level imports load first.

    ``from quizapp.lti import accounts`` is an edge to ``quizapp.lti.accounts`` (and to the
    package ``quizapp.lti`` only when a name imported is not a submodule); importing a submodule
    also runs its package's ``__init__``, which is an edge only when that package is not the
    importer's own (a package's modules are loaded while its ``__init__`` runs)."""
    files = _files()
    graph: dict[str, set[str]] = {}
    for name, f in files.items():
        deps: set[str] = set()
        for node in _module_level_imports(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("quizapp")]
            elif (node.module or "").startswith("quizapp") and node.level == 0:
                assert node.module is not None
                subs = [f"{node.module}.{a.name}" for a in node.names]
                targets = [t for t in subs if t in files]
                if len(targets) < len(subs):
                    targets.append(node.module)
            else:
                targets = []
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                deps.add(target)
                package = target.rpartition(".")[0]
                while package and not name.startswith(package + "."):
                    deps.add(package)
                    package = package.rpartition(".")[0]
        graph[name] = deps - {name, ""}
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a path ``[a, b, ..., a]``, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for dep in sorted(graph.get(module, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check below can fail: a made-up graph with a cycle is reported, one without is not."""
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_among_quizapp_modules() -> None:
    graph = _module_level_graph()
    assert "quizapp.grading.parse.expression" in graph["quizapp.grading.parse.number"]
    assert _find_cycle(graph) is None, " -> ".join(_find_cycle(graph) or [])


#: Third-party libraries the pure rooms never import, at any level (also inside a function).
PURE_FORBIDDEN = {"flask", "flask_sqlalchemy", "flask_login", "flask_wtf", "sqlalchemy", "werkzeug"}
PURE_ROOMS = ("quizapp.grading", "quizapp.bank", "quizapp.linalg")
#: The rooms of quizapp the pure rooms never import.
PURE_FORBIDDEN_ROOMS = ("web", "services", "models", "models_instructor", "instructor", "cli")


def test_the_pure_rooms_import_no_web_database_or_upper_room() -> None:
    graph = _import_graph()
    files = _files()
    bad = []
    for name, f in files.items():
        if not name.startswith(PURE_ROOMS):
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                bad += [
                    (name, a.name) for a in node.names if a.name.split(".")[0] in PURE_FORBIDDEN
                ]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                if (node.module or "").split(".")[0] in PURE_FORBIDDEN:
                    bad.append((name, node.module))
        bad += [(name, d) for d in graph[name] if _room(d) in PURE_FORBIDDEN_ROOMS]
    assert bad == []


def test_the_services_never_import_the_web() -> None:
    graph = _import_graph()
    assert [
        (m, d)
        for m, deps in graph.items()
        if _room(m) == "services"
        for d in deps
        if _room(d) == "web"
    ] == []


def test_each_idea_is_imported_from_its_own_module() -> None:
    """The roster sync explains an LMS's failure with ``quizapp.lti.failures``, not through the
    grade queue; deep linking, login and launch are modules of their own; the deadline rules live
    in their services modules, and no module imports the old ``deadlines`` module."""
    graph = _import_graph()
    assert "quizapp.lti.failures" in graph["quizapp.lti.roster"]
    assert "quizapp.lti.grades" not in graph["quizapp.lti.roster"]
    assert "quizapp.lti.failures" in graph["quizapp.lti.grades"]
    assert "quizapp.lti.launch" in graph["quizapp.lti.deep_linking"]
    assert "quizapp.lti.deep_linking" not in graph["quizapp.lti.launch"]
    assert not any("quizapp.services.deadlines" in deps for deps in graph.values())
    assert {"schedules", "points", "extensions", "overrides", "audit"} <= {
        m.rpartition(".")[2] for m in graph if m.startswith("quizapp.services.")
    }
