"""The pure NumPy reference solver: the single source of truth for every expected answer.

Every expected value in the exercise bank is computed here, never stored in YAML and never
recomputed elsewhere.  Functions take array-likes, convert them to ``float64`` arrays, check
shapes and raise :class:`LinalgError` (a ``ValueError``) with a message saying which argument is
wrong and how.  Pure: imports NumPy only.

Conventions (as in the course deck and Vaswani et al. 2017, "Attention Is All You Need"):
queries, keys and values are stored one per ROW, so ``Q`` is ``(n_queries, d)``, ``K`` is
``(n_keys, d)``, ``V`` is ``(n_keys, d_v)``; the score of query ``i`` for key ``j`` is row ``i``,
column ``j`` of ``Q K^T``; softmax of a score matrix is taken along each row (over the keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "LinalgError",
    "as_matrix",
    "as_vector",
    "attention",
    "basis_coordinates",
    "compose",
    "determinant",
    "inverse",
    "map_matrix_from_images",
    "matmul",
    "matvec",
    "multi_head_attention",
    "rotation_matrix",
    "scaled_scores",
    "self_attention",
    "softmax",
    "solve",
    "transpose",
]


class LinalgError(ValueError):
    """Bad input to the reference solver (wrong shape, singular matrix, non-finite entry)."""


def _array(x: Any, name: str) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise LinalgError(f"{name} must be an array of numbers ({exc})") from None
    if not np.isfinite(a).all():  # the method: no np.all dispatch (~2x on small arrays)
        raise LinalgError(f"{name} has a non-finite entry (NaN or infinity)")
    return a


def as_vector(x: Any, name: str = "x") -> np.ndarray:
    """``x`` as a 1-D float array of shape ``(n,)``.

    Raises :class:`LinalgError` if ``x`` is not 1-D, is empty or has a non-finite entry.
    """
    a = _array(x, name)
    if a.ndim != 1 or a.size == 0:
        raise LinalgError(f"{name} must be a non-empty vector (1-D), got shape {a.shape}")
    return a


def as_matrix(x: Any, name: str = "A") -> np.ndarray:
    """``x`` as a 2-D float array of shape ``(m, n)``.

    Raises :class:`LinalgError` if ``x`` is not 2-D, is empty or has a non-finite entry.
    """
    a = _array(x, name)
    if a.ndim != 2 or a.size == 0:
        raise LinalgError(f"{name} must be a non-empty matrix (2-D), got shape {a.shape}")
    return a


def _square(x: Any, name: str) -> np.ndarray:
    a = as_matrix(x, name)
    if a.shape[0] != a.shape[1]:
        raise LinalgError(f"{name} must be square, got shape {a.shape}")
    return a


# --------------------------------------------------------------------------------------------
# Matrices, vectors, maps


def transpose(A: Any) -> np.ndarray:
    """``A^T``: shape ``(m, n)`` -> ``(n, m)``, ``(A^T)_{ij} = A_{ji}``.

    A 1-D vector is returned unchanged (NumPy's convention: a vector has no orientation).
    Raises :class:`LinalgError` for a non-numeric or 0-D input.
    """
    a = _array(A, "A")
    if a.ndim == 0 or a.ndim > 2:
        raise LinalgError(f"A must be a vector or a matrix, got shape {a.shape}")
    return a.T.copy()


def matmul(A: Any, B: Any) -> np.ndarray:
    """The matrix product ``AB``: ``(m, n) @ (n, p) -> (m, p)``, ``(AB)_{ij} = sum_k A_ik B_kj``.

    Raises :class:`LinalgError` if either is not a matrix or the inner dimensions differ.
    """
    return _product(as_matrix(A, "A"), as_matrix(B, "B"))


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``matmul`` of two matrices already checked by ``as_matrix`` (no second check)."""
    if a.shape[1] != b.shape[0]:
        raise LinalgError(
            f"cannot multiply A {a.shape} by B {b.shape}: A has {a.shape[1]} columns "
            f"but B has {b.shape[0]} rows"
        )
    return a @ b


def matvec(A: Any, x: Any) -> np.ndarray:
    """The matrix-vector product ``Ax``: ``(m, n)`` times ``(n,)`` -> ``(m,)``.

    Entry ``i`` is row ``i`` of ``A`` times ``x`` (the deck's "row times column").
    Raises :class:`LinalgError` if ``x`` has not ``n`` entries.
    """
    a = as_matrix(A, "A")
    v = as_vector(x, "x")
    if a.shape[1] != v.shape[0]:
        raise LinalgError(
            f"cannot multiply A {a.shape} by x of length {v.shape[0]}: A has {a.shape[1]} columns"
        )
    return a @ v


def compose(*maps: Any) -> np.ndarray:
    """The matrix of the composition ``T_1 ∘ T_2 ∘ ... ∘ T_k`` (apply ``T_k`` first).

    ``compose(S, T)`` is ``S @ T``: applying ``T`` and then ``S`` to ``x`` is ``S(Tx) = (ST)x``.
    Matrix multiplication is associative, so the grouping does not matter.
    Raises :class:`LinalgError` if no map is given or neighbouring shapes do not chain.
    """
    if not maps:
        raise LinalgError("compose needs at least one matrix")
    result = as_matrix(maps[0], "maps[0]")
    for i, m in enumerate(maps[1:], start=1):
        b = as_matrix(m, f"maps[{i}]")
        if result.shape[1] != b.shape[0]:
            raise LinalgError(
                f"maps[{i}] has shape {b.shape}, which does not chain with a product of "
                f"shape {result.shape}"
            )
        result = result @ b
    return result


def determinant(A: Any) -> float:
    """``det(A)`` of a square matrix (``numpy.linalg.det``, LU based).

    Raises :class:`LinalgError` if ``A`` is not square.
    """
    return float(np.linalg.det(_square(A, "A")))


def _check_nonsingular(a: np.ndarray, name: str) -> None:
    # Condition number test: NumPy's solve only raises on an exactly singular LU pivot, which
    # misses nearly singular matrices whose "solution" is rounding noise.
    if np.linalg.matrix_rank(a) < a.shape[0] or np.linalg.cond(a) > 1e12:
        raise LinalgError(
            f"{name} is singular (its determinant is 0), so there is no unique answer"
        )


def solve(A: Any, y: Any) -> np.ndarray:
    """The unique ``x`` with ``Ax = y`` (a square system of linear equations).

    Shapes: ``A`` ``(n, n)``, ``y`` ``(n,)`` -> ``x`` ``(n,)`` (or ``y`` ``(n, k)`` -> ``(n, k)``).
    Example from the deck: ``5x + y = 15, 3x + 2y = 16`` -> ``solve([[5, 1], [3, 2]], [15, 16])``
    is ``[2, 5]``.
    Raises :class:`LinalgError` if ``A`` is not square, the shapes disagree, or ``A`` is singular
    (then the system has no solution or infinitely many).  Uses ``numpy.linalg.solve`` (LAPACK gesv).
    """
    a = _square(A, "A")
    b = _array(y, "y")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise LinalgError(
            f"y must have {a.shape[0]} rows to match A {a.shape}, got shape {b.shape}"
        )
    _check_nonsingular(a, "A")
    return np.linalg.solve(a, b)


def inverse(A: Any) -> np.ndarray:
    """``A^{-1}``, the matrix with ``A^{-1} A = A A^{-1} = I`` (``numpy.linalg.inv``).

    Shape ``(n, n)`` -> ``(n, n)``.  Raises :class:`LinalgError` if ``A`` is not square or is
    singular.
    """
    a = _square(A, "A")
    _check_nonsingular(a, "A")
    return np.linalg.inv(a)


def basis_coordinates(basis: Sequence[Any] | np.ndarray, v: Any) -> np.ndarray:
    """Coordinates ``c`` of ``v`` in the basis ``b_1, ..., b_n``: ``v = c_1 b_1 + ... + c_n b_n``.

    ``basis`` is a sequence of ``n`` vectors of length ``n`` (or an ``(n, n)`` array whose ROWS
    are the basis vectors).  With ``B`` the matrix whose COLUMNS are the basis vectors, ``c`` solves
    ``B c = v``.  Returns shape ``(n,)``.
    Raises :class:`LinalgError` if the vectors are not ``n`` vectors of length ``n`` or are
    linearly dependent (then they are not a basis).
    """
    rows = as_matrix(basis, "basis")
    vec = as_vector(v, "v")
    if rows.shape[0] != rows.shape[1] or rows.shape[1] != vec.shape[0]:
        raise LinalgError(
            f"a basis of R^{vec.shape[0]} needs {vec.shape[0]} vectors of length "
            f"{vec.shape[0]}, got {rows.shape[0]} of length {rows.shape[1]}"
        )
    B = rows.T
    if np.linalg.matrix_rank(B) < B.shape[0]:
        raise LinalgError("the basis vectors are linearly dependent, so they are not a basis")
    return solve(B, vec)


def map_matrix_from_images(
    images: Sequence[Any] | np.ndarray, basis: Sequence[Any] | np.ndarray | None = None
) -> np.ndarray:
    """The matrix ``A`` (in standard coordinates) of the linear map ``T`` with ``T(b_j) = images[j]``.

    ``images``: ``n`` vectors of length ``m`` (the images of the basis vectors, as ROWS of an
    ``(n, m)`` array).  ``basis``: ``n`` vectors of length ``n`` (rows), default the standard basis
    ``e_1, ..., e_n``.  A linear map is fixed by the images of a basis (the deck's "unique matrix
    for fixed bases"): with ``B = [b_1 ... b_n]`` and ``W = [T(b_1) ... T(b_n)]`` (columns),
    ``A B = W`` so ``A = W B^{-1}``; for the standard basis ``A``'s columns are the images.
    Returns shape ``(m, n)``.  Raises :class:`LinalgError` on shape mismatch or a dependent basis.
    """
    W = as_matrix(images, "images").T
    n = W.shape[1]
    if basis is None:
        return W.copy()
    B = as_matrix(basis, "basis").T
    if B.shape != (n, n):
        raise LinalgError(f"basis must be {n} vectors of length {n}, got shape {B.shape[::-1]}")
    if np.linalg.matrix_rank(B) < n:
        raise LinalgError("the basis vectors are linearly dependent, so they are not a basis")
    # A = W B^{-1}  <=>  B^T A^T = W^T
    return solve(B.T, W.T).T


def rotation_matrix(theta: float, *, degrees: bool = False) -> np.ndarray:
    """The 2x2 matrix rotating the plane counter-clockwise by ``theta``.

    ``[[cos θ, -sin θ], [sin θ, cos θ]]``; orthogonal, so ``R^T R = I`` and ``R^{-1} = R^T``
    (the deck's "A^T A = I if A is a rotation").  ``theta`` in radians, or degrees if
    ``degrees=True``.  Raises :class:`LinalgError` if ``theta`` is not finite.
    """
    t = float(theta)
    if not np.isfinite(t):
        raise LinalgError("theta must be a finite angle")
    if degrees:
        t = np.deg2rad(t)
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s], [s, c]])


