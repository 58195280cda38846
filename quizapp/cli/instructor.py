"""Instructor commands: ``export-grades``, ``regrade``, ``import-roster``, ``export-roster``,
``extend`` (a student's own closing time) and ``override`` (a student's points set by hand).

Each builds the app with ``create_app()`` (configured from the environment, see
``quizapp.config``) and acts on its database; the logic is in ``quizapp.instructor``.
Exit codes: 0 done, 1 the request was refused (unknown exercise, invalid roster), 2 bad usage.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from quizapp.cli._group import app, main


def _app() -> Any:
    return app()


def _shown(value: Any, app: Any) -> str:
    """An instant in the course zone (``QUIZAPP_TIMEZONE``) with its abbreviation."""
    from quizapp import coursetime

    return coursetime.show(value, coursetime.parse_zone(app.config["QUIZAPP_TIMEZONE"]))


def _write(path: str, text: str) -> None:
    if path == "-":
        click.echo(text, nl=False)
        return
    try:
        Path(path).write_text(text, encoding="utf-8", newline="")
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None


@main.command("export-grades")
@click.option("--quiz", "quiz_id", default=None, help="Only this quiz (its folder name).")
@click.option(
    "-o",
    "--output",
    required=True,
    help="The CSV file to write ('-' for standard output).",
)
def export_grades(quiz_id: str | None, output: str) -> None:
    """Write the gradebook as CSV: one row per student (username, display name, email,
    points per exercise, quiz totals, weighted course total %)."""
    from quizapp import instructor as inst
    from quizapp.models import current_session
    from quizapp.services import ServiceError

    app = _app()
    with app.app_context():
        try:
            config = inst.load_course_config(app.config.get("QUIZAPP_EXERCISES"))
        except inst.CourseConfigError as err:
            raise click.ClickException(str(err)) from None
        try:
            lines = inst.iter_gradebook_csv(current_session(), quiz_id=quiz_id, config=config)
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        known = [q.id for q in inst.live_quizzes(current_session())]
        for warning in inst.course_config_warnings(config, known):
            click.echo(f"warning: {warning}", err=True)
        n_exercises = len(inst.live_exercises(current_session(), quiz_id))
        # Streamed one student at a time: memory stays flat whatever the class size.
        if output == "-":
            n_lines = 0
            for line in lines:
                click.echo(line, nl=False)
                n_lines += 1
        else:
            # With a byte order mark, as the download: Excel then reads accented names right.
            try:
                fh = Path(output).open("w", encoding="utf-8-sig", newline="")
            except OSError as exc:
                raise click.ClickException(
                    f"cannot write {output}: {exc.strerror or exc}"
                ) from None
            with fh:
                n_lines = 0
                for line in lines:
                    fh.write(line)
                    n_lines += 1
    if output != "-":
        weighted_by = "points" if config.weights is None else "course.yaml"
        click.echo(
            f"Wrote {output}: {n_lines - 1} students, {n_exercises} exercises "
            f"(course total weighted by {weighted_by}).",
            err=True,
        )


@main.command("regrade")
@click.argument("exercise_id")
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
def regrade(exercise_id: str, dry_run: bool) -> None:
    """Re-grade every stored submission of EXERCISE_ID against its current (synced) version,
    keeping the previous verdicts in history, and print what changed."""
    from quizapp import instructor as inst
    from quizapp.models import current_session
    from quizapp.services import ServiceError

    app = _app()
    with app.app_context():
        try:
            summary = inst.regrade_exercise(current_session(), exercise_id, dry_run=dry_run)
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        click.echo(summary.text())


@main.command("import-roster")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--base-url",
    default="http://127.0.0.1:5000",
    show_default=True,
    help="Where students reach the app (prefix of the printed reset links).",
)
@click.option(
    "--days", default=14, show_default=True, type=click.IntRange(1, 365), help="Link lifetime."
)
def import_roster(file: str, base_url: str, days: int) -> None:
    """Create student accounts from a roster CSV (username, display name, email) and print
    each new student's one-time password-reset link as CSV (username, link)."""
    from datetime import timedelta

    from quizapp import instructor as inst
    from quizapp.models import current_session

    try:
        raw = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
        text = raw.decode("utf-8-sig")
    except OSError as err:
        raise click.ClickException(f"{file}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise click.ClickException(f"{file}: not UTF-8 text (save it as 'CSV UTF-8')") from None
    app = _app()
    with app.app_context():
        try:
            result = inst.import_roster(current_session(), text, valid_for=timedelta(days=days))
        except inst.RosterError as err:
            for problem in err.problems:
                click.echo(f"{file}: {problem}", err=True)
            raise click.ClickException("the roster was not imported (nothing changed)") from None
    base = base_url.rstrip("/")
    rows = [["username", "reset_link"]]
    rows += [[e.username, f"{base}/reset/{token}"] for e, _, token in result.created]
    click.echo(inst.write_csv(rows), nl=False)
    click.echo(
        f"{len(result.created)} accounts created, {len(result.skipped)} skipped (username exists); "
        f"links expire on {_shown(result.expires_at, app)}.",
        err=True,
    )
    for e, why in result.skipped:
        click.echo(f"  skipped line {e.line} {e.username}: {why}", err=True)


@main.command("export-roster")
@click.option("-o", "--output", required=True, help="The CSV file ('-' for standard output).")
def export_roster(output: str) -> None:
    """Write the students as CSV (username, display_name, email), importable again."""
    from quizapp import instructor as inst
    from quizapp.models import current_session

    app = _app()
    with app.app_context():
        _write(output, inst.roster_csv(current_session()))


def _schedule_text(schedule: Any) -> str:
    """A student's late periods as text (``; late: until ... 50% credit, ...``), or ""."""
    from quizapp import coursetime

    late = schedule.late_periods
    if not late:
        return ""
    return "; late periods: " + ", ".join(
        f"until {coursetime.show_deadline(p.end, schedule.zone)} {p.credit:.0%} credit"
        for p in late
    )


@main.command("extend")
@click.argument("quiz_id")
@click.argument("username", required=False)
@click.option("--until", "until", default=None, help="The student's own closing time, in the "
              "course zone (QUIZAPP_TIMEZONE): '2026-12-10 12:00'; a date alone is the end of "
              "that day.")  # fmt: skip
@click.option("--credit", default=None, help="Credit of answers after the quiz's closing time "
              "and before --until: 0 to 1, or a percentage (0.5 or 50%; default 1).")  # fmt: skip
@click.option("--reason", default=None, help="Why (kept in the audit history; when replacing an "
              "extension, left out keeps its reason).")  # fmt: skip
@click.option("--roster", "roster", default=None, type=click.Path(dir_okay=False, allow_dash=True),
              help="Extend every student of this roster CSV (a 'username' column; optional "
              "'until', 'credit', 'reason' columns override the options).")  # fmt: skip
@click.option("--remove", is_flag=True, help="Remove the student's extension instead.")
def extend(
    quiz_id: str,
    username: str | None,
    until: str | None,
    credit: str | None,
    reason: str | None,
    roster: str | None,
    remove: bool,
) -> None:
    """Give USERNAME (or every student of --roster) their own closing time on QUIZ_ID.

    Answers after the quiz's closing time and before --until are on time for them (at --credit);
    the quiz's late periods follow --until.  Nothing changes when anything is refused."""
    from quizapp import coursetime
    from quizapp.models import current_session
    from quizapp.services import ServiceError, audit, extensions, schedules

    if (username is None) == (roster is None):
        raise click.UsageError("give either USERNAME or --roster FILE")
    if remove and roster is not None:
        raise click.UsageError("--remove takes a USERNAME, not --roster")
    if remove and (until is not None or credit is not None):
        raise click.UsageError("--remove takes no --until or --credit (nothing changed)")
    if not remove and roster is None and until is None:
        raise click.UsageError("--until is required (e.g. --until '2026-12-10 12:00')")
    text = None
    if roster is not None:
        try:
            raw = sys.stdin.buffer.read() if roster == "-" else Path(roster).read_bytes()
            text = raw.decode("utf-8-sig")
        except OSError as err:
            raise click.ClickException(f"{roster}: {err.strerror}") from None
        except UnicodeDecodeError:
            raise click.ClickException(f"{roster}: not UTF-8 text") from None
    app = _app()
    with app.app_context():
        try:
            if remove:
                assert username is not None
                if extensions.remove_extension(
                    current_session(), quiz_id, username, reason=reason or ""
                ):
                    quiz = audit.live_quiz(current_session(), quiz_id)
                    zone = schedules.quiz_zone(quiz)
                    click.echo(
                        f"Removed {username}'s extension of {quiz_id}: it closes for them on "
                        f"{coursetime.show_deadline(quiz.closes_at, zone)} again."
                    )
                else:
                    click.echo(f"{username} had no extension of {quiz_id}; nothing changed.")
                return
            if text is not None:
                requests = extensions.parse_extensions_csv(
                    text, until=until, credit=credit, reason=reason
                )
                rows = extensions.extend_roster(current_session(), quiz_id, requests)
            else:
                assert username is not None
                rows = [
                    extensions.set_extension(
                        current_session(), quiz_id, username, until, credit=credit, reason=reason
                    )
                ]
        except extensions.ExtensionsError as err:
            for problem in err.problems:
                click.echo(f"{roster}: {problem}", err=True)
            raise click.ClickException("no extension was given (nothing changed)") from None
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        for row in rows:
            schedule = schedules.schedule_for(row.quiz, row)
            click.echo(
                f"{row.user.username} may answer {row.quiz_id} until "
                f"{coursetime.show_deadline(row.until, schedule.zone)} "
                f"at {row.credit:.0%} credit (the quiz closes "
                f"{coursetime.show_deadline(schedule.closes, schedule.zone)})"
                + _schedule_text(schedule)
                + "."
            )


@main.command("override")
@click.argument("exercise_id")
@click.argument("username")
@click.option("--points", default=None, help="The student's points on the exercise "
              "(0 to the exercise's points).")  # fmt: skip
@click.option("--reason", default="", help="Why (required; kept in the audit history).")
@click.option("--remove", is_flag=True, help="Remove the override: points computed again.")
def override(
    exercise_id: str, username: str, points: str | None, reason: str, remove: bool
) -> None:
    """Set USERNAME's points on EXERCISE_ID by hand (wins over computed scores and regrades,
    until removed)."""
    from quizapp.instructor.gradebook import fmt_points
    from quizapp.models import Exercise, current_session, db
    from quizapp.services import ServiceError, audit, overrides

    if not remove and points is None:
        raise click.UsageError("--points is required (or --remove)")
    if remove and points is not None:
        raise click.UsageError("--remove takes no --points (nothing changed)")
    app = _app()
    with app.app_context():
        try:
            if remove:
                if overrides.remove_override(
                    current_session(), exercise_id, username, reason=reason
                ):
                    progress = audit.student_progress(current_session(), exercise_id, username)
                    # An override lives on the progress row, so removing one leaves the row.
                    assert progress is not None
                    click.echo(
                        f"Removed the override of {username} on {exercise_id}: "
                        f"{fmt_points(progress.best_points)} points, computed from the attempts."
                    )
                else:
                    click.echo(f"{username} had no override on {exercise_id}; nothing changed.")
                return
            progress = overrides.set_override(
                current_session(), exercise_id, username, points, reason
            )
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        exercise = db.session.get(Exercise, exercise_id)
        assert exercise is not None
        click.echo(
            f"{username}: {fmt_points(progress.best_points)} of {fmt_points(exercise.points)} "
            f"points on {exercise_id} (override; computed from the attempts: "
            f"{fmt_points(progress.best_score * exercise.points)}). Reason: {progress.override_reason}"
        )
