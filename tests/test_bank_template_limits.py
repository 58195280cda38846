"""Templates cannot hang or exhaust memory: every payload fails fast with a clear message."""

from __future__ import annotations

import time

import pytest

from quizapp.bank.template import MAX_OUTPUT, TemplateError, render

PAYLOADS = [
    # (template, words the message must contain)
    (
        "{% for i in range(9999) %}{% for j in range(9999) %}{% endfor %}{% endfor %}",
        "loop iterations",
    ),
    ('{% for i in range(9999) %}{{ "x" * 99999 }}{% endfor %}', "characters"),
    ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "calls itself too deeply"),
    (
        "{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}",
        "loop iterations, calls",
    ),
    ('{% set a = "x"*99999 %}{% set b = a ~ a %}{% set c = b ~ b %}{{ c }}', "longer than"),
    ('{{ ("x" * 99999) + ("x" * 99999) + ("x" * 99999) }}', "longer than"),
    ('{{ "x".ljust(1000000000) }}', "ljust"),
    ('{{ "%0999999999d" % 1 }}', "formatting"),
    (
        '{% set s = "x"*99999 %}{% for c in s %}{% for d in s %}{% endfor %}{% endfor %}',
        "loop iterations",
    ),
    ('{{ range(9999)|join("x"*99999) }}', "join"),
    ("{% for x in [1,2,3] recursive %}{{ loop([1,2,3]) }}{% endfor %}", "too deeply"),
    ("{{ ((10**100)**100)**100 }}", "larger than"),
    ("{{ range(10**9)|length }}", "range"),
    (
        "{% set x %}{% for i in range(9999) %}{% for j in range(9999) %}a{% endfor %}"
        "{% endfor %}{% endset %}",
        "loop iterations",
    ),
    ("{{ ''.__class__ }}", "__class__"),
]


@pytest.mark.parametrize(("source", "says"), PAYLOADS)
def test_payload_fails_fast_with_a_clear_message(source: str, says: str) -> None:
    started = time.monotonic()
    with pytest.raises(TemplateError) as info:
        render(source, {})
    assert time.monotonic() - started < 3
    assert says in info.value.message
    assert info.value.line == 1


def test_unsafe_filters_are_unknown_at_compile_time() -> None:
    with pytest.raises(TemplateError, match="No filter named 'center'"):
        render('{{ "x"|center(1000000000) }}', {})


def test_error_line_is_the_template_line() -> None:
    with pytest.raises(TemplateError) as info:
        render('first line\nsecond\n{{ "x" * 10000000 }}', {})
    assert info.value.line == 3
    assert "repetition too large" in info.value.message


def test_ordinary_templates_still_render() -> None:
    out = render(
        "{% for i in range(3) %}{{ i }}{% endfor %} {{ a }} {{ 'ab'|upper }} "
        "{{ [1, 2]|join(',') }} {{ 2 ** 10 }} {{ 'x' * 3 }}",
        {"a": 2.5},
    )
    assert out == "012 2.5 AB 1,2 1024 xxx"


def test_budget_is_per_render() -> None:
    # Each render may use most of the budget; it is not shared between renders.
    source = "{% for i in range(15000) %}{% endfor %}ok"
    assert render(source, {}) == "ok"
    assert render(source, {}) == "ok"


def test_longest_allowed_value_renders() -> None:
    assert len(render('{{ "x" * ' + str(MAX_OUTPUT) + " }}", {})) == MAX_OUTPUT
