"""Sampling many seeds of an exercise to prove its variants are well-posed (``quizapp check``).

For each seed: the variant generates; the expected answer (and every worked-solution value) is
finite and shaped as the answer form says; the ``expression`` kind's
``require`` constraints hold; the prompt, hints and worked solution render (template and
Markdown/LaTeX, with no formula that fails to convert); the expected answer, written as text by
``expected_answer_text`` and graded by ``grade_answer``, is ``correct`` with full score; no
mistake detector fires on it; and a numeric answer's prompt (each part's prompt, for a
multi-part variant) states one precision that the tolerance agrees with, and the expected answer
given as the prompt says (rounded, or as exact fractions; :mod:`quizapp.bank.precision`) is
``correct``.  A multi-part variant is checked part by part (each part's expected answer finite
and shaped as its form says, graded correct with no mistake named), its follow-through
expressions give the true values from the true earlier values, and an answer carried forward
from a wrong earlier part earns the follow-through credit.  Across seeds: the variants really
vary (not all identical).  Warnings, not failures: the seeds where two named mistakes give the
same answer (:func:`quizapp.bank.distinct.coinciding_mistakes`), counted per exercise; and a
``choice`` variable of an ``expression`` exercise that never takes one of its values in the
seeds checked though it would be expected many times (:func:`unseen_choices`: a ``require``
line, or the redraw that keeps named mistakes apart, rules those variants out).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from quizapp.bank.answers import expected_answer_text, grade_answer
from quizapp.bank.distinct import coinciding_mistakes, finite
from quizapp.bank.expression import ExpressionError, truth
from quizapp.bank.loader import Exercise
from quizapp.bank.precision import variant_precision_problems
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
#: ``quizapp check`` (CI: ``--seeds 2000 --jobs 0``) to find.  About 1.6 ms per seed (generate + self-grade).
SAMPLE_SEEDS = 20
#: Checking stops when this many first seeds all fail to generate.
STOP_AFTER = 5
#: The start of the warning for named mistakes that coincide on a seed.
COINCIDE = "named mistakes give the same answer"


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
    #: A warning is reported but is no failure (``quizapp check`` still exits 0 for it): named
    #: mistakes that coincide on some seeds (:func:`coinciding_mistakes`).
    warning: bool = False

    def __str__(self) -> str:
        where = self.exercise_id if self.seed is None else f"{self.exercise_id} seed {self.seed}"
        if self.file is not None and self.line is not None:
            where = f"{self.file}:{self.line}:{self.column or 1}: {where}"
        return f"{'warning: ' if self.warning else ''}{where}: {self.message}"


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


def render_problems(exercise: Exercise, v: Variant) -> list[tuple[tuple[Any, ...], str]]:
    """What does not render in variant ``v`` of ``exercise`` (:func:`render_problem` of its
    prompt, hints, worked-solution steps and its parts' prompts and hints): (the YAML field
    responsible, as ``validate.field_mark`` takes it, e.g. ``("hints", 1)`` or ``("parts", 0,
    "prompt")``; the message, e.g. ``hint 2 has LaTeX that does not convert to MathML``)."""
    texts: list[tuple[tuple[Any, ...], str, str]] = [(("prompt",), "prompt", v.prompt)]
    texts += [(("hints", i), f"hint {i + 1}", h) for i, h in enumerate(v.hints)]
    texts += [(("solution",), f"solution step {s.title!r}", s.text) for s in v.solution]
    authored = [p.name for p in getattr(exercise.spec, "parts", None) or []]
    for p in v.parts:
        at: tuple[Any, ...] = (
            ("parts", authored.index(p.name)) if p.name in authored else ("parts",)
        )
        texts.append(((*at, "prompt"), f"part {p.name}'s prompt", p.prompt))
        texts += [
            ((*at, "hints", i), f"part {p.name}'s hint {i + 1}", h) for i, h in enumerate(p.hints)
        ]
    out = []
    for field, label, text in texts:
        problem = render_problem(text)
        if problem:
            out.append((field, f"{label} {problem}"))
    return out


def _field_mark(exercise: Exercise, field: tuple[Any, ...]) -> Any:
    """The position of ``field`` in the exercise's YAML (``validate.field_mark``), or None when
    the source does not parse (a bank built in code)."""
    from quizapp.bank.validate import field_mark
    from quizapp.bank.yamlio import parse_yaml

    try:
        _, located = parse_yaml(exercise.source, exercise.path)
    except BankError:
        return None
    return field_mark(located, field)


def _fingerprint(v: Variant) -> str:
    if v.parts:
        expected = b"\0".join(np.asarray(p.expected, dtype=float).tobytes() for p in v.parts)
        return hashlib.sha256(v.prompt.encode() + b"\0" + expected).hexdigest()
    expected = np.asarray(v.expected).tobytes() if finite(v.expected) else repr(v.expected).encode()
    return hashlib.sha256(v.prompt.encode() + b"\0" + expected).hexdigest()


def check_variant(exercise: Exercise, seed: int) -> tuple[Variant | None, list[CheckFailure]]:
    """Run every per-seed check on one seed; returns the variant (if it generated) and failures
    (the warning that named mistakes coincide, :func:`coinciding_mistakes`, is one of them with
    ``warning=True``, message ``named mistakes give the same answer: a = b, ...``)."""
    fails: list[CheckFailure] = []

    def fail(msg: str) -> None:
        fails.append(CheckFailure(exercise.id, seed, msg))

    try:
        v = exercise.generate(seed)
    except BankError as err:
        message = err.message.removeprefix(f"seed {seed}: ").removesuffix(f" (seed {seed})")
        fails.append(CheckFailure(exercise.id, seed, message, err.file, err.line, err.column))
        return None, fails
    if v.parts:
        fails.extend(CheckFailure(exercise.id, seed, m) for m in _check_parts(v))
    elif not finite(v.expected):
        fail(f"the expected answer is not finite: {v.expected!r}")
    form = v.answer_form
    if form.shape is not None and form.type in ("scalar", "vector", "matrix", "partial_matrix"):
        if tuple(np.shape(v.expected)) != tuple(form.shape):
            fail(
                f"the answer form's shape {form.shape} differs from the expected answer's {np.shape(v.expected)}"
            )
    for step in v.solution:
        if step.value is not None and not finite(step.value):
            fail(f"solution step {step.title!r} has a value that is not finite")
    if isinstance(exercise.params, ExpressionSpec):
        for text in exercise.params.require:
            try:
                if not truth(text, v.values):
                    fail(f"require {text!r} does not hold")
            except ExpressionError as exc:
                fail(f"require {text!r}: {exc.message}")
    for field, message in render_problems(exercise, v):
        mark = _field_mark(exercise, field)
        fails.append(
            CheckFailure(
                exercise.id,
                seed,
                message,
                exercise.path if mark is not None else None,
                mark.line if mark is not None else None,
                mark.column if mark is not None else None,
            )
        )
    _check_stated_precision(exercise, v, fails.append)
    try:
        if v.parts:
            from quizapp.bank.parts import expected_part_answers

            answer: Any = expected_part_answers(v)
        else:
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
        for name, part in (verdict.parts or {}).items():
            if part.mistakes:
                fail(
                    f"a mistake detector fires on part {name}'s expected answer: "
                    + ", ".join(m.code for m in part.mistakes)
                )
        if v.parts and verdict.status == "correct":
            fails.extend(CheckFailure(exercise.id, seed, m) for m in _check_carried(v))
    pairs = coinciding_mistakes(v)
    if pairs:
        text = ", ".join(f"{a} = {b}" for a, b in pairs)
        fails.append(CheckFailure(exercise.id, seed, f"{COINCIDE}: {text}", warning=True))
    return v, fails


def _check_stated_precision(
    exercise: Exercise, v: Variant, fail: Callable[[CheckFailure], None]
) -> None:
    """A numeric answer's prompt states one precision, the tolerance agrees with it at every
    expected entry, and the expected answer given as the prompt says grades correct: the one
    rule, :func:`quizapp.bank.precision.variant_precision_problems` (part by part for a
    multi-part variant), each failure at the YAML line responsible (the tolerance, or the
    prompt line stating the precision; :func:`quizapp.bank.validate.precision_mark`)."""
    problems = variant_precision_problems(v)
    if not problems:
        return
    from quizapp.bank.validate_precision import precision_mark

    parsed = _parsed(exercise.source, exercise.path)
    for problem in problems:
        if parsed is None or not isinstance(parsed[0], dict):
            fail(CheckFailure(exercise.id, v.seed, problem.message))
            continue
        label, mark = precision_mark(parsed[0], parsed[1], problem)
        fail(
            CheckFailure(
                exercise.id,
                v.seed,
                f"{label}: {problem.message}",
                exercise.path,
                mark.line,
                mark.column,
            )
        )


@lru_cache(maxsize=256)
def _parsed(source: str, path: str) -> tuple[Any, Any] | None:
    """The YAML of an exercise with its positions (None when it does not parse), cached: the
    precision failures of many seeds of one exercise are located in one parse."""
    from quizapp.bank.yamlio import parse_yaml

    try:
        return parse_yaml(source, path)
    except BankError:
        return None


def _check_parts(v: Variant) -> list[str]:
    """Each part's expected value is finite and shaped as its answer form says, and its
    follow-through expression gives that value from the true earlier values."""
    from quizapp.bank.expression import ExpressionError, evaluate
    from quizapp.bank.parts import numeric_values

    out = []
    true = {p.name: p.expected for p in v.parts}
    for p in v.parts:
        if not finite(p.expected):
            out.append(f"part {p.name}'s expected answer is not finite")
            continue
        form = p.answer_form
        if form.shape is not None and tuple(np.shape(p.expected)) != tuple(form.shape):
            out.append(
                f"part {p.name}'s answer form has shape {form.shape}, its expected answer "
                f"{np.shape(p.expected)}"
            )
        if p.follow_through:
            env = {**numeric_values(v.values), **{u: true[u] for u in p.uses}}
            try:
                again = np.asarray(evaluate(p.follow_through, env), dtype=float)
            except ExpressionError as exc:
                out.append(f"part {p.name}'s follow-through {p.follow_through!r}: {exc.message}")
                continue
            exp = np.asarray(p.expected, dtype=float)
            if again.shape != exp.shape or not np.allclose(again, exp, rtol=1e-9, atol=1e-9):
                out.append(
                    f"part {p.name}'s follow-through {p.follow_through!r} on the true earlier "
                    "values does not give its expected answer"
                )
    return out


def _check_carried(v: Variant) -> list[str]:
    """For each part computed from earlier parts: with its first earlier part answered wrong
    (one entry off by 1), the part's value computed from that wrong answer is graded correct
    (by follow-through, or because the slip does not change it), unless refused as trivial."""
    from dataclasses import replace

    from quizapp.bank.expression import ExpressionError, evaluate
    from quizapp.bank.parts import expected_part_answers, numeric_values, part_variant

    out = []
    answers = expected_part_answers(v)
    true = {p.name: np.asarray(p.expected, dtype=float) for p in v.parts}
    by_name = {p.name: p for p in v.parts}
    for p in v.parts:
        if not p.follow_through or not p.uses or (p.follow_through_credit or 0) <= 0:
            continue
        first = p.uses[0]
        if by_name[first].answer_form.type not in ("scalar", "vector", "matrix"):
            continue
        wrong = true[first].copy()
        wrong.flat[0] += 1.0
        env = {**numeric_values(v.values), **{u: true[u] for u in p.uses}, first: wrong}
        try:
            carried = np.asarray(evaluate(p.follow_through, env), dtype=float)
        except ExpressionError:
            continue
        if carried.shape != true[p.name].shape or not np.all(np.isfinite(carried)):
            continue
        typed = {
            **answers,
            first: expected_answer_text(replace(part_variant(v, by_name[first]), expected=wrong)),
            p.name: expected_answer_text(replace(part_variant(v, p), expected=carried)),
        }
        graded = grade_answer(v, typed)
        verdict = graded.parts.get(p.name) if graded.parts else None
        if verdict is None:
            out.append(f"part {p.name} got no verdict of its own: {graded.message}")
            continue
        if verdict.status != "correct" and "No follow-through credit" not in verdict.message:
            out.append(
                f"part {p.name} computed from a wrong {first} is {verdict.status}, not correct "
                f"by follow-through: {verdict.message}"
            )
    return out


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
    first: dict[str, CheckFailure] = {}  # where each message was first located
    generation_failures = 0
    seeds = list(seeds)
    coincide: dict[tuple[str, str], list[int]] = {}  # pair of codes -> the seeds
    coincide_seeds = 0
    choices = _scalar_choices(exercise)
    drawn: dict[str, set[float]] = {name: set() for name in choices}
    for i, seed in enumerate(seeds):
        v, fails = check_variant(exercise, seed)
        if v is not None:
            for name in choices:
                value = np.asarray(v.values.get(name, np.nan), dtype=float)
                if value.size == 1:
                    drawn[name].add(float(value.reshape(-1)[0]))
            pairs = coinciding_mistakes(v) if any(f.warning for f in fails) else []
            for pair in pairs:
                coincide.setdefault(pair, []).append(seed)
            coincide_seeds += bool(pairs)
        for f in fails:
            if f.warning:
                continue  # counted per exercise below
            repeats[f.message] = repeats.get(f.message, 0) + 1
            first.setdefault(f.message, f)
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
                    first[message].file,
                    first[message].line,
                    first[message].column,
                    count=n - REPORT_SAME,
                )
            )
    if coincide:
        which = "; ".join(
            f"{a} = {b} ({_seeds_text(found)})" for (a, b), found in sorted(coincide.items())
        )
        failures.append(
            CheckFailure(
                exercise.id,
                None,
                f"{COINCIDE} in {coincide_seeds} of {count} seeds (told as either slip): {which}",
                count=coincide_seeds,
                warning=True,
            )
        )
    for message in unseen_choices(choices, drawn, count):
        failures.append(CheckFailure(exercise.id, None, message, count=0, warning=True))
    if count >= 2 and len(prints) == 1:
        failures.append(
            CheckFailure(
                exercise.id, None, f"all {count} variants are identical: nothing is random"
            )
        )
    return failures


#: A ``choice`` value is reported as never drawn only when at least this many draws of it were
#: expected in the seeds checked (chance alone then misses it with probability below e^-10).
UNSEEN_EXPECTED = 10


def _scalar_choices(exercise: Exercise) -> dict[str, list[float]]:
    """The scalar ``choice:`` variables of an ``expression`` exercise: name -> its list."""
    spec = exercise.params
    if not isinstance(spec, ExpressionSpec):
        return {}
    return {
        name: [float(c) for c in var.choice]
        for name, var in spec.variables.items()
        if var.choice is not None and var.matrix is None and var.vector is None
    }


def unseen_choices(
    choices: dict[str, list[float]], drawn: dict[str, set[float]], count: int
) -> list[str]:
    """A message per ``choice`` variable with values never drawn in ``count`` variants though
    each was expected at least :data:`UNSEEN_EXPECTED` times (``count`` x its share of the
    list): the exercise's constraints rule those variants out, which its author may not mean
    (an edited answer key whose mistakes coincide for a whole class of variants)."""
    out = []
    for name, values in choices.items():
        missing = sorted(
            {
                v
                for v in values
                if v not in drawn.get(name, set())
                and count * values.count(v) / len(values) >= UNSEEN_EXPECTED
            }
        )
        if missing:
            shown = ", ".join(f"{v:g}" for v in missing)
            out.append(
                f"variable {name} never took {shown} in {count} variants (its choice lists "
                f"{len(values)} values): a require line, or the redraw that keeps named mistakes "
                "apart, rules those variants out"
            )
    return out


def _seeds_text(seeds: list[int], shown: int = 3) -> str:
    """``'seed 4'``, ``'seeds 1, 13, 15 and 2 more'``."""
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    text = ", ".join(str(s) for s in seeds[:shown])
    return f"seeds {text}" + (f" and {len(seeds) - shown} more" if len(seeds) > shown else "")


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


def _sample_in_worker(exercise_id: str, n_seeds: int) -> tuple[str, list[BankError]]:
    return exercise_id, sample_problems(_WORKER_EXERCISES[exercise_id], n_seeds)


def _pool(root: Path | None, exercises: list[Exercise], jobs: int) -> Any:
    """A pool of ``jobs`` worker processes holding ``exercises``: forked where the platform
    can (the workers inherit them), else started afresh, loading them again from ``root``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ids = [ex.id for ex in exercises]
    _WORKER_EXERCISES.update({ex.id: ex for ex in exercises})
    methods = multiprocessing.get_all_start_methods()
    if "fork" not in methods and root is None:
        raise ValueError("worker processes that cannot fork need the bank's folder (root)")
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_start_worker, initargs=(str(root), ids)
    )


