"""Loading the exercise bank: quizzes, exercises, and seeded variants.

Layout (see docs/authoring.md)::

    exercises/
      linear-systems/          <- a quiz: its id is the folder name
        quiz.yaml              <- title, description, order, opens, closes, exercises (order)
        two-by-two.yaml        <- an exercise: id "linear-systems/two-by-two"

``load_bank`` never raises for a bad file: every problem of every file goes to ``Bank.errors`` and
the other files still load.  ``load_exercise_source`` rebuilds an exercise from YAML text stored in
the database and is cached by content hash, so calling it (and ``generate``) per request is cheap.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from quizapp.bank.precision import default_tolerance
from quizapp.bank.schema import ID_RE, ExerciseSpec, QuizSpec, pydantic_errors
from quizapp.bank.template import TemplateError, render
from quizapp.bank.types import AnswerForm, Kind, KindParams, Part, Variant
from quizapp.bank.validate import check_exercise
from quizapp.bank.yamlio import BankError, parse_yaml, read_text
from quizapp.coursetime import parse_zone
from quizapp.grading.types import Tolerance

QUIZ_FILE = "quiz.yaml"
#: The course-wide settings file at the bank root (quiz weights; read by the instructor side).
COURSE_FILE = "course.yaml"
MAX_SEED = 2**63
#: How many times a draw whose named mistakes coincide is drawn again (``Kind.redraw_coinciding``).
#: In the bundled bank at most 1 draw in 3 of an exercise has such a pair (06a-multi-head-step-
#: by-step), so 16 more draws leave a pair about once in 3**17 (10**8) seeds; a draw is ~1-10 ms.
REDRAWS = 16


def content_hash(text: str) -> str:
    """SHA-256 of the UTF-8 text, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(eq=False)
