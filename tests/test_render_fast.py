"""The numeric-matrix shortcut of ``render_latex`` gives exactly latex2mathml's (sanitized) output.

``render._convert_latex.__wrapped__`` is the slow path without its cache: latex2mathml on the
whole formula, then the MathML allow-list sanitizer.  Every comparison here is string equality.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp import render
from quizapp.bank import load_bank
from quizapp.render import render_latex, render_markdown

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")
ENVIRONMENTS = ["pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "matrix"]
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def slow(tex: str, display: bool) -> str:
    """latex2mathml + sanitizer on the whole formula, bypassing every cache and shortcut."""
    return render._convert_latex.__wrapped__(tex, display)


numbers = st.one_of(
    st.integers(-(10**12), 10**12).map(str),
    st.from_regex(r"-?[0-9]{1,4}\.[0-9]{1,4}", fullmatch=True),
    st.from_regex(r"-?0[0-9]{1,3}", fullmatch=True),  # leading zeros
    st.just("?"),
)
spaces = st.sampled_from(["", " ", "  ", "\n", " \n "])


@st.composite
def matrices(draw: st.DrawFn) -> str:
    env = draw(st.sampled_from(ENVIRONMENTS))
    n_rows = draw(st.integers(1, 4))
    n_cols = draw(st.integers(1, 4))
    rows = []
    for _ in range(n_rows):
        cells = [draw(spaces) + draw(numbers) + draw(spaces) for _ in range(n_cols)]
        rows.append("&".join(cells))
    body = "\\\\".join(rows)
    return f"\\begin{{{env}}}{draw(spaces)}{body}\\end{{{env}}}"


# Where a matrix can stand: ordinary, under fonts/styles, reordered by MathML (mroot, mover),
# inside text, a comment or \verb (where it is not a matrix), next to \\ and alignment.
CONTEXTS = [
    "{m}",
    "A = {m}, \\qquad B = {n}.",
    "T\\left({m}\\right) = {n}",
    "{m}^T {n}_2",
    "\\sqrt[{m}]{{{n}}}",
    "\\overset{{{m}}}{{{n}}}",
    "\\frac{{{m}}}{{{n}}}",
    "\\mathbf{{{m}}} + \\boldsymbol{{{n}}}",
    "\\mathbb{{{m}}}",
    "\\mathrm{{{m}}} \\mathit{{{n}}}",
    "\\displaystyle {m} \\scriptstyle {n}",
    "\\color{{red}}{m}",
    "\\text{{a <b> & c}} {m}",
    "x % {m}\n + {n}",
    "\\verb|{m}| {n}",
    "\\\\{m}",
    "\\begin{{aligned}} a &= {m} \\\\ b &= {n} \\end{{aligned}}",
    "\\begin{{pmatrix}} {m} & 1 \\end{{pmatrix}}",
    "\\begin{{array}}{{cc}} {m} & {n} \\end{{array}}",
    "{m} \\begin{{pmatrix}} x & 1 \\end{{pmatrix}} {n}",
    "\\left. {m} \\right| {n}",
]


@settings(max_examples=400, deadline=None)
@given(
    context=st.sampled_from(CONTEXTS),
    m=matrices(),
    n=matrices(),
    display=st.booleans(),
)
def test_shortcut_equals_latex2mathml(context: str, m: str, n: str, display: bool) -> None:
    tex = context.format(m=m, n=n)
    expected = slow(tex, display)
    assert render._render_numeric_matrices(tex, display) in (None, expected)
    assert render_latex(tex, display) == expected


@pytest.mark.parametrize("exercise_id", sorted(BANK.exercises))
def test_bank_formulas_render_as_latex2mathml_does(exercise_id: str) -> None:
    """Every formula of every prompt, hint and solution step, for a few seeds."""
    exercise = BANK.exercises[exercise_id]
    for seed in (1, 2, 77):
        variant = exercise.generate(seed)
        texts = [variant.prompt, *variant.hints]
        texts += [f"{step.title}\n\n{step.text}" for step in variant.solution]
        for text in texts:
            for m in MATH.finditer(text):
                display = m.group(1) is not None
                tex = (m.group(1) or m.group(2)).strip()
                assert render_latex(tex, display) == slow(tex, display), tex


def test_shortcut_applies_to_the_template_filter_output() -> None:
    """The form the ``latex`` filter emits takes the shortcut (so it cannot silently decline)."""
    tex = r"Q = \begin{pmatrix} 1 & -2 \\ 0.25 & 3 \end{pmatrix}, \quad x = \begin{pmatrix} ? \\ -0.5 \end{pmatrix}"
    fast = render._render_numeric_matrices(tex, True)
    assert fast is not None
    assert fast == slow(tex, True)
    assert "<mtd><mo>\u2212</mo><mn>2</mn></mtd>" in fast
    assert "<mtd><mn>0.25</mn></mtd>" in fast
    assert "<mtd><mo>?</mo></mtd>" in fast


def test_same_skeleton_different_numbers_never_share_a_result() -> None:
    """The cached skeleton is shared across seeds; the numbers must still be each formula's own."""
    a = render_latex(r"A = \begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}")
    b = render_latex(r"A = \begin{pmatrix} 5 & 6 \\ 7 & 8 \end{pmatrix}")
    assert [int(x) for x in re.findall(r"<mn>(\d+)</mn>", a)] == [1, 2, 3, 4]
    assert [int(x) for x in re.findall(r"<mn>(\d+)</mn>", b)] == [5, 6, 7, 8]


