"""Grading a student's answer to a variant, by the variant's answer form.

- ``scalar``, ``vector``, ``matrix``: :func:`quizapp.grading.grade` against ``variant.expected``
  with the exercise's tolerance, partial credit and the kind's mistake detectors.
- ``partial_matrix``: the same with a mask: only the blanks are graded.  The grid the web form
  posts may hold the given cells (typed over or not) or empty strings there: given cells are
  ignored either way.  Where the rows sum to 1 (attention weights), a blank worked out as 1 minus
  the rest of its row is graded with follow-through (``_row_sum_follow_through``).
- ``point_on_line``: any point satisfying the equation(s) within the tolerance is correct (a
  predicate, not a reference value); ``count > 1`` asks for that many DISTINCT points.
- ``choice``: the option's letter (``b``, ``(b)``, ``B)``) or its 1-based number;
  ``variant.expected`` is the 0-based index into ``answer_form.choices``.
- ``index``: a 1-based position as shown (or the label itself, e.g. ``pet tips``);
  ``variant.expected`` is that 1-based number.

- ``parts`` (a multi-part variant): the answer is a mapping part name -> text or grid (or one
  text, ``S = ...`` lines, :func:`quizapp.bank.parts.parse_part_text`), graded part by part with
  follow-through by :func:`quizapp.bank.parts.grade_parts`.

An unparseable or out-of-range answer is ``invalid`` (it uses no attempt).  Verdicts follow
:class:`quizapp.grading.types.Verdict`.

:func:`preview_answer` reads an answer the same way, by the same functions, without comparing it
with anything: how it was read, or why it cannot be read (the answer preview).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from quizapp.bank import detectors as _detectors  # noqa: F401  (registers the detectors)
from quizapp.bank.kinds._util import latex_row, num_apart
from quizapp.bank.template import format_number
from quizapp.bank.types import AnswerForm, Variant
from quizapp.grading import (
    InvalidAnswer,
    Mistake,
    Status,
    Verdict,
    cells_close,
    describe_shape,
    grade,
    parse_number,
    read_answer,
    shape_mismatch,
)
from quizapp.grading.mistakes import round_significant
from quizapp.grading.parse import parse_answer_cells, split_cells

#: A single answer: text, or a grid of cell strings as the web posts it.
SingleAnswer = str | Sequence[Sequence[str]]
#: Any answer: a single one, or a multi-part one (part name -> single answer).
Answer = SingleAnswer | Mapping[str, Any]

#: Why a multi-part answer to an exercise without parts is invalid (graded and previewed alike).
_NOT_PARTS = "This exercise has one answer, not parts."

__all__ = [
    "AnswerPreview",
    "denoised",
    "expected_answer_text",
    "grade_answer",
    "preview_answer",
    "shown_answer_text",
]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _context(variant: Variant) -> dict[str, Any]:
    return {**variant.context, "tolerance": variant.tolerance}


def _not_by_part(names: Sequence[str]) -> str:
    """Why an answer to a multi-part exercise (parts ``names``) that is not given part by part
    is invalid (graded and previewed alike)."""
    return (
        f"This exercise has parts ({', '.join(names)}): answer each part, one after "
        f"another, each starting on its own line with its name ({names[0]} = ...)."
    )


def _invalid(message: str) -> Verdict:
    return Verdict(status="invalid", score=0.0, message=message)


def grade_answer(variant: Variant, answer: Answer) -> Verdict:
    """Grade ``answer`` (text, or a grid of cell strings as the web posts it) for ``variant``.

    Dispatches on ``variant.answer_form.type`` (see the module docstring).  Never raises for bad
    input: an answer that cannot be read gives an ``invalid`` verdict saying what is wrong and
    where.  Each mistake code appears at most once in ``mistakes`` (the first found is kept).
    """
    if variant.parts or variant.answer_form.type == "parts":
        from quizapp.bank.parts import grade_parts, parse_part_text

        names = [p.name for p in variant.parts]
        if isinstance(answer, str):
            answer = parse_part_text(answer, names) or answer
        if not isinstance(answer, Mapping):
            return _invalid(_not_by_part(names))
        return grade_parts(variant, answer)
    if isinstance(answer, Mapping):
        return _invalid(_NOT_PARTS)
    verdict = _dispatch(variant, answer)
    seen: set[str] = set()
    unique = []
    for m in verdict.mistakes:
        if m.code not in seen:
            seen.add(m.code)
            unique.append(m)
    verdict.mistakes = unique
    return verdict


def _dispatch(variant: Variant, answer: SingleAnswer) -> Verdict:
    form = variant.answer_form
    if form.type in ("scalar", "vector", "matrix"):
        return grade(
            np.asarray(variant.expected, dtype=float),
            answer,
            tolerance=variant.tolerance,
            partial_credit=variant.partial_credit,
            detectors=variant.detectors,
            context=_context(variant),
        )
    if form.type == "partial_matrix":
        return _grade_partial(variant, answer)
    if form.type == "point_on_line":
        return _grade_points(variant, answer)
    if form.type in ("choice", "index"):
        return _grade_pick(variant, answer)
    return _invalid(f"This exercise has an unknown answer form {form.type!r}.")


# --------------------------------------------------------------------------------------------
# partly filled matrices


def _mask(variant: Variant) -> np.ndarray:
    exp = np.asarray(variant.expected, dtype=float)
    mask = variant.context.get("mask")
    if mask is not None:
        return np.asarray(mask, dtype=bool)
    given = variant.answer_form.given
    if given is None:
        return np.ones(exp.shape, dtype=bool)
    return np.array([[cell is None for cell in row] for row in given], dtype=bool)


def _given_values(variant: Variant, exp: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The given cells as the student sees them (the displayed, rounded text), the blanks NaN."""
    given = variant.answer_form.given
    out = np.full(exp.shape, np.nan)
    for i in range(exp.shape[0]):
        for j in range(exp.shape[1]):
            if not mask[i, j]:
                cell = given[i][j] if given is not None else None
                out[i, j] = float(cell) if cell is not None else exp[i, j]
    return out