class Exercise:
    """One valid exercise: its id (``quiz/stem``), file, parsed spec, YAML source and hash.

    ``params`` are the kind's validated parameters (for ``expression``: variables, require,
    answer, answer_form).
    """

    id: str
    quiz_id: str
    path: str
    spec: ExerciseSpec
    source: str
    content_hash: str
    kind: Kind
    params: KindParams

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def points(self) -> int:
        return self.spec.points

    @property
    def attempts(self) -> int:
        return self.spec.attempts

    def generate(self, seed: int, revision: int | None = None) -> Variant:
        """The variant fixed by ``seed`` (an int in ``[0, 2**63)``): pure and deterministic.

        ``revision``: the kind's draw revision (default: its current one, what new variants
        use; ``quizapp.bank.types.FIRST_REVISION`` repeats the draws of release 0.1, see
        ``Kind.params_at``).

        Draws from ``numpy.random.default_rng(seed)`` (PCG64), so the same seed gives the same
        numbers on every machine with the same NumPy major version.  From the kind's
        ``redraw_coinciding`` revision on, a draw whose named mistakes give one answer
        (:func:`quizapp.bank.distinct.coinciding_mistakes`) is drawn again from the same
        generator, up to :data:`REDRAWS` times; the first draw with the fewest such pairs is kept
        (a draw with none is kept as it is: the seeds whose mistakes were told apart keep their
        numbers).  Raises ``BankError``
        (``file: seed N: message``) when the kind cannot generate this seed (e.g. a ``require``
        that never holds) or the prompt fails to render; ``ValueError`` for a bad seed.
        """
        if (
            isinstance(seed, bool)
            or not isinstance(seed, (int, np.integer))
            or not 0 <= seed < MAX_SEED
        ):
            raise ValueError(f"a seed is an integer in [0, 2**63), got {seed!r}")
        rng = np.random.default_rng(int(seed))
        at = self.kind.revision if revision is None else int(revision)
        try:
            params = self.kind.params_at(self.params, at)
        except BankError:
            raise
        except Exception as exc:
            raise self._located(seed, exc) from exc
        variant = self._draw(seed, params, rng)
        since = self.kind.redraw_coinciding
        if since is None or at < since:
            return variant
        # Named mistakes that give one answer cannot be told apart: draw again from the same
        # generator (deterministic), keeping the first draw with the fewest such pairs.
        from quizapp.bank.distinct import coinciding_mistakes

        best, pairs = variant, len(coinciding_mistakes(variant))
        for _ in range(REDRAWS):
            if not pairs:
                break
            variant = self._draw(seed, params, rng)
            n = len(coinciding_mistakes(variant))
            if n < pairs:
                best, pairs = variant, n
        return best

    def _draw(self, seed: int, params: KindParams, rng: np.random.Generator) -> Variant:
        """One draw of the kind from ``rng``, rendered as a variant of ``seed``."""
        try:
            generated = self.kind.generate(params, rng)
        except BankError:
            raise
        except Exception as exc:
            raise self._located(seed, exc) from exc
        label = "prompt"
        try:
            prompt = render(self.spec.prompt, generated.values)
            hints = []
            for i, h in enumerate(self.spec.hints):
                label = f"hints[{i + 1}]"
                hints.append(render(h, generated.values))
        except TemplateError as exc:
            raise self._located(seed, exc, label) from exc
        parts = self._finish_parts(generated.parts, generated.values, seed)
        return Variant(
            exercise_id=self.id,
            seed=int(seed),
            title=self.spec.title,
            prompt=prompt,
            expected=generated.expected,
            answer_form=generated.answer_form,
            solution=list(generated.solution),
            tolerance=self.spec.tolerance_value(),
            partial_credit=self.spec.partial_credit,
            values=dict(generated.values),
            context=dict(generated.context),
            detectors=tuple(generated.detectors),
            hints=hints,
            parts=parts,
        )

    def _finish_parts(self, parts: list[Part], values: dict[str, Any], seed: int) -> list[Part]:
        """A kind's parts as the variant stores them: prompts and hints rendered (for parts
        written in the YAML: they are templates), and each part's tolerance (:meth:`_part_tolerance`),
        follow-through credit (default: the exercise's) and points (a share of the
        exercise's, :func:`quizapp.bank.parts.share_points`) filled in."""
        if not parts:
            return []
        from dataclasses import replace

        from quizapp.bank.parts import share_points

        authored = bool(self.spec.parts)
        points = share_points(float(self.spec.points), [p.points for p in parts])
        out = []
        for i, (part, share) in enumerate(zip(parts, points, strict=True)):
            prompt, hints = part.prompt, list(part.hints)
            if authored:
                label = f"parts[{i + 1}].prompt"
                try:
                    prompt = render(part.prompt, values)
                    rendered = []
                    for j, h in enumerate(part.hints):
                        label = f"parts[{i + 1}].hints[{j + 1}]"
                        rendered.append(render(h, values))
                    hints = rendered
                except TemplateError as exc:
                    raise self._located(seed, exc, label) from exc
            out.append(
                replace(
                    part,
                    prompt=prompt,
                    hints=hints,
                    tolerance=self._part_tolerance(part.tolerance, prompt),
                    points=share,
                    follow_through_credit=self.spec.follow_through_value()
                    if part.follow_through_credit is None
                    else float(part.follow_through_credit),
                )
            )
        return out

    def rekey(self, stored: Variant, kind: str) -> Variant:
        """``stored`` (a variant drawn by kind ``kind`` from any version of this exercise) with
        this version's answer key: the same numbers, prompt and hints; this version's tolerance
        and partial credit; and, when this version has the same kind and the kind can compute its
        answer from drawn values (:meth:`Kind.solve`: ``expression`` exercises), the expected
        answer, answer form, worked solution and detector data computed again from the stored
        values (a corrected ``answer``).  Nothing is drawn.  A multi-part variant keeps each
        part's prompt and hints; its parts' keys (expected values, follow-through expressions,
        tolerances, points, detectors) are this version's.  The answer form stays the one the
        student was shown (grid, labels, given cells).  Raises ``BankError`` when this version's
        answer cannot be computed from the stored values (it names a variable the variant does
        not have), its parts are not the variant's (a part added or removed), or its answer does
        not fit the form the student answered (:func:`rekeyed_form`: another type or shape,
        other given cells), since answers written for one form cannot be graded against a key
        of another.
        """
        from dataclasses import replace

        generated = None
        if kind == self.spec.kind:
            try:
                generated = self.kind.solve(self.params, stored.values)
            except Exception as exc:  # noqa: BLE001 - reported for this variant
                message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
                raise BankError(
                    self.path, None, None, f"seed {stored.seed}: the answer key: {message}"
                ) from exc
        keyed = replace(
            stored,
            tolerance=self.spec.tolerance_value(),
            partial_credit=self.spec.partial_credit,
        )
        if generated is None:
            if not stored.parts:
                return keyed
            # A kind that cannot solve again keeps its stored parts' answers; the exercise's
            # tolerance, follow-through credit and points apply.
            kept = [
                replace(p, tolerance=None, points=None, follow_through_credit=None)
                for p in stored.parts
            ]
            return replace(keyed, parts=self._keyed_parts(kept, stored))
        parts: list[Part] = []
        if generated.parts or stored.parts:
            old = [p.name for p in stored.parts]
            new = [p.name for p in generated.parts]
            if old != new:
                raise BankError(
                    self.path,
                    None,
                    None,
                    f"seed {stored.seed}: the answer key: this version's parts "
                    f"({', '.join(new) or 'none'}) are not the variant's ({', '.join(old) or 'none'})",
                )
            parts = self._keyed_parts(generated.parts, stored)
        try:
            form = rekeyed_form(stored.answer_form, generated.answer_form)
        except ValueError as exc:
            raise BankError(
                self.path, None, None, f"seed {stored.seed}: the answer key: {exc}"
            ) from None
        return replace(
            keyed,
            expected=generated.expected,
            answer_form=form,
            solution=list(generated.solution),
            context=dict(generated.context),
            detectors=tuple(generated.detectors),
            parts=parts,
        )

    def _keyed_parts(self, parts: list[Part], stored: Variant) -> list[Part]:
        """``parts`` (this version's, same names as ``stored``'s) with the stored prompts and
        hints, and this version's tolerances, points and follow-through credit."""
        from dataclasses import replace

        shown = {p.name: p for p in stored.parts}
        forms: dict[str, AnswerForm] = {}
        for part in parts:
            try:
                forms[part.name] = rekeyed_form(shown[part.name].answer_form, part.answer_form)
            except ValueError as exc:
                raise BankError(
                    self.path,
                    None,
                    None,
                    f"seed {stored.seed}: part {part.name}'s answer key: {exc}",
                ) from None
        finished = self._finish_parts(
            [replace(p, prompt="", hints=[]) for p in parts], stored.values, stored.seed
        )
        return [
            replace(
                p,
                prompt=shown[p.name].prompt,
                hints=list(shown[p.name].hints),
                answer_form=forms[p.name],
                tolerance=self._part_tolerance(part.tolerance, shown[p.name].prompt),
            )
            for part, p in zip(parts, finished, strict=True)
        ]

    def _part_tolerance(self, written: Tolerance | None, prompt: str) -> Tolerance:
        """A part's tolerance: its own ``tolerance:``, else exact
        (:data:`quizapp.bank.precision.EXACT_TOLERANCE`) when the part's prompt says exact, else
        the exercise's (:meth:`ExerciseSpec.tolerance_value`): the rule of a whole exercise, with
        the part's prompt the more specific statement."""
        return written or default_tolerance(prompt) or self.spec.tolerance_value()

    def _located(self, seed: int, exc: BaseException, label: str | None = None) -> BankError:
        """A generation (or, with ``label``, template) failure as ``file:line:column: seed N:
        ...`` at the responsible field of the source (re-parsed only on failure)."""
        from quizapp.bank.validate import generation_error, template_error, template_texts

        try:
            data, located = parse_yaml(self.source, self.path)
        except BankError:
            data, located = None, None
        if isinstance(exc, TemplateError):
            for text_label, _text, mark, style in (
                template_texts(data, located) if isinstance(data, dict) and located else []
            ):
                if text_label == label:
                    return template_error(exc, label, mark, style, self.path, seed)
            return BankError(self.path, None, None, f"seed {seed}: {label}: {exc.message}")
        if located is None:
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            return BankError(self.path, None, None, f"seed {seed}: {message}")
        return generation_error(exc, self.kind, located, self.path, seed)


