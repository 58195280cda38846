"""Fuzzing: the evaluator, the YAML reader and the Markdown renderer never fail with anything but
their own clear errors, whatever the input."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp.bank.expression import ExpressionError, compile_expression, evaluate
from quizapp.bank.yamlio import BankError, parse_yaml
from quizapp.render import render_markdown

TOKENS = st.sampled_from(
    ["A", "x", "d", "1", "2.5", "0", "-", "+", "*", "/", "**", "@", "%", "(", ")", "[", "]", ",",
     ".T", ".__class__", "inv(", "det(", "softmax(", "sum(", "axis=0", "eye(", "==", "<", "and",
     "not", "if", "else", ":", "lambda", "__import__", "'s'", "10**10**10", " "]
)  # fmt: skip
VARS = {"A": np.array([[2.0, 1.0], [1.0, 3.0]]), "x": np.array([1.0, -2.0]), "d": 4.0}


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, max_size=25).map("".join))
def test_evaluator_raises_only_expression_error(text: str) -> None:
    try:
        compiled = compile_expression(text)
        evaluate(compiled, VARS)
    except ExpressionError as exc:
        assert exc.message


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_evaluator_on_arbitrary_text(text: str) -> None:
    try:
        evaluate(text, VARS)
    except ExpressionError:
        pass


YAML_BITS = st.sampled_from(
    ["a: 1\n", "- x\n", "  b: 2\n", "\tc: 3\n", "&a [1]\n", "*a\n", "!!python/name:os.system\n",
     "a: 1\n", "{", "}", "[", "]", ": ", "'", '"', "#c\n", "---\n", "? k\n", "<<: *a\n", "|\n", "  t\n"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(YAML_BITS, max_size=15).map("".join))
def test_yaml_reader_raises_only_bank_error(text: str) -> None:
    try:
        parse_yaml(text, "f.yaml")
    except BankError as err:
        assert err.message and str(err).startswith("f.yaml")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("$\\{}<>&\"'`*_[]()#-! \nabx^")), max_size=80))
def test_render_markdown_never_raises_and_never_emits_raw_tags(text: str) -> None:
    html = render_markdown(text)
    for bad in ("<script", "<img", "<iframe"):
        assert bad not in html
    # Markdown links ([text](url)) are allowed in instructor text; raw <a> tags typed in it are
    # escaped, and no link target is a script.
    if "<a " in html:
        assert "](" in text
    for tag in re.findall(r"<a [^>]*>", html):
        assert re.fullmatch(r'<a href="[^"<>]*"( title="[^"<>]*")?>', tag), tag  # markdown-it's
    for href in re.findall(r'href="([^"]*)"', html):
        assert not re.match(r"\s*(javascript|vbscript|data):", href, re.I), href
