"""Static checks of one exercise file's data, each problem located at file:line:column.

``check_exercise`` runs, in order, and collects every problem it can find without stopping at
the first: the shape of the file (a mapping), the kind (known, with a suggestion), the pydantic
schema (unknown keys with "did you mean", wrong types naming the field), the kind's ``params`` (or
for ``expression`` its variables, constraints and answer, compiled by the safe evaluator), the
concepts, and the templates (syntax, and every placeholder names a value the kind provides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import ValidationError

from quizapp.bank.concepts import CONCEPTS
from quizapp.bank.expression import FUNCTIONS, ExpressionError, compile_expression
from quizapp.bank.kinds import all_kinds
from quizapp.bank.precision import (
    stated_precision,
)
from quizapp.bank.schema import (
    NAME_RE,
    ExerciseSpec,
    ExpressionSpec,
    pydantic_errors,
    suggest,
)
from quizapp.bank.template import TemplateError, placeholder_line, placeholders, render
from quizapp.bank.types import Generated, Kind, KindParams
from quizapp.bank.validate_places import _at, _line_in, _part_items, part_points_total
from quizapp.bank.validate_precision import (
    _check_precision,
    _check_seed_precision,
)
from quizapp.bank.yamlio import BankError, Located, Mark

EXPRESSION_FIELDS = (
    "variables",
    "require",
    "answer",
    "answer_form",
    "mistakes",
    "derived",
    "explanation",
    "parts",
)
#: Seeds every exercise must generate (and render) at validation time (and so at every load,
#: which is why it is one seed; ``quizapp check`` samples many).
VALIDATE_SEEDS = (0,)


@dataclass
class Checked:
    """A valid exercise's parts: the spec, the kind and its validated params."""

    spec: ExerciseSpec
    kind: Kind
    params: KindParams


def check_exercise(
    data: Any, located: Located, file: str, *, authoring: bool = True
) -> tuple[Checked | None, list[BankError]]:
    """Check one exercise file's parsed YAML.  Returns the checked parts (``None`` if there was
    any problem) and the list of problems.

    ``authoring`` (a file being written or synced) adds the rules that a text already stored in
    the database must not be refused for once its variants exist: the prompt's stated precision
    and the tolerance agree (:mod:`quizapp.bank.precision`), and the kind's own
    :meth:`~quizapp.bank.types.Kind.authoring_problems` (e.g. multi-head sizes that agree)."""
    errors: list[BankError] = []
    if not isinstance(data, dict):
        what = type(data).__name__ if data is not None else "nothing"
        return None, [
            _at(
                file,
                located.start,
                f"an exercise file is a mapping of fields (title:, kind:, prompt:, ...), got {what}",
            )
        ]
    kinds = all_kinds()
    kind: Kind | None = None
    raw_kind = data.get("kind")
    if isinstance(raw_kind, str):
        if raw_kind in kinds:
            kind = kinds[raw_kind]
        else:
            best = suggest(raw_kind, sorted(kinds))
            msg = f"unknown kind {raw_kind!r}" + (
                f": did you mean {best!r}?"
                if best
                else f" (known kinds: {', '.join(sorted(kinds))})"
            )
            errors.append(_at(file, located.values["kind"], msg))
    spec: ExerciseSpec | None = None
    try:
        spec = ExerciseSpec.model_validate(data)
    except ValidationError as exc:
        errors.extend(
            e
            for e in pydantic_errors(exc, ExerciseSpec, located, file)
            if not (kind is None and e.message.startswith("kind:"))
        )
    params: KindParams | None = None
    if kind is not None:
        if kind.name == "expression":
            params = _check_expression(data, located, file, errors)
        else:
            for key in EXPRESSION_FIELDS:
                if key in data:
                    errors.append(
                        _at(
                            file,
                            located.keys[key],
                            f"{key!r} is only for kind: expression (kind {kind.name!r} takes params:)",
                        )
                    )
            try:
                params = kind.Params.model_validate(data.get("params") or {})
            except ValidationError as exc:
                errors.extend(
                    pydantic_errors(
                        exc, kind.Params, located, file, prefix=("params",), label="params"
                    )
                )
    if "follow_through_credit" in data and params is not None:
        if not (getattr(params, "parts", None) or getattr(params, "steps", False)):
            errors.append(
                _at(
                    file,
                    located.keys["follow_through_credit"],
                    "follow_through_credit: only for an exercise with parts (parts:, or "
                    "params: {steps: true} for the attention kinds)",
                )
            )
    if isinstance(data.get("concepts"), list):
        errors.extend(_check_concepts(data["concepts"], located, file))
    if authoring and spec is not None:
        errors.extend(_check_precision(spec, data, located, file))
    if authoring and kind is not None and params is not None:
        for name, message in kind.authoring_problems(params):
            mark, _found = located.find(("params", name))
            errors.append(_at(file, mark, f"params.{name}: {message}"))
    # Seed 0 is generated once: the placeholder check and the generation check share it (the
    # kinds are pure functions of params and seed, so a second draw would be the same variant).
    generated: dict[int, Generated] = {}
    errors.extend(
        _check_templates(data, kind, params, located, file, generate_ok=not errors, memo=generated)
    )
    if not errors and kind is not None and params is not None:
        errors.extend(_check_generation(data, kind, params, located, file, memo=generated))
    if authoring and not errors and spec is not None and kind is not None and params is not None:
        errors.extend(_check_seed_precision(data, spec, kind, params, located, file))
    if errors or spec is None or kind is None or params is None:
        return None, sorted(errors, key=BankError.sort_key)
    return Checked(part_points_total(spec), kind, params), []


