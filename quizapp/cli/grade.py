"""``quizapp grade``: would this answer be accepted?  Pure: no app, no database.

Two forms (the contract in design.md):

- ``quizapp grade --expected TEXT --answer TEXT [--rtol R --atol A | --sigfig N | --decdig N]``
  grades a literal answer against a literal expected value (both in the answer syntax of
  :mod:`quizapp.grading.parse`);
- ``quizapp grade EXERCISE_ID --seed N --answer TEXT [--bank PATH]`` grades against the variant
  ``seed`` of a bank exercise, with the exercise's own tolerance and detectors; for a
  multi-part exercise ``--part NAME=TEXT`` (repeated, some parts or all), or ``--answer`` with
  every part on its own lines (``S = ...``).

``--json`` prints exactly one JSON object ``{"status", "score", "message", "cells", "mistakes"}``
(with ``"parts": {NAME: {"status", "score", "follow_through", "message", "cells",
"mistakes"}}`` for a multi-part exercise).
Exit status 0 whenever an answer was judged (``invalid`` included), 2 on bad usage.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from quizapp.bank import grade_answer, load_bank
from quizapp.cli._group import main
from quizapp.grading import DEFAULT_ATOL, DEFAULT_RTOL, Tolerance, Verdict, grade


def _tolerance(
    rtol: float | None, atol: float | None, sigfig: int | None, decdig: int | None
) -> Tolerance:
    modes = [
        name
        for name, given in (
            ("--rtol/--atol", rtol is not None or atol is not None),
            ("--sigfig", sigfig is not None),
            ("--decdig", decdig is not None),
        )
        if given
    ]
    if len(modes) > 1:
        raise click.UsageError(f"choose one tolerance mode, not {' and '.join(modes)}")
    if sigfig is not None:
        if not 1 <= sigfig <= 17:
            raise click.BadParameter("must be between 1 and 17", param_hint="--sigfig")
        return Tolerance("sigfig", digits=sigfig)
    if decdig is not None:
        if not -15 <= decdig <= 15:
            raise click.BadParameter("must be between -15 and 15", param_hint="--decdig")
        return Tolerance("decdig", digits=decdig)
    rtol = DEFAULT_RTOL if rtol is None else rtol
    atol = DEFAULT_ATOL if atol is None else atol
    for name, value in (("--rtol", rtol), ("--atol", atol)):
        if not math.isfinite(value) or value < 0:
            raise click.BadParameter("must be a finite number >= 0", param_hint=name)
    return Tolerance("relabs", rtol=rtol, atol=atol)


def _parse_parts(values: tuple[str, ...]) -> dict[str, str]:
    """``("S=1 2; 3 4", "W=...")`` -> ``{"S": "1 2; 3 4", "W": ...}``; usage error otherwise."""
    out: dict[str, str] = {}
    for item in values:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise click.BadParameter(
                f"write NAME=ANSWER, e.g. S='[[1, 2], [3, 4]]' (got {item!r})", param_hint="--part"
            )
        if name in out:
            raise click.BadParameter(f"part {name} is given twice", param_hint="--part")
        out[name] = text
    return out


def _grade_exercise(
    exercise_id: str, seed: int, answer: str | dict[str, str], bank_root: Path
) -> Verdict:
    """Grade against variant ``seed`` of a bank exercise, with its tolerance and detectors;
    ``answer`` is one text, or ``{part name: text}`` for a multi-part exercise.

    Raises ``click.UsageError`` when the bank folder or the exercise does not exist, and
    ``click.ClickException`` when the variant cannot be generated (a broken exercise).
    """
    if not bank_root.is_dir():
        raise click.UsageError(f"no exercise bank at {bank_root} (use --bank PATH)")
    bank = load_bank(bank_root)
    exercise = bank.exercises.get(exercise_id)
    if exercise is None:
        problems = [str(e) for e in bank.errors if exercise_id in str(e)]
        detail = ("; " + "; ".join(problems[:5])) if problems else ""
        raise click.UsageError(f"no exercise {exercise_id!r} in {bank_root}{detail}")
    try:
        variant = exercise.generate(seed)
    except Exception as exc:  # a broken exercise, not a misused command: one line, exit 1
        raise click.ClickException(
            f"exercise {exercise_id!r} cannot generate the variant with seed {seed}: {exc}"
        ) from None
    names = [p.name for p in variant.parts]
    if isinstance(answer, dict):
        if not names:
            raise click.UsageError(
                f"exercise {exercise_id!r} has one answer, not parts: use --answer"
            )
        unknown = [k for k in answer if k not in names]
        if unknown:
            raise click.UsageError(
                f"exercise {exercise_id!r} has no part {', '.join(unknown)} (its parts: "
                f"{', '.join(names)})"
            )
    try:
        return grade_answer(variant, answer)
    except Exception as exc:  # noqa: BLE001 - a grader bug on this variant: say so, exit 1
        raise click.ClickException(
            f"exercise {exercise_id!r} seed {seed}: the answer could not be graded "
            f"({type(exc).__name__}: {exc})"
        ) from None


def _print_verdict(verdict: Verdict) -> None:
    click.echo(f"{verdict.status} (score {verdict.score:.4g})")
    click.echo(verdict.message)
    if verdict.cells is not None and sum(len(row) for row in verdict.cells) > 1:
        click.echo("cells (ok = correct, X = wrong):")
        for row in verdict.cells:
            click.echo("  " + " ".join("ok" if ok else " X" for ok in row))
    for line in _mistake_lines(verdict):
        click.echo(line)
    for name, part in (verdict.parts or {}).items():
        ft = ", follow-through" if part.follow_through else ""
        click.echo(f"part {name}: {part.status} (score {part.score:.4g}{ft}): {part.message}")
        for line in _mistake_lines(part):
            click.echo("  " + line)


def _mistake_lines(verdict: Verdict) -> list[str]:
    """One line per distinct mistake message, with the codes that share it:
    ``mistake wrong_order, ab_transposed: Your answer is what either of these slips gives: ...``
    (mistakes that give the same answer share one sentence, which is printed once)."""
    codes: dict[str, list[str]] = {}
    for mistake in verdict.mistakes:
        codes.setdefault(mistake.message, []).append(mistake.code)
    return [f"mistake {', '.join(c)}: {message}" for message, c in codes.items()]


@main.command("grade")
@click.argument("exercise_id", required=False)
@click.option("--expected", help="The expected value, e.g. '1/3' or '[[1, 2], [3, 4]]'.")
@click.option("--answer", help="The answer as a student would type it.")
@click.option(
    "--part",
    "parts",
    multiple=True,
    metavar="NAME=ANSWER",
    help="With EXERCISE_ID of a multi-part exercise: one part's answer (repeat for more parts).",
)
@click.option("--rtol", type=float, help=f"Relative tolerance (default {DEFAULT_RTOL:g}).")
@click.option("--atol", type=float, help=f"Absolute tolerance (default {DEFAULT_ATOL:g}).")
@click.option("--sigfig", type=int, help="Accept agreement to N significant figures.")
@click.option("--decdig", type=int, help="Accept agreement to N decimal places.")
@click.option(
    "--partial-credit/--no-partial-credit",
    default=True,
    show_default=True,
    help="Score matrices by the fraction of correct entries.",
)
@click.option("--seed", type=int, help="With EXERCISE_ID: the variant's seed.")
@click.option(
    "--bank",
    "bank_root",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("exercises"),
    show_default=True,
    help="With EXERCISE_ID: the exercise bank's folder.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def grade_command(
    exercise_id: str | None,
    expected: str | None,
    answer: str | None,
    parts: tuple[str, ...],
    rtol: float | None,
    atol: float | None,
    sigfig: int | None,
    decdig: int | None,
    partial_credit: bool,
    seed: int | None,
    bank_root: Path,
    as_json: bool,
) -> None:
    """Grade ANSWER against --expected (or against EXERCISE_ID's variant --seed) and print the
    verdict.  Exit 0 when the answer was judged, invalid included; 2 on bad usage.

    \b
    Examples:
      quizapp grade --expected 1/3 --answer 0.333
      quizapp grade --expected '[[1,2],[3,4]]' --answer '[1 3; 2 4]' --json
      quizapp grade --expected 0.2689 --answer 0.27 --decdig 2
      quizapp grade 05-attention/01a-weights-step-by-step --seed 1 --part S='1 2 3; 4 5 6'
    """
    tolerance_given = any(v is not None for v in (rtol, atol, sigfig, decdig))
    if answer is not None and parts:
        raise click.UsageError("give either --answer or --part NAME=ANSWER, not both")
    if answer is None and not parts:
        raise click.UsageError(
            "Missing option '--answer' (or --part NAME=ANSWER for a multi-part exercise)."
        )
    if exercise_id is not None:
        if expected is not None:
            raise click.UsageError("give either EXERCISE_ID or --expected, not both")
        if seed is None:
            raise click.UsageError("grading against an exercise needs --seed N")
        if tolerance_given:
            raise click.UsageError("an exercise sets its own tolerance; drop --rtol/--atol/...")
        verdict = _grade_exercise(
            exercise_id, seed, _parse_parts(parts) if parts else answer or "", bank_root
        )
    else:
        if parts:
            raise click.UsageError("--part needs an EXERCISE_ID with parts (and --seed N)")
        assert answer is not None
        if expected is None:
            raise click.UsageError("give --expected TEXT (or an EXERCISE_ID with --seed N)")
        if seed is not None:
            raise click.UsageError("--seed needs an EXERCISE_ID")
        tolerance = _tolerance(rtol, atol, sigfig, decdig)
        try:
            verdict = grade(expected, answer, tolerance=tolerance, partial_credit=partial_credit)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--expected") from None
    if as_json:
        click.echo(json.dumps(verdict.to_dict()))
    else:
        _print_verdict(verdict)
