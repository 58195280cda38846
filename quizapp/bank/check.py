"""Sampling many seeds of an exercise to prove its variants are well-posed (``quizapp check``).

For each seed: the variant generates; the expected answer (and every worked-solution value) is
finite and shaped as the answer form says; the ``expression`` kind's
``require`` constraints hold; the prompt, hints and worked solution render (template and
Markdown/LaTeX, with no formula that fails to convert); the expected answer, written as text by
``expected_answer_text`` and graded by ``grade_answer``, is ``correct`` with full score; no
mistake detector fires on it; and a numeric answer's prompt states one precision that the
tolerance agrees with, and the expected answer given as the prompt says (rounded, or as exact
fractions; :mod:`quizapp.bank.precision`) is ``correct``.  Across seeds: the variants really vary (not all identical).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from quizapp.bank.expression import ExpressionError, truth
from quizapp.bank.loader import Exercise
from quizapp.bank.precision import (
    NUMERIC_FORMS,
    NotStatable,
    answer_as_stated,
    precision_statements,
    tolerance_problem,
)
from quizapp.bank.schema import ExpressionSpec
from quizapp.bank.types import Variant
from quizapp.bank.yamlio import BankError
from quizapp.render import render_markdown

#: The same failure is printed for at most this many seeds (then counted).
REPORT_SAME = 3
#: Checking stops when this many first seeds all fail to generate.
STOP_AFTER = 5


@dataclass(frozen=True)
class CheckFailure:
    """One failed check: the exercise, the seed (``None`` for checks across seeds), what failed."""

    exercise_id: str
    seed: int | None
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = self.exercise_id if self.seed is None else f"{self.exercise_id} seed {self.seed}"
        if self.file is not None and self.line is not None:
            where = f"{self.file}:{self.line}:{self.column or 1}: {where}"
        return f"{where}: {self.message}"


#: A number as the kinds write it: digits with an optional sign and decimals, or a LaTeX
#: fraction of two integers (``\frac{-3}{4}``, ``-\tfrac{1}{2}``), which renders like one.
_NUMBER = re.compile(r"-?\\t?frac\{-?[0-9]+\}\{[0-9]+\}|-?[0-9]+(?:\.[0-9]+)?")
#: Skeletons (every number written 0) of texts that rendered without a problem.  A
#: process-wide set, bounded by :data:`MAX_SKELETONS`.
_RENDERED_OK: set[str] = set()
MAX_SKELETONS = 200_000


def render_problem(text: str) -> str | None:
    """What is wrong with rendering ``text`` (Markdown with ``$...$`` LaTeX), or None.

    Texts that differ only in their numbers render alike (no Markdown or LaTeX construct
    depends on which number is written, on its sign, or on whether it is written as a fraction
    of two integers), so a text whose *skeleton*, every number written 0, rendered fine before
    is not rendered again: over many seeds the numbers change, the structure rarely does.  Any
    other text is rendered in full."""
    skeleton = _NUMBER.sub("0", text)
    if skeleton in _RENDERED_OK:
        return None
    try:
        html = render_markdown(text)
    except Exception as exc:  # render_markdown must never raise; report it if it does
        return f"failed to render: {exc}"
    if "math-error" in html:
        return "has LaTeX that does not convert to MathML"
    if len(_RENDERED_OK) < MAX_SKELETONS:
        _RENDERED_OK.add(skeleton)
    return None


def _grading() -> tuple[Callable[..., Any], Callable[[Variant], str]] | None:
    try:
        from quizapp.bank.answers import expected_answer_text, grade_answer
    except ImportError:
        return None
    return grade_answer, expected_answer_text


def grading_available() -> bool:
    """Whether ``quizapp.bank.answers`` (answer-form grading) is installed, so self-grading runs."""
    return _grading() is not None


def _finite(value: Any) -> bool:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return True  # non-numeric expected values (e.g. a choice label) are the kind's business
    return bool(np.all(np.isfinite(arr)))


def _fingerprint(v: Variant) -> str:
    expected = (
        np.asarray(v.expected).tobytes() if _finite(v.expected) else repr(v.expected).encode()
    )
    return hashlib.sha256(v.prompt.encode() + b"\0" + expected).hexdigest()


def check_variant(exercise: Exercise, seed: int) -> tuple[Variant | None, list[CheckFailure]]:
    """Run every per-seed check on one seed; returns the variant (if it generated) and failures."""
    fails: list[CheckFailure] = []

    def fail(msg: str) -> None:
        fails.append(CheckFailure(exercise.id, seed, msg))

    try:
        v = exercise.generate(seed)
    except BankError as err:
        message = err.message.removeprefix(f"seed {seed}: ").removesuffix(f" (seed {seed})")
        fails.append(CheckFailure(exercise.id, seed, message, err.file, err.line, err.column))
        return None, fails
    if not _finite(v.expected):
        fail(f"the expected answer is not finite: {v.expected!r}")
    form = v.answer_form
    if form.shape is not None and form.type in ("scalar", "vector", "matrix", "partial_matrix"):
        if tuple(np.shape(v.expected)) != tuple(form.shape):
            fail(
                f"the answer form's shape {form.shape} differs from the expected answer's {np.shape(v.expected)}"
            )
    for step in v.solution:
        if step.value is not None and not _finite(step.value):
            fail(f"solution step {step.title!r} has a value that is not finite")
    if isinstance(exercise.params, ExpressionSpec):
        for text in exercise.params.require:
            try:
                if not truth(text, v.values):
                    fail(f"require {text!r} does not hold")
            except ExpressionError as exc:
                fail(f"require {text!r}: {exc.message}")
    texts = [("prompt", v.prompt)] + [(f"hint {i + 1}", h) for i, h in enumerate(v.hints)]
    texts += [(f"solution step {s.title!r}", s.text) for s in v.solution]
    for label, text in texts:
        problem = render_problem(text)
        if problem:
            fail(f"{label} {problem}")
    _check_stated_precision(v, fail)
    grading = _grading()
    if grading is not None:
        grade_answer, expected_answer_text = grading
        try:
            answer = expected_answer_text(v)
            verdict = grade_answer(v, answer)
        except Exception as exc:
            fail(f"grading the expected answer raised {type(exc).__name__}: {exc}")
        else:
            if verdict.status != "correct" or verdict.score != 1.0:
                fail(
                    f"the expected answer {answer!r} graded against itself is {verdict.status} "
                    f"(score {verdict.score}): {verdict.message}"
                )
            if verdict.mistakes:
                fail(
                    "a mistake detector fires on the expected answer: "
                    + ", ".join(m.code for m in verdict.mistakes)
                )
    return v, fails


def _check_stated_precision(v: Variant, fail: Callable[[str], None]) -> None:
    """A numeric answer's prompt states one precision, the tolerance agrees with it, and the
    expected answer given as the prompt says (rounded, or as exact fractions) grades correct."""
    form = v.answer_form
    if form.type not in NUMERIC_FORMS or not _finite(v.expected):
        return  # a key that is not finite is reported on its own
    found = precision_statements(v.prompt)
    if len(found) != 1:
        fail(
            "the prompt states no precision for its numeric answer: say 'Give exact values.', "
            "'to N decimal places' or 'to N significant figures'"
            if not found
            else "the prompt states several precisions ("
            + " and ".join(sorted(p.phrase() for p in found))
            + "): state one"
        )
        return
    precision = found.pop()
    problem = tolerance_problem(precision, v.tolerance)
    if problem:
        fail(problem)
    grading = _grading()
    if grading is None:
        return
    try:
        text = answer_as_stated(v.expected, form.type, form.count, precision)
    except NotStatable as exc:
        fail(str(exc))
        return
    verdict = grading[0](v, text)
    if verdict.status != "correct":
        fail(
            f"the expected answer given as the prompt says ({precision.phrase()}), {text!r}, is "
            f"graded {verdict.status}: {verdict.message}"
        )


def check_exercise(
    exercise: Exercise,
    seeds: Iterable[int],
    progress: Callable[[int], None] | None = None,
) -> list[CheckFailure]:
    """Check ``exercise`` on every seed in ``seeds``; ``progress(1)`` is called after each."""
    failures: list[CheckFailure] = []
    prints: set[str] = set()
    count = 0
    repeats: dict[str, int] = {}
    generation_failures = 0
    seeds = list(seeds)
    for i, seed in enumerate(seeds):
        v, fails = check_variant(exercise, seed)
        for f in fails:
            repeats[f.message] = repeats.get(f.message, 0) + 1
            if repeats[f.message] <= REPORT_SAME:
                failures.append(f)
        if v is not None:
            prints.add(_fingerprint(v))
            count += 1
            generation_failures = 0
        else:
            generation_failures += 1
        if progress:
            progress(1)
        if generation_failures >= STOP_AFTER and count == 0:
            # The first seeds all fail to generate: the exercise is broken, not unlucky.
            failures.append(
                CheckFailure(
                    exercise.id, None, f"stopped after {i + 1} seeds that all failed to generate"
                )
            )
            if progress:
                progress(len(seeds) - i - 1)
            break
    for message, n in repeats.items():
        if n > REPORT_SAME:
            failures.append(
                CheckFailure(
                    exercise.id, None, f"{n - REPORT_SAME} more seeds failed with: {message}"
                )
            )
    if count >= 2 and len(prints) == 1:
        failures.append(
            CheckFailure(
                exercise.id, None, f"all {count} variants are identical: nothing is random"
            )
        )
    return failures


# --- several processes ----------------------------------------------------------------------

#: The exercises a worker process checks: set by :func:`_start_worker` (or inherited on fork).
_WORKER_EXERCISES: dict[str, Exercise] = {}


def _start_worker(root: str, exercise_ids: list[str]) -> None:
    """Initialise a worker process: load the exercises (a forked worker has them already)."""
    if all(eid in _WORKER_EXERCISES for eid in exercise_ids):
        return
    from quizapp.bank.loader import load_bank, load_exercise_file

    path = Path(root)
    if path.is_file():
        exercise, _ = load_exercise_file(path)
        found = {exercise.id: exercise} if exercise is not None else {}
    else:
        found = load_bank(path).exercises
    _WORKER_EXERCISES.update(found)


def _check_in_worker(exercise_id: str, n_seeds: int) -> tuple[str, list[CheckFailure]]:
    return exercise_id, check_exercise(_WORKER_EXERCISES[exercise_id], range(n_seeds))


def check_in_processes(
    root: Path,
    exercises: list[Exercise],
    n_seeds: int,
    jobs: int,
    progress: Callable[[int], None] | None = None,
) -> list[CheckFailure]:
    """:func:`check_exercise` of every exercise on seeds ``0..n_seeds-1``, in ``jobs`` worker
    processes (one exercise per task, so every cross-seed check sees all its seeds).  ``root``
    is the bank (folder or file) the exercises were loaded from: a worker started afresh loads
    it again.  Returns the failures in the order of ``exercises``, as one process would;
    ``progress(n_seeds)`` is called as each exercise is done."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ids = [ex.id for ex in exercises]
    _WORKER_EXERCISES.update({ex.id: ex for ex in exercises})
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    results: dict[str, list[CheckFailure]] = {}
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_start_worker, initargs=(str(root), ids)
    ) as pool:
        futures = [pool.submit(_check_in_worker, eid, n_seeds) for eid in ids]
        for future in as_completed(futures):
            eid, failures = future.result()
            results[eid] = failures
            if progress:
                progress(n_seeds)
    return [f for eid in ids for f in results[eid]]
