"""The shortcuts taken to make variant generation faster (issue 7, figure 2) give the same results
as the plain NumPy they replace, and the mistaken-value cache cannot serve another context's value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from quizapp import linalg
from quizapp.bank import load_bank
from quizapp.bank import template as template_module
from quizapp.bank.kinds._mistakes import (
    MISTAKES,
    credit_ok,
    distinguishable_codes,
    mistake_credit,
    mistaken_value,
)
from quizapp.bank.kinds._util import distinct, not_saturated

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
small = st.floats(-50, 50, allow_nan=False, width=64)
shapes = hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4)


def test_distinct_different_shapes_and_lists() -> None:
    assert distinct([1.0, 2.0], [[1.0, 2.0]])
    assert not distinct([1.0, 2.0], [1.0, 2.0])
    assert distinct([1.0, 2.0], [1.0, 2.2])
    assert not distinct([[np.inf]], [[np.inf]])  # equal infinities are close, as in np.isclose
    assert distinct([np.nan], [np.nan])


@settings(max_examples=200, deadline=None)
@given(w=hnp.arrays(float, shapes, elements=st.floats(0, 1)), decimals=st.integers(1, 4))
def test_not_saturated_matches_np_all(w: np.ndarray, decimals: int) -> None:
    eps = 10.0**-decimals
    assert not_saturated(w, decimals) is bool(np.all(w >= eps) and np.all(w <= 1 - eps))


@settings(max_examples=200, deadline=None)
@given(x=hnp.arrays(float, shapes, elements=st.floats(-700, 700)), axis=st.sampled_from([0, -1]))
def test_softmax_is_bitwise_the_documented_formula(x: np.ndarray, axis: int) -> None:
    if axis == 0 and x.ndim == 1:
        axis = -1
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    want = e / np.sum(e, axis=axis, keepdims=True)
    np.testing.assert_array_equal(linalg.softmax(x, axis=axis), want)


def test_non_finite_input_is_still_refused() -> None:
    for bad in ([1.0, np.nan], [[np.inf, 1.0]], [-np.inf]):
        with pytest.raises(linalg.LinalgError, match="non-finite"):
            linalg.softmax(bad)


def _contexts() -> list[tuple[str, dict, np.ndarray, tuple[str, ...]]]:
    """(exercise id, context, expected, codes to try) from real variants of every kind that names
    mistakes."""
    out = []
    for ex_id in sorted(BANK.exercises):
        ex = BANK.exercises[ex_id]
        for seed in (3, 11):
            v = ex.generate(seed)
            family = str(v.context.get("family", ""))
            codes = tuple(c for (f, c) in MISTAKES if f == family)
            if codes and np.asarray(v.expected).dtype.kind == "f":
                out.append((ex_id, dict(v.context), np.asarray(v.expected), codes))
    return out


CONTEXTS = _contexts()


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("ex_id,ctx,expected,codes", CONTEXTS, ids=[c[0] for c in CONTEXTS])
def test_mistake_cache_gives_the_uncached_results(
    ex_id: str, ctx: dict, expected: np.ndarray, codes: tuple[str, ...]
) -> None:
    cache: dict = {}
    for code in codes:
        assert _same(mistaken_value(code, ctx, cache), mistaken_value(code, ctx))
        assert _same(mistaken_value(code, ctx, cache), mistaken_value(code, ctx))  # from cache
    cache = {}
    assert distinguishable_codes(expected, ctx, codes, 2, cache) == distinguishable_codes(
        expected, ctx, codes, 2
    )
    assert mistake_credit(expected, ctx, codes, 2, cache=cache) == mistake_credit(
        expected, ctx, codes, 2
    )
    assert credit_ok(expected, ctx, codes, 2, cache=cache) == credit_ok(expected, ctx, codes, 2)


@pytest.mark.parametrize("ex_id,ctx,expected,codes", CONTEXTS, ids=[c[0] for c in CONTEXTS])
def test_no_mistake_reads_the_mask(
    ex_id: str, ctx: dict, expected: np.ndarray, codes: tuple[str, ...]
) -> None:
    """attention_fill keeps one cache while it tries masks: that is only right if no mistaken
    value depends on ``ctx["mask"]``."""
    plain = {k: v for k, v in ctx.items() if k != "mask"}
    masked = {**plain, "mask": np.ones(expected.shape, dtype=bool)}
    for code in codes:
        assert _same(mistaken_value(code, plain), mistaken_value(code, masked))


def test_a_cache_belongs_to_one_context() -> None:
    """Separate caches for separate candidates: a fresh cache computes the new context's value
    (what the kinds do: one cache per drawn candidate)."""
    q1 = np.array([[1.0, 0.0], [0.0, 1.0]])
    q2 = np.array([[2.0, 1.0], [1.0, 3.0]])
    k = np.array([[1.0, 2.0], [0.0, 1.0]])
    c1 = {"family": "attention", "Q": q1, "K": k, "ask": "weights"}
    c2 = {"family": "attention", "Q": q2, "K": k, "ask": "weights"}
    v1 = mistaken_value("missing_scale", c1, {})
    v2 = mistaken_value("missing_scale", c2, {})
    np.testing.assert_array_equal(v1, linalg.softmax(q1 @ k.T))
    np.testing.assert_array_equal(v2, linalg.softmax(q2 @ k.T))
    assert mistaken_value("no_such_code", c1, {}) is None


# --- templates without Jinja syntax are rendered once ---------------------------------------

no_jinja = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=80
).filter(lambda t: "{{" not in t and "{%" not in t and "{#" not in t)


@settings(max_examples=300, deadline=None)
@given(source=no_jinja, n=st.integers(-5, 5))
def test_constant_template_renders_as_jinja_does(source: str, n: int) -> None:
    """Same text as Jinja's own rendering (trailing newline, ``\\r\\n``, braces...), whatever
    the values."""
    want = template_module.compile_template(source).render(n=n)
    assert template_module.render(source, {"n": n}) == want
    assert template_module.render(source, {}) == want


def test_constant_template_cache_is_per_text_and_templates_still_read_values() -> None:
    assert template_module.render("Divide by $x$.\n", {}) == "Divide by $x$."
    assert template_module.render("Divide by $y$.", {}) == "Divide by $y$."
    assert template_module.render("{{ a }} and { b }", {"a": 3}) == "3 and { b }"
    assert template_module.render("{{ a }} and { b }", {"a": 4}) == "4 and { b }"
    with pytest.raises(template_module.TemplateError, match="unknown placeholder"):
        template_module.render("{{ missing }}", {})


def test_long_constant_template_is_still_refused() -> None:
    text = "x" * (template_module.MAX_OUTPUT + 1)
    for _ in range(2):  # not cached as a success
        with pytest.raises(template_module.TemplateError, match="longer than"):
            template_module.render(text, {})


# --- self-attention without re-checking its own intermediate products ------------------------


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 5),
    d_model=st.integers(1, 4),
    d_k=st.integers(1, 5),
    d_v=st.integers(1, 4),
)
def test_self_attention_is_attention_of_the_projections_bitwise(
    data: st.DataObject, n: int, d_model: int, d_k: int, d_v: int
) -> None:
    ints = st.integers(-3, 3).map(float)
    X = data.draw(hnp.arrays(float, (n, d_model), elements=ints))
    WQ = data.draw(hnp.arrays(float, (d_model, d_k), elements=ints))
    WK = data.draw(hnp.arrays(float, (d_model, d_k), elements=ints))
    WV = data.draw(hnp.arrays(float, (d_model, d_v), elements=ints))
    out, w = linalg.self_attention(X, WQ, WK, WV)
    want_out, want_w = linalg.attention(X @ WQ, X @ WK, X @ WV)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(w, want_w)
    # and the attention formula itself, written out with NumPy (Vaswani et al. 2017, eq. 1)
    s = (X @ WQ) @ (X @ WK).T / np.sqrt(d_k)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(w, e / e.sum(axis=1, keepdims=True), rtol=1e-12)


def test_self_attention_errors_are_unchanged() -> None:
    X = np.ones((2, 3))
    with pytest.raises(linalg.LinalgError, match=r"cannot multiply A \(2, 3\) by B \(2, 2\)"):
        linalg.self_attention(X, np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 2)))
    with pytest.raises(linalg.LinalgError, match="W_K has a non-finite entry"):
        linalg.self_attention(X, np.ones((3, 2)), [[np.nan] * 2] * 3, np.ones((3, 2)))
    with pytest.raises(linalg.LinalgError, match="same dimension d"):
        linalg.self_attention(X, np.ones((3, 2)), np.ones((3, 4)), np.ones((3, 2)))
    with np.errstate(over="ignore"), pytest.raises(linalg.LinalgError, match="Q has a non-finite"):
        linalg.self_attention(np.full((2, 3), 1e200), np.full((3, 2), 1e200), X.T, X.T)


def test_format_number_non_finite_and_clean_unchanged() -> None:
    from quizapp.bank.kinds._util import clean

    fmt = template_module.format_number
    assert [fmt(x) for x in (np.inf, -np.inf, np.nan, np.float32(np.inf))] == [
        str(float(x)) for x in (np.inf, -np.inf, np.nan, np.float32(np.inf))
    ]
    assert fmt(np.float64(2.5)) == "2.5" and fmt(np.int64(-7)) == "-7"
    out = clean(np.array([[1.0, -2.0], [0.0, 3.0]]))
    assert out.dtype == np.int64 and out.tolist() == [[1, -2], [0, 3]]
    assert clean(np.array([1.0, np.inf])).dtype.kind == "f"
    assert clean(np.array([1.5, 2.0])).dtype.kind == "f"
    assert clean(np.array(4.0)) == 4 and isinstance(clean(np.array(4.0)), int)
