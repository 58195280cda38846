"""The course's time zone: reading the wall-clock times instructors write, showing times back.

Pure (no Flask, no database): the bank's ``quiz.yaml`` loader, the deadline rules
(``quizapp.services.deadlines``), the command line and the pages all read and show times through
this module, so ``2026-12-01 17:00`` means the same instant everywhere.

- The course zone is an IANA name (``America/Chicago``), read by :func:`parse_zone` with Python's
  ``zoneinfo`` (the system's zone database, else the ``tzdata`` package).  Daylight saving changes
  come from that database; nothing here adds or subtracts hours by hand.
- A time an instructor writes (:func:`parse_wall_time`) is ``YYYY-MM-DD``, ``YYYY-MM-DD HH:MM``
  or ``YYYY-MM-DD HH:MM:SS`` (``T`` instead of the space is fine), a wall-clock time in the course
  zone; an explicit offset (``+02:00``, ``-0500``) or ``Z`` makes it an absolute instant instead.
  A date alone is the start of that day for an opening time and the *end* of that day (midnight
  that follows it) for a closing time.
- A wall-clock time that a DST change skips (02:30 on the spring-forward night in Chicago) is
  read as the instant it would be on the clock before the change (so 03:30 CDT); a repeated one
  (01:30 on the fall-back night) is the first of the two (PEP 495's ``fold=0``).
- Every instant is stored and compared in UTC (aware ``datetime``); :func:`show` and
  :func:`show_deadline` write it in the course zone with the zone's abbreviation (``CST``), and
  :func:`iso` as ISO 8601 with the offset (``2026-12-01T17:00:00-06:00``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: The zone used when ``QUIZAPP_TIMEZONE`` is not set.
DEFAULT_ZONE = "UTC"

UTC = dt.UTC

_WALL_RE = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[ T](?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)"
    r"\s*(?P<offset>Z|z|[+-]\d{2}(?::?\d{2})?)?)?$"
)

#: How a time is written, for error messages.
WALL_FORMAT = "YYYY-MM-DD HH:MM (or a date alone, or with an offset such as +01:00 or Z)"


class TimeError(ValueError):
    """A time zone name or a written time that cannot be read; ``str()`` is one line that names
    the field (``QUIZAPP_TIMEZONE``, ``closes``, ``--until``, ...) and what it accepts."""


def _named(field: str, message: str) -> str:
    return f"{field}: {message}" if field else message


@lru_cache(maxsize=64)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def parse_zone(name: Any, field: str = "QUIZAPP_TIMEZONE") -> ZoneInfo:
    """The IANA zone ``name`` (``America/Chicago``, ``Europe/Berlin``, ``UTC``); None or blank
    gives :data:`DEFAULT_ZONE`.  Raises :class:`TimeError` naming ``field`` for an unknown name
    (abbreviations such as ``CST`` are not zones: they do not say when DST applies)."""
    if isinstance(name, ZoneInfo):
        return name
    if name is None or (isinstance(name, str) and not name.strip()):
        return _zone(DEFAULT_ZONE)
    text = str(name).strip()
    try:
        if ".." in text or text.startswith("/"):
            raise ValueError
        return _zone(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise TimeError(
            _named(
                field,
                f"unknown time zone {text!r}; use an IANA zone name such as "
                "America/Chicago, Europe/Berlin or UTC",
            )
        ) from None


@dataclass(frozen=True, slots=True)
class WallTime:
    """A time as written: ``value`` naive (wall clock in the course zone) or aware (an offset or
    ``Z`` was written); ``date_only`` when only a date was written."""

    value: dt.datetime
    date_only: bool = False

    def instant(self, zone: ZoneInfo, *, end_of_day: bool) -> dt.datetime:
        """The aware UTC instant this time means in ``zone``.  A date alone is the start of the
        day, or with ``end_of_day`` the midnight that ends it (the next day's 00:00 there)."""
        value = self.value
        if self.date_only and end_of_day:
            value = value + dt.timedelta(days=1)
        if value.tzinfo is None:
            value = value.replace(tzinfo=zone)
        return value.astimezone(UTC)

    def __str__(self) -> str:
        if self.date_only:
            return self.value.strftime("%Y-%m-%d")
        text = self.value.strftime("%Y-%m-%d %H:%M")
        if self.value.second or self.value.microsecond:
            text = self.value.strftime("%Y-%m-%d %H:%M:%S")
        if self.value.tzinfo is not None:
            text += self.value.strftime("%z")
        return text


def _written(value: Any) -> str:
    """``value`` as its author wrote it in YAML (a list of dates as ``[2026-03-01]``, not as a
    Python repr), for an error message."""
    if isinstance(value, dt.datetime | dt.date):
        return str(WallTime(value) if isinstance(value, dt.datetime) else value.isoformat())
    if isinstance(value, list):
        return "a list [" + ", ".join(_written(v) for v in value) + "]"
    if isinstance(value, dict):
        return "a mapping {" + ", ".join(f"{k}: {_written(v)}" for k, v in value.items()) + "}"
    if value is None:
        return "nothing"
    return repr(value) if isinstance(value, str) else str(value)


def parse_wall_time(value: Any, field: str = "") -> WallTime:
    """Read a written time (see the module docstring): text, or a ``date`` / ``datetime`` as a
    YAML reader makes of an unquoted one.  Raises :class:`TimeError` naming ``field`` (when
    given) and the accepted forms."""
    if isinstance(value, WallTime):
        return value
    if isinstance(value, dt.datetime):
        return WallTime(value)
    if isinstance(value, dt.date):
        return WallTime(dt.datetime(value.year, value.month, value.day), date_only=True)
    if not isinstance(value, str):
        raise TimeError(
            _named(
                field,
                "expected a date and time such as 2026-12-01 17:00, got " + _written(value),
            )
        )
    text = value.strip()
    m = _WALL_RE.match(text)
    if m is None:
        raise TimeError(_named(field, f"{text!r} is not a time; write {WALL_FORMAT}"))
    try:
        if m.group("time") is None:
            day = dt.date.fromisoformat(m.group("date"))
            return WallTime(dt.datetime(day.year, day.month, day.day), date_only=True)
        offset = m.group("offset") or ""
        if offset in ("z", "Z"):
            offset = "+00:00"
        elif offset and ":" not in offset:
            offset = offset[:3] + ":" + (offset[3:] or "00")
        return WallTime(dt.datetime.fromisoformat(f"{m.group('date')}T{m.group('time')}{offset}"))
    except ValueError as exc:
        raise TimeError(_named(field, f"{text!r} is not a valid date and time ({exc})")) from None


def parse_instant(value: Any, zone: ZoneInfo, field: str, *, end_of_day: bool) -> dt.datetime:
    """:func:`parse_wall_time` then :meth:`WallTime.instant` in ``zone``: an aware UTC datetime."""
    return parse_wall_time(value, field).instant(zone, end_of_day=end_of_day)


def utcnow_aware() -> dt.datetime:
    """The current instant, aware UTC."""
    return dt.datetime.now(UTC)


def local(value: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """``value`` (aware, or naive meaning UTC) as an aware datetime in ``zone``."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(zone)


def _abbreviation(value: dt.datetime) -> str:
    name = value.strftime("%Z")
    if name and name[0] in "+-":  # zones without an abbreviation (America/Sao_Paulo: "-03")
        return "UTC" + name
    return name


def show(value: dt.datetime | None, zone: ZoneInfo) -> str:
    """``2026-12-01 17:00 CST``: the instant in ``zone`` with the zone's abbreviation; ``—`` for
    None.  Seconds are shown only when not zero."""
    if value is None:
        return "—"
    there = local(value, zone)
    fmt = "%Y-%m-%d %H:%M:%S" if there.second or there.microsecond else "%Y-%m-%d %H:%M"
    return f"{there.strftime(fmt)} {_abbreviation(there)}"


def show_deadline(value: dt.datetime | None, zone: ZoneInfo) -> str:
    """Like :func:`show`, for a closing time: an instant at midnight in ``zone`` is written as
    24:00 of the day it ends (``closes: 2026-12-01`` shows as ``2026-12-01 24:00 CST``, the day
    the instructor wrote, rather than ``2026-12-02 00:00``)."""
    if value is None:
        return "—"
    there = local(value, zone)
    if (there.hour, there.minute, there.second, there.microsecond) == (0, 0, 0, 0):
        before = there - dt.timedelta(days=1)
        return f"{before.strftime('%Y-%m-%d')} 24:00 {_abbreviation(there)}"
    return show(value, zone)


def iso(value: dt.datetime | None, zone: ZoneInfo) -> str | None:
    """ISO 8601 with the offset, in ``zone`` (``2026-12-01T17:00:00-06:00``); None stays None."""
    if value is None:
        return None
    return local(value, zone).isoformat()


def shift_wall_clock(value: dt.datetime, delta: dt.timedelta, zone: ZoneInfo) -> dt.datetime:
    """``value`` moved by ``delta`` of *wall-clock* time in ``zone`` (a week later is the same
    clock time a week later, across a DST change); aware UTC result."""
    there = local(value, zone).replace(tzinfo=None) + delta
    return there.replace(tzinfo=zone).astimezone(UTC)


def wall_clock_delta(start: dt.datetime, end: dt.datetime, zone: ZoneInfo) -> dt.timedelta:
    """The wall-clock time from ``start`` to ``end`` in ``zone`` (clock readings subtracted, so a
    night of a DST change counts 24 hours)."""
    return local(end, zone).replace(tzinfo=None) - local(start, zone).replace(tzinfo=None)


__all__ = [
    "DEFAULT_ZONE",
    "UTC",
    "WALL_FORMAT",
    "TimeError",
    "WallTime",
    "iso",
    "local",
    "parse_instant",
    "parse_wall_time",
    "parse_zone",
    "shift_wall_clock",
    "show",
    "show_deadline",
    "utcnow_aware",
    "wall_clock_delta",
]
