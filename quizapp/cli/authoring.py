"""Authoring commands: ``quizapp validate``, ``quizapp check``, ``quizapp preview``.

Pure: they read YAML files and never touch the database or the application.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

import click
import numpy as np

from quizapp.bank.answers import shown_answer_text
from quizapp.bank.check import SAMPLE_SEEDS
from quizapp.bank.loader import COURSE_FILE, Bank, Exercise, load_bank, load_exercise_file
from quizapp.bank.schema import suggest
from quizapp.bank.template import format_number
from quizapp.bank.types import AnswerForm
from quizapp.cli._group import main

#: Runs with more generated variants than this show a progress bar (on stderr).
PROGRESS_THRESHOLD = 200


def _zone() -> str:
    """``QUIZAPP_TIMEZONE`` as the server reads it (the quizzes' times are read there); an
    unknown zone is one line (``Error: configuration: ...``, exit 1)."""
    import os

    from quizapp.config import course_timezone

    return course_timezone(os.environ.get("QUIZAPP_TIMEZONE"))


def _load(path: Path) -> Bank:
    if path.is_file():
        bank = Bank()
        exercise, errors = load_exercise_file(path)
        bank.errors.extend(errors)
        if exercise is not None:
            bank.exercises[exercise.id] = exercise
        return bank
    return load_bank(path, _zone())


def _plural(n: int, word: str) -> str:
    from quizapp.services.text import counted

    return counted(n, word, {"quiz": "quizzes"}.get(word))


def _course_file_problems(path: Path, bank: Bank) -> list[str]:
    """Problems of ``PATH/course.yaml`` (quiz weights), if the bank has one: ``file:line: ...``
    for an invalid file.  Weights naming unknown quizzes and unweighted quizzes are printed as
    warnings (they do not fail validation: an unweighted quiz may be practice only)."""
    course_file = path / COURSE_FILE
    if not path.is_dir() or not course_file.is_file():
        return []
    from quizapp.instructor.course import (  # the instructor side owns the course settings
        CourseConfigError,
        course_config_warnings,
        parse_course_config,
    )

    try:
        config = parse_course_config(course_file.read_text(encoding="utf-8"), str(course_file))
    except (CourseConfigError, UnicodeDecodeError) as exc:
        return [str(exc)]
    for warning in course_config_warnings(config, bank.quizzes):
        click.echo("warning: " + warning.replace(COURSE_FILE, str(course_file), 1), err=True)
    return []


@main.command()
@click.argument("path", default="exercises", type=click.Path(path_type=Path))
@click.option("--seeds", "n_seeds", default=SAMPLE_SEEDS, show_default=True,
              type=click.IntRange(0, 100_000),
              help="Seeds (0..N-1) each exercise must work for, as quizapp sync asks.")  # fmt: skip
def validate(path: Path, n_seeds: int) -> None:
    """Check every exercise and quiz file under PATH (default: exercises).

    Each exercise must also work for the first --seeds seeds, as ``quizapp sync`` requires (its
    variants generate, their answers are non-empty and finite, and each expected answer grades
    correct).  Prints each problem as file:line:column: message and exits 1 if there is any;
    a numeric answer whose prompt (at seed 0) states no precision is printed as a warning.
    """
    from quizapp.bank.check import sample_problems
    from quizapp.bank.validate_precision import missing_precision_warnings

    if not path.exists():
        raise click.UsageError(f"{path} does not exist")
    bank = _load(path)
    problems = [str(err) for err in bank.errors]
    warnings = list(bank.warnings)
    for exercise in sorted(bank.exercises.values(), key=lambda e: e.id):
        problems += [str(p) for p in sample_problems(exercise, n_seeds)]
        warnings += [str(w) for w in missing_precision_warnings(exercise)]
    problems += _course_file_problems(path, bank)
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    for problem in problems:
        click.echo(problem)
    if problems:
        click.echo(f"{_plural(len(problems), 'problem')} found.", err=True)
        sys.exit(1)
    click.echo(
        f"OK: {_plural(len(bank.quizzes), 'quiz')}, {_plural(len(bank.exercises), 'exercise')}, "
        "no problems."
    )


@main.command()
@click.argument("path", default="exercises", type=click.Path(path_type=Path))
@click.option("--seeds", "n_seeds", default=50, show_default=True, type=click.IntRange(1, 100_000),
              help="Seeds (0..N-1) to sample per exercise.")  # fmt: skip
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(0, 64),
              help="Processes to check in (0: one per CPU).")  # fmt: skip
def check(path: Path, n_seeds: int, jobs: int) -> None:
    """Sample N seeds of every exercise under PATH and prove each variant is well-posed.

    Per seed: it generates, its expected answer is finite, its constraints hold, its prompt
    renders, its expected answer graded against itself is correct with no mistake detected,
    and its prompt states a precision the tolerance agrees with.  Across seeds: the variants
    vary.  Failures print the exercise id and seed; exit 1 on any.  Warnings (on stderr, no
    failure): the seeds of each exercise where two named mistakes give the same answer.  --jobs
    checks the exercises in several processes (the same checks, the same output).
    """
    from quizapp.bank.check import COINCIDE, check_exercise, check_in_processes

    if not path.exists():
        raise click.UsageError(f"{path} does not exist")
    bank = _load(path)
    for err in bank.errors:
        click.echo(str(err))
    exercises = sorted(bank.exercises.values(), key=lambda e: e.id)
    failures = []
    total = len(exercises) * n_seeds
    jobs = min(jobs or os.cpu_count() or 1, max(len(exercises), 1))
    with (
        click.progressbar(length=total, label="Checking", file=sys.stderr)
        if total > PROGRESS_THRESHOLD
        else contextlib.nullcontext()
    ) as bar:
        update = bar.update if bar is not None else None
        if jobs > 1:
            failures = check_in_processes(path, exercises, n_seeds, jobs, progress=update)
        else:
            for ex in exercises:
                failures.extend(check_exercise(ex, range(n_seeds), progress=update))
    warnings = [f for f in failures if f.warning]
    failures = [f for f in failures if not f.warning]
    for failure in failures:
        click.echo(str(failure))
    for warning in warnings:
        click.echo(str(warning), err=True)
    bad = {f.exercise_id for f in failures}
    summary = (
        f"{_plural(len(exercises), 'exercise')} x {_plural(n_seeds, 'seed')}: "
        f"{_plural(sum(f.count for f in failures), 'failure')} in {_plural(len(bad), 'exercise')}"
    )
    if bank.errors:
        summary += f", {_plural(len(bank.errors), 'file problem')}"
    click.echo(summary + ".")
    coinciding = [w for w in warnings if COINCIDE in w.message]
    if coinciding:
        seeds = sum(w.count for w in coinciding)
        click.echo(
            f"Warning: in {_plural(len(coinciding), 'exercise')}, {_plural(seeds, 'seed')} have "
            "named mistakes that give the same answer (not a failure).",
            err=True,
        )
    if failures or bank.errors:
        sys.exit(1)


def _text_value(value: Any, indent: str = "    ") -> str:
    arr = np.asarray(value) if not isinstance(value, str) else None
    if arr is None or arr.dtype.kind not in "biuf" or arr.size == 0:
        return indent + str(value)
    if arr.ndim == 0:
        return indent + format_number(arr.item())
    rows = [arr] if arr.ndim == 1 else list(arr)
    cells = [[format_number(x) for x in r] for r in rows]
    width = max(len(c) for r in cells for c in r)
    return "\n".join(indent + "[ " + "  ".join(c.rjust(width) for c in r) + " ]" for r in cells)


def _letter(i: int) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[i] if 0 <= i < 26 else str(i + 1)


def _expected_text(v: Any) -> str:
    """The expected answer as a student gives it: for ``choice`` the option's letter and
    1-based number (``variant.expected`` is the 0-based index, which students never see); for
    ``index`` the 1-based position and its label; otherwise the value."""
    form = v.answer_form
    if form.type == "choice":
        i = int(v.expected)
        option = form.choices[i] if form.choices and 0 <= i < len(form.choices) else ""
        return f"    ({_letter(i)}), option {i + 1}: {option}"
    if form.type == "index":
        k = int(v.expected)
        labels = form.choices or form.col_labels or []
        label = f": {labels[k - 1]}" if 1 <= k <= len(labels) else ""
        return f"    {k}{label}"
    return _text_value(v.expected)


def _form_text(form: AnswerForm) -> str:
    parts: list[str] = [form.type]
    if form.shape is not None and form.type in ("vector", "matrix", "partial_matrix"):
        parts.append("x".join(str(d) for d in form.shape))
        parts.append("grid shown" if form.show_shape else "shape not shown (free text)")
    if form.choices:
        parts.append(
            "choices: " + " | ".join(f"({_letter(i)}) {c}" for i, c in enumerate(form.choices))
        )
    if form.count > 1:
        parts.append(f"{form.count} distinct answers")
    if form.row_labels:
        parts.append("rows " + ", ".join(form.row_labels))
    if form.col_labels:
        parts.append("columns " + ", ".join(form.col_labels))
    if form.unknowns:
        parts.append("unknowns " + ", ".join(form.unknowns))
    return ", ".join(parts)


def _find(bank: Bank, exercise_id: str) -> Exercise:
    if exercise_id in bank.exercises:
        return bank.exercises[exercise_id]
    problems = [str(e) for e in bank.errors if exercise_id.split("/")[-1] in e.file]
    if problems:
        raise click.ClickException(f"{exercise_id} has problems:\n" + "\n".join(problems))
    best = suggest(exercise_id, sorted(bank.exercises))
    hint = f" Did you mean {best}?" if best else ""
    raise click.ClickException(f"no exercise {exercise_id!r}.{hint}")


@main.command()
@click.argument("exercise_id")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**63 - 1))
@click.option("--bank", "bank_path", default="exercises", show_default=True,
              type=click.Path(path_type=Path), help="The bank folder.")  # fmt: skip
def preview(exercise_id: str, seed: int, bank_path: Path) -> None:
    """Show one variant of EXERCISE_ID (quiz/exercise): prompt, expected answer, worked solution.

    A variant that cannot be shown (it does not generate, or its answer cannot be written out)
    is one line saying why, with exit status 1, never a traceback.
    """
    quiz_folder = bank_path / exercise_id.split("/")[0]
    bank = load_bank(quiz_folder if (quiz_folder / "quiz.yaml").is_file() else bank_path)
    exercise = _find(bank, exercise_id)
    from quizapp.bank.yamlio import BankError

    try:
        v = exercise.generate(seed)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    except Exception as exc:  # a kind's bug: say which exercise and seed
        raise click.ClickException(
            f"{exercise.path}: seed {seed}: cannot generate a variant: {exc}"
        ) from None
    try:
        _show(exercise, v, seed)
    except Exception as exc:  # noqa: BLE001 - e.g. an expected answer with no text form
        raise click.ClickException(
            f"{exercise.path}: seed {seed}: the variant cannot be shown: "
            f"{type(exc).__name__}: {exc}"
        ) from None


def _show(exercise: Exercise, v: Any, seed: int) -> None:
    """Print the variant ``v`` of ``exercise`` (``quizapp preview``)."""
    answer = shown_answer_text(v)
    out = click.echo
    out(
        click.style(f"{v.title}", bold=True)
        + f"  ({exercise.id}, seed {seed}, {exercise.kind.name})"
    )
    out("")
    out(click.style("Prompt", underline=True))
    out(v.prompt.rstrip())
    out("")
    if v.parts:
        _preview_parts(v, out)
    else:
        out(click.style("Answer form", underline=True) + ": " + _form_text(v.answer_form))
        out(click.style("Expected answer", underline=True) + ":")
        out(_expected_text(v))
        if answer is not None:
            out(f"    as typed: {answer}")
    tol = v.tolerance.to_dict()
    out(
        f"Points {exercise.points}, attempts {exercise.attempts}, tolerance "
        + ", ".join(f"{k}={v_}" for k, v_ in tol.items())
    )
    out("")
    out(click.style("Worked solution", underline=True))
    for i, step in enumerate(v.solution, start=1):
        out(f"  {i}. {step.title}: {step.text}")
        if step.value is not None:
            out(_text_value(step.value, "       "))
    if v.hints:
        out("")
        out(click.style("Hints", underline=True))
        for i, hint in enumerate(v.hints, start=1):
            out(f"  {i}. {hint}")


def _preview_parts(v: Any, out: Any) -> None:
    """The parts of a multi-part variant: prompt, form, points, tolerance, follow-through,
    detectors and expected answer of each."""
    from dataclasses import replace

    for part in v.parts:
        one = replace(v, expected=part.expected, answer_form=part.answer_form, parts=[])
        out(click.style(f"Part {part.name}", underline=True) + f" ({part.points:g} points)")
        if part.prompt:
            out("  " + part.prompt.rstrip().replace("\n", "\n  "))
        out("  answer form: " + _form_text(part.answer_form))
        tol = part.tolerance.to_dict() if part.tolerance is not None else {}
        out("  tolerance: " + ", ".join(f"{k}={v_}" for k, v_ in tol.items()))
        if part.uses:
            credit = 1.0 if part.follow_through_credit is None else part.follow_through_credit
            out(
                f"  follow-through: {part.follow_through} from your {', '.join(part.uses)} "
                f"({credit:.0%} credit)"
            )
        if part.detectors:
            out("  mistakes named: " + ", ".join(part.detectors))
        out("  expected:")
        out(_expected_text(one).replace("\n", "\n  ").replace("    ", "      ", 1))
        out(f"    as typed: {shown_answer_text(one)}")
        out("")