#: :func:`sample_in_processes` starts worker processes only for at least this many exercises:
#: below it the pool's start (~40 ms) costs about what it saves (measured on two cores, 20
#: seeds of the bundled exercises: 8 took 0.12 s either way, 16 took 0.20 s alone, 0.14 s in two).
POOL_FROM = 16


def sample_in_processes(
    exercises: list[Exercise], seeds: int, jobs: int, root: Path | None = None
) -> dict[str, list[BankError]]:
    """:func:`sample_problems` of every exercise (``seeds`` seeds each), by exercise id, in
    ``jobs`` worker processes (0: one per core; in this process for one job or fewer than
    :data:`POOL_FROM` exercises).  The same result as one process: each exercise's seeds are
    sampled by one worker.  ``root``: the bank's folder, needed only where processes cannot
    fork.  Used by ``quizapp sync --jobs``."""
    import os

    jobs = min(jobs or os.cpu_count() or 1, len(exercises))
    if jobs <= 1 or len(exercises) < POOL_FROM:
        return {ex.id: sample_problems(ex, seeds) for ex in exercises}
    with _pool(root, exercises, jobs) as pool:
        return dict(
            pool.map(
                _sample_in_worker,
                [ex.id for ex in exercises],
                [seeds] * len(exercises),
                chunksize=4,
            )
        )


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
    from concurrent.futures import as_completed

    ids = [ex.id for ex in exercises]
    results: dict[str, list[CheckFailure]] = {}
    with _pool(root, exercises, jobs) as pool:
        futures = [pool.submit(_check_in_worker, eid, n_seeds) for eid in ids]
        for future in as_completed(futures):
            eid, failures = future.result()
            results[eid] = failures
            if progress:
                progress(n_seeds)
    return [f for eid in ids for f in results[eid]]