def _describe_form(form: AnswerForm) -> str:
    """An answer form in words: ``a 2×3 matrix``, ``a choice of 4 options``."""
    from quizapp.grading import describe_shape

    if form.type == "choice":
        return f"a choice of {len(form.choices or [])} options"
    if form.type == "index":
        return "a whole number (an index)"
    if form.type == "point_on_line":
        return f"{form.count} point(s) on a line"
    text = describe_shape(tuple(form.shape or ()))
    return f"{text} with given cells" if form.type == "partial_matrix" else text


#: Answer types shown as one free text box when ``show_shape`` is false: the shape is then part
#: of the question, not of the form, and a corrected key may have another one.
_FREE_TEXT = frozenset({"scalar", "vector", "matrix"})


def rekeyed_form(shown: AnswerForm, key: AnswerForm) -> AnswerForm:
    """The answer form of a variant re-keyed by a regrade: ``shown`` (the form the student
    answered: its grid, labels and given cells stay) when the new key's form ``key`` has the
    same answer type, shape, number of choices or points and given cells; ``key`` when both are
    one free text box (``show_shape`` false, a scalar, vector or matrix: nothing shown depends on
    the shape).  Raises ``ValueError`` saying why answers to ``shown`` cannot be graded against
    ``key`` otherwise.  Used by :meth:`Exercise.rekey`."""
    if (
        not shown.show_shape
        and not key.show_shape
        and shown.type in _FREE_TEXT
        and key.type in _FREE_TEXT
    ):
        return key
    blanks = [[c is None for c in row] for row in shown.given or []]
    key_blanks = [[c is None for c in row] for row in key.given or []]
    if (
        shown.type != key.type
        or tuple(shown.shape or ()) != tuple(key.shape or ())
        or len(shown.choices or []) != len(key.choices or [])
        or shown.count != key.count
        or blanks != key_blanks
    ):
        raise ValueError(
            f"this version's answer is {_describe_form(key)}, but the student was given a form "
            f"for {_describe_form(shown)}; answers to that form cannot be graded against it"
        )
    return shown


