"""The grading engine: parse what students type, compare with tolerance, mark cells, name mistakes.

Pure (no Flask, no database).  Entry point :func:`grade` (and :func:`read_answer`, its reading step alone, for answer
previews); the pieces are public for the bank's
kinds and the web layer:

- :mod:`quizapp.grading.parse`: :func:`parse_number`, :func:`parse_answer`, :class:`InvalidAnswer`
  (accepted syntax and limits in that module's docstring);
- :mod:`quizapp.grading.compare`: :func:`cells_close` and the tolerance rules (PrairieLearn's);
- :mod:`quizapp.grading.mistakes`: :func:`register_detector` and the generic detectors
  ``transpose``, ``sign``, ``scale``, ``rounding``.
"""

from __future__ import annotations

from quizapp.grading.compare import cells_close, check_tolerance, tolerance_bound
from quizapp.grading.engine import (
    align_shape,
    describe_shape,
    grade,
    read_answer,
    shape_mismatch,
)
from quizapp.grading.mistakes import GENERIC, register_detector, registered_detectors
from quizapp.grading.parse import InvalidAnswer, parse_answer, parse_number
from quizapp.grading.types import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    Mistake,
    Status,
    Tolerance,
    ToleranceMode,
    Verdict,
)

__all__ = [
    "DEFAULT_ATOL",
    "DEFAULT_RTOL",
    "GENERIC",
    "InvalidAnswer",
    "Mistake",
    "Status",
    "Tolerance",
    "ToleranceMode",
    "Verdict",
    "align_shape",
    "cells_close",
    "check_tolerance",
    "describe_shape",
    "shape_mismatch",
    "grade",
    "parse_answer",
    "parse_number",
    "read_answer",
    "register_detector",
    "registered_detectors",
    "tolerance_bound",
]