def _row_sum_follow_through(
    variant: Variant, answer: SingleAnswer, mask: np.ndarray
) -> SingleAnswer:
    """For weights whose rows sum to 1 (``context["rows_sum_to_one"]``), a blank typed as 1 minus
    the rest of its row is graded with follow-through: against ``1 - (the row's given cells as
    displayed) - (the student's other blanks in the row)``, when those other blanks are right.

    So an answer that follows the hint "each row sums to 1" from the given rounded entries is
    correct (a given 0.33 is what the student works with, not the key's 0.3327).  Returns the
    answer as a grid with each such blank replaced by the key's exact value, or ``answer``
    unchanged when the rule does not apply (the answer does not read as a full grid)."""
    if not variant.context.get("rows_sum_to_one"):
        return answer
    exp = np.asarray(variant.expected, dtype=float)
    probe: SingleAnswer = answer
    if not isinstance(answer, str):
        if len(answer) != exp.shape[0] or any(len(row) != exp.shape[1] for row in answer):
            return answer
        # the given cells of a posted grid may be blank or typed over: they are not the answer
        probe = [
            [str(answer[i][j]) if mask[i, j] else "" for j in range(exp.shape[1])]
            for i in range(exp.shape[0])
        ]
    try:
        values, cells = parse_answer_cells(probe, allow_blank=True)
    except InvalidAnswer:
        return answer  # grading it says what is wrong
    if values.shape != exp.shape or cells.ndim != 2:
        return answer
    tol = variant.tolerance
    right = np.asarray(cells_close(values, exp, tol), dtype=bool) & mask
    shown = _given_values(variant, exp, mask)
    rows = [list(r) for r in cells.rows]
    changed = False
    for i, j in zip(*np.nonzero(mask & ~right), strict=True):
        others = [k for k in range(exp.shape[1]) if mask[i, k] and k != j]
        if not all(right[i, k] for k in others) or not np.isfinite(values[i, j]):
            continue
        rest = float(np.sum(shown[i][~mask[i]])) + sum(float(values[i, k]) for k in others)
        if bool(cells_close(np.array(values[i, j]), np.array(1.0 - rest), tol)):
            rows[i][j] = repr(float(exp[i, j]))
            changed = True
    return rows if changed else answer


