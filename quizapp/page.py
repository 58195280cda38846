"""A variant's page: what a student is shown, rendered to HTML once, when the variant is created.

:func:`render_page` turns a :class:`quizapp.bank.Variant` into the JSON document stored with the
variant (``variants.page``): the prompt, hints and choices as HTML with MathML, the worked
solution's steps (text, value, attention heatmap as SVG) and a correct answer (HTML and text).
Pages read it back and never render a stored variant again, so neither a new version of
latex2mathml nor a change of a kind's code alters what a student saw.

Also the building blocks the pages use for values shown at view time: numbers as students see
them (:func:`format_number`), matrices as MathML (:func:`value_html`), Markdown with ``$...$``
LaTeX (:func:`markdown_html`), heatmaps (:func:`heatmap_svg`).  Pure: no Flask, no database.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
from markupsafe import Markup, escape

#: Version of the stored page's layout (``page["format"]``).
FORMAT = 1


def format_number(x: Any) -> str:
    """A number as shown to students: integers without decimals, others to 4 significant digits.

    ``2.0 -> "2"``, ``0.123456 -> "0.1235"``, ``-1e-12 -> "0"``, ``nan -> "NaN"``.
    """
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if abs(v) < 5e-13:
        return "0"
    if abs(v - round(v)) < 1e-9 and abs(v) < 1e15:
        return str(int(round(v)))
    text = f"{v:.4g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return text


def _latex_number(x: Any) -> str:
    text = format_number(x)
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant} \\times 10^{{{exp}}}"
    return text.replace("∞", "\\infty")


def value_latex(value: Any) -> str:
    """LaTeX of a scalar, vector (as a column) or matrix (``pmatrix``)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        return str(value)
    if arr.ndim == 0:
        return _latex_number(arr.item())
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        return str(value)
    rows = [" & ".join(_latex_number(v) for v in row) for row in arr.tolist()]
    return "\\begin{pmatrix} " + " \\\\ ".join(rows) + " \\end{pmatrix}"


def value_html(value: Any) -> Markup:
    """A value as display MathML (safe HTML)."""
    from quizapp.render import render_markdown

    if value is None:
        return Markup("")
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        return Markup("<code>") + escape(str(value)) + Markup("</code>")
    return Markup(render_markdown("$$" + value_latex(value) + "$$"))


def markdown_html(text: str) -> Markup:
    """Markdown with ``$...$`` LaTeX as safe HTML with MathML."""
    from quizapp.render import render_markdown

    return Markup(render_markdown(text or ""))


def inline_markdown_html(text: str) -> Markup:
    """One line of Markdown (a heading's text) as inline HTML: :func:`markdown_html` without the
    paragraph around it."""
    html = str(markdown_html(text)).strip()
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        html = html[3:-4]
    return Markup(html)


_MATRIX_ENV_RE = re.compile(r"\\begin\{[pbBvV]?matrix\}")


