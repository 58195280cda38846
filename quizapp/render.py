"""Markdown with LaTeX math to safe HTML with MathML, server-side and offline.

``render_markdown`` uses markdown-it-py (CommonMark) with raw HTML disabled, so any ``<tag>`` in
the text is shown as text; links with ``javascript:``/``vbscript:``/``data:`` URLs are refused by
markdown-it's link validation.  Math is ``$...$`` (inline) and ``$$...$$`` (display, inline or as
its own block), found by mdit-py-plugins' ``dollarmath`` rules; ``\\$`` is a literal dollar.
Following Pandoc, an inline ``$`` opens math only when not followed by a space nor preceded by a
digit, and closes only when not preceded by a space nor followed by a digit (so "$5 and $6"
stays text).
Math is converted by latex2mathml, and its output is then rebuilt from an allow-list of MathML
elements and attributes with every text escaped (latex2mathml copies ``\\text{...}`` content
verbatim, so its raw output is not safe to embed).  A formula latex2mathml cannot convert is shown
as its escaped source in ``<code class="math-error">``; nothing here raises for bad input.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from latex2mathml.converter import convert as _latex_to_mathml
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from mdit_py_plugins.dollarmath.index import math_block_dollar, math_inline_dollar

MAX_LATEX = 5_000

_MATHML_ELEMENTS = frozenset(
    {
        "math", "mrow", "mi", "mn", "mo", "mtext", "mspace", "ms", "msup", "msub", "msubsup",
        "mfrac", "msqrt", "mroot", "mtable", "mtr", "mtd", "mover", "munder", "munderover",
        "mstyle", "mpadded", "mphantom", "menclose", "mfenced", "merror", "semantics",
    }
)  # fmt: skip
_MATHML_ATTRIBUTES = frozenset(
    {
        "display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace",
        "columnalign", "rowalign", "rowspacing", "columnspacing", "linethickness", "accent",
        "accentunder", "movablelimits", "width", "height", "depth", "minsize", "maxsize",
        "symmetric", "notation", "scriptlevel", "displaystyle", "columnlines", "rowlines",
        "frame", "form", "largeop", "open", "close", "separators", "align", "bevelled",
    }
)  # fmt: skip
_MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# latex2mathml copies the text of \\text{...} verbatim; these characters are swapped for private-use
# stand-ins before conversion (so the parser below sees text, not tags) and restored as entities.
_PROTECTED = {"\ue000": "&lt;", "\ue001": "&gt;", "\ue002": "&amp;"}
_TEXT_COMMAND = re.compile(r"\\(text|textrm|textbf|textit|mathrm|mbox|operatorname)\{([^{}]*)\}")


_ALIGN_ENV = re.compile(r"\\begin\{(aligned|align\*?|gathered|gather\*?)\}(.*?)\\end\{\1\}", re.S)


def _rewrite_environments(tex: str) -> str:
    """Rewrite amsmath alignment environments that latex2mathml mis-renders as ``array``.

    latex2mathml (3.x) turns ``aligned``'s ``&`` into a literal ampersand and drops the row
    breaks; ``array`` converts to a proper ``mtable``.  amsmath's ``aligned`` columns alternate
    right- and left-aligned (amsmath documentation, section 3.6), so ``a &= b`` becomes
    ``\\begin{array}{rl} a & = b \\end{array}``; ``gathered`` is one centred column.
    """

    def swap(m: re.Match[str]) -> str:
        env, body = m.group(1), m.group(2)
        if env.startswith("gather"):
            spec = "c"
        else:
            cols = max(row.count("&") for row in body.split("\\\\")) + 1
            spec = "".join("rl"[i % 2] for i in range(cols))
        return f"\\begin{{array}}{{{spec}}}{body}\\end{{array}}"

    return _ALIGN_ENV.sub(swap, tex)


def _protect_text(tex: str) -> str:
    def swap(m: re.Match[str]) -> str:
        body = m.group(2).replace("<", "\ue000").replace(">", "\ue001").replace("&", "\ue002")
        return f"\\{m.group(1)}{{{body}}}"

    return _TEXT_COMMAND.sub(swap, tex)


_TOKEN = re.compile(
    r"<(?P<close>/?)(?P<tag>[A-Za-z][A-Za-z0-9]*)(?P<attrs>(?:\s+[A-Za-z_:][-A-Za-z0-9_:.]*"
    r"(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*)\s*(?P<selfclose>/?)>"
    r"|(?P<text>[^<]+)|(?P<lt><)"
)
_ATTR = re.compile(
    r"([A-Za-z_:][-A-Za-z0-9_:.]*)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`]+)))?"
)


@lru_cache(maxsize=4096)
def _text(raw: str) -> str:
    """A text node of latex2mathml's output, unescaped then escaped again (cached: the same
    symbols and letters recur in every formula)."""
    text = html.escape(html.unescape(raw), quote=False)
    for char, entity in _PROTECTED.items():
        text = text.replace(char, entity)
    return text


@lru_cache(maxsize=1024)
def _open_tag(tag: str, attrs: str) -> str:
    """The rebuilt start tag of allow-listed element ``tag`` (lowercase) with the allow-listed
    attributes of ``attrs`` (the raw attribute text), values unescaped and escaped again."""
    parts = [tag]
    if tag == "math":
        parts.append(f'xmlns="{_MATHML_NS}"')
    for am in _ATTR.finditer(attrs):
        name = am.group(1).lower()
        value = next((g for g in am.group(2, 3, 4) if g is not None), None)
        if name in _MATHML_ATTRIBUTES and value is not None:
            parts.append(f'{name}="{html.escape(html.unescape(value), quote=True)}"')
    return "<" + " ".join(parts) + ">"


def _sanitize_mathml(raw: str) -> str:
    """Rebuild latex2mathml's output from allow-listed MathML elements and attributes only.

    Unknown elements are dropped (their text is kept, escaped), attributes outside the allow-list
    are dropped, every text and attribute value is unescaped and escaped again, and the element
    nesting is balanced.  A stray ``<`` becomes ``&lt;``.
    """
    out: list[str] = []
    stack: list[str] = []
    for m in _TOKEN.finditer(raw):
        kind = m.lastgroup
        if kind == "text":
            out.append(_text(m.group("text")))
            continue
        if kind == "lt":
            out.append("&lt;")
            continue
        close, tag, attrs, selfclose = m.group("close", "tag", "attrs", "selfclose")
        tag = tag.lower()
        if tag not in _MATHML_ELEMENTS:
            continue
        if close:
            if tag in stack:
                while stack:
                    top = stack.pop()
                    out.append(f"</{top}>")
                    if top == tag:
                        break
            continue
        out.append(_open_tag(tag, attrs))
        if selfclose:
            out.append(f"</{tag}>")
        else:
            stack.append(tag)
    while stack:
        out.append(f"</{stack.pop()}>")
    return "".join(out)


def _error_html(tex: str, display: bool) -> str:
    delim = "$$" if display else "$"
    return f'<code class="math-error">{html.escape(delim + tex + delim, quote=True)}</code>'


@lru_cache(maxsize=8192)
def render_latex(tex: str, display: bool = False) -> str:
    """One LaTeX formula to a MathML ``<math>`` element (``display="block"`` when ``display``).

    Safe to embed in HTML.  On a conversion error (or a formula longer than ``MAX_LATEX``
    characters) returns the escaped source in ``<code class="math-error">``; never raises.

    Matrices whose cells are all plain numbers (what the ``latex`` template filter emits) are
    converted without latex2mathml when that gives the identical result (see
    ``_render_numeric_matrices``); everything else goes through latex2mathml and the sanitizer.
    """
    if len(tex) > MAX_LATEX:
        return _error_html(tex[:200] + "...", display)
    fast = _render_numeric_matrices(tex, display)
    if fast is not None:
        return fast
    return _convert_latex(tex, display)


#: A matrix environment whose body holds only digits, ``.``, ``-``, ``?``, ``&``, ``\\`` and
#: ASCII spaces/newlines (so it cannot contain another environment or any command).
_MATRIX_ENV = re.compile(
    r"\\begin\{(pmatrix|bmatrix|Bmatrix|vmatrix|Vmatrix|matrix)\}([-0-9.?&\\ \n]*?)\\end\{\1\}"
)
_NUMBER_CELL = re.compile(r"(-?)([0-9]+(?:\.[0-9]+)?)|\?")
#: The stand-in matrix body (``{k}`` numbers the matrices of a formula): its cells cover every
#: cell form the fast path builds (a sign, a number with a decimal point and every digit, a
#: ``?``), so any context that would change how latex2mathml converts a cell (a font or style
#: command around the matrix...) also changes the stand-in's output, and the fast path declines.
_STANDIN_BODY = "-9081726354.5 & ? & {k}"
_STANDIN_MARK = "9081726354"
_MAX_MATRICES = 32


def _numeric_mtable(body: str) -> str | None:
    """The sanitized ``<mtable>`` latex2mathml gives for a matrix body of plain numbers (or
    ``?``), built directly from the matched digits; None if any cell is something else."""
    rows = []
    for row in body.split("\\\\"):
        cells = []
        for cell in row.split("&"):
            m = _NUMBER_CELL.fullmatch(cell.strip(" \n"))
            if m is None:
                return None
            if m.group(2) is None:
                cells.append("<mtd><mo>?</mo></mtd>")
            elif m.group(1):
                cells.append(f"<mtd><mo>\u2212</mo><mn>{m.group(2)}</mn></mtd>")
            else:
                cells.append(f"<mtd><mn>{m.group(2)}</mn></mtd>")
        rows.append("<mtr>" + "".join(cells) + "</mtr>")
    return "<mtable>" + "".join(rows) + "</mtable>"


@lru_cache(maxsize=2 * _MAX_MATRICES)
def _standin_mtable(k: int, display: bool) -> str:
    """The sanitized ``<mtable>`` of stand-in number ``k`` (converted by latex2mathml)."""
    body = _STANDIN_BODY.format(k=k)
    out = _convert_latex(f"\\begin{{pmatrix}} {body} \\end{{pmatrix}}", display)
    start, end = out.find("<mtable"), out.rfind("</mtable>")
    if start < 0 or end < 0:
        return "<no-such-element>"  # not an allow-listed tag: never in sanitized output
    return out[start : end + len("</mtable>")]


def _render_numeric_matrices(tex: str, display: bool) -> str | None:
    """``_convert_latex(tex, display)`` for a formula with matrices of plain numbers, computed
    without converting those matrices; None when the shortcut does not apply.

    latex2mathml converts a matrix cell by cell into an ``<mtable>`` whose rows and cells do not
    depend on what surrounds the matrix.  So the k-th such matrix is swapped for stand-in k, the
    rest of the formula (the same for every seed of an exercise, hence cached) goes through
    latex2mathml and the sanitizer, and each stand-in's ``<mtable>`` in the result is replaced by
    one built from the matrix's own digits.  The built markup holds only the tags above and text
    matched by ``[0-9.]``, so it needs no sanitizing.  The shortcut declines (None) when the
    formula has no such matrix (or more than ``_MAX_MATRICES``), contains the stand-in's digits,
    uses an alignment environment (whose column count is read from the ``&`` inside it), or when
    a stand-in does not come back exactly once and unchanged (a context that alters cells, a
    matrix inside a comment or ``\verb``...).  ``tests/test_render_fast.py`` compares it with
    latex2mathml's own output.
    """
    if "\\begin" not in tex or _STANDIN_MARK in tex or _ALIGN_ENV.search(tex):
        return None
    tables: list[str] = []

    def swap(m: re.Match[str]) -> str:
        table = _numeric_mtable(m.group(2))
        if table is None:
            return m.group(0)
        body = _STANDIN_BODY.format(k=len(tables))
        tables.append(table)
        return f"\\begin{{{m.group(1)}}} {body} \\end{{{m.group(1)}}}"

    skeleton = _MATRIX_ENV.sub(swap, tex)
    if not tables or len(tables) > _MAX_MATRICES:
        return None
    out = _convert_latex(skeleton, display)
    for k, table in enumerate(tables):
        standin = _standin_mtable(k, display)
        if out.count(standin) != 1:
            return None
        out = out.replace(standin, table, 1)
    return out


@lru_cache(maxsize=4096)
def _convert_latex(tex: str, display: bool) -> str:
    """latex2mathml's conversion of ``tex`` rebuilt by ``_sanitize_mathml`` (or the error
    markup).  Cached: the formulas left once numeric matrices are taken out repeat across
    seeds."""
    try:
        raw = _latex_to_mathml(
            _protect_text(_rewrite_environments(tex)), display="block" if display else "inline"
        )
    except Exception:  # latex2mathml raises many exception types for bad input
        return _error_html(tex, display)
    return _sanitize_mathml(raw)


_dollar_block = math_block_dollar(allow_labels=False, allow_blank_lines=True)


def _math_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """dollarmath's ``$$`` block rule, also as a paragraph terminator.

    The plugin's rule ignores ``silent`` (it always pushes its token and moves ``state.line``),
    which is harmless only while no other rule asks it whether a block starts here; a ``$$``
    line may interrupt a paragraph here, so in silent mode the token is dropped and the line
    restored.
    """
    if not silent:
        return bool(_dollar_block(state, start, end, False))
    line, count = state.line, len(state.tokens)
    found = bool(_dollar_block(state, start, end, False))
    del state.tokens[count:]
    state.line = line
    return found


def _render_inline(self, tokens, idx, options, env) -> str:  # noqa: ANN001
    return render_latex(tokens[idx].content.strip(), False)


def _render_inline_display(self, tokens, idx, options, env) -> str:  # noqa: ANN001
    return render_latex(tokens[idx].content.strip(), True)


def _render_block(self, tokens, idx, options, env) -> str:  # noqa: ANN001
    return (
        '<div class="math-display">' + render_latex(tokens[idx].content.strip(), True) + "</div>\n"
    )


def _build() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    # mdit-py-plugins' dollarmath rules (the parsing only; the rendering is ours): no space just
    # inside an inline $...$ and no digit just outside it (Pandoc's rule: "$5 and $6" is text),
    # $$...$$ inside a paragraph is display math, a $$ block may hold blank lines and, unlike the
    # plugin's default, may interrupt a paragraph (as a fence does).
    md.inline.ruler.before(
        "escape",
        "math_inline",
        math_inline_dollar(allow_space=False, allow_digits=False, allow_double=True),
    )
    md.block.ruler.before(
        "fence",
        "math_block",
        _math_block,
        {"alt": ["paragraph", "reference", "blockquote", "list"]},
    )
    md.add_render_rule("math_inline", _render_inline)
    md.add_render_rule("math_inline_double", _render_inline_display)
    md.add_render_rule("math_block", _render_block)
    return md


_MD = _build()
MAX_MARKDOWN = 200_000


# A prompt's Markdown tables (numbers and row labels that change per seed) are most of the cost
# of rendering it (markdown-it's table rule and inline tokenizer).  Each table block is rendered on
# its own with its plain cells swapped for stand-in characters from Unicode's Supplementary Private
# Use Area-A, so every table of one shape shares one parse; the text between tables is rendered as
# usual.  A stand-in is, for markdown-it, a character of the same class as a letter or digit
# (neither whitespace nor punctuation: emphasis flanking is unchanged), and a swapped cell holds
# only letters, digits, spaces, "." and "," (no Markdown syntax, unchanged by HTML escaping), so
# swapping it back into the HTML gives the same output as one full parse.
_STANDIN_FIRST = 0xF0000
_MAX_STANDINS = 4096
_STANDIN_CHAR = re.compile("[\U000f0000-\U000ffffd]")
_PLAIN = r"[A-Za-z0-9](?:[A-Za-z0-9 .,]*[A-Za-z0-9])?"
_TABLE_CELL = re.compile(rf"(\*\*)({_PLAIN})\*\*|(-?)({_PLAIN})")
_DELIMITER_ROW = re.compile(r"\|(?:[ \t]*:?-+:?[ \t]*\|)+")
_UNSAFE_IN_TABLE = re.compile(r"[$`\\<>&\[\]!_~*]")
# Constructs that can tie a later block to an earlier one (reference definitions, fences, lists
# and block quotes that could go on past a blank line): with any of them before a table, or a
# reference definition anywhere, the whole text is parsed at once instead.
_REFERENCE_DEF = re.compile(r"^ {0,3}\[", re.M)
_OPEN_CONTEXT = re.compile(r"^ *(?:[-+*>]|\d+[.)]|```|~~~)|^ {4}", re.M)


def _table_blocks(text: str) -> list[tuple[str, bool]] | None:
    """``text`` cut into blocks, each ``(source, is_table)``, joined by newlines, when it holds a
    table that can be rendered on its own; None otherwise.  A table is a run of lines that begin
    and end with ``|``, preceded and followed by a blank line (or the text's start/end), whose
    second line is a delimiter row.  None as well when the text has ``$$`` (display math may span
    lines), a carriage return, a stand-in character, a reference definition, or before its last
    table a list, block quote, fence or indented line."""
    if "|" not in text or "$$" in text or "\r" in text or _STANDIN_CHAR.search(text):
        return None
    if _REFERENCE_DEF.search(text):
        return None
    lines = text.split("\n")
    blocks: list[tuple[str, bool]] = []
    start = i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if not (line.startswith("|") and line.endswith("|")):
            i += 1
            continue
        j = i
        while j < n and lines[j].startswith("|") and lines[j].endswith("|"):
            j += 1
        if (
            j - i >= 2
            and (i == 0 or lines[i - 1].strip() == "")
            and (j == n or lines[j].strip() == "")
            and _DELIMITER_ROW.fullmatch(lines[i + 1]) is not None
        ):
            before = "\n".join(lines[start:i])
            if _OPEN_CONTEXT.search(before):
                return None
            blocks.append((before, False))
            blocks.append(("\n".join(lines[i:j]), True))
            start = j
        i = j
    if not blocks:
        return None
    blocks.append(("\n".join(lines[start:]), False))
    return blocks


def _table_skeleton(table: str) -> tuple[str, dict[str, str]]:
    """A table block with its plain cells (``3``, ``-0.5``, ``**vet advice**``) swapped for
    stand-ins, and the map from stand-in to the cell text it replaced."""
    lines = table.split("\n")
    values: dict[str, str] = {}
    for k, row in enumerate(lines):
        if k == 1 or _UNSAFE_IN_TABLE.search(row.replace("**", "")):
            continue
        out = []
        for cell in row[1:-1].split("|"):
            m = _TABLE_CELL.fullmatch(cell.strip())
            if m is None or len(values) >= _MAX_STANDINS:
                out.append(cell)
                continue
            mark = chr(_STANDIN_FIRST + len(values))
            if m.group(1):
                values[mark] = m.group(2)
                swapped = "**" + mark + "**"
            else:
                values[mark] = m.group(4)
                swapped = m.group(3) + mark
            lead = cell[: len(cell) - len(cell.lstrip())]
            trail = cell[len(cell.rstrip()) :]
            out.append(lead + swapped + trail)
        lines[k] = "|" + "|".join(out) + "|"
    return "\n".join(lines), values


@lru_cache(maxsize=512)
def _render_skeleton(skeleton: str) -> str:
    return _MD.render(skeleton)


def _render_tables_fast(text: str) -> str | None:
    """``_MD.render(text)`` with each table block rendered through the shared parse of its
    skeleton, or None when the text is outside that case (see ``_table_blocks``) or a stand-in
    does not come back exactly once."""
    blocks = _table_blocks(text)
    if blocks is None:
        return None
    parts = []
    for source, is_table in blocks:
        if not is_table:
            parts.append(_MD.render(source) if source.strip() else "")
            continue
        skeleton, values = _table_skeleton(source)
        out = _render_skeleton(skeleton)
        marks = _STANDIN_CHAR.findall(out)
        if len(marks) != len(values) or set(marks) != values.keys():
            return None

        def cell(m: re.Match[str], cells: dict[str, str] = values) -> str:
            return cells[m.group()]

        parts.append(_STANDIN_CHAR.sub(cell, out))
    return "".join(parts)


# A text that is one inline formula, maybe followed by a full stop or comma (most worked-solution
# steps: "$A^T \mathbf{y} = \begin{pmatrix} ... \end{pmatrix}$."), is the paragraph of that
# formula: no Markdown to parse (markdown-it scans the formula character by character, most of
# the cost of a step).  The pattern is the dollarmath rule's own for such a text: no space just
# inside the dollars, no dollar inside, no backslash before the closing one (``\$`` is a literal
# dollar), no digit after it; ``tests/test_render_fast.py`` checks it renders as markdown-it.
_ONE_FORMULA = re.compile(r"\$(?![\s$])([^$\n]*[^\s$\\])\$([.,;:]?)")


@lru_cache(maxsize=2048)
def _render_cached(text: str) -> str:
    one = _ONE_FORMULA.fullmatch(text)
    if one is not None:
        return "<p>" + render_latex(one.group(1), False) + one.group(2) + "</p>\n"
    fast = _render_tables_fast(text)
    return fast if fast is not None else _MD.render(text)


def render_markdown(text: str) -> str:
    """Markdown with ``$...$``/``$$...$$`` LaTeX to HTML with MathML.  Pure and XSS-safe: raw HTML
    is escaped, unsafe link schemes are refused, math output is allow-listed.  Never raises for
    bad Markdown or LaTeX; text longer than ``MAX_MARKDOWN`` characters is cut there."""
    if not isinstance(text, str):
        text = str(text)
    return _render_cached(text[:MAX_MARKDOWN])


def render_value(value: object, display: bool = False) -> str:
    """A number, vector or matrix (e.g. a worked-solution step's value) as safe MathML.

    Matrices render as ``pmatrix``, vectors as a column, numbers compactly (``3``, ``0.25``), via
    ``quizapp.bank.template.latex``; text and other values escaped.  Never raises.
    """
    from quizapp.bank.template import TemplateError, latex

    if isinstance(value, str):
        return f'<span class="value">{html.escape(value, quote=True)}</span>'
    try:
        return render_latex(latex(value), display)
    except (TemplateError, TypeError, ValueError):
        return f"<code>{html.escape(str(value), quote=True)}</code>"
