"""``steps: true`` of the attention kinds: each intermediate matrix as a part of its own.

The parts follow the pipeline (Vaswani et al. 2017, eq. 1): ``S = QK^T``, ``Z = S / sqrt(d)``,
``W = softmax(Z)`` by rows, ``O = WV`` (``self_attention`` first asks for ``Q = XW_Q``,
``K = XW_K``, ``V = XW_V``; ``multi_head_attention`` for each head's output, their
concatenation and its product with ``W_O``).  Each later part's follow-through expression
(``quizapp/bank/parts.py``) is written over the variant's values and the earlier parts, and
each part names the mistakes of its stage (the detectors of the whole kind, computed from the
true inputs).  The draw is the kind's own (``steps`` changes nothing that is drawn: the parts
are computed from the drawn matrices afterwards).  Pure: NumPy and ``quizapp.linalg`` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quizapp import linalg
from quizapp.bank.types import AnswerForm, Generated, Part, SolutionStep

from ._mistakes import MISTAKES, distinguishable_codes


def _codes(expected: Any, ctx: dict[str, Any], extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    family = ctx["family"]
    codes = tuple(code for fam, code in MISTAKES if fam == family)
    return distinguishable_codes(expected, ctx, codes) + extra


def _part(
    name: str,
    prompt: str,
    expected: np.ndarray,
    step: SolutionStep | list[SolutionStep] | None,
    follow: str | None,
    uses: tuple[str, ...],
    ctx: dict[str, Any] | None,
    rows: list[str] | None = None,
    cols: list[str] | None = None,
    extra: tuple[str, ...] = (),
) -> Part:
    steps = [step] if isinstance(step, SolutionStep) else list(step or [])
    return Part(
        name=name,
        prompt=prompt,
        expected=np.asarray(expected, dtype=float),
        answer_form=AnswerForm(
            type="matrix", shape=np.shape(expected), row_labels=rows, col_labels=cols
        ),
        solution=steps,
        follow_through=follow,
        uses=uses,
        detectors=_codes(expected, ctx, extra) if ctx else (),
        context=dict(ctx or {}),
    )


def _with_parts(generated: Generated, parts: list[Part]) -> Generated:
    """``generated`` (the kind's single-answer variant) as a multi-part one: the same values
    and prompt placeholders, one answer per part, the worked solution part by part."""
    from quizapp.bank.parts import flat_solution

    generated.expected = {p.name: p.expected for p in parts}
    generated.answer_form = AnswerForm(type="parts")
    generated.solution = flat_solution(parts)
    generated.detectors = ()
    generated.parts = parts
    return generated


def attention_parts(
    generated: Generated,
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    ask: str,
    steps: list[SolutionStep],
    rows: list[str] | None,
    cols: list[str] | None,
    *,
    d_name: str = "d",
    first: list[Part] | None = None,
    names: tuple[str, str] = ("Q", "K"),
) -> Generated:
    """The parts ``S``, ``Z``, ``W``, ``O`` of scaled dot-product attention, up to ``ask``
    (``scaled``: S and Z; ``weights``: up to W; ``output``: all four).  ``steps`` are the
    kind's worked steps in that order (``attention_steps``); ``first`` parts come before
    (self-attention's projections, named ``names``: then S is computed from them)."""
    parts = list(first or [])
    q, k = names
    base = {"family": "attention", "Q": Q, "K": K, "V": V}
    d = K.shape[1]
    from_parts = bool(first)
    S = linalg.matmul(Q, linalg.transpose(K))
    if from_parts:
        # Self-attention: the scores come from the student's own Q and K, scaled at once.
        Z = linalg.scaled_scores(Q, K)
        parts.append(
            _part(
                "Z",
                f"Compute the scaled scores $Z = {q}{k}^T / \\sqrt{{d_k}}$ with your ${q}$ and "
                f"${k}$ ($d_k = {d}$), rounded to 2 decimal places.",
                Z,
                steps[:2],
                f"{q} @ {k}.T / sqrt({d_name})",
                (q, k),
                {**base, "ask": "scaled"},
                rows,
                cols,
            )
        )
        rest = steps[2:]
    else:
        parts.append(
            _part(
                "S",
                "Compute the scores $S = QK^T$: entry $(i, j)$ is query $i$ times key $j$ "
                "(exact values).",
                S,
                steps[0],
                None,
                (),
                {**base, "ask": "scores"},
                rows,
                cols,
            )
        )
        if ask == "scores":
            return _with_parts(generated, parts)
        parts.append(
            _part(
                "Z",
                f"Scale the scores: $Z = S / \\sqrt{{d}}$ with $d = {d}$, rounded to 2 decimal "
                "places.",
                linalg.scaled_scores(Q, K),
                steps[1],
                f"S / sqrt({d_name})",
                ("S",),
                {**base, "ask": "scaled"},
                rows,
                cols,
            )
        )
        rest = steps[2:]
    if ask == "scaled":
        return _with_parts(generated, parts)
    W = linalg.softmax(linalg.scaled_scores(Q, K), axis=-1)
    parts.append(
        _part(
            "W",
            "Take the softmax of each row of $Z$: $W = \\mathrm{softmax}(Z)$, rounded to 2 "
            "decimal places (each row sums to 1).",
            W,
            rest[0] if rest else None,
            "softmax(Z)",
            ("Z",),
            {**base, "ask": "weights"},
            rows,
            cols,
            extra=("rows_dont_sum_to_one",),
        )
    )
    if ask == "weights":
        return _with_parts(generated, parts)
    parts.append(
        _part(
            "O",
            "Multiply by the values: $O = WV$, rounded to 2 decimal places.",
            W @ V,
            rest[1] if len(rest) > 1 else None,
            "W @ V" if not from_parts else "W @ V",
            ("W", "V") if from_parts else ("W",),
            {**base, "ask": "output"},
            rows,
        )
    )
    return _with_parts(generated, parts)


def self_attention_parts(
    generated: Generated,
    X: np.ndarray,
    WQ: np.ndarray,
    WK: np.ndarray,
    WV: np.ndarray,
    ask: str,
    steps: list[SolutionStep],
    toks: list[str],
) -> Generated:
    """The parts ``Q``, ``K``, ``V`` (the projections), then ``Z``, ``W`` (and ``O``) from
    them.  ``steps``: the kind's attention steps (``attention_steps`` of the projections)."""
    Q, K, V = X @ WQ, X @ WK, X @ WV
    first = [
        _part(
            name,
            f"Project the embeddings: ${name} = XW_{name}$ (one token per row, exact values).",
            value,
            SolutionStep(
                f"{name} = XW_{name}",
                f"Row $i$ of ${name}$ is token $i$'s embedding (row $i$ of $X$) times $W_{name}$.",
                value=np.asarray(value),
                row_labels=toks,
            ),
            None,
            (),
            None,
            toks,
        )
        for name, value in (("Q", Q), ("K", K), ("V", V))
    ]
    return attention_parts(generated, Q, K, V, ask, steps, toks, toks, d_name="d_k", first=first)


def multi_head_parts(
    generated: Generated,
    ctx: dict[str, Any],
    heads: list[np.ndarray],
    concat: np.ndarray,
    out: np.ndarray,
    ask: str,
    steps: list[SolutionStep],
    toks: list[str],
) -> Generated:
    """The parts ``H1`` ... ``Hh`` (each head's output), ``C`` (the heads side by side) and,
    for ``ask: output``, ``O = C W_O``.  ``steps``: the kind's steps (split, one per head,
    concatenate, multiply by W_O)."""
    X = np.asarray(ctx["X"], dtype=float)
    parts: list[Part] = []
    h = len(heads)
    for i, head in enumerate(heads):
        head_ctx = {
            "family": "attention",
            "Q": X @ np.asarray(ctx["W_Q"][i], dtype=float),
            "K": X @ np.asarray(ctx["W_K"][i], dtype=float),
            "V": X @ np.asarray(ctx["W_V"][i], dtype=float),
            "ask": "output",
        }
        parts.append(
            _part(
                f"H{i + 1}",
                f"Compute head {i + 1}'s output $H_{i + 1} = \\mathrm{{softmax}}(Q_{i + 1}"
                f"K_{i + 1}^T / \\sqrt{{d_k}})\\,V_{i + 1}$ (its own columns of $W_Q$, $W_K$, "
                "$W_V$), rounded to 2 decimal places.",
                head,
                ([steps[0]] if i == 0 else []) + [steps[1 + i]],
                None,
                (),
                head_ctx,
                toks,
            )
        )
    names = tuple(f"H{i + 1}" for i in range(h))
    concat_ctx = {**ctx, "ask": "concat"}
    parts.append(
        _part(
            "C",
            "Concatenate the heads side by side: $C = ["
            + " \\mid ".join(f"H_{i + 1}" for i in range(h))
            + "]$, to 2 decimal places.",
            concat,
            steps[1 + h],
            f"hstack({', '.join(names)})",
            names,
            concat_ctx,
            toks,
        )
    )
    if ask == "output":
        parts.append(
            _part(
                "O",
                "Multiply by the output projection: $O = C\\,W_O$, rounded to 2 decimal places.",
                out,
                steps[2 + h],
                "C @ W_O",
                ("C",),
                {**ctx, "ask": "output"},
                toks,
            )
        )
    return _with_parts(generated, parts)
