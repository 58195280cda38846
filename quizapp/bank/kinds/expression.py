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
lists the expression's intermediate results (each operation and call, innermost first).
"""

from __future__ import annotations

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
from quizapp.bank.kinds import register_kind
from quizapp.bank.schema import ExpressionSpec, VariableSpec
from quizapp.bank.template import format_number
from quizapp.bank.types import AnswerForm, Generated, Kind, KindParams, SolutionStep

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
        exc.field = tuple(field)  # type: ignore[attr-defined]
    return exc


def _generation_error(exc: Exception) -> ExpressionError:
    if isinstance(exc, ExpressionError):
        return exc
    if isinstance(exc, RecursionError):
        return ExpressionError("the expression nests too deeply")
    return ExpressionError(f"{type(exc).__name__}: {exc}")


def _dim(d: int | str, values: dict[str, Any], name: str) -> int:
    if isinstance(d, int):
        return d
    if d not in values:
        raise ExpressionError(f"variable {name}: dimension {d!r} is not an earlier variable")
    v = np.asarray(values[d], dtype=float)
    if v.size != 1:
        raise ExpressionError(
            f"variable {name}: dimension {d!r} must be an integer from 1 to 12, but {d} is an "
            f"array of shape {v.shape}"
        )
    if v.size != 1 or not float(v.reshape(())).is_integer() or not 1 <= float(v.reshape(())) <= 12:
        raise ExpressionError(
            f"variable {name}: dimension {d!r} must be an integer from 1 to 12, got {values[d]}"
        )
    return int(v.reshape(()))


def draw_variable(
    name: str, spec: VariableSpec, values: dict[str, Any], rng: np.random.Generator
) -> Any:
    """Draw one variable: a float for a scalar, else a float ndarray of the declared shape."""
    if spec.matrix is not None:
        shape: tuple[int, ...] = (
            _dim(spec.matrix[0], values, name),
            _dim(spec.matrix[1], values, name),
        )
    elif spec.vector is not None:
        shape = (_dim(spec.vector, values, name),)
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


def answer_form_for(expected: Any, spec: ExpressionSpec) -> AnswerForm:
    """The answer form: from ``answer_form`` if given (checked against the answer's shape), else
    scalar/vector/matrix by the answer's dimension, with a shape-revealing grid."""
    arr = np.asarray(expected)
    inferred = {0: "scalar", 1: "vector", 2: "matrix"}[arr.ndim]
    form = spec.answer_form
    if form is not None and form.type is not None and form.type != inferred:
        raise ExpressionError(
            f"answer_form.type is {form.type} but the answer is a {inferred} (shape {arr.shape})"
        )
    return AnswerForm(
        type=inferred,  # type: ignore[arg-type]
        shape=tuple(arr.shape),
        show_shape=form.show_shape if form else True,
        row_labels=form.row_labels if form else None,
        col_labels=form.col_labels if form else None,
    )


def _is_number(value: Any) -> bool:
    return np.asarray(value).ndim == 0


@register_kind
class ExpressionKind(Kind):
    """Variables drawn at random, constraints, and an answer expression (see module docs)."""

    name = "expression"
    Params = ExpressionSpec

    def generate(self, params: KindParams, rng: np.random.Generator) -> Generated:
        """Draw the variables until every ``require`` holds; evaluate ``answer``.

        Raises ``RequireNeverHeld`` after ``MAX_TRIES`` failed draws and ``ExpressionError`` when
        the answer cannot be evaluated, is not finite, not numeric or more than 2-D.
        """
        assert isinstance(params, ExpressionSpec)
        requires: list[Compiled] = [compile_expression(r) for r in params.require]
        answer = compile_expression(params.answer)
        failed: int | None = None
        values: dict[str, Any] = {}
        for _ in range(MAX_TRIES):
            values = {}
            for name, spec in params.variables.items():
                try:
                    values[name] = draw_variable(name, spec, values, rng)
                except Exception as exc:  # noqa: BLE001 - reported at the variable's line
                    raise _blame(_generation_error(exc), "variables", name) from exc
            failed = None
            for i, r in enumerate(requires):
                try:
                    held = truth(r, values)
                except Exception as exc:  # noqa: BLE001 - reported at the constraint's line
                    raise _blame(_generation_error(exc), "require", i) from exc
                if not held:
                    failed = i
                    break
            if failed is None:
                break
        if failed is not None:
            raise _blame(
                RequireNeverHeld(
                    f"require {requires[failed].text!r} never held in {MAX_TRIES} draws of the "
                    "variables; loosen the constraint or change the variables' ranges"
                ),
                "require",
                failed,
            )
        return self._answer(params, answer, values)

    def solve(self, params: KindParams, values: dict[str, Any]) -> Generated:
        """The answer of ``params`` evaluated on ``values`` (a stored variant's variables): how a
        regrade applies a corrected ``answer`` to the numbers a student saw.  Raises
        ``ExpressionError`` when the answer needs a variable ``values`` lacks, or fails."""
        assert isinstance(params, ExpressionSpec)
        return self._answer(params, compile_expression(params.answer), dict(values))

    def _answer(
        self, params: ExpressionSpec, answer: Compiled, values: dict[str, Any]
    ) -> Generated:
        """Evaluate ``answer`` on ``values``: expected value, answer form, worked solution."""
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
        except Exception as exc:  # noqa: BLE001 - reported at the answer's line
            raise _blame(_generation_error(exc), "answer") from exc
        expected: Any = float(arr) if arr.ndim == 0 else arr.astype(float)
        try:
            form = answer_form_for(expected, params)
        except ExpressionError as exc:
            raise _blame(exc, "answer_form") from exc

        steps: list[SolutionStep] = []
        seen: set[str] = set()
        for step in trace:
            if step.text in seen or step.text == answer.text:
                continue
            seen.add(step.text)
            note = f" ({step.note})" if step.note else ""
            steps.append(
                SolutionStep(
                    title=f"`{step.text}`",
                    text=f"Compute `{step.text}`{note}"
                    + (f": ${format_number(step.value)}$." if _is_number(step.value) else ":"),
                    value=step.value,
                    heatmap=step.heatmap,
                )
            )
        steps = steps[-MAX_STEPS:]
        steps.append(
            SolutionStep(
                title="Answer",
                text=f"The answer is `{answer.text}`"
                + (f": ${format_number(expected)}$." if _is_number(expected) else ":"),
                value=expected,
                row_labels=form.row_labels,
                col_labels=form.col_labels,
            )
        )
        context = dict(values)
        context["answer_expression"] = answer.text
        return Generated(
            values=values,
            expected=expected,
            answer_form=form,
            solution=steps,
            context=context,
        )
