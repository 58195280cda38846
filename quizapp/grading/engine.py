"""``grade``: turn a student's raw answer into a :class:`Verdict` against an expected value."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from quizapp.grading.compare import cells_close, check_tolerance
from quizapp.grading.mistakes import run_detectors
from quizapp.grading.parse import (
    MAX_CELL_CHARS,
    InvalidAnswer,
    bracketed_list,
    parse_answer,
    parse_answer_cells,
    parse_number,
    typed_text,
)
from quizapp.grading.types import Tolerance, Verdict


def _as_expected(expected: Any) -> np.ndarray:
    if isinstance(expected, str):
        try:
            arr = parse_answer(expected)
        except InvalidAnswer as exc:
            raise ValueError(f"expected value {expected!r} does not parse: {exc.message}") from None
    else:
        arr = np.asarray(expected, dtype=float)
    if arr.ndim > 2:
        raise ValueError(f"expected value must be 0-D, 1-D or 2-D, not {arr.ndim}-D")
    if arr.size == 0:
        raise ValueError("expected value is empty")
    if not np.isfinite(arr).all():
        raise ValueError("expected value contains NaN or infinity")
    return arr


def describe_shape(shape: tuple[int, ...]) -> str:
    """'a single number', 'a vector of 3 entries', 'a 2×3 matrix'."""
    if len(shape) == 0:
        return "a single number"
    if len(shape) == 1:
        return f"a vector of {shape[0]} entr{'y' if shape[0] == 1 else 'ies'}"
    return f"a {shape[0]}×{shape[1]} matrix"


def align_shape(answer: np.ndarray, expected_shape: tuple[int, ...]) -> np.ndarray | None:
    """Return ``answer`` reshaped to ``expected_shape`` when it is the same answer, else ``None``.

    Same shape: as is.  A 0-D or 1-D expected value (no orientation) accepts any answer with the
    same entries in the same order once length-1 axes are dropped: a row, a column, ``[5]`` for 5.
    A 0-D or 1-D answer likewise fits a 2-D expected row or column.  Two 2-D shapes must match
    exactly (a row is not a column).
    """
    if answer.shape == expected_shape:
        return answer
    if len(expected_shape) == 2 and answer.ndim == 2:
        return None
    squeeze = tuple(n for n in answer.shape if n != 1)
    if squeeze == tuple(n for n in expected_shape if n != 1):
        return answer.reshape(expected_shape)
    return None


def _plain(arr: np.ndarray) -> Any:
    if arr.ndim == 0:
        return float(arr)
    blank = np.isnan(arr)
    if not blank.any():
        return arr.tolist()
    cells = arr.astype(object)
    cells[blank] = None
    return cells.tolist()


_UNBRACKETED_SCALAR = re.compile(r"[^\[\]\n;\t]*\Z")


def read_answer(
    answer: str | Sequence[Sequence[str]],
    shape: tuple[int, ...],
    *,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Read ``answer`` exactly as :func:`grade` does for an expected value of ``shape``, without
    comparing it with anything: ``(answer as parsed, answer aligned to shape or None)``.

    - ``shape``: the expected value's shape (``()`` for one number): for ``()``, text without
      brackets, newlines, ``;`` or tabs is read as one number (:func:`parse_number`, so ``1,5``
      is a decimal-comma error); anything else goes through :func:`parse_answer`.
    - ``mask``: bool array of ``shape``, True = graded cell; blank cells elsewhere are allowed
      (NaN in the result), a blank graded cell is an error.
    - The aligned array is :func:`align_shape`'s (None: the answer has another shape, which
      :func:`grade` marks incorrect; it is still a readable answer).

    Raises :class:`InvalidAnswer` (message for the student, the cell where it can) for anything
    :func:`grade` calls invalid: unreadable text, a blank cell, nesting too deep.
    """
    ans, aligned, _ = _read_typed(answer, shape, mask)
    return ans, aligned