@dataclass(eq=False)
class Quiz:
    """A folder of exercises with its ``quiz.yaml``."""

    id: str
    title: str
    description: str
    #: ``order:`` as written, None when left out (the quiz then comes after the ordered ones).
    order: int | None
    #: aware UTC instants (the written wall-clock times read in the course zone ``timezone``)
    opens: Any
    closes: Any
    exercise_ids: list[str]
    source: str
    content_hash: str
    path: str = ""
    #: the late periods: ``[(until, credit), ...]``, ``until`` aware UTC, in order
    late: list[tuple[Any, float]] = field(default_factory=list)
    #: the IANA name of the course zone the times were read in
    timezone: str = "UTC"
    #: every exercise of the quiz in its order, those whose file has errors included (the
    #: places a sync gives: one kept at its previous version keeps its place)
    ordered_ids: list[str] = field(default_factory=list)


def quiz_sort_key(quiz: Quiz) -> tuple[Any, ...]:
    """The course order of quizzes: ``order`` (missing last), opening time (missing last), id.
    ``quizapp.models.QUIZ_ORDER`` is the same order in SQL."""
    far = (True, 0)
    order = far if quiz.order is None else (False, quiz.order)
    opens = (True, 0) if quiz.opens is None else (False, quiz.opens)
    return (order, opens, quiz.id)


