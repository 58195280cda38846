"""Mistake detectors: name the misconception behind a wrong answer.

A detector is ``fn(answer, expected, context) -> Mistake | None`` (or a list of mistakes, for
one detector that stands for several, e.g. an exercise author's list):

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

import bisect
import logging
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from quizapp.grading.compare import cells_close
from quizapp.grading.types import Mistake, Tolerance

Detector = Callable[[np.ndarray, np.ndarray, Mapping[str, Any]], "Mistake | list[Mistake] | None"]

_REGISTRY: dict[str, Detector] = {}
#: Codes of the detectors that run on every wrong answer, in this order.
GENERIC: tuple[str, ...] = ("transpose", "sign", "scale", "rounding")
#: Codes of the detectors registered with ``explains=False``: they observe a property of the
#: answer (softmax rows that do not sum to 1) instead of reproducing it, see
#: :func:`reconcile_mistakes`.
OBSERVATIONS: set[str] = set()
_log = logging.getLogger(__name__)


def register_detector(code: str, *, explains: bool = True) -> Callable[[Detector], Detector]:
    """Decorator: register ``fn`` as the detector for mistake ``code``.

    ``explains``: True (the default) when the detector names its mistake only if the answer *is*
    what that mistake gives (the answer equals the mistaken computation, within tolerance);
    False for a detector that observes a property of the answer without reproducing it (rows of
    weights that do not sum to 1): see :func:`reconcile_mistakes` for what the difference does.

    Raises ``ValueError`` if ``code`` is already registered to another function (re-registering
    the same function, e.g. on module reload, is allowed).
    """

    def decorate(fn: Detector) -> Detector:
        old = _REGISTRY.get(code)
        if old is not None and getattr(old, "__qualname__", None) != fn.__qualname__:
            raise ValueError(f"mistake detector {code!r} is registered twice")
        _REGISTRY[code] = fn
        if explains:
            OBSERVATIONS.discard(code)
        else:
            OBSERVATIONS.add(code)
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
    exercise kind).  A detector that raises is skipped (logged at DEBUG level only, so nothing
    reaches stderr): it must never break a verdict.  Detectors run with NumPy floating-point
    errors and Python warnings silenced, so an overflow inside one (``1e308 * 1e308``) is a
    non-finite number for it to reject, never a warning printed to the student's terminal.

    The mistakes found are reconciled by :func:`reconcile_mistakes` (coincidental generic ones
    dropped, ambiguous ones told as such) before they are returned.
    """
    unknown = [code for code in extra if code not in _REGISTRY]
    if unknown:
        raise ValueError(f"no mistake detector is registered for {', '.join(unknown)}")
    found: list[tuple[str, Mistake]] = []  # (detector code, mistake)
    # One silenced block for all detectors (entering it costs more than most detectors).
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for code in dict.fromkeys([*GENERIC, *extra]):
            try:
                mistake = _REGISTRY[code](answer, expected, context)
            except Exception:  # a detector's bug must not cost the student a verdict
                _log.debug("mistake detector %r failed", code, exc_info=True)
                continue
            several = mistake if isinstance(mistake, list) else [mistake]
            if not all(isinstance(m, Mistake | None) for m in several):
                _log.debug("mistake detector %r returned %r, not a Mistake", code, mistake)
                continue
            for one in several:
                if one is not None and one.code not in [m.code for _, m in found]:
                    found.append((code, one))
    return reconcile_mistakes(found)


def _clause(message: str) -> str:
    """``message`` as a clause inside a longer sentence: its final full stop dropped (not an
    ellipsis's) and its first letter lowered when it starts an ordinary word ("You computed" ->
    "you computed", but "AB is" stays)."""
    text = message.strip()
    if text.endswith(".") and not text.endswith("..."):
        text = text[:-1]
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    return text


def ambiguous_message(messages: Sequence[str]) -> str:
    """The one sentence told for two or more different mistakes that give the same answer:
    ``"Your answer is what either of these slips gives: you computed AB instead of BA; or that
    is (AB)^T ..."`` ("any of these" for three or more).  The student is told what their answer
    is consistent with, never that they made each slip."""
    which = "either" if len(messages) == 2 else "any"
    return (
        f"Your answer is what {which} of these slips gives: "
        + "; or ".join(_clause(m) for m in messages)
        + "."
    )


