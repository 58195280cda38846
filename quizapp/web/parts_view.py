"""The answer form of a multi-part exercise: each part with its prompt, grid and verdict.

Each part's inputs are those of a single answer (``quizapp.web.display``), their names prefixed
with ``part-<name>-`` (``part-S-cell-0-1``, ``part-S-answer``), all in one form: the student
submits every part at once, or one part with its own button (``only=<name>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from quizapp import services
from quizapp.bank.stored import PartForm
from quizapp.services.points import part_points
from quizapp.web import display

PREFIX = "part-{name}-"


@dataclass
class PartView:
    """One part on the exercise page: what it asks, its inputs, its last verdict."""

    name: str
    points: float | None
    prompt_html: Markup
    hints: list[Markup]
    form: display.FormView
    verdict: dict[str, Any] | None = None
    locked: bool = False
    uses: list[str] = field(default_factory=list)
    expected: dict[str, Any] | None = None
    solution: list[dict[str, Any]] | None = None
    text_name: str = ""
    text_id: str = ""
    #: why a part not sent with the submission has a verdict (:func:`kept_note`), or ""
    note: str = ""


class _Prefixed:
    """A posted form seen through one part's prefix (``get("answer")`` reads
    ``part-S-answer``)."""

    def __init__(self, data: Any, prefix: str) -> None:
        self.data = data
        self.prefix = prefix

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(self.prefix + key, default)


def _prefix(form: display.FormView, prefix: str) -> display.FormView:
    for row in form.grid:
        for cell in row:
            cell.name = prefix + cell.name
    for choice in form.choices:
        choice.id = prefix + choice.id
    return form


def read_posted_parts(
    parts: Sequence[PartForm], data: Any, only: str | None = None
) -> dict[str, Any]:
    """The posted answer of each of ``parts`` (``services.stored_part_forms``; ``only``: of
    that part alone), as ``services.submit`` takes it: part name -> text or grid.  A part's
    paste box wins over its grid when something is typed there; parts with nothing posted are
    left out."""
    out: dict[str, Any] = {}
    for part in parts:
        if only is not None and part.name != only:
            continue
        view = _Prefixed(data, PREFIX.format(name=part.name))
        text = view.get("answer")
        if isinstance(text, str) and text.strip():
            out[part.name] = text
            continue
        grid_view = _GridOnly(view)
        answer = display.read_posted_answer(part.answer_form, grid_view)
        if answer is not None:
            out[part.name] = answer
    return out


class _GridOnly:
    """A part's posted fields with the paste box hidden, so the grid is read."""

    def __init__(self, view: _Prefixed) -> None:
        self.view = view

    def get(self, key: str, default: Any = None) -> Any:
        if key == "via":
            return "cells"
        return self.view.get(key, default)