@pytest.mark.parametrize(
    "tex",
    [
        r"\begin{pmatrix} <script>alert(1)</script> \end{pmatrix}",
        r"\begin{pmatrix} 1 & \text{<img src=x onerror=alert(1)>} \end{pmatrix}",
        r"\begin{pmatrix} 1 \\ 2 \end{pmatrix} \text{</math><script>x</script>}",
        r"\begin{pmatrix} 1 & 9081726354 \end{pmatrix}",  # the stand-in's own digits
        r"\begin{pmatrix} 1 &  \end{pmatrix}",
        r"\begin{pmatrix} 1 \\ \end{pmatrix}",
        r"\begin{pmatrix} 1e5 & +3 & .5 & 1. \end{pmatrix}",
    ],
)
def test_unusual_bodies_match_the_slow_path_and_stay_safe(tex: str) -> None:
    for display in (False, True):
        html = render_latex(tex, display)
        assert html == slow(tex, display)
        assert "<script" not in html and "<img" not in html


def test_markdown_with_many_matrices_matches_the_slow_path() -> None:
    text = (
        "Let\n\n$$ "
        + ", ".join(f"M_{i} = \\begin{{pmatrix}} {i} & -{i} \\end{{pmatrix}}" for i in range(40))
        + " $$\n"
    )
    html = render_markdown(text)
    tex = text.split("$$")[1].strip()
    assert slow(tex, True) in html


# --- the sanitizer's cached helpers rebuild exactly what the plain loop rebuilt ---------------


def reference_sanitize(raw: str) -> str:
    """The sanitizer as it was before its text and start tags were cached (the reference)."""
    import html as html_module

    def text(raw_text: str) -> str:
        out = html_module.escape(html_module.unescape(raw_text), quote=False)
        for char, entity in render._PROTECTED.items():
            out = out.replace(char, entity)
        return out

    out: list[str] = []
    stack: list[str] = []
    for m in render._TOKEN.finditer(raw):
        if m.group("text") is not None:
            out.append(text(m.group("text")))
            continue
        if m.group("lt") is not None:
            out.append("&lt;")
            continue
        tag = m.group("tag").lower()
        if tag not in render._MATHML_ELEMENTS:
            continue
        if m.group("close"):
            if tag in stack:
                while stack:
                    top = stack.pop()
                    out.append(f"</{top}>")
                    if top == tag:
                        break
            continue
        parts = [tag]
        if tag == "math":
            parts.append(f'xmlns="{render._MATHML_NS}"')
        for am in render._ATTR.finditer(m.group("attrs")):
            name = am.group(1).lower()
            value = next((g for g in am.group(2, 3, 4) if g is not None), None)
            if name in render._MATHML_ATTRIBUTES and value is not None:
                parts.append(
                    f'{name}="{html_module.escape(html_module.unescape(value), quote=True)}"'
                )
        out.append("<" + " ".join(parts) + ">")
        if m.group("selfclose"):
            out.append(f"</{tag}>")
        else:
            stack.append(tag)
    while stack:
        out.append(f"</{stack.pop()}>")
    return "".join(out)


