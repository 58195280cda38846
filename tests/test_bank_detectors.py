"""Each kind-specific detector fires on the mistake it names and never on the right answer.

The mistaken answers are computed here independently (explicit loops from the prompt's values),
not with the detectors' own code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_bank_kinds_helpers import exercise_specs, make_variant, text

from quizapp.bank import detectors
from quizapp.bank.answers import expected_answer_text, grade_answer

SPECS = exercise_specs()
SEEDS = range(60)


def softmax_rows(S: np.ndarray) -> np.ndarray:
    out = np.zeros_like(S, dtype=float)
    for i in range(S.shape[0]):
        m = max(S[i])
        exps = [math.exp(v - m) for v in S[i]]
        out[i] = [e / sum(exps) for e in exps]
    return out


def mm(A, B) -> np.ndarray:
    A, B = np.asarray(A, float), np.asarray(B, float)
    return np.array(
        [
            [sum(A[i, k] * B[k, j] for k in range(A.shape[1])) for j in range(B.shape[1])]
            for i in range(A.shape[0])
        ]
    )


def attention_mistake(Q, K, V, ask: str, code: str) -> np.ndarray:
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    d = K.shape[1]
    S = mm(K, Q.T) if code == "scores_transposed" else mm(Q, K.T)
    if ask == "scores":
        return S
    scale = {"missing_scale": 1.0, "scale_by_d": float(d)}.get(code, math.sqrt(d))
    S = S / scale
    if ask == "scaled":
        return S
    if code == "missing_softmax":
        W = S
    elif code == "softmax_axis":
        W = softmax_rows(S.T).T
    else:
        W = softmax_rows(S)
    if ask == "weights" or code == "missing_values":
        return W
    return mm(W, V)


def mistaken_answer(data: dict, v, code: str):
    """The answer a student making mistake ``code`` would give, from the prompt's values."""
    kind, p, vals, e = (
        data["kind"],
        data.get("params") or {},
        v.values,
        np.asarray(v.expected, float),
    )
    if code == "rows_dont_sum_to_one":
        bad = e.copy()
        mask = v.context.get("mask")
        k = int(np.argmax(mask.ravel())) if mask is not None else 0
        bad.flat[k] += 0.3
        return bad
    if kind in ("attention", "attention_fill", "retrieval_scores", "self_attention"):
        ask = p.get("ask", p.get("target"))
        ask = (
            ask
            or {
                "attention": "output",
                "attention_fill": "weights",
                "retrieval_scores": "scores",
                "self_attention": "output",
            }[kind]
        )
        if kind == "self_attention":
            X = np.asarray(vals["X"], float)
            Q, K, V = (mm(X, vals[w]) for w in ("W_Q", "W_K", "W_V"))
        else:
            Q, K, V = vals["Q"], vals["K"], vals.get("V")
        return attention_mistake(Q, K, V, ask, code)
    if kind == "multi_head_attention":
        X = np.asarray(vals["X"], float)
        h, dk, dv = vals["heads"], vals["d_k"], vals["d_v"]
        WQ, WK, WV, WO = (np.asarray(vals[w], float) for w in ("W_Q", "W_K", "W_V", "W_O"))
        if code in ("single_head", "single_head_sqrt_dk"):  # W_Q, W_K, W_V whole: one head
            Q, K, V = mm(X, WQ), mm(X, WK), mm(X, WV)
            if code == "single_head":  # scaled by the whole width, sqrt(h * d_k)
                one = attention_mistake(Q, K, V, "output", "")
            else:  # scaled by one head's sqrt(d_k), as the prompt states d_k
                one = mm(softmax_rows(mm(Q, K.T) / math.sqrt(dk)), V)
            return one if p.get("ask") == "concat" else mm(one, WO)
        heads = []
        for i in range(h):
            Q = mm(X, WQ[:, i * dk : (i + 1) * dk])
            K = mm(X, WK[:, i * dk : (i + 1) * dk])
            V = mm(X, WV[:, i * dv : (i + 1) * dv])
            per_head = code if code in ("missing_scale", "softmax_axis") else ""
            heads.append(attention_mistake(Q, K, V, "output", per_head))
        if code == "heads_swapped":
            heads = heads[::-1]
        concat = np.hstack(heads)
        if code == "missing_output_projection" or p.get("ask") == "concat":
            return concat
        return mm(concat, WO)
    if kind == "softmax":
        x = np.atleast_2d(np.asarray(vals["x"], float))
        if code == "softmax_axis":
            return softmax_rows(x.T).T.reshape(e.shape)
        if code == "softmax_no_exp":
            return (x / x.sum(axis=1, keepdims=True)).reshape(e.shape)
    if kind == "causal_attention":
        Q, K, V = (np.asarray(vals[k], float) for k in "QKV")
        n, d = Q.shape
        scale = 1.0 if code == "missing_scale" else math.sqrt(d)
        S = mm(Q, K.T) / scale
        W = np.zeros((n, n))
        for i in range(n):
            if code == "mask_transposed":
                keep = list(range(i, n))
            elif code in ("no_mask", "mask_after_softmax"):
                keep = list(range(n))
            else:
                keep = list(range(i + 1))
            e = {j: math.exp(S[i, j] - max(S[i, k] for k in keep)) for j in keep}
            for j in keep:
                W[i, j] = e[j] / sum(e.values())
            if code == "mask_after_softmax":
                W[i, i + 1 :] = 0.0
        return mm(W, V)
    if kind == "attention_parameters":
        c = v.context
        d, h, dk, ask = c["d_model"], c["heads"], c["d_k"], c["ask"]
        if code == "one_head_only":
            return np.asarray(
                {"all_q": d * dk, "qkv": 3 * d * dk, "layer": 3 * d * dk + d * d}[ask]
            )
        if code == "forgot_w_o":
            return np.asarray(3 * d * d)
        # d_model_per_head: each head's W_Q, W_K, W_V d_model x d_model (W_O as it is)
        return np.asarray(
            {"one_q": d * d, "all_q": h * d * d, "qkv": 3 * h * d * d,
             "layer": 3 * h * d * d + d * d}[ask]
        )  # fmt: skip
    if kind == "transpose" and code in ("rotation_not_inverted", "rotation_ignored"):
        t = math.radians(vals["angle"])
        y = np.asarray(vals["y"], float)
        if code == "rotation_ignored":
            return y
        R = [[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]]
        return mm(R, y.reshape(-1, 1)).ravel()
    if code == "wrong_order":
        if kind == "composition":
            return mm(vals["T"], vals["S"])
        A, B = np.asarray(vals["A"], float), np.asarray(vals["B"], float)
        if kind == "transpose":
            return mm(A.T, B.T)
        if kind == "non_commutativity":
            return mm(A, B)
        return mm(B, A)
    if code == "elementwise_product":
        return np.asarray(vals["A"], float) * np.asarray(vals["B"], float)
    if code == "assumed_commutative":
        return np.zeros_like(np.asarray(vals["A"], float))
    if code == "ab_transposed":
        return mm(np.asarray(vals["A"], float), np.asarray(vals["B"], float)).T
    if kind == "inverse":
        A = np.asarray(vals["A"], float)
        if A.shape == (2, 2):
            (a, b), (c, d) = A
            det = a * d - b * c
            if code == "missing_determinant":
                return np.array([[d, -b], [-c, a]])
            return np.array([[d, b], [c, a]]) / det
        return e * np.linalg.det(A)
    if kind == "basis_coordinates":
        n = vals["n"]
        rows = np.array([np.asarray(vals[f"b{j + 1}"], float) for j in range(n)])
        if code == "basis_as_rows":
            return np.linalg.solve(rows, np.asarray(vals["v"], float))
        if code == "standard_coordinates":
            return np.asarray(vals["v"], float)
        if code == "swapped_unknowns":
            return e[[1, 0, *range(2, n)]]
    if kind == "map_matrix":
        images = np.asarray(v.context["images"], float)
        return images if code == "images_as_rows" else images.T
    if kind == "linear_equation":
        a, b, c = vals["a"], vals["b"], vals["c"]
        return np.asarray(a / (b - c) if code == "inverted_division" else (b + c) / a)
    if kind == "system_matrix_form":
        if code == "swapped_unknowns":
            return e[:, [1, 0, *range(2, e.shape[1])]]
        bad = e.copy()
        for i, j in v.context["moved"]:
            bad[i, j] = -bad[i, j]
        return bad
    if kind == "linear_system" and code == "swapped_unknowns":
        i, j = next(
            (i, j) for i in range(e.size) for j in range(i + 1, e.size) if abs(e[i] - e[j]) > 0.5
        )
        bad = e.copy()
        bad[[i, j]] = bad[[j, i]]
        return bad
    if kind == "linearity_compute":
        return np.asarray(vals["Tu"], float) + np.asarray(vals["Tv"], float)
    raise AssertionError(f"test has no mistaken answer for {kind}/{code}")


