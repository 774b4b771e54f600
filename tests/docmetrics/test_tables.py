"""TEDS/TEDS-S on our own: parsing, grids, Markdown, bad input, batches, exactness."""

from __future__ import annotations

import functools
import itertools
import random

import pytest

from docevals_mlflow.docmetrics.table_html import (
    TableNode,
    check_grid,
    parse_html_table,
    table_from_grid,
    table_from_markdown,
)
from docevals_mlflow.docmetrics.tables import score_table, score_tables, teds
from docevals_mlflow.docmetrics.tree_edit import tree_edit_distance
from docevals_mlflow.errors import InputError


def test_parse_keeps_spans_sections_and_cell_tokens() -> None:
    table = parse_html_table(
        "<div><table><thead><tr><th colspan='2'>H&amp;<b>x</b></th></tr></thead>"
        "<tbody><tr><td>1<br>2</td><td rowspan=1>b</td></tr></tbody></table></div>"
    )
    head, body = table.children
    assert (head.tag, body.tag) == ("thead", "tbody")
    header = head.children[0].children[0]
    assert (header.tag, header.colspan, header.rowspan) == ("th", 2, 1)
    assert header.tokens == ("H", "&", "<b>", "x", "</b>")
    assert body.children[0].children[0].tokens == ("1", "<br>", "</br>", "2")
    assert table.size() == 8
    assert check_grid(table) == (2, 2)


def test_implicitly_closed_cells_and_rows_parse_as_html_does() -> None:
    table = parse_html_table("<table><tr><td>a<td>b<tr><td>c<td>d</table>")
    assert [[c.tokens for c in row.children] for row in table.rows()] == [
        [("a",), ("b",)],
        [("c",), ("d",)],
    ]


@pytest.mark.parametrize(
    ("html", "message"),
    [
        ("<p>no table here</p>", "no <table> found"),
        ("<table><td>x</td></table>", "line 1, column 8: <td> outside a row"),
        ("<table><tr><td>x</td></tr></table><table></table>", "a second <table>"),
        ("<table><tr></td></tr></table>", "</td> without an open <td>"),
        ("<table>\n<tr><td colspan='x'>1</td></tr></table>", "line 2, column 5: colspan='x'"),
        ("<table><tr><td rowspan=0>1</td></tr></table>", "rowspan='0' is not a positive"),
        ("<table><tr><td>a</td></tr>", "<table> is never closed"),
        ("<tr><td>a</td></tr>", "<tr> outside a <table>"),
    ],
)
def test_malformed_html_names_document_and_position(html: str, message: str) -> None:
    with pytest.raises(InputError, match=r"invoice-7\.html") as error:
        parse_html_table(html, source="invoice-7.html")
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("html", "message"),
    [
        (
            "<table><tr><td rowspan=3>a</td><td>b</td></tr><tr><td>c</td></tr></table>",
            "row 1, column 1: rowspan=3 reaches past the last row (2)",
        ),
        (
            "<table><tr><td>a</td><td>b</td></tr><tr><td colspan=3>c</td></tr></table>",
            "row 2 covers 3 columns, row 1 covers 2",
        ),
    ],
)
def test_unbalanced_spans_in_the_expected_table_are_errors(html: str, message: str) -> None:
    with pytest.raises(InputError, match=r"t\.html") as error:
        score_table(html, html, source="t.html")
    assert message in str(error.value)


def test_unbalanced_or_truncated_prediction_is_scored_not_refused() -> None:
    expected = "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>"
    truncated = "<table><tr><td>a</td><td>b</td></tr><tr><td>c"
    # Lost: one cell (d) and "c" intact; 1 deletion over 7 nodes.
    assert teds(expected, truncated) == pytest.approx(1 - 1 / 7)
    ragged = "<table><tr><td colspan=5>a</td></tr></table>"
    assert 0.0 <= teds(expected, ragged) < 0.5


def test_empty_prediction_scores_zero_and_empty_expected_is_an_error() -> None:
    expected = "<table><tr><td>a</td></tr></table>"
    for predicted in ("", "   ", None, "<p>the model wrote prose</p>"):
        score = score_table(expected, predicted, source="p1")
        assert (score.teds, score.teds_structure, score.predicted_nodes) == (0.0, 0.0, 0)
    with pytest.raises(InputError, match="p1: the expected table is empty"):
        score_table("", expected, source="p1")
    # An empty <table> is a table: two of them are equal.
    assert teds("<table></table>", "<table></table>") == 1.0
    assert teds(expected, "<table></table>") == pytest.approx(1 - 2 / 3)


