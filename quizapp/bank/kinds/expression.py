"""The ``expression`` kind: an instructor-written NumPy expression over random variables.

An exercise of this kind has, at the top level of its YAML file::

    variables:
      A: {matrix: [2, 2], integers: [-4, 4]}
      b: {vector: 2, integers: [-5, 5]}
    require:
      - det(A) != 0
    answer: solve(A, b)
    answer_form: {type: vector}      # optional: scalar/vector/matrix, show_shape

Variables are drawn in the order written (``quizapp.bank.schema.VariableSpec``); the draw is
repeated until every ``require`` holds, at most ``MAX_TRIES`` times (then ``RequireNeverHeld``);
``answer`` is evaluated by the safe evaluator of ``quizapp.bank.expression``.  The worked solution
lists the expression's intermediate results (each operation and call, innermost first), each
shown as math (``quizapp.bank.expression_latex``), not as code, with its value written
as the prompt asks (``quizapp.bank.formula``); ``explanation`` steps come first.  ``derived``
values are computed from each draw; ``mistakes`` are drawn apart from the answer and named by
the ``authored`` detector (``quizapp.bank.detectors``).

With ``parts:`` instead of ``answer:`` the exercise asks for several answers in order, each
part's ``answer`` an expression over the variables (and derived values) and the earlier parts'
values (its follow-through expression; see ``quizapp/bank/parts.py``).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from quizapp.bank.expression import (
    Compiled,
    ExpressionError,
    Step,
    compile_expression,
    evaluate,
    truth,
)
from quizapp.bank.expression_latex import expression_latex
from quizapp.bank.formula import latex_value, relation, rounded
from quizapp.bank.kinds import register_kind
from quizapp.bank.kinds._util import distinct
from quizapp.bank.precision import Precision, stated_precision
from quizapp.bank.schema import (
    MAX_VARIABLE_CELLS,
    MAX_VARIABLE_DIM,
    ExpressionSpec,
    MistakeSpec,
    PartSpec,
    VariableSpec,
)
from quizapp.bank.template import TemplateError, render
from quizapp.bank.types import (
    AnswerForm,
    AnswerType,
    Generated,
    Kind,
    KindParams,
    Part,
    SolutionStep,
)

#: Draws tried before a ``require`` that never holds is reported (a bound, never a hang).
MAX_TRIES = 1000
#: Intermediate results shown in the worked solution at most (the last ones, nearest the answer).
MAX_STEPS = 8


class RequireNeverHeld(ValueError):
    """No draw of the variables met a ``require`` constraint within ``MAX_TRIES`` draws."""


def _blame(exc: BaseException, *field: Any) -> BaseException:
    """Tag ``exc`` with the YAML field responsible (``("variables", name)``, ``("require", i)``,
    ``("answer",)``, ``("answer_form",)``) so that validation and ``check`` can point at its line;
    an already tagged exception keeps its field."""
    if getattr(exc, "field", None) is None:
        exc.field = tuple(field)  # type: ignore[attr-defined]  # any exception may be tagged; read with getattr
    return exc


def _generation_error(exc: Exception) -> ExpressionError:
    if isinstance(exc, ExpressionError):
        return exc
    if isinstance(exc, RecursionError):
        return ExpressionError("the expression nests too deeply")
    return ExpressionError(f"{type(exc).__name__}: {exc}")


def _dim(d: int | str, values: dict[str, Any], name: str, what: str = "matrix") -> int:
    """A dimension of the matrix or vector variable ``name``: a number, or an earlier integer
    variable from 1 to ``MAX_VARIABLE_DIM``."""
    if isinstance(d, int):
        return d
    if d not in values:
        raise ExpressionError(f"variable {name}: dimension {d!r} is not an earlier variable")
    v = np.asarray(values[d], dtype=float)
    bound = f"an integer from 1 to {MAX_VARIABLE_DIM}"
    if v.size != 1:
        raise ExpressionError(
            f"variable {name}: the {what}'s dimension {d!r} must be {bound}, but {d} is an "
            f"array of shape {v.shape}"
        )
    x = float(v.reshape(()))
    if not x.is_integer() or not 1 <= x <= MAX_VARIABLE_DIM:
        raise ExpressionError(
            f"variable {name}: the {what}'s dimension {d!r} must be {bound}, got {values[d]:g} "
            f"(a matrix has at most {MAX_VARIABLE_DIM} rows and columns)"
        )
    return int(x)


def draw_variable(
    name: str, spec: VariableSpec, values: dict[str, Any], rng: np.random.Generator
) -> Any:
    """Draw one variable: a float for a scalar, else a float ndarray of the declared shape."""
    if spec.matrix is not None:
        shape: tuple[int, ...] = (
            _dim(spec.matrix[0], values, name),
            _dim(spec.matrix[1], values, name),
        )
        if shape[0] * shape[1] > MAX_VARIABLE_CELLS:
            raise ExpressionError(
                f"variable {name}: a {shape[0]} x {shape[1]} matrix has more than "
                f"{MAX_VARIABLE_CELLS} cells"
            )
    elif spec.vector is not None:
        shape = (_dim(spec.vector, values, name, "vector"),)
    else:
        shape = ()
    if spec.integers is not None:
        lo, hi = spec.integers
        out = rng.integers(lo, hi, size=shape, endpoint=True).astype(float)
    elif spec.uniform is not None:
        a, b = spec.uniform
        out = rng.uniform(a, b, size=shape)
        if spec.decimals is not None:
            out = np.round(out, spec.decimals)
    elif spec.choice is not None:
        out = rng.choice(np.asarray(spec.choice, dtype=float), size=shape)
    else:
        try:
            out = np.asarray(spec.value, dtype=float)
        except (TypeError, ValueError):
            raise ExpressionError(
                f"variable {name}: value must be a number or a nested list"
            ) from None
        if shape and out.shape != shape:
            raise ExpressionError(f"variable {name}: value has shape {out.shape}, declared {shape}")
    out = np.asarray(out, dtype=float)
    return float(out) if out.ndim == 0 else out


def answer_form_for(expected: Any, spec: ExpressionSpec | PartSpec) -> AnswerForm:
    """The answer form: from ``answer_form`` if given (checked against the answer's shape), else
    scalar/vector/matrix by the answer's dimension, with a shape-revealing grid."""
    arr = np.asarray(expected)
    by_ndim: dict[int, AnswerType] = {0: "scalar", 1: "vector", 2: "matrix"}
    inferred = by_ndim[arr.ndim]
    form = spec.answer_form
    if form is not None and form.type is not None and form.type != inferred:
        raise ExpressionError(
            f"answer_form.type is {form.type} but the answer is a {inferred} (shape {arr.shape})"
        )
    return AnswerForm(
        type=inferred,
        shape=tuple(arr.shape),
        show_shape=form.show_shape if form else True,
        row_labels=form.row_labels if form else None,
        col_labels=form.col_labels if form else None,
    )


def _plain(value: Any) -> Any:
    """A derived value as the variables are: a float for a number, else a float array."""
    arr = np.asarray(value)
    if arr.dtype.kind == "b":
        return bool(arr) if arr.ndim == 0 else arr
    arr = arr.astype(float)
    return float(arr) if arr.ndim == 0 else arr


def _tell_apart(answer: Compiled, mistakes: list[Compiled], values: dict[str, Any]) -> int | None:
    """The index of the first named mistake whose value is not clearly different from the
    answer's (``distinct``: what every tolerance tells apart), or None."""
    try:
        right = evaluate(answer, values)
    except Exception as exc:  # noqa: BLE001 - reported at the answer's line
        raise _blame(_generation_error(exc), "answer") from exc
    for i, m in enumerate(mistakes):
        try:
            wrong = np.asarray(evaluate(m, values), dtype=float)
        except Exception as exc:  # noqa: BLE001 - reported at the mistake's line
            raise _blame(_generation_error(exc), "mistakes", i) from exc
        if not distinct(right, wrong):
            return i
    return None


def _derive(params: ExpressionSpec, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with the ``derived`` values (re)computed from the variables, in order."""
    out = {k: v for k, v in values.items() if k in params.variables}
    for name, text in params.derived.items():
        try:
            out[name] = _plain(evaluate(compile_expression(text), out))
        except Exception as exc:  # noqa: BLE001 - reported at the derived value's line
            raise _blame(_generation_error(exc), "derived", name) from exc
    return out


def solution_steps(
    trace: list[Step],
    answer: Compiled,
    expected: Any,
    form: AnswerForm,
    precision: Precision | None,
    values: dict[str, Any] | None = None,
) -> list[SolutionStep]:
    """The computed part of an expression's worked solution: each intermediate result
    (innermost first, at most ``MAX_STEPS``, the last ones), named by its formula and written
    with its value, then the answer.  Formulas as mathematics (``expression_latex`` on
    ``values``, the variables, for the shapes: ``q @ k`` of vectors is ``q \\cdot k``); values as
    the prompt asks (``quizapp.bank.formula``): exact prompts as integers and fractions, "N
    decimal places" with N places, "N significant figures" with N figures; a vector on the left
    of a matrix product (``x @ E``) as a row.  A 0-based index (``argmax(s)``, NumPy's) is never
    shown: a student counts positions from 1, as ``argmax(s) + 1`` is written."""
    steps: list[SolutionStep] = []
    seen: set[str] = set()
    for step in trace:
        if step.text in seen or step.text == answer.text or _zero_based(step.text):
            continue
        seen.add(step.text)
        formula = expression_latex(step.text, values)
        note = f" ({step.note})" if step.note else ""
        row = _row_vector(step.text, values)
        steps.append(
            SolutionStep(
                title=f"${formula}$",
                text=f"${formula} {relation(step.value, precision)} "
                f"{latex_value(step.value, precision, row=row)}${note}.",
                value=rounded(step.value, precision, final=False),
                heatmap=step.heatmap,
            )
        )
    steps = steps[-MAX_STEPS:]
    steps.append(
        SolutionStep(
            title="Answer",
            text=f"${expression_latex(answer.text, values)} "
            f"{relation(expected, precision, final=True)} "
            f"{latex_value(expected, precision, final=True, row=_row_vector(answer.text, values))}"
            f"${_position_note(answer.text, expected, values)}.",
            value=rounded(expected, precision, final=True),
            row_labels=form.row_labels,
            col_labels=form.col_labels,
        )
    )
    return steps


def _zero_based(text: str) -> bool:
    """Whether ``text`` is a bare ``argmax(...)`` / ``argmin(...)``: NumPy's 0-based index."""
    try:
        node = compile_expression(text).tree.body
    except ExpressionError:  # not an expression: written as text, no notation to choose
        return False
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("argmax", "argmin")
    )


def _row_vector(text: str, values: dict[str, Any] | None) -> bool:
    """Whether ``text`` is a vector times a matrix, ``x @ E``: a row vector (1 x n), as the
    prompts write ``\\mathbf{x}E``."""
    if values is None:
        return False
    try:
        node = compile_expression(text).tree.body
    except ExpressionError:  # not an expression: written as text, no notation to choose
        return False
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)):
        return False
    try:
        left = evaluate(compile_expression(ast.unparse(node.left)), values)
        right = evaluate(compile_expression(ast.unparse(node.right)), values)
    except Exception:  # noqa: BLE001 - the shape is unknown: written as a column
        return False
    return bool(np.ndim(left) == 1 and np.ndim(right) == 2)