@dataclass
class Bank:
    """Everything loaded from a bank folder: valid quizzes and exercises, and every problem."""

    quizzes: dict[str, Quiz] = field(default_factory=dict)
    exercises: dict[str, Exercise] = field(default_factory=dict)
    errors: list[BankError] = field(default_factory=list)
    #: problems that do not stop the bank (``file:line:column: message``), e.g. a quiz.yaml
    #: without ``order:``
    warnings: list[str] = field(default_factory=list)

    def quiz_list(self) -> list[Quiz]:
        """Quizzes in course order: by ``order`` (those without one after), then by opening
        time (those without one after), then by id."""
        return sorted(self.quizzes.values(), key=quiz_sort_key)


def _parse_exercise(
    exercise_id: str, source: str, file: str, *, authoring: bool = True
) -> tuple[Exercise | None, list[BankError]]:
    try:
        data, located = parse_yaml(source, file)
    except BankError as err:
        return None, [err]
    checked, errors = check_exercise(data, located, file, authoring=authoring)
    if checked is None:
        return None, errors
    quiz_id = exercise_id.split("/", 1)[0] if "/" in exercise_id else ""
    return (
        Exercise(
            id=exercise_id,
            quiz_id=quiz_id,
            path=file,
            spec=checked.spec,
            source=source,
            content_hash=content_hash(source),
            kind=checked.kind,
            params=checked.params,
        ),
        [],
    )


@lru_cache(maxsize=1024)
def _cached_source(exercise_id: str, digest: str, source: str) -> Exercise:
    # A stored text is loaded as it was accepted: the authoring rules added since (which would
    # refuse a file being synced) must not make its variants unreadable.
    exercise, errors = _parse_exercise(exercise_id, source, exercise_id, authoring=False)
    if exercise is None:
        first = errors[0]
        first.errors = errors
        raise first
    return exercise


def load_exercise_source(exercise_id: str, source: str) -> Exercise:
    """An exercise from its YAML text (as stored in the database), cached by content hash.

    Errors name the exercise id as the file.  Raises ``BankError`` (its ``errors`` lists every
    problem found).
    """
    return _cached_source(exercise_id, content_hash(source), source)


def load_exercise_file(
    path: Path, exercise_id: str | None = None
) -> tuple[Exercise | None, list[BankError]]:
    """Load one exercise file; its id defaults to ``<parent folder>/<stem>``.  Never raises."""
    file = str(path)
    try:
        source = read_text(path, file)
    except BankError as err:
        return None, [err]
    return _parse_exercise(exercise_id or f"{path.parent.name}/{path.stem}", source, file)


def _schedule_errors(data: dict[str, Any], located: Any, file: str, zone: Any) -> list[BankError]:
    """The dates of a ``quiz.yaml``, checked on their own (so a bad order is reported beside
    any other problem): ``closes`` after ``opens``; every ``late`` period's ``until`` later than
    ``closes`` and than the period before it; ``late`` only with a ``closes``.  Compared as
    instants in the course zone ``zone``."""
    keys = ("opens", "closes", "late")
    try:
        dates = QuizSpec.model_validate({"title": "x", **{k: data[k] for k in keys if k in data}})
    except ValidationError:
        return []  # reported by the full validation
    opens, closes, late = dates.schedule(zone)
    out: list[BankError] = []
    if opens is not None and closes is not None and closes <= opens:
        mark = located.values.get("closes", located.start)
        out.append(
            BankError(
                file,
                mark.line,
                mark.column,
                f"closes ({dates.closes}) must be after opens ({dates.opens})",
            )
        )
    if late and closes is None:
        mark = located.keys.get("late", located.start)
        out.append(
            BankError(
                file, mark.line, mark.column, "late: late periods need a closes: time to follow"
            )
        )
        return out
    before, before_text = closes, f"closes ({dates.closes})"
    for i, (until, _credit) in enumerate(late):
        mark = located.find(("late", i, "until"))[0]
        if until <= before:
            out.append(
                BankError(
                    file,
                    mark.line,
                    mark.column,
                    f"late[{i + 1}].until ({dates.late[i].until}) must be later than {before_text}",
                )
            )
        before, before_text = until, f"late[{i + 1}].until ({dates.late[i].until})"
    return out