def _read_typed(
    answer: str | Sequence[Sequence[str]],
    shape: tuple[int, ...],
    mask: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray | None, list[list[str]]]:
    """:func:`read_answer`, also returning each cell's text as typed (rows of strings), for the
    detectors that judge what was typed (the digits of ``2.00``, which the float has lost)."""
    graded = None if mask is None else np.asarray(mask, dtype=bool)
    allow_blank = graded is not None and not graded.all()
    try:
        if (
            len(shape) == 0
            and isinstance(answer, str)
            and _UNBRACKETED_SCALAR.match(answer.strip())
            and not _is_list(answer)
        ):
            ans = np.asarray(parse_number(answer), dtype=float)
            typed = [[typed_text(answer)]]
        else:
            ans, cells = parse_answer_cells(answer, allow_blank=allow_blank)
            typed = cells.rows
    except RecursionError:  # defence in depth: the parser bounds nesting well below this
        raise InvalidAnswer("The answer is nested too deeply.") from None
    aligned = align_shape(ans, shape)
    if aligned is None:
        if np.isnan(ans).any():
            raise _blank_error(ans, np.ones(ans.shape, dtype=bool))
        return ans, None, typed
    # Only a masked answer may hold blanks (NaN): parse_answer refuses them otherwise.
    if allow_blank and graded is not None and (np.isnan(aligned) & graded).any():
        raise _blank_error(aligned, graded)
    return ans, aligned, typed


def grade(
    expected: Any,
    answer: str | Sequence[Sequence[str]],
    *,
    tolerance: Tolerance = Tolerance(),  # noqa: B008 (frozen dataclass)
    partial_credit: bool = True,
    mask: np.ndarray | None = None,
    detectors: Sequence[str] = (),
    context: Mapping[str, Any] | None = None,
) -> Verdict:
    """Grade one answer.

    - ``expected``: a float or array-like (0-D, 1-D or 2-D), or text in the answer syntax (the
      CLI's ``--expected``).  Must be finite.
    - ``answer``: the raw text, or a grid (list of rows of cell strings, as the web form posts it).
      For a 0-D expected value, text without brackets, newlines, ``;`` or tabs is read as one
      number (:func:`parse_number`), so ``1,5`` is a decimal-comma error, not two entries.
    - ``tolerance``: see :mod:`quizapp.grading.compare` (defaults: PrairieLearn's rtol 1e-2,
      atol 1e-8).
    - ``partial_credit``: score = fraction of correct graded cells (status ``partial``); without
      it any wrong cell scores 0.
    - ``mask``: bool array shaped like ``expected``, True = graded cell; other cells may be blank
      and are ignored (partly filled matrices).  Their marks in ``cells`` are True.
    - ``detectors``: codes of kind-specific mistake detectors to run on wrong answers, besides the
      generic ones.  ``context``: data for them (``tolerance`` and ``mask`` are added).

    Returns a :class:`Verdict`: ``invalid`` (score 0, no attempt used) when the answer cannot be
    read; ``incorrect`` for a wrong shape (message names both shapes, ``cells`` None); otherwise
    per-cell marks in ``cells`` (a 1-D value is one row) and ``correct`` only when every graded cell
    is (a mask with no graded cell is trivially correct).  ``mistakes`` lists detected
    misconceptions for wrong answers; they never change the score.

    One scoring rule concerns orientation: a square answer equal to the transpose of a
    non-symmetric expected matrix is ``incorrect`` with score 0, as a transposed non-square matrix
    is (its shape is wrong); its diagonal earns no partial credit.  (The ``transpose`` detector
    names the mistake in both cases; this rule, not the detector, sets the score.)

    Raises ``ValueError`` only for the caller's bugs: an unusable ``expected``, ``tolerance`` or
    ``mask``, or an unregistered detector code.  Never for anything in ``answer``.
    """
    exp = _as_expected(expected)
    check_tolerance(tolerance)
    graded: np.ndarray | None = None  # None: every cell is graded
    if mask is not None:
        graded = np.asarray(mask, dtype=bool)
        if graded.shape != exp.shape:
            raise ValueError(f"mask shape {graded.shape} differs from expected shape {exp.shape}")
    allow_blank = graded is not None and not graded.all()

    try:
        ans, aligned, typed = _read_typed(answer, exp.shape, graded)
    except InvalidAnswer as exc:
        cell = (exc.row, exc.column) if exc.column is not None or exc.row is not None else None
        return Verdict("invalid", 0.0, exc.message, invalid_cell=cell)

    if aligned is None:
        message = f"Your answer is {shape_mismatch(answer, ans.shape, exp.shape)}"
        ctx = _detector_context(context, tolerance, graded, _typed(typed, ans.shape))
        mistakes = run_detectors(ans, exp, ctx, detectors)
        return Verdict("incorrect", 0.0, message, None, mistakes, _plain(ans))

    values = aligned.ravel().tolist()
    close = cells_close(aligned, exp, tolerance).ravel().tolist()
    total = exp.size
    if graded is not None:
        flags = graded.ravel().tolist()
        close = [c or not g for c, g in zip(close, flags, strict=True)]
        total = sum(flags)
    right = sum(close) - (exp.size - total)  # ungraded cells are marked True
    cells = _rows(close, exp.shape)
    parsed = _plain_values(values, exp.shape, allow_blank)
    if right == total:
        return Verdict("correct", 1.0, "Correct.", cells, [], parsed)

    ctx = _detector_context(context, tolerance, graded, _typed(typed, aligned.shape))
    mistakes = run_detectors(aligned, exp, ctx, detectors)
    if graded is None:
        graded = np.ones(exp.shape, dtype=bool)
    if _is_transposed(aligned, exp, graded, tolerance):
        # Same rule as a wrong shape: a square matrix typed transposed is the wrong matrix, so its
        # diagonal earns no partial credit (a 2x3 typed as 3x2 already scores 0 for its shape).
        # The cell marks say the same as the score: no graded cell counts, the diagonal included.
        none_count = _rows((~graded).ravel().tolist(), exp.shape)
        message = "Incorrect: your rows and columns are swapped, so no entry counts."
        return Verdict("incorrect", 0.0, message, none_count, mistakes, parsed)
    if total == 1:
        shown = _number(aligned[graded][0], exp[graded][0])
        message = f"Incorrect: your answer was read as {shown}."
        return Verdict("incorrect", 0.0, message, cells, mistakes, parsed)
    counted = f"{right} of {total} entries are correct."
    if right > 0 and partial_credit:
        return Verdict("partial", right / total, counted, cells, mistakes, parsed)
    return Verdict("incorrect", 0.0, f"Incorrect: {counted}", cells, mistakes, parsed)