def _partial_grid(variant: Variant, answer: SingleAnswer) -> SingleAnswer:
    """The answer to grade for a partly filled matrix: a posted grid of the matrix's shape with
    its given cells replaced by the exact values (given cells are not the student's answer, so the
    web may post them typed over, untouched, or as empty strings); text as typed."""
    exp = np.asarray(variant.expected, dtype=float)
    mask = _mask(variant)
    if isinstance(answer, str):
        return answer
    if len(answer) == exp.shape[0] and all(len(row) == exp.shape[1] for row in answer):
        return [
            [
                (str(answer[i][j]) if mask[i, j] else repr(float(exp[i, j])))
                for j in range(exp.shape[1])
            ]
            for i in range(exp.shape[0])
        ]
    return answer


def _grade_partial(variant: Variant, answer: SingleAnswer) -> Verdict:
    exp = np.asarray(variant.expected, dtype=float)
    mask = _mask(variant)
    grid = _partial_grid(variant, _row_sum_follow_through(variant, answer, mask))
    return grade(
        exp,
        grid,
        tolerance=variant.tolerance,
        partial_credit=variant.partial_credit,
        mask=mask,
        detectors=variant.detectors,
        context={**_context(variant), "mask": mask},
    )


# --------------------------------------------------------------------------------------------
# points on a line

_LABEL = re.compile(r"\b[a-zA-Z]\w*\s*=")
_GROUP = re.compile(r"[\(\[]([^\(\)\[\]]*)[\)\]]")


def _numbers(text: str, where: str) -> list[float]:
    text = text.strip()
    parts = [p for p in re.split(r"[;,]", text)]
    if len(parts) == 1:
        parts = text.split()
    out = []
    for k, part in enumerate(parts, start=1):
        if not part.strip():
            raise InvalidAnswer(f"{where}: number {k} is empty")
        try:
            out.append(parse_number(part))
        except InvalidAnswer as exc:
            raise InvalidAnswer(f"{where}: {exc.message}") from None
    return out


def parse_points(answer: Answer, n: int, count: int) -> np.ndarray:
    """Read ``count`` points with ``n`` coordinates each from text or a grid; shape ``(count, n)``.

    Text may be ``(1, 10)``, ``1, 10``, ``x = 1, y = 10``, several points one per line or as
    ``(1, 10), (2, 5)``.  A grid holds the coordinates in reading order.
    Raises :class:`quizapp.grading.InvalidAnswer` saying what is wrong.
    """
    values: list[float] = []
    if isinstance(answer, str):
        text = _LABEL.sub(" ", answer).strip()
        if not text:
            raise InvalidAnswer("The answer is empty: give a point such as (1, 2).")
        groups = _GROUP.findall(text)
        if groups:
            if _GROUP.sub("", text).strip(" ,;\n\t"):
                raise InvalidAnswer("Write each point in brackets, e.g. (1, 2), and nothing else.")
            chunks = groups
        else:
            chunks = [line for line in text.splitlines() if line.strip()]
        for k, chunk in enumerate(chunks, start=1):
            values.extend(_numbers(chunk, f"point {k}" if len(chunks) > 1 else "your point"))
    else:
        for i, row in enumerate(answer, start=1):
            for j, cell in enumerate(row, start=1):
                if not str(cell).strip():
                    raise InvalidAnswer(f"row {i}, column {j} is empty")
                try:
                    values.append(parse_number(str(cell)))
                except InvalidAnswer as exc:
                    raise InvalidAnswer(f"row {i}, column {j}: {exc.message}") from None
    if len(values) != n * count:
        what = "one point" if count == 1 else f"{count} points"
        raise InvalidAnswer(
            f"Give {what} with {n} coordinates each ({n * count} numbers); you gave {len(values)}."
        )
    pts = np.array(values, dtype=float).reshape(count, n)
    if not np.all(np.isfinite(pts)):
        raise InvalidAnswer("Every coordinate must be a finite number.")
    return pts


def _on_solution_set(p: np.ndarray, A: np.ndarray, c: np.ndarray, tol: Any) -> bool:
    """True when ``p`` is, within the tolerance, a solution of ``A p = c``: ``p`` is compared
    cell by cell with its orthogonal projection onto the solution set."""
    proj = p - np.linalg.pinv(A) @ (A @ p - c)
    return bool(np.all(cells_close(p, proj, tol)))