def answer_for(v, wrong: np.ndarray):
    if v.answer_form.type == "partial_matrix":
        mask = v.context["mask"]
        return [
            [repr(float(wrong[i, j])) if mask[i, j] else "" for j in range(wrong.shape[1])]
            for i in range(wrong.shape[0])
        ]
    return text(wrong)


# Multi-part exercises (steps: true) name their mistakes per part: tests/test_bank_parts.py.
CASES = [(ex_id, data) for ex_id, data in SPECS if not (data.get("params") or {}).get("steps")]


@pytest.mark.parametrize("ex_id,data", CASES, ids=[c[0] for c in CASES])
def test_detectors_fire_on_their_mistake_only(ex_id: str, data: dict) -> None:
    fired: set[str] = set()
    for seed in SEEDS:
        v = make_variant(data, seed, ex_id)
        right = grade_answer(v, expected_answer_text(v))
        assert right.status == "correct", (seed, right.message)
        assert right.mistakes == []
        exp = (
            np.asarray(v.expected, dtype=float)
            if v.answer_form.type not in ("choice", "index")
            else None
        )
        for code in v.detectors:
            # never on the right answer, called directly
            ctx = {**v.context, "tolerance": v.tolerance}
            assert detectors.DETECTORS[code](exp, exp, ctx) is None, (seed, code)
            wrong = mistaken_answer(data, v, code)
            verdict = grade_answer(v, answer_for(v, np.asarray(wrong, float)))
            assert verdict.status in ("incorrect", "partial"), (seed, code, verdict.message)
            assert code in verdict.mistake_codes, (
                seed,
                code,
                verdict.mistake_codes,
                verdict.message,
            )
            msg = next(m.message for m in verdict.mistakes if m.code == code)
            assert msg.endswith(".") and msg[0].isupper()
            fired.add(code)
    names = {"attention", "self_attention", "attention_fill"}
    if data["kind"] in names:
        assert {"missing_scale", "softmax_axis", "missing_softmax"} <= fired
    if data["kind"] == "multi_head_attention" and (data.get("params") or {}).get("heads", 2) > 1:
        assert {"softmax_axis", "single_head"} <= fired, fired