def _detector_context(
    context: Mapping[str, Any] | None,
    tolerance: Tolerance,
    graded: np.ndarray | None,
    typed: np.ndarray | None,
) -> dict[str, Any]:
    """The detectors' context: the caller's, plus ``tolerance``, ``mask`` and ``typed`` unless it
    has them (built only for a wrong answer: a correct one runs no detector)."""
    ctx: dict[str, Any] = dict(context or {})
    ctx.setdefault("tolerance", tolerance)
    ctx.setdefault("mask", graded)
    ctx.setdefault("typed", typed)
    return ctx


def _typed(rows: list[list[str]], shape: tuple[int, ...]) -> np.ndarray | None:
    """The cells' text as an object array of ``shape`` (the parsed answer's, in the same C order
    as :func:`align_shape`'s reshape), or None if the counts differ."""
    flat = [cell for row in rows for cell in row]
    if len(flat) != int(np.prod(shape, dtype=int)):
        return None
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(shape)


def _rows(flat: list[Any], shape: tuple[int, ...]) -> list[list[Any]]:
    """A flat (C-order) list as rows: one row for a 0-D or 1-D shape (as :class:`Verdict`'s
    ``cells``)."""
    if len(shape) < 2:
        return [flat]
    width = shape[1]
    return [flat[i : i + width] for i in range(0, len(flat), width)]


