"""The work of a regrade without the database (``quizapp.instructor.regrade_work``): keying each
stored variant with the current version and grading its submissions again gives the same
results in several processes as in one, in the same order, including a grader that crashes on
one answer and a variant the current version cannot key.

The variants are drawn here from a version with a wrong answer key (2 A^T y); the current
version has the right one (A^T y), whose value each test computes with NumPy from the variant's
own numbers.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from quizapp import services
from quizapp.bank import derive_seed, load_exercise_source
from quizapp.bank.stored import freeze
from quizapp.instructor import regrade_work
from quizapp.instructor.regrade_work import ToGrade, VariantWork, key_and_grade_all

MAPS_BACK = "02-matrices-and-maps/10-transpose-maps-back"
SOURCE = (Path(__file__).parents[1] / "exercises" / f"{MAPS_BACK}.yaml").read_text()
WRONG = SOURCE.replace("answer: transpose(A) @ y", "answer: 2 * (transpose(A) @ y)")
assert WRONG != SOURCE


def _works(n: int) -> list[VariantWork]:
    """``n`` variants drawn from the wrong key's version, each with three graded submissions:
    the right answer, the wrong key's answer and text that is not a vector."""
    wrong = load_exercise_source(MAPS_BACK, WRONG)
    works = []
    for i in range(n):
        drawn = services.draw_variant(wrong, derive_seed("regrade-work", i, MAPS_BACK, 1))
        values = drawn.record["values"]
        right = _right(values)
        answers = [", ".join(f"{x:g}" for x in a) for a in (right, 2 * right)] + ["not, a, vector"]
        works.append(
            VariantWork(
                id=100 + i,
                variant_number=1,
                exercise_id=MAPS_BACK,
                record=drawn.record,
                page=drawn.page,
                kind="expression",
                subs=[ToGrade(1000 + 10 * i + k, "text", a, {}) for k, a in enumerate(answers)],
            )
        )
    return works


def _right(values: dict[str, Any]) -> np.ndarray:
    """A^T y from the stored numbers (the record's JSON form of an array: values ``v`` in row
    order, shape ``s``)."""

    def array(v: dict[str, Any]) -> np.ndarray:
        return np.asarray(v["v"], float).reshape(v["s"])

    return array(values["A"]).T @ array(values["y"])


def _check_verdicts(verdicts: list[regrade_work.Payload], right: np.ndarray) -> None:
    """The right answer is correct; the wrong key's (2 A^T y) is wrong except in the cells where
    A^T y is 0 (partial credit per right cell); the text is not read."""
    (_, s1, st1, _, _), (_, s2, st2, _, _), (_, s3, st3, _, _) = verdicts
    assert (st1, s1) == ("correct", 1.0)
    zeros = int(np.sum(right == 0))
    assert st2 == ("partial" if zeros else "incorrect") and s2 < 1.0
    assert (st3, s3) == ("invalid", 0.0)


def _plain(result: regrade_work.VariantResult) -> dict[str, Any]:
    """A result with its keyed variant frozen (NumPy arrays do not compare with ==)."""
    return {**vars(result), "keyed": None if result.keyed is None else freeze(result.keyed)}


