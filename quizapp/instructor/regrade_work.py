"""The work of a regrade, one variant at a time and without the database: key the stored variant
with the current version, grade its submissions again, render the new key's page.  What
:func:`quizapp.instructor.regrade.regrade_exercise` reads and writes stays in its transaction;
this module only computes, so a large regrade spreads it over processes (one per core).

Every variant is independent of the others (its record, its page, its submissions' answers), so
the results are the same in one process or several, in the same order.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_all_start_methods, get_context
from typing import Any

#: A regrade grading at least this many submissions spreads its work over processes (below it,
#: starting them, ~1 s, costs more than it saves).
POOL_MIN_SUBMISSIONS = 2_000
#: At most this many processes (the work is CPU-bound; each one holds a loaded bank exercise).
POOL_MAX_WORKERS = 4
#: Variants per task sent to a process: large enough that pickling is a small share.
CHUNK = 100

#: A new verdict as stored: the verdict dict, score, status, mistake codes, parsed answer.
Payload = tuple[dict[str, Any], float, str, list[str], Any]


@dataclass
class ToGrade:
    """One submission graded again: its id, the answer as posted, its stored verdict."""

    id: int
    answer_format: str
    raw_answer: str
    verdict: dict[str, Any]


@dataclass
class VariantWork:
    """One stored variant to key again: its row's id, number and stored record and page, the kind
    that drew it, the submissions to grade again (in order)."""

    id: int
    variant_number: int
    exercise_id: str
    record: dict[str, Any]
    page: dict[str, Any]
    kind: str
    subs: list[ToGrade]


@dataclass
class VariantResult:
    """What :func:`key_and_grade` computed for one variant.

    ``unkeyable``: why the current version cannot key it (nothing else is set); else ``rekeyed``
    (the new record differs from the stored one) with ``record`` (the new stored record, when
    rekeyed), ``keyed`` (a multi-part variant 1 as keyed, ``quizapp.bank.Variant``: the
    student's best parts are recomputed from it; None otherwise), ``page`` (the page with the new key
    rendered, when rekeyed and asked for), ``payloads`` (submission id -> new verdict) and
    ``failures`` (the grader's crashes, to be logged).  Only what the caller writes comes back
    from another process."""

    id: int
    unkeyable: str | None = None
    record: dict[str, Any] = field(default_factory=dict)
    rekeyed: bool = False
    keyed: Any = None
    page: dict[str, Any] | None = None
    payloads: dict[int, Payload] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def key_and_grade(current: Any, work: VariantWork, render: bool) -> VariantResult:
    """Key ``work``'s stored variant with ``current`` (a ``quizapp.bank.Exercise``: the current
    version; ``Exercise.rekey``: same numbers, the current answer key), grade each of its
    submissions again against it, and with ``render`` render the new key's page when the key
    changed (``quizapp.page.render_key_page``).  Pure: no database, no Flask.  Never raises for
    a variant or an answer: an unkeyable variant is reported in ``unkeyable``, a grader crash
    gives an invalid verdict and a line in ``failures``."""
    from quizapp import services
    from quizapp.bank import BankError
    from quizapp.bank.stored import freeze, thaw
    from quizapp.page import render_key_page

    result = VariantResult(work.id)
    stored = services.stored_variant(work)
    try:
        keyed = current.rekey(stored, work.kind)
    except BankError as exc:
        result.unkeyable = str(exc)
        return result
    record = {**freeze(keyed), "kind": work.kind}
    result.rekeyed = record != work.record
    if result.rekeyed:
        # The stored record as the database returns it (JSON types), for the comparison of a
        # later regrade; the page's solution and correct answer follow the new key.
        result.record = record
        keyed = thaw(record)
        if render:
            result.page = render_key_page(keyed, work.page)
    if keyed.parts and work.variant_number == 1:
        result.keyed = keyed
    for sub in work.subs:
        answer = services.decode_raw_answer(sub.answer_format, sub.raw_answer)
        verdict = _grade_safely(keyed, answer, result.failures)
        result.payloads[sub.id] = verdict_payload(verdict, keyed, sub.verdict)
    return result


def key_and_grade_all(
    current: Any,
    works: Sequence[VariantWork],
    *,
    render: bool,
    workers: int | None = None,
) -> Iterator[VariantResult]:
    """:func:`key_and_grade` of every variant of ``works`` with ``current`` (the current version,
    a ``quizapp.bank.Exercise``), in order.

    ``workers``: how many processes; None chooses one per core (at most
    :data:`POOL_MAX_WORKERS`) when the variants hold at least :data:`POOL_MIN_SUBMISSIONS`
    submissions to grade and the machine has more than one core, else this process alone.
    The processes are forked from this one (POSIX ``fork``, the start method that imports
    nothing again: ~10 ms instead of ~1 s per process, and a caller's script is never run
    again in them, as ``spawn`` does with an unguarded ``__main__``) and only compute: no
    database, no lock, no logging in them.  Where ``fork`` does not exist, this process does
    the work alone."""
    if workers is None:
        count = sum(len(w.subs) for w in works)
        cores = os.cpu_count() or 1
        workers = min(cores, POOL_MAX_WORKERS) if count >= POOL_MIN_SUBMISSIONS else 1
    if workers <= 1 or len(works) <= CHUNK or "fork" not in get_all_start_methods():
        for work in works:
            yield key_and_grade(current, work, render)
        return
    spans = [(i, min(i + CHUNK, len(works))) for i in range(0, len(works), CHUNK)]
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context("fork"),
        # given to each forked process as it starts (inherited, not pickled)
        initializer=_start_worker,
        initargs=(current, works, render),
    ) as pool:
        for results in pool.map(_key_and_grade_span, spans):
            yield from results


#: In a process of :func:`key_and_grade_all`: the version, the variants and ``render``.
_worker_state: tuple[Any, Sequence[VariantWork], bool] | None = None


def _start_worker(current: Any, works: Sequence[VariantWork], render: bool) -> None:
    global _worker_state
    _worker_state = (current, works, render)


def _key_and_grade_span(span: tuple[int, int]) -> list[VariantResult]:
    """One task of a process of :func:`key_and_grade_all`: the variants ``works[start:end]``."""
    assert _worker_state is not None
    current, works, render = _worker_state
    start, end = span
    return [key_and_grade(current, works[i], render) for i in range(start, end)]


def _grade_safely(bank_variant: Any, answer: Any, failures: list[str]) -> Any:
    """``grade_answer``, or an invalid verdict when the grader crashes (recorded in
    ``failures``, with the traceback, for the caller to log)."""
    from quizapp.bank import grade_answer
    from quizapp.grading import Verdict

    try:
        return grade_answer(bank_variant, answer)
    except Exception:  # noqa: BLE001 - one answer's crash never stops a regrade
        failures.append(
            f"regrade: grading failed for {bank_variant.exercise_id} seed {bank_variant.seed}\n"
            + traceback.format_exc()
        )
        return Verdict(
            status="invalid", score=0.0, message="The grader could not read this answer."
        )


def verdict_payload(verdict: Any, keyed: Any, old: dict[str, Any] | None = None) -> Payload:
    """The stored form of a new verdict (``services.stored_verdict``, as the submit stores it);
    for a multi-part variant each part's ``answered`` as in the ``old`` verdict."""
    from quizapp import services

    before = (old or {}).get("parts") or {}
    taken = [n for n, v in before.items() if isinstance(v, dict) and v.get("answered") == "posted"]
    return services.stored_verdict(verdict, keyed, taken=taken)
