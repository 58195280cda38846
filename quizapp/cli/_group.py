"""The root ``quizapp`` click group; command modules in this package attach to it."""

from __future__ import annotations

import click


@click.group()
@click.version_option(package_name="quizapp")
def main() -> None:
    """quizapp: autograded linear-algebra and attention exercises."""
