"""The table shortcut of ``render_markdown`` gives exactly markdown-it's output for the whole text.

``render._MD.render`` is the slow path (one parse of the whole text, no cache); the shortcut
renders each table block through the cached parse of its skeleton (plain cells swapped for
stand-in characters) and the text between tables on its own.  Every comparison is string equality.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from quizapp import render
from quizapp.bank import load_bank

BANK = load_bank(Path(__file__).resolve().parent.parent / "exercises")


def test_every_bank_text_with_tables_renders_as_one_parse() -> None:
    used = 0
    for exercise in BANK.exercises.values():
        for seed in range(12):
            variant = exercise.generate(seed)
            for text in [variant.prompt, *variant.hints]:
                fast = render._render_tables_fast(text)
                if fast is not None:
                    used += 1
                    assert fast == render._MD.render(text), (exercise.id, seed)
    # the retrieval exercises (4 in 04-retrieval-and-softmax) all take the shortcut
    assert used >= 4 * 12


def test_same_shape_tables_keep_their_own_cells() -> None:
    """The skeleton cache is keyed by the shape only: two tables of one shape must each get back
    their own numbers and labels (no stale cell from the other)."""
    a = "Q:\n\n| | f1 |\n|---|---|\n| **cat** | 3 |\n| **dog** | -2 |\n\nDone."
    b = "Q:\n\n| | f1 |\n|---|---|\n| **vet advice** | 0.5 |\n| **fish** | -7 |\n\nDone."
    out_a, out_b = render.render_markdown(a), render.render_markdown(b)
    assert out_a == render._MD.render(a)
    assert out_b == render._MD.render(b)
    assert "<strong>vet advice</strong>" in out_b and "0.5" in out_b
    assert "cat" not in out_b and "cat" in out_a
    assert (
        render._table_skeleton(a.split("\n\n")[1])[0]
        == render._table_skeleton(b.split("\n\n")[1])[0]
    )


def test_declines_where_blocks_could_depend_on_each_other() -> None:
    table = "| a | b |\n|---|---|\n| 1 | 2 |"
    assert render._render_tables_fast("Text\n\n" + table + "\n\nMore") is not None
    for before in ["- item", "> quote", "```\ncode", "    indented", "1. first"]:
        assert render._table_blocks(before + "\n\n" + table) is None, before
    assert render._table_blocks(table + "\n\n[x]: http://example.org") is None
    assert render._table_blocks("$$\n" + table + "\n$$") is None
    assert render._table_blocks("para\n" + table) is None  # not after a blank line
    assert render._table_blocks("| a |\n| b |") is None  # no delimiter row
    assert render._table_blocks("x \U000f0000\n\n" + table) is None


cell_text = st.one_of(
    st.integers(-999, 999).map(str),
    st.from_regex(r"-?[0-9]{1,3}\.[0-9]{1,3}", fullmatch=True),
    st.from_regex(r"[a-z]{1,6}( [a-z]{1,6})?", fullmatch=True),
    st.from_regex(r"\*\*[a-z]{1,6}( [a-z]{1,6})?\*\*", fullmatch=True),
    st.sampled_from(
        ["", " ", "*x*", "**x", "_a_", "`1`", "$x$", "a|", "\\|", "<b>", "&amp;", "[l](u)",
         "-", "--", "**-1**", "~~s~~", "1,5", "a.", ".5", "x_1", "\"q\"", "'", "é"]
    ),
)  # fmt: skip
between = st.one_of(
    st.just(""),
    st.sampled_from(
        ["Some *text* $x$ here", "# Title", "1. one\n2. two", "- a\n- b", "> q", "```\n|x|\n```",
         "**bold** start", "    code", "[r]: http://e.org", "text\nmore"]
    ),
)  # fmt: skip


@st.composite
def documents(draw: st.DrawFn) -> str:
    parts = [draw(between)]
    for _ in range(draw(st.integers(1, 3))):
        cols = draw(st.integers(1, 4))
        rows = draw(st.integers(0, 4))
        header = "|" + "|".join(f" {draw(cell_text)} " for _ in range(cols)) + "|"
        delimiter = (
            "|"
            + "|".join(draw(st.sampled_from(["---", ":--", "--:", " --- "])) for _ in range(cols))
            + "|"
        )  # noqa: E501
        body = [
            "|"
            + "|".join(
                draw(st.sampled_from(["", " ", "  "])) + draw(cell_text) + " "
                for _ in range(draw(st.integers(cols - 1, cols + 1)) or 1)
            )
            + "|"  # noqa: E501
            for _ in range(rows)
        ]
        parts.append("\n".join([header, delimiter, *body]))
        parts.append(draw(between))
    return draw(st.sampled_from(["\n\n", "\n\n\n"])).join(parts)


@settings(max_examples=400, deadline=None)
@given(documents())
def test_shortcut_equals_one_parse(text: str) -> None:
    fast = render._render_tables_fast(text)
    if fast is not None:
        assert fast == render._MD.render(text)
    assert render.render_markdown(text) == render._MD.render(text)
