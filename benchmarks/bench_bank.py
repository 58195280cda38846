"""Figure 5: validate + sync of 1,000 generated YAML exercises; ``quizapp check`` throughput.

The 1,000 exercises are the real bank's exercise files copied round-robin into 25 quiz folders of
40 (each copy with its own title, so every file is a distinct version), all kinds included.
Timed: ``load_bank`` (parse + validate every file) then ``services.sync_bank`` into a fresh,
migrated SQLite database (first sync: every quiz, exercise and version inserted), one run.
``quizapp check``: ``check_exercise`` (generate, constraints, render, self-grade) over every
exercise of the real bank, in variants per second.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.common import REPO, Result, app_for, make_instance

TARGET_SYNC_S = 3.0
N_QUIZZES = 25
PER_QUIZ = 40


def _generate(root: Path, n_quizzes: int, per_quiz: int) -> int:
    sources = sorted(p for p in (REPO / "exercises").glob("*/*.yaml") if p.name != "quiz.yaml")
    k = 0
    for q in range(n_quizzes):
        folder = root / f"q{q:02d}"
        folder.mkdir(parents=True)
        (folder / "quiz.yaml").write_text(f"title: Generated quiz {q}\norder: {q}\n")
        for i in range(per_quiz):
            text = sources[k % len(sources)].read_text()
            lines = text.splitlines()
            for j, line in enumerate(lines):
                if line.startswith("title:"):
                    lines[j] = f"title: Generated exercise {k}"
                    break
            (folder / f"e{i:03d}.yaml").write_text("\n".join(lines) + "\n")
            k += 1
    return k


def run(quick: bool = False) -> list[Result]:
    from quizapp import services
    from quizapp.bank import load_bank
    from quizapp.bank.check import check_exercise
    from quizapp.models import db

    n_quizzes, per_quiz = (3, 10) if quick else (N_QUIZZES, PER_QUIZ)
    with tempfile.TemporaryDirectory(prefix="quizapp-bench-bank-") as tmp:
        root = Path(tmp)
        n = _generate(root / "exercises", n_quizzes, per_quiz)
        env = make_instance(root / "instance", root / "exercises", root / "bank.sqlite")
        app = app_for(env)
        with app.app_context():
            t0 = time.perf_counter()
            bank = load_bank(root / "exercises")
            t1 = time.perf_counter()
            report = services.sync_bank(db.session, bank, root / "exercises")
            t2 = time.perf_counter()
            assert not bank.errors, bank.errors[:3]
            assert len(bank.exercises) == n and report.ok, report.summary()
            db.engine.dispose()

    real = load_bank(REPO / "exercises")
    seeds = range(3) if quick else range(20)
    t0c = time.perf_counter()
    failures = []
    for ex in real.exercises.values():
        failures += check_exercise(ex, seeds)
    dt = time.perf_counter() - t0c
    n_variants = len(real.exercises) * len(seeds)
    return [
        Result(
            "5 bank",
            f"validate + sync of {n:,} YAML exercises",
            "s",
            t2 - t0,
            TARGET_SYNC_S if not quick else TARGET_SYNC_S * n / 1000,
            note=f"load_bank (parse + validate) {t1 - t0:.2f} s + sync_bank (first sync into "
            f"an empty SQLite) {t2 - t1:.2f} s",
        ),  # fmt: skip
        Result(
            "5 bank",
            "quizapp check throughput",
            "variants/s",
            n_variants / dt,
            None,
            lower_is_better=False,
            note=f"{len(real.exercises)} exercises x {len(seeds)} seeds; {len(failures)} failures",
        ),  # fmt: skip
    ]