def test_multi_head_optional_mistakes_do_not_change_the_draws() -> None:
    """Naming the optional multi-head mistakes adds detectors only: the same seed still gives
    the same numbers and the same expected answer as a draw that ignores them."""
    from quizapp.bank.kinds import multi_head

    data = {"kind": "multi_head_attention", "params": {"heads": 2}}
    saved = multi_head.OPTIONAL_MULTI_HEAD
    try:
        multi_head.OPTIONAL_MULTI_HEAD = ()
        plain = [make_variant(data, seed) for seed in range(20)]
    finally:
        multi_head.OPTIONAL_MULTI_HEAD = saved
    named = [make_variant(data, seed) for seed in range(20)]
    for a, b in zip(plain, named, strict=True):
        assert np.array_equal(np.asarray(a.expected), np.asarray(b.expected))
        assert a.values.keys() == b.values.keys()
        for key in a.values:
            assert np.array_equal(np.asarray(a.values[key]), np.asarray(b.values[key])), key
        assert tuple(b.detectors[: len(a.detectors)]) == tuple(a.detectors)
        assert set(b.detectors) - set(a.detectors) <= {
            "softmax_axis",
            "single_head",
            "single_head_sqrt_dk",
        }
    assert any("single_head" in v.detectors for v in named)
    assert any("softmax_axis" in v.detectors for v in named)