@pytest.fixture()
def pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every process pool started (chunks of 2 variants, so a few variants fill
    several tasks)."""
    started: list[int] = []

    class Recording(ProcessPoolExecutor):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started.append(kwargs["max_workers"])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(regrade_work, "ProcessPoolExecutor", Recording)
    monkeypatch.setattr(regrade_work, "CHUNK", 2)
    return started


def test_processes_give_the_results_of_one_process_in_order(pools: list[int]) -> None:
    current = load_exercise_source(MAPS_BACK, SOURCE)
    works = _works(7)
    alone = [_plain(r) for r in key_and_grade_all(current, works, render=True, workers=1)]
    assert pools == []
    spread = [_plain(r) for r in key_and_grade_all(current, works, render=True, workers=2)]
    assert pools == [2]
    assert spread == alone
    assert [r["id"] for r in spread] == [w.id for w in works]
    for work, result in zip(works, spread, strict=True):
        assert result["unkeyable"] is None and result["failures"] == []
        assert result["rekeyed"] and result["page"] is not None
        expected = _right(work.record["values"])
        assert np.allclose(np.asarray(result["record"]["expected"]["v"], float), expected)
        # what the student was shown stays; the worked answer is the new key's
        assert result["page"]["prompt_html"] == work.page["prompt_html"]
        assert result["page"]["expected_html"] != work.page["expected_html"]
        _check_verdicts([result["payloads"][s.id] for s in work.subs], expected)


def test_a_dry_run_renders_nothing(pools: list[int]) -> None:
    current = load_exercise_source(MAPS_BACK, SOURCE)
    results = list(key_and_grade_all(current, _works(5), render=False, workers=2))
    assert pools == [2]
    assert all(r.rekeyed and r.page is None for r in results)


def test_a_grader_crash_in_a_process_gives_an_invalid_verdict_and_a_failure_line(
    pools: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The processes are forked: a grader patched here crashes there too, on one answer only."""
    import quizapp.bank

    real = quizapp.bank.grade_answer

    def crash_on_text(variant: Any, answer: Any) -> Any:
        if answer == "not, a, vector":
            raise RuntimeError("grader on fire")
        return real(variant, answer)

    monkeypatch.setattr(quizapp.bank, "grade_answer", crash_on_text)
    current = load_exercise_source(MAPS_BACK, SOURCE)
    works = _works(5)
    results = list(key_and_grade_all(current, works, render=False, workers=2))
    assert pools == [2]
    for work, result in zip(works, results, strict=True):
        verdicts = [result.payloads[s.id] for s in work.subs]
        _check_verdicts(verdicts, _right(work.record["values"]))
        assert verdicts[2][0]["message"] == "The grader could not read this answer."
        assert len(result.failures) == 1
        assert "grader on fire" in result.failures[0]
        assert f"seed {work.record['seed']}" in result.failures[0]


def test_a_variant_the_current_version_cannot_key_is_reported_not_raised(
    pools: list[int],
) -> None:
    """The current version's answer needs a variable ``z`` the stored variants were not drawn
    with."""
    needs_z = SOURCE.replace(
        "  y: {vector: 2", "  z: {vector: 2, integers: [1, 2]}\n  y: {vector: 2"
    ).replace("answer: transpose(A) @ y", "answer: transpose(A) @ z")
    current = load_exercise_source(MAPS_BACK, needs_z)
    results = list(key_and_grade_all(current, _works(4), render=True, workers=2))
    assert pools == [2]
    assert all(r.unkeyable and "'z'" in r.unkeyable and r.payloads == {} for r in results)


def test_a_small_regrade_stays_in_this_process(pools: list[int]) -> None:
    """Below ``POOL_MIN_SUBMISSIONS`` submissions (and by default) no process is started."""
    current = load_exercise_source(MAPS_BACK, SOURCE)
    works = _works(3)
    assert sum(len(w.subs) for w in works) < regrade_work.POOL_MIN_SUBMISSIONS
    assert len(list(key_and_grade_all(current, works, render=False))) == 3
    assert pools == []


def test_a_regrade_from_a_request_thread_of_a_threaded_server(pools: list[int]) -> None:
    """The web page's regrade runs in one of the server's threads while others serve requests
    (here: one holding a lock and one logging): the forked processes inherit neither's work and
    the results are those of one process."""
    import logging
    import threading

    current = load_exercise_source(MAPS_BACK, SOURCE)
    works = _works(6)
    alone = [_plain(r) for r in key_and_grade_all(current, works, render=True, workers=1)]
    busy = threading.Lock()
    stop = threading.Event()

    def serve_others() -> None:
        while not stop.is_set():
            with busy:
                logging.getLogger("quizapp.test").debug("another request")

    others = [threading.Thread(target=serve_others) for _ in range(2)]
    spread: list[dict[str, Any]] = []
    regrade = threading.Thread(
        target=lambda: spread.extend(
            _plain(r) for r in key_and_grade_all(current, works, render=True, workers=2)
        )
    )
    for t in others:
        t.start()
    try:
        regrade.start()
        regrade.join(timeout=120)
    finally:
        stop.set()
        for t in others:
            t.join()
    assert not regrade.is_alive()
    assert pools == [2]
    assert spread == alone