def test_grid_and_markdown_build_the_same_tree_as_html() -> None:
    markdown = (
        "| Item | Qty |\n|:-----|----:|\n| Widget | 2 |\n| Gadget \\| spare | 1 | 9 |\n| Solo |\n"
    )
    html = (
        "<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Widget</td><td>2</td></tr>"
        "<tr><td>Gadget | spare</td><td>1</td></tr><tr><td>Solo</td><td></td></tr></table>"
    )
    from_markdown = table_from_markdown(markdown)
    assert tree_edit_distance(from_markdown, parse_html_table(html)) == 0.0
    assert teds(parse_html_table(html), markdown, format="markdown") == 1.0
    grid = [["Item", "Qty"], ["Widget", "2"]]
    assert (
        teds(
            table_from_grid(grid, header_rows=1),
            "<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Widget</td><td>2</td></tr></table>",
        )
        == 1.0
    )
    assert teds(grid, [["Item", "Qty"], ["Widget", "3"]]) == pytest.approx(1 - 1 / 7)


def test_markdown_without_separator_names_the_line() -> None:
    with pytest.raises(
        InputError, match=r"page-3.md, at line 2: the second row is not a separator"
    ):
        table_from_markdown("| a | b |\n| 1 | 2 |", source="page-3.md")


def test_batch_means_weigh_each_table_once() -> None:
    one = "<table><tr><td>a</td></tr></table>"
    batch = score_tables([("t1", one, one), ("t2", one, "")])
    assert [s.teds for s in batch.tables] == [1.0, 0.0]
    assert (batch.teds, batch.teds_structure) == (0.5, 0.5)
    with pytest.raises(InputError, match="no tables"):
        score_tables([])


def _brute_force_ted(a: TableNode, b: TableNode) -> float:
    """Exact TED by the textbook forest recursion (exponential-free via memo on forests)."""

    from rapidfuzz.distance import Levenshtein

    def rename(x: TableNode, y: TableNode) -> float:
        if (x.tag, x.colspan, x.rowspan) != (y.tag, y.colspan, y.rowspan):
            return 1.0
        if x.tag == "td" and (x.tokens or y.tokens):
            return float(Levenshtein.normalized_distance(list(x.tokens), list(y.tokens)))
        return 0.0

    def size(forest: tuple[TableNode, ...]) -> int:
        return sum(n.size() for n in forest)

    @functools.cache
    def forest(f: tuple[TableNode, ...], g: tuple[TableNode, ...]) -> float:
        if not f or not g:
            return float(size(f) + size(g))
        x, y = f[-1], g[-1]
        return min(
            forest(f[:-1] + tuple(x.children), g) + 1,
            forest(f, g[:-1] + tuple(y.children)) + 1,
            forest(tuple(x.children), tuple(y.children)) + forest(f[:-1], g[:-1]) + rename(x, y),
        )

    return forest((a,), (b,))


@pytest.mark.parametrize("seed", range(25))
def test_distance_equals_the_textbook_recursion_on_small_trees(seed: int) -> None:
    rnd = random.Random(seed)

    def small() -> TableNode:
        rows = []
        for _ in range(rnd.randint(0, 3)):
            cells = [
                TableNode("td", rnd.choice([1, 2]), 1, tuple(rnd.choice(["", "a", "ab", "b"])))
                for _ in range(rnd.randint(0, 3))
            ]
            rows.append(TableNode("tr", children=cells))
        if rnd.random() < 0.4:
            rows = [TableNode("tbody", children=rows)]
        return TableNode("table", children=rows)

    a, b = small(), small()
    assert tree_edit_distance(a, b) == pytest.approx(_brute_force_ted(a, b), abs=1e-9)


def test_distance_is_symmetric_and_zero_on_itself() -> None:
    rnd = random.Random(5)
    tables = [
        table_from_grid([[rnd.choice("abc") for _ in range(3)] for _ in range(n)]) for n in range(4)
    ]
    for a, b in itertools.product(tables, repeat=2):
        assert tree_edit_distance(a, b) == pytest.approx(tree_edit_distance(b, a), abs=1e-9)
    assert all(tree_edit_distance(t, t) == 0.0 for t in tables)


def test_markdown_prediction_without_a_table_scores_zero() -> None:
    expected = "| a |\n|---|\n| 1 |"
    assert teds(expected, "just prose", format="markdown") == 0.0
    assert teds(expected, expected, format="markdown") == 1.0


def test_worked_example_of_the_docs() -> None:
    expected = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Widget</td><td>2</td></tr></table>"
    predicted = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Widgets</td></tr></table>"
    score = score_table(expected, predicted)
    assert score.distance == pytest.approx(1 + 1 / 7, abs=1e-9)
    assert score.teds == pytest.approx(1 - 8 / 49, abs=1e-9)
    assert score.teds_structure == pytest.approx(1 - 1 / 7, abs=1e-12)
    assert (score.expected_nodes, score.predicted_nodes) == (7, 6)