def reconcile_mistakes(found: Sequence[tuple[str, Mistake]]) -> list[Mistake]:
    """The mistakes to name for one wrong answer, from ``found``: ``(detector code, mistake)``
    pairs in the order the detectors ran.  One rule, so that a student is never told of a
    mistake they did not make:

    1. An *explanation* is a mistake whose detector reproduces the answer (registered with
       ``explains=True``, the default: every value mistake, ``swapped_unknowns``, an author's
       ``authored`` mistakes, and the generic ones).  When a kind-specific explanation (a code
       not in :data:`GENERIC`) fires, the generic mistakes that also fire are coincidences (a
       basis used as rows that happens to triple the answer) and are dropped.
       *Observations* (:data:`OBSERVATIONS`, ``explains=False``, e.g. ``rows_dont_sum_to_one``)
       are true of the answer whatever explains it: they are kept, and never make anything
       ambiguous.
    2. Mistakes with the same message are told once: each keeps its code, and they share the
       sentence (the verdict's :attr:`~quizapp.grading.types.Verdict.mistake_messages` and
       the pages show it once).
    3. When the remaining explanations (kind-specific ones, else generic ones) have two or more
       different messages, each is marked ``ambiguous`` and its message becomes the single
       :func:`ambiguous_message` ("what either of these slips gives: ...").  Their codes stay in
       the verdict's ``mistakes`` (the instructor's statistics count each, and
       ``Verdict.to_dict`` lists them again under ``ambiguous_mistakes`` so the statistics can
       show how many of those answers were ambiguous).  Explanations with one shared message but
       several codes are marked ``ambiguous`` too (the student may have made either), with
       their message unchanged.

    Pure: the mistakes are new :class:`Mistake` values, ``found`` is not changed.
    """
    explanations = [i for i, (c, _) in enumerate(found) if c not in OBSERVATIONS]
    specific = [i for i in explanations if found[i][0] not in GENERIC]
    named = specific or explanations
    messages = list(dict.fromkeys(found[i][1].message for i in named))
    text = ambiguous_message(messages) if len(messages) > 1 else None
    out: list[Mistake] = []
    for i, (code, mistake) in enumerate(found):
        if code in OBSERVATIONS or len(named) == 1 and i in named:
            out.append(mistake)
        elif i in named:
            out.append(replace(mistake, message=text or mistake.message, ambiguous=True))
    return out


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
    """A readable factor: '2', '1/2', '-3', '√2', '1/√2', else 4 significant figures ('3.142',
    '1e-200', '1e+300').

    Fractions are used only with small terms (denominator at most 100, numerator at most 1,000, or
    an integer up to 1,000,000) and square roots only of such fractions, so an extreme factor is
    never printed as a 300-digit integer or as '√0'.
    """
    if not math.isfinite(c) or c == 0:
        return f"{c:.4g}"
    frac = Fraction(c).limit_denominator(100)
    small = abs(frac.numerator) <= (1_000_000 if frac.denominator == 1 else 1_000)
    if frac != 0 and small and abs(float(frac) - c) <= 1e-9 * abs(c):
        return str(frac)
    square = c * c
    if math.isfinite(square) and square >= 1e-6:
        sq = Fraction(square).limit_denominator(100)
        if sq.numerator <= 10_000 and abs(float(sq) - square) <= 1e-9 * square:
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


def _applied_factors() -> list[float]:
    """The factors a student could have applied to a whole answer, sorted: whole numbers 2..12
    and their reciprocals (doubled, halved, divided by d), powers of ten 10**-6..10**6 (a
    slipped decimal point, a percentage), square roots of 2..100 and their reciprocals (√d
    instead of d, or √d forgotten or applied twice), the simple fractions 2/3, 3/2, 3/4, 4/3, and
    the negatives of all of these (with a sign mistake on top)."""
    out: set[float] = set()
    for k in range(2, 13):
        out |= {float(k), 1.0 / k}
    for k in range(-6, 7):
        if k:
            out.add(10.0**k)
    for k in range(2, 101):
        if math.isqrt(k) ** 2 != k:
            out |= {math.sqrt(k), 1.0 / math.sqrt(k)}
    out |= {2 / 3, 3 / 2, 3 / 4, 4 / 3}
    return sorted(out | {-f for f in out})