def _load_quiz_file(
    path: Path, quiz_id: str, zone: Any = None
) -> tuple[QuizSpec | None, str, list[BankError]]:
    file = str(path)
    try:
        source = read_text(path, file)
        data, located = parse_yaml(source, file)
    except BankError as err:
        return None, "", [err]
    except (OSError, UnicodeDecodeError) as exc:
        return None, "", [BankError(file, None, None, f"cannot read the file: {exc}")]
    if not isinstance(data, dict):
        return (
            None,
            source,
            [BankError(file, 1, 1, "quiz.yaml is a mapping (title:, description:, order:, ...)")],
        )
    errors: list[BankError] = []
    spec: QuizSpec | None = None
    try:
        spec = QuizSpec.model_validate(data)
    except ValidationError as exc:
        errors = pydantic_errors(exc, QuizSpec, located, file)
    errors += _schedule_errors(data, located, file, parse_zone(zone))
    if errors:
        return None, source, sorted(errors, key=BankError.sort_key)
    return spec, source, []


def _yaml_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix in (".yaml", ".yml") and p.name != QUIZ_FILE
    )


def _load_quiz_folder(folder: Path, bank: Bank, zone: Any = None) -> None:
    quiz_id = folder.name
    quiz_file = folder / QUIZ_FILE
    if not ID_RE.match(quiz_id):
        bank.errors.append(
            BankError(
                str(folder),
                None,
                None,
                f"quiz folder name {quiz_id!r}: use lowercase letters, digits, - and _",
            )
        )
    spec: QuizSpec | None = None
    source = ""
    if quiz_file.is_file():
        spec, source, errs = _load_quiz_file(quiz_file, quiz_id, zone)
        bank.errors.extend(errs)
    else:
        bank.errors.append(
            BankError(
                str(quiz_file), None, None, "missing quiz.yaml (title:, description:, order:)"
            )
        )
    stems: list[str] = []
    for path in _yaml_files(folder):
        stem = path.stem
        if not ID_RE.match(stem):
            bank.errors.append(
                BankError(
                    str(path),
                    None,
                    None,
                    f"file name {path.name!r}: use lowercase letters, digits, - and _",
                )
            )
            continue
        exercise, errs = load_exercise_file(path, f"{quiz_id}/{stem}")
        bank.errors.extend(errs)
        stems.append(stem)
        if exercise is not None:
            bank.exercises[exercise.id] = exercise
    if spec is None or not ID_RE.match(quiz_id):
        return
    order = list(stems)
    if spec.exercises is not None:
        data, located = parse_yaml(source, str(quiz_file))
        loc = located.children.get("exercises")
        listed: list[str] = []
        first_at: dict[str, int] = {}
        for i, stem in enumerate(spec.exercises):
            stem = re.sub(r"\.ya?ml$", "", stem)
            mark = loc.values[i] if loc else located.start
            if stem not in stems:
                bank.errors.append(
                    BankError(
                        str(quiz_file),
                        mark.line,
                        mark.column,
                        f"exercises: no file {stem}.yaml in {folder.name}/",
                    )
                )
            elif stem in first_at:
                bank.errors.append(
                    BankError(
                        str(quiz_file),
                        mark.line,
                        mark.column,
                        f"exercises: {stem} is listed twice (first at line {first_at[stem]})",
                    )
                )
            else:
                listed.append(stem)
                first_at[stem] = mark.line
        key = located.keys.get("exercises", located.start)
        for stem in stems:
            if stem not in listed:
                # An error, not a warning: `exercises:` fixes the order, so a file left out
                # would silently appear last (or was meant to be deleted).
                bank.errors.append(
                    BankError(
                        str(quiz_file),
                        key.line,
                        key.column,
                        f"exercises: {stem}.yaml is in {folder.name}/ but not listed here "
                        "(list it, or remove the file)",
                    )
                )
        order = listed + [s for s in stems if s not in listed]
    course_zone = parse_zone(zone)
    opens, closes, late = spec.schedule(course_zone)
    bank.quizzes[quiz_id] = Quiz(
        id=quiz_id,
        title=spec.title,
        description=spec.description,
        order=spec.order,
        opens=opens,
        closes=closes,
        late=late,
        timezone=course_zone.key,
        exercise_ids=[f"{quiz_id}/{s}" for s in order if f"{quiz_id}/{s}" in bank.exercises],
        ordered_ids=[f"{quiz_id}/{s}" for s in order],
        source=source,
        content_hash=content_hash(source),
        path=str(quiz_file),
    )