#: The expression fields that belong to one answer, refused beside ``parts:`` (each part has its
#: own), with what to do instead.
_ONE_ANSWER_FIELDS = {
    "answer_form": "with parts:, give each part its own answer_form",
    "mistakes": "name the mistakes of one answer; with parts:, give a part its own mistakes: "
    "(or detectors:)",
    "explanation": "heads the worked solution of one answer; with parts:, give a part its own "
    "explanation:",
}


def _check_expression(
    data: dict[str, Any], located: Located, file: str, errors: list[BankError]
) -> ExpressionSpec | None:
    """Check the expression kind's fields from the raw data, so that problems independent of a
    schema error elsewhere (a bad expression, a bad variable name) are reported too."""
    ok = True
    if "params" in data:
        errors.append(
            _at(
                file,
                located.keys["params"],
                "kind expression takes variables/require/answer, not params",
            )
        )
    if "answer" not in data and "parts" not in data:
        errors.append(_at(file, located.start, "kind expression needs an 'answer:' expression"))
        ok = False
    if "answer" in data and "parts" in data:
        errors.append(
            _at(
                file,
                located.keys["parts"],
                "give either answer: or parts:, not both (answer: is at line "
                f"{located.keys['answer'].line}; a multi-part exercise gives each part its answer)",
            )
        )
        ok = False
    for field, message in _ONE_ANSWER_FIELDS.items():
        if "parts" in data and field in data:
            errors.append(_at(file, located.keys[field], f"{field}: {message}"))
            ok = False
    raw_vars = data.get("variables")
    var_names = [n for n in raw_vars if isinstance(n, str)] if isinstance(raw_vars, dict) else []
    var_loc = located.children.get("variables")
    defined: list[str] = []
    for name in var_names:
        mark = var_loc.keys.get(name, located.start) if var_loc else located.start
        if not NAME_RE.match(name) or name.startswith("_"):
            errors.append(
                _at(file, mark, f"variables: {name!r} is not a valid name (letters, digits, _)")
            )
            ok = False
        elif name in FUNCTIONS or name in ("pi", "e"):
            errors.append(
                _at(file, mark, f"variables: {name!r} is the name of a function or constant")
            )
            ok = False
        var = raw_vars[name] if isinstance(raw_vars, dict) else None
        dims: list[Any] = []
        if isinstance(var, dict):
            if isinstance(var.get("matrix"), list):
                dims += var["matrix"]
            if "vector" in var:
                dims.append(var["vector"])
        for d in dims:
            if isinstance(d, str) and d not in defined:
                errors.append(
                    _at(
                        file,
                        mark,
                        f"variables: {name}'s dimension {d!r} must be an earlier variable",
                    )
                )
                ok = False
        defined.append(name)
    names = set(var_names)
    raw_derived = data.get("derived")
    derived_loc = located.children.get("derived")
    derived_exprs: list[tuple[str, Any, Mark, set[str]]] = []
    if isinstance(raw_derived, dict):
        for name, text in raw_derived.items():
            mark = derived_loc.keys.get(name, located.start) if derived_loc else located.start
            if not isinstance(name, str) or not NAME_RE.match(name) or name.startswith("_"):
                errors.append(_at(file, mark, f"derived: {name!r} is not a valid name"))
                ok = False
                continue
            if name in names or name in FUNCTIONS or name in ("pi", "e"):
                errors.append(
                    _at(
                        file, mark, f"derived: {name!r} is already a variable, function or constant"
                    )
                )
                ok = False
                continue
            value_mark = derived_loc.values.get(name, mark) if derived_loc else mark
            derived_exprs.append((f"derived.{name}", text, value_mark, set(names)))
            names.add(name)
    exprs: list[tuple[str, Any, Mark]] = []
    if "answer" in data:
        exprs.append(("answer", data["answer"], located.values["answer"]))
    raw_req = data.get("require")
    req_loc = located.children.get("require")
    if isinstance(raw_req, str):
        exprs.append(("require", raw_req, located.values["require"]))
    elif isinstance(raw_req, list):
        for i, text in enumerate(raw_req):
            mark = (
                req_loc.values.get(i, located.values["require"])
                if req_loc
                else located.values["require"]
            )
            exprs.append(("require", text, mark))
    raw_mistakes = data.get("mistakes")
    mistakes_loc = located.children.get("mistakes")
    if isinstance(raw_mistakes, list):
        for i, item in enumerate(raw_mistakes):
            here = mistakes_loc.children.get(i) if mistakes_loc else None
            if isinstance(item, dict) and "answer" in item:
                mark = (
                    here.values.get("answer", located.start) if here else located.keys["mistakes"]
                )
                exprs.append((f"mistakes[{i + 1}].answer", item["answer"], mark))
    part_exprs, part_names = _part_expressions(data, located)
    # each expression with the names it may use: a derived value the variables and earlier
    # derived values; a part's answer those and the parts in its scope
    scoped = [(label, text, mark, names) for label, text, mark in exprs] + derived_exprs
    scoped += [(label, text, mark, names | set(scope)) for label, text, mark, scope in part_exprs]
    reads: dict[str, set[str]] = {}
    for label, text, mark, allowed in scoped:
        if (
            isinstance(text, (int, float))
            and not isinstance(text, bool)
            and (label == "answer" or label.endswith("].answer"))
        ):
            text = str(text)
        if not isinstance(text, str):
            continue  # a wrong type, reported by the schema
        try:
            compiled = compile_expression(text)
        except ExpressionError as exc:
            errors.append(_at(file, mark, f"{label}: {exc.message} in {text!r}"))
            ok = False
            continue
        reads[label] = set(compiled.names)
        if isinstance(raw_vars, dict) or raw_vars is None:
            for u in sorted(compiled.names - allowed):
                later = " (a derived value may use only the variables and earlier ones)"
                best = suggest(u, sorted(allowed | set(FUNCTIONS)))
                hint = (
                    later
                    if u in names
                    else f": did you mean {best!r}?"
                    if best
                    else f" (variables: {', '.join(sorted(allowed)) or 'none'})"
                )
                errors.append(_at(file, mark, f"{label}: unknown name {u!r}{hint}"))
                ok = False
    if part_names:
        part_errors = _check_parts(data, located, file, part_names, reads, names)
        errors.extend(part_errors)
        ok = ok and not part_errors
    fields = {k: data[k] for k in EXPRESSION_FIELDS if k in data}
    if isinstance(data.get("prompt"), str):
        # not a YAML field: the worked solution writes values as the prompt asks for them
        fields["precision"] = stated_precision(data["prompt"])
    try:
        spec = ExpressionSpec.model_validate(fields)
    except ValidationError as exc:
        # The same problems were reported by ExerciseSpec or the checks above; when nothing was,
        # they are reported here, so a file is never refused without a message.
        if not errors:
            errors.extend(pydantic_errors(exc, ExpressionSpec, located, file))
        return None
    return spec if ok else None


