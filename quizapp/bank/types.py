"""Value types of the exercise bank: answer forms, worked-solution steps, variants, kinds.

Pure: no Flask, no database.  These are the contract between the bank's infrastructure
(loading, schema, templates, CLI), the exercise kinds (``quizapp/bank/kinds/``) and the web layer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from quizapp.grading.types import Tolerance

AnswerType = Literal[
    "scalar",  # one number
    "vector",  # 1-D array; accepted typed as a row or a column
    "matrix",  # 2-D array
    "partial_matrix",  # 2-D array with some cells given; only the blanks are graded
    "point_on_line",  # any point satisfying a linear equation (predicate, not a reference value)
    "choice",  # multiple choice: the answer is the index of one of ``choices``
    "index",  # an integer position ("which key wins for query 2?"), 1-based as shown to students
    "parts",  # a multi-part exercise: each part (``Variant.parts``) has its own answer form
]


@dataclass(frozen=True)
class AnswerForm:
    """What the student is asked to give, and how the form should look.

    - ``shape``: the expected array shape (``()`` for a scalar), or ``None`` for choice/index.
    - ``show_shape``: render a grid of inputs with that shape (False: a free text box only, so
      the shape itself is part of the question).
    - ``given``: for ``partial_matrix``, a grid of the given cells' display text, ``None`` for the
      blanks the student fills in.
    - ``choices``: for ``choice``, the options as Markdown with ``$...$`` LaTeX.
    - ``labels``: optional row and column labels (e.g. query and key names) for the grid.
    - ``count``: for ``point_on_line``, how many distinct points are asked for.
    - ``unknowns``: names of the unknowns, e.g. ``["x", "y"]``.
    """

    type: AnswerType
    shape: tuple[int, ...] | None = None
    show_shape: bool = True
    given: list[list[str | None]] | None = None
    choices: list[str] | None = None
    row_labels: list[str] | None = None
    col_labels: list[str] | None = None
    count: int = 1
    unknowns: list[str] | None = None


@dataclass(frozen=True)
class SolutionStep:
    """One step of a worked solution.

    ``text`` is Markdown with ``$...$`` LaTeX; ``value`` an optional intermediate result (scalar or
    array) to display; ``heatmap`` asks the UI to draw ``value`` (attention weights) as a colour grid.
    """

    title: str
    text: str
    value: Any = None
    heatmap: bool = False
    row_labels: list[str] | None = None
    col_labels: list[str] | None = None


@dataclass
class Part:
    """One answer box of a multi-part exercise (see ``quizapp/bank/parts.py``).

    - ``name``: the part's name (``S``), unique in its exercise; later parts' ``follow_through``
      expressions refer to it.
    - ``prompt``: Markdown with ``$...$`` LaTeX (placeholders rendered once the variant is drawn);
      ``hints`` likewise.
    - ``expected``, ``answer_form``, ``tolerance``, ``detectors``, ``context``: as for a whole
      :class:`Variant` (the part is graded by the same answer-form dispatch).
    - ``points``: the part's share of the exercise's points (the exercise's score is the
      points-weighted mean of its parts' scores).
    - ``follow_through``: an expression (``quizapp.bank.expression``) over ``Variant.values``
      and the names of earlier parts giving this part's value from the student's own earlier
      answers, or ``None`` when the part depends on none; ``uses``: those earlier part names.
    - ``follow_through_credit``: the share of the part's credit an answer that matches only the
      follow-through value earns (0 turns follow-through off).
    - ``solution``: the worked steps of this part.

    ``tolerance``, ``points`` and ``follow_through_credit`` may be ``None`` as a kind returns a
    part; the loader fills them from the exercise (``Exercise.generate``).
    """

    name: str
    prompt: str
    expected: Any
    answer_form: AnswerForm
    solution: list[SolutionStep] = field(default_factory=list)
    tolerance: Tolerance | None = None
    points: float | None = None
    follow_through: str | None = None
    uses: tuple[str, ...] = ()
    follow_through_credit: float | None = None
    detectors: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)


@dataclass
class Generated:
    """What a kind produces for one seed, before the prompt is rendered.

    - ``values``: placeholder name -> value for the prompt template (NumPy arrays render as LaTeX
      ``pmatrix``; numbers and strings as themselves).
    - ``expected``: the reference answer from ``quizapp.linalg`` (float ndarray; for ``choice`` and
      ``index`` an int; for ``point_on_line`` one valid point, shown in the solution).
    - ``context``: data mistake detectors and predicate answer forms need (e.g. ``Q``, ``K``, ``V``,
      ``d``; the line's coefficients).
    - ``detectors``: codes of kind-specific mistake detectors to run on wrong answers.
    - ``parts``: for a multi-part variant, its parts in order (then ``expected`` maps each part's
      name to its expected value and ``answer_form`` has type ``parts``).
    """

    values: dict[str, Any]
    expected: Any
    answer_form: AnswerForm
    solution: list[SolutionStep]
    context: dict[str, Any] = field(default_factory=dict)
    detectors: tuple[str, ...] = ()
    parts: list[Part] = field(default_factory=list)


@dataclass
class Variant:
    """One concrete instance of an exercise, fixed by ``seed``.  ``generate(spec, seed)`` is pure.

    A multi-part variant has ``parts`` (each with its own answer form, expected value, tolerance,
    points and detectors); its ``expected`` maps part names to their expected values and its
    ``answer_form`` has type ``parts``.
    """

    exercise_id: str
    seed: int
    title: str
    prompt: str  # Markdown with $...$ LaTeX, placeholders already rendered
    expected: Any
    answer_form: AnswerForm
    solution: list[SolutionStep]
    tolerance: Tolerance
    partial_credit: bool
    values: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    detectors: tuple[str, ...] = ()
    hints: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)


class KindParams(BaseModel):
    """Base class of every kind's ``params`` schema: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class Kind(ABC):
    """An exercise generator.  Subclasses set ``name`` and ``Params`` and implement ``generate``.

    ``generate`` must be deterministic given ``rng`` and must only return well-posed variants
    (resample internally until the kind's guarantees hold).
    """

    name: ClassVar[str]
    Params: ClassVar[type[KindParams]] = KindParams

    @abstractmethod
    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        """Draw one variant's numbers from ``rng`` and compute its expected answer."""

    def solve(self, params: KindParams, values: dict[str, Any]) -> Generated | None:
        """The expected answer, answer form, solution and detector data for ``values`` already
        drawn (a stored variant's), under ``params``; None when the kind computes its answer
        only while drawing (a regrade then keeps the stored answer key).  Raises what
        ``generate`` raises when the answer cannot be computed from ``values``."""
        return None
