"""The libyaml composer used for speed (issue 7) yields the same node graph and positions as the
pure-Python one, so every file:line:column message stays the same."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _bank_exercise_files() -> list[Path]:
    return [p for p in FILES if p.name != "quiz.yaml"]


@pytest.mark.parametrize("path", _bank_exercise_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_validation_generates_seed_zero_once(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation draws seed 0 once (the placeholder check and the generation check share it),
    and that shared draw is the variant a fresh draw gives: the kinds are pure in (params, seed),
    so sharing cannot change a validation result (issue 7)."""
    import numpy as np

    from quizapp.bank import validate
    from quizapp.bank.template import render
    from quizapp.bank.yamlio import parse_yaml

    data, located = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    calls: list[object] = []
    real_generate = validate._generate

    def counting(kind, params, seed, memo):  # type: ignore[no-untyped-def]
        before = dict(memo) if memo is not None else {}
        out = real_generate(kind, params, seed, memo)
        if seed not in before:
            calls.append(out)
        return out

    monkeypatch.setattr(validate, "_generate", counting)
    checked, errors = validate.check_exercise(data, located, str(path))
    assert errors == [] and checked is not None
    assert len(calls) == 1, "seed 0 must be drawn exactly once per validation"
    shared = calls[0]
    fresh = checked.kind.generate(checked.params, np.random.default_rng(0))
    assert sorted(shared.values) == sorted(fresh.values)  # type: ignore[attr-defined]
    assert render(checked.spec.prompt, shared.values) == render(  # type: ignore[attr-defined]
        checked.spec.prompt, fresh.values
    )
    # a multi-part variant's expected answer is one array per part
    answers = [p.expected for p in shared.parts] or [shared.expected]  # type: ignore[attr-defined]
    again = [p.expected for p in fresh.parts] or [fresh.expected]
    for a, b in zip(answers, again, strict=True):
        assert np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))


def test_validation_generation_failure_still_reported_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind that cannot generate seed 0 is tried once and reported once, at ``params:``."""
    from quizapp.bank import validate
    from quizapp.bank.kinds import all_kinds
    from quizapp.bank.yamlio import parse_yaml

    kind = all_kinds()["linear_system"]
    calls = []

    def broken(params, rng):  # type: ignore[no-untyped-def]
        calls.append(params)
        raise ValueError("no system with these params")

    monkeypatch.setattr(kind, "generate", broken)
    source = "title: T\nkind: linear_system\nprompt: 'Solve {{ system }}'\nparams:\n  size: 2\n"
    data, located = parse_yaml(source, "x.yaml")
    checked, errors = validate.check_exercise(data, located, "x.yaml")
    assert checked is None and len(calls) == 1
    assert [str(e) for e in errors] == [
        "x.yaml:4:1: params: cannot generate a variant: no system with these params (seed 0)"
    ]


def _reference_located(node: yaml.Node) -> object:
    """Positions and styles straight from PyYAML's pure-Python composer, as ``Located`` keeps
    them (1-based marks; scalar styles, ``None`` for plain), written independently of yamlio."""

    def mark(n: yaml.Node) -> tuple[int, int]:
        return (n.start_mark.line + 1, n.start_mark.column + 1)

    if isinstance(node, yaml.ScalarNode):
        return None
    out: dict[str, object] = {"start": mark(node), "keys": {}, "values": {}, "children": {}}
    styles: dict[object, object] = {}
    if isinstance(node, yaml.SequenceNode):
        pairs = list(enumerate(node.value))
        keys: dict[object, object] = {}
    else:
        loader = yaml.SafeLoader("")
        pairs = [(loader.construct_object(k, deep=True), v) for k, v in node.value]
        keys = {loader.construct_object(k, deep=True): mark(k) for k, _ in node.value}
    out["keys"] = keys
    for key, child in pairs:
        out["values"][key] = mark(child)  # type: ignore[index]
        sub = _reference_located(child)
        if sub is not None:
            out["children"][key] = sub  # type: ignore[index]
        if isinstance(child, yaml.ScalarNode):
            styles[key] = child.style or None
    out["styles"] = styles
    return out


def _as_reference(loc: object) -> object:
    from quizapp.bank.yamlio import Located

    assert isinstance(loc, Located)
    return {
        "start": (loc.start.line, loc.start.column),
        "keys": {k: (m.line, m.column) for k, m in loc.keys.items()},
        "values": {k: (m.line, m.column) for k, m in loc.values.items()},
        "children": {k: _as_reference(c) for k, c in loc.children.items()},
        "styles": dict(loc.styles),
    }


def _check_parse_matches_pyyaml(text: str) -> None:
    from quizapp.bank.yamlio import parse_yaml

    data, located = parse_yaml(text, "f.yaml")
    assert data == yaml.safe_load(text)
    assert _as_reference(located) == _reference_located(yaml.compose(text, Loader=yaml.SafeLoader))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_parse_yaml_data_and_positions_match_pyyaml(path: Path) -> None:
    """The builder's shortcuts (strings taken as is, the other scalars built by SafeConstructor's
    own methods, libyaml's plain style read as None) give PyYAML's data and positions."""
    _check_parse_matches_pyyaml(path.read_text(encoding="utf-8"))


SCALARS_TEXT = """\
int: 12
hex: 0x1F
under: 1_000
float: 1.5
exp: 1.5e+3
inf: .inf
nan_free: -.INF
yes_bool: yes
off: Off
null1: ~
null2:
date: 2024-05-06
stamp: 2024-05-06T07:08:09Z
quoted: "12"
single: 'x: y'
tagged_str: !!str 12
tagged_int: !!int "7"
tagged_float: !!float "2"
block: |
  line one
  line two
