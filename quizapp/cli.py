"""The ``quizapp`` command.

A click group run through Flask's CLI (``FlaskGroup``), so commands that need the application
(``serve``, ``sync``, ``create-user``, ``db upgrade``, ...) get an app context, while the pure ones
(``grade``, ``validate``, ``check``, ``preview``) never touch the database.
"""

from __future__ import annotations

import click


@click.group()
def main() -> None:
    """quizapp: autograded linear-algebra and attention exercises."""
