"""Server commands: ``serve``, ``sync``, ``create-user``, ``db upgrade``.

Each builds the app with ``create_app()`` (configured from the environment, see
``quizapp.config``), so they act on the same database and instance folder as the server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from quizapp.bank.check import SAMPLE_SEEDS
from quizapp.cli._group import app, main
from quizapp.cli.buffering import BODY_TIMEOUT, HEADER_TIMEOUT, buffering_worker

#: ``quizapp serve``'s gunicorn worker processes by default.
DEFAULT_WORKERS = 2
#: Threads per worker by default: 2, not 4 (more submits per second and a lower p99 on SQLite),
#: not 1 (one long request would stop its worker).  The measurements and the reasoning:
#: docs/deploying.md, "Workers and threads"; the runs: benchmarks/HISTORY.md, twelfth pass.
DEFAULT_THREADS = 2

#: The migration that made variants stored facts (migrations/versions/0002_stored_variants.py):
#: undoing it drops what each student was shown, which ``db downgrade`` warns about.
STORED_VARIANTS_REVISION = "0002_stored_variants"


def _app() -> Any:
    return app()


def _upgrade(app: Any) -> None:
    from quizapp.web.database import upgrade_database

    upgrade_database(app)


def _sync(
    app: Any,
    path: Path | None,
    seeds: int | None = None,
    archive_missing: bool | None = None,
    jobs: int = 0,
) -> Any:
    """Sync ``path`` (default: the course's bank, ``QUIZAPP_EXERCISES``).  Another folder than
    the course's archives nothing unless ``archive_missing`` is True (``services.sync_bank``)."""
    from quizapp import services
    from quizapp.models import current_session
    from quizapp.services.text import counted

    bank_root = Path(app.config["QUIZAPP_EXERCISES"]).resolve()
    root = Path(path).resolve() if path else bank_root
    if archive_missing is None and root != bank_root:
        archive_missing = False
    with app.app_context():
        report = services.sync_folder(
            current_session(),
            root,
            app.config["QUIZAPP_TIMEZONE"],
            seeds=seeds,
            archive_missing=archive_missing,
            jobs=jobs,
        )
    click.echo(f"Synced {root}: {report.summary()}")
    for err in report.errors:
        click.echo(f"  error: {err}", err=True)
    if report.kept_missing:
        shown = ", ".join(report.kept_missing[:5]) + (
            ", ..." if len(report.kept_missing) > 5 else ""
        )
        click.echo(
            f"  Left live, not in {root}: {counted(len(report.kept_missing), 'exercise')} "
            f"({shown}); it is not the course's bank ({bank_root}). Run with --archive-missing "
            "to archive them."
        )
    return report


class _GunicornApp:
    """Serve a WSGI app with gunicorn's ``BaseApplication`` API (no command-line parsing)."""

    def __new__(cls, app: Any, options: dict[str, Any]) -> Any:
        from gunicorn.app.base import BaseApplication

        class Application(BaseApplication):
            def load_config(self) -> None:
                for key, value in options.items():
                    if key in self.cfg.settings and value is not None:
                        self.cfg.set(key.lower(), value)

            def load(self) -> Any:
                return app

        return Application()


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--workers",
    default=DEFAULT_WORKERS,
    show_default=True,
    type=click.IntRange(1, 64),
    help="gunicorn worker processes.",
)
@click.option(
    "--threads",
    default=DEFAULT_THREADS,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Threads per worker (gthread workers).",
)
@click.option(
    "--timeout",
    default=30,
    show_default=True,
    type=click.IntRange(1, 3600),
    help="Seconds before a worker that stopped answering is restarted.",
)
@click.option(
    "--header-timeout",
    default=HEADER_TIMEOUT,
    show_default=True,
    type=click.FloatRange(1, 600),
    help="Seconds a client has to send a request's headers (from connecting); then 408.",
)
@click.option(
    "--body-timeout",
    default=BODY_TIMEOUT,
    show_default=True,
    type=click.FloatRange(1, 3600),
    help="Seconds a client has to send a request's body (after its headers); then 408.",
)
@click.option("--dev", is_flag=True, help="Use Flask's development server (auto-reload off).")
@click.option("--no-sync", is_flag=True, help="Do not sync the exercises folder on start.")
def serve(
    host: str,
    port: int,
    workers: int,
    threads: int,
    timeout: int,
    header_timeout: float,
    body_timeout: float,
    dev: bool,
    no_sync: bool,
) -> None:
    """Upgrade the database, sync the exercises, and serve the app (gunicorn).

    Each request is read whole by the worker before a thread serves it, so slow clients cost
    memory, not threads; one that misses --header-timeout or --body-timeout is answered 408 and
    dropped.  In production, serve behind a buffering reverse proxy as well (docs/deploying.md).

    Then open http://HOST:PORT/ and register, or create an instructor with
    ``quizapp create-user NAME --role instructor``.
    """
    from quizapp.models import db

    app = _app()
    _upgrade(app)
    if not no_sync:
        _sync(app, None)
    with app.app_context():
        db.engine.dispose()  # no pooled connection may cross the fork into the workers
    how = "Flask's development server" if dev else f"{workers} workers x {threads} threads"
    click.echo(f"quizapp is serving on http://{host}:{port}/ ({how}; Ctrl+C to stop)")
    click.echo(time_zone_line(app.config["QUIZAPP_TIMEZONE"]))
    if dev:
        app.run(host=host, port=port, debug=False, use_reloader=False)
        return
    warning = rate_limit_warning(app.config, workers)
    if warning:
        click.echo(warning, err=True)
    options = gunicorn_options(
        host,
        port,
        workers,
        threads,
        timeout,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        max_body=int(app.config.get("MAX_CONTENT_LENGTH") or 256 * 1024),
    )
    _GunicornApp(app, options).run()