# --------------------------------------------------------------------------------------------
# Softmax and attention


def softmax(x: Any, axis: int = -1) -> np.ndarray:
    """The softmax of ``x`` along ``axis``: ``softmax(x)_i = exp(x_i) / sum_j exp(x_j)``.

    The deck's formula; for a matrix of scores the default ``axis=-1`` normalises each ROW, so each
    query's weights over the keys sum to 1 (as in Vaswani et al. 2017, eq. 1).  Computed stably as
    ``exp(x - max(x)) / sum(exp(x - max(x)))``, which is exact because softmax is invariant under
    adding a constant to every entry (so large inputs never overflow).
    Shape: same as ``x`` (1-D or 2-D).  Raises :class:`LinalgError` for a 0-D or empty input, a
    non-finite entry, or an ``axis`` the array does not have.
    """
    a = _array(x, "x")
    if a.ndim == 0 or a.size == 0:
        raise LinalgError(f"softmax needs a non-empty vector or matrix, got shape {a.shape}")
    if not -a.ndim <= axis < a.ndim:
        raise LinalgError(f"axis {axis} is out of range for an array with {a.ndim} dimensions")
    shifted = a - a.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def scaled_scores(Q: Any, K: Any) -> np.ndarray:
    """The scaled dot-product scores ``Q K^T / sqrt(d)``.

    ``Q``: ``(n_q, d)`` queries as rows; ``K``: ``(n_k, d)`` keys as rows; ``d`` is the key
    dimension (Vaswani et al. 2017, eq. 1: "we scale the dot products by 1/sqrt(d_k)").
    Returns ``(n_q, n_k)``: entry ``(i, j)`` is query ``i``'s score for key ``j``.
    Raises :class:`LinalgError` if the query and key dimensions differ.
    """
    q = as_matrix(Q, "Q")
    k = as_matrix(K, "K")
    if q.shape[1] != k.shape[1]:
        raise LinalgError(
            f"queries and keys must have the same dimension d: Q has {q.shape[1]} columns, "
            f"K has {k.shape[1]}"
        )
    return (q @ k.T) / np.sqrt(k.shape[1])


