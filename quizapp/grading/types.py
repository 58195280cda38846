"""Value types shared by the grading engine and everything that calls it.

Pure: no Flask, no database.  Every type here is JSON-serialisable through ``to_dict``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["correct", "partial", "incorrect", "invalid"]
ToleranceMode = Literal["relabs", "sigfig", "decdig"]

#: PrairieLearn's documented defaults for ``pl-number-input`` / ``pl-matrix-input``
#: (``rtol=1e-2``, ``atol=1e-8``), which our ``relabs`` mode reproduces.
DEFAULT_RTOL = 1e-2
DEFAULT_ATOL = 1e-8


@dataclass(frozen=True)
class Tolerance:
    """How close an answer must be to the expected value.

    - ``relabs``: ``|a - e| <= atol + rtol * |e|`` (``numpy.isclose``); defaults are PrairieLearn's
      ``rtol=1e-2``, ``atol=1e-8``.
    - ``sigfig``: agreement to ``digits`` significant figures.
    - ``decdig``: agreement to ``digits`` decimal places.
    """

    mode: ToleranceMode = "relabs"
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    digits: int | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.mode == "relabs":
            return {"rtol": self.rtol, "atol": self.atol}
        return {self.mode: self.digits}


@dataclass(frozen=True)
class Mistake:
    """A named, detected misconception.

    ``code`` is a stable identifier (``transpose``, ``sign``, ``scale``, ``rounding``,
    ``missing_scale``, ...), counted for the instructor; ``message`` is the sentence shown to the
    student ("You transposed the matrix.").
    """

    code: str
    message: str


@dataclass
class Verdict:
    """The result of grading one answer.

    ``cells`` is a boolean grid (list of rows) shaped like the expected value when the answer
    parsed and had the right shape, else ``None``.  ``score`` is in [0, 1].  ``parsed`` is the
    parsed answer as plain JSON data (float, or list of lists of floats), or ``None`` when invalid.
    ``invalid_cell`` is, for an ``invalid`` verdict whose problem is in one cell, its 1-based
    ``(row, column)`` (``row`` is ``None`` for an entry of a 1-D vector), so a form can highlight it.
    """

    status: Status
    score: float
    message: str
    cells: list[list[bool]] | None = None
    mistakes: list[Mistake] = field(default_factory=list)
    parsed: Any = None
    invalid_cell: tuple[int | None, int | None] | None = None

    @property
    def mistake_codes(self) -> list[str]:
        return [m.code for m in self.mistakes]

    @property
    def used_attempt(self) -> bool:
        """An invalid answer never uses an attempt."""
        return self.status != "invalid"

    def to_dict(self) -> dict[str, Any]:
        """The grading contract's JSON object: status, score, message, cells, mistakes (codes)."""
        return {
            "status": self.status,
            "score": float(self.score),
            "message": self.message,
            "cells": self.cells,
            "mistakes": self.mistake_codes,
        }
