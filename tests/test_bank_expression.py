"""The safe expression evaluator and the ``expression`` kind."""

from __future__ import annotations

import time

import numpy as np
import pytest

from quizapp.bank import BankError, load_exercise_source
from quizapp.bank.expression import (
    MAX_ELEMENTS,
    ExpressionError,
    Step,
    compile_expression,
    evaluate,
    truth,
)

A = np.array([[2.0, 1.0], [1.0, 3.0]])
B = np.array([[0.0, -1.0], [4.0, 2.0]])
x = np.array([1.0, -2.0])
VARS = {"A": A, "B": B, "x": x, "d": 4.0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A @ B", A @ B),
        ("A.T @ x", A.T @ x),
        ("(A @ B).T - B.T @ A.T", np.zeros((2, 2))),
        ("inv(A) @ x", np.linalg.inv(A) @ x),
        ("solve(A, x)", np.linalg.solve(A, x)),
        ("det(A)", 5.0),
        ("A ** 2 / 2 + 1", A**2 / 2 + 1),
        ("-A[0, 1] + sum(A[1, :]) if False else A[1, 0]", 1.0),
        ("A[:, 0]", A[:, 0]),
        ("x[-1]", -2.0),
        ("sqrt(d) * exp(0) + log(e)", 3.0),
        ("transpose(B) @ eye(2)", B.T),
        ("sum(A, axis=0)", A.sum(axis=0)),
        ("max(abs(x)) + argmax(x)", 2.0),
        ("round(A / 3, decimals=2)", np.round(A / 3, 2)),
        ("[1, 2] @ [[1, 0], [0, 1]]", np.array([1.0, 2.0])),
        ("trace(A) + rank(B) + norm([3, 4])", 5.0 + 2.0 + 5.0),
        ("outer(x, x)", np.outer(x, x)),
        ("A % 2", A % 2),
        ("pi", np.pi),
    ],
)
def test_evaluate_matches_numpy(text: str, expected: object) -> None:
    np.testing.assert_allclose(np.asarray(evaluate(text, VARS), dtype=float), expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("det(A) != 0", True),
        ("all(x != 0) and det(B) > 0", True),
        ("any(A < 0) or not 1 < d <= 4", False),
        ("0 < d < 3", False),
    ],
)
def test_truth_of_constraints(text: str, expected: bool) -> None:
    assert truth(text, VARS) is expected


def test_array_condition_must_be_reduced() -> None:
    with pytest.raises(ExpressionError, match=r"all\(\.\.\.\) or any"):
        truth("x != 0", VARS)


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ("().__class__", "__class__"),
        ("A.__class__.__mro__[1].__subclasses__()", "attribute"),
        ("__import__('os').system('true')", "__import__"),
        ("A.__class__", "__class__"),
        ("A.tolist()", ".tolist"),
        ("(lambda: 1)()", "lambda"),
        ("[y for y in x]", "comprehension"),
        ("{y: 1 for y in x}", "comprehension"),
        ("open('/etc/passwd')", "open"),
        ("eval('1')", "eval"),
        ("getattr(A, 'T')", "getattr"),
        ("'a' * 10", "constant"),
        ("f'{A}'", "f-string"),
        ("(y := 3)", "assignment"),
        ("sum(*[x])", "starred"),
        ("x if x is None else x", "is"),
        ("1 in x", "in"),
        ("1 << 40", "operator"),
        ("sum(x, dtype=object)", "keyword"),
        ("import os", "syntax"),
        ("A; B", "syntax"),
        ("_secret", "_secret"),
        ("(1, 2)", "tuple"),
    ],
)
def test_escape_payloads_are_rejected_before_evaluation(payload: str, says: str) -> None:
    with pytest.raises(ExpressionError) as info:
        compile_expression(payload)
    assert says in info.value.message


@pytest.mark.parametrize(
    "payload",
    [
        "eye(10**9)",
        "10**10**10",
        "zeros(100000, 100000)",
        "ones(10**6)",
        "exp(1000)",
        "2.0 ** 5000",
    ],
)
def test_huge_results_fail_fast(payload: str) -> None:
    started = time.monotonic()
    with pytest.raises(ExpressionError):
        evaluate(payload, VARS)
    assert time.monotonic() - started < 1


def test_broadcast_and_products_are_bounded_before_allocation() -> None:
    col = np.ones((MAX_ELEMENTS, 1))
    row = np.ones((1, MAX_ELEMENTS))
    for text in ("c + r", "c @ r", "outer(c, r)"):
        with pytest.raises(ExpressionError, match="elements"):
            evaluate(text, {"c": col, "r": row})


def test_long_and_deep_expressions_are_rejected() -> None:
    with pytest.raises(ExpressionError, match="longer"):
        compile_expression("x + " * 600 + "x")
    with pytest.raises(ExpressionError):
        compile_expression("-" * 1500 + "x")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("inv(B - B)", "singular"),
        ("A @ [1, 2, 3]", "do not fit"),
        ("A + [1, 2, 3]", "do not match"),
        ("x / 0", "division by zero"),
        ("log(x - x)", "not finite"),
        ("det(x)", "square"),
        ("unknown + 1", "unknown name"),
        ("A[5, 0]", "out of bounds"),
        ("A[0.5]", "integer"),
        ("det", "function"),
    ],
)
def test_evaluation_errors_are_clear(text: str, says: str) -> None:
    with pytest.raises(ExpressionError, match=says):
        evaluate(text, VARS)