def _plain_values(flat: list[float], shape: tuple[int, ...], blanks: bool) -> Any:
    """``_plain`` of an array given as its flat list of values: a float for 0-D, a list for 1-D,
    rows for 2-D; NaN (a blank, possible only when ``blanks``) becomes ``None``."""
    values: list[Any] = [None if v != v else v for v in flat] if blanks else flat
    if not shape:
        return values[0]
    if len(shape) == 1:
        return values
    return _rows(values, shape)


def _is_transposed(
    answer: np.ndarray, expected: np.ndarray, graded: np.ndarray, tolerance: Tolerance
) -> bool:
    """A square, non-symmetric expected matrix whose transpose matches every graded cell."""
    if expected.ndim != 2 or expected.shape[0] != expected.shape[1] or expected.shape[0] < 2:
        return False
    if cells_close(expected, expected.T, tolerance)[graded].all():
        return False
    return bool(cells_close(answer, expected.T, tolerance)[graded].all())


def _is_list(answer: str) -> bool:
    """``(2, 5)`` or ``{2, 5}``: a vector in round or curly brackets, not one number.

    Used for a 0-D expected value only; ``(1,5)`` (commas only between digits) stays a number, so
    the decimal comma is reported as invalid rather than graded as a wrong shape."""
    stripped = answer.strip()
    if len(stripped) > MAX_CELL_CHARS or stripped[:1] not in "({":
        return False
    if not re.search(r",(?![0-9])|(?<![0-9]),", stripped):
        return False  # "(1,5)": every comma between digits may be a decimal comma, so invalid
    try:
        return bracketed_list(stripped) is not None
    except InvalidAnswer:
        return True  # a malformed list: parse_answer gives the message


def shape_mismatch(answer: object, shape: tuple[int, ...], expected: tuple[int, ...]) -> str:
    """What is wrong with an answer read as an array of ``shape`` when ``expected`` is asked for
    and neither fits the other (:func:`align_shape` gave None): ``"a vector of 3 entries, but a
    2×2 matrix is asked for."``, with a hint when ``answer`` (the text as typed) would fit had
    its ``1,5`` meant 1.5.  The rest of a sentence: :func:`grade`'s verdict begins it with "Your
    answer is", the answer preview (``quizapp.bank.preview_answer``) with "Read as".
    """
    message = f"{describe_shape(shape)}, but {describe_shape(expected)} is asked for."
    if _decimal_comma_fits(answer, expected):
        message += " If you used a comma for decimals, use a point: 1.5, not 1,5."
    return message


def _decimal_comma_fits(answer: object, shape: tuple[int, ...]) -> bool:
    """Would the answer have the right shape if ``1,5`` meant 1.5?  (Hint for the message.)"""
    if not isinstance(answer, str) or not re.search(r"[0-9],[0-9]", answer):
        return False
    try:
        fixed = parse_answer(re.sub(r"(?<=[0-9]),(?=[0-9])", ".", answer))
    except InvalidAnswer:
        return False
    return align_shape(fixed, shape) is not None


def _number(x: float, expected: float) -> str:
    """``x`` to 15 significant digits, or at full precision (``repr``, up to 17) when the short
    form would hide its difference from ``expected`` (``1.000000000000001`` against ``1``)."""
    short = f"{float(x):.15g}"
    if float(x) != float(expected) and short == f"{float(expected):.15g}":
        return repr(float(x))
    return short


def _blank_error(arr: np.ndarray, graded: np.ndarray) -> InvalidAnswer:
    """The error for the first blank graded cell of ``arr`` (NaN marks a blank), naming it."""
    idx = tuple(int(i) for i in np.argwhere(np.isnan(arr) & graded)[0])
    if len(idx) == 2:
        r, c = idx[0] + 1, idx[1] + 1
        return InvalidAnswer(f"Row {r}, column {c} is empty.", r, c)
    if len(idx) == 1:
        c = idx[0] + 1
        return InvalidAnswer(f"Entry {c} is empty.", None, c)
    return InvalidAnswer("The answer is empty.")