def _part_expressions(
    data: dict[str, Any], located: Located
) -> tuple[list[tuple[str, Any, Mark, list[str]]], list[tuple[int, str, Mark]]]:
    """The expressions of ``parts:`` (each part's answer: it may name any part, the order is
    checked by :func:`_check_parts`; its detectors' inputs: the earlier parts and itself are
    not allowed) as (label, text, mark, part names in scope), and the parts' (index, name, mark
    of the name)."""
    from quizapp.bank.parts import detector_expressions

    exprs: list[tuple[str, Any, Mark, list[str]]] = []
    names: list[tuple[int, str, Mark]] = []
    items = _part_items(data, located)
    all_names = [str(item.get("name")) for _, item, _ in items if isinstance(item.get("name"), str)]
    for i, item, here in items:
        name = item.get("name")
        if isinstance(name, str):
            names.append((i, name, here.values.get("name", here.start)))
        if "answer" in item:
            mark = here.values.get("answer", here.start)
            exprs.append((f"parts[{i + 1}].answer", item["answer"], mark, all_names))
        earlier = (
            [n for _, n, _ in names[:-1]] if isinstance(name, str) else [n for _, n, _ in names]
        )
        detectors = item.get("detectors")
        if isinstance(detectors, dict):
            mark = here.values.get("detectors", here.start)
            for label, text in detector_expressions(detectors):
                exprs.append((f"parts[{i + 1}].detectors.{label}", text, mark, earlier))
        mistakes, mistakes_loc = item.get("mistakes"), here.children.get("mistakes")
        if isinstance(mistakes, list):
            for j, mistake in enumerate(mistakes):
                at = mistakes_loc.children.get(j) if mistakes_loc else None
                if isinstance(mistake, dict) and "answer" in mistake:
                    mark = at.values.get("answer", here.start) if at else here.start
                    label = f"parts[{i + 1}].mistakes[{j + 1}].answer"
                    exprs.append((label, mistake["answer"], mark, earlier))
    return exprs, names


