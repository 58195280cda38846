"""A variant as a stored fact: :class:`~quizapp.bank.types.Variant` to JSON and back, exactly.

When a student's variant is created its numbers, expected answer, answer form, tolerance and the
data its mistake detectors read are frozen into one JSON document (:func:`freeze`) and stored
with it; every later view, submit and regrade thaws that document (:func:`thaw`) instead of
drawing again, so a change of the exercise's YAML or of a kind's code never changes what a
student was shown or is graded against.

The encoding round-trips every value a kind produces, bit for bit and type for type:

- ``None``, ``bool``, ``int``, ``str``, finite ``float`` as themselves (Python's ``json`` writes a
  float as its shortest repr, which reads back to the same double);
- non-finite floats as ``{"$f": "nan" | "-nan" | "inf" | "-inf"}`` (JSON, and PostgreSQL's
  ``json``, have no NaN); a NaN with another payload as ``{"$f": "nan", "bits": <16 hex digits>}``,
  so even the sign and payload of a NaN survive;
- ``list`` as a list, ``tuple`` as ``{"$t": [...]}``;
- a ``dict`` whose keys are all strings not starting with ``$`` as an object, any other dict as
  ``{"$d": [[key, value], ...]}``;
- a NumPy array as ``{"$a": dtype, "s": shape, "v": flat values}`` (dtypes ``bool``, integers,
  floats); a NumPy scalar as ``{"$s": dtype, "v": value}``.

A multi-part variant adds ``parts`` (one object per :class:`~quizapp.bank.types.Part`, its
fields encoded the same way); a variant without parts has no ``parts`` key, so the records
stored before parts existed, and those of single-answer variants, are the same documents.

Anything else (an object array, a function, a custom class) raises :class:`TypeError`: a kind
that produces one must be fixed, not stored lossily.  Pure: no Flask, no database.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from quizapp.bank.types import AnswerForm, Part, SolutionStep, Variant
from quizapp.grading.types import Tolerance

#: Version of this document's layout (``record["format"]``); :func:`thaw` refuses others.
FORMAT = 1

_DTYPE_KINDS = "biuf"


def encode(value: Any) -> Any:
    """``value`` as JSON-safe data (see the module docstring); raises ``TypeError``."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, np.generic):
        if value.dtype.kind not in _DTYPE_KINDS:
            raise TypeError(f"cannot store a NumPy scalar of dtype {value.dtype}")
        return {"$s": value.dtype.str, "v": _float_or_tag(value.item())}
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _float_or_tag(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _DTYPE_KINDS:
            raise TypeError(f"cannot store a NumPy array of dtype {value.dtype}")
        flat = [_float_or_tag(v) for v in value.ravel().tolist()]
        return {"$a": value.dtype.str, "s": list(value.shape), "v": flat}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"$t": [encode(v) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"$d": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"cannot store a value of type {type(value).__name__}")


def _float_or_tag(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        if value == value:
            return {"$f": "inf" if value > 0 else "-inf"}
        bits = struct.pack(">d", value).hex()
        if bits in _NAN_NAMES:
            return {"$f": _NAN_NAMES[bits]}
        return {"$f": "nan", "bits": bits}
    return value


#: The two usual NaNs by name; any other NaN (another payload) keeps its bits as hex.
_NAN_NAMES = {
    struct.pack(">d", float("nan")).hex(): "nan",
    struct.pack(">d", float("-nan")).hex(): "-nan",
}


def _tagged_float(tag: dict[str, Any]) -> float:
    if "bits" in tag:
        value: float = struct.unpack(">d", bytes.fromhex(str(tag["bits"])))[0]
        return value
    return float(tag["$f"])


def decode(data: Any) -> Any:
    """The value :func:`encode` encoded.  Raises ``ValueError`` for malformed data."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "$f" in data:
        return _tagged_float(data)
    if "$t" in data:
        return tuple(decode(v) for v in data["$t"])
    if "$d" in data:
        return {_hashable(decode(k)): decode(v) for k, v in data["$d"]}
    if "$a" in data:
        dtype = np.dtype(data["$a"])
        values = [_tagged_float(v) if isinstance(v, dict) else v for v in data["v"]]
        return np.array(values, dtype=dtype).reshape(tuple(data["s"]))
    if "$s" in data:
        v = data["v"]
        return np.dtype(data["$s"]).type(_tagged_float(v) if isinstance(v, dict) else v)
    return {k: decode(v) for k, v in data.items()}


def _hashable(key: Any) -> Any:
    if isinstance(key, list):
        return tuple(_hashable(k) for k in key)
    return key


def _dataclass_dict(obj: Any) -> dict[str, Any]:
    return {f.name: encode(getattr(obj, f.name)) for f in fields(obj)}


def _freeze_part(part: Part) -> dict[str, Any]:
    return {
        "name": part.name,
        "prompt": part.prompt,
        "expected": encode(part.expected),
        "answer_form": _dataclass_dict(part.answer_form),
        "solution": [_dataclass_dict(step) for step in part.solution],
        "tolerance": None if part.tolerance is None else _dataclass_dict(part.tolerance),
        "points": None if part.points is None else float(part.points),
        "follow_through": part.follow_through,
        "uses": list(part.uses),
        "follow_through_credit": None
        if part.follow_through_credit is None
        else float(part.follow_through_credit),
        "detectors": list(part.detectors),
        "context": encode(part.context),
        "hints": list(part.hints),
    }


def freeze(variant: Variant) -> dict[str, Any]:
    """The JSON document of ``variant`` (every field of :class:`Variant`, ``format`` added;
    ``parts`` only when it has parts).

    Raises ``TypeError`` if a value cannot be stored exactly (see the module docstring).
    """
    out = {
        "format": FORMAT,
        "exercise_id": variant.exercise_id,
        "seed": int(variant.seed),
        "title": variant.title,
        "prompt": variant.prompt,
        "expected": encode(variant.expected),
        "answer_form": _dataclass_dict(variant.answer_form),
        "solution": [_dataclass_dict(step) for step in variant.solution],
        "tolerance": _dataclass_dict(variant.tolerance),
        "partial_credit": bool(variant.partial_credit),
        "values": encode(variant.values),
        "context": encode(variant.context),
        "detectors": list(variant.detectors),
        "hints": list(variant.hints),
    }
    if variant.parts:
        out["parts"] = [_freeze_part(p) for p in variant.parts]
    return out


def _thaw_part(data: dict[str, Any]) -> Part:
    tol = data.get("tolerance")
    form = _part_form(data)
    return Part(
        name=form.name,
        prompt=str(data["prompt"]),
        expected=decode(data["expected"]),
        answer_form=form.answer_form,
        solution=[
            SolutionStep(**{k: decode(v) for k, v in step.items()}) for step in data["solution"]
        ],
        tolerance=None if tol is None else Tolerance(**{k: decode(v) for k, v in tol.items()}),
        points=form.points,
        follow_through=data.get("follow_through"),
        uses=form.uses,
        follow_through_credit=None
        if data.get("follow_through_credit") is None
        else float(data["follow_through_credit"]),
        detectors=tuple(data.get("detectors", [])),
        context=decode(data.get("context", {})),
        hints=[str(h) for h in data.get("hints", [])],
    )


@dataclass(frozen=True)
class PartForm:
    """What a multi-part exercise page shows of one part before anything is graded: its
    ``name``, its ``points`` (None: an equal share), the earlier parts it ``uses`` and its
    ``answer_form`` (the fields of the same names of :class:`quizapp.bank.types.Part`)."""

    name: str
    points: float | None
    uses: tuple[str, ...]
    answer_form: AnswerForm


def thaw_part_forms(record: dict[str, Any]) -> list[PartForm]:
    """The parts of a stored multi-part variant as its page shows them (:class:`PartForm`), in
    order, without decoding their expected answers, solutions and detector data; ``[]`` for a
    variant without parts.  Raises ``ValueError`` like :func:`thaw`."""
    _check_format(record)
    try:
        return [_part_form(p) for p in record.get("parts", [])]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed stored variant: {exc}") from exc


def _part_form(data: dict[str, Any]) -> PartForm:
    """The :class:`PartForm` fields of one stored part (what :func:`_thaw_part` decodes too)."""
    return PartForm(
        name=str(data["name"]),
        points=None if data.get("points") is None else float(data["points"]),
        uses=tuple(str(u) for u in data.get("uses", [])),
        answer_form=_answer_form(data["answer_form"]),
    )


def _check_format(record: Any) -> None:
    """Raise ``ValueError`` unless ``record`` is a stored variant of :data:`FORMAT`."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        got = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ValueError(f"not a stored variant of format {FORMAT} (got {got!r})")


def thaw_answer_form(record: dict[str, Any]) -> AnswerForm:
    """Only the answer form of a stored variant (what a page needs to show its inputs), without
    decoding the rest.  Raises ``ValueError`` like :func:`thaw`."""
    _check_format(record)
    try:
        return _answer_form(record["answer_form"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed stored variant: {exc}") from exc


def _answer_form(data: dict[str, Any]) -> AnswerForm:
    form = {k: decode(v) for k, v in data.items()}
    if isinstance(form.get("shape"), list):  # shapes are tuples
        form["shape"] = tuple(form["shape"])
    return AnswerForm(**form)


def thaw(record: dict[str, Any]) -> Variant:
    """The :class:`Variant` that :func:`freeze` stored in ``record``.

    Raises ``ValueError`` for a record of another format or a malformed one.
    """
    _check_format(record)
    try:
        return Variant(
            exercise_id=str(record["exercise_id"]),
            seed=int(record["seed"]),
            title=str(record["title"]),
            prompt=str(record["prompt"]),
            expected=decode(record["expected"]),
            answer_form=_answer_form(record["answer_form"]),
            solution=[
                SolutionStep(**{k: decode(v) for k, v in step.items()})
                for step in record["solution"]
            ],
            tolerance=Tolerance(**{k: decode(v) for k, v in record["tolerance"].items()}),
            partial_credit=bool(record["partial_credit"]),
            values=decode(record["values"]),
            context=decode(record["context"]),
            detectors=tuple(record["detectors"]),
            hints=[str(h) for h in record["hints"]],
            parts=[_thaw_part(p) for p in record.get("parts", [])],
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed stored variant: {exc}") from exc
