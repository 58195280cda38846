"""Helpers shared by the exercise kinds: parameter types, sampling, number and LaTeX formatting.

Not a kind module: it registers nothing.  Pure (NumPy and pydantic only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar, overload

import numpy as np
from pydantic import AfterValidator, Field

T = TypeVar("T")

#: How many draws a kind makes before it gives up on its constraints.  Every kind's constraints
#: are met by a large fraction of draws, so reaching this means the params make them impossible.
MAX_TRIES = 2000


class ImpossibleParams(ValueError):
    """The params make the kind's guarantees impossible to meet (e.g. a range too small)."""


#: Largest magnitude of a range bound in any kind's params (as for expression variables): the
#: numbers a student works with by hand, and products that stay exact in floating point.
MAX_RANGE = 10**6


def _check_range(r: tuple[int, int]) -> tuple[int, int]:
    if r[0] > r[1]:
        raise ValueError(f"integers range [{r[0]}, {r[1]}] is reversed: write [{r[1]}, {r[0]}]")
    if max(abs(r[0]), abs(r[1])) > MAX_RANGE:
        raise ValueError(f"integers range [{r[0]}, {r[1]}]: bounds must be within ±{MAX_RANGE}")
    return r


def _check_frange(r: tuple[float, float]) -> tuple[float, float]:
    if r[0] > r[1]:
        raise ValueError(f"range [{r[0]}, {r[1]}] is reversed: write [{r[1]}, {r[0]}]")
    if not max(abs(r[0]), abs(r[1])) <= MAX_RANGE:
        raise ValueError(f"range [{r[0]}, {r[1]}]: bounds must be within ±{MAX_RANGE}")
    return r


#: An inclusive integer range ``[low, high]`` as written in YAML.
IntRange = Annotated[tuple[int, int], AfterValidator(_check_range)]
#: An inclusive real range ``[low, high]``.
FloatRange = Annotated[tuple[float, float], AfterValidator(_check_frange)]
#: Decimal places students are asked to give (softmax and attention kinds).
Decimals = Annotated[int, Field(ge=1, le=4)]


def draw(rng: np.random.Generator, make: Callable[[], T | None], what: str) -> T:
    """Call ``make`` until it returns something other than ``None`` (rejection sampling).

    ``make`` draws from ``rng`` and returns ``None`` when a guarantee fails.  Deterministic given
    the generator's state.  Raises :class:`ImpossibleParams` naming ``what`` after
    :data:`MAX_TRIES` failures.
    """
    for _ in range(MAX_TRIES):
        out = make()
        if out is not None:
            return out
    raise ImpossibleParams(
        f"no variant meets the guarantee ({what}) after {MAX_TRIES} draws: widen the ranges"
    )


@overload
def ints(rng: np.random.Generator, r: Sequence[int], shape: None = None) -> int: ...
@overload
def ints(
    rng: np.random.Generator, r: Sequence[int], shape: int | tuple[int, ...]
) -> np.ndarray: ...
def ints(rng: np.random.Generator, r: Sequence[int], shape: Any = None) -> np.ndarray | int:
    """Integers drawn uniformly from the inclusive range ``r`` (int64 array, or int if no shape)."""
    out = rng.integers(r[0], r[1] + 1, size=shape)
    return out if shape is not None else int(out)