def _check_parts(
    data: dict[str, Any],
    located: Located,
    file: str,
    part_names: list[tuple[int, str, Mark]],
    reads: dict[str, set[str]],
    variables: set[str],
) -> list[BankError]:
    """The order of ``parts:`` (no name twice, none named like a variable, each part using only
    earlier parts, no cycle) and their points (:func:`_check_part_points`), each problem at its
    line."""
    from quizapp.bank.parts import dependency_problems

    items = {i: (item, here) for i, item, here in _part_items(data, located)}
    indexes = [i for i, _, _ in part_names]
    names = [n for _, n, _ in part_names]
    answer_reads = [reads.get(f"parts[{i + 1}].answer", set()) for i in indexes]
    first_line: dict[str, int] = {}
    for _, name, mark in part_names:
        first_line.setdefault(name, mark.line)
    errors: list[BankError] = []
    for k, message in dependency_problems(names, answer_reads, variables):
        i = indexes[k]
        _item, here = items[i]
        if message.startswith("the part name"):  # about the name itself
            mark = part_names[k][2]
            message = message.replace(
                "(parts must differ)", f"(first at line {first_line[names[k]]})"
            )
        else:
            mark = here.values.get("answer", here.start)
        errors.append(_at(file, mark, f"parts[{i + 1}]: {message}"))
    errors.extend(_check_part_points(data, located, file))
    return errors


def _check_part_points(data: dict[str, Any], located: Located, file: str) -> list[BankError]:
    """The parts' points against the exercise's: the given ones may not exceed it, and when
    every part gives its points and the exercise writes ``points:`` too, they must agree."""
    items = _part_items(data, located)
    given = [item.get("points") for _, item, _ in items]
    if not items or any(
        p is not None and (isinstance(p, bool) or not isinstance(p, int)) for p in given
    ):
        return []  # wrong types are the schema's to report
    total = data.get("points", 10)
    if isinstance(total, bool) or not isinstance(total, int):
        return []
    fixed = sum(p for p in given if p is not None)
    free = sum(1 for p in given if p is None)
    mark = located.values.get("points") or located.keys.get("parts", located.start)
    if free == 0:
        if "points" in data and fixed != total:
            return [
                _at(
                    file,
                    mark,
                    f"points: the exercise has {total} points but its parts' points sum to "
                    f"{fixed}; make them agree, or leave points: out (it is then {fixed})",
                )
            ]
        if fixed <= 0:
            return [_at(file, located.keys["parts"], "parts: every part has 0 points")]
        return []
    if fixed >= total:
        return [
            _at(
                file,
                mark,
                f"points: the parts that give their points have {fixed} of the exercise's "
                f"{total}, which leaves nothing for the {free} part(s) without points:",
            )
        ]
    return []


def _check_concepts(concepts: list[Any], located: Located, file: str) -> list[BankError]:
    known_set = set(CONCEPTS)
    out = []
    loc = located.children.get("concepts")
    for i, c in enumerate(concepts):
        if str(c) not in known_set:
            mark = loc.values.get(i, located.start) if loc else located.start
            best = suggest(str(c), sorted(known_set))  # sorted only for a file with an error
            out.append(
                _at(
                    file,
                    mark,
                    f"unknown concept {c!r}" + (f": did you mean {best!r}?" if best else ""),
                )
            )
    return out


