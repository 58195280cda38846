"""The precision a prompt states, and whether the exercise's tolerance agrees with it.

Every prompt whose answer is a number says how precise the answer must be, in one of three
phrases (the README's authoring rule): "Give exact values." (integers or simple fractions),
"to N decimal places", or "to N significant figures".  This module reads that phrase
(:func:`stated_precision`), decides whether a tolerance agrees with it (:func:`tolerance_problem`,
used by ``quizapp validate``), gives the tolerance an exact prompt gets by default
(:data:`EXACT_TOLERANCE`), and writes the expected answer of a variant the way the phrase asks
(:func:`answer_as_stated`, graded by ``quizapp check`` on every seed).  Pure: no Flask, no
database.

Agreement (a tolerance *agrees* when every answer given as the prompt says is accepted, and an
answer given less precisely is not accepted wholesale):

- exact: ``relabs`` with ``rtol`` and ``atol`` at most ``1e-9`` (the default for a prompt that
  says exact: ``rtol = atol = 0``, so only the few units in the last place that
  :mod:`quizapp.grading.compare` always allows separate an answer from the key);
- N decimal places: ``{decdig: N}``, or ``relabs`` with ``0.5·10^-N <= atol < 5·10^-N`` (half a
  unit in the N-th place up to, not including, half a unit in the place before) and ``rtol <=
  0.05``;
- N significant figures: ``{sigfig: N}``, or ``relabs`` with ``0.5·10^(1-N) <= rtol <
  5·10^(1-N)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from quizapp.grading.types import Tolerance

#: The tolerance of a prompt that says "exact" and writes no ``tolerance:``.
EXACT_TOLERANCE = Tolerance(mode="relabs", rtol=0.0, atol=0.0)
#: Largest ``rtol``/``atol`` an exact prompt's tolerance may have.
EXACT_SLACK = 1e-9
#: Largest denominator of a value an exact prompt may ask for (the answer "as a fraction").
MAX_DENOMINATOR = 1000

_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
}
_COUNT = r"(\d+|" + "|".join(_NUMBER_WORDS) + r")"
DECIMALS = re.compile(_COUNT + r" decimal (?:places?|digits?)", re.IGNORECASE)
SIGFIGS = re.compile(_COUNT + r" significant (?:figures?|digits?)", re.IGNORECASE)
EXACT = re.compile(r"\bexact\b", re.IGNORECASE)


@dataclass(frozen=True)
class Precision:
    """A stated precision: ``exact``, ``decimals`` (``digits`` places) or ``sigfig``."""

    mode: Literal["exact", "decimals", "sigfig"]
    digits: int = 0

    def phrase(self) -> str:
        """How a prompt says it: "exact values", "2 decimal places", "3 significant figures"."""
        if self.mode == "exact":
            return "exact values"
        unit = "decimal place" if self.mode == "decimals" else "significant figure"
        return f"{self.digits} {unit}{'' if self.digits == 1 else 's'}"


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS[text.lower()]


def precision_statements(text: str) -> set[Precision]:
    """Every precision ``text`` states: "N decimal places", "N significant figures" (also
    written as words, "two decimal places"), and "exact" when no number of digits is stated."""
    lowered = text.lower()  # the keywords first: most prompts hold one of them only
    found: set[Precision] = set()
    if "decimal" in lowered:
        found |= {Precision("decimals", _count(n)) for n in DECIMALS.findall(text)}
    if "significant" in lowered:
        found |= {Precision("sigfig", _count(n)) for n in SIGFIGS.findall(text)}
    if not found and "exact" in lowered and EXACT.search(text):
        found = {Precision("exact")}
    return found


def stated_precision(text: str) -> Precision | None:
    """The one precision ``text`` states, or None when it states none or several."""
    found = precision_statements(text)
    return next(iter(found)) if len(found) == 1 else None


def default_tolerance(prompt: str) -> Tolerance | None:
    """The tolerance an exercise without ``tolerance:`` gets from its prompt: exact
    (:data:`EXACT_TOLERANCE`) when the prompt says exact, else None (the schema's default,
    PrairieLearn's ``rtol=1e-2``, ``atol=1e-8``)."""
    p = stated_precision(prompt)
    return EXACT_TOLERANCE if p is not None and p.mode == "exact" else None


def _describe(tol: Tolerance) -> str:
    if tol.mode == "relabs":
        return f"{{rtol: {tol.rtol:g}, atol: {tol.atol:g}}}"
    return f"{{{tol.mode}: {tol.digits}}}"


def tolerance_problem(precision: Precision, tolerance: Tolerance) -> str | None:
    """Why ``tolerance`` disagrees with ``precision`` (rules in the module docstring), as a
    sentence naming the fix, or None when they agree."""
    tol = tolerance
    shown = _describe(tol)
    if precision.mode == "exact":
        if tol.mode == "relabs" and tol.rtol <= EXACT_SLACK and tol.atol <= EXACT_SLACK:
            return None
        loose = (
            f"accepts answers {tol.rtol:.2%} off"
            if tol.mode == "relabs" and tol.rtol > EXACT_SLACK
            else f"accepts answers that are not exact ({shown})"
        )
        return (
            f"the prompt asks for exact values, but the tolerance {shown} {loose}: leave "
            "tolerance out (exact prompts get {rtol: 0, atol: 0}) or state the precision in "
            "the prompt (to N decimal places, to N significant figures)"
        )
    n = precision.digits
    if precision.mode == "decimals":
        if tol.mode == "decdig":
            if tol.digits == n:
                return None
            return f"the prompt asks for {precision.phrase()}, but the tolerance is {shown}: write tolerance: {{decdig: {n}}}"
        if tol.mode == "relabs":
            low, high = 0.5 * 10.0**-n, 5 * 10.0**-n
            if low <= tol.atol < high and tol.rtol <= 0.05:
                return None
            return (
                f"the prompt asks for {precision.phrase()}, but the tolerance {shown} "
                + (
                    f"rejects values near 0 given so (atol below {low:g})"
                    if tol.atol < low
                    else "accepts answers given less precisely"
                )
                + f": write tolerance: {{decdig: {n}}} (or an atol from {low:g} up to below {high:g})"
            )
        return f"the prompt asks for {precision.phrase()}, but the tolerance is {shown}: write tolerance: {{decdig: {n}}}"
    # significant figures
    if tol.mode == "sigfig":
        if tol.digits == n:
            return None
        return f"the prompt asks for {precision.phrase()}, but the tolerance is {shown}: write tolerance: {{sigfig: {n}}}"
    if tol.mode == "relabs":
        low, high = 0.5 * 10.0 ** (1 - n), 5 * 10.0 ** (1 - n)
        if low <= tol.rtol < high:
            return None
        return (
            f"the prompt asks for {precision.phrase()}, but the tolerance {shown} does not "
            f"accept exactly those answers: write tolerance: {{sigfig: {n}}} (or an rtol from "
            f"{low:g} up to below {high:g})"
        )
    return f"the prompt asks for {precision.phrase()}, but the tolerance is {shown}: write tolerance: {{sigfig: {n}}}"


class NotStatable(ValueError):
    """An expected value that cannot be written as the prompt says (e.g. an "exact" value that is
    no simple fraction)."""


def simple_fraction(x: float | Fraction, limit: int = MAX_DENOMINATOR) -> Fraction | None:
    """``x`` as a fraction with a denominator up to ``limit`` when it is one (within ``1e-9``
    relative, the noise a computed key may carry), else None."""
    frac = x if isinstance(x, Fraction) else Fraction(float(x)).limit_denominator(limit)
    return frac if abs(float(frac) - float(x)) <= 1e-9 * max(1.0, abs(float(x))) else None


def value_as_stated(x: float, precision: Precision) -> str:
    """One expected value written as the prompt asks: rounded to N decimal places or N
    significant figures, or for exact a fraction ``p/q`` (``q`` at most
    :data:`MAX_DENOMINATOR`) or an integer.  Raises :class:`NotStatable` for an exact value that
    is no such fraction (within ``1e-9``, the noise a tidy key may carry)."""
    if precision.mode == "decimals":
        n = precision.digits
        return f"{round(x, n):.{n}f}"
    if precision.mode == "sigfig":
        return repr(float(f"{x:.{precision.digits}g}")) if x else "0"
    frac = simple_fraction(x)
    if frac is None:
        raise NotStatable(
            f"the prompt says exact, but the expected value {x!r} is not a fraction with a "
            f"denominator up to {MAX_DENOMINATOR}"
        )
    return str(frac)


def answer_as_stated(expected: Any, form_type: str, count: int, precision: Precision) -> str:
    """The expected answer as a student following the prompt would type it (each value by
    :func:`value_as_stated`): a number, ``[a, b]``, ``[[a, b], [c, d]]`` or, for points on a
    line, ``count`` points ``(x, y)`` one per line.  Raises :class:`NotStatable`."""
    exp = np.asarray(expected, dtype=float)
    if form_type == "point_on_line":
        pts = exp.reshape(count, -1)
        return "\n".join(
            "(" + ", ".join(value_as_stated(float(x), precision) for x in p) + ")" for p in pts
        )
    if exp.ndim == 0:
        return value_as_stated(float(exp), precision)
    if exp.ndim == 1:
        return "[" + ", ".join(value_as_stated(float(x), precision) for x in exp) + "]"
    return (
        "["
        + ", ".join(
            "[" + ", ".join(value_as_stated(float(x), precision) for x in row) + "]" for row in exp
        )
        + "]"
    )


#: Answer forms whose answer is a number (or numbers): their prompts must state a precision.
NUMERIC_FORMS = ("scalar", "vector", "matrix", "partial_matrix", "point_on_line")