def sample_problems(exercise: Exercise, seeds: int = SAMPLE_SEEDS) -> list[BankError]:
    """What would show a student a broken variant, over seeds ``0 .. seeds-1`` of ``exercise``.

    Per seed: the variant generates; its prompt, hints, worked solution and parts render with
    no formula that fails to convert to MathML (:func:`render_problems`, located at the text's
    field); its expected answer is non-empty,
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
    # A multi-part variant's expected answer is a mapping of part names: each part is checked.
    answers = [(f"part {p.name}: ", p.expected, p.answer_form) for p in v.parts or ()]
    for where, expected, form in answers or [("", v.expected, v.answer_form)]:
        problem = _answer_problem(expected, form)
        if problem is not None:
            return _located(exercise, path, seed, where + problem)
    for field, message in render_problems(exercise, v)[:1]:  # a student would see it broken
        mark = _field_mark(exercise, field)
        if mark is None:
            return BankError(path, None, None, f"{message} (seed {seed})")
        return BankError(path, mark.line, mark.column, f"{message} (seed {seed})")
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


def _answer_problem(expected: Any, form: Any) -> str | None:
    """What makes one expected answer impossible to give (not finite, empty, or not the shape of
    its answer form), or None."""
    if not finite(expected):
        return "the expected answer is not finite"
    try:
        size = np.asarray(expected, dtype=float).size
    except (TypeError, ValueError):
        size = 1  # a non-numeric expected value (a choice label) is the kind's business
    if size == 0:
        return "the expected answer is empty"
    if form.shape is not None and form.type in ("scalar", "vector", "matrix", "partial_matrix"):
        if tuple(np.shape(expected)) != tuple(form.shape):
            return (
                f"the answer form's shape {form.shape} differs from the expected answer's "
                f"{np.shape(expected)}"
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