def over_last(
    posted: Any, last: Any, verdict: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The answers and verdict a multi-part page shows when the parts just ``posted`` (part
    name -> text or grid) were refused before grading (an empty part, a box outside the grid,
    a stale variant): the ``last`` submission's answers (its decoded whole answer) with the
    posted parts over them, and its ``verdict`` without the posted parts' verdicts (their marks
    would be of the old values).  A locked part keeps its answer and verdict: the submit
    ignores what is posted for it."""
    last_answers = dict(last) if isinstance(last, Mapping) else {}
    parts = dict((verdict or {}).get("parts") or {})
    locked = {name for name, v in parts.items() if isinstance(v, Mapping) and v.get("locked")}
    sent = dict(posted) if isinstance(posted, Mapping) else {}
    answers = {**last_answers, **{k: v for k, v in sent.items() if k not in locked}}
    if verdict is None:
        return answers, None
    kept = {k: v for k, v in parts.items() if k not in sent or k in locked}
    return answers, {**verdict, "parts": kept}


def build_part_views(
    parts: Sequence[PartForm],
    page_parts: list[dict[str, Any]],
    *,
    answers: Mapping[str, Any] | None = None,
    verdict: Mapping[str, Any] | None = None,
    parsed: Mapping[str, Any] | None = None,
    finished: bool = False,
    exercise_points: float | None = None,
    kept_notes: bool = True,
) -> list[PartView]:
    """The ``parts`` of a stored variant (``services.stored_part_forms``) for the page: each
    pre-filled with its answer in
    ``answers`` (the last submission's whole answer, or what was just posted), marked with its
    verdict in ``verdict["parts"]``; ``finished`` adds each part's correct answer and steps
    (``page_parts`` are the stored page's parts, ``quizapp.page.page_markup``).  With
    ``exercise_points`` (the exercise's points now) each part shows its share of them
    (``services.points.part_points``), else the points stored with the part.
    ``kept_notes`` False leaves out :func:`kept_note` (a repeated answer's earlier verdict)."""
    answers = answers or {}
    verdicts = (verdict or {}).get("parts") or {}
    parsed = parsed if isinstance(parsed, Mapping) else {}
    pages = {p["name"]: p for p in page_parts}
    # A part's points are its share of the exercise's points now (``points.part_points``): a change of
    # the exercise's points applies to every variant at once, the split is the variant's.
    points_now = part_points(parts, exercise_points) if exercise_points is not None else {}
    out = []
    for part in parts:
        page = pages.get(part.name, {})
        v = verdicts.get(part.name)
        answer = answers.get(part.name)
        prefix = PREFIX.format(name=part.name)
        form = display.build_form_view(
            part.answer_form,
            choices_html=page.get("choices"),
            answer=answer,
            cells=(v or {}).get("cells"),
            invalid_cell=(v or {}).get("invalid_cell"),
            check_cells=(v or {}).get("status") == "invalid",
            parsed=parsed.get(part.name) if isinstance(answer, str) else None,
        )
        out.append(
            PartView(
                name=part.name,
                points=points_now.get(part.name, part.points),
                prompt_html=page.get("prompt_html") or Markup(""),
                hints=list(page.get("hints") or []),
                form=_prefix(form, prefix),
                verdict=dict(v) if v else None,
                locked=bool(v and v.get("locked")),
                uses=list(part.uses),
                expected=page.get("expected") if finished else None,
                solution=page.get("solution") if finished else None,
                text_name=prefix + "answer",
                text_id=prefix + "answer-text",
                note=kept_note(part.name, list(part.uses), verdicts) if kept_notes else "",
            )
        )
    return out


def kept_note(name: str, uses: list[str], verdicts: Mapping[str, Any]) -> str:
    """The line under the verdict of part ``name`` when the submission did not send it: its
    answer was kept from the last graded submission and graded again with the whole answer
    (docs/multi-part.md), so a part computed from a part sent now (``uses``) may change
    verdict: "Check part x only" after a wrong x grades the kept r against the new x, and the
    page says so.  "" for a part sent, locked (its own badge says it) or never answered.
    ``verdicts``: the stored verdict's ``parts`` (``answered`` is ``posted``, ``kept`` or
    ``none``, ``quizapp.services.part_answers.part_verdicts``)."""
    mine = verdicts.get(name) or {}
    if mine.get("answered") != "kept" or mine.get("locked"):
        return ""
    sent = [u for u in uses if (verdicts.get(u) or {}).get("answered") == "posted"]
    if sent:
        return (
            f"Your answer to {name} was kept from your last submission and graded again with "
            f"the {', '.join(sent)} you sent now; check {name} again if its verdict changed."
        )
    return f"Your answer to {name} was kept from your last submission and graded again."


def answer_text(answer: Any) -> str:
    """A stored multi-part answer as the submissions table shows it: one part per line, a grid
    on that line (``S: [1, 2; 3, 4]``, ``services.grid_text``)."""
    if isinstance(answer, Mapping):
        return "\n".join(f"{name}: {answer_text(value)}" for name, value in answer.items())
    if isinstance(answer, str):
        return answer
    return services.grid_text(answer, one_line=True)
