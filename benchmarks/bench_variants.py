"""Figure 2: variant generation + prompt rendering, per kind of the bank.

For every kind used in ``exercises/`` (its first exercise, by id): ``Exercise.generate(seed)`` for
fresh seeds (never the same seed twice, so no cache helps) followed by
``quizapp.render.render_markdown`` of the prompt and of the hints (Markdown + LaTeX -> HTML with
MathML, what the exercise page shows).  The YAML is loaded once, as the server does (cached by
content hash).

The figure is wall-clock time.  The note also gives the CPU time of the measuring thread
(``time.thread_time``), which other processes on a shared machine inflate much less than the
wall clock (they delay us, but do not add to our CPU time), so it is the better estimate of the
idle-machine figure when the load average is high.
"""

from __future__ import annotations

import itertools
import statistics
import time

from benchmarks.common import REPO, Result
from quizapp.bank import load_bank
from quizapp.render import render_markdown

TARGET_MS = 2.0


def run(quick: bool = False) -> list[Result]:
    bank = load_bank(REPO / "exercises")
    by_kind: dict[str, object] = {}
    for ex_id in sorted(bank.exercises):
        ex = bank.exercises[ex_id]
        by_kind.setdefault(ex.spec.kind, ex)
    n = 15 if quick else 200
    seeds = itertools.count(10_000)
    results = []
    for kind, ex in sorted(by_kind.items()):
        for _ in range(3):  # warm up (imports, template compilation)
            v = ex.generate(next(seeds))
            render_markdown(v.prompt)
        times, gen_times, cpu_times = [], [], []
        for _ in range(n):
            seed = next(seeds)
            c0 = time.thread_time()
            t0 = time.perf_counter()
            v = ex.generate(seed)
            t1 = time.perf_counter()
            render_markdown(v.prompt)
            for hint in v.hints or []:
                render_markdown(hint)
            times.append(time.perf_counter() - t0)
            cpu_times.append(time.thread_time() - c0)
            gen_times.append(t1 - t0)
        ms = statistics.median(times) * 1e3
        gen_ms = statistics.median(gen_times) * 1e3
        cpu_ms = statistics.median(cpu_times) * 1e3
        results.append(
            Result(
                "2 variants",
                f"generate + render: {kind}",
                "ms",
                ms,
                TARGET_MS,
                note=f"{ex.id}, median of {n} fresh seeds: generate {gen_ms:.2f} ms + render "
                f"{ms - gen_ms:.2f} ms; CPU time {cpu_ms:.2f} ms",
                extra={"generate_ms": gen_ms, "render_ms": ms - gen_ms, "cpu_ms": cpu_ms},
            )
        )
    return results