def test_compiled_names_exclude_functions_and_constants() -> None:
    assert compile_expression("softmax(Q @ K.T / sqrt(d)) + pi").names == {"Q", "K", "d"}


def test_trace_records_intermediate_results_innermost_first() -> None:
    trace: list[Step] = []
    evaluate("(A @ B).T / d", VARS, trace=trace)
    assert [s.text for s in trace] == ["A @ B", "(A @ B).T", "(A @ B).T / d"]
    np.testing.assert_allclose(trace[1].value, (A @ B).T)


def _softmax_rows(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_softmax_and_attention_come_from_linalg() -> None:
    np.testing.assert_allclose(evaluate("softmax(A)", VARS), _softmax_rows(A))
    np.testing.assert_allclose(evaluate("softmax(A, axis=0)", VARS), _softmax_rows(A.T).T)
    q, k, v = A, B, np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]])
    expected = _softmax_rows(q @ k.T / np.sqrt(2)) @ v
    np.testing.assert_allclose(evaluate("attention(Q, K, V)", {"Q": q, "K": k, "V": v}), expected)


EXERCISE = """\
title: Products
kind: expression
variables:
  n: {choice: [2, 3]}
  M: {matrix: [n, 3], integers: [-3, 3]}
  v: {vector: 3, uniform: [-1, 1], decimals: 1}
  c: {scalar: true, integers: [1, 5]}
  I2: {matrix: [2, 2], value: [[1, 0], [0, 1]]}
require:
  - all(v != 0)
  - any(M != 0)
answer: c * M @ v
answer_form: {type: vector, show_shape: false}
prompt: "Compute ${{ c }} M v$ for $M = {{ M }}$, $v = {{ v }}$."
"""


def test_expression_kind_draws_every_variable_type_and_solves() -> None:
    ex = load_exercise_source("q/products", EXERCISE)
    shapes = set()
    for seed in range(40):
        v = ex.generate(seed)
        M, vec, c = v.values["M"], v.values["v"], v.values["c"]
        shapes.add(M.shape)
        assert M.shape[1] == 3 and M.shape[0] == v.values["n"] in (2.0, 3.0)
        assert np.all((M >= -3) & (M <= 3) & (M == np.round(M)))
        assert np.all(vec != 0) and np.all(np.abs(vec) <= 1) and np.allclose(vec, np.round(vec, 1))
        assert c in {1.0, 2.0, 3.0, 4.0, 5.0}
        np.testing.assert_array_equal(v.values["I2"], np.eye(2))
        np.testing.assert_allclose(v.expected, c * M @ vec)
        assert v.answer_form.type == "vector" and v.answer_form.show_shape is False
        assert v.solution[-1].title == "Answer"
        assert "\\begin{pmatrix}" in v.prompt and "{{" not in v.prompt
    assert shapes == {(2, 3), (3, 3)}


def test_answer_form_type_mismatch_is_reported_at_load_at_its_line() -> None:
    src = EXERCISE.replace("type: vector", "type: matrix")
    with pytest.raises(
        BankError, match="answer_form.type is matrix but the answer is a vector"
    ) as e:
        load_exercise_source("q/p", src).generate(0)
    line = next(i for i, t in enumerate(src.splitlines(), 1) if t.startswith("answer_form"))
    assert e.value.line == line


def test_impossible_require_stops_with_a_clear_error() -> None:
    src = EXERCISE.replace("all(v != 0)", "det(I2) != det(I2)")
    started = time.monotonic()
    with pytest.raises(BankError, match=r"require 'det\(I2\) != det\(I2\)' never held in 1000"):
        load_exercise_source("q/p", src).generate(0)
    assert time.monotonic() - started < 5


def test_boolean_answer_is_refused() -> None:
    with pytest.raises(BankError, match="true/false"):
        load_exercise_source("q/p", EXERCISE.replace("c * M @ v", "c > 0")).generate(0)


def test_trace_explains_attention_and_inverse() -> None:
    q, k, v = A, B, np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]])
    trace: list[Step] = []
    evaluate("attention(Q, K, V)", {"Q": q, "K": k, "V": v}, trace=trace)
    by_text = {s.text: s for s in trace}
    np.testing.assert_allclose(by_text["Q @ K.T / sqrt(2)"].value, q @ k.T / np.sqrt(2))
    weights = by_text["softmax(Q @ K.T / sqrt(2))"]
    assert weights.heatmap
    np.testing.assert_allclose(weights.value, _softmax_rows(q @ k.T / np.sqrt(2)))
    trace = []
    evaluate("inv(A) @ x", VARS, trace=trace)
    assert [s.text for s in trace][:2] == ["det(A)", "inv(A)"]
    assert trace[0].value == pytest.approx(5.0)