def test_issue_detectors_are_all_registered() -> None:
    from quizapp.grading import registered_detectors

    for code in (
        "missing_scale",
        "softmax_axis",
        "missing_softmax",
        "scores_transposed",
        "missing_values",
        "swapped_unknowns",
        "wrong_order",
        "rows_dont_sum_to_one",
    ):
        assert code in registered_detectors()


def test_missing_scale_message_names_sqrt_d() -> None:
    data = {"kind": "attention", "params": {"ask": "weights", "d": 4}, "tolerance": {"decdig": 2}}
    v = make_variant(data, 3)
    wrong = attention_mistake(
        v.values["Q"], v.values["K"], v.values["V"], "weights", "missing_scale"
    )
    verdict = grade_answer(v, text(np.round(wrong, 2)))
    m = next(m for m in verdict.mistakes if m.code == "missing_scale")
    assert m.message == "You forgot to divide the scores by √d = 2 (d = 4 is the key dimension)."


def test_scores_transposed_on_a_non_square_score_matrix() -> None:
    data = {"kind": "retrieval_scores", "params": {"queries": 2, "keywords": 3}}
    v = make_variant(data, 5)
    Q, K = np.asarray(v.values["Q"], float), np.asarray(v.values["K"], float)
    verdict = grade_answer(v, text(mm(K, Q.T)))
    assert verdict.status == "incorrect"
    assert "scores_transposed" in verdict.mistake_codes
    assert "KQ" in next(m.message for m in verdict.mistakes if m.code == "scores_transposed")


def test_rows_dont_sum_to_one_tolerates_rounding() -> None:
    data = {"kind": "softmax", "params": {"shape": [2, 3]}, "tolerance": {"decdig": 2}}
    v = make_variant(data, 7)
    e = np.asarray(v.expected)
    ctx = {**v.context, "tolerance": v.tolerance}
    rounded = np.round(e, 2)
    assert detectors.rows_dont_sum_to_one(rounded, e, ctx) is None
    off = rounded.copy()
    off[1] *= 1.5
    m = detectors.rows_dont_sum_to_one(off, e, ctx)
    assert m is not None and "row 2" in m.message


def test_swapped_unknowns_names_the_unknowns() -> None:
    data = {"kind": "linear_system", "params": {"fixed": {"A": [[5, 1], [3, 2]], "y": [15, 16]}}}
    v = make_variant(data, 0)
    verdict = grade_answer(v, "[5, 2]")
    assert verdict.status == "incorrect"
    m = next(m for m in verdict.mistakes if m.code == "swapped_unknowns")
    assert "x and y" in m.message
    assert (
        grade_answer(v, "(2, 5)").status == "correct"
        or grade_answer(v, "[2, 5]").status == "correct"
    )


GUARDED = ("softmax_axis", "single_head", "single_head_sqrt_dk")


@pytest.mark.parametrize(
    "ex_id", ["05-attention/06-multi-head", "05-attention/07-multi-head-concat"]
)
def test_guarded_multi_head_mistakes_are_named_and_punished_as_typed(ex_id: str) -> None:
    """The bank's multi-head exercises guard every multi-head mistake: on every variant, the
    answer a student makes with it, rounded to 2 decimals as the prompt asks, is named and
    earns at most half the credit (the mistaken answers computed here, independently)."""
    data = dict(SPECS)[ex_id]
    assert set((data.get("params") or {}).get("guard", [])) == set(GUARDED)
    for seed in range(120):
        v = make_variant(data, seed, ex_id)
        assert set(GUARDED) <= set(v.detectors), (seed, v.detectors)
        for code in v.detectors:
            wrong = np.round(np.asarray(mistaken_answer(data, v, code), float), 2)
            verdict = grade_answer(v, text(wrong))
            assert verdict.score <= 0.5, (seed, code, verdict.score)
            assert code in verdict.mistake_codes, (seed, code, verdict.mistake_codes)


def test_guard_needs_two_heads() -> None:
    from quizapp.bank.kinds import get_kind

    kind = get_kind("multi_head_attention")
    with pytest.raises(ValueError, match="at least 2 heads"):
        kind.Params.model_validate({"heads": 1, "guard": ["softmax_axis"]})
    with pytest.raises(ValueError):
        kind.Params.model_validate({"heads": 2, "guard": ["no_such_mistake"]})
