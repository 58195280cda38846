"""Figure 1: one ``quizapp.grading.grade()`` call vs the floor of ``numpy.isclose``.

Cases: a 4x4 matrix answer typed as text with fractions (``-7/4 3/4 ...`` on four lines), and a
2x2 linear system's solution (a vector typed ``(3, -2)``), both correct, with the default
tolerance (rtol 1e-2, atol 1e-8).  The floor is ``numpy.isclose`` on the already-parsed arrays
with the same tolerance: what no text-reading grader can beat.
"""

from __future__ import annotations

import numpy as np

from benchmarks.common import Result, median_time
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


def run(quick: bool = False) -> list[Result]:
    repeat, number = (5, 50) if quick else (15, 400)
    tol = Tolerance()
    results = []
    for name, expected, text in _cases():
        verdict = grade(expected, text, tolerance=tol)
        assert verdict.status == "correct", (name, verdict)
        parsed = parse_answer(text).reshape(expected.shape)
        t = median_time(lambda e=expected, s=text: grade(e, s, tolerance=tol), repeat=repeat,
                        number=number)  # fmt: skip
        floor = median_time(
            lambda p=parsed, e=expected: np.isclose(p, e, rtol=tol.rtol, atol=tol.atol),
            repeat=repeat,
            number=number,
        )
        results.append(
            Result(
                "1 grading",
                f"grade(): {name}",
                "µs",
                t * 1e6,
                TARGET_US,
                baseline=floor * 1e6,
                baseline_name="numpy.isclose on parsed arrays",
                note=f"median of {repeat} runs x {number} calls; answer {text!r}",
            )
        )
    return results