def _grade_points(variant: Variant, answer: Answer) -> Verdict:
    form = variant.answer_form
    A = np.asarray(variant.context["coefficients"], dtype=float)
    c = np.asarray(variant.context["rhs"], dtype=float)
    names = form.unknowns or [f"x{i + 1}" for i in range(A.shape[1])]
    eq = variant.context.get("equation", "the equation")
    n, count = A.shape[1], form.count
    try:
        pts = parse_points(answer, n, count)
    except InvalidAnswer as exc:
        return _invalid(exc.message)
    tol = variant.tolerance
    ok = [_on_solution_set(p, A, c, tol) for p in pts]
    dup = [False] * count
    for i in range(count):
        for j in range(i):
            if ok[i] and ok[j] and not dup[j] and np.all(cells_close(pts[i], pts[j], tol)):
                dup[i] = True
    good = [o and not d for o, d in zip(ok, dup, strict=True)]
    mistakes: list[Mistake] = []
    notes: list[str] = []
    for k, p in enumerate(pts):
        label = "Your point" if count == 1 else f"Point {k + 1}"
        if dup[k]:
            notes.append(
                f"{label} {latex_row(p)} is the same as an earlier one: give different solutions."
            )
        elif not ok[k]:
            lhs = A @ p
            detail = ", ".join(
                "the left side is {}, not {}".format(*num_apart(v, r))
                for v, r in zip(lhs, c, strict=True)
            )
            notes.append(f"{label} {latex_row(p)} does not satisfy {eq}: {detail}.")
            if n == 2 and _on_solution_set(p[::-1], A, c, tol):
                mistakes.append(
                    Mistake(
                        "swapped_unknowns",
                        f"You swapped {names[0]} and {names[1]}: {latex_row(p[::-1])} is a solution, "
                        f"so your first number should be {names[0]}.",
                    )
                )
    n_good = sum(good)
    status: Status
    if n_good == count:
        status, score = "correct", 1.0
        message = (
            f"Correct: {latex_row(pts[0])} satisfies {eq}."
            if count == 1
            else f"Correct: all {count} points are different solutions of {eq}."
        )
    else:
        score = n_good / count if variant.partial_credit else 0.0
        status = "partial" if score > 0 else "incorrect"
        message = " ".join(notes)
    if any(d for d in dup) and not any(m.code == "same_point" for m in mistakes):
        mistakes.append(
            Mistake(
                "same_point", "You gave the same point twice; the question asks for different ones."
            )
        )
    return Verdict(
        status=status,
        score=score,
        message=message,
        cells=[[bool(g)] * n for g in good],
        mistakes=mistakes,
        parsed=pts.tolist() if count > 1 else pts[0].tolist(),
    )


# --------------------------------------------------------------------------------------------
# multiple choice and index


class Pickable(Protocol):
    """What :func:`parse_pick` reads of a variant: its answer form and context."""

    @property
    def answer_form(self) -> AnswerForm: ...
    @property
    def context(self) -> Mapping[str, Any]: ...


def _labels(variant: Pickable) -> list[str]:
    form = variant.answer_form
    return list(form.choices or form.col_labels or [])


def parse_pick(variant: Pickable, answer: SingleAnswer) -> int:
    """The picked option as a 1-based number.  Raises :class:`InvalidAnswer` if unreadable or out
    of range.  ``choice`` accepts a letter or a number; ``index`` a number or the label itself."""
    form = variant.answer_form
    if isinstance(answer, str):
        text = answer
    else:
        cells = [str(c) for row in answer for c in row if str(c).strip()]
        if len(cells) != 1:
            raise InvalidAnswer("Give exactly one answer.")
        text = cells[0]
    text = text.strip()
    labels = _labels(variant)
    count = len(labels) or int(variant.context.get("count", 0))
    if not text:
        raise InvalidAnswer("The answer is empty.")
    core = text.strip("()[]. ").strip()
    if form.type == "choice":
        m = re.fullmatch(r"(?:option\s*)?\(?([A-Za-z])\)?\.?", text, flags=re.IGNORECASE)
        if m:
            k = _LETTERS.index(m.group(1).lower()) + 1
            if k > count:
                raise InvalidAnswer(
                    f"There are only {count} options: answer with a letter from a to {_LETTERS[count - 1]}."
                )
            return k
    if re.fullmatch(r"[+]?\d+", core):
        k = int(core)
        if not 1 <= k <= count:
            raise InvalidAnswer(f"Answer with a number from 1 to {count}; {k} is not one of them.")
        return k
    low = [lbl.lower().strip() for lbl in labels]
    if form.type == "index" and core.lower().strip("“”\"' ") in low:
        return low.index(core.lower().strip("“”\"' ")) + 1
    if form.type == "choice":
        raise InvalidAnswer(
            f"Answer with the letter of one option (a to {_LETTERS[max(count, 1) - 1]})."
        )
    raise InvalidAnswer(f"Answer with a number from 1 to {count}.")