def distinct(a: Any, b: Any, decimals: int = 2) -> bool:
    """True when a mistake's value ``b`` is clearly different from the right answer ``a``.

    Different shapes count as distinct.  Otherwise some cell must differ by more than 5 %
    relative and ``3 * 10^-decimals`` absolute (``numpy.isclose(b, a, rtol=0.05, atol=...)`` is
    False somewhere), so every tolerance an exercise uses (default 1 % relative, or ``decimals``
    decimal places) tells the two apart.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape:
        return True
    return not np.isclose(y, x, rtol=0.05, atol=3 * 10.0**-decimals).all()


def not_saturated(weights: np.ndarray, decimals: int) -> bool:
    """True when no softmax weight rounds to 0 or 1 at ``decimals`` places."""
    eps = 10.0**-decimals
    w = np.asarray(weights)
    return bool((w >= eps).all() and (w <= 1 - eps).all())


def tidy(a: Any) -> np.ndarray:
    """A solver result with floating-point noise removed (rounded to 9 decimals, ``-0`` -> ``0``).

    Kinds whose answers are exact small integers or short decimals (solutions, coordinates,
    inverses with ``|det| <= 5``) use this so ``2.0000000000000004`` is shown and stored as ``2``.
    """
    return np.round(np.asarray(a, dtype=float), 9) + 0.0


def clean(a: Any) -> Any:
    """An array with integer values as an int64 array (so prompts show ``2``, not ``2.0``)."""
    x = np.asarray(a)
    if x.dtype.kind == "f" and np.isfinite(x).all() and (x == np.round(x)).all():
        x = x.astype(np.int64)
    if x.ndim == 0:
        return x.item()
    return x


def num(x: float, digits: int = 4) -> str:
    """A number for prose and LaTeX: integers without a point, others to ``digits`` significant."""
    v = float(x)
    if v == round(v) and abs(v) < 1e15:
        return str(int(round(v)))
    return f"{v:.{digits}g}"


def num_apart(a: float, b: float, digits: int = 4) -> tuple[str, str]:
    """``a`` and ``b`` written by :func:`num` with the fewest significant digits, from ``digits``
    up to 15, that show them different (``-53.9999`` and ``-54``, not ``-54`` twice); as
    ``num(a, 15)``, ``num(b, 15)`` when even 15 digits do not tell them apart."""
    for d in range(digits, 16):
        left, right = num(a, d), num(b, d)
        if left != right:
            return left, right
    return num(a, 15), num(b, 15)


def paren(x: float, digits: int = 4) -> str:
    """A number as a factor: negative numbers in parentheses, ``(-3)``."""
    t = num(x, digits)
    return f"({t})" if t.startswith("-") else t


def minus(a: float, b: float) -> str:
    """``a - b`` written without a double sign: ``4 - 3``, ``4 + 3`` for ``b = -3``."""
    return f"{num(a)} - {num(b)}" if b >= 0 else f"{num(a)} + {num(-b)}"


def latex_matrix(a: Any, digits: int = 4) -> str:
    """``a`` (1-D: a column vector; 2-D) as a LaTeX ``pmatrix``."""
    x = np.asarray(a, dtype=float)
    if x.ndim == 0:
        return num(float(x), digits)
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    rows = [" & ".join(num(v, digits) for v in row) for row in x]
    return r"\begin{pmatrix} " + r" \\ ".join(rows) + r" \end{pmatrix}"


def latex_row(a: Any, digits: int = 4) -> str:
    """A vector as a LaTeX row tuple ``(1, 2, 3)``."""
    return "(" + ", ".join(num(v, digits) for v in np.asarray(a, dtype=float).ravel()) + ")"


def linear_combination(coeffs: Sequence[float], names: Sequence[str]) -> str:
    """``3x - y + 2z`` from coefficients and unknown names (zero terms left out; ``0`` if all are)."""
    parts: list[str] = []
    for c, name in zip(coeffs, names, strict=True):
        c = float(c)
        if c == 0:
            continue
        mag = abs(c)
        body = name if mag == 1 else f"{num(mag)}{name}"
        if not parts:
            parts.append(("-" if c < 0 else "") + body)
        else:
            parts.append(("- " if c < 0 else "+ ") + body)
    return " ".join(parts) if parts else "0"


def unknown_names(n: int) -> list[str]:
    """``x, y`` / ``x, y, z`` / ``x_1, ..., x_n`` for ``n`` unknowns."""
    if n == 2:
        return ["x", "y"]
    if n == 3:
        return ["x", "y", "z"]
    return [f"x_{i + 1}" for i in range(n)]


def markdown_table(a: Any, row_labels: Sequence[str], col_labels: Sequence[str]) -> str:
    """A Markdown table of ``a`` with row and column labels (for labelled matrices in prompts)."""
    x = np.asarray(a, dtype=float)
    head = "| | " + " | ".join(col_labels) + " |"
    sep = "|---|" + "---|" * len(col_labels)
    body = [
        f"| **{r}** | " + " | ".join(num(v) for v in row) + " |"
        for r, row in zip(row_labels, x, strict=True)
    ]
    return "\n".join([head, sep, *body])


def given_grid(expected: np.ndarray, mask: np.ndarray, decimals: int) -> list[list[str | None]]:
    """The display grid of a partly filled matrix: given cells rounded, blanks (``mask``) None."""
    return [
        [None if mask[i, j] else f"{expected[i, j]:.{decimals}f}" for j in range(expected.shape[1])]
        for i in range(expected.shape[0])
    ]


#: Words from the course deck for labelled examples.
QUERY_WORDS = ["dog", "cat", "fish", "bird", "horse", "rabbit", "parrot", "hamster"]
KEYWORD_WORDS = [
    "food blog",
    "pet tips",
    "vet advice",
    "training",
    "toys",
    "grooming",
    "adoption",
    "travel",
]
#: Short token sequences for self-attention (no repeated token within one sequence).
SENTENCES = [
    ["the", "animal", "was", "tired"],
    ["it", "was", "too", "tired"],
    ["the", "cat", "sat", "down"],
    ["dogs", "love", "long", "walks"],
    ["the", "street", "was", "wide"],
    ["attention", "is", "all", "you", "need"],
    ["animal", "didn't", "cross", "street"],
]


def pick_words(rng: np.random.Generator, pool: Sequence[str], n: int) -> list[str]:
    """``n`` distinct words from ``pool`` in a random order."""
    if n > len(pool):
        raise ImpossibleParams(f"asked for {n} labels but only {len(pool)} are available")
    idx = rng.permutation(len(pool))[:n]
    return [pool[i] for i in idx]


def pick_tokens(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` consecutive distinct tokens of one of :data:`SENTENCES` (or ``t1..tn``)."""
    fits = [s for s in SENTENCES if len(s) >= n and len(set(s)) == len(s)]
    if not fits:
        return [f"t{i + 1}" for i in range(n)]
    s = fits[int(rng.integers(len(fits)))]
    start = int(rng.integers(len(s) - n + 1))
    return s[start : start + n]