def _check_templates(
    data: dict[str, Any],
    kind: Kind | None,
    params: KindParams | None,
    located: Located,
    file: str,
    generate_ok: bool,
    memo: dict[int, Generated] | None = None,
) -> list[BankError]:
    """Template syntax, and every placeholder names a value: for ``expression`` the variables;
    for other kinds the values of a generated variant (seed 0, only when the rest is valid).
    The variant generated is stored in ``memo[0]`` for ``_check_generation`` to reuse."""
    errors: list[BankError] = []
    texts = template_texts(data, located)
    used: list[tuple[str, str, Mark, str | None, set[str]]] = []
    for label, text, mark, style in texts:
        try:
            used.append((label, text, mark, style, placeholders(text)))
        except TemplateError as exc:
            errors.append(
                _at(file, _line_in(mark, style, exc.line or 1), f"{label}: {exc.message}")
            )
    if not any(u[4] for u in used) or kind is None:
        return errors
    known: set[str]
    if kind.name == "expression":
        raw_vars = data.get("variables")
        if raw_vars is not None and not isinstance(raw_vars, dict):
            return errors
        raw_derived = data.get("derived")
        known = {str(k) for k in (raw_vars or {})}
        known |= {str(k) for k in raw_derived} if isinstance(raw_derived, dict) else set()
    else:
        if params is None or not generate_ok:
            return errors
        try:
            # A kind's value names are known only from a generated variant: generate seed 0.
            known = set(_generate(kind, params, 0, memo).values)
        except Exception as exc:  # a kind that cannot generate seed 0 is itself a problem
            return errors + [generation_error(exc, kind, located, file, 0)]
    for label, text, mark, style, names in used:
        for name in sorted(names - known):
            best = suggest(name, sorted(known))
            hint = (
                f": did you mean {best!r}?"
                if best
                else f" (known: {', '.join(sorted(known)) or 'none'})"
            )
            where = _line_in(mark, style, placeholder_line(text, name))
            errors.append(_at(file, where, f"{label}: unknown placeholder {{{{ {name} }}}}{hint}"))
    return errors


def field_mark(located: Located, field: tuple[Any, ...] | None) -> Mark:
    """The position of the YAML field responsible for a generation failure: ``("variables",
    name)`` the variable's key, ``("require", i)`` the i-th constraint, ``("answer",)`` /
    ``("answer_form",)`` / ``("params",)`` that field (its value for a scalar, else its key);
    the ``kind:`` line when unknown."""
    if field and len(field) > 2 and field[0] == "parts":
        here = located
        mark = located.keys.get("parts", located.start)
        for step in field:
            if step in here.values:
                mark = here.values[step]
            if step not in here.children:
                return mark
            here = here.children[step]
        return mark
    if field:
        head = field[0]
        child = located.children.get(head)
        if len(field) > 1 and child is not None:
            if field[1] in child.keys:
                return child.keys[field[1]]
            if field[1] in child.values:
                return child.values[field[1]]
        if head in located.values and head not in located.children:
            return located.values[head]
        if head in located.keys:
            return located.keys[head]
    return located.keys.get("kind", located.start)


def generation_error(
    exc: BaseException, kind: Kind, located: Located, file: str, seed: int
) -> BankError:
    """A failure of ``kind.generate`` at ``seed`` as a ``BankError`` at the responsible field's
    line (``field`` attribute set by the ``expression`` kind; ``params:`` for other kinds)."""
    field: tuple[Any, ...] | None = getattr(exc, "field", None) or (
        ("params",) if "params" in located.keys else None
    )
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, RecursionError):
        message = "nesting too deep (recursion)"
    if not field:
        what = f"kind {kind.name}"
    elif field[0] == "require" and len(field) > 1 and isinstance(field[1], int):
        what = f"require[{field[1] + 1}]"
    elif field[0] == "parts" and len(field) > 1 and isinstance(field[1], int):
        what = ".".join([f"parts[{field[1] + 1}]", *(str(f) for f in field[2:])])
    else:
        what = ".".join(str(f) for f in field)
    return _at(
        file,
        field_mark(located, field),
        f"{what}: cannot generate a variant: {message} (seed {seed})",
    )


