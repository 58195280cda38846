"""Server commands: ``serve``, ``sync``, ``create-user``, ``db upgrade``.

Each builds the app with ``create_app()`` (configured from the environment, see
``quizapp.config``), so they act on the same database and instance folder as the server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from quizapp.cli._group import app, main


def _app() -> Any:
    return app()


def _upgrade(app: Any) -> None:
    from quizapp.web.database import upgrade_database

    upgrade_database(app)


def _sync(app: Any, path: Path | None) -> Any:
    from quizapp import services
    from quizapp.models import db

    root = Path(path).resolve() if path else Path(app.config["QUIZAPP_EXERCISES"])
    with app.app_context():
        report = services.sync_folder(db.session, root)
    click.echo(f"Synced {root}: {report.summary()}")
    for err in report.errors:
        click.echo(f"  error: {err}", err=True)
    return report


class _ReadTimeoutSocket:
    """A client socket whose blocking mode has a timeout: every read (or write) waits at most
    ``timeout`` seconds.  gunicorn's gthread worker puts accepted sockets in plain blocking mode,
    so a client that sends a partial request (a ``Content-Length`` larger than the body, or a body
    that never finishes: "slowloris") would hold a worker thread forever and, with a few such
    connections, starve the server.  Everything but ``setblocking`` is forwarded to the socket."""

    def __init__(self, sock: Any, timeout: float) -> None:
        self._sock = sock
        self._timeout = timeout

    def setblocking(self, flag: bool) -> None:
        if flag:
            self._sock.settimeout(self._timeout)
        else:
            self._sock.setblocking(False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


_WORKER_CLASS: Any = None


def read_timeout_worker() -> Any:
    """gunicorn's ``gthread`` worker whose client sockets time out after half ``--timeout``.

    A request whose headers or body stop arriving is dropped after that long (the thread is
    freed and serves others); gunicorn's own ``timeout`` only restarts silent *workers*.
    """
    global _WORKER_CLASS
    if _WORKER_CLASS is None:
        from gunicorn.workers.gthread import ThreadWorker

        class ReadTimeoutThreadWorker(ThreadWorker):  # type: ignore[misc]
            def handle(self, conn: Any) -> Any:
                if not isinstance(conn.sock, _ReadTimeoutSocket):
                    # Half the worker timeout: when every thread is stuck on a stalled client,
                    # gunicorn's main loop waits up to `timeout` for one to finish before it
                    # reports alive; dropping the stalled client first keeps the worker (and the
                    # requests it is serving) from being killed as silent.
                    read_timeout = max(1.0, float(self.cfg.timeout) / 2)
                    conn.sock = _ReadTimeoutSocket(conn.sock, read_timeout)
                return super().handle(conn)

        _WORKER_CLASS = ReadTimeoutThreadWorker
    return _WORKER_CLASS


class _GunicornApp:
    """Serve a WSGI app with gunicorn's ``BaseApplication`` API (no command-line parsing)."""

    def __new__(cls, app: Any, options: dict[str, Any]) -> Any:
        from gunicorn.app.base import BaseApplication

        class Application(BaseApplication):  # type: ignore[misc]
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
    default=2,
    show_default=True,
    type=click.IntRange(1, 64),
    help="gunicorn worker processes.",
)
@click.option(
    "--threads",
    default=4,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Threads per worker (gthread workers).",
)
@click.option(
    "--timeout",
    default=30,
    show_default=True,
    type=click.IntRange(1, 3600),
    help="Seconds before a stuck worker is restarted; a client that stops sending its request "
    "is dropped after half of it.",
)
@click.option("--dev", is_flag=True, help="Use Flask's development server (auto-reload off).")
@click.option("--no-sync", is_flag=True, help="Do not sync the exercises folder on start.")
def serve(
    host: str, port: int, workers: int, threads: int, timeout: int, dev: bool, no_sync: bool
) -> None:
    """Upgrade the database, sync the exercises, and serve the app (gunicorn).

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
    click.echo(f"quizapp is serving on http://{host}:{port}/ (Ctrl+C to stop)")
    if dev:
        app.run(host=host, port=port, debug=False, use_reloader=False)
        return
    warning = rate_limit_warning(app.config, workers)
    if warning:
        click.echo(warning, err=True)
    _GunicornApp(app, gunicorn_options(host, port, workers, threads, timeout)).run()


def gunicorn_options(
    host: str, port: int, workers: int, threads: int, timeout: int
) -> dict[str, Any]:
    """gunicorn settings for ``quizapp serve`` (names as in gunicorn's settings documentation).

    gunicorn's control socket (default ``~/.gunicorn/gunicorn.ctl``) is
    disabled: every server on the machine would otherwise fight over that one path, and
    ``quizapp serve`` does not use it.
    """
    return {
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": read_timeout_worker(),
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
def sync(path: Path | None) -> None:
    """Sync the exercise bank (default: the exercises folder) into the database.

    New exercises are added, changed ones get a new version, removed ones are archived.  A file
    with errors keeps its previous version live; errors are printed and the exit status is 1.
    """
    app = _app()
    _upgrade(app)
    report = _sync(app, path)
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
    from quizapp.models import db

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    app = _app()
    _upgrade(app)
    with app.app_context():
        try:
            user = services.create_user(
                db.session, name, password, role=role, display_name=display_name, email=email
            )
        except services.ServiceError as err:
            raise click.ClickException(err.message) from None
        click.echo(f"Created {user.role} {user.username!r} (id {user.id}).")


def _db_group() -> click.Group:
    """``quizapp db``: Flask-Migrate's ``db`` group (its ``--directory``/``--x-arg`` options and
    its callback, which builds the app and keeps them in ``g``), with ``upgrade`` ours."""
    from flask_migrate.cli import db as migrate_db

    return click.Group(
        "db",
        callback=migrate_db.callback,
        params=list(migrate_db.params),
        help="Database maintenance: upgrade, and Flask-Migrate's commands for maintainers "
        "(migrate, current, heads, history, downgrade, ...: the same as "
        "flask --app quizapp.web:create_app db ...).",
    )


db = _db_group()
main.add_command(db)


@db.command()
@click.option("--revision", default="head", show_default=True)
def upgrade(revision: str) -> None:
    """Upgrade the database schema to REVISION with the Alembic migrations."""
    from quizapp.web.database import upgrade_database

    app = _app()
    upgrade_database(app, revision)
    click.echo(f"Database at {app.config['SQLALCHEMY_DATABASE_URI'].split('@')[-1]} is up to date.")


def _attach_flask_commands() -> None:
    """Flask's ``shell`` and ``routes``, and Flask-Migrate's ``db`` commands (except ``init``,
    which would start a second migration history, and ``upgrade``, which is ours: it prints
    where the database is)."""
    from flask.cli import routes_command, shell_command
    from flask_migrate.cli import db as migrate_db

    main.add_command(shell_command)
    main.add_command(routes_command)
    for name, command in migrate_db.commands.items():
        if name not in ("init", "upgrade", "list-templates"):
            db.add_command(command, name)


_attach_flask_commands()
