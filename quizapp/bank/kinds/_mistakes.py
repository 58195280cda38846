"""What each named mistake would produce, computed from a variant's ``context``.

The kinds use these to make sure every mistake they name is distinguishable from the right
answer (resampling otherwise); ``quizapp/bank/detectors.py`` uses them to recognise the mistake in
a student's answer.  Every function takes the variant's context and returns the mistaken value as a
float array (or ``None`` when the mistake does not apply to this variant); every message function
returns the sentence shown to the student.  Pure: NumPy and ``quizapp.linalg`` only.

Context keys by ``family`` (set by the kinds):
- ``attention``: ``Q`` ``(n_q, d)``, ``K`` ``(n_k, d)``, optional ``V`` ``(n_k, d_v)``, ``ask`` one
  of ``scores`` (``QK^T``), ``scaled`` (``QK^T/sqrt(d)``), ``weights`` (row softmax) or ``output``
  (``weights @ V``).
- ``multi_head``: ``X``, ``W_Q``, ``W_K``, ``W_V`` (lists, one per head), ``W_O``, ``ask`` one of
  ``output`` or ``concat``.  Mistakes also named when they happen to apply (not guaranteed by the
  kind unless its ``guard`` param lists them): ``softmax_axis`` (each head's softmax down the
  columns), ``single_head`` (the whole ``W_Q``/``W_K``/``W_V`` used as one head, scaled by
  ``sqrt(heads * d_k)``) and ``single_head_sqrt_dk`` (the same, scaled by one head's ``sqrt(d_k)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from quizapp import linalg

from ._util import num

Ctx = Mapping[str, Any]


def _f(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=float)


def attention_pipeline(
    Q: Any,
    K: Any,
    V: Any,
    ask: str,
    *,
    scale: float | None = None,
    axis: int = -1,
    use_softmax: bool = True,
    transposed: bool = False,
    use_values: bool = True,
) -> np.ndarray:
    """``softmax(QK^T / scale) V`` cut at ``ask``, with switches that reproduce the mistakes.

    ``scale`` defaults to ``sqrt(d)``; ``transposed`` uses ``KQ^T``; ``axis=0`` normalises columns;
    ``use_softmax=False`` uses the scaled scores as weights; ``use_values=False`` stops at the
    weights.  Shapes as in :func:`quizapp.linalg.attention`.
    """
    q, k = _f(Q), _f(K)
    d = k.shape[1]
    s = k @ q.T if transposed else q @ k.T
    if ask == "scores":
        return s
    s = s / (np.sqrt(d) if scale is None else scale)
    if ask == "scaled":
        return s
    w = linalg.softmax(s, axis=axis) if use_softmax else s
    if ask == "weights" or not use_values:
        return w
    v = _f(V)
    if w.shape[1] != v.shape[0]:
        raise ValueError("weights and V do not chain")
    return w @ v


def _att(**kw: Any) -> Callable[[Ctx], np.ndarray | None]:
    def fn(ctx: Ctx) -> np.ndarray | None:
        try:
            return attention_pipeline(ctx["Q"], ctx["K"], ctx.get("V"), ctx["ask"], **kw)
        except (ValueError, KeyError, TypeError):
            return None

    return fn


def _att_missing_scale(ctx: Ctx) -> np.ndarray | None:
    if ctx["ask"] == "scores":
        return None
    return _att(scale=1.0)(ctx)


def _att_scale_by_d(ctx: Ctx) -> np.ndarray | None:
    if ctx["ask"] == "scores":
        return None
    return _att(scale=float(_f(ctx["K"]).shape[1]))(ctx)


def _att_axis(ctx: Ctx) -> np.ndarray | None:
    return _att(axis=0)(ctx) if ctx["ask"] in ("weights", "output") else None


def _att_no_softmax(ctx: Ctx) -> np.ndarray | None:
    return _att(use_softmax=False)(ctx) if ctx["ask"] in ("weights", "output") else None


def _att_no_values(ctx: Ctx) -> np.ndarray | None:
    return _att(use_values=False)(ctx) if ctx["ask"] == "output" else None


def _d(ctx: Ctx) -> int:
    return int(_f(ctx["K"]).shape[1])


def _mh(
    ctx: Ctx, *, scale_one: bool = False, project: bool = True, axis: int = -1
) -> np.ndarray | None:
    X = _f(ctx["X"])
    heads = []
    for wq, wk, wv in zip(ctx["W_Q"], ctx["W_K"], ctx["W_V"], strict=True):
        q, k, v = X @ _f(wq), X @ _f(wk), X @ _f(wv)
        heads.append(
            attention_pipeline(q, k, v, "output", scale=1.0 if scale_one else None, axis=axis)
        )
    concat = np.concatenate(heads, axis=1)
    if not project or ctx["ask"] == "concat":
        return concat
    return concat @ _f(ctx["W_O"])


def _mh_missing_projection(ctx: Ctx) -> np.ndarray | None:
    return _mh(ctx, project=False) if ctx["ask"] == "output" else None


def _mh_single_head(ctx: Ctx, *, head_scale: bool = False) -> np.ndarray | None:
    """One head over all the columns: ``W_Q``, ``W_K``, ``W_V`` used whole (not split), scaled
    by the square root of the whole width ``heads * d_k`` (or, with ``head_scale``, of one
    head's ``d_k`` as the prompt states it), then ``W_O`` (for ``ask: output``)."""
    if len(ctx["W_Q"]) < 2:
        return None
    X = _f(ctx["X"])
    wq, wk, wv = (
        np.concatenate([_f(w) for w in ctx[key]], axis=1) for key in ("W_Q", "W_K", "W_V")
    )
    scale = float(np.sqrt(_f(ctx["W_Q"][0]).shape[1])) if head_scale else None
    out = attention_pipeline(X @ wq, X @ wk, X @ wv, "output", scale=scale)
    return out if ctx["ask"] == "concat" else out @ _f(ctx["W_O"])


def _mh_heads_swapped(ctx: Ctx) -> np.ndarray | None:
    if len(ctx["W_Q"]) < 2:
        return None
    swapped = dict(ctx)
    for key in ("W_Q", "W_K", "W_V"):
        swapped[key] = list(reversed(ctx[key]))
    return _mh(swapped)


def _softmax_axis(ctx: Ctx) -> np.ndarray | None:
    x = _f(ctx["x"])
    return linalg.softmax(x, axis=0) if x.ndim == 2 else None


def _softmax_no_exp(ctx: Ctx) -> np.ndarray | None:
    x = _f(ctx["x"])
    total = np.sum(x, axis=-1, keepdims=True)
    if np.any(np.abs(total) < 1e-9):
        return None
    return x / total


def _causal(ctx: Ctx, *, scale: bool = True, mask: str = "before") -> np.ndarray:
    """Causal attention weights (or, for ``ask: output``, the output ``weights @ V``) with the
    switches of its mistakes: ``scale=False`` forgets the ``1/sqrt(d)``; ``mask`` is ``before``
    (right: -inf before the softmax), ``after`` (the full softmax, then the future set to 0,
    rows not renormalised), ``none`` or ``transposed`` (the past hidden instead of the
    future)."""
    q, k = _f(ctx["Q"]), _f(ctx["K"])
    s = q @ k.T / (np.sqrt(k.shape[1]) if scale else 1.0)
    n = s.shape[0]
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    if mask == "none":
        w = linalg.softmax(s)
    elif mask == "after":
        w = np.where(future, 0.0, linalg.softmax(s))
    else:
        hidden = future.T if mask == "transposed" else future
        kept = np.where(hidden, -np.inf, s)
        e = np.where(hidden, 0.0, np.exp(kept - kept.max(axis=1, keepdims=True)))
        w = e / e.sum(axis=1, keepdims=True)
    return w @ _f(ctx["V"]) if ctx.get("ask") == "output" else w


def _parameters(ctx: Ctx, mistake: str) -> np.ndarray | None:
    """Parameter counts of a multi-head layer (no biases) as the mistakes count them."""
    d, h, dk = int(ctx["d_model"]), int(ctx["heads"]), int(ctx["d_k"])
    ask = ctx["ask"]
    one_qkv, all_qkv, w_o = d * dk, d * dk * h, h * dk * d  # one head's W_Q; all heads'; W_O
    if mistake == "one_head_only":
        value = {"all_q": one_qkv, "qkv": 3 * one_qkv, "layer": 3 * one_qkv + w_o}.get(ask)
        return None if value is None else np.asarray(value, dtype=float)
    if mistake == "forgot_w_o":
        return np.asarray(3 * all_qkv, dtype=float) if ask == "layer" else None
    if mistake == "d_model_per_head":  # each head's W_Q, W_K, W_V taken as d_model x d_model
        value = {"one_q": d * d, "all_q": h * d * d, "qkv": 3 * h * d * d,
                 "layer": 3 * h * d * d + w_o}.get(ask)  # fmt: skip
        return None if value is None else np.asarray(value, dtype=float)
    return None


def _product_wrong_order(ctx: Ctx) -> np.ndarray | None:
    A, B, op = _f(ctx["A"]), _f(ctx["B"]), ctx["op"]
    try:
        if op == "AB":
            return B @ A
        if op == "BA":
            return A @ B
        if op == "(AB)^T":
            return A.T @ B.T
    except ValueError:
        return None
    return None


def _product_elementwise(ctx: Ctx) -> np.ndarray | None:
    A, B, op = _f(ctx["A"]), _f(ctx["B"]), ctx["op"]
    if op in ("AB", "BA") and A.shape == B.shape:
        return A * B
    return None


def _inverse_missing_det(ctx: Ctx) -> np.ndarray | None:
    A = _f(ctx["A"])
    return linalg.inverse(A) * linalg.determinant(A)


def _inverse_sign(ctx: Ctx) -> np.ndarray | None:
    A = _f(ctx["A"])
    if A.shape != (2, 2):
        return None
    (a, b), (c, d) = A
    return np.array([[d, b], [c, a]]) / linalg.determinant(A)


def _basis_as_rows(ctx: Ctx) -> np.ndarray | None:
    rows = _f(ctx["basis"])
    try:
        return linalg.solve(rows, ctx["v"])
    except linalg.LinalgError:
        return None


def _basis_standard(ctx: Ctx) -> np.ndarray | None:
    return _f(ctx["v"])


def _images_as_rows(ctx: Ctx) -> np.ndarray | None:
    if ctx.get("basis") is not None:
        return None
    return _f(ctx["images"])


def _basis_ignored(ctx: Ctx) -> np.ndarray | None:
    if ctx.get("basis") is None:
        return None
    return _f(ctx["images"]).T


def _equation_inverted(ctx: Ctx) -> np.ndarray | None:
    rhs = float(ctx["b"]) - float(ctx["c"])
    return None if rhs == 0 else np.asarray(float(ctx["a"]) / rhs)


def _equation_moved(ctx: Ctx) -> np.ndarray | None:
    if float(ctx["c"]) == 0:
        return None
    return np.asarray((float(ctx["b"]) + float(ctx["c"])) / float(ctx["a"]))


def _matrix_form_moved(ctx: Ctx) -> np.ndarray | None:
    moved = ctx.get("moved") or []
    if not moved:
        return None
    M = _f(ctx["M"]).copy()
    for i, j in moved:
        M[i, j] = -M[i, j]
    return M


def _linearity_scalars(ctx: Ctx) -> np.ndarray | None:
    return _f(ctx["Tu"]) + _f(ctx["Tv"])


#: (family, code) -> the value that mistake produces.
MISTAKES: dict[tuple[str, str], Callable[[Ctx], np.ndarray | None]] = {
    ("attention", "missing_scale"): _att_missing_scale,
    ("attention", "scale_by_d"): _att_scale_by_d,
    ("attention", "softmax_axis"): _att_axis,
    ("attention", "missing_softmax"): _att_no_softmax,
    ("attention", "scores_transposed"): _att(transposed=True),
    ("attention", "missing_values"): _att_no_values,
    ("multi_head", "missing_output_projection"): _mh_missing_projection,
    ("multi_head", "missing_scale"): lambda ctx: _mh(ctx, scale_one=True),
    ("multi_head", "heads_swapped"): _mh_heads_swapped,
    ("multi_head", "softmax_axis"): lambda ctx: _mh(ctx, axis=0),
    ("multi_head", "single_head"): _mh_single_head,
    ("multi_head", "single_head_sqrt_dk"): lambda ctx: _mh_single_head(ctx, head_scale=True),
    ("softmax", "softmax_axis"): _softmax_axis,
    ("softmax", "softmax_no_exp"): _softmax_no_exp,
    ("product", "wrong_order"): _product_wrong_order,
    ("product", "assumed_commutative"): lambda c: (
        np.zeros_like(_f(c["A"])) if c.get("op") == "AB-BA" else None
    ),
    ("product", "ab_transposed"): lambda c: (
        (_f(c["A"]) @ _f(c["B"])).T if c.get("op") == "BA" else None
    ),
    ("product", "elementwise_product"): _product_elementwise,
    ("inverse", "missing_determinant"): _inverse_missing_det,
    ("inverse", "inverse_sign"): _inverse_sign,
    ("basis", "basis_as_rows"): _basis_as_rows,
    ("basis", "standard_coordinates"): _basis_standard,
    ("map_matrix", "images_as_rows"): _images_as_rows,
    ("map_matrix", "basis_ignored"): _basis_ignored,
    ("equation", "inverted_division"): _equation_inverted,
    ("equation", "moved_without_sign"): _equation_moved,
    ("matrix_form", "moved_without_sign"): _matrix_form_moved,
    ("linearity", "linearity_scalars"): _linearity_scalars,
    ("causal", "no_mask"): lambda c: _causal(c, mask="none"),
    ("causal", "mask_after_softmax"): lambda c: _causal(c, mask="after"),
    ("causal", "mask_transposed"): lambda c: _causal(c, mask="transposed"),
    ("causal", "missing_scale"): lambda c: _causal(c, scale=False),
    ("parameters", "one_head_only"): lambda c: _parameters(c, "one_head_only"),
    ("parameters", "forgot_w_o"): lambda c: _parameters(c, "forgot_w_o"),
    ("parameters", "d_model_per_head"): lambda c: _parameters(c, "d_model_per_head"),
    ("rotation", "rotation_not_inverted"): lambda c: _f(c["R"]) @ _f(c["y"]),
    ("rotation", "rotation_ignored"): lambda c: _f(c["y"]),
}


def _sqrt_d(ctx: Ctx) -> str:
    d = _d(ctx)
    root = np.sqrt(d)
    shown = num(root) if root == round(root) else f"{root:.3f}"
    return f"√d = √{d} = {shown}" if root != round(root) else f"√d = {shown}"


def _msg_order(ctx: Ctx) -> str:
    op = ctx["op"]
    if op == "AB":
        what = ctx.get("order_names", ("A", "B"))
        return (
            f"You multiplied in the wrong order: that is {what[1]}{what[0]}, not "
            f"{what[0]}{what[1]}. Matrix multiplication is not commutative."
        )
    if op == "BA":
        return "You computed AB instead of BA. Matrix multiplication is not commutative."
    return "You computed AᵀBᵀ: transposing a product reverses the order, (AB)ᵀ = BᵀAᵀ."


def _msg_single_head(ctx: Ctx) -> str:
    return (
        f"You computed one head over all the columns of W_Q, W_K and W_V. Split them first: "
        f"head i uses its own block of d_k = {_f(ctx['W_Q'][0]).shape[1]} columns, attends on "
        f"its own (scaling by √d_k), and the heads are concatenated afterwards."
    )


#: (family, code) -> the sentence shown to the student.
MESSAGES: dict[tuple[str, str], Callable[[Ctx], str]] = {
    ("attention", "missing_scale"): lambda c: (
        f"You forgot to divide the scores by {_sqrt_d(c)} (d = {_d(c)} is the key dimension)."
    ),
    ("attention", "scale_by_d"): lambda c: (
        f"You divided the scores by d = {_d(c)}; scaled dot-product attention divides by √d."
    ),
    ("attention", "softmax_axis"): lambda c: (
        "You took the softmax down each column; it goes along each row, so that each query's "
        "weights over the keys sum to 1."
    ),
    ("attention", "missing_softmax"): lambda c: (
        "You used the scaled scores as weights without applying the softmax."
    ),
    ("attention", "scores_transposed"): lambda c: (
        "You transposed the scores: you computed KQᵀ, but query i's score for key j is row i, "
        "column j of QKᵀ."
    ),
    ("attention", "missing_values"): lambda c: (
        "You gave the attention weights; the output is the weights multiplied by V."
    ),
    ("multi_head", "missing_output_projection"): lambda c: (
        "You concatenated the heads but did not multiply by W_O."
    ),
    ("multi_head", "missing_scale"): lambda c: (
        "You forgot to divide each head's scores by √d_k, the square root of that head's key "
        "dimension."
    ),
    ("multi_head", "heads_swapped"): lambda c: (
        "You concatenated the heads in the wrong order: head 1 comes first."
    ),
    ("multi_head", "softmax_axis"): lambda c: (
        "In each head you took the softmax down each column; it goes along each row, so that "
        "each token's weights over the tokens sum to 1."
    ),
    ("multi_head", "single_head"): lambda c: _msg_single_head(c),
    ("multi_head", "single_head_sqrt_dk"): lambda c: _msg_single_head(c),
    ("softmax", "softmax_axis"): lambda c: (
        "You took the softmax down each column; here it goes along each row."
    ),
    ("softmax", "softmax_no_exp"): lambda c: (
        "You divided each entry by the sum without exponentiating first: softmax uses exp(xᵢ)."
    ),
    ("product", "wrong_order"): _msg_order,
    ("product", "assumed_commutative"): lambda c: (
        "You answered 0, as if AB = BA; matrix products do not commute in general, so compute "
        "AB and BA separately."
    ),
    ("product", "ab_transposed"): lambda c: (
        "That is (AB)^T = B^T A^T, not BA: transposing reverses the order but also transposes "
        "each factor."
    ),
    ("product", "elementwise_product"): lambda c: (
        "You multiplied entry by entry; a matrix product takes rows times columns."
    ),
    ("inverse", "missing_determinant"): lambda c: (
        f"You forgot to divide by the determinant det(A) = {num(linalg.determinant(c['A']))}."
    ),
    ("inverse", "inverse_sign"): lambda c: (
        "You swapped the diagonal entries but forgot to change the sign of the off-diagonal ones."
    ),
    ("basis", "basis_as_rows"): lambda c: (
        "You used the basis vectors as the rows of the matrix; they are its columns: "
        "v = c₁b₁ + c₂b₂ + ..."
    ),
    ("basis", "standard_coordinates"): lambda c: (
        "Those are v's coordinates in the standard basis; the question asks for the "
        "coefficients of the given basis vectors."
    ),
    ("map_matrix", "images_as_rows"): lambda c: (
        "You wrote the images as rows; the images of the basis vectors are the COLUMNS of the "
        "matrix."
    ),
    ("map_matrix", "basis_ignored"): lambda c: (
        "You put the images in the columns as if the basis were the standard one; here the "
        "inputs are other vectors, so A b_j = T(b_j) must be solved for A."
    ),
    ("equation", "inverted_division"): lambda c: (
        "You divided the wrong way round: from ax = b, x = b / a."
    ),
    ("equation", "moved_without_sign"): lambda c: (
        "You moved the constant to the other side without changing its sign."
    ),
    ("matrix_form", "moved_without_sign"): lambda c: (
        "A term moved to the other side of an equation changes its sign; you kept its sign."
    ),
    ("linearity", "linearity_scalars"): lambda c: (
        "You added T(u) and T(v) but forgot the scalars: T(au + bv) = aT(u) + bT(v)."
    ),
    ("causal", "no_mask"): lambda c: (
        "You left out the mask: a token may not attend to the tokens after it, so their scores "
        "are -∞ before the softmax and their weights 0."
    ),
    ("causal", "mask_after_softmax"): lambda c: (
        "You set the future weights to 0 after the softmax, so your rows no longer sum to 1. "
        "The mask comes first: -∞ for the later tokens, then the softmax over the rest."
    ),
    ("causal", "mask_transposed"): lambda c: (
        "You hid the earlier tokens instead of the later ones: token i may attend to tokens "
        "1 to i (on and below the diagonal)."
    ),
    ("causal", "missing_scale"): lambda c: (
        f"You forgot to divide the scores by {_sqrt_d(c)} before the mask and the softmax."
    ),
    ("parameters", "one_head_only"): lambda c: (
        f"You counted one head's matrices only; each of the {c['heads']} heads has its own "
        f"W_Q, W_K and W_V of {c['d_model']} × {c['d_k']}."
    ),
    ("parameters", "forgot_w_o"): lambda c: (
        "You left out W_O, which maps the concatenated heads back to d_model: another "
        f"{c['heads'] * c['d_k']} × {c['d_model']} parameters."
    ),
    ("parameters", "d_model_per_head"): lambda c: (
        f"Each head projects to d_k = {c['d_k']} dimensions, not to d_model = {c['d_model']}: "
        f"its W_Q is {c['d_model']} × {c['d_k']}."
    ),
    ("rotation", "rotation_not_inverted"): lambda c: (
        "You applied R to y, which rotates it once more; to undo R apply its inverse, "
        "R⁻¹ = Rᵀ (the rotation by the opposite angle)."
    ),
    ("rotation", "rotation_ignored"): lambda c: (
        "That is y itself. Rᵀ R = I says that Rᵀ undoes R: x = Rᵀ y, which is not y."
    ),
}


#: Mistaken values already computed for one context: code -> value (or None).  See
#: ``mistaken_value``'s ``cache``.
MistakeCache = dict[str, "np.ndarray | None"]


def mistaken_value(code: str, ctx: Ctx, cache: MistakeCache | None = None) -> np.ndarray | None:
    """The value mistake ``code`` produces for the variant with context ``ctx`` (or ``None``).

    ``cache``: a dict the caller keeps for ONE context (contexts that differ only in ``mask``
    count as one: no mistake reads the mask).  A value computed before is returned from it, a new
    one stored in it, so a kind that checks the same candidate twice (``distinguishable_codes``
    then ``credit_ok``, or several masks of one matrix) computes each mistake once.  The values
    must not be modified.
    """
    if cache is not None and code in cache:
        return cache[code]
    fn = MISTAKES.get((str(ctx.get("family", "")), code))
    if fn is None:
        out = None
    else:
        try:
            out = fn(ctx)
        except (KeyError, ValueError, TypeError, linalg.LinalgError):
            out = None
        out = None if out is None else np.asarray(out, dtype=float)
    if cache is not None:
        cache[code] = out
    return out


def mistake_message(code: str, ctx: Ctx) -> str:
    """The sentence naming mistake ``code`` for this variant."""
    return MESSAGES[(str(ctx.get("family", "")), code)](ctx)


def distinguishable_codes(
    expected: Any,
    ctx: Ctx,
    codes: tuple[str, ...],
    decimals: int = 2,
    cache: MistakeCache | None = None,
) -> tuple[str, ...]:
    """The codes among ``codes`` whose mistaken value exists and differs from ``expected``.
    ``cache``: as for ``mistaken_value``."""
    from ._util import distinct

    out = []
    for code in codes:
        v = mistaken_value(code, ctx, cache)
        if v is not None and distinct(expected, v, decimals):
            out.append(code)
    return tuple(out)


#: The attention mistakes every attention variant must punish (at most half the credit).
GUARDED_ATTENTION = ("missing_scale", "scores_transposed", "softmax_axis", "missing_softmax")
#: Largest share of the graded cells a named mistake may get right.
MAX_MISTAKE_CREDIT = 0.5


def mistake_credit(
    expected: Any,
    ctx: Ctx,
    codes: tuple[str, ...],
    decimals: int = 2,
    mask: np.ndarray | None = None,
    cache: MistakeCache | None = None,
) -> dict[str, float]:
    """For each code whose mistaken value exists with the expected shape: the share of graded
    cells (``mask`` True, or all) the mistaken value gets right.  "Right" is judged generously
    (``|a - e| <= 3·10**-decimals + 0.02·|e|``, wider than any attention exercise's tolerance),
    so a variant accepted by ``credit_ok`` gives the mistake at most that share under the real
    tolerance too.  ``cache``: as for ``mistaken_value``."""
    exp = _f(expected)
    out: dict[str, float] = {}
    for code in codes:
        v = mistaken_value(code, ctx, cache)
        if v is None or np.shape(v) != exp.shape:
            continue
        close = np.abs(_f(v) - exp) <= 3 * 10.0**-decimals + 0.02 * np.abs(exp)
        if mask is not None:
            close = close[np.asarray(mask, dtype=bool)]
        out[code] = float(np.mean(close)) if close.size else 1.0
    return out


def credit_ok(
    expected: Any,
    ctx: Ctx,
    codes: tuple[str, ...],
    decimals: int = 2,
    mask: np.ndarray | None = None,
    cache: MistakeCache | None = None,
) -> bool:
    """True when none of ``codes`` (plus ``GUARDED_ATTENTION`` for attention contexts) earns
    more than ``MAX_MISTAKE_CREDIT`` of the graded cells (see ``mistake_credit``).  ``cache``: as
    for ``mistaken_value``."""
    guard = tuple(
        dict.fromkeys(codes + (GUARDED_ATTENTION if ctx.get("family") == "attention" else ()))
    )
    credit = mistake_credit(expected, ctx, guard, decimals, mask, cache)
    return all(c <= MAX_MISTAKE_CREDIT for c in credit.values())


def credit_ok_as_typed(expected: Any, ctx: Ctx, codes: tuple[str, ...], decimals: int = 2) -> bool:
    """Like :func:`credit_ok` for ``codes`` only, but for the answer a student would type: the
    mistaken value rounded to ``decimals`` (as the prompt asks) as well as unrounded, against a
    margin widened by that rounding (``4·10**-decimals + 0.03·|e|``).  Used for the mistakes
    added after ``credit_ok`` was fixed (multi-head ``guard`` and optional codes), so the draws
    of the mistakes checked by ``credit_ok`` stay as they were."""
    exp = _f(expected)
    margin = 4 * 10.0**-decimals + 0.03 * np.abs(exp)
    for code in codes:
        v = mistaken_value(code, ctx)
        if v is None or np.shape(v) != exp.shape:
            continue
        for typed in (v, np.round(v, decimals)):
            if float(np.mean(np.abs(typed - exp) <= margin)) > MAX_MISTAKE_CREDIT:
                return False
    return True


def constant_column(values: np.ndarray) -> bool:
    """Whether a value matrix has a column with one value in every row: such a column of the
    attention output is the same for any weights, so wrong weights would earn its credit."""
    arr = _f(values)
    return arr.ndim == 2 and arr.shape[0] > 1 and bool(np.any(np.ptp(arr, axis=0) == 0))
