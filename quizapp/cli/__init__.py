"""The ``quizapp`` command.

Each module of this package (``grade``, ``authoring``, ``server``, ``instructor``, ``lti``) attaches its
commands to the root group in ``_group``; they are imported here by name, so a missing module is
an import error, never a command that silently disappears.  Commands that need the application
(``serve``, ``sync``, ``create-user``, ``db upgrade``, ...) build it themselves; the pure ones
(``grade``, ``validate``, ``check``, ``preview``) never touch the database.
"""

from __future__ import annotations

from quizapp.cli import authoring, grade, instructor, lti, server  # noqa: F401  (attach commands)
from quizapp.cli._group import main

__all__ = ["main"]