def attention(Q: Any, K: Any, V: Any) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention ``softmax(Q K^T / sqrt(d)) V`` (Vaswani et al. 2017, eq. 1).

    Shapes: ``Q`` ``(n_q, d)``, ``K`` ``(n_k, d)``, ``V`` ``(n_k, d_v)``.  Returns
    ``(output, weights)``: ``output`` ``(n_q, d_v)``, ``weights`` ``(n_q, n_k)`` (each row sums to
    1; row ``i`` says how much query ``i`` attends to each key).
    Raises :class:`LinalgError` if the dimensions do not match (``V`` needs one row per key).
    """
    weights = softmax(scaled_scores(Q, K), axis=-1)
    v = as_matrix(V, "V")
    if v.shape[0] != weights.shape[1]:
        raise LinalgError(
            f"V must have one row per key: K has {weights.shape[1]} rows, V has {v.shape[0]}"
        )
    return weights @ v, weights


def self_attention(X: Any, W_Q: Any, W_K: Any, W_V: Any) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention of the token embeddings ``X`` (one token per row).

    ``Q = X W_Q``, ``K = X W_K``, ``V = X W_V``, then :func:`attention` (the "Illustrated
    Transformer" / Vaswani et al. 2017 formulation, row-vector convention).  Shapes: ``X``
    ``(n, d_model)``, ``W_Q`` and ``W_K`` ``(d_model, d_k)``, ``W_V`` ``(d_model, d_v)``.
    Returns ``(output (n, d_v), weights (n, n))``.  Raises :class:`LinalgError` on a shape mismatch.
    """
    x = as_matrix(X, "X")
    q = _product(x, as_matrix(W_Q, "W_Q"))
    k = _product(x, as_matrix(W_K, "W_K"))
    v = _product(x, as_matrix(W_V, "W_V"))
    return attention(q, k, v)


