"""Sampling many seeds of an exercise to prove its variants are well-posed (``quizapp check``).

For each seed: the variant generates; the expected answer (and every worked-solution value) is
finite and shaped as the answer form says; the ``expression`` kind's
``require`` constraints hold; the prompt, hints and worked solution render (template and
Markdown/LaTeX, with no formula that fails to convert); the expected answer, written as text by
``expected_answer_text`` and graded by ``grade_answer``, is ``correct`` with full score; and no
mistake detector fires on it.  Across seeds: the variants really vary (not all identical).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from quizapp.bank.answers import expected_answer_text, grade_answer
from quizapp.bank.expression import ExpressionError, truth
from quizapp.bank.loader import Exercise
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
        try:
            html = render_markdown(text)
        except Exception as exc:  # render_markdown must never raise; report it if it does
            fail(f"{label} failed to render: {exc}")
            continue
        if "math-error" in html:
            fail(f"{label} has LaTeX that does not convert to MathML")
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