def value_in_text(text: str, value: Any) -> bool:
    """True if a worked-solution step's Markdown ``text`` already shows its ``value``: a vector or
    matrix as a LaTeX matrix environment (``pmatrix``, ``bmatrix``, ...), a number as the digits
    :func:`format_number` gives.  The page then does not repeat the value as a block."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        return False
    if arr.ndim == 0:
        return (
            re.search(rf"(?<![\d.]){re.escape(format_number(arr.item()))}(?![\d])", text)
            is not None
        )
    return _MATRIX_ENV_RE.search(text or "") is not None


def solution_steps(bank_variant: Any) -> list[dict[str, Any]]:
    """The worked solution of ``bank_variant`` as the templates show it: per step its title, text
    (HTML), its value as display math only when the text does not show it already
    (:func:`value_in_text`), and the heatmap of attention weights where the step asks for one."""
    steps = []
    for step in bank_variant.solution:
        value = getattr(step, "value", None)
        heat = getattr(step, "heatmap", False) and value is not None
        show_value = value is not None and not value_in_text(step.text or "", value)
        steps.append(
            {
                "title": step.title,
                # The title as inline Markdown (expression exercises name a step by its formula).
                "title_html": inline_markdown_html(step.title),
                "text": markdown_html(step.text),
                "value": value_html(value) if show_value else None,
                "heatmap": heatmap_svg(
                    value,
                    step.row_labels,
                    step.col_labels,
                    title=step.title if "$" not in step.title else "Attention weights",
                )
                if heat
                else None,
            }
        )
    return steps


def _heat_colour(t: float) -> str:
    """White (t=0) to a dark blue (t=1), linear in sRGB."""
    t = min(1.0, max(0.0, t))
    lo, hi = (255, 255, 255), (23, 70, 160)
    r, g, b = (round(a + (c - a) * t) for a, c in zip(lo, hi, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(
    value: Any,
    row_labels: list[str] | None = None,
    col_labels: list[str] | None = None,
    *,
    title: str = "Attention weights",
) -> Markup:
    """An SVG colour grid of a 2-D array (attention weights), each cell also showing its number.

    Colour runs from white at min(0, min value) to dark blue at max(1, max value), so weights in
    [0, 1] are comparable across heatmaps.  Returns ``Markup("")`` for non-2-D input.  The SVG uses
    presentation attributes only (no ``style``), so a strict CSP allows it.
    """
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.size == 0 or arr.size > 4096:
        return Markup("")
    n, m = arr.shape
    finite = arr[np.isfinite(arr)]
    lo = min(0.0, float(finite.min())) if finite.size else 0.0
    hi = max(1.0, float(finite.max())) if finite.size else 1.0
    rl = row_labels if row_labels and len(row_labels) == n else [str(i + 1) for i in range(n)]
    cl = col_labels if col_labels and len(col_labels) == m else [str(j + 1) for j in range(m)]
    # Sizes from the label lengths (about 7 px per character at font-size 12), so labels never
    # overlap: columns as wide as their longest label, the left margin as the longest row label.
    cell = max(48, min(140, 7 * max(len(str(c)) for c in cl) + 10))
    left = max(24, min(200, 7 * max(len(str(r)) for r in rl) + 12))
    top = 28
    width, height = left + m * cell + 4, top + n * cell + 4
    parts = [
        f'<svg class="heatmap" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
        f"<title>{escape(title)}</title>",
    ]
    for j, label in enumerate(cl):
        x = left + j * cell + cell / 2
        parts.append(
            f'<text x="{x:.1f}" y="{top - 8}" text-anchor="middle" font-size="12" '
            f'fill="#333">{escape(label)}</text>'
        )
    for i, label in enumerate(rl):
        y = top + i * cell + cell / 2 + 4
        parts.append(
            f'<text x="{left - 6}" y="{y:.1f}" text-anchor="end" font-size="12" '
            f'fill="#333">{escape(label)}</text>'
        )
        for j in range(m):
            v = float(arr[i, j])
            t = (v - lo) / (hi - lo) if hi > lo and math.isfinite(v) else 0.0
            x0, y0 = left + j * cell, top + i * cell
            text_fill = "#ffffff" if t > 0.55 else "#111111"
            parts.append(
                f'<rect x="{x0}" y="{y0}" width="{cell}" height="{cell}" '
                f'fill="{_heat_colour(t)}" stroke="#888" stroke-width="1"/>'
            )
            parts.append(
                f'<text x="{x0 + cell / 2:.1f}" y="{y0 + cell / 2 + 4:.1f}" text-anchor="middle" '
                f'font-size="12" fill="{text_fill}">{escape(format_number(v))}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def render_page(variant: Any) -> dict[str, Any]:
    """The stored page of ``variant`` (a ``quizapp.bank.Variant``): a JSON-safe dict of HTML.

    Keys: ``format``, ``title``, ``prompt_html``, ``hints_html`` (list), ``choices_html`` (list,
    or None when the answer is not a choice), ``solution`` (list of ``{"title", "title_html",
    "text", "value", "heatmap"}``, HTML strings or None: see :func:`solution_steps`; pages stored
    before ``title_html`` existed show ``title``), ``expected_text`` (the
    canonical answer as a student would type it, "" when the kind has none) and
    ``expected_html`` (the expected value as MathML, None for choices and indices).

    A multi-part variant's page also has ``parts`` (see :func:`part_pages`); its top-level
    ``solution`` lists every part's steps, ``expected_text`` is "" and ``expected_html`` None
    (each part has its own).
    """
    page = {
        "format": FORMAT,
        "title": str(variant.title),
        "prompt_html": str(markdown_html(variant.prompt)),
        "hints_html": [str(markdown_html(h)) for h in (variant.hints or [])],
        "choices_html": _choices_html(variant.answer_form),
        **_key_page(variant),
    }
    if getattr(variant, "parts", None):
        page["parts"] = part_pages(variant)
    return page


def render_key_page(variant: Any, shown: dict[str, Any]) -> dict[str, Any]:
    """The page ``shown`` (a stored page of :func:`render_page`) with the answer key of
    ``variant`` (the same variant keyed again by a regrade): its worked ``solution``,
    ``expected_text`` and ``expected_html``, and each part's, rendered again; the title, prompt,
    hints and choices stay as they were shown (a multi-part variant's parts keep their prompts
    and hints).  Renders only what the key changes (a regrade of 10,000 submissions re-keys
    thousands of variants)."""
    from quizapp.bank.parts import part_variant

    page = {**shown, **_key_page(variant)}
    if getattr(variant, "parts", None):
        before = {p["name"]: p for p in shown.get("parts", [])}
        parts = []
        for part in variant.parts:
            old = before.get(part.name)
            if old is None:  # not shown before (an old page): the part's page whole
                parts.append(_part_page(variant, part))
                continue
            one = part_variant(variant, part)
            key = _key_page(one)
            parts.append(
                {
                    **old,
                    "points": None if part.points is None else float(part.points),
                    "choices_html": _choices_html(one.answer_form),
                    "solution": key["solution"],
                    "expected_text": key["expected_text"],
                    "expected_html": key["expected_html"],
                    "uses": list(part.uses),
                }
            )
        page["parts"] = parts
    return page


def _choices_html(form: Any) -> list[str] | None:
    """The options of a choice answer form as HTML, None for other forms."""
    if form.type == "choice" and form.choices:
        return [str(markdown_html(c)) for c in form.choices]
    return None


#: The keys of a stored page that its answer key fills (:func:`_key_page`): what a student sees
#: only once the variant is finished, and what a regrade that re-keys it renders again.
KEY_PAGE_KEYS = ("solution", "expected_text", "expected_html")


#: The parts of a multi-part page whose answer keys a trimmed read leaves out too (the JSON
#: paths are listed one by one, up to this many parts; a page with more keeps the others').
TRIMMED_PARTS = 8


def key_page_paths() -> list[tuple[str | int, ...]]:
    """The paths of a stored page an unfinished variant's read leaves out: each of
    :data:`KEY_PAGE_KEYS` at the top and in each of the first :data:`TRIMMED_PARTS` parts
    (``("parts", 0, "solution")``).  A path that is not there is ignored by the databases."""
    top: list[tuple[str | int, ...]] = [(key,) for key in KEY_PAGE_KEYS]
    return top + [("parts", i, key) for i in range(TRIMMED_PARTS) for key in KEY_PAGE_KEYS]


def has_key_page(page: dict[str, Any]) -> bool:
    """True for a whole stored page (or part of one); False for one read without
    :data:`KEY_PAGE_KEYS` (an unfinished variant's page as ``quizapp.services.page_rows`` reads
    it, :func:`key_page_paths`)."""
    return KEY_PAGE_KEYS[0] in page


def _key_page(variant: Any) -> dict[str, Any]:
    """What the answer key of ``variant`` puts on its page (:data:`KEY_PAGE_KEYS`):
    ``solution``, ``expected_text`` and ``expected_html`` (as :func:`render_page` describes
    them)."""
    from quizapp.bank import shown_answer_text

    form = variant.answer_form
    try:
        # a multi-part variant shows each part's answer with the part (``parts``)
        text = "" if getattr(variant, "parts", None) else shown_answer_text(variant)
    except Exception:  # noqa: BLE001 - a kind without a canonical text: show the value only
        text = ""
    expected_html = None
    if form.type in ("scalar", "vector", "matrix", "partial_matrix", "point_on_line"):
        expected_html = str(value_html(variant.expected))
    return {
        "solution": [
            {k: (None if v is None else str(v)) for k, v in step.items()}
            for step in solution_steps(variant)
        ],
        "expected_text": text,
        "expected_html": expected_html,
    }


def part_pages(variant: Any) -> list[dict[str, Any]]:
    """Each part of a multi-part variant as its page shows it: ``name``, ``points``,
    ``prompt_html``, ``hints_html``, ``choices_html`` (or None), ``solution`` (steps as
    :func:`render_page`'s), ``expected_text``, ``expected_html`` and ``uses`` (the earlier parts
    it is computed from: graded with follow-through)."""
    return [_part_page(variant, part) for part in variant.parts]


def _part_page(variant: Any, part: Any) -> dict[str, Any]:
    from quizapp.bank.parts import part_variant

    one = part_variant(variant, part)
    return {
        "name": part.name,
        "points": None if part.points is None else float(part.points),
        "prompt_html": str(markdown_html(part.prompt)),
        "hints_html": [str(markdown_html(h)) for h in part.hints],
        "choices_html": _choices_html(one.answer_form),
        **_key_page(one),
        "uses": list(part.uses),
    }


def page_markup(page: dict[str, Any]) -> dict[str, Any]:
    """A stored page (from :func:`render_page`) with its HTML strings as ``Markup``, as the
    templates take them: ``prompt_html``, ``hints`` (list), ``choices`` (list or None),
    ``solution`` (steps), ``expected`` (``{"text", "html"}``).  A page read without its answer
    key's keys (:data:`KEY_PAGE_KEYS`: an unfinished variant's page,
    ``quizapp.services.page_rows``) has ``solution`` and ``expected`` None."""

    def mark(value: Any) -> Any:
        return None if value is None else Markup(value)

    keyed = has_key_page(page)
    return {
        "title": page["title"],
        "prompt_html": Markup(page["prompt_html"]),
        "hints": [Markup(h) for h in page["hints_html"]],
        "choices": [Markup(c) for c in page["choices_html"]] if page["choices_html"] else None,
        "solution": [
            {k: (v if k == "title" else mark(v)) for k, v in step.items()}
            for step in page["solution"]
        ]
        if keyed
        else None,
        "expected": {"text": page["expected_text"], "html": mark(page["expected_html"])}
        if keyed
        else None,
        "parts": [
            {
                "name": part["name"],
                "points": part["points"],
                "prompt_html": Markup(part["prompt_html"]),
                "hints": [Markup(h) for h in part["hints_html"]],
                "choices": [Markup(c) for c in part["choices_html"]]
                if part.get("choices_html")
                else None,
                "solution": [
                    {k: (v if k == "title" else mark(v)) for k, v in step.items()}
                    for step in part["solution"]
                ]
                if has_key_page(part)
                else None,
                "expected": {"text": part["expected_text"], "html": mark(part["expected_html"])}
                if has_key_page(part)
                else None,
                "uses": list(part.get("uses", [])),
            }
            for part in page.get("parts", [])
        ],
    }