#: See :func:`_applied_factors`.
APPLIED_FACTORS: tuple[float, ...] = tuple(_applied_factors())


def applied_factor(c: float) -> float | None:
    """The factor of :data:`APPLIED_FACTORS` nearest to ``c`` (relatively), or None when none is
    within 2 %: ``0.9972`` is rounding noise, not a factor anyone applied."""
    if not math.isfinite(c) or c == 0:
        return None
    # Among factors of c's sign, |c/f - 1| falls as f nears c and rises after it, so the nearest
    # is one of c's two neighbours in the sorted tuple (a factor of the other sign is at least 1
    # away); the first of the two on a tie, as a scan of the whole tuple would pick.
    i = bisect.bisect_left(APPLIED_FACTORS, c)
    near = [f for f in APPLIED_FACTORS[max(i - 1, 0) : i + 1] if (f > 0) == (c > 0)]
    if not near:
        return None
    best = min(near, key=lambda f: abs(c / f - 1.0))
    return best if abs(c / best - 1.0) <= 0.02 else None


@register_detector("scale")
def detect_scale(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> Mistake | None:
    """The answer is the expected value times one factor ``c`` a student could have applied
    (:data:`APPLIED_FACTORS`: 2, 1/2, √d, 1/√d, d, 10, ..., and their negatives; not 1 or -1, the
    sign detector's); reports ``c``.

    ``c`` is the least-squares factor ``sum(a*e) / sum(e*e)`` over graded cells, taken to the
    nearest applied factor, and accepted when that factor times ``expected`` is within tolerance
    of every graded cell.  So rounding noise (every entry 0.9972 times the right value) is never
    reported as a factor.  At least two nonzero expected cells are needed (one number is always
    *some* multiple of another); for a single number only a power of ten is reported (a slipped
    decimal point or a percentage).
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
    # Divide by the largest |e| first so neither sum of products over- or underflows (1e308**2,
    # 5e-324**2); an answer too large for that (1e300 against 5e-324) is no useful factor.
    with np.errstate(all="ignore"):
        big = float(np.max(np.abs(e)))
        en, an = e / big, a / big
        if not np.isfinite(an).all():
            return None
        c = float(np.dot(an, en)) / float(np.dot(en, en))
        if not math.isfinite(c) or c == 0 or math.isclose(abs(c), 1.0, rel_tol=1e-6):
            return None
        if nonzero < 2:
            k = round(math.log10(abs(c)))
            if c < 0 or k == 0 or not math.isclose(c, 10.0**k, rel_tol=1e-6):
                return None
        else:
            factor = applied_factor(c)
            if factor is None:
                return None
            c = factor
        scaled = c * e
        if not np.isfinite(scaled).all() or not cells_close(a, scaled, _tolerance(context)).all():
            return None
    if nonzero < 2:
        return Mistake(
            "scale",
            f"Your answer is {format_factor(c)} times the right value: check the decimal point "
            "(or a percentage).",
        )
    return Mistake("scale", f"Every entry is {format_factor(c)} times the right value.")


def _decimal(x: float) -> Decimal:
    """The shortest decimal that reads back as ``x`` (``repr``): what the student typed or saw."""
    return Decimal(repr(float(x)))


def significant_digits(x: float) -> int:
    """How many significant digits ``x`` has as typed (shortest form; ``100`` has 1, ``0.30`` 1)."""
    if x == 0 or not math.isfinite(x):
        return 1
    return len(_decimal(x).normalize().as_tuple().digits)


def round_significant(x: float, k: int, rounding: str = ROUND_HALF_UP) -> float:
    """``x`` (its shortest decimal form) rounded to ``k`` significant digits, as a float.

    Exact decimal arithmetic (``decimal``), so subnormal and huge values never over- or underflow.
    """
    d = _decimal(x)
    if d == 0 or not d.is_finite():
        return float(x)
    return float(d.quantize(Decimal(1).scaleb(d.adjusted() - k + 1), rounding=rounding))


def _digits_needed(e: float, tol: Tolerance) -> int:
    """The fewest significant digits (1..17) to which ``e`` rounds to an accepted answer; 18 if
    none does."""
    for k in range(1, 18):
        if cells_close(np.array(round_significant(e, k)), np.array(e), tol):
            return k
    return 18


#: A number as typed in plain decimal notation: sign, digits with an optional point, exponent.
_PLAIN_TYPED = re.compile(r"[+-]?(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE][+-]?\d+)?")


def typed_significant_digits(text: str) -> int | None:
    """How many significant digits ``text`` shows as typed, or None when it is not a plain
    decimal number (``1/7``, ``sqrt(2)``).  Trailing zeros after a decimal point count (``2.00``
    has 3, ``0.30`` has 2); those of a whole number do not (``100`` has 1, as the shortest form
    says: it may have been rounded to the hundreds)."""
    m = _PLAIN_TYPED.fullmatch(text.strip())
    if m is None:
        return None
    whole, frac, only_frac = m.group(1) or "", m.group(2), m.group(3)
    if only_frac is not None:
        whole, frac = "", only_frac
    if frac is None:  # a whole number: its trailing zeros may be rounding
        digits = whole.lstrip("0").rstrip("0")
        return max(len(digits), 1)
    digits = (whole + frac).lstrip("0")
    return max(len(digits), 1) if digits else max(len(frac), 1)


def _is_rounded(a: float, e: float, need: int, typed: str | None = None) -> bool:
    """``a`` shows fewer significant digits than ``need`` and is ``e`` rounded to one such count
    (half up or half to even: both conventions are taught), e.g. 0.3 for 0.2689.  The digits
    are counted as typed when ``typed`` is a plain decimal number (``2.00`` shows 3 digits, though
    the float 2.0 has 1), else from ``a``'s shortest form."""
    if a == 0 or e == 0 or not math.isfinite(a):
        return False
    shown = typed_significant_digits(typed) if isinstance(typed, str) else None
    if shown is None:
        shown = significant_digits(a)
    return any(
        round_significant(e, k, mode) == a
        for k in range(shown, need)
        for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN)
    )


