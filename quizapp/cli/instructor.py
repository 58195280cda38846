"""Instructor commands: ``export-grades``, ``regrade``, ``import-roster``, ``export-roster``.

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
    from quizapp.models import db
    from quizapp.services import ServiceError

    app = _app()
    with app.app_context():
        try:
            config = inst.load_course_config(app.config.get("QUIZAPP_EXERCISES"))
        except inst.CourseConfigError as err:
            raise click.ClickException(str(err)) from None
        try:
            lines = inst.iter_gradebook_csv(db.session, quiz_id=quiz_id, config=config)
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        known = [q.id for q in inst.live_quizzes(db.session)]
        for warning in inst.course_config_warnings(config, known):
            click.echo(f"warning: {warning}", err=True)
        n_exercises = len(inst.live_exercises(db.session, quiz_id))
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
    from quizapp.models import db
    from quizapp.services import ServiceError

    app = _app()
    with app.app_context():
        try:
            summary = inst.regrade_exercise(db.session, exercise_id, dry_run=dry_run)
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
    from quizapp.models import db

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
            result = inst.import_roster(db.session, text, valid_for=timedelta(days=days))
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
        f"links expire on {result.expires_at:%Y-%m-%d %H:%M} UTC.",
        err=True,
    )
    for e, why in result.skipped:
        click.echo(f"  skipped line {e.line} {e.username}: {why}", err=True)


@main.command("export-roster")
@click.option("-o", "--output", required=True, help="The CSV file ('-' for standard output).")
def export_roster(output: str) -> None:
    """Write the students as CSV (username, display_name, email), importable again."""
    from quizapp import instructor as inst
    from quizapp.models import db

    app = _app()
    with app.app_context():
        _write(output, inst.roster_csv(db.session))
