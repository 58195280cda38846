"""The libyaml composer used for speed (issue 7) yields the same node graph and positions as the
pure-Python one, so every file:line:column message stays the same."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from quizapp.bank.yamlio import _compose_fast

ROOT = Path(__file__).resolve().parent.parent


def _shape(node: yaml.Node) -> object:
    mark = (node.tag, node.start_mark.line, node.start_mark.column)
    if isinstance(node, yaml.ScalarNode):
        return (*mark, node.value, node.style)
    if isinstance(node, yaml.SequenceNode):
        return (*mark, [_shape(n) for n in node.value])
    return (*mark, [(_shape(k), _shape(v)) for k, v in node.value])


FILES = sorted((ROOT / "exercises").glob("*/*.yaml"))


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_fast_composer_same_nodes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast = _compose_fast(text)
    slow = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    assert fast is not None
    assert [_shape(n) for n in fast] == [_shape(n) for n in slow]


def test_fast_composer_declines_bad_yaml() -> None:
    """Syntax errors go to the pure-Python composer, whose messages the loader reports."""
    assert _compose_fast("a: [1, 2\nb: 3\n") is None


@pytest.mark.parametrize(
    "source",
    [
        "Solve $$ {{ system }} $$ for $x$.",
        "{{A}} and {{  B_2 }} and {{ A }}",
        "no placeholder at all, $\\frac{1}{2}$ and {x}",
        "{{ A | latex }} uses a filter",
        "{% if n > 2 %}{{ n }}{% endif %}",
        "{{ range }}",
        "stray }} here {{ x }}",
        "{{ x + 1 }}",
    ],
)
def test_simple_placeholders_match_jinja(source: str) -> None:
    """The regular-expression shortcut agrees with Jinja's own analysis, or declines."""
    from jinja2 import meta

    from quizapp.bank.template import _ENV, _simple_placeholders, placeholders

    expected = set(meta.find_undeclared_variables(_ENV.parse(source))) - set(_ENV.globals)
    fast = _simple_placeholders(source)
    assert fast is None or fast == expected
    assert placeholders(source) == expected
