"""Answers to multi-part exercises as the services take them: checked, merged with the parts
already answered, and the per-part figures progress rows keep.

A multi-part answer is a mapping part name -> text or grid (``{"S": "1 2; 3 4", "W": [[...]]}``).
A submission may answer one part or all of them: the parts it leaves out (or blank) keep the
answer they had in the variant's last graded submission, and a part already correct (locked)
keeps its answer whatever is posted (:func:`quizapp.bank.parts.merge_answers`).  What is stored
and graded is always the whole, merged answer, so every submission row stands on its own (a
regrade grades it as it is).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from quizapp.services.answer_input import check_grid_shape, decode_raw_answer, normalize_answer
from quizapp.services.errors import BadRequest

#: At most this many parts in one posted answer (an exercise has far fewer).
MAX_PARTS = 50


def normalize_part_answers(answer: Any) -> dict[str, str | list[list[str]]]:
    """Check a posted multi-part answer (part name -> text or grid) and return it as a dict.

    Raises ``BadRequest`` saying what is wrong: not a mapping, no part, a name that is not
    text, too many parts, or a part's answer that :func:`normalize_answer` refuses (named)."""
    if not isinstance(answer, Mapping):
        raise BadRequest("A multi-part answer maps each part's name to its answer.")
    if not answer:
        raise BadRequest("Give an answer to at least one part.")
    if len(answer) > MAX_PARTS:
        raise BadRequest(f"Too many parts (at most {MAX_PARTS}).")
    out: dict[str, str | list[list[str]]] = {}
    for name, value in answer.items():
        if not isinstance(name, str) or not name or len(name) > 40:
            raise BadRequest('Each part is named by its name, e.g. "S".')
        try:
            out[name] = normalize_answer(value)
        except BadRequest as err:
            raise BadRequest(f"Part {name}: {err.message}") from None
    return out


def check_part_shapes(bank_variant: Any, answer: Mapping[str, Any]) -> None:
    """Refuse (``BadRequest``) a part that the exercise does not have, or a part's grid whose
    shape differs from the grid the page shows for it (``check_grid_shape``)."""
    forms = {p.name: p.answer_form for p in bank_variant.parts}
    unknown = [k for k in answer if k not in forms]
    if unknown:
        raise BadRequest(
            f"This exercise has no part {', '.join(map(repr, unknown))}; its parts are "
            f"{', '.join(forms)}."
        )
    for name, value in answer.items():
        try:
            check_grid_shape(forms[name], value)
        except BadRequest as err:
            raise BadRequest(f"Part {name}: {err.message}") from None


def part_state(
    bank_variant: Any, submissions: Iterable[Any]
) -> tuple[dict[str, Any] | None, set[str], int | None]:
    """Where a multi-part variant stands after ``submissions`` (its rows, oldest first): the
    whole answer of its last graded submission (None before the first), the parts that answer
    locked, and that submission's id (to notice a submission stored meanwhile)."""
    last = None
    for sub in submissions:
        if sub.status != "invalid" and sub.answer_format == "parts":
            last = sub
    if last is None:
        return None, set(), None
    previous = decode_raw_answer(last.answer_format, last.raw_answer)
    parts = (last.verdict or {}).get("parts") or {}
    locked = {name for name, v in parts.items() if isinstance(v, Mapping) and v.get("locked")}
    return dict(previous) if isinstance(previous, Mapping) else None, locked, last.id


def merge(
    bank_variant: Any,
    posted: Mapping[str, Any],
    previous: Mapping[str, Any] | None,
    locked: set[str],
) -> tuple[dict[str, Any], list[str], list[str]]:
    """:func:`quizapp.bank.parts.merge_answers`, with a ``BadRequest`` when the submission
    answers no part (everything blank, or only locked parts)."""
    from quizapp.bank.parts import merge_answers

    try:
        merged, taken, ignored = merge_answers(bank_variant, posted, previous, locked)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    if not taken:
        if ignored or (locked and all(k in locked for k in posted)):
            raise BadRequest(
                f"{', '.join(sorted(locked & set(posted)) or sorted(locked))} is already correct "
                "and locked; answer another part."
            )
        raise BadRequest("Type an answer for at least one part before submitting.")
    return merged, taken, ignored


def part_verdicts(
    bank_variant: Any,
    verdict: Any,
    vdict: dict[str, Any],
    *,
    taken: list[str],
    ignored: list[str],
    locked_before: set[str],
) -> dict[str, Any]:
    """``vdict`` (the verdict's JSON) with, per part, what the page and the next submission
    need: ``mistake_messages``, ``invalid_cell``, ``points`` (the part's share of the
    exercise's points), ``locked``, and ``answered`` (``posted`` in this submission, ``kept``
    from an earlier one, or ``none``); a note when a locked part's posted answer was ignored."""
    from quizapp.bank.parts import locked_parts

    locked = locked_parts(bank_variant, verdict)
    if verdict.status == "invalid":
        locked = set(locked_before)
    parts = vdict.get("parts") or {}
    for part in bank_variant.parts:
        out = parts.get(part.name)
        one = verdict.parts.get(part.name) if verdict.parts else None
        if out is None or one is None:
            continue
        out["mistake_messages"] = [m.message for m in one.mistakes]
        if one.invalid_cell is not None:
            out["invalid_cell"] = list(one.invalid_cell)
        out["points"] = float(part.points) if part.points is not None else None
        out["locked"] = part.name in locked
        out["answered"] = (
            "posted" if part.name in taken else ("none" if one.status == "unanswered" else "kept")
        )
    if ignored:
        vdict["message"] = (
            f"{vdict.get('message', '')} {', '.join(ignored)} was already correct: its answer "
            "is kept."
        ).strip()
    return vdict


def best_parts(bank_variant: Any, vdict: Mapping[str, Any]) -> dict[str, Any] | None:
    """The per-part figures a progress row keeps for its best submission: part name ->
    ``{"score", "share", "follow_through"}`` (``share``: the part's fraction of the exercise's
    points, so its points follow a change of the exercise's points).  None for a verdict
    without parts."""
    parts = vdict.get("parts") if isinstance(vdict, Mapping) else None
    if not parts:
        return None
    from quizapp.bank.parts import part_shares

    shares = part_shares(bank_variant.parts)
    out = {}
    for part in bank_variant.parts:
        v = parts.get(part.name)
        if not isinstance(v, Mapping):
            continue
        out[part.name] = {
            "score": float(v.get("score") or 0.0),
            "share": shares[part.name],
            "follow_through": bool(v.get("follow_through")),
        }
    return out
