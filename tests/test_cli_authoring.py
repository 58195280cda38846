"""``quizapp validate``, ``check``, ``preview`` (and ``grade EXERCISE_ID``) on small banks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from quizapp.bank import load_bank
from quizapp.cli import main

SOLVE = """\
title: Solve a 2x2 system
kind: expression
tolerance: {sigfig: 4}
variables:
  A: {matrix: [2, 2], integers: [-4, 4]}
  b: {vector: 2, integers: [-5, 5]}
require:
  - det(A) != 0
answer: solve(A, b)
prompt: "Solve $A x = b$ for $A = {{ A }}$ and $b = {{ b }}$, to 4 significant figures."
hints:
  - "Compute $\\\\det A = {{ A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0] }}$ first."
"""


def make_bank(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    return make_bank(
        tmp_path / "exercises",
        {"systems/quiz.yaml": "title: Systems\n", "systems/solve.yaml": SOLVE},
    )


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_validate_ok_prints_summary(bank: Path) -> None:
    code, out, _ = run("validate", str(bank))
    assert (code, out) == (0, "OK: 1 quiz, 1 exercise, no problems.\n")


def test_validate_defaults_to_exercises_folder(bank: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(bank.parent)
    assert run("validate")[0] == 0


def test_validate_reports_every_problem_of_every_file(bank: Path) -> None:
    make_bank(
        bank,
        {
            "systems/typo.yaml": SOLVE.replace("tolerance:", "tolerence:"),
            "systems/escape.yaml": SOLVE.replace("solve(A, b)", "().__class__"),
            "systems/tab.yaml": SOLVE.replace("  A:", "\tA:"),
        },
    )
    code, out, err = run("validate", str(bank))
    assert code == 1
    lines = out.splitlines()
    assert lines == [
        f"{bank}/systems/escape.yaml:9:9: answer: the attribute .__class__ is not allowed "
        "(only .T, the transpose) in '().__class__'",
        f"{bank}/systems/tab.yaml:5:1: tab character in indentation: YAML indents with spaces only",
        f"{bank}/systems/typo.yaml:3:1: unknown key 'tolerence': did you mean 'tolerance'?",
    ]
    assert "3 problems found." in err


def test_validate_a_single_file(bank: Path) -> None:
    path = bank / "systems" / "solve.yaml"
    assert run("validate", str(path))[0] == 0
    path.write_text(SOLVE.replace("{{ b }}", "{{ c }}"))
    code, out, _ = run("validate", str(path))
    assert code == 1 and re.match(rf"{path}:10:9: prompt: unknown placeholder {{{{ c }}}}", out)


def test_validate_shared_bad_yaml_folder(cases_dir: Path) -> None:
    code, out, _ = run("validate", str(cases_dir / "bad-yaml"))
    assert code == 1
    for name in (
        "tab-indent.yaml:5:",
        "duplicate-key.yaml:6:",
        "python-tag.yaml:1:",
        "wrong-type.yaml:3:",
    ):
        assert name in out


def test_check_passes_a_good_bank(bank: Path) -> None:
    code, out, _ = run("check", str(bank), "--seeds", "30")
    assert code == 0, out
    assert out.splitlines()[-1] == "1 exercise x 30 seeds: 0 failures in 0 exercises."


def test_check_reports_failing_seeds(bank: Path) -> None:
    # inv fails for singular A: no require guards it, so some seeds fail and are named.
    make_bank(
        bank,
        {
            "systems/inverse.yaml": SOLVE.replace("det(A) != 0", "A[0, 0] != 99").replace(
                "solve(A, b)", "inv(A)"
            )
        },
    )
    code, out, _ = run("check", str(bank), "--seeds", "60")
    assert code == 1
    answer_line = next(
        i
        for i, t in enumerate((bank / "systems/inverse.yaml").read_text().splitlines(), 1)
        if t.startswith("answer:")
    )
    failing = [
        int(s)
        for s in re.findall(
            rf"inverse\.yaml:{answer_line}:\d+: systems/inverse seed (\d+): answer: "
            r"cannot generate a variant: inv\(\): .*singular",
            out,
        )
    ]
    assert failing, out
    # Independently: the seeds whose first draw is singular (require always holds here); the
    # first three are printed, the rest counted.
    singular = [seed for seed in range(60) if abs(np.linalg.det(_draw_a(seed))) < 1e-9]
    assert failing == singular[:3]
    assert re.search(
        rf"systems/inverse: {len(singular) - 3} more seeds failed with: answer: cannot generate "
        r"a variant: inv\(\): .*singular",
        out,
    )
    # The summary counts every failing seed, the folded ones too (not the lines printed).
    summary = re.search(r"(\d+) failures? in (\d+) exercises?", out)
    assert summary is not None and int(summary.group(1)) >= len(singular), out


def _draw_a(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-4, 4, size=(2, 2), endpoint=True).astype(float)


def test_check_reports_impossible_require_and_constant_exercises(bank: Path) -> None:
    make_bank(
        bank,
        {
            "systems/never.yaml": SOLVE.replace("det(A) != 0", "det(A) != det(A)"),
            "systems/constant.yaml": SOLVE.replace("integers: [-4, 4]", "integers: [2, 2]")
            .replace("integers: [-5, 5]", "integers: [1, 1]")
            .replace("det(A) != 0", "all(A == A)")
            .replace("solve(A, b)", "A @ b"),
        },
    )
    code, out, _ = run("check", str(bank), "--seeds", "20")
    assert code == 1
    # A file that can never produce a variant fails validation at the constraint's line.
    line = next(
        i
        for i, t in enumerate((bank / "systems/never.yaml").read_text().splitlines(), 1)
        if "det(A) != det(A)" in t
    )
    assert re.search(
        rf"never\.yaml:{line}:\d+: require\[1\]: cannot generate a variant: "
        r"require 'det\(A\) != det\(A\)' never held in 1000 draws",
        out,
    ), out
    assert "systems/constant: all 20 variants are identical" in out


def test_check_shows_progress_on_long_runs(bank: Path) -> None:
    code, _, err = run("check", str(bank), "--seeds", "250")
    assert code == 0 and "Checking" in err


def test_preview_shows_prompt_answer_and_solution(bank: Path) -> None:
    code, out, _ = run("preview", "systems/solve", "--seed", "4", "--bank", str(bank))
    assert code == 0, out
    v = load_bank(bank).exercises["systems/solve"].generate(4)
    a, b = v.values["A"], v.values["b"]
    x = np.linalg.solve(a, b)
    assert "Solve a 2x2 system  (systems/solve, seed 4, expression)" in out
    assert v.prompt in out
    assert "Answer form: vector, 2, grid shown" in out
    shown = re.search(r"Expected answer:\n\s+\[ (.*) \]", out)
    assert shown and np.allclose([float(t) for t in shown.group(1).split()], x, rtol=1e-5)
    assert "Worked solution" in out and "A^{-1} \\mathbf{b}" in out  # mathematics, not solve(A, b)
    assert "\\mathrm{solve}" not in out
    det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
    assert f"Compute $\\det A = {int(det)}$ first." in out


def test_preview_unknown_exercise_suggests(bank: Path) -> None:
    code, out, err = run("preview", "systems/solv", "--bank", str(bank))
    assert code == 1 and "Did you mean systems/solve?" in (out + err)


def test_grade_exercise_id_end_to_end(bank: Path) -> None:
    v = load_bank(bank).exercises["systems/solve"].generate(11)
    x = np.linalg.solve(v.values["A"], v.values["b"])
    right = " ".join(f"{c:.6f}" for c in x)
    code, out, _ = run(
        "grade", "systems/solve", "--seed", "11", "--answer", right, "--bank", str(bank), "--json"
    )
    assert code == 0 and json.loads(out)["status"] == "correct"
    wrong = " ".join(f"{-c:.6f}" for c in x)
    code, out, _ = run(
        "grade", "systems/solve", "--seed", "11", "--answer", wrong, "--bank", str(bank), "--json"
    )
    verdict = json.loads(out)
    assert code == 0 and verdict["status"] == "incorrect" and verdict["score"] == 0.0


def test_check_reports_the_shared_impossible_require_quickly(
    cases_dir: Path, tmp_path: Path
) -> None:
    import time

    source = (cases_dir / "bad-yaml" / "impossible-require.yaml").read_text()
    root = make_bank(
        tmp_path / "b", {"q/quiz.yaml": "title: Q\n", "q/impossible-require.yaml": source}
    )
    started = time.monotonic()
    code, out, _ = run("check", str(root), "--seeds", "200")
    assert time.monotonic() - started < 30
    assert code == 1
    assert (
        "impossible-require.yaml:7:5: require[1]: cannot generate a variant: "
        "require 'det(A) != det(A)' never held" in out
    ), out


def test_course_yaml_at_the_bank_root_is_course_settings_not_an_exercise(bank: Path) -> None:
    (bank / "course.yaml").write_text("weights:\n  systems: 100\n  sytems: 5\n")
    assert not load_bank(bank).errors
    code, out, err = run("validate", str(bank))
    assert (code, out) == (0, "OK: 1 quiz, 1 exercise, no problems.\n")
    assert "there is no quiz 'sytems'" in err


def test_invalid_course_yaml_fails_validation_with_its_line(bank: Path) -> None:
    (bank / "course.yaml").write_text("weights:\n  systems: heavy\n")
    code, out, _ = run("validate", str(bank))
    assert code == 1
    assert f"{bank / 'course.yaml'}:2" in out
