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
from functools import lru_cache
from typing import Any

import numpy as np

from quizapp.bank.expression import ExpressionError, truth
from quizapp.bank.loader import Exercise
from quizapp.bank.schema import ExpressionSpec
from quizapp.bank.types import Variant
from quizapp.bank.yamlio import BankError
from quizapp.render import render_markdown

#: The same failure is printed for at most this many seeds (then counted).
REPORT_SAME = 3
#: Seeds ``quizapp sync`` and ``quizapp validate`` sample per new exercise version
#: (:func:`sample_problems`).  An exercise that fails for a share ``p`` of its seeds passes all of
#: them with probability ``(1 - p) ** 20``: below 1e-6 for ``p >= 0.5`` (``A ** 1000`` failed for
#: 21 of 30 students), 0.3 % for ``p = 0.25``, 12 % for ``p = 0.1``.  Rarer failures are for
#: ``quizapp check --seeds 200`` (CI) to find.  About 1.6 ms per seed (generate + self-grade).
SAMPLE_SEEDS = 20
#: Checking stops when this many first seeds all fail to generate.
STOP_AFTER = 5


@dataclass(frozen=True)
class CheckFailure:
    """One failed check: the exercise, the seed (``None`` for checks across seeds), what failed.
    ``count``: how many failures the line stands for (a line folding the seeds that failed with
    the same message stands for all of them)."""

    exercise_id: str
    seed: int | None
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    count: int = 1

    def __str__(self) -> str:
        where = self.exercise_id if self.seed is None else f"{self.exercise_id} seed {self.seed}"
        if self.file is not None and self.line is not None:
            where = f"{self.file}:{self.line}:{self.column or 1}: {where}"
        return f"{where}: {self.message}"


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
        try:
            html = render_markdown(text)
        except Exception as exc:  # render_markdown must never raise; report it if it does
            fail(f"{label} failed to render: {exc}")
            continue
        if "math-error" in html:
            fail(f"{label} has LaTeX that does not convert to MathML")
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
                    exercise.id,
                    None,
                    f"{n - REPORT_SAME} more seeds failed with: {message}",
                    count=n - REPORT_SAME,
                )
            )
    if count >= 2 and len(prints) == 1:
        failures.append(
            CheckFailure(
                exercise.id, None, f"all {count} variants are identical: nothing is random"
            )
        )
    return failures


def sample_problems(exercise: Exercise, seeds: int = SAMPLE_SEEDS) -> list[BankError]:
    """What would show a student a broken variant, over seeds ``0 .. seeds-1`` of ``exercise``.

    Per seed: the variant generates (prompt and hints render); its expected answer is non-empty,
    finite and of the answer form's shape; and the expected answer, written as a student would
    type it, grades correct with full score.  Returns ``[]`` when every seed passes, else one
    ``BankError`` for the first failing seed, at the line responsible (the generation error's own
    line; the ``answer:`` line of an ``expression`` exercise, the ``params:`` or ``kind:`` line
    otherwise), saying how many of the sampled seeds fail.  Cached by (exercise id, YAML text,
    seeds): pure.  Used by ``quizapp sync`` to refuse a new version (the previous one stays
    live) and by ``quizapp validate``.
    """
    return list(_sample(exercise.id, exercise.path, exercise.source, int(seeds)))


@lru_cache(maxsize=4096)
def _sample(exercise_id: str, path: str, source: str, seeds: int) -> tuple[BankError, ...]:
    from quizapp.bank.loader import load_exercise_source

    exercise = load_exercise_source(exercise_id, source)
    first: BankError | None = None
    failed = 0
    for seed in range(seeds):
        problem = _seed_problem(exercise, seed, path)
        if problem is not None:
            failed += 1
            first = first or problem
    if first is None:
        return ()
    return (
        BankError(
            first.file,
            first.line,
            first.column,
            f"{first.message}; fails for {failed} of {seeds} sampled seeds (0 to {seeds - 1})",
        ),
    )


def _seed_problem(exercise: Exercise, seed: int, path: str) -> BankError | None:
    """The first problem of ``seed`` (see :func:`sample_problems`), located, or None."""
    try:
        v = exercise.generate(seed)
    except BankError as err:
        return BankError(path, err.line, err.column, err.message)
    except Exception as exc:  # noqa: BLE001 - a kind's bug is the exercise's problem here
        return _located(exercise, path, seed, f"cannot generate a variant: {exc}")
    if _finite(v.expected):
        arr = np.asarray(v.expected, dtype=float)
        if arr.size == 0:
            return _located(exercise, path, seed, "the expected answer is empty")
    else:
        return _located(exercise, path, seed, "the expected answer is not finite")
    form = v.answer_form
    if form.shape is not None and form.type in ("scalar", "vector", "matrix", "partial_matrix"):
        if tuple(np.shape(v.expected)) != tuple(form.shape):
            return _located(
                exercise,
                path,
                seed,
                f"the answer form's shape {form.shape} differs from the expected answer's "
                f"{np.shape(v.expected)}",
            )
    grading = _grading()
    if grading is not None:
        grade_answer, expected_answer_text = grading
        try:
            answer = expected_answer_text(v)
            verdict = grade_answer(v, answer)
        except Exception as exc:  # noqa: BLE001
            return _located(exercise, path, seed, f"grading the expected answer raised {exc}")
        if verdict.status != "correct" or verdict.score != 1.0:
            return _located(
                exercise,
                path,
                seed,
                f"the expected answer {answer!r} is graded {verdict.status}: no student could "
                "get it right",
            )
    return None


def _located(exercise: Exercise, path: str, seed: int, message: str) -> BankError:
    """``message`` at the field responsible for a variant's answer: ``answer:`` for the
    ``expression`` kind, ``params:`` (or ``kind:``) for the others."""
    from quizapp.bank.validate import field_mark
    from quizapp.bank.yamlio import parse_yaml

    try:
        _, located = parse_yaml(exercise.source, path)
    except BankError:
        return BankError(path, None, None, f"seed {seed}: {message}")
    field = ("answer",) if isinstance(exercise.params, ExpressionSpec) else ("params",)
    mark = field_mark(located, field)
    label = field[0] if field[0] in located.keys else f"kind {exercise.kind.name}"
    return BankError(path, mark.line, mark.column, f"{label}: {message} (seed {seed})")
