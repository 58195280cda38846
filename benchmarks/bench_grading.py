"""Figure 1: one ``quizapp.grading.grade()`` call vs the floor of ``numpy.isclose``.

Cases: a 4x4 matrix answer typed as text with fractions (``-7/4 3/4 ...`` on four lines), and a
2x2 linear system's solution (a vector typed ``(3, -2)``), both correct, with the default
tolerance (rtol 1e-2, atol 1e-8).  The floor is ``numpy.isclose`` on the already-parsed arrays
with the same tolerance: what no text-reading grader can beat.

The grader and the floor are timed in alternating runs (grader, floor, grader, ...), so a change
of the machine's load during the measurement affects both alike and the ratio stays meaningful.

Two more rows (no target of their own) time what the web's submit path calls,
``quizapp.bank.grade_answer``, on the bank's 2x2 system exercise: a correct answer posted as a
grid, and a wrong answer typed as text, for which every mistake detector runs (the HTTP
benchmark posts wrong answers).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.common import REPO, Result
from quizapp.grading import Tolerance, grade, parse_answer

TARGET_US = 100.0


def _cases() -> list[tuple[str, np.ndarray, str]]:
    rng = np.random.default_rng(7)
    num = rng.integers(-9, 10, (4, 4))
    den = rng.integers(2, 7, (4, 4))
    text = "\n".join(" ".join(f"{n}/{d}" for n, d in zip(rn, rd, strict=True)) for rn, rd in
                     zip(num, den, strict=True))  # fmt: skip
    a = np.array([[2.0, 1.0], [1.0, -3.0]])
    x = np.array([3.0, -2.0])
    assert np.allclose(np.linalg.solve(a, a @ x), x)
    return [
        ("4x4 matrix, text with fractions", num / den, text),
        ("2x2 system, vector answer", x, "(3, -2)"),
    ]


def _interleaved(
    fn: Callable[[], Any], floor: Callable[[], Any], *, repeat: int, number: int
) -> tuple[float, float]:
    """Median seconds per call of ``fn`` and of ``floor``, timed in alternating runs."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for f, out in ((fn, times[0]), (floor, times[1])):
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            out.append((time.perf_counter() - t0) / number)
    return statistics.median(times[0]), statistics.median(times[1])


def run(quick: bool = False) -> list[Result]:
    repeat, number = (5, 50) if quick else (15, 400)
    tol = Tolerance()
    results = []
    floor_fn: Callable[[], Any] = lambda: None  # noqa: E731 (set by the loop)
    for name, expected, text in _cases():
        verdict = grade(expected, text, tolerance=tol)
        assert verdict.status == "correct", (name, verdict)
        parsed = parse_answer(text).reshape(expected.shape)
        floor_fn = lambda p=parsed, e=expected: np.isclose(p, e, rtol=tol.rtol, atol=tol.atol)  # noqa: E731
        t, floor = _interleaved(lambda e=expected, s=text: grade(e, s, tolerance=tol), floor_fn,
                                repeat=repeat, number=number)  # fmt: skip
        results.append(
            Result(
                "1 grading",
                f"grade(): {name}",
                "µs",
                t * 1e6,
                TARGET_US,
                baseline=floor * 1e6,
                baseline_name="numpy.isclose on parsed arrays",
                note=f"median of {repeat} runs x {number} calls, alternating with the floor; "
                f"answer {text!r}",
            )
        )
    results.extend(_web_path(floor_fn, repeat, number))
    return results


def _web_path(floor_fn: Callable[[], Any], repeat: int, number: int) -> list[Result]:
    """``grade_answer`` on a variant of the bank's 2x2 system exercise (the HTTP benchmark's)."""
    from quizapp.bank import grade_answer, load_exercise_source

    source = (REPO / "exercises/01-linear-systems/06-two-by-two.yaml").read_text()
    variant = load_exercise_source("bench/system", source).generate(12345)
    x = np.asarray(variant.expected, dtype=float)
    grid = [[repr(float(v)) for v in x]]
    wrong = f"({x[0] + 1000:g}, {x[1] - 3:g})"
    results = []
    for what, answer, status in (
        ("correct answer posted as a grid", grid, "correct"),
        ("wrong answer as text, all detectors run", wrong, "incorrect"),
    ):
        assert grade_answer(variant, answer).status == status, (what, answer)
        n = number if status == "correct" else max(number // 4, 10)
        t, floor = _interleaved(lambda a=answer: grade_answer(variant, a), floor_fn,
                                repeat=repeat, number=n)  # fmt: skip
        results.append(
            Result(
                "1 grading",
                f"grade_answer() (web submit path): 2x2 system, {what}",
                "µs",
                t * 1e6,
                None,
                baseline=floor * 1e6,
                baseline_name="numpy.isclose on parsed arrays",
                note=f"median of {repeat} runs x {n} calls; answer {answer!r}; "
                f"detectors {('transpose', 'sign', 'scale', 'rounding', *variant.detectors)}",
            )
        )
    return results
