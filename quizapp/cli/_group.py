"""The root ``quizapp`` click group; command modules in this package attach to it.

Flask's CLI conventions: the context object is a :class:`flask.cli.ScriptInfo` whose
``create_app`` is :func:`quizapp.web.create_app`, so a command that needs the application calls
:func:`app` (built once per invocation, from the environment) and Flask's own commands
(``shell``, ``routes``) and Flask-Migrate's (``db migrate``, ``db current``, ...), which use
``with_appcontext``, work under ``quizapp`` as under ``flask --app quizapp.web:create_app``.
The pure commands (``grade``, ``validate``, ``check``, ``preview``) never build it.
"""

from __future__ import annotations

from typing import Any

import click
from flask import Flask
from flask.cli import ScriptInfo
from sqlalchemy.exc import OperationalError

from quizapp.config import ConfigError


def _create_app() -> Flask:
    from quizapp.web import create_app

    return create_app()


def app() -> Flask:
    """The application of the running command (created on first use, from the environment).

    Raises :class:`quizapp.config.ConfigError` for a bad setting (the group prints it as one
    line).
    """
    return click.get_current_context().ensure_object(ScriptInfo).load_app()


class _Group(click.Group):
    """A click group that reports a bad setting (:class:`quizapp.config.ConfigError`, raised
    while a command builds the app) as one line, ``Error: configuration: ...``, and a database
    that cannot be reached or opened (SQLAlchemy's ``OperationalError``) as
    ``Error: database: ...``, with exit status 1, instead of a traceback."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        # No .env files and no debug flag: the settings come from the environment only.
        extra.setdefault(
            "obj",
            ScriptInfo(create_app=_create_app, set_debug_flag=False, load_dotenv_defaults=False),
        )
        return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as err:
            raise click.ClickException(f"configuration: {err}") from None
        except OperationalError as err:  # cannot connect / open the database file
            reason = str(getattr(err, "orig", None) or err).strip().splitlines()[0]
            if reason.startswith("no such table"):
                raise click.ClickException(
                    f"database: {_shown_url(err)} has no tables yet ({reason}): run "
                    f"`quizapp db upgrade` (or `quizapp serve`, which does it) first."
                ) from None
            raise click.ClickException(
                f"database: cannot use {_shown_url(err)}: {reason}. Check DATABASE_URL (or QUIZAPP_INSTANCE for "
                f"the default SQLite file) and that the database server is running."
            ) from None


def _shown_url(err: OperationalError) -> str:
    """Which database failed: DATABASE_URL with its password hidden, or the default SQLite file."""
    import os

    from sqlalchemy.engine import make_url

    url = os.environ.get("DATABASE_URL")
    if not url:
        return "the SQLite file in the instance folder"
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "DATABASE_URL"


@click.group(cls=_Group)
@click.version_option(package_name="quizapp")
def main() -> None:
    """quizapp: autograded linear-algebra and attention exercises."""
