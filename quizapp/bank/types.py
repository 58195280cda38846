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
class Generated:
    """What a kind produces for one seed, before the prompt is rendered.

    - ``values``: placeholder name -> value for the prompt template (NumPy arrays render as LaTeX
      ``pmatrix``; numbers and strings as themselves).
    - ``expected``: the reference answer from ``quizapp.linalg`` (float ndarray; for ``choice`` and
      ``index`` an int; for ``point_on_line`` one valid point, shown in the solution).
    - ``context``: data mistake detectors and predicate answer forms need (e.g. ``Q``, ``K``, ``V``,
      ``d``; the line's coefficients).
    - ``detectors``: codes of kind-specific mistake detectors to run on wrong answers.
    """

    values: dict[str, Any]
    expected: Any
    answer_form: AnswerForm
    solution: list[SolutionStep]
    context: dict[str, Any] = field(default_factory=dict)
    detectors: tuple[str, ...] = ()


@dataclass
class Variant:
    """One concrete instance of an exercise, fixed by ``seed``.  ``generate(spec, seed)`` is pure."""

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
