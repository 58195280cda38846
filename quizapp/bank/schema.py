"""The pydantic schema of ``quiz.yaml`` and exercise files, and error mapping to file:line:column.

Every model forbids unknown keys (``extra="forbid"``); ``pydantic_errors`` turns a
``ValidationError`` into ``BankError``\\ s at the line of the offending key or value, with a "did
you mean" suggestion (``difflib.get_close_matches``) for misspelled keys.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from quizapp.bank.precision import Precision, default_tolerance
from quizapp.bank.types import KindParams
from quizapp.bank.yamlio import BankError, Located
from quizapp.grading.types import DEFAULT_ATOL, DEFAULT_RTOL, Tolerance

ID_RE = re.compile(r"^[a-z0-9_-]+$")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
#: Largest dimension and cell count of a random variable (keeps prompts and grids readable and
#: every evaluation cheap).
MAX_VARIABLE_DIM = 12
MAX_VARIABLE_CELLS = 144
#: Bounds on the sizes an author controls (each page view renders the prompt and every hint: 20,000
#: hints cost 4.2 s of CPU per view).  The bundled bank's largest are a 628-character prompt, 3
#: hints of at most 133 characters and 3 concepts.
MAX_PROMPT_CHARS = 20_000
MAX_HINTS = 10
MAX_HINT_CHARS = 2_000
MAX_CONCEPTS = 20
MAX_LABELS = MAX_VARIABLE_DIM
MAX_LABEL_CHARS = 100
MAX_DESCRIPTION_CHARS = 20_000
MAX_QUIZ_EXERCISES = 200
#: How many random variables, ``require`` conditions and ``derived`` values an expression
#: exercise may have (each is evaluated on every draw, and a draw is redrawn while a condition
#: fails: 20,000 conditions cost 1.6 s per first view, 5,000 derived values 21 s and 690 MB per
#: preview).  The bundled bank's largest: 3 variables, 4 conditions, 2 derived values.
MAX_VARIABLES = 30
MAX_REQUIRE = 30
MAX_DERIVED = 30


def few_enough(field: str, value: Any) -> Any:
    """``value`` (the raw YAML of an exercise's ``variables``, ``require`` or ``derived``) when
    it has at most ``MAX_VARIABLES`` / ``MAX_REQUIRE`` / ``MAX_DERIVED`` entries; else raises
    ``ValueError`` saying how many it has and the bound (a pydantic ``before`` validator)."""
    limit, what = {
        "variables": (MAX_VARIABLES, "random variables"),
        "require": (MAX_REQUIRE, "conditions"),
        "derived": (MAX_DERIVED, "derived values"),
    }[field]
    if isinstance(value, list | dict) and len(value) > limit:
        raise ValueError(f"{len(value):,} {what}; an exercise has at most {limit}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToleranceSpec(_Strict):
    """``tolerance:`` one of ``{rtol: R, atol: A}`` (either may be left out), ``{sigfig: N}``,
    ``{decdig: N}``.  Defaults: relabs with PrairieLearn's ``rtol=1e-2``, ``atol=1e-8``."""

    rtol: float | None = Field(default=None, ge=0, le=1)
    atol: float | None = Field(default=None, ge=0)
    sigfig: int | None = Field(default=None, ge=1, le=15, strict=True)
    decdig: int | None = Field(default=None, ge=0, le=15, strict=True)

    @model_validator(mode="after")
    def _one_mode(self) -> ToleranceSpec:
        modes = []
        if self.rtol is not None or self.atol is not None:
            modes.append("rtol/atol")
        if self.sigfig is not None:
            modes.append("sigfig")
        if self.decdig is not None:
            modes.append("decdig")
        if len(modes) > 1:
            raise ValueError(
                f"two modes at once ({' and '.join(modes)}); choose one of "
                "{rtol: R, atol: A}, {sigfig: N} or {decdig: N}"
            )
        if not modes:
            raise ValueError("empty; give {rtol: R, atol: A}, {sigfig: N} or {decdig: N}")
        return self

    def to_tolerance(self) -> Tolerance:
        if self.sigfig is not None:
            return Tolerance(mode="sigfig", digits=self.sigfig)
        if self.decdig is not None:
            return Tolerance(mode="decdig", digits=self.decdig)
        return Tolerance(
            mode="relabs",
            rtol=DEFAULT_RTOL if self.rtol is None else self.rtol,
            atol=DEFAULT_ATOL if self.atol is None else self.atol,
        )


class VariableSpec(_Strict):
    """One random variable of an ``expression`` exercise.

    Shape (at most one): ``matrix: [rows, cols]``, ``vector: n``, ``scalar: true`` (the default).
    A dimension may name an earlier integer scalar variable (``matrix: [n, d]``).
    Values (exactly one): ``integers: [lo, hi]`` (inclusive), ``uniform: [a, b]`` (with optional
    ``decimals: k`` rounding), ``choice: [v1, v2, ...]`` (each cell drawn from the list), or
    ``value: ...`` (a fixed number or nested list).
    """

    matrix: list[Any] | None = None  # int or variable name; checked below (one clear message)
    vector: Any = None
    scalar: bool | None = None
    integers: list[int] | None = None
    uniform: list[float] | None = None
    choice: list[float] | None = None
    decimals: int | None = Field(default=None, ge=0, le=6, strict=True)
    value: Any = None

    @model_validator(mode="after")
    def _check(self) -> VariableSpec:
        shapes = [k for k in ("matrix", "vector") if getattr(self, k) is not None]
        if self.scalar is not None and self.scalar is not True:
            raise ValueError("write 'scalar: true' (or leave it out: a scalar is the default)")
        if len(shapes) > 1 or (shapes and self.scalar):
            raise ValueError("give one shape: matrix: [rows, cols], vector: n or scalar: true")
        dists = [
            k for k in ("integers", "uniform", "choice", "value") if getattr(self, k) is not None
        ]
        if len(dists) != 1:
            raise ValueError(
                "give exactly one of integers: [lo, hi], uniform: [a, b], choice: [...], value: ..."
                + (f" (got {', '.join(dists)})" if dists else "")
            )
        if self.matrix is not None and len(self.matrix) != 2:
            raise ValueError("matrix: give [rows, cols]")
        for d in list(self.matrix or []) + ([self.vector] if self.vector is not None else []):
            if isinstance(d, bool) or not isinstance(d, (int, str)):
                raise ValueError(
                    f"a dimension is a whole number or the name of an earlier variable, got {d!r}"
                )
            if isinstance(d, int) and not 1 <= d <= MAX_VARIABLE_DIM:
                what = "matrix" if self.matrix is not None else "vector"
                raise ValueError(
                    f"a {what} dimension must be from 1 to {MAX_VARIABLE_DIM}, got {d} (a matrix "
                    f"has at most {MAX_VARIABLE_DIM} rows and columns, {MAX_VARIABLE_CELLS} cells)"
                )
            if isinstance(d, str) and not NAME_RE.match(d):
                raise ValueError(f"a dimension must be a number or a variable name, got {d!r}")
        if (
            self.matrix
            and all(isinstance(d, int) for d in self.matrix)
            and self.matrix[0] * self.matrix[1] > MAX_VARIABLE_CELLS
        ):
            raise ValueError(
                f"a matrix may have at most {MAX_VARIABLE_CELLS} cells, got "
                f"{self.matrix[0]} x {self.matrix[1]}"
            )
        if self.integers is not None:
            if len(self.integers) != 2:
                raise ValueError("integers: give [lo, hi]")
            lo, hi = self.integers
            if lo > hi:
                raise ValueError(
                    f"integers: the range [{lo}, {hi}] is reversed (lower bound above upper); "
                    f"write [{hi}, {lo}]"
                )
            if max(abs(lo), abs(hi)) > 10**6:
                raise ValueError("integers: bounds must be within ±1000000")
        if self.uniform is not None:
            if len(self.uniform) != 2:
                raise ValueError("uniform: give [a, b]")
            a, b = self.uniform
            if not a < b:
                raise ValueError(f"uniform: the range [{a}, {b}] is empty or reversed")
            if max(abs(a), abs(b)) > 1e6:
                raise ValueError("uniform: bounds must be within ±1e6")
        if self.decimals is not None and self.uniform is None:
            raise ValueError("decimals: only with uniform: [a, b]")
        if self.choice is not None and not self.choice:
            raise ValueError("choice: give at least one value")
        if self.choice is not None and len(self.choice) > MAX_VARIABLE_CELLS:
            raise ValueError(f"choice: give at most {MAX_VARIABLE_CELLS} values")
        if self.choice is not None and any(abs(v) > 1e6 for v in self.choice):
            raise ValueError("choice: values must be within ±1e6")
        if self.value is not None:
            _check_fixed_value(self.value)
        return self


def _check_fixed_value(value: Any) -> None:
    """``value:`` of a variable: a number, a list of numbers or a list of rows, at most
    ``MAX_VARIABLE_DIM`` per dimension and ``MAX_VARIABLE_CELLS`` cells (a matrix like any other
    variable's), each within ±1e6."""
    rows = value if isinstance(value, list) else [value]
    if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
        if len(value) > MAX_VARIABLE_DIM or any(len(r) > MAX_VARIABLE_DIM for r in value):
            raise ValueError(
                f"value: a matrix has at most {MAX_VARIABLE_DIM} rows and {MAX_VARIABLE_DIM} "
                "columns"
            )
        rows = [c for r in value for c in r]
    elif isinstance(value, list) and len(value) > MAX_VARIABLE_DIM:
        raise ValueError(f"value: a vector has at most {MAX_VARIABLE_DIM} entries")
    for cell in rows:
        if isinstance(cell, (int, float)) and not isinstance(cell, bool) and abs(cell) > 1e6:
            raise ValueError("value: numbers must be within ±1e6")


class AnswerFormSpec(_Strict):
    """``answer_form`` of an ``expression`` exercise: the form the student answers in.

    ``type`` is checked against the answer's shape; ``show_shape: false`` gives a free text box
    so the shape is part of the question.
    """

    type: Literal["scalar", "vector", "matrix"] | None = None
    show_shape: bool = True
    row_labels: list[str] | None = None
    col_labels: list[str] | None = None

    @field_validator("row_labels", "col_labels")
    @classmethod
    def _short_labels(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and len(v) > MAX_LABELS:
            raise ValueError(f"{len(v)} labels; a matrix has at most {MAX_LABELS} rows or columns")
        if v is not None and any(len(label) > MAX_LABEL_CHARS for label in v):
            raise ValueError(f"a label has at most {MAX_LABEL_CHARS} characters")
        return v


class MistakeSpec(_Strict):
    """One named mistake of an ``expression`` exercise: its ``code`` (counted for the
    instructor), the ``answer`` expression the mistake produces, and the ``message`` shown to a
    student whose answer equals it (plain text; ``{{ name }}`` placeholders of variables)."""

    code: str = Field(min_length=1, max_length=60)
    answer: str
    message: str = Field(min_length=1, max_length=500)

    @field_validator("code")
    @classmethod
    def _code(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", v):
            raise ValueError(f"a mistake code is lowercase letters, digits and _, got {v!r}")
        return v

    @field_validator("answer", mode="before")
    @classmethod
    def _number_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def distinct_mistake_codes(mistakes: list[MistakeSpec]) -> list[MistakeSpec]:
    """``mistakes`` (of one answer or of one part) when their codes differ; raises
    ``ValueError`` naming a code listed twice (each code is counted on its own for the
    instructor)."""
    codes = [m.code for m in mistakes]
    twice = sorted({c for c in codes if codes.count(c) > 1})
    if twice:
        raise ValueError(f"mistake codes must differ; {', '.join(twice)} is listed twice")
    return mistakes


class ExplanationSpec(_Strict):
    """One step of explanation an ``expression`` exercise's author adds to the worked solution:
    a plain-text ``title`` and a Markdown ``text`` (placeholders of variables and derived
    values allowed)."""

    title: str = Field(min_length=1, max_length=120)
    text: str = Field(min_length=1, max_length=MAX_HINT_CHARS)


class PartSpec(_Strict):
    """One part of a multi-part ``expression`` exercise (``parts:``, see docs/multi-part.md).

    ``answer`` is an expression over the variables and the names of EARLIER parts (a part that
    names one is graded with follow-through).  ``points`` is the part's share of the exercise's
    points (parts that leave it out share what the others leave); ``tolerance``,
    ``answer_form`` and ``hints`` as for a whole exercise (the exercise's tolerance by default);
    ``follow_through_credit`` (0 to 1) overrides the exercise's; ``detectors`` names the mistakes
    of a built-in kind to recognise, with expressions for that kind's inputs
    (``{attention: {Q: Q, K: K, ask: weights}}``, see ``quizapp.bank.parts.DETECTOR_FAMILIES``);
    ``mistakes`` and ``explanation`` as for one answer, the part's own.
    """

    name: str = Field(min_length=1, max_length=40)
    prompt: str = ""
    answer: str
    answer_form: AnswerFormSpec | None = None
    tolerance: ToleranceSpec | None = None
    points: int | None = Field(default=None, ge=0, le=1000, strict=True)
    hints: list[str] = Field(default_factory=list)
    follow_through_credit: float | None = Field(default=None, ge=0, le=1)
    detectors: dict[str, dict[str, Any]] | None = None
    #: The part's own named mistakes (as ``mistakes:`` of one answer, over the variables and
    #: the earlier parts' true values); one that gives the part's answer in a variant is not
    #: named in it, and nothing is drawn again for them.
    mistakes: list[MistakeSpec] = Field(default_factory=list, max_length=MAX_HINTS)
    #: Steps the author writes at the head of the part's worked solution.
    explanation: list[ExplanationSpec] = Field(default_factory=list, max_length=MAX_HINTS)

    @field_validator("mistakes")
    @classmethod
    def _distinct_codes(cls, v: list[MistakeSpec]) -> list[MistakeSpec]:
        return distinct_mistake_codes(v)

    @field_validator("answer", mode="before")
    @classmethod
    def _number_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v) or v.startswith("_"):
            raise ValueError(
                f"a part's name is a letter followed by letters, digits or _, got {v!r}"
            )
        return v

    @field_validator("detectors")
    @classmethod
    def _detectors(cls, v: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, Any]] | None:
        if v is None:
            return v
        from quizapp.bank.parts import detector_spec_problem

        problem = detector_spec_problem(v)
        if problem:
            raise ValueError(problem)
        return v


class ExpressionSpec(KindParams):
    """The ``expression`` kind's fields (top level in the YAML, ``params`` of the kind): one
    ``answer``, or ``parts`` (each with its own answer; see :class:`PartSpec`).

    ``mistakes``: named mistakes, each with the answer expression it produces; every variant is
    redrawn until each one differs from the right answer (like a failed ``require``), and an
    answer equal to one is told its message.  ``derived``: named expressions computed from each
    draw (in order; usable in ``require``, ``answer``, ``parts``, ``mistakes`` and every
    template, drawing nothing).  ``explanation``: steps the author writes at the head of the
    worked solution.  ``precision`` is not written in the YAML: the loader sets it from the
    prompt's stated precision, so the worked solution shows values as the prompt asks for
    them."""

    variables: dict[str, VariableSpec] = Field(default_factory=dict)
    require: list[str] = Field(default_factory=list)
    answer: str | None = None
    answer_form: AnswerFormSpec | None = None
    mistakes: list[MistakeSpec] = Field(default_factory=list, max_length=MAX_HINTS)
    derived: dict[str, str] = Field(default_factory=dict)
    explanation: list[ExplanationSpec] = Field(default_factory=list, max_length=MAX_HINTS)
    precision: Precision | None = None
    parts: list[PartSpec] = Field(default_factory=list)

    @field_validator("variables", "require", "derived", mode="before")
    @classmethod
    def _few(cls, v: Any, info: Any) -> Any:
        return few_enough(info.field_name, v)

    @field_validator("mistakes")
    @classmethod
    def _unique_codes(cls, v: list[MistakeSpec]) -> list[MistakeSpec]:
        return distinct_mistake_codes(v)

    @model_validator(mode="after")
    def _answer_or_parts(self) -> ExpressionSpec:
        if self.answer is not None and self.parts:
            raise ValueError("give either answer: or parts:, not both")
        if self.answer is None and not self.parts:
            raise ValueError("kind expression needs an 'answer:' expression (or parts:)")
        if self.parts and self.mistakes:
            raise ValueError(
                "mistakes: name the mistakes of one answer; with parts:, give a part its own "
                "mistakes: (or detectors:)"
            )
        if self.parts and self.explanation:
            raise ValueError(
                "explanation: heads the worked solution of one answer; with parts:, give a part "
                "its own explanation:"
            )
        return self

    @field_validator("answer", mode="before")
    @classmethod
    def _number_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    @field_validator("require", mode="before")
    @classmethod
    def _one_as_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class ExerciseSpec(_Strict):
    """An exercise file.  ``params`` is checked against the kind's own ``Params`` schema; the
    ``expression`` kind has ``variables``/``require``/``answer``/``answer_form`` instead."""

    title: str = Field(min_length=1, max_length=200)
    kind: str
    points: int = Field(default=10, ge=0, le=1000, strict=True)
    attempts: int = Field(default=3, ge=1, le=100, strict=True)
    tolerance: ToleranceSpec | None = None
    partial_credit: bool = Field(default=True, strict=True)
    practice: bool = Field(default=True, strict=True)
    concepts: list[str] = Field(default_factory=list)
    prompt: str = Field(min_length=1)
    params: dict[str, Any] | None = None
    hints: list[str] = Field(default_factory=list)
    variables: dict[str, VariableSpec] | None = None
    require: list[str] | None = None
    answer: str | None = None
    answer_form: AnswerFormSpec | None = None
    mistakes: list[MistakeSpec] | None = Field(default=None, max_length=MAX_HINTS)
    derived: dict[str, str] | None = None
    explanation: list[ExplanationSpec] | None = Field(default=None, max_length=MAX_HINTS)
    parts: list[PartSpec] | None = None
    follow_through_credit: float | None = Field(default=None, ge=0, le=1)

    @field_validator("answer", mode="before")
    @classmethod
    def _number_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    @field_validator("require", mode="before")
    @classmethod
    def _one_as_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @field_validator("prompt")
    @classmethod
    def _short_prompt(cls, v: str) -> str:
        if len(v) > MAX_PROMPT_CHARS:
            raise ValueError(
                f"the prompt has {len(v):,} characters; at most {MAX_PROMPT_CHARS:,} are allowed"
            )
        return v

    @field_validator("concepts")
    @classmethod
    def _few_concepts(cls, v: list[str]) -> list[str]:
        if len(v) > MAX_CONCEPTS:
            raise ValueError(f"{len(v):,} concepts; an exercise names at most {MAX_CONCEPTS}")
        return v

    @field_validator("variables", "require", "derived", mode="before")
    @classmethod
    def _few(cls, v: Any, info: Any) -> Any:
        return few_enough(info.field_name, v)

    @field_validator("hints", mode="before")
    @classmethod
    def _few_hints(cls, v: Any) -> Any:
        if isinstance(v, list) and len(v) > MAX_HINTS:
            raise ValueError(f"{len(v):,} hints; an exercise has at most {MAX_HINTS}")
        return v

    @field_validator("hints")
    @classmethod
    def _short_hints(cls, v: list[str]) -> list[str]:
        for i, hint in enumerate(v, start=1):
            if len(hint) > MAX_HINT_CHARS:
                raise ValueError(
                    f"hint {i} has {len(hint):,} characters; a hint has at most {MAX_HINT_CHARS:,}"
                )
        return v

    def follow_through_value(self) -> float:
        """The share of a part's credit earned by follow-through (default 1.0: full credit)."""
        return 1.0 if self.follow_through_credit is None else float(self.follow_through_credit)

    def tolerance_value(self) -> Tolerance:
        """The grading tolerance: the ``tolerance:`` written, else exact (``rtol = atol = 0``)
        when the prompt says exact (``quizapp.bank.precision.default_tolerance``), else
        PrairieLearn's default relabs ``rtol=1e-2``, ``atol=1e-8``."""
        if self.tolerance:
            return self.tolerance.to_tolerance()
        return default_tolerance(self.prompt) or Tolerance()


def _wall_time(v: Any) -> Any:
    """A written time (``quizapp.coursetime.parse_wall_time``), kept as written: the course's
    time zone turns it into an instant when the bank is loaded."""
    from quizapp.coursetime import parse_wall_time

    return None if v is None else parse_wall_time(v)


class LatePeriodSpec(_Strict):
    """One entry of ``late:``: answers graded before ``until`` (and after ``closes`` or the
    previous period) earn their score times ``credit`` (0 to 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    until: Any
    credit: float = Field(ge=0, le=1)

    @field_validator("until", mode="before")
    @classmethod
    def _until(cls, v: Any) -> Any:
        return _wall_time(v)


class QuizSpec(_Strict):
    """``quiz.yaml``: the quiz's title, description (Markdown), position among quizzes
    (``order``; quizzes without one come after those with one, by opening time, then id),
    optional opening/closing times (``2026-03-01 09:00``, wall-clock in the course's time zone;
    a date alone closes at the end of that day), late periods (``late: [{until, credit}]``) and
    optional exercise order (file stems; default: by file name)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    title: str = Field(min_length=1, max_length=200)
    description: str = ""
    order: int | None = Field(default=None, strict=True)
    opens: Any = None
    closes: Any = None
    late: list[LatePeriodSpec] = Field(default_factory=list)
    exercises: list[str] | None = None

    @field_validator("description")
    @classmethod
    def _short_description(cls, v: str) -> str:
        if len(v) > MAX_DESCRIPTION_CHARS:
            raise ValueError(
                f"the description has {len(v):,} characters; at most "
                f"{MAX_DESCRIPTION_CHARS:,} are allowed"
            )
        return v

    @field_validator("exercises", mode="before")
    @classmethod
    def _few_exercises(cls, v: Any) -> Any:
        if isinstance(v, list) and len(v) > MAX_QUIZ_EXERCISES:
            raise ValueError(f"{len(v):,} exercises; a quiz has at most {MAX_QUIZ_EXERCISES}")
        return v

    @field_validator("opens", "closes", mode="before")
    @classmethod
    def _date_as_wall_time(cls, v: Any) -> Any:
        return _wall_time(v)

    def schedule(self, zone: Any) -> tuple[Any, Any, list[tuple[Any, float]]]:
        """``(opens, closes, [(until, credit), ...])`` as aware UTC instants in ``zone`` (a
        ``ZoneInfo``): a date alone opens at the start of its day and closes (or ends a late
        period) at its end."""
        opens = self.opens.instant(zone, end_of_day=False) if self.opens else None
        closes = self.closes.instant(zone, end_of_day=True) if self.closes else None
        late = [(p.until.instant(zone, end_of_day=True), float(p.credit)) for p in self.late]
        return opens, closes, late


# --- error mapping ---------------------------------------------------------------------------

_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "string": "text",
    "list": "a list",
    "dict": "a mapping (key: value lines)",
    "model": "a mapping (key: value lines)",
    "datetime": "a date and time (2026-03-01 09:00)",
    "tuple": "a list",
}