def _grade_pick(variant: Variant, answer: SingleAnswer) -> Verdict:
    form = variant.answer_form
    try:
        k = parse_pick(variant, answer)
    except InvalidAnswer as exc:
        return _invalid(exc.message)
    right = int(variant.expected) + 1 if form.type == "choice" else int(variant.expected)
    shown = f"({_LETTERS[k - 1]})" if form.type == "choice" else str(k)
    if k == right:
        return Verdict(status="correct", score=1.0, message="Correct.", cells=[[True]], parsed=k)
    mistakes: list[Mistake] = []
    if form.type == "choice":
        found = (variant.context.get("choice_mistakes") or {}).get(k - 1)
    else:
        found = (variant.context.get("index_mistakes") or {}).get(k)
    if found:
        mistakes.append(Mistake(found[0], found[1]))
    message = f"{shown} is not the right answer." + (f" {mistakes[0].message}" if mistakes else "")
    return Verdict(
        status="incorrect", score=0.0, message=message, cells=[[False]], mistakes=mistakes, parsed=k
    )


# --------------------------------------------------------------------------------------------
# canonical correct answers


def _text(a: np.ndarray) -> str:
    if a.ndim == 0:
        return repr(float(a))
    if a.ndim == 1:
        return "[" + ", ".join(repr(float(v)) for v in a) + "]"
    return "[" + ", ".join(_text(row) for row in a) + "]"


def expected_answer_text(variant: Variant) -> str:
    """Text of a correct answer for ``variant`` (full precision), as a student could type it.

    ``quizapp check`` grades it with :func:`grade_answer` and expects ``correct``.  For a
    multi-part variant: one line per part, ``S = ...`` (its parts' answers are
    :func:`quizapp.bank.parts.expected_part_answers`).
    """
    form = variant.answer_form
    if variant.parts:
        from quizapp.bank.parts import expected_part_answers

        return "\n".join(f"{k} = {v}" for k, v in expected_part_answers(variant).items())
    if form.type == "choice":
        return _LETTERS[int(variant.expected)]
    if form.type == "index":
        return str(int(variant.expected))
    exp = np.asarray(variant.expected, dtype=float)
    if form.type == "point_on_line":
        pts = exp.reshape(form.count, -1)
        return "\n".join("(" + ", ".join(repr(float(v)) for v in p) + ")" for p in pts)
    return _text(exp)


#: A number in an answer's text (what :func:`shown_answer_text` rounds).
_NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def denoised(text: str) -> str:
    """``text`` with each decimal number as ``quizapp.bank.template.format_number(x, 12)``
    shows it: floating-point noise gone (``2.9999999999999973`` -> ``3``,
    ``8.881784197001252e-16`` -> ``0``), 12 significant digits at most.  Display only."""
    return _NUMBER.sub(lambda m: format_number(float(m.group(0)), 12), text)


def _as_asked(text: str, tolerance: Any) -> str | None:
    """``text`` with its numbers written as the tolerance asks for them: ``decdig`` d to d
    decimals, ``sigfig`` d to d significant digits; None for another tolerance."""
    digits = getattr(tolerance, "digits", None)
    mode = getattr(tolerance, "mode", None)
    if not isinstance(digits, int) or digits < 0 or mode not in ("decdig", "sigfig"):
        return None

    def one(match: re.Match[str]) -> str:
        x = float(match.group(0))
        if mode == "sigfig":  # the grader's own rounding, written without float noise
            return format_number(round_significant(x, max(digits, 1)), 12)
        shown = f"{x:.{digits}f}"
        return "0" if float(shown) == 0 else shown  # no "-0.00"

    return _NUMBER.sub(one, text)


