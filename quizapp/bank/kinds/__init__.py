"""The registry of exercise kinds.

Every module in this package is imported on first use of ``KINDS``; a module registers its kinds
with ``@register_kind``.  Kind names are the ``kind:`` values of the YAML files.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from quizapp.bank.types import Kind

_REGISTRY: dict[str, Kind] = {}
_loaded = False
#: Held while the kind modules are imported: a gthread worker's threads may all ask for a kind at
#: once on the first requests, and none may see a half-filled registry.
_load_lock = threading.RLock()


def register_kind(cls: type[Kind]) -> type[Kind]:
    """Class decorator: instantiate ``cls`` and register it under ``cls.name``.

    Raises ``ValueError`` if another kind already has that name.
    """
    if cls.name in _REGISTRY:
        raise ValueError(f"exercise kind {cls.name!r} is registered twice")
    _REGISTRY[cls.name] = cls()
    return cls


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True


def all_kinds() -> dict[str, Kind]:
    """Name -> kind instance, for every kind in this package."""
    _load_all()
    return dict(_REGISTRY)


def get_kind(name: str) -> Kind:
    """The kind called ``name``.  Raises ``KeyError`` if there is none."""
    _load_all()
    return _REGISTRY[name]
