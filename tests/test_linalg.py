"""The reference solver against independent computations (explicit loops and hand values)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from quizapp import linalg
from quizapp.linalg import LinalgError


def loop_matmul(A, B):
    A = [list(map(float, r)) for r in A]
    B = [list(map(float, r)) for r in B]
    return [
        [sum(A[i][k] * B[k][j] for k in range(len(B))) for j in range(len(B[0]))]
        for i in range(len(A))
    ]


def loop_softmax(row):
    exps = [math.exp(v) for v in row]
    total = sum(exps)
    return [e / total for e in exps]


def loop_attention(Q, K, V):
    d = len(K[0])
    scores = [[sum(q[t] * k[t] for t in range(d)) / math.sqrt(d) for k in K] for q in Q]
    weights = [loop_softmax(r) for r in scores]
    out = [[sum(w[j] * V[j][c] for j in range(len(V))) for c in range(len(V[0]))] for w in weights]
    return out, weights


def test_solve_the_decks_system():
    # 5x + y = 15, 3x + 2y = 16 -> x = 2, y = 5 (the deck's worked example)
    assert linalg.solve([[5, 1], [3, 2]], [15, 16]) == pytest.approx([2, 5])


def test_solve_by_cramers_rule():
    rng = np.random.default_rng(1)
    for _ in range(50):
        a, b, c, d = rng.integers(-9, 10, 4)
        if a * d - b * c == 0:
            continue
        e, f = rng.integers(-20, 21, 2)
        det = a * d - b * c
        x = (e * d - b * f) / det
        y = (a * f - e * c) / det
        assert linalg.solve([[a, b], [c, d]], [e, f]) == pytest.approx([x, y])


def test_solve_singular_says_so():
    with pytest.raises(LinalgError, match="singular"):
        linalg.solve([[1, 2], [2, 4]], [1, 2])
    with pytest.raises(LinalgError, match="square"):
        linalg.solve([[1, 2, 3], [2, 4, 5]], [1, 2])
    with pytest.raises(LinalgError, match="rows"):
        linalg.solve([[1, 2], [3, 4]], [1, 2, 3])
    with pytest.raises(LinalgError, match="non-finite"):
        linalg.solve([[1, np.nan], [3, 4]], [1, 2])


def test_inverse_of_a_2x2_by_hand():
    # [[a, b], [c, d]]^-1 = 1/(ad - bc) [[d, -b], [-c, a]]
    assert linalg.inverse([[2, 1], [5, 3]]) == pytest.approx(np.array([[3, -1], [-5, 2]]))
    assert linalg.inverse([[4, 7], [2, 6]]) == pytest.approx(np.array([[6, -7], [-2, 4]]) / 10)
    with pytest.raises(LinalgError, match="singular"):
        linalg.inverse([[1, 2], [2, 4]])


def test_determinant_by_hand():
    assert linalg.determinant([[5, 1], [3, 2]]) == pytest.approx(7)
    assert linalg.determinant([[2, 0, 1], [1, 3, 2], [1, 1, 1]]) == pytest.approx(
        2 * (3 - 2) - 0 + 1 * (1 - 3)
    )


def test_matmul_matvec_transpose_against_loops():
    rng = np.random.default_rng(2)
    A = rng.integers(-5, 6, (3, 4))
    B = rng.integers(-5, 6, (4, 2))
    assert linalg.matmul(A, B) == pytest.approx(np.array(loop_matmul(A, B)))
    x = rng.integers(-5, 6, 4)
    assert linalg.matvec(A, x) == pytest.approx(
        [sum(A[i][k] * x[k] for k in range(4)) for i in range(3)]
    )
    T = linalg.transpose(A)
    assert T.shape == (4, 3)
    assert all(T[j][i] == A[i][j] for i in range(3) for j in range(4))
    with pytest.raises(LinalgError, match="columns"):
        linalg.matmul(A, A)
    with pytest.raises(LinalgError, match="columns"):
        linalg.matvec(A, [1, 2])


def test_row_times_column_from_the_deck():
    # (a b c d)(w x y z)^T = aw + bx + cy + dz
    assert linalg.matmul([[1, 2, 3, 4]], [[5], [6], [7], [8]]) == pytest.approx(
        np.array([[5 + 12 + 21 + 32]])
    )


def test_compose_applies_the_last_map_first():
    S = [[2, 0], [0, 3]]
    T = [[0, -1], [1, 0]]
    x = np.array([1.0, 2.0])
    assert linalg.compose(S, T) @ x == pytest.approx(np.array(S) @ (np.array(T) @ x))
    A, B, C = np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2), np.eye(2) + 1
    assert linalg.compose(A, B, C) == pytest.approx(np.array(loop_matmul(loop_matmul(A, B), C)))
    with pytest.raises(LinalgError):
        linalg.compose()


def test_basis_coordinates_by_hand():
    # v = 2*(1, 1) + 3*(1, -1) = (5, -1)
    assert linalg.basis_coordinates([[1, 1], [1, -1]], [5, -1]) == pytest.approx([2, 3])
    with pytest.raises(LinalgError, match="not a basis"):
        linalg.basis_coordinates([[1, 2], [2, 4]], [1, 1])
    with pytest.raises(LinalgError, match="vectors of length"):
        linalg.basis_coordinates([[1, 2, 3], [2, 4, 5]], [1, 1])


def test_map_matrix_from_images():
    # standard basis: the images are the columns
    assert linalg.map_matrix_from_images([[1, 2], [3, 4]]) == pytest.approx(
        np.array([[1, 3], [2, 4]])
    )
    # T(1, 1) = (3, 1), T(1, -1) = (1, 5): A = [[2, 1], [3, -2]] (check: A(1,1) = (3, 1), A(1,-1) = (1, 5))
    A = linalg.map_matrix_from_images([[3, 1], [1, 5]], basis=[[1, 1], [1, -1]])
    assert A == pytest.approx(np.array([[2, 1], [3, -2]]))
    # non-square: R^2 -> R^3
    A = linalg.map_matrix_from_images([[1, 0, 2], [0, 1, -1]])
    assert A.shape == (3, 2)


def test_rotation_matrix():
    R = linalg.rotation_matrix(90, degrees=True)
    assert R == pytest.approx(np.array([[0, -1], [1, 0]]), abs=1e-12)
    R = linalg.rotation_matrix(math.pi / 6)
    assert R @ np.array([1, 0]) == pytest.approx([math.sqrt(3) / 2, 0.5])
    assert R.T @ R == pytest.approx(np.eye(2))


def test_softmax_by_hand_and_stable():
    s = linalg.softmax([1.0, 2.0])
    assert s == pytest.approx([math.e / (math.e + math.e**2), math.e**2 / (math.e + math.e**2)])
    assert linalg.softmax([1000.0, 1001.0]) == pytest.approx(linalg.softmax([0.0, 1.0]))
    M = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    rows = linalg.softmax(M)
    for i in range(2):
        assert rows[i] == pytest.approx(loop_softmax(M[i]))
    cols = linalg.softmax(M, axis=0)
    for j in range(3):
        assert cols[:, j] == pytest.approx(loop_softmax(M[:, j]))
    with pytest.raises(LinalgError, match="axis"):
        linalg.softmax(M, axis=2)
    with pytest.raises(LinalgError):
        linalg.softmax([])


def test_scaled_scores_and_attention_against_loops():
    rng = np.random.default_rng(3)
    Q = rng.integers(-3, 4, (2, 4))
    K = rng.integers(-3, 4, (3, 4))
    V = rng.integers(-3, 4, (3, 2))
    assert linalg.scaled_scores(Q, K) == pytest.approx(
        np.array(loop_matmul(Q, np.array(K).T)) / 2.0
    )
    out, w = linalg.attention(Q, K, V)
    ref_out, ref_w = loop_attention(Q.tolist(), K.tolist(), V.tolist())
    assert out == pytest.approx(np.array(ref_out))
    assert w == pytest.approx(np.array(ref_w))
    with pytest.raises(LinalgError, match="dimension"):
        linalg.scaled_scores(Q, K[:, :3])
    with pytest.raises(LinalgError, match="one row per key"):
        linalg.attention(Q, K, V[:2])


def test_self_attention_projects_first():
    rng = np.random.default_rng(4)
    X = rng.integers(-2, 3, (3, 4))
    WQ, WK, WV = (rng.integers(-2, 3, (4, 2)) for _ in range(3))
    out, w = linalg.self_attention(X, WQ, WK, WV)
    ref_out, ref_w = loop_attention(loop_matmul(X, WQ), loop_matmul(X, WK), loop_matmul(X, WV))
    assert out == pytest.approx(np.array(ref_out))
    assert w == pytest.approx(np.array(ref_w))


def test_multi_head_attention_split_concat_project():
    rng = np.random.default_rng(5)
    X = rng.integers(-2, 3, (3, 4))
    WQ = [rng.integers(-2, 3, (4, 2)) for _ in range(2)]
    WK = [rng.integers(-2, 3, (4, 2)) for _ in range(2)]
    WV = [rng.integers(-2, 3, (4, 2)) for _ in range(2)]
    WO = rng.integers(-2, 3, (4, 3))
    out, heads, weights = linalg.multi_head_attention(X, WQ, WK, WV, WO)
    refs = [
        loop_attention(loop_matmul(X, WQ[i]), loop_matmul(X, WK[i]), loop_matmul(X, WV[i]))
        for i in range(2)
    ]
    concat = [refs[0][0][r] + refs[1][0][r] for r in range(3)]
    assert out == pytest.approx(np.array(loop_matmul(concat, WO)))
    assert heads[1] == pytest.approx(np.array(refs[1][0]))
    assert weights[0] == pytest.approx(np.array(refs[0][1]))
    with pytest.raises(LinalgError, match="W_O"):
        linalg.multi_head_attention(X, WQ, WK, WV, WO[:3])
    with pytest.raises(LinalgError, match="one matrix per head"):
        linalg.multi_head_attention(X, WQ, WK[:1], WV, WO)
    with pytest.raises(LinalgError, match="head 2"):
        linalg.multi_head_attention(X, WQ, [WK[0], WK[1][:3]], WV, WO)


def test_bad_input_gets_a_message():
    with pytest.raises(LinalgError, match="array of numbers"):
        linalg.matmul([["a", "b"]], [[1], [2]])
    with pytest.raises(LinalgError, match="matrix"):
        linalg.matmul([1, 2], [[1], [2]])


# ------------------------------------------------------------------ properties (hypothesis)


finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


@settings(deadline=None, max_examples=100)
@given(arrays(float, st.tuples(st.integers(1, 4), st.integers(1, 5)), elements=finite), finite)
def test_softmax_rows_sum_to_one_and_shift_invariant(x: np.ndarray, c: float) -> None:
    s = linalg.softmax(x)
    assert np.all(s >= 0)
    assert s.sum(axis=1) == pytest.approx(np.ones(x.shape[0]))
    assert linalg.softmax(x + c) == pytest.approx(s, abs=1e-9)


@settings(deadline=None, max_examples=50)
@given(
    arrays(float, (2, 3), elements=st.integers(-3, 3).map(float)),
    arrays(float, (3, 3), elements=st.integers(-3, 3).map(float)),
    arrays(float, (3, 2), elements=st.integers(-3, 3).map(float)),
)
def test_attention_weights_are_a_convex_combination(Q, K, V) -> None:
    out, w = linalg.attention(Q, K, V)
    assert w.sum(axis=1) == pytest.approx(np.ones(2))
    # each output row lies between the smallest and largest value in each column of V
    assert np.all(out >= V.min(axis=0) - 1e-9) and np.all(out <= V.max(axis=0) + 1e-9)


def test_causal_attention_masks_the_future_before_the_softmax() -> None:
    from quizapp.linalg import causal_attention, cosine_similarity

    Q = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    K = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 1.0]])
    V = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out, W = causal_attention(Q, K, V)
    for i in range(3):
        s = [float(Q[i] @ K[j]) / math.sqrt(2) for j in range(i + 1)]
        e = [math.exp(v) for v in s]
        want = [v / sum(e) for v in e] + [0.0] * (2 - i)
        assert W[i] == pytest.approx(want)
    assert out == pytest.approx(W @ V)
    assert out[0] == pytest.approx(V[0])
    with pytest.raises(LinalgError):
        causal_attention(Q[:2], K)
    assert cosine_similarity([1, 0], [3, 3]) == pytest.approx(1 / math.sqrt(2))
    with pytest.raises(LinalgError):
        cosine_similarity([0, 0], [1, 1])