def shown_answer_text(variant: Variant) -> str:
    """A correct answer for ``variant`` as the instructor's variant view and a finished page
    show it ("as typed"): :func:`expected_answer_text` written as the exercise asks (its
    ``decdig`` or ``sigfig`` tolerance: ``0.18`` for 2 decimals), else without floating-point
    noise (:func:`denoised`), the first of these that still grades correct with full score;
    else the full-precision text.  (A solve of an exact system gives ``2.9999999999999973``
    for 3: typing that back is nobody's answer.)"""
    text = expected_answer_text(variant)
    values = [float(x) for x in _NUMBER.findall(text)]
    for candidate in (_as_asked(text, variant.tolerance), denoised(text)):
        if candidate is None or candidate == text:
            continue
        if [float(x) for x in _NUMBER.findall(candidate)] == values:
            return candidate  # the same values, written shorter (``2.0`` -> ``2``)
        verdict = grade_answer(variant, candidate)
        if verdict.status == "correct" and verdict.score >= 1.0:
            return candidate
    return text


# --------------------------------------------------------------------------------------------
# the answer preview: how an answer is read, before it costs an attempt


@dataclass
class AnswerPreview:
    """How an answer to a variant is read, without grading it.

    - ``status``: ``valid`` (it can be read: a submission would be graded) or ``invalid`` (it
      cannot: a submission would be *invalid* and use no attempt).
    - ``message``: for ``valid``, what it was read as ("Read as a 2×3 matrix."); for ``invalid``,
      the same message a submission's verdict would give.
    - ``read_as``: the answer as read, as plain JSON data: a float (one number), a list (a
      vector), a list of rows (a matrix; ``None`` for a blank given cell), the point(s) for
      ``point_on_line``, the 1-based option number for ``choice`` and ``index``; None when
      invalid.
    - ``cells``: for a typed text, its rows of cell texts before evaluation (what a grid would
      hold: ``"3/4"`` stays ``"3/4"``), or None when the text does not split into rows, the form
      has no cells (choice, index) or the answer was posted as a grid.
    - ``invalid_cell``: for ``invalid``, the 1-based ``(row, column)`` of the cell at fault when
      there is one (``row`` None for an entry of a vector), as in :class:`Verdict`.

    Nothing in it depends on the expected answer's values, so it tells nothing about
    correctness; only its shape, which the form and the prompt show, is named when the answer
    has another one.
    """

    status: Literal["valid", "invalid"]
    message: str
    read_as: Any = None
    cells: list[list[str]] | None = None
    invalid_cell: tuple[int | None, int | None] | None = None
    #: a multi-part answer: each answered part's own preview (``status`` is ``invalid`` when
    #: one of them is)
    parts: dict[str, AnswerPreview] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"status", "read_as", "message", "cells", "invalid_cell"}`` (JSON-ready; with
        ``parts``, name -> that dict, for a multi-part answer)."""
        out = {
            "status": self.status,
            "read_as": self.read_as,
            "message": self.message,
            "cells": self.cells,
            "invalid_cell": list(self.invalid_cell) if self.invalid_cell else None,
        }
        if self.parts is not None:
            out["parts"] = {name: p.to_dict() for name, p in self.parts.items()}
        return out


def _plain_read(arr: np.ndarray) -> Any:
    """An array as read, as plain data (NaN, a blank given cell, as None)."""
    if arr.ndim == 0:
        return float(arr)
    return (
        [_plain_read(a) for a in arr]
        if arr.ndim > 1
        else [None if v != v else float(v) for v in arr.tolist()]
    )


#: Forms whose text is not read as rows of cells by ``split_cells``: one pick, or points
#: (``(1, 2)`` per line), whose cells come from the numbers read instead.
_NO_TEXT_CELLS = frozenset({"choice", "index", "point_on_line"})


def _text_cells(variant: Variant, answer: Answer) -> list[list[str]] | None:
    """A typed text's rows of cell texts (:func:`quizapp.grading.parse.split_cells`), for the
    forms that read it so; None otherwise."""
    if not isinstance(answer, str) or variant.answer_form.type in _NO_TEXT_CELLS:
        return None
    try:
        return split_cells(answer).rows
    except InvalidAnswer:
        return None


def _read(variant: Variant, answer: SingleAnswer) -> tuple[Any, str, list[list[str]] | None]:
    """(read_as, message, cells) of a readable answer; raises :class:`InvalidAnswer`."""
    form = variant.answer_form
    if form.type in ("choice", "index"):
        k = parse_pick(variant, answer)
        if form.type == "choice":
            return k, f"Read as option ({_LETTERS[k - 1]}).", None
        labels = _labels(variant)
        label = f" ({labels[k - 1]})" if k <= len(labels) and labels[k - 1] else ""
        return k, f"Read as {k}{label}.", None
    if form.type == "point_on_line":
        A = np.asarray(variant.context["coefficients"], dtype=float)
        pts = parse_points(answer, A.shape[1], form.count)
        cells: list[list[str]] | None = [[format(float(v), ".15g") for v in p] for p in pts]
        cells = cells if isinstance(answer, str) else None
        if form.count == 1:
            return pts[0].tolist(), f"Read as the point {latex_row(pts[0])}.", cells
        return pts.tolist(), f"Read as {form.count} points.", cells
    if form.type not in ("scalar", "vector", "matrix", "partial_matrix"):
        raise InvalidAnswer(f"This exercise has an unknown answer form {form.type!r}.")
    exp = np.asarray(variant.expected, dtype=float)
    mask = _mask(variant) if form.type == "partial_matrix" else None
    grid = _partial_grid(variant, answer) if mask is not None else answer
    ans, aligned = read_answer(grid, exp.shape, mask=mask)
    value = aligned if aligned is not None else ans
    if mask is not None and aligned is not None and not isinstance(answer, str):
        # The given cells as the grid shows them (not the exact values graded in their place).
        value = value.copy()
        given = form.given or []
        for i, j in zip(*np.nonzero(~mask), strict=True):
            text = given[i][j] if i < len(given) and j < len(given[i]) else None
            value[i, j] = parse_number(str(text)) if text is not None else np.nan
    if aligned is None:  # graded so it would be incorrect: say so before it costs an attempt
        message = (
            f"Read as {shape_mismatch(answer, value.shape, exp.shape)} Submitted as it is, it "
            "would be marked incorrect."
        )
    elif value.ndim == 0:
        message = f"Read as the number {float(value):.10g}."
    else:
        message = f"Read as {describe_shape(value.shape)}."
    return _plain_read(value), message, _text_cells(variant, answer)


def preview_answer(variant: Variant, answer: Answer) -> AnswerPreview:
    """How ``answer`` (text, or a grid of cell strings as the web posts it) is read for
    ``variant``: by the same parsing :func:`grade_answer` uses (``quizapp.grading.read_answer``,
    :func:`parse_points`, :func:`parse_pick`), so ``invalid`` here exactly when a submission
    would be invalid, with the same message.  Nothing is compared with the expected answer's
    values.  An answer of another shape than asked is ``valid`` (a submission would be graded),
    and its message says so and that it would be marked incorrect, as the verdict would
    (``quizapp.grading.shape_mismatch``; STACK's validation reports a wrong matrix size the same
    way, before grading).  A multi-part answer (part name -> text or grid) is read part by part
    (blank parts left out).  Never raises for bad input.
    """
    if variant.parts:
        return _preview_parts(variant, answer)
    if isinstance(answer, Mapping):
        return AnswerPreview("invalid", _NOT_PARTS)
    try:
        read_as, message, cells = _read(variant, answer)
    except InvalidAnswer as exc:
        cell = (exc.row, exc.column) if exc.column is not None or exc.row is not None else None
        cells = _text_cells(variant, answer)
        return AnswerPreview("invalid", exc.message, cells=cells, invalid_cell=cell)
    return AnswerPreview("valid", message, read_as=read_as, cells=cells)


def _preview_parts(variant: Variant, answer: Answer) -> AnswerPreview:
    """:func:`preview_answer` of a multi-part answer: each answered part read on its own."""
    from quizapp.bank.parts import is_blank, parse_part_text, part_variant

    names = [p.name for p in variant.parts]
    if isinstance(answer, str):
        answer = parse_part_text(answer, names) or answer
    if not isinstance(answer, Mapping):
        return AnswerPreview("invalid", _not_by_part(names))
    unknown = [k for k in answer if k not in names]
    if unknown:
        return AnswerPreview(
            "invalid",
            f"This exercise has no part {', '.join(map(repr, unknown))}; its parts are "
            f"{', '.join(names)}.",
        )
    parts = {
        p.name: preview_answer(part_variant(variant, p), answer[p.name])
        for p in variant.parts
        if not is_blank(answer.get(p.name))
    }
    bad = [n for n, p in parts.items() if p.status == "invalid"]
    if bad:
        message = f"Part {bad[0]} cannot be read: {parts[bad[0]].message}"
        return AnswerPreview("invalid", message, parts=parts)
    read = ", ".join(parts) or "no part"
    return AnswerPreview("valid", f"Read: {read}.", parts=parts)