def _fields_at(model: Any, path: tuple[Any, ...]) -> list[str] | None:
    """The field names of the model found by following ``path`` from ``model``."""
    t: Any = model
    for part in path:
        t = _unwrap(t)
        if isinstance(t, type) and issubclass(t, BaseModel):
            field = t.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None
            t = field.annotation
            continue
        origin = typing.get_origin(t)
        args = typing.get_args(t)
        if origin in (dict, typing.Dict) and len(args) == 2:  # noqa: UP006
            t = args[1]
        elif origin in (list, typing.List) and args:  # noqa: UP006
            t = args[0]
        else:
            return None
    t = _unwrap(t)
    if isinstance(t, type) and issubclass(t, BaseModel):
        return list(t.model_fields)
    return None


def _unwrap(t: Any) -> Any:
    origin = typing.get_origin(t)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(t) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return t


def shown_value(value: Any) -> str:
    """A YAML value as an author wrote it, for messages: dates and times in ISO form (YAML reads
    ``2026-03-01`` as a date, which Python would show as ``datetime.date(2026, 3, 1)``), other
    values as their repr."""
    if isinstance(value, dt.datetime | dt.date):
        return (
            f"the date {value.isoformat(sep=' ') if isinstance(value, dt.datetime) else value}"
            " (YAML reads it as a date; put it in quotes to keep it as text)"
        )
    return repr(value)


