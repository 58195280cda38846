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
    assert np.array_equal(
        np.asarray(shared.expected, dtype=object),  # type: ignore[attr-defined]
        np.asarray(fresh.expected, dtype=object),
    )


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