def time_zone_line(zone_name: str) -> str:
    """What ``quizapp serve`` says about the course time zone: its name, its current offset and
    abbreviation, and how to change it."""
    from quizapp import coursetime

    now = coursetime.local(coursetime.utcnow_aware(), coursetime.parse_zone(zone_name))
    offset = now.strftime("%z")
    return (
        f"Course time zone: {zone_name} (now {now.strftime('%Y-%m-%d %H:%M')} "
        f"{now.tzname()}, UTC{offset[:3]}:{offset[3:]}); quiz.yaml times are read there "
        "(set QUIZAPP_TIMEZONE to change it)."
    )


def gunicorn_options(
    host: str,
    port: int,
    workers: int,
    threads: int,
    timeout: int,
    *,
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    max_body: int = 256 * 1024,
) -> dict[str, Any]:
    """gunicorn settings for ``quizapp serve`` (names as in gunicorn's settings documentation).

    The worker is :func:`quizapp.cli.buffering.buffering_worker`: gthread, with each request read
    whole (headers within ``header_timeout`` seconds, the body within ``body_timeout`` after them,
    at most ``max_body`` bytes) before a thread serves it.  gunicorn's control socket (default
    ``~/.gunicorn/gunicorn.ctl``) is disabled: every server on the machine would otherwise fight
    over that one path, and ``quizapp serve`` does not use it.
    """
    return {
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": buffering_worker(header_timeout, body_timeout, max_body),
        "threads": threads,
        "timeout": timeout,
        "graceful_timeout": 20,
        "keepalive": 5,
        "accesslog": "-",
        "errorlog": "-",
        "limit_request_line": 8190,
        "forwarded_allow_ips": "127.0.0.1",
        # gunicorn >= 25 opens a control socket at one fixed path per user (~/.gunicorn); two
        # servers on a host (tests, two courses) would fight over it, and nothing here uses it.
        "control_socket_disable": True,
    }


