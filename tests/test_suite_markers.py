"""The suite's markers hold: every test module that launches Chromium is marked ``browser``, so
``pytest -m "not browser"`` runs without a browser and ``.ci/run`` (QUIZAPP_TEST_REQUIRE=browser)
fails instead of skipping when Chromium is missing."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: What launching Chromium looks like in a test module.
LAUNCHES = ("sync_playwright", "chromium.launch", "async_playwright")


def _module_marks(tree: ast.Module) -> set[str]:
    marks: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            values = node.value.elts if isinstance(node.value, ast.List) else [node.value]
            marks |= {ast.unparse(v) for v in values}
    return marks


def test_every_module_that_launches_chromium_is_marked_browser() -> None:
    launching = []
    for path in sorted(TESTS.glob("*.py")):
        if path.name == Path(__file__).name:
            continue
        text = path.read_text(encoding="utf-8")
        if any(word in text for word in LAUNCHES):
            launching.append(path.name)
            marks = _module_marks(ast.parse(text))
            assert "pytest.mark.browser" in marks, f"{path.name} launches Chromium: mark it browser"
    assert {"test_browser.py", "test_web_layout.py"} <= set(launching)


def test_the_browser_marker_is_declared() -> None:
    import tomllib

    config = tomllib.loads((TESTS.parent / "pyproject.toml").read_text())
    markers = config["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("browser:") for m in markers)