def _position_note(text: str, expected: Any, values: dict[str, Any] | None) -> str:
    """For an answer ``argmax(x) + 1`` (``argmin``): ": the largest entry of x is entry 3"."""
    try:
        node = compile_expression(text).tree.body
    except ExpressionError:  # not an expression: written as text, no notation to choose
        return ""
    if not (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and _zero_based(ast.unparse(node.left))
        and isinstance(node.right, ast.Constant)
        and node.right.value == 1
    ):
        return ""
    call = node.left
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    if call.keywords or len(call.args) != 1 or np.ndim(expected) != 0:
        return ""
    word = "largest" if call.func.id == "argmax" else "smallest"
    vector = expression_latex(ast.unparse(call.args[0]), values)
    return f": the {word} entry of ${vector}$ is entry {int(round(float(expected)))}"


def _explanation(
    params: ExpressionSpec | PartSpec,
    values: dict[str, Any],
    where: tuple[Any, ...] = ("explanation",),
) -> list[SolutionStep]:
    """The author's ``explanation`` steps (of the exercise or of one part, at ``where``), their
    texts rendered on ``values``."""
    explained = []
    for i, step in enumerate(params.explanation):
        try:
            explained.append(SolutionStep(step.title, render(step.text, values)))
        except TemplateError as exc:
            raise _blame(exc, *where, i) from exc
    return explained


