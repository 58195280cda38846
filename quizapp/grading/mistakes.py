"""Mistake detectors: name the misconception behind a wrong answer.

A detector is ``fn(answer, expected, context) -> Mistake | None``:

- ``answer``: the parsed answer as a float ndarray.  When its shape could be matched to the
  expected one (same shape, or a 1-D/0-D answer with the same entries) it has the expected shape;
  otherwise it has its own shape (e.g. the transpose's).  Blank cells are NaN.
- ``expected``: the expected float ndarray (0-D, 1-D or 2-D).
- ``context``: the exercise's context (``Q``, ``K``, ``d``, ...) plus two keys :func:`grade` always
  sets: ``tolerance`` (the exercise's :class:`Tolerance`) and ``mask`` (bool array shaped like
  ``expected``, True = graded cell, or ``None`` for all cells).  Compare with
  ``cells_close(x, y, context["tolerance"])`` so a detector agrees with the grader.

Detectors run only on wrong answers (status ``partial`` or ``incorrect``) and never change the
score.  The generic ones (:data:`GENERIC`: ``transpose``, ``sign``, ``scale``, ``rounding``) run on
every wrong answer; others run when their code is in ``grade(..., detectors=...)``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from quizapp.grading.compare import cells_close
from quizapp.grading.types import Mistake, Tolerance

Detector = Callable[[np.ndarray, np.ndarray, Mapping[str, Any]], "Mistake | None"]

_REGISTRY: dict[str, Detector] = {}
#: Codes of the detectors that run on every wrong answer, in this order.
GENERIC: tuple[str, ...] = ("transpose", "sign", "scale", "rounding")
_log = logging.getLogger(__name__)


def register_detector(code: str) -> Callable[[Detector], Detector]:
    """Decorator: register ``fn`` as the detector for mistake ``code``.

    Raises ``ValueError`` if ``code`` is already registered to another function (re-registering
    the same function, e.g. on module reload, is allowed).
    """

    def decorate(fn: Detector) -> Detector:
        old = _REGISTRY.get(code)
        if old is not None and getattr(old, "__qualname__", None) != fn.__qualname__:
            raise ValueError(f"mistake detector {code!r} is registered twice")
        _REGISTRY[code] = fn
        return fn

    return decorate


def registered_detectors() -> dict[str, Detector]:
    """Code -> detector, for every registered detector (generic ones included)."""
    return dict(_REGISTRY)


def run_detectors(
    answer: np.ndarray,
    expected: np.ndarray,
    context: Mapping[str, Any],
    extra: Sequence[str] = (),
) -> list[Mistake]:
    """Run the generic detectors, then those named in ``extra``; return the mistakes found.

    Raises ``ValueError`` for a code in ``extra`` that no detector is registered for (a bug in the
    exercise kind).  A detector that raises is logged and skipped: it must never break grading.
    """
    unknown = [code for code in extra if code not in _REGISTRY]
    if unknown:
        raise ValueError(f"no mistake detector is registered for {', '.join(unknown)}")
    found: list[Mistake] = []
    for code in dict.fromkeys([*GENERIC, *extra]):
        try:
            mistake = _REGISTRY[code](answer, expected, context)
        except Exception:  # a detector's bug must not cost the student a verdict
            _log.exception("mistake detector %r failed", code)
            continue
        if mistake is not None and mistake.code not in [m.code for m in found]:
            found.append(mistake)
    return found


# --------------------------------------------------------------------------- helpers


def _tolerance(context: Mapping[str, Any]) -> Tolerance:
    tol = context.get("tolerance")
    return tol if isinstance(tol, Tolerance) else Tolerance()


def _graded(context: Mapping[str, Any], shape: tuple[int, ...]) -> np.ndarray:
    mask = context.get("mask")
    if mask is None:
        return np.ones(shape, dtype=bool)
    mask = np.asarray(mask, dtype=bool)
    return mask if mask.shape == shape else np.ones(shape, dtype=bool)


def cell_name(index: tuple[int, ...]) -> str:
    """'row 2, column 1' for a 2-D index, 'entry 3' for 1-D, 'your answer' for 0-D (1-based)."""
    if len(index) == 2:
        return f"row {index[0] + 1}, column {index[1] + 1}"
    if len(index) == 1:
        return f"entry {index[0] + 1}"
    return "your answer"


def _list_cells(indices: list[tuple[int, ...]], limit: int = 3) -> str:
    names = [cell_name(i) for i in indices[:limit]]
    if len(indices) > limit:
        names.append(f"{len(indices) - limit} more")
    text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return text[0].upper() + text[1:]


def format_factor(c: float) -> str:
    """A readable factor: '2', '1/2', '-3', '√2', '1/√2', else 4 significant figures."""
    frac = Fraction(c).limit_denominator(100)
    if abs(float(frac) - c) <= 1e-9 * abs(c):
        return str(frac)
    sq = Fraction(c * c).limit_denominator(100)
    if abs(float(sq) - c * c) <= 1e-9 * c * c:
        sign = "-" if c < 0 else ""
        if sq.denominator == 1:
            return f"{sign}√{sq.numerator}"
        if sq.numerator == 1:
            return f"{sign}1/√{sq.denominator}"
    return f"{c:.4g}"


# --------------------------------------------------------------------------- generic detectors


@register_detector("transpose")
def detect_transpose(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> Mistake | None:
    """The answer equals the expected matrix transposed (rows and columns swapped).

    Needs a 2-D expected value that is not symmetric and a 2-D answer shaped like its transpose;
    for a partly filled matrix only the graded cells are compared.
    """
    if expected.ndim != 2 or answer.ndim != 2 or answer.shape != expected.T.shape:
        return None
    tol = _tolerance(context)
    graded = _graded(context, expected.shape)
    if expected.shape == expected.T.shape and cells_close(expected, expected.T, tol)[graded].all():
        return None
    # A square answer is graded at the mask's own positions; a non-square one is laid out like the
    # transpose, so the mask is transposed with it.
    where = graded if answer.shape == expected.shape else graded.T
    if not cells_close(answer, expected.T, tol)[where].all():
        return None
    if 1 in expected.shape:
        what = "a column" if expected.shape[1] == 1 else "a row"
        other = "a row" if expected.shape[1] == 1 else "a column"
        return Mistake("transpose", f"You wrote {other} where {what} is asked for (transposed).")
    return Mistake(
        "transpose", "You transposed the matrix: your rows are the columns of the right answer."
    )


def _same_shape(answer: np.ndarray, expected: np.ndarray) -> bool:
    return answer.shape == expected.shape


def _wrong(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> np.ndarray | None:
    """Bool mask of the graded cells that are wrong, or None (shapes differ, or nothing wrong)."""
    if not _same_shape(answer, expected):
        return None
    wrong = _graded(context, expected.shape) & ~cells_close(answer, expected, _tolerance(context))
    return wrong if wrong.any() else None


@register_detector("sign")
def detect_sign(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> Mistake | None:
    """Every wrong cell equals minus the expected cell (and that cell is not 0).

    All graded cells wrong this way: "the opposite sign"; some: names up to three cells.
    """
    tol = _tolerance(context)
    wrong = _wrong(answer, expected, context)
    if wrong is None:
        return None
    flipped = cells_close(answer, -expected, tol) & ~cells_close(-expected, expected, tol)
    if not flipped[wrong].all():
        return None
    graded = _graded(context, expected.shape)
    if wrong[graded].all():
        if expected.ndim == 0 or graded.sum() == 1:
            return Mistake("sign", "Your answer has the wrong sign.")
        return Mistake("sign", "Every entry has the wrong sign.")
    cells = [tuple(int(i) for i in idx) for idx in np.argwhere(wrong)]
    verb = "has" if len(cells) == 1 else "have"
    return Mistake("sign", f"{_list_cells(cells)} {verb} the wrong sign.")


@register_detector("scale")
def detect_scale(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> Mistake | None:
    """The answer is the expected value times one constant ``c`` (not 0, 1 or -1); reports ``c``.

    ``c`` is the least-squares factor ``sum(a*e) / sum(e*e)`` over graded cells, accepted when
    ``c * expected`` is within tolerance of every graded cell.  At least two nonzero expected cells
    are needed (one number is always *some* multiple of another); for a single number only a power
    of ten is reported (a slipped decimal point or a percentage).
    """
    if not _same_shape(answer, expected):
        return None
    graded = _graded(context, expected.shape)
    a, e = answer[graded], expected[graded]
    if not np.isfinite(a).all():
        return None
    nonzero = int(np.count_nonzero(e))
    if nonzero == 0:
        return None
    denom = float(np.dot(e, e))
    c = float(np.dot(a, e)) / denom
    if not math.isfinite(c) or c == 0 or math.isclose(abs(c), 1.0, rel_tol=1e-6):
        return None
    if not cells_close(a, c * e, _tolerance(context)).all():
        return None
    if nonzero < 2:
        k = round(math.log10(abs(c)))
        if c < 0 or k == 0 or not math.isclose(c, 10.0**k, rel_tol=1e-6):
            return None
        return Mistake(
            "scale",
            f"Your answer is {format_factor(c)} times the right value: check the decimal point "
            "(or a percentage).",
        )
    return Mistake("scale", f"Every entry is {format_factor(c)} times the right value.")


def _is_rounding(a: float, e: float, unit: float) -> bool:
    """``a`` is ``e`` rounded to a multiple of ``unit`` (either direction at a tie)."""
    q = a / unit
    return abs(q - round(q)) <= 1e-6 and abs(a - e) <= 0.5 * unit * (1 + 1e-6)


def _rounding_unit(a: float, e: float) -> float | None:
    """The finest power-of-ten unit to which ``a`` is a rounding of ``e``, if any."""
    if a == 0 or e == 0 or not math.isfinite(a):
        return None
    top = math.floor(math.log10(abs(e)))
    for p in range(top - 16, top + 1):  # finest first
        unit = 10.0**p
        if _is_rounding(a, e, unit):
            return unit
    return None


@register_detector("rounding")
def detect_rounding(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> Mistake | None:
    """Every wrong cell is its expected value rounded to too few digits.

    A wrong cell ``a`` counts when ``a`` is ``e`` rounded to some power of ten (``a`` a multiple of
    the unit, ``|a - e| <= unit/2``).  The message says how many digits are needed: the mode's
    ``digits`` for ``sigfig``/``decdig``, and for ``relabs`` the fewest significant figures that
    make every wrong cell's rounded value acceptable.
    """
    tol = _tolerance(context)
    wrong = _wrong(answer, expected, context)
    if wrong is None:
        return None
    for a, e in zip(answer[wrong], expected[wrong], strict=True):
        if _rounding_unit(float(a), float(e)) is None:
            return None
    if tol.mode == "sigfig":
        need = f"give {tol.digits} significant figures"
    elif tol.mode == "decdig":
        need = f"give {tol.digits} decimal places"
    else:
        k = 17
        for k in range(1, 18):
            rounded = np.array([_round_sig(float(e), k) for e in expected[wrong]])
            if cells_close(rounded, expected[wrong], tol).all():
                break
        need = f"keep at least {k} significant figure{'s' if k > 1 else ''}"
    lead = "Your answer is" if wrong.sum() == 1 and expected.size == 1 else "Some entries are"
    if expected.size > 1 and wrong.sum() == wrong.size:
        lead = "Your entries are"
    return Mistake("rounding", f"{lead} rounded to too few digits: {need}.")


def _round_sig(x: float, k: int) -> float:
    if x == 0:
        return 0.0
    return round(x, k - 1 - math.floor(math.log10(abs(x))))


__all__ = [
    "GENERIC",
    "cell_name",
    "format_factor",
    "register_detector",
    "registered_detectors",
    "run_detectors",
]
