"""Markdown + LaTeX to safe HTML with MathML."""

from __future__ import annotations

import re

import pytest

from quizapp.render import render_latex, render_markdown


def test_inline_and_display_math() -> None:
    html = render_markdown("Compute $A^T$.\n\n$$\n\\frac{1}{2}\n$$\n")
    assert html.startswith("<p>Compute <math ")
    assert "<msup><mi>A</mi><mi>T</mi></msup>" in html
    assert (
        '<div class="math-display"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block">'
        in html
    )
    assert "<mfrac>" in html


def test_matrix_from_a_rendered_template() -> None:
    html = render_latex(r"\begin{pmatrix} 1 & -2 \\ 0.5 & 4 \end{pmatrix}")
    assert html.count("<mtr>") == 2 and html.count("<mtd>") == 4
    assert "<mn>0.5</mn>" in html


def test_dollars_that_are_not_math() -> None:
    assert render_markdown("Costs $5 and $6 today.") == "<p>Costs $5 and $6 today.</p>\n"
    assert render_markdown(r"A \$ sign") == "<p>A $ sign</p>\n"
    # dollarmath's rules: no digit just outside an inline formula, no space just inside it
    assert render_markdown("x2$y$") == "<p>x2$y$</p>\n"
    assert render_markdown("pay $ 5 $ now") == "<p>pay $ 5 $ now</p>\n"
    one = render_markdown("$a $b$")
    assert one.startswith("<p>$a <math") and one.count("<math") == 1 and "<mi>b</mi>" in one


def test_display_math_inside_a_paragraph_and_as_a_block() -> None:
    inline = render_markdown("so $$x^2$$ holds")
    assert inline.startswith("<p>so <math") and 'display="block"' in inline
    assert '<div class="math-display">' not in inline
    block = render_markdown("Compute\n$$\nx^2\n\ny\n$$\nnow")  # interrupts the paragraph
    assert block.startswith('<p>Compute</p>\n<div class="math-display"><math')
    assert block.endswith("</math></div>\n<p>now</p>\n")


def test_bad_latex_is_shown_escaped_never_raises() -> None:
    html = render_markdown(r"Bad $\frac{<b>}{$ here")
    assert '<code class="math-error">$\\frac{&lt;b&gt;}{$</code>' in html
    assert render_latex("\\begin{pmatrix").startswith('<code class="math-error">')


XSS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "![x](data:text/html;base64,PHNjcmlwdD4=)",
    "$\\text{<script>alert(1)</script>}$",
    '$\\text{"><img src=x onerror=alert(1)>}$',
    "$$\\mathrm{<iframe src=javascript:alert(1)>}$$",
    "`<script>`",
    "<a href='x' onclick='alert(1)'>x</a>",
    "$x$<svg onload=alert(1)>",
]


SAFE_TAGS = {"p", "code", "div", "a", "img", "strong", "em"} | {
    "math",
    "mrow",
    "mi",
    "mn",
    "mo",
    "mtext",
    "msup",
    "msub",
    "mfrac",
    "msqrt",
    "mtable",
    "mtr",
    "mtd",
}


@pytest.mark.parametrize("payload", XSS)
def test_render_markdown_is_xss_safe(payload: str) -> None:
    html = render_markdown(payload)
    for name, attrs in re.findall(r"<([a-zA-Z]+)([^>]*)>", html):
        assert name.lower() in SAFE_TAGS - {"img"} or (name == "img" and "data:" not in attrs), html
        assert not re.search(r"\bon[a-z]+\s*=", attrs, re.I), html
        for url in re.findall(r'(?:href|src)="([^"]*)"', attrs):
            assert not url.lower().startswith(("javascript:", "data:", "vbscript:")), html
    assert "<script" not in html.lower() and "<iframe" not in html.lower()


def test_text_inside_math_keeps_its_characters_escaped() -> None:
    html = render_latex(r"\text{a < b & c > d}").replace("\xa0", " ")
    assert "<mtext>a &lt; b &amp; c &gt; d</mtext>" in html


def test_math_output_keeps_only_mathml() -> None:
    html = render_markdown("$x + y$ and $$\\sqrt{2}$$")
    tags = set(re.findall(r"</?([a-z]+)", html))
    assert tags <= {"p", "math", "mrow", "mi", "mo", "mn", "msqrt"}


def test_render_value() -> None:
    import numpy as np

    from quizapp.render import render_value

    html = render_value(np.array([[1.0, 0.5], [-2.0, 3.0]]), display=True)
    assert 'display="block"' in html and html.count("<mtr>") == 2
    assert "<mn>0.5</mn>" in html and "<mn>2</mn>" in html
    assert render_value(4.0).count("<mn>4</mn>") == 1
    assert render_value("<b>") == '<span class="value">&lt;b&gt;</span>'
    assert render_value(np.zeros((2, 2, 2))).startswith("<code>")