folded: >
  folded
  text
list: [1, "a", 'b', 2.5, null, true]
nested:
  - {a: 1, b: [x, y]}
  - - deep
    - 3
"""


def test_parse_yaml_scalar_types_match_pyyaml() -> None:
    _check_parse_matches_pyyaml(SCALARS_TEXT)


_leaf = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
    st.dates(),
    st.sampled_from(
        [
            " lead",
            "trail ",
            "",
            "yes",
            "No",
            "~",
            "null",
            "1e3",
            "0x10",
            "0o7",
            "1_0",
            "2024-01-01",
            "a: b",
            "- x",
            "#c",
            "multi\nline\n",
            "tab\tin",
            "'q'",
            '"dq"',
            "é ü",
        ]
    ),  # fmt: skip
)
_tree = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text("abcxyz_", min_size=1, max_size=6), inner, max_size=4),
    ),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(st.text("abcdef", min_size=1, max_size=5), _tree, min_size=1, max_size=6),
    flow=st.sampled_from([False, True, None]),
    style=st.sampled_from([None, '"', "'"]),
)
def test_parse_yaml_matches_pyyaml_on_generated_documents(
    data: dict[str, object], flow: bool | None, style: str | None
) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, default_style=style, allow_unicode=True)
    try:
        yaml.safe_load(text)
    except yaml.YAMLError:  # pragma: no cover - safe_dump output always loads
        return
    _check_parse_matches_pyyaml(text)


def test_shared_marks_are_immutable_and_equal_to_fresh_ones() -> None:
    """``parse_yaml`` hands out one cached ``Mark`` per position; that is safe only because a
    Mark cannot be changed, and it must equal a freshly built one."""
    import dataclasses

    from quizapp.bank.yamlio import Mark, parse_yaml

    _, first = parse_yaml("a: 1\nb: [x, y]\n", "one.yaml")
    _, second = parse_yaml("a: 2\nb: [z, w]\n", "two.yaml")
    assert first.values["a"] == Mark(1, 4) and first.children["b"].values[1] == Mark(2, 8)
    assert second.values["a"] == first.values["a"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.values["a"].line = 9  # type: ignore[misc]
    assert second.values["a"] == Mark(1, 4)