@register_detector("rounding")
def detect_rounding(
    answer: np.ndarray, expected: np.ndarray, context: Mapping[str, Any]
) -> Mistake | None:
    """Every wrong cell is its expected value rounded to too few significant digits.

    A wrong cell ``a`` counts only when ``a`` *as typed* (``context["typed"]``, set by
    :func:`quizapp.grading.grade`: ``2.00`` shows 3 digits; without it, ``a``'s shortest decimal
    form) has *fewer* significant digits than needed and rounding ``e`` to ``a``'s digit count (or to any count
    below what is needed, for trailing zeros: ``100`` for ``100.4``) gives ``a`` exactly.  An
    answer with more digits than needed (``1.00000000001`` for ``1`` at zero tolerance) is wrong,
    never "rounded".  "Needed" is the fewest significant digits to which ``e`` rounds to an
    accepted answer under the exercise's tolerance.  The message says how many: the mode's
    ``digits`` for ``sigfig``/``decdig``; for ``relabs`` that fewest count over the wrong cells.
    """
    tol = _tolerance(context)
    wrong = _wrong(answer, expected, context)
    if wrong is None:
        return None
    typed = context.get("typed")
    texts = (
        typed[wrong].tolist()
        if isinstance(typed, np.ndarray) and typed.shape == answer.shape
        else [None] * int(wrong.sum())
    )
    need = 1
    for a, e, t in zip(answer[wrong], expected[wrong], texts, strict=True):
        k = _digits_needed(float(e), tol)
        if not _is_rounded(float(a), float(e), k, t):
            return None
        need = max(need, k)
    if tol.mode == "sigfig":
        text = f"give {tol.digits} significant figures"
    elif tol.mode == "decdig":
        text = f"give {tol.digits} decimal places"
    else:
        text = f"keep at least {need} significant figure{'s' if need > 1 else ''}"
    lead = "Your answer is" if wrong.sum() == 1 and expected.size == 1 else "Some entries are"
    if expected.size > 1 and wrong.sum() == wrong.size:
        lead = "Your entries are"
    return Mistake("rounding", f"{lead} rounded to too few digits: {text}.")


__all__ = [
    "GENERIC",
    "cell_name",
    "format_factor",
    "register_detector",
    "registered_detectors",
    "round_significant",
    "run_detectors",
    "significant_digits",
]
