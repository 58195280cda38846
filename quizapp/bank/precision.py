"""The precision a prompt states, and whether the exercise's tolerance agrees with it.

Every prompt whose answer is a number says how precise the answer must be, in one of three
phrases (the README's authoring rule): "Give exact values." (integers or simple fractions),
"to N decimal places", or "to N significant figures".  This module reads that phrase
(:func:`stated_precision`), decides whether a tolerance agrees with it (:func:`acceptance_problem`,
and :func:`variant_precision_problems` for a whole variant), gives the tolerance an exact prompt gets by default
(:data:`EXACT_TOLERANCE`), and writes the expected answer of a variant the way the phrase asks
(:func:`answer_as_stated`, graded by ``quizapp check`` on every seed).  Pure: no Flask, no
database.

Agreement is one rule, :func:`acceptance_problem`, judged at each expected entry ``x`` on the
*acceptance width* ``w(x)``, the largest ``|answer - x|`` the grader accepts
(:func:`quizapp.grading.compare.tolerance_bound`: ``atol + rtol*|x|`` for ``relabs``, as
``numpy.isclose``; ``0.51`` of a unit in the N-th place for ``decdig``/``sigfig``).  With ``u(x)``
one unit of the stated precision at ``x`` (:func:`precision_unit`), a tolerance agrees when

    ``ROUNDING * u(x) <= w(x) <= ALLOWED_UNITS * u(x)``  (:data:`ROUNDING` = 0.5, :data:`ALLOWED_UNITS` = 1)

for every entry: every answer correctly rounded as the prompt says (off by at most half a unit)
is accepted, and nothing further off than one unit is (one unit, not half: a student who keeps
the digits the prompt asks for in intermediate steps may land one unit off; an answer given to
fewer digits is then refused, except by luck of its digits).  The units:

- N decimal places: ``u = 10^-N`` (so ``{decdig: N}``, or ``{rtol: 0, atol: 10^-N}``; any
  ``rtol`` widens the width with ``|x|`` and is refused once ``atol + rtol*|x|`` exceeds
  ``10^-N``: ``{rtol: 0.02, atol: 0.03}`` accepts 88.5 for 90);
- N significant figures: ``u(x) = 10^(floor(log10|x|) - N + 1)``, one unit in the N-th
  significant figure of ``x``, its magnitude read as the grader reads it (``10^(1-N)`` at 0,
  where no lower bound applies: 0 is typed exactly).  ``{sigfig: N}`` agrees everywhere; an
  ``rtol`` cannot (``rtol*|x|`` spans a factor 10 of ``u`` across a decade);
- exact: ``w(x) <= EXACT_SLACK * (1 + |x|)`` (``rtol`` and ``atol`` up to ``1e-9``: floating-point
  noise of a computed key; the default for a prompt that says exact is ``rtol = atol = 0``, so only
  the few units in the last place that :mod:`quizapp.grading.compare` always allows separate an
  answer from the key), no lower bound.

Sources: half a unit is what correct rounding may be off by (the grader's own ``sigfig`` and
``decdig`` accept 0.51 of it, PrairieLearn's factor); one unit at most is issue 16's "a student's
honest intermediate rounding".  The rule before it bounded ``atol`` alone (below half a unit of
the place before, ``5·10^-N``) and ``rtol`` alone (up to 5 %), never their sum, which let
``{rtol: 0.02, atol: 0.03}`` accept 1.60 for 1.66 under "2 decimal places".

``quizapp validate`` applies the rule to the YAML at :data:`PROBES` (0 and 1: a tolerance that
fails there fails for any answer of ordinary size) and to the variant of seed 0
(:func:`variant_precision_problems`, prompts rendered, every part); ``quizapp check`` applies it
to every seed it samples.  A prompt that states no precision at all is a located warning of
``quizapp validate`` (files written before the rule still load) and a failure of ``quizapp
check``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from quizapp.bank.types import Variant
from quizapp.grading.compare import DIGITS_FACTOR, tolerance_bound
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


#: Share of a unit of the stated precision by which a correctly rounded answer may be off: the
#: width a tolerance must at least accept.
ROUNDING = 0.5
#: Units of the stated precision a tolerance may accept at most (one: a student who keeps the
#: stated digits through intermediate steps may land one unit off; see the module docstring).
ALLOWED_UNITS = 1.0
#: The expected values a tolerance is judged at without a variant (``quizapp validate``'s YAML
#: check): 0 and 1.
PROBES = (0.0, 1.0)
#: Relative room on the comparisons of widths (binary rounding never decides: ``0.01 + 0``).
_WIDTH_SLACK = 1e-9


def precision_unit(precision: Precision, expected: Any) -> np.ndarray:
    """One unit of ``precision`` at each expected entry (float array of ``expected``'s shape):
    ``10^-N`` for N decimal places; one unit in the N-th significant figure of ``x`` for N
    significant figures (the grader's reading of the magnitude,
    :func:`quizapp.grading.compare.tolerance_bound` divided by its
    :data:`~quizapp.grading.compare.DIGITS_FACTOR`); :data:`EXACT_SLACK` ``* (1 + |x|)`` for
    exact (the largest width an exact prompt allows)."""
    x = np.abs(np.asarray(expected, dtype=float))
    if precision.mode == "decimals":
        return np.full(x.shape, 10.0**-precision.digits)
    if precision.mode == "sigfig":
        return tolerance_bound(x, Tolerance(mode="sigfig", digits=precision.digits)) / DIGITS_FACTOR
    return EXACT_SLACK * (1.0 + x)


def acceptance_limits(precision: Precision, expected: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(least, most)``: the acceptance widths a tolerance must reach and may not exceed at each
    expected entry (arrays of ``expected``'s shape; rule in the module docstring)."""
    x = np.abs(np.asarray(expected, dtype=float))
    unit = precision_unit(precision, x)
    if precision.mode == "exact":
        return np.zeros(x.shape), unit
    least = ROUNDING * unit
    if precision.mode == "sigfig":
        least = np.where(x > 0, least, 0.0)  # 0 is typed exactly
    return least, ALLOWED_UNITS * unit


def _fix(precision: Precision) -> str:
    n = precision.digits
    if precision.mode == "exact":
        return (
            "leave tolerance out (exact prompts get {rtol: 0, atol: 0}) or state the precision "
            "in the prompt (to N decimal places, to N significant figures)"
        )
    if precision.mode == "decimals":
        return f"write tolerance: {{decdig: {n}}} (or {{rtol: 0, atol: {10.0**-n:g}}})"
    return f"write tolerance: {{sigfig: {n}}}"


def _entry(shape: tuple[int, ...], flat: int) -> str:
    if not shape:
        return ""
    index = [int(i) + 1 for i in np.unravel_index(flat, shape)]
    if len(index) == 1:
        return f" (entry {index[0]})"
    if len(index) == 2:
        return f" (row {index[0]}, column {index[1]})"
    return f" (entry {tuple(index)})"


def acceptance_problem(
    precision: Precision,
    tolerance: Tolerance,
    expected: Any,
    at: str = "the expected value",
    entries: bool = True,
) -> str | None:
    """Why ``tolerance`` disagrees with ``precision`` at the entries of ``expected`` (a number
    or array; entries that are not finite are skipped), as a sentence saying what the prompt
    states, what the tolerance admits at which value (``at`` names it: "the expected value", or
    "an expected value" for a probe; ``entries``: name the entry, row and column) and the fix;
    None when they agree (rule in the module
    docstring).  Raises ``ValueError`` for an unusable tolerance."""
    x = np.asarray(expected, dtype=float)
    finite = np.isfinite(x)
    if not finite.any():
        return None
    xs = np.where(finite, x, 0.0)
    width = tolerance_bound(xs, tolerance)
    least, most = acceptance_limits(precision, xs)
    shown = _describe(tolerance)
    where = (lambda i: _entry(x.shape, i)) if entries else (lambda i: "")
    bad = finite & (width < least * (1 - _WIDTH_SLACK))
    if bad.any():
        i = int(np.argmax(np.where(bad, least / np.maximum(width, 1e-300), 0.0)))
        w, v, need = float(width.flat[i]), float(xs.flat[i]), float(least.flat[i])
        return (
            f"the prompt asks for {precision.phrase()}, but the tolerance {shown} accepts only "
            f"{w:.3g} off at {at} {v:g}{where(i)}: it rejects values near {v:g} given to "
            f"{precision.phrase()} (rounding may be {need:.3g} off): {_fix(precision)}"
        )
    bad = finite & (width > most * (1 + _WIDTH_SLACK))
    if bad.any():
        i = int(np.argmax(np.where(bad, width / np.maximum(most, 1e-300), 0.0)))
        w, v = float(width.flat[i]), float(xs.flat[i])
        if precision.mode == "exact":
            off = f" ({w / abs(v):.2%} off)" if v else ""
            allows = f"exact values allow {float(most.flat[i]):.3g}"
        else:
            off = ""
            allows = (
                f"{precision.phrase()} allow {float(least.flat[i]):.3g} to "
                f"{float(most.flat[i]):.3g}"
            )
        return (
            f"the prompt asks for {precision.phrase()}, but the tolerance {shown} accepts "
            f"answers {w:.3g} off at {at} {v:g}{where(i)}{off}, where {allows}: "
            f"{_fix(precision)}"
        )
    return None


def tolerance_problem(precision: Precision, tolerance: Tolerance) -> str | None:
    """Why ``tolerance`` disagrees with ``precision`` whatever the variant: the rule of
    :func:`acceptance_problem` at the expected values :data:`PROBES` (0 and 1), or None."""
    return acceptance_problem(
        precision, tolerance, np.array(PROBES), at="an expected value", entries=False
    )


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


@dataclass(frozen=True)
class PrecisionProblem:
    """One disagreement of a variant's answer with its stated precision.

    ``part``: the part's index in ``Variant.parts`` (None for the variant's one answer);
    ``field``: the YAML line responsible, ``"prompt"`` (no or several precisions stated, a value
    that cannot be given as stated) or ``"tolerance"`` (the tolerance admits too much or too
    little); ``own_prompt``: the precision was read from the part's own prompt (else the
    exercise's); ``message``: the sentence, prefixed ``part NAME: `` for a part; ``missing``:
    the prompt states no precision at all (``quizapp validate`` warns of it, ``quizapp check``
    refuses it)."""

    part: int | None
    field: Literal["prompt", "tolerance"]
    own_prompt: bool
    message: str
    missing: bool = False


def variant_precision_problems(v: Variant) -> list[PrecisionProblem]:
    """Every disagreement of ``v``'s numeric answers with the precision their prompts state:
    the prompt (a part's own prompt, else the exercise's) states exactly one precision; the
    tolerance agrees with it at every expected entry (:func:`acceptance_problem`); and the
    expected answer given as the prompt says (:func:`answer_as_stated`) grades correct.
    ``quizapp validate`` runs it on seed 0, ``quizapp check`` on every seed it samples.  Pure."""
    from quizapp.bank.answers import grade_answer
    from quizapp.bank.parts import part_variant

    answers: list[tuple[int | None, Variant, str, bool]] = []
    if v.parts:
        for i, p in enumerate(v.parts):
            own = bool(precision_statements(p.prompt))
            answers.append((i, part_variant(v, p), p.prompt if own else v.prompt, own))
    else:
        answers = [(None, v, v.prompt, False)]
    out: list[PrecisionProblem] = []
    for index, one, prompt, own in answers:
        label = "" if index is None else f"part {v.parts[index].name}: "

        def problem(
            field: Literal["prompt", "tolerance"], message: str, missing: bool = False
        ) -> None:
            out.append(PrecisionProblem(index, field, own, label + message, missing))  # noqa: B023

        form = one.answer_form
        try:
            finite = bool(np.all(np.isfinite(np.asarray(one.expected, dtype=float))))
        except (TypeError, ValueError):
            finite = False  # a non-numeric key (a choice label) states no precision
        if form.type not in NUMERIC_FORMS or not finite:
            continue  # a key that is not finite is reported on its own
        found = precision_statements(prompt)
        if len(found) != 1:
            problem(
                "prompt",
                "the prompt states no precision for its numeric answer: say 'Give exact "
                "values.', 'to N decimal places' or 'to N significant figures'"
                if not found
                else "the prompt states several precisions ("
                + " and ".join(sorted(p.phrase() for p in found))
                + "): state one",
                missing=not found,
            )
            continue
        precision = found.pop()
        disagreement = acceptance_problem(precision, one.tolerance, one.expected)
        if disagreement:
            problem("tolerance", disagreement)
        try:
            text = answer_as_stated(one.expected, form.type, form.count, precision)
        except NotStatable as exc:
            problem("prompt", str(exc))
            continue
        verdict = grade_answer(one, text)
        if verdict.status != "correct":
            problem(
                "tolerance",
                f"the expected answer given as the prompt says ({precision.phrase()}), "
                f"{text!r}, is graded {verdict.status}: {verdict.message}",
            )
    return out