def load_bank(root: Path | str, zone: Any = None) -> Bank:
    """Load every quiz folder under ``root`` (or ``root`` itself if it holds a ``quiz.yaml``).

    Never raises for a bad file: each file's problems go to ``Bank.errors`` (sorted by file and
    line) and the valid quizzes and exercises load.  A folder of exercise files with neither a
    ``quiz.yaml`` nor quiz subfolders is loaded as one quiz (and its missing quiz.yaml reported).
    ``zone``: the course's time zone (a ``ZoneInfo`` or an IANA name; default UTC), in which
    the wall-clock times of ``quiz.yaml`` are read.  Raises ``quizapp.coursetime.TimeError``
    for an unknown zone name.
    """
    zone = parse_zone(zone)
    root = Path(root)
    bank = Bank()
    if not root.is_dir():
        bank.errors.append(BankError(str(root), None, None, "no such folder"))
        return bank
    if (root / QUIZ_FILE).is_file():
        _load_quiz_folder(root, bank, zone)
    else:
        folders = sorted(
            p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
        )
        quiz_folders = [f for f in folders if (f / QUIZ_FILE).is_file() or _yaml_files(f)]
        loose = [p for p in _yaml_files(root) if p.name != COURSE_FILE]
        if not quiz_folders and loose:
            _load_quiz_folder(root, bank, zone)
        else:
            for path in loose:
                bank.errors.append(
                    BankError(
                        str(path),
                        None,
                        None,
                        "an exercise file must be inside a quiz folder (with quiz.yaml)",
                    )
                )
            for folder in quiz_folders:
                _load_quiz_folder(folder, bank, zone)
    _check_orders(bank)
    bank.errors.sort(key=BankError.sort_key)
    return bank


def _check_orders(bank: Bank) -> None:
    """Two quizzes that both write the same ``order:`` would be listed in an arbitrary-looking
    order (by folder name): each later one is an error at its ``order:`` line.  A quiz that
    leaves ``order`` out comes after the ordered ones (by opening time, then id): a warning says
    so at the file's first line."""
    seen: dict[int, Quiz] = {}
    for quiz in sorted(bank.quizzes.values(), key=lambda q: q.id):
        try:
            _, located = parse_yaml(quiz.source, quiz.path)
        except BankError:
            continue
        mark = located.values.get("order")
        if mark is None or quiz.order is None:
            bank.warnings.append(
                f"{quiz.path}:1:1: no order: given; the quiz is listed after the quizzes that "
                "have one (then by opening time, then by folder name). Add order: N to place it."
            )
            continue
        if quiz.order in seen:
            bank.errors.append(
                BankError(
                    quiz.path,
                    mark.line,
                    mark.column,
                    f"order {quiz.order} is also the order of quiz {seen[quiz.order].id!r}: "
                    "give each quiz its own order",
                )
            )
        else:
            seen[quiz.order] = quiz
