"""The ``quizapp`` command.

Each module of this package (``grade``, ``authoring``, ``server``, ``instructor``, ...) attaches its
commands to the root group in ``_group``.  Commands that need the application (``serve``, ``sync``,
``create-user``, ``db upgrade``, ...) build it themselves; the pure ones (``grade``, ``validate``,
``check``, ``preview``) never touch the database.
"""

from __future__ import annotations

import importlib
import pkgutil

from quizapp.cli._group import main

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["main"]