def _named_mistakes(
    mistakes: list[MistakeSpec], expected: Any, values: dict[str, Any], where: tuple[Any, ...]
) -> list[tuple[str, np.ndarray, str]]:
    """``(code, value, message)`` of every named mistake (of the exercise or of one part, at
    ``where``) whose value on ``values`` differs from ``expected``: a mistake that gives the
    answer is not named."""
    named = []
    for i, m in enumerate(mistakes):
        try:
            wrong = np.asarray(evaluate(compile_expression(m.answer), values), float)
            message = render(m.message, values)
        except TemplateError as exc:
            raise _blame(exc, *where, i) from exc
        except Exception as exc:  # noqa: BLE001 - reported at the mistake's line
            raise _blame(_generation_error(exc), *where, i) from exc
        if distinct(expected, wrong):
            named.append((m.code, wrong, message))
    return named


@register_kind
class ExpressionKind(Kind):
    """Variables drawn at random, constraints, and an answer expression (see module docs)."""

    name = "expression"
    #: Revision 2: a draw whose named mistakes give one answer is drawn again.
    revision = 2
    redraw_coinciding = 2
    Params = ExpressionSpec

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        """Draw the variables until every ``require`` holds; evaluate ``answer``.

        Raises ``RequireNeverHeld`` after ``MAX_TRIES`` failed draws and ``ExpressionError`` when
        the answer cannot be evaluated, is not finite, not numeric or more than 2-D.
        """
        assert isinstance(params, ExpressionSpec)
        requires: list[Compiled] = [compile_expression(r) for r in params.require]
        # Named mistakes belong to a single answer (the schema refuses them beside parts:).
        answer = compile_expression(params.answer) if params.answer is not None else None
        mistakes = [compile_expression(m.answer) for m in params.mistakes]
        failed: int | None = None
        alike: int | None = None  # a mistake whose value did not differ from the answer
        values: dict[str, Any] = {}
        for _ in range(MAX_TRIES):
            values = {}
            for name, spec in params.variables.items():
                try:
                    values[name] = draw_variable(name, spec, values, rng)
                except Exception as exc:  # noqa: BLE001 - reported at the variable's line
                    raise _blame(_generation_error(exc), "variables", name) from exc
            if params.derived:  # computed from the draw: no randomness of their own
                values = _derive(params, values)
            failed = alike = None
            for i, r in enumerate(requires):
                try:
                    held = truth(r, values)
                except Exception as exc:  # noqa: BLE001 - reported at the constraint's line
                    raise _blame(_generation_error(exc), "require", i) from exc
                if not held:
                    failed = i
                    break
            if failed is None and mistakes and answer is not None:
                # Only an exercise with named mistakes draws again for them, so the draws of
                # the others are as they always were.
                alike = _tell_apart(answer, mistakes, values)
            if failed is None and alike is None:
                break
        if alike is not None:
            raise _blame(
                RequireNeverHeld(
                    f"the mistake {params.mistakes[alike].code!r} gave the right answer in every "
                    f"one of {MAX_TRIES} draws of the variables; add a require that tells them "
                    "apart"
                ),
                "mistakes",
                alike,
            )
        if failed is not None:
            raise _blame(
                RequireNeverHeld(
                    f"require {requires[failed].text!r} never held in {MAX_TRIES} draws of the "
                    "variables; loosen the constraint or change the variables' ranges"
                ),
                "require",
                failed,
            )
        return self._solve(params, values)

    def solve(self, params: KindParams, values: dict[str, Any]) -> Generated:
        """The answer of ``params`` evaluated on ``values`` (a stored variant's variables): how a
        regrade applies a corrected ``answer`` (or corrected parts) to the numbers a student saw.
        Raises ``ExpressionError`` when the answer needs a variable ``values`` lacks, or fails."""
        assert isinstance(params, ExpressionSpec)
        return self._solve(params, dict(values))

    def _solve(self, params: ExpressionSpec, values: dict[str, Any]) -> Generated:
        """The variant of ``values`` (its ``derived`` values recomputed from the variables, so a
        regrade on stored values gets them too): one answer, or every part."""
        if params.derived:
            values = _derive(params, values)
        if params.parts:
            return self._parts(params, values)
        assert params.answer is not None
        return self._answer(params, compile_expression(params.answer), values)

    def _parts(self, params: ExpressionSpec, values: dict[str, Any]) -> Generated:
        """Evaluate every part in order, each over the variables (and derived values) and the
        earlier parts' true values: the parts (expected value, answer form, worked steps,
        follow-through expression, detectors) of a multi-part variant.  Each part's steps write
        values as the part's prompt asks (else as the exercise's prompt does)."""
        from quizapp.bank.parts import detector_context, flat_solution

        env = dict(values)
        parts: list[Part] = []
        for i, spec in enumerate(params.parts):
            compiled = compile_expression(spec.answer)
            expected, form, steps = self._evaluate(
                compiled,
                env,
                spec,
                stated_precision(spec.prompt) or params.precision,
                ("parts", i, "answer"),
                ("parts", i, "answer_form"),
            )
            earlier = {p.name for p in parts}
            uses = tuple(sorted(compiled.names & earlier))
            context: dict[str, Any] = {}
            detectors: tuple[str, ...] = ()
            if spec.detectors:
                try:
                    context, detectors = detector_context(spec.detectors, env, expected)
                except Exception as exc:  # noqa: BLE001 - reported at the part's detectors
                    raise _blame(_generation_error(exc), "parts", i, "detectors") from exc
            if spec.mistakes:
                context = {
                    **context,
                    "authored_mistakes": _named_mistakes(
                        spec.mistakes, expected, env, ("parts", i, "mistakes")
                    ),
                }
                detectors = (*detectors, "authored")
            if spec.explanation:
                steps = _explanation(spec, env, ("parts", i, "explanation")) + steps
            parts.append(
                Part(
                    name=spec.name,
                    prompt=spec.prompt,
                    expected=expected,
                    answer_form=form,
                    solution=steps,
                    tolerance=spec.tolerance.to_tolerance() if spec.tolerance else None,
                    points=None if spec.points is None else float(spec.points),
                    follow_through=compiled.text if uses else None,
                    uses=uses,
                    follow_through_credit=spec.follow_through_credit,
                    detectors=detectors,
                    context=context,
                    hints=list(spec.hints),
                )
            )
            env[spec.name] = expected
        return Generated(
            values=values,
            expected={p.name: p.expected for p in parts},
            answer_form=AnswerForm(type="parts"),
            solution=flat_solution(parts),
            context=dict(values),
            parts=parts,
        )

    def _evaluate(
        self,
        answer: Compiled,
        values: dict[str, Any],
        spec: ExpressionSpec | PartSpec,
        precision: Precision | None,
        answer_field: tuple[Any, ...],
        form_field: tuple[Any, ...],
    ) -> tuple[Any, AnswerForm, list[SolutionStep]]:
        """Evaluate ``answer`` on ``values``: the expected value, its answer form and the worked
        steps (values written at ``precision``, see :func:`solution_steps`).  Failures are
        blamed on ``answer_field`` / ``form_field``."""
        trace: list[Step] = []
        try:
            value = evaluate(answer, values, trace=trace)
            arr = np.asarray(value)
            if arr.dtype.kind == "b":
                raise ExpressionError(
                    f"the answer {answer.text!r} is true/false, not a number (write 1 * (...) "
                    "for a 0/1 answer)"
                )
            if arr.ndim > 2:
                raise ExpressionError(
                    f"the answer has shape {arr.shape}; at most a matrix is allowed"
                )
            if arr.size == 0:
                raise ExpressionError(
                    f"the answer {answer.text!r} is empty (shape {arr.shape}): no student could "
                    "give it"
                )
            if arr.ndim and (max(arr.shape) > MAX_VARIABLE_DIM or arr.size > MAX_VARIABLE_CELLS):
                raise ExpressionError(
                    f"the answer is a matrix of shape {arr.shape}; an answer has at most "
                    f"{MAX_VARIABLE_DIM} rows and columns ({MAX_VARIABLE_CELLS} entries), what a "
                    "student can type"
                )
        except Exception as exc:  # noqa: BLE001 - reported at the answer's line
            raise _blame(_generation_error(exc), *answer_field) from exc
        expected: Any = float(arr) if arr.ndim == 0 else arr.astype(float)
        try:
            form = answer_form_for(expected, spec)
        except ExpressionError as exc:
            raise _blame(exc, *form_field) from exc
        return expected, form, solution_steps(trace, answer, expected, form, precision, values)

    def _answer(
        self, params: ExpressionSpec, answer: Compiled, values: dict[str, Any]
    ) -> Generated:
        """Evaluate ``answer`` on ``values``: expected value, answer form, worked solution, and
        the named mistakes' values and messages."""
        expected, form, steps = self._evaluate(
            answer, values, params, params.precision, ("answer",), ("answer_form",)
        )
        explained = _explanation(params, values)
        context = dict(values)
        context["answer_expression"] = answer.text
        detectors: tuple[str, ...] = ()
        if params.mistakes:
            context["authored_mistakes"] = _named_mistakes(
                params.mistakes, expected, values, ("mistakes",)
            )
            detectors = ("authored",)
        return Generated(
            values=values,
            expected=expected,
            answer_form=form,
            solution=explained + steps,
            context=context,
            detectors=detectors,
        )
