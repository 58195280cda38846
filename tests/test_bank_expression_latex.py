"""``expression_latex``: an expression exercise's worked solution names each step by its
formula, as math, not as code.  Each case's LaTeX is written out here; every expression of the
bundled bank converts, renders to MathML without errors, and its steps carry no backticks."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from quizapp.bank import load_bank
from quizapp.bank.expression_latex import expression_latex
from quizapp.bank.formula import latex_value
from quizapp.bank.precision import Precision, stated_precision
from quizapp.render import render_latex, render_markdown

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")

CASES = [
    ("q @ K.T / sqrt(4)", r"\frac{q K^{T}}{\sqrt{4}}"),
    ("softmax(x - c)", r"\mathrm{softmax}\left(x - c\right)"),
    ("transpose(A)", "A^{T}"),
    ("inv(A) @ b", "A^{-1} b"),
    ("(A @ B).T", r"\left(A B\right)^{T}"),
    ("det(A)", r"\det\left(A\right)"),
    ("Q = X @ W_Q", "Q = X W_{Q}"),
    ("a - (b - c)", r"a - \left(b - c\right)"),
    ("(a + b) ** 2", r"\left(a + b\right)^{2}"),
    ("a ** b ** c", "a^{b^{c}}"),
    ("-(a + b) * c", r"-\left(a + b\right) \cdot c"),
    ("softmax(S, axis=0)", r"\mathrm{softmax}\left(S, \mathrm{axis}=0\right)"),
    ("abs(x) + exp(y) + log(z)", r"\left|x\right| + \exp\left(y\right) + \ln\left(z\right)"),
    ("alpha * x_1 + pi", r"\alpha \cdot x_{1} + \pi"),
    ("A[0, 1] + A[:, 0]", "A[0, 1] + A[:, 0]"),
    ("1e-3 * x", r"0.001 \cdot x"),
    ("x if x > 0 else -x", r"x \text{ if } x > 0 \text{ else } -x"),
    # functions with a notation of their own, never \mathrm{name}(...)
    ("solve(A, y)", "A^{-1} y"),
    ("solve(A + B, y - z)", r"\left(A + B\right)^{-1} \left(y - z\right)"),
    ("norm(q)", r"\lVert q \rVert"),
    ("norm(q) * norm(k)", r"\lVert q \rVert \cdot \lVert k \rVert"),
    ("hstack(H1, H2)", r"\begin{bmatrix} H_{1} & H_{2} \end{bmatrix}"),
    ("vstack(A, B)", r"\begin{bmatrix} A \\ B \end{bmatrix}"),
    ("hstack(H1, H2) @ W_O", r"\begin{bmatrix} H_{1} & H_{2} \end{bmatrix} W_{O}"),
    ("argmax(s) + 1", r"\operatorname{arg\,max}_{i} s_{i}"),
    ("argmin(K @ q) + 1", r"\operatorname{arg\,min}_{i} \left(K q\right)_{i}"),
    ("argmax(s)", r"\operatorname{arg\,max}_{i} s_{i} - 1"),
    ("argmax(S, axis=0)", r"\operatorname{arg\,max}\left(S, \mathrm{axis}=0\right)"),
    ("outer(a, b)", "a b^{T}"),
    ("trace(A) + rank(A)", r"\operatorname{tr}\left(A\right) + \operatorname{rank}\left(A\right)"),
    ("eye(3)", "I_{3}"),
    ("[1, 2]", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"),
]

A2 = np.array([[1.0, 2.0], [3.0, 4.0]])
# cases whose notation depends on the variables' shapes: vectors bold, q @ k of two vectors a
# dot product, a list of vectors the matrix with those rows (transposed: those columns)
SHAPED = [
    ("q @ k", {"q": np.ones(3), "k": np.ones(3)}, r"\mathbf{q} \cdot \mathbf{k}"),
    ("A @ x", {"A": A2, "x": np.ones(2)}, r"A \mathbf{x}"),
    ("x @ E", {"x": np.ones(2), "E": A2}, r"\mathbf{x} E"),
    (
        "q @ k / (norm(q) * norm(k))",
        {"q": np.ones(3), "k": np.ones(3)},
        r"\frac{\mathbf{q} \cdot \mathbf{k}}{\lVert \mathbf{q} \rVert \cdot \lVert \mathbf{k} \rVert}",
    ),
    (
        "transpose([a, b])",
        {"a": np.ones(3), "b": np.ones(3)},
        r"\begin{pmatrix} \mathbf{a} & \mathbf{b} \end{pmatrix}",
    ),
    (
        "[a, b]",
        {"a": np.ones(3), "b": np.ones(3)},
        r"\begin{pmatrix} \mathbf{a}^{T} \\ \mathbf{b}^{T} \end{pmatrix}",
    ),
    (
        "transpose(a + b) @ A",
        {"a": np.ones(2), "b": np.ones(2), "A": A2},
        r"\left(\mathbf{a} + \mathbf{b}\right)^{T} A",
    ),
    ("transpose([s, t])", {"s": 1.0, "t": 2.0}, r"\begin{pmatrix} s \\ t \end{pmatrix}"),
]


@pytest.mark.parametrize(("text", "latex"), CASES)
def test_expressions_become_latex(text: str, latex: str) -> None:
    assert expression_latex(text) == latex
    assert "math-error" not in render_latex(latex, False)


@pytest.mark.parametrize(("text", "values", "latex"), SHAPED)
def test_expressions_on_shapes_become_latex(
    text: str, values: dict[str, object], latex: str
) -> None:
    assert expression_latex(text, values) == latex
    assert "math-error" not in render_latex(latex, False)


def test_text_that_is_not_an_expression_is_shown_in_monospace() -> None:
    assert expression_latex("a $ b_c") == r"\mathtt{a \$ b\_c}"


def _expression_exercises() -> list[str]:
    return sorted(e for e, ex in BANK.exercises.items() if ex.spec.kind == "expression")


@pytest.mark.parametrize("exercise_id", _expression_exercises())
def test_expression_solutions_are_math(exercise_id: str) -> None:
    for seed in range(3):
        variant = BANK.exercises[exercise_id].generate(seed)
        for step in variant.solution:
            assert "`" not in step.title and "`" not in step.text, (exercise_id, step.title)
            for text in (step.title, step.text):
                html = render_markdown(text)
                assert "math-error" not in html and "<code" not in html, (exercise_id, text)
        # each computed intermediate step is named by its formula (the author's explanation
        # steps, which come first, by their own titles)
        if variant.parts:  # each part's steps likewise (after its author's explanation steps),
            # ending with the part's answer
            specs = BANK.exercises[exercise_id].params.parts
            for part, spec in zip(variant.parts, specs, strict=True):
                explained = len(spec.explanation)
                assert [s.title for s in part.solution[:explained]] == [
                    e.title for e in spec.explanation
                ], exercise_id
                for step in part.solution[explained:-1]:
                    assert "<math" in render_markdown(step.title), (exercise_id, step.title)
                assert part.solution[-1].title == "Answer"
            continue
        authored = len(BANK.exercises[exercise_id].params.explanation)
        for step in variant.solution[authored:-1]:
            assert "<math" in render_markdown(step.title), (exercise_id, step.title)
        assert variant.solution[-1].title == "Answer"


def test_there_are_expression_exercises() -> None:
    assert len(_expression_exercises()) >= 5


def _last_number(text: str) -> str:
    """The last number written in a step's text (its value, or the value's last entry)."""
    return re.findall(r"-?\d+(?:\.\d+)?", text)[-1]


def test_solve_and_check_writes_the_solve_as_an_inverse() -> None:
    variant = BANK.exercises["01-linear-systems/06a-solve-and-check"].generate(0)
    answer = variant.parts[0].solution[-1].text
    assert answer.startswith(r"$A^{-1} \mathbf{y} = \begin{pmatrix}"), answer


def test_score_then_rank_shows_the_position_counted_from_1() -> None:
    variant = BANK.exercises["04-retrieval-and-softmax/04a-score-then-rank"].generate(7)
    rank = variant.parts[1]
    scores = np.asarray(variant.values["K"], dtype=float) @ np.asarray(variant.values["q"])
    position = int(np.argmax(scores)) + 1  # counted from 1, as the prompt's row numbers
    assert [step.title for step in rank.solution] == ["Answer"]  # no 0-based step
    assert rank.solution[-1].text == (
        rf"$\operatorname{{arg\,max}}_{{i}} \mathbf{{s}}_{{i}} = {position}$: the largest entry "
        rf"of $\mathbf{{s}}$ is entry {position}."
    )


def test_concat_then_project_writes_a_block_matrix() -> None:
    variant = BANK.exercises["05-attention/19-concat-then-project"].generate(0)
    assert variant.solution[-1].text.startswith(
        r"$\begin{bmatrix} H_{1} & H_{2} \end{bmatrix} W_{O} = "
    )


@pytest.mark.parametrize("seed", range(20))
def test_cosine_similarity_writes_norms_dot_products_and_2_decimals(seed: int) -> None:
    variant = BANK.exercises["04-retrieval-and-softmax/17-cosine-similarity"].generate(seed)
    q, k = (np.asarray(variant.values[n], dtype=float) for n in "qk")
    cosine = float(q @ k / (np.linalg.norm(q) * np.linalg.norm(k)))
    answer = variant.solution[-1].text
    assert answer.startswith(
        r"$\frac{\mathbf{q} \cdot \mathbf{k}}{\lVert \mathbf{q} \rVert \cdot \lVert \mathbf{k} "
        r"\rVert}"
    ), answer
    assert _last_number(answer) == f"{cosine:.2f}"  # "1.00", never "1", for 2 decimals


def test_an_integer_answer_of_a_2_decimal_prompt_is_written_with_2_decimals() -> None:
    two = Precision("decimals", 2)
    assert latex_value(1.0, two, final=True) == "1.00"  # a cosine of 1, as the prompt asks
    assert latex_value(-0.001, two, final=True) == "0.00"  # never "-0.00"
    assert latex_value(-6.0, two) == "-6"  # an exact intermediate integer stays exact
    assert latex_value(np.array([-1.5, -1.0]), two) == (
        r"\begin{pmatrix} -1.50 \\ -1.00 \end{pmatrix}"
    )
    assert (
        latex_value(np.array([1.0, 2.0]), two, row=True) == r"\begin{pmatrix} 1 & 2 \end{pmatrix}"
    )


def test_map_then_image_writes_the_images_as_columns() -> None:
    variant = BANK.exercises["02-matrices-and-maps/06a-map-then-image"].generate(0)
    assert (
        variant.parts[0]
        .solution[-1]
        .text.startswith(
            r"$\begin{pmatrix} \mathbf{a} & \mathbf{b} \end{pmatrix} = \begin{pmatrix}"
        )
    )


def test_embedding_lookup_keeps_x_e_a_row() -> None:
    variant = BANK.exercises["04-retrieval-and-softmax/15-embedding-lookup"].generate(0)
    row = np.asarray(variant.values["x"], dtype=float) @ np.asarray(variant.values["E"])
    cells = " & ".join(str(int(v)) for v in row)
    assert variant.solution[-1].text == (
        rf"$\mathbf{{x}} E = \begin{{pmatrix}} {cells} \end{{pmatrix}}$."
    )


def test_softmax_true_false_writes_a_tiny_weight_as_a_power_of_ten() -> None:
    variant = BANK.exercises["04-retrieval-and-softmax/14-softmax-true-false"].generate(12)
    texts = [step.text for step in variant.solution if "tiny, but positive" in step.text]
    assert texts, [step.text for step in variant.solution]
    m = re.search(r"about \$(\d\.\d) \\times 10\^\{(-\d+)\}\$: tiny, but positive", texts[0])
    assert m is not None, texts[0]
    shown = float(m[1]) * 10 ** int(m[2])
    assert 0 < shown < 1e-3
    assert "0.000000" not in texts[0]


_CODE_NAMES = re.compile(r"\\mathrm\{(solve|argmax|argmin|hstack|vstack|norm|dot|outer|trace)\}")


def _precision_problems(text: str, decimals: int | None) -> list[str]:
    """Numbers in ``text`` (outside subscripts) with more decimals than stated (``decimals``;
    None: exact, no decimals at all)."""
    text = re.sub(r"_\{[^{}]*\}", "", text)
    allowed = 0 if decimals is None else decimals
    return [n for n in re.findall(r"\d+\.(\d+)", text) if len(n) > allowed]


@pytest.mark.parametrize("exercise_id", _expression_exercises())
def test_no_code_names_and_no_extra_decimals_over_50_seeds(exercise_id: str) -> None:
    exercise = BANK.exercises[exercise_id]
    authored = len(exercise.params.explanation)
    for seed in range(50):
        variant = exercise.generate(seed)
        groups = (
            [(p.prompt, p.solution) for p in variant.parts]
            if variant.parts
            else [(variant.prompt, variant.solution[authored:])]
        )
        for prompt, steps in groups:
            precision = stated_precision(prompt) or stated_precision(variant.prompt)
            assert precision is not None, (exercise_id, prompt)
            decimals = precision.digits if precision.mode == "decimals" else None
            # the bank states exact values or decimal places; a significant-figures prompt
            # would need its own count here
            assert precision.mode in ("exact", "decimals"), (exercise_id, precision)
            for step in steps:
                for text in (step.title, step.text):
                    assert not _CODE_NAMES.search(text), (exercise_id, seed, text)
                    assert not _precision_problems(text, decimals), (exercise_id, seed, text)