def suggest(word: str, options: list[str] | Any) -> str | None:
    """The closest of ``options`` to ``word`` (difflib ratio >= 0.6), or ``None``."""
    found = difflib.get_close_matches(str(word), list(options), n=1, cutoff=0.6)
    return found[0] if found else None


def _dotted(loc: tuple[Any, ...]) -> str:
    """A place in a file as the messages write it: keys joined by dots, a list's items counted
    from 1 in brackets (``parts[2].hints[1]``, as the validator's other messages do; pydantic
    counts from 0)."""
    out = ""
    for p in loc:
        if p == "":
            continue
        if isinstance(p, int):
            out += f"[{p + 1}]"
        else:
            out += f".{p}" if out else str(p)
    return out


def pydantic_errors(
    exc: ValidationError,
    model: type[BaseModel],
    located: Located,
    file: str,
    prefix: tuple[Any, ...] = (),
    label: str = "",
) -> list[BankError]:
    """Map a ``ValidationError`` of ``model`` to ``BankError``\\ s at file:line:column.

    ``prefix`` is where the validated data sits in the file (e.g. ``("params",)``) and ``label``
    how to name it in messages.
    """
    out: list[BankError] = []
    errs = exc.errors(include_url=False)
    # A misspelled key also makes its intended field "missing"; report only the misspelling.
    suggested: set[tuple[Any, ...]] = set()
    for err in errs:
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            best = suggest(str(loc[-1]), _fields_at(model, loc[:-1]) or [])
            if best:
                suggested.add(loc[:-1] + (best,))
    for err in errs:
        if err["type"] == "missing" and tuple(err["loc"]) in suggested:
            continue
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))
        full = prefix + loc
        dotted = _dotted((label,) + loc) or "file"
        etype = err["type"]
        if etype == "extra_forbidden":
            key = loc[-1]
            fields = _fields_at(model, loc[:-1]) or []
            mark = located.key_mark(full) or located.find(full)[0]
            where = _dotted((label,) + loc[:-1])
            msg = f"unknown key {key!r}" + (f" in {where}" if where else "")
            best = suggest(str(key), fields)
            if best:
                msg += f": did you mean {best!r}?"
            elif fields:
                msg += f" (allowed: {', '.join(fields)})"
            out.append(BankError(file, mark.line, mark.column, msg))
            continue
        mark, _found = located.find(full)
        if etype == "missing":
            out.append(
                BankError(file, mark.line, mark.column, f"missing required field {dotted!r}")
            )
            continue
        msg = str(err["msg"])
        if etype in ("value_error", "assertion_error"):
            msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
            out.append(
                BankError(file, mark.line, mark.column, msg if not loc else f"{dotted}: {msg}")
            )
            continue
        family = etype.split("_")[0]
        ctx = err.get("ctx") or {}
        given = err.get("input")
        if etype.endswith(("_type", "_parsing")) and family in _TYPE_WORDS:
            msg = f"expected {_TYPE_WORDS[family]}, got {shown_value(given)}"
        elif etype in ("string_too_long", "string_too_short") and isinstance(given, str):
            bound = "at most" if etype == "string_too_long" else "at least"
            limit = ctx.get("max_length" if etype == "string_too_long" else "min_length")
            msg = (
                "must not be empty"
                if limit == 1 and etype == "string_too_short"
                else f"{bound} {limit} characters, got {len(given):,}"
            )
        elif etype in ("too_long", "too_short") and isinstance(given, list | dict):
            bound = "at most" if etype == "too_long" else "at least"
            limit = ctx.get("max_length" if etype == "too_long" else "min_length")
            msg = f"{bound} {limit} items, got {len(given):,}"
        elif "input" in err and not isinstance(err["input"], (dict, list)):
            msg = f"{msg} (got {shown_value(err['input'])})"
        out.append(BankError(file, mark.line, mark.column, f"{dotted}: {msg}"))
    return out