def rate_limit_warning(config: Any, workers: int) -> str | None:
    """A warning when rate limits are counted per worker process, else None.

    Flask-Limiter's ``memory://`` storage (the default) keeps counts inside each gunicorn worker,
    so with W workers a client gets up to W times each limit.  Sharing counts needs a storage
    all workers reach (``QUIZAPP_RATELIMIT_STORAGE=redis://...`` or ``memcached://...``, see the
    ``limits`` library's storage documentation).
    """
    if not config.get("RATELIMIT_ENABLED", True) or workers <= 1:
        return None
    uri = str(config.get("RATELIMIT_STORAGE_URI") or "memory://")
    if not uri.startswith("memory://"):
        return None
    return (
        f"warning: rate limits are counted per worker ({workers} workers, in-memory storage), so "
        f"a client may get up to {workers} times each limit; set QUIZAPP_RATELIMIT_STORAGE "
        "(e.g. redis://localhost:6379) to share the counts, or serve with --workers 1."
    )


@main.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--seeds",
    default=SAMPLE_SEEDS,
    show_default=True,
    type=click.IntRange(0, 10_000),
    help="Seeds (0..N-1) sampled per new exercise version; one that fails is not synced.",
)
@click.option(
    "--archive-missing/--keep-missing",
    default=None,
    help="Archive live exercises the folder does not hold, even all of them or from another "
    "folder than the course's (default: archive them when PATH is the course's bank, unless "
    "that would archive every one).",
)
@click.option(
    "--jobs",
    "-j",
    default=0,
    show_default=True,
    type=click.IntRange(0, 64),
    help="Processes that sample the new versions (0: one per core).",
)
def sync(path: Path | None, seeds: int, archive_missing: bool | None, jobs: int) -> None:
    """Sync the exercise bank (default: the exercises folder) into the database.

    New exercises are added, changed ones get a new version, removed ones are archived.  A file
    with errors, or a new version that fails for any of the sampled seeds (it does not generate,
    its answer is empty or not finite, or its expected answer does not grade correct), keeps its
    previous version live (a new exercise is not added); errors are printed with the file and
    line, and the exit status is 1.  A folder holding none of the course's live exercises
    archives nothing (exit status 1) unless --archive-missing is given; a PATH other than the
    course's bank (QUIZAPP_EXERCISES) archives nothing unless --archive-missing is given.
    The new versions are sampled in one process per core (--jobs) before anything is written.
    """
    app = _app()
    _upgrade(app)
    report = _sync(app, path, seeds, archive_missing, jobs)
    if report.errors:
        sys.exit(1)


@main.command("create-user")
@click.argument("name")
@click.option(
    "--role", type=click.Choice(["student", "instructor"]), default="student", show_default=True
)
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@click.option("--display-name", default="", help="Name shown to instructors.")
@click.option("--email", default=None)
def create_user(
    name: str, role: str, password_stdin: bool, display_name: str, email: str | None
) -> None:
    """Create a user NAME (prompts for the password unless --password-stdin)."""
    from quizapp import services
    from quizapp.models import current_session

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    app = _app()
    _upgrade(app)
    with app.app_context():
        try:
            user = services.create_user(
                current_session(), name, password, role=role, display_name=display_name, email=email
            )
        except services.ServiceError as err:
            raise click.ClickException(err.message) from None
        click.echo(f"Created {user.role} {user.username!r} (id {user.id}).")


@main.command("set-password")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
def set_password(name: str, password_stdin: bool) -> None:
    """Set the password of user NAME (student or instructor) and sign them out everywhere.

    Every session, remember-me cookie and API token of the account ends.  For instructors this
    is the way to reset a password (reset links are for students only).
    """
    from quizapp import services
    from quizapp.models import current_session

    app = _app()
    _upgrade(app)
    with app.app_context():
        user = services.find_user(current_session(), name)
        if user is None:
            raise click.ClickException(f"There is no user {name!r}.")
        if password_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            password = click.prompt("New password", hide_input=True, confirmation_prompt=True)
        try:
            user = services.set_password(current_session(), user.id, password)
        except services.ServiceError as err:
            raise click.ClickException(err.message) from None
        click.echo(
            f"Password of {user.role} {user.username!r} set; their sessions and API tokens ended."
        )


