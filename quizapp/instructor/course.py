"""The course configuration ``exercises/course.yaml`` (quiz weights of the course total),
parsed through a small pydantic model."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from quizapp.bank.yamlio import BankError, parse_yaml

COURSE_FILE = "course.yaml"


class CourseConfigError(ValueError):
    """``course.yaml`` is unreadable or invalid; ``str()`` is ``file:line: message``."""


class CourseConfig(BaseModel):
    """The course-wide settings of ``exercises/course.yaml``.

    ``weights`` maps quiz ids (folder names) to non-negative relative weights of the course total,
    e.g. ``{01-linear-systems: 30, 05-attention: 70}``.  Quizzes not listed weigh 0.  Without
    ``weights`` every quiz weighs its points available, i.e. the course total is the student's
    points over the points available (equal weight by points).
    """

    model_config = ConfigDict(extra="forbid")

    title: str | None = None
    weights: dict[str, float] | None = Field(default=None)

    def weight_of(self, quiz_id: str, points_available: float) -> float:
        """The weight of ``quiz_id`` for a student with ``points_available`` on it."""
        if self.weights is None:
            return float(points_available)
        return float(self.weights.get(quiz_id, 0.0))


def parse_course_config(text: str, file: str = COURSE_FILE) -> CourseConfig:
    """Parse the text of ``course.yaml``.

    Read with the bank's located YAML reader (``quizapp.bank.yamlio.parse_yaml``: safe loader,
    duplicate keys and tabs refused, every key's line kept).  Raises ``CourseConfigError``
    (``file:line: message``) for YAML errors, unknown keys, non-numeric or negative weights, or
    weights summing to 0.
    """
    if not text.strip():
        return CourseConfig()
    try:
        data, loc = parse_yaml(text, file)
    except BankError as err:
        where = f"{err.line}:" if err.line is not None else ""
        raise CourseConfigError(f"{file}:{where} invalid YAML: {err.message}") from None
    if not isinstance(data, dict):
        raise CourseConfigError(f"{file}: the file must be a mapping (key: value lines)")
    try:
        config = CourseConfig.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        line = loc.find(tuple(first["loc"]))[0].line
        raise CourseConfigError(f"{file}:{line}: {where}: {first['msg']}") from None
    if config.weights is not None:
        for quiz_id, weight in config.weights.items():
            if not math.isfinite(weight) or weight < 0:
                line = loc.find(("weights", quiz_id))[0].line
                raise CourseConfigError(
                    f"{file}:{line}: weights.{quiz_id}: a weight must be a number >= 0, "
                    f"not {weight}"
                )
        if config.weights and sum(config.weights.values()) <= 0:
            line = loc.find(("weights",))[0].line
            raise CourseConfigError(f"{file}:{line}: the weights sum to 0")
    return config


def course_config_warnings(config: CourseConfig, quiz_ids: Iterable[str]) -> list[str]:
    """Problems that do not stop the gradebook: weights of quizzes that do not exist (a typo
    in ``course.yaml`` would otherwise silently weigh nothing), and quizzes left without a weight."""
    if config.weights is None:
        return []
    known = set(quiz_ids)
    out = [
        f"{COURSE_FILE}: weights.{q}: there is no quiz '{q}' (known: {', '.join(sorted(known))})"
        for q in config.weights
        if q not in known
    ]
    out += [
        f"{COURSE_FILE}: quiz '{q}' has no weight, so it does not count in the course total"
        for q in sorted(known - set(config.weights))
    ]
    return out


def load_course_config(root: Path | str | None) -> CourseConfig:
    """``<root>/course.yaml`` parsed; the default (weights by points) when the file is absent.

    Raises ``CourseConfigError`` for an invalid file.
    """
    if root is None:
        return CourseConfig()
    path = Path(root) / COURSE_FILE
    if not path.is_file():
        return CourseConfig()
    return parse_course_config(path.read_text(encoding="utf-8"), str(path))