def multi_head_attention(
    X: Any,
    W_Q: Sequence[Any] | np.ndarray,
    W_K: Sequence[Any] | np.ndarray,
    W_V: Sequence[Any] | np.ndarray,
    W_O: Any,
) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Multi-head self-attention (Vaswani et al. 2017, section 3.2.2).

    ``head_i = attention(X W_Q[i], X W_K[i], X W_V[i])``; ``MultiHead(X) = concat(head_1, ...,
    head_h) W_O`` (heads concatenated side by side, along the columns).  Shapes: ``X``
    ``(n, d_model)``; ``W_Q[i]``, ``W_K[i]`` ``(d_model, d_k)``; ``W_V[i]`` ``(d_model, d_v)``;
    ``W_O`` ``(h * d_v, d_out)``.  Each head scales by its own key dimension ``d_k``.
    Returns ``(output (n, d_out), heads [(n, d_v)] * h, weights [(n, n)] * h)``.
    Raises :class:`LinalgError` if the numbers of heads differ or any shape does not match.
    """
    h = len(W_Q)
    if h == 0 or len(W_K) != h or len(W_V) != h:
        raise LinalgError(
            f"W_Q, W_K and W_V must hold one matrix per head (at least one): got "
            f"{len(W_Q)}, {len(W_K)}, {len(W_V)}"
        )
    heads: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    for i in range(h):
        try:
            out, w = self_attention(X, W_Q[i], W_K[i], W_V[i])
        except LinalgError as exc:
            raise LinalgError(f"head {i + 1}: {exc}") from None
        heads.append(out)
        weights.append(w)
    concat = np.concatenate(heads, axis=1)
    wo = as_matrix(W_O, "W_O")
    if wo.shape[0] != concat.shape[1]:
        raise LinalgError(
            f"W_O must have {concat.shape[1]} rows (heads x d_v) to follow the concatenated "
            f"heads, got shape {wo.shape}"
        )
    return concat @ wo, heads, weights


def causal_attention(Q: Any, K: Any, V: Any | None = None) -> tuple[np.ndarray | None, np.ndarray]:
    """Masked (causal) scaled dot-product attention, as in a decoder (Vaswani et al. 2017,
    section 3.2.3: "setting to -inf all values in the input of the softmax which correspond to
    illegal connections").  Token ``i`` attends to tokens ``j <= i`` only: the scores with
    ``j > i`` are ``-inf`` before the row softmax, so their weights are 0 and each row's weights
    over the earlier tokens still sum to 1.

    Shapes: ``Q`` ``(n, d)``, ``K`` ``(n, d)`` (the same tokens), ``V`` ``(n, d_v)`` or None.
    Returns ``(output (n, d_v) or None, weights (n, n))``, the weights lower triangular.  Raises
    :class:`LinalgError` when ``Q`` and ``K`` hold different numbers of tokens.
    """
    scores = scaled_scores(Q, K)
    n = scores.shape[0]
    if scores.shape[1] != n:
        raise LinalgError(
            f"a causal mask needs one key per query (the same tokens): got {n} queries and "
            f"{scores.shape[1]} keys"
        )
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    shifted = np.where(future, -np.inf, scores)
    shifted = shifted - shifted.max(axis=1, keepdims=True)
    e = np.where(future, 0.0, np.exp(shifted))
    weights = e / e.sum(axis=1, keepdims=True)
    if V is None:
        return None, weights
    v = as_matrix(V, "V")
    if v.shape[0] != n:
        raise LinalgError(f"V must have one row per token: {n} tokens, V has {v.shape[0]} rows")
    return weights @ v, weights


def cosine_similarity(q: Any, k: Any) -> float:
    """The cosine of the angle between ``q`` and ``k``: ``q·k / (|q| |k|)``, in ``[-1, 1]``.

    Unlike the dot product it does not grow with the vectors' lengths.  Raises
    :class:`LinalgError` for vectors of different lengths or a zero vector.
    """
    a, b = as_vector(q, "q"), as_vector(k, "k")
    if a.shape != b.shape:
        raise LinalgError(f"q and k must have the same length, got {a.size} and {b.size}")
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 or nb == 0:
        raise LinalgError("the cosine of a zero vector is not defined")
    return float(a @ b) / (na * nb)
