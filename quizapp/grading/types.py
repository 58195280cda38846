"""Value types shared by the grading engine and everything that calls it.

Pure: no Flask, no database.  Every type here is JSON-serialisable through ``to_dict``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["correct", "partial", "incorrect", "invalid", "unanswered", "ungraded"]
#: ``unanswered`` and ``ungraded`` are statuses of one part of a multi-part answer only: a part
#: left empty (score 0), and a part not graded because another part of the same answer could not
#: be read (the answer is ``invalid`` and uses no attempt).
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
    student ("You transposed the matrix.").  ``ambiguous`` is True when another named mistake
    gives the same answer, so the student may have made either (see
    :func:`quizapp.grading.mistakes.reconcile_mistakes`): the message then says so, and is the
    same sentence for each of them.
    """

    code: str
    message: str
    ambiguous: bool = False


@dataclass
class Verdict:
    """The result of grading one answer.

    ``cells`` is a boolean grid (list of rows) shaped like the expected value when the answer
    parsed and had the right shape, else ``None``.  ``score`` is in [0, 1].  ``parsed`` is the
    parsed answer as plain JSON data (float, or list of lists of floats), or ``None`` when invalid.
    ``invalid_cell`` is, for an ``invalid`` verdict whose problem is in one cell, its 1-based
    ``(row, column)`` (``row`` is ``None`` for an entry of a 1-D vector), so a form can highlight it.

    A multi-part answer's verdict has ``parts``: part name -> that part's verdict (its ``score``
    the part's own, in [0, 1]; the exercise's ``score`` is their points-weighted mean).  A part's
    ``follow_through`` is True when it earned credit by matching the value computed from the
    student's own earlier answers rather than the true value.
    """

    status: Status
    score: float
    message: str
    cells: list[list[bool]] | None = None
    mistakes: list[Mistake] = field(default_factory=list)
    parsed: Any = None
    invalid_cell: tuple[int | None, int | None] | None = None
    follow_through: bool = False
    parts: dict[str, Verdict] | None = None

    @property
    def mistake_codes(self) -> list[str]:
        """The codes of every named mistake (ambiguous ones included), in order."""
        return [m.code for m in self.mistakes]

    @property
    def ambiguous_codes(self) -> list[str]:
        """The codes of the mistakes that share the answer with another named mistake."""
        return [m.code for m in self.mistakes if m.ambiguous]

    @property
    def mistake_messages(self) -> list[str]:
        """The sentences to show the student: each distinct message once, in order (mistakes
        that give the same answer share one sentence)."""
        return list(dict.fromkeys(m.message for m in self.mistakes))

    @property
    def used_attempt(self) -> bool:
        """An invalid answer never uses an attempt."""
        return self.status != "invalid"

    def to_dict(self) -> dict[str, Any]:
        """The grading contract's JSON object: status, score, message, cells, mistakes (codes);
        ``ambiguous_mistakes`` (the codes of ``mistakes`` that share the answer with another, see
        :attr:`ambiguous_codes`) only when there are any; for a multi-part answer also
        ``parts``: name -> ``{status, score, follow_through, message, cells, mistakes}`` (and
        that part's ``ambiguous_mistakes`` likewise)."""
        out: dict[str, Any] = {
            "status": self.status,
            "score": float(self.score),
            "message": self.message,
            "cells": self.cells,
            "mistakes": self.mistake_codes,
        }
        if self.ambiguous_codes:
            out["ambiguous_mistakes"] = self.ambiguous_codes
        if self.parts is not None:
            out["parts"] = {
                name: {
                    "status": part.status,
                    "score": float(part.score),
                    "follow_through": bool(part.follow_through),
                    "message": part.message,
                    "cells": part.cells,
                    "mistakes": part.mistake_codes,
                    **(
                        {"ambiguous_mistakes": part.ambiguous_codes} if part.ambiguous_codes else {}
                    ),
                }
                for name, part in self.parts.items()
            }
        return out
