"""Where a problem of an exercise file sits: the ``file:line:column`` of a field, of a part's
mapping, of a line inside a block scalar; shared by the checks of :mod:`quizapp.bank.validate`
and :mod:`quizapp.bank.validate_precision`."""

from __future__ import annotations

from typing import Any

from quizapp.bank.schema import ExerciseSpec
from quizapp.bank.yamlio import BankError, Located, Mark


def _at(file: str, mark: Mark, message: str) -> BankError:
    return BankError(file, mark.line, mark.column, message)


def _part_items(
    data: dict[str, Any], located: Located
) -> list[tuple[int, dict[str, Any], Located]]:
    """The mappings of ``parts:`` with their positions (items that are not mappings are the
    schema's to report)."""
    raw = data.get("parts")
    loc = located.children.get("parts")
    if not isinstance(raw, list) or loc is None:
        return []
    return [
        (i, item, loc.children.get(i) or Located(loc.values.get(i, loc.start)))
        for i, item in enumerate(raw)
        if isinstance(item, dict)
    ]


def _line_in(mark: Mark, style: str | None, line: int) -> Mark:
    """The file position of template line ``line`` of a scalar starting at ``mark``: block
    scalars (``|``, ``>``) start on the next line; other scalars are placed at their start."""
    if style in ("|", ">"):
        return Mark(mark.line + line, 1)
    return mark


def part_points_total(spec: ExerciseSpec) -> ExerciseSpec:
    """``spec`` with its ``points`` set to the sum of its parts' points when every part gives
    its points and the file does not write ``points:`` (the default 10 would not fit)."""
    parts = spec.parts or []
    if not parts or "points" in spec.model_fields_set:
        return spec
    given = [p.points for p in parts if p.points is not None]
    if len(given) < len(parts):
        return spec
    return spec.model_copy(update={"points": int(sum(given))})
