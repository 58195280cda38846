"""Logging, configured in one place: the ``quizapp`` loggers write to standard error.

Every module logs through ``logging.getLogger(__name__)`` (warnings such as a busy database, the
traceback of an unexpected error on a request); :func:`configure_logging`, called by
``create_app``, gives the ``quizapp`` logger one handler on standard error, as text lines
(``2026-03-01 09:00:00,123 WARNING quizapp.services.tokens: ...``) or, with
``QUIZAPP_LOG_FORMAT=json``, as JSON lines (one object per record: ``time``, ``level``,
``logger``, ``message`` and, for an exception, ``exception``), for a log collector.
``QUIZAPP_LOG_LEVEL`` sets the level (default ``INFO``).  Records still propagate to the root
logger (so a host application's or pytest's handlers see them too).  A command's own output
(``quizapp sync``'s summary, ``quizapp grade``'s verdict...) is not logging: it stays on
standard output, as documented.  gunicorn's access and error logs are gunicorn's.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

#: Accepted values of ``QUIZAPP_LOG_FORMAT`` and ``QUIZAPP_LOG_LEVEL``.
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

#: The logger every quizapp module logs under.
ROOT = "quizapp"

_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per record, on one line: ``time`` (ISO 8601, UTC), ``level``,
    ``logger``, ``message`` (the formatted message) and ``exception`` (the traceback text) when
    the record carries one."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            out["exception"] = record.exc_text
        return json.dumps(out, ensure_ascii=False)


class _StderrHandler(logging.StreamHandler):
    """A stream handler that writes to whatever ``sys.stderr`` is when a record is emitted
    (a test runner or a CLI runner may swap it after the handler was made)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass  # always sys.stderr


def configure_logging(fmt: str = "text", level: str = "INFO") -> logging.Handler:
    """Give the ``quizapp`` logger its standard-error handler in format ``fmt`` (one of
    :data:`LOG_FORMATS`) at ``level`` (one of :data:`LOG_LEVELS`); returns the handler.

    Idempotent: calling it again (every ``create_app`` does) replaces the format and level of
    the one handler instead of adding another.  Raises ``ValueError`` for an unknown format or
    level (the settings are checked before, by :mod:`quizapp.config`).
    """
    if fmt not in LOG_FORMATS:
        raise ValueError(f"unknown log format {fmt!r} (one of {', '.join(LOG_FORMATS)})")
    if level not in LOG_LEVELS:
        raise ValueError(f"unknown log level {level!r} (one of {', '.join(LOG_LEVELS)})")
    logger = logging.getLogger(ROOT)
    handler = next((h for h in logger.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        logger.addHandler(handler)
    handler.setFormatter(JsonLinesFormatter() if fmt == "json" else logging.Formatter(_TEXT_FORMAT))
    logger.setLevel(level)
    return handler