def _db_group() -> click.Group:
    """``quizapp db``: Flask-Migrate's ``db`` group (its ``--directory``/``--x-arg`` options and
    its callback, which builds the app and keeps them in ``g``), with ``upgrade`` and
    ``downgrade`` ours."""
    from flask_migrate.cli import db as migrate_db

    return click.Group(
        "db",
        callback=migrate_db.callback,
        params=list(migrate_db.params),
        help="Database maintenance: upgrade, downgrade, and Flask-Migrate's commands for maintainers "
        "(migrate, current, heads, history, ...: the same as "
        "flask --app quizapp.web:create_app db ...).",
    )


db = _db_group()
main.add_command(db)


def _where(app: Any) -> str:
    return str(app.config["SQLALCHEMY_DATABASE_URI"]).split("@")[-1]


def _revision_name(revision: str | None) -> str:
    return revision or "base (no tables)"


@db.command()
@click.option("--revision", default="head", show_default=True)
def upgrade(revision: str) -> None:
    """Upgrade the database schema to REVISION with the Alembic migrations.

    Says what changed: from which revision to which, or that the database is there already.  A
    REVISION older than the database's is refused (that is ``quizapp db downgrade``).
    """
    from quizapp.web import database

    app = _app()
    try:
        target = database.resolve_revision(revision)
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    before = database.database_revision(app)
    if before is not None and target != before and not database.revisions_between(before, target):
        raise click.ClickException(
            f"Database at {_where(app)} is at revision {before}, which is newer than {revision}: "
            f"nothing was done (to go back, run 'quizapp db downgrade {revision}')."
        )
    database.upgrade_database(app, revision)
    after = database.database_revision(app)
    if after == before:
        click.echo(f"Database at {_where(app)} is already at revision {after}: nothing to do.")
    else:
        click.echo(
            f"Database at {_where(app)} upgraded from {_revision_name(before)} to revision {after}."
        )


@db.command()
@click.argument("revision")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def downgrade(revision: str, yes: bool) -> None:
    """Downgrade the database schema to REVISION (a revision id, or ``base`` for none).

    Every migration after REVISION is undone: the tables and columns they created are dropped
    WITH THEIR DATA.  Lists them and asks for confirmation (unless --yes); back up the database
    first.  Use it to go back to an older quizapp release.
    """
    from quizapp.web import database

    app = _app()
    try:
        target = database.resolve_revision(revision)
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    before = database.database_revision(app)
    undo = database.revisions_between(target, before)
    if not undo:
        if before == target:
            click.echo(
                f"Database at {_where(app)} is at revision {_revision_name(before)}: nothing to do."
            )
            return
        raise click.ClickException(
            f"Database at {_where(app)} is at revision {_revision_name(before)}, which is not "
            f"newer than {revision}: nothing was done (that is 'quizapp db upgrade')."
        )
    click.echo(
        f"Database at {_where(app)}: revision {before} -> {_revision_name(target)}; undoing "
        f"{', '.join(undo)}."
    )
    if STORED_VARIANTS_REVISION in undo:
        click.echo(
            f"Warning: undoing {STORED_VARIANTS_REVISION} drops every variant's stored numbers, "
            "answer key and page. A later upgrade draws them again from their seeds with the code "
            "of that time: a variant drawn by a newer release, or re-keyed by a regrade, may then "
            "show a student other numbers or the old key. Downgrade only to go back to an older "
            "release."
        )
    if not yes:
        click.confirm(
            "The tables and columns these revisions created are dropped, with their data. "
            "Continue?",
            abort=True,
        )
    database.downgrade_database(app, revision)
    click.echo(
        f"Database at {_where(app)} downgraded to {_revision_name(database.database_revision(app))}."
    )


def _attach_flask_commands() -> None:
    """Flask's ``shell`` and ``routes``, and Flask-Migrate's ``db`` commands (except ``init``,
    which would start a second migration history, and ``upgrade`` and ``downgrade``, which are
    ours: they say which revisions change, and ``downgrade`` asks before dropping data)."""
    from flask.cli import routes_command, shell_command
    from flask_migrate.cli import db as migrate_db

    main.add_command(shell_command)
    main.add_command(routes_command)
    for name, command in migrate_db.commands.items():
        if name not in ("init", "upgrade", "downgrade", "list-templates"):
            db.add_command(command, name)


_attach_flask_commands()