def template_texts(
    data: dict[str, Any], located: Located
) -> list[tuple[str, str, Mark, str | None]]:
    """The templates of an exercise: (label, text, position, YAML scalar style)."""
    texts: list[tuple[str, str, Mark, str | None]] = []
    if isinstance(data.get("prompt"), str):
        texts.append(
            ("prompt", data["prompt"], located.values["prompt"], located.styles.get("prompt"))
        )
    hints_loc = located.children.get("hints")
    if isinstance(data.get("hints"), list) and hints_loc is not None:
        for i, hint in enumerate(data["hints"]):
            if isinstance(hint, str):
                texts.append(
                    (f"hints[{i + 1}]", hint, hints_loc.values[i], hints_loc.styles.get(i))
                )
    explanation_loc = located.children.get("explanation")
    if isinstance(data.get("explanation"), list) and explanation_loc is not None:
        for i, item in enumerate(data["explanation"]):
            here = explanation_loc.children.get(i)
            if isinstance(item, dict) and isinstance(item.get("text"), str) and here:
                mark = here.values.get("text", here.start)
                style = here.styles.get("text")
                texts.append((f"explanation[{i + 1}].text", item["text"], mark, style))
    mistakes_loc = located.children.get("mistakes")
    if isinstance(data.get("mistakes"), list) and mistakes_loc is not None:
        for i, item in enumerate(data["mistakes"]):
            here = mistakes_loc.children.get(i)
            if isinstance(item, dict) and isinstance(item.get("message"), str) and here:
                mark = here.values.get("message", here.start)
                style = here.styles.get("message")
                texts.append((f"mistakes[{i + 1}].message", item["message"], mark, style))
    for i, item, here in _part_items(data, located):
        if isinstance(item.get("prompt"), str) and "prompt" in here.values:
            texts.append(
                (
                    f"parts[{i + 1}].prompt",
                    item["prompt"],
                    here.values["prompt"],
                    here.styles.get("prompt"),
                )
            )
        for field, key in (("explanation", "text"), ("mistakes", "message")):
            items_loc = here.children.get(field)
            if not isinstance(item.get(field), list) or items_loc is None:
                continue
            for j, entry in enumerate(item[field]):
                at = items_loc.children.get(j)
                if isinstance(entry, dict) and isinstance(entry.get(key), str) and at:
                    texts.append(
                        (
                            f"parts[{i + 1}].{field}[{j + 1}].{key}",
                            entry[key],
                            at.values.get(key, at.start),
                            at.styles.get(key),
                        )
                    )
        part_hints = here.children.get("hints")
        if isinstance(item.get("hints"), list) and part_hints is not None:
            for j, hint in enumerate(item["hints"]):
                if isinstance(hint, str):
                    texts.append(
                        (
                            f"parts[{i + 1}].hints[{j + 1}]",
                            hint,
                            part_hints.values[j],
                            part_hints.styles.get(j),
                        )
                    )
    return texts


def template_error(
    exc: TemplateError, label: str, mark: Mark, style: str | None, file: str, seed: int
) -> BankError:
    """A template failure at the template's own line inside the YAML file."""
    return _at(file, _line_in(mark, style, exc.line or 1), f"{label}: {exc.message} (seed {seed})")


def _generate(
    kind: Kind, params: KindParams, seed: int, memo: dict[int, Generated] | None
) -> Generated:
    """``kind.generate(params, default_rng(seed))``, drawn once per ``memo`` (one exercise's
    validation).  Raises whatever the kind raises (never stored)."""
    if memo is not None and seed in memo:
        return memo[seed]
    generated = kind.generate(params, np.random.default_rng(seed))
    if memo is not None:
        memo[seed] = generated
    return generated


def _check_generation(
    data: dict[str, Any],
    kind: Kind,
    params: KindParams,
    located: Located,
    file: str,
    memo: dict[int, Generated] | None = None,
) -> list[BankError]:
    """Generate and render ``VALIDATE_SEEDS`` as ``Exercise.generate`` does, so that a file that
    can never produce a variant (or whose template hangs or explodes) fails validation, located
    at the responsible field.  Stops at the first failing seed.  A seed already in ``memo``
    (drawn by the placeholder check) is not drawn again."""
    texts = template_texts(data, located)
    for seed in VALIDATE_SEEDS:
        try:
            generated = _generate(kind, params, seed, memo)
        except Exception as exc:  # noqa: BLE001 - any failure is the file's problem
            return [generation_error(exc, kind, located, file, seed)]
        errors = []
        for label, text, mark, style in texts:
            try:
                render(text, generated.values)
            except TemplateError as exc:
                errors.append(template_error(exc, label, mark, style, file, seed))
        if errors:
            return errors
    return []
