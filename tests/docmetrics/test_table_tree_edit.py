"""The vectorised tree edit distance against a plain Zhang-Shasha written for clarity.

Random tables with repeated rows (whose keyroots the fast path computes once and copies),
sections, spans, header cells, empty and single-node trees; content and structure only.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from docevals_mlflow.docmetrics.table_html import TableNode
from docevals_mlflow.docmetrics.tree_edit import tree_edit_distance, tree_edit_distances


def _reference(a: TableNode, b: TableNode, structure_only: bool) -> float:
    """Zhang and Shasha (1989) as the textbook states it, one keyroot pair at a time."""

    def postorder(root: TableNode) -> tuple[list[TableNode], list[int]]:
        nodes: list[TableNode] = []
        lml: list[int] = []

        def visit(node: TableNode) -> int:
            first = -1
            for child in node.children:
                leaf = visit(child)
                first = leaf if first < 0 else first
            nodes.append(node)
            lml.append(first if first >= 0 else len(nodes) - 1)
            return lml[-1]

        visit(root)
        return nodes, lml

    def rename(x: TableNode, y: TableNode) -> float:
        label_x = ("td" if x.tag == "th" else x.tag, x.colspan, x.rowspan)
        label_y = ("td" if y.tag == "th" else y.tag, y.colspan, y.rowspan)
        if label_x != label_y:
            return 1.0
        if structure_only or x.tag not in {"td", "th"}:
            return 0.0
        return float(Levenshtein.normalized_distance(list(x.tokens), list(y.tokens)))

    na, la = postorder(a)
    nb, lb = postorder(b)
    keys_a = [i for i in range(len(na)) if not any(la[j] == la[i] for j in range(i + 1, len(na)))]
    keys_b = [j for j in range(len(nb)) if not any(lb[k] == lb[j] for k in range(j + 1, len(nb)))]
    td = [[0.0] * len(nb) for _ in na]
    for i in keys_a:
        for j in keys_b:
            rows, cols = i - la[i] + 2, j - lb[j] + 2
            fd = [[0.0] * cols for _ in range(rows)]
            for x in range(1, rows):
                fd[x][0] = fd[x - 1][0] + 1
            for y in range(1, cols):
                fd[0][y] = fd[0][y - 1] + 1
            for x in range(1, rows):
                for y in range(1, cols):
                    p, q = la[i] + x - 1, lb[j] + y - 1
                    best = min(fd[x - 1][y] + 1, fd[x][y - 1] + 1)
                    if la[p] == la[i] and lb[q] == lb[j]:
                        fd[x][y] = min(best, fd[x - 1][y - 1] + rename(na[p], nb[q]))
                        td[p][q] = fd[x][y]
                    else:
                        before = fd[la[p] - la[i]][lb[q] - lb[j]]
                        fd[x][y] = min(best, before + td[p][q])
    return td[-1][-1]


_CELL = st.builds(
    lambda tag, span, text: TableNode(tag, span, 1, tuple(text)),
    st.sampled_from(["td", "td", "th"]),
    st.sampled_from([1, 1, 2]),
    st.sampled_from(["", "a", "ab", "ba", "<b>"]).map(lambda t: t if t != "<b>" else "x"),
)
_ROW = st.lists(_CELL, max_size=4)


@st.composite
def _tables(draw: st.DrawFn) -> TableNode:
    """A table whose rows are often copies of one another: the same cells, or the same
    structure with other content (``recolour`` rewrites every cell's text)."""
    kinds = draw(st.lists(_ROW, min_size=1, max_size=3))
    picks = draw(st.lists(st.tuples(st.integers(0, len(kinds) - 1), st.booleans()), max_size=6))
    rows = [
        TableNode(
            "tr",
            children=[
                TableNode(c.tag, c.colspan, 1, ("z", *c.tokens) if recolour else c.tokens)
                for c in kinds[i]
            ],
        )
        for i, recolour in picks
    ]
    split = draw(st.integers(0, len(rows)))
    sections = draw(st.sampled_from(["none", "tbody", "both"]))
    if sections == "tbody":
        return TableNode("table", children=[TableNode("tbody", children=rows)])
    if sections == "both":
        head, body = TableNode("thead", children=rows[:split]), rows[split:]
        return TableNode("table", children=[head, TableNode("tbody", children=body)])
    return TableNode("table", children=rows)


@settings(max_examples=150, deadline=None)
@given(a=_tables(), b=_tables())
def test_distances_equal_the_textbook_algorithm(a: TableNode, b: TableNode) -> None:
    content, structure = tree_edit_distances(a, b)
    assert abs(content - _reference(a, b, structure_only=False)) < 1e-9
    assert abs(structure - _reference(a, b, structure_only=True)) < 1e-9
    assert content == tree_edit_distance(a, b)
    assert structure == tree_edit_distance(a, b, structure_only=True)


def test_many_identical_rows_against_a_few_different_ones() -> None:
    def table(texts: list[list[str]]) -> TableNode:
        rows = [
            TableNode("tr", children=[TableNode("td", 1, 1, tuple(t)) for t in r]) for r in texts
        ]
        return TableNode("table", children=[TableNode("tbody", children=rows)])

    same = [["a", "b", "c"]] * 12
    other = [["a", "b", "c"]] * 5 + [["a", "bb"], ["a", "b", "c", "d"]] + [["a", "b", "c"]] * 4
    a, b = table(same), table(other)
    for structure_only in (False, True):
        expected = _reference(a, b, structure_only)
        assert tree_edit_distance(a, b, structure_only=structure_only) == expected
        assert tree_edit_distance(b, a, structure_only=structure_only) == expected


def test_rows_of_one_structure_and_other_content() -> None:
    def table(texts: list[list[str]]) -> TableNode:
        rows = [
            TableNode("tr", children=[TableNode("td", 1, 1, tuple(t)) for t in r]) for r in texts
        ]
        return TableNode("table", children=[TableNode("tbody", children=rows)])

    a = table([["a", "b"], ["c", "d"], ["e", "f"], ["g", "h"]])
    b = table([["a", "b"], ["x", "y"], ["e", "f"], ["g", "q"]])
    assert tree_edit_distances(a, b) == (3.0, 0.0)
    assert _reference(a, b, structure_only=False) == 3.0


def test_single_nodes_and_leaves() -> None:
    empty, cell = TableNode("table"), TableNode("td", 1, 1, ("a",))
    one = TableNode("table", children=[TableNode("tr", children=[cell])])
    assert tree_edit_distance(empty, empty) == 0.0
    assert tree_edit_distance(empty, one) == 2.0 == _reference(empty, one, False)
    assert tree_edit_distance(one, empty) == 2.0
    assert tree_edit_distance(cell, one) == _reference(cell, one, False)
