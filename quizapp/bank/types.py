"""Value types of the exercise bank: answer forms, worked-solution steps, variants, kinds.

Pure: no Flask, no database.  These are the contract between the bank's infrastructure
(loading, schema, templates, CLI), the exercise kinds (``quizapp/bank/kinds/``) and the web layer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
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


#: The draw revision of every kind before draw revisions existed (release 0.1, variants not yet
#: stored): what ``Kind.params_at`` returns the YAML's own params for.
FIRST_REVISION = 1


class Kind(ABC):
    """An exercise generator.  Subclasses set ``name`` and ``Params`` and implement ``generate``.

    ``generate`` must be deterministic given ``rng`` and must only return well-posed variants
    (resample internally until the kind's guarantees hold).
    """

    name: ClassVar[str]
    Params: ClassVar[type[KindParams]] = KindParams
    #: The draw revision new variants use.  A kind raises it when it changes what a YAML text
    #: that leaves a param unset means (a better default: more mistakes told apart, fewer
    #: degenerate variants) and says so in :meth:`params_at`.  Stored variants never change
    #: (they are drawn once); the revision lets a draw of an earlier release be repeated exactly:
    #: the upgrade that stores the variants of databases made before variants were stored draws
    #: at :data:`FIRST_REVISION` (``migrations/versions/0002_stored_variants.py``).
    revision: ClassVar[int] = FIRST_REVISION
    #: For each revision after the first, the defaults it gives the params a YAML text leaves
    #: unset, as a function of the validated params (a default may apply to some settings only,
    #: e.g. 2 or more heads).  Applied in order up to the revision asked for (:meth:`params_at`).
    revision_defaults: ClassVar[dict[int, Callable[[Any], dict[str, Any]]]] = {}
    #: The draw revision from which a draw whose named mistakes give one answer is drawn again
    #: (``quizapp.bank.loader.Exercise.generate``; None: never).  Issue 16: every named mistake
    #: distinguishable in every variant.
    redraw_coinciding: ClassVar[int | None] = None

    @abstractmethod
    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        """Draw one variant's numbers from ``rng`` and compute its expected answer."""

    def params_at(self, params: KindParams, revision: int) -> KindParams:
        """The params a YAML text means at draw ``revision`` (``FIRST_REVISION`` up to
        :attr:`revision`): ``params`` with the :attr:`revision_defaults` of every revision up to
        ``revision`` for the fields the text leaves unset (``params.model_fields_set``), validated
        again.  At ``FIRST_REVISION``: ``params`` as written."""
        p = params if isinstance(params, self.Params) else self.Params.model_validate(params)
        update: dict[str, Any] = {}
        for rev in sorted(self.revision_defaults):
            if rev <= revision:
                defaults = self.revision_defaults[rev](p)
                update.update({k: v for k, v in defaults.items() if k not in p.model_fields_set})
        if not update:
            return p
        return self.Params.model_validate({**p.model_dump(exclude_unset=True), **update})

    def authoring_problems(self, params: KindParams) -> list[tuple[str, str]]:
        """The rules a file being written or synced must meet beyond its params' schema, as
        ``(param, message)`` pairs (``quizapp validate`` reports each at that param's line).
        A text already stored is never refused for them (its variants exist): they are checked
        only while authoring (``quizapp.bank.validate.check_exercise``).  Default: none."""
        return []

    def solve(self, params: KindParams, values: dict[str, Any]) -> Generated | None:
        """The expected answer, answer form, solution and detector data for ``values`` already
        drawn (a stored variant's), under ``params``; None when the kind computes its answer
        only while drawing (a regrade then keeps the stored answer key).  Raises what
        ``generate`` raises when the answer cannot be computed from ``values``."""
        return None
