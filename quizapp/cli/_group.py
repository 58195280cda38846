"""The root ``quizapp`` click group; command modules in this package attach to it."""

from __future__ import annotations

from typing import Any

import click

from quizapp.config import ConfigError


class _Group(click.Group):
    """A click group that reports a bad setting (:class:`quizapp.config.ConfigError`, raised
    while a command builds the app) as one line, ``Error: configuration: ...``, with exit
    status 1, instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as err:
            raise click.ClickException(f"configuration: {err}") from None


@click.group(cls=_Group)
@click.version_option(package_name="quizapp")
def main() -> None:
    """quizapp: autograded linear-algebra and attention exercises."""