fragments = st.sampled_from(
    [
        "<math>", "</math>", "<mrow>", "</mrow>", "<mi>", "</mi>", "<MO stretchy='true'>",
        "</mo>", '<mn fence="x&amp;y">', "<script>", "</script>", "<mspace width=1em/>",
        '<mi onclick="alert(1)" mathvariant="bold">', "<", ">", "&", "&amp;", "&lt;b&gt;",
        "&#x0003D;", "\ue000", "\ue002", "x", " ", "é", '<mtd columnalign = "left" >', "</mtd>",
        "<mtable>", "</mtable>", "<a href='javascript:x'>", "</a>", "<mi/>", "<!-- c -->",
    ]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(parts=st.lists(st.one_of(fragments, st.text(max_size=5)), max_size=30))
def test_sanitizer_equals_the_reference(parts: list[str]) -> None:
    raw = "".join(parts)
    assert render._sanitize_mathml(raw) == reference_sanitize(raw)


def test_sanitizer_equals_the_reference_on_the_bank() -> None:
    from latex2mathml.converter import convert

    for ex_id in sorted(BANK.exercises):
        variant = BANK.exercises[ex_id].generate(5)
        for text in [variant.prompt, *variant.hints]:
            for m in MATH.finditer(text):
                tex = render._protect_text(
                    render._rewrite_environments((m.group(1) or m.group(2)).strip())
                )
                try:
                    raw = convert(tex)
                except Exception:  # noqa: BLE001 - formulas latex2mathml refuses are not at issue
                    continue
                assert render._sanitize_mathml(raw) == reference_sanitize(raw)


def test_shortcut_declines_if_the_standin_cannot_be_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should latex2mathml ever fail on the stand-in, formulas are converted whole (no crash)."""
    tex = r"A = \begin{pmatrix} 1 & 2 \end{pmatrix}"
    monkeypatch.setattr(render, "_standin_mtable", lambda k, display: "<no-such-element>")
    assert render._render_numeric_matrices(tex, False) is None
    assert render.render_latex.__wrapped__(tex, False) == slow(tex, False)


def _one_formula_fast(text: str) -> str | None:
    """The one-formula shortcut of ``render_markdown`` alone: None when ``text`` is not one."""
    one = render._ONE_FORMULA.fullmatch(text)
    if one is None:
        return None
    return "<p>" + render_latex(one.group(1), False) + one.group(2) + "</p>\n"


_CHARS = st.sampled_from(list("$\\{}^_ax1.,;: \n*<&`[]()|#-+"))
formula_texts = st.one_of(
    st.text(alphabet=_CHARS, min_size=1, max_size=14),
    st.builds(
        lambda inner, after: "$" + inner + "$" + after,
        st.text(alphabet=_CHARS, min_size=1, max_size=12),
        st.sampled_from(["", ".", ",", ";", ":", "1", " ", "$", ".\n"]),
    ),
)


@settings(max_examples=1500, deadline=None)
@given(formula_texts)
def test_a_one_formula_text_renders_as_markdown_it_renders_it(text: str) -> None:
    """Wherever the shortcut applies, its HTML is markdown-it's (with the dollarmath rules and
    our math renderer) for the same text, character for character; odd texts (a dollar, a
    backslash or a space at the edges, a digit after the formula) are left to markdown-it."""
    fast = _one_formula_fast(text)
    if fast is not None:
        assert fast == render._MD.render(text)


@pytest.mark.parametrize(
    "text",
    [
        "$x$",
        "$x$.",
        r"$A^T \mathbf{y} = \begin{pmatrix} 1 \\ -2 \end{pmatrix}$.",
        "$a < b \\& c$,",
        "$x_1$;",
    ],
)
def test_worked_steps_take_the_one_formula_shortcut(text: str) -> None:
    fast = _one_formula_fast(text)
    assert fast is not None and fast == render._MD.render(text) == render_markdown(text)


@pytest.mark.parametrize("text", ["$ x$", "$x $", "$x$5", r"$x\$", "$x$$", "$x$ and $y$", "$x$\n"])
def test_texts_outside_the_shortcut_are_left_to_markdown_it(text: str) -> None:
    assert render._ONE_FORMULA.fullmatch(text) is None


def test_every_one_formula_text_of_the_bank_renders_as_markdown_it() -> None:
    """The worked steps, hints and part steps of every bundled exercise (5 seeds each)."""
    texts: set[str] = set()
    for exercise in BANK.exercises.values():
        for seed in range(5):
            try:
                variant = exercise.generate(seed)
            except Exception:  # noqa: BLE001 - a seed that does not generate has no text
                continue
            steps = list(variant.solution) + [s for p in variant.parts for s in p.solution]
            texts.update(t for s in steps for t in (s.title, s.text or ""))
            texts.update(variant.hints or [])
    shortcut = [t for t in texts if _one_formula_fast(t) is not None]
    assert len(shortcut) > 100
    for text in shortcut:
        assert _one_formula_fast(text) == render._MD.render(text), text
