"""How an answer grid is laid out (``web.display.grid_layout``, used by the ``answer_grid``
macro): which cells carry a mark, the mark said once on a marked answer's table, the caption
saying it, and the row and column headers."""

from __future__ import annotations

from quizapp.web.display import GridCell, grid_layout


def _grid(marks: list[list[bool | None]], given: set[tuple[int, int]] = frozenset()) -> list:
    return [
        [
            GridCell(
                name=f"cell-{r}-{c}",
                label=f"row {r + 1}, column {c + 1}",
                value=str(r + c),
                given=(r, c) in given,
                mark=m,
            )
            for c, m in enumerate(row)
        ]
        for r, row in enumerate(marks)
    ]


def _classes(layout) -> list[list[str]]:
    return [[cls for _, cls, _ in cells] for _, cells in layout.rows]


def test_a_marked_answer_says_its_most_common_mark_once() -> None:
    # Three right, one wrong: "right" is said on the table, only the wrong cell is marked.
    layout = grid_layout(_grid([[True, True], [True, False]]), ["a", "b"], ["", ""], marked=True)
    assert layout.common == "right"
    assert layout.caption == "Every entry right unless marked wrong"
    assert _classes(layout) == [["", ""], ["", "mark-wrong"]]
    assert [w for _, cells in layout.rows for _, _, w in cells] == ["", "", "", "wrong"]


def test_all_wrong_has_no_exception_and_a_tie_is_said_right() -> None:
    wrong = grid_layout(_grid([[False, False, False]]), [""], [], marked=True)
    assert (wrong.common, wrong.caption) == ("wrong", "Every entry wrong")
    assert _classes(wrong) == [["", "", ""]]
    tie = grid_layout(_grid([[True, False]]), [""], [], marked=True)
    assert (tie.common, tie.caption) == ("right", "Every entry right unless marked wrong")
    assert _classes(tie) == [["", "mark-wrong"]]


def test_no_common_mark_with_an_ungraded_cell_or_a_single_cell() -> None:
    # An ungraded cell (None) among graded ones: every graded cell carries its own mark.
    mixed = grid_layout(_grid([[True, None, False]]), [""], [], marked=True)
    assert (mixed.common, mixed.caption) == (None, "")
    assert _classes(mixed) == [["mark-right", "", "mark-wrong"]]
    single = grid_layout(_grid([[False]]), [""], [], marked=True)
    assert single.common is None and _classes(single) == [["mark-wrong"]]


def test_given_cells_are_neither_counted_nor_marked() -> None:
    # Two given cells marked False do not outvote the two right ones typed by the student.
    layout = grid_layout(
        _grid([[False, True], [False, True]], given={(0, 0), (1, 0)}), ["", ""], [], marked=True
    )
    # The caption speaks of the entries the student filled in, not of the given ones.
    assert layout.common == "right" and layout.caption == "Every entry you filled in is right"
    assert _classes(layout) == [["given", ""], ["given", ""]]
    assert layout.rows[0][1][0][2] == "given"
    mixed = grid_layout(_grid([[True, False, False]], given={(0, 0)}), [""], [], marked=True)
    assert mixed.caption == "Every entry you filled in is wrong"
    some = grid_layout(_grid([[None, True, True, False]], given={(0, 0)}), [""], [], marked=True)
    assert some.caption == "Every entry you filled in is right unless marked wrong"
    assert _classes(some) == [["given", "", "", "mark-wrong"]]


def test_a_form_marks_each_box_and_an_invalid_cell_says_so() -> None:
    grid = _grid([[True, False, None]])
    grid[0][2].invalid = True
    layout = grid_layout(grid, [""], [], marked=False)
    assert (layout.common, layout.caption) == (None, "")
    assert _classes(layout) == [["mark-right", "mark-wrong", "mark-invalid"]]
    assert [w for _, _, w in layout.rows[0][1]] == ["right", "wrong", "cannot be read"]


def test_headers_show_only_when_a_label_is_not_empty() -> None:
    grid = _grid([[None], [None], [None]])
    assert not grid_layout(grid, ["", "", ""], [""], marked=False).has_row_labels
    labelled = grid_layout(grid, ["", "cat", ""], ["value"], marked=False)
    assert labelled.has_row_labels and labelled.has_col_labels
    assert [label for label, _ in labelled.rows] == ["", "cat", ""]
    # A row without a label (a short list) shows an empty header cell.
    short = grid_layout(grid, ["x"], [], marked=False)
    assert [label for label, _ in short.rows] == ["x", "", ""] and not short.has_col_labels
