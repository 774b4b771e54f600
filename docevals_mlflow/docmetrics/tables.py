"""TEDS and TEDS-S: tree-edit-distance similarity of tables (Zhong et al. 2020).

``TEDS = 1 - TED(expected, predicted) / max(|expected|, |predicted|)`` with tree sizes in
nodes and :mod:`~docevals_mlflow.docmetrics.tree_edit`'s cost model; TEDS-S is the same
with cell content ignored (structure only). 1 is a perfect table.

Tables come as HTML, as Markdown pipe tables, as cell grids (lists of rows of texts) or as
:class:`~docevals_mlflow.docmetrics.table_html.TableNode` trees. An empty prediction, or one
without a table, scores 0 (the reference implementations do the same); the expected table
must parse strictly (closed, spans tiling a rectangle) or an :class:`InputError` names the
document and the position.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from docevals_mlflow.docmetrics.table_html import (
    TableNode,
    parse_html_table,
    table_from_grid,
    table_from_markdown,
)
from docevals_mlflow.docmetrics.tree_edit import tree_edit_distance, tree_edit_distances
from docevals_mlflow.errors import InputError

# A prediction that holds no table at all scores 0 (as in the references), not an error.
_NO_TABLE = frozenset({"no <table> found", "no pipe table found"})

TableInput = str | TableNode | Sequence[Sequence[str]] | None
TableFormat = Literal["html", "markdown"]


def as_table(
    value: TableInput,
    *,
    source: str = "<table>",
    strict: bool = True,
    format: TableFormat = "html",
) -> TableNode | None:
    """``value`` as a tree; ``None`` for an empty text (or ``None``).

    A text is HTML or, with ``format="markdown"``, a pipe table; a list of rows is a grid.
    """
    if value is None:
        return None
    if isinstance(value, TableNode):
        return value
    if isinstance(value, str):
        if not value.strip():
            return None
        if format == "markdown":
            return table_from_markdown(value, source=source)
        return parse_html_table(value, source=source, strict=strict)
    return table_from_grid(value)


@dataclass(frozen=True)
class TableScore:
    """TEDS and TEDS-S of one table, with the distances and tree sizes behind them."""

    source: str
    teds: float
    teds_structure: float
    distance: float
    structure_distance: float
    expected_nodes: int
    predicted_nodes: int


def _similarity(distance: float, expected_nodes: int, predicted_nodes: int) -> float:
    return 1.0 - distance / max(expected_nodes, predicted_nodes)


def _pair(
    expected: TableInput, predicted: TableInput, source: str, format: TableFormat
) -> tuple[TableNode, TableNode | None]:
    """The expected tree (strict) and the predicted one (lenient; ``None`` if empty)."""
    want = as_table(expected, source=f"{source} (expected)", format=format)
    if want is None:
        raise InputError("the expected table is empty", source=source, expected="a table")
    try:
        got = as_table(predicted, source=f"{source} (predicted)", strict=False, format=format)
    except InputError as error:
        if error.message not in _NO_TABLE:
            raise
        got = None
    return want, got


def score_table(
    expected: TableInput,
    predicted: TableInput,
    *,
    source: str = "<table>",
    format: TableFormat = "html",
    headers_as_cells: bool = True,
) -> TableScore:
    """TEDS and TEDS-S of one predicted table against the expected one.

    Raises:
        InputError: the expected table is missing or malformed (named by ``source``,
            line and column), or the prediction is malformed beyond a truncated end.
    """
    want, got = _pair(expected, predicted, source, format)
    if got is None:
        size = want.size()
        return TableScore(source, 0.0, 0.0, float(size), float(size), size, 0)
    distance, structure = tree_edit_distances(want, got, headers_as_cells=headers_as_cells)
    sizes = want.size(), got.size()
    return TableScore(
        source=source,
        teds=_similarity(distance, *sizes),
        teds_structure=_similarity(structure, *sizes),
        distance=distance,
        structure_distance=structure,
        expected_nodes=sizes[0],
        predicted_nodes=sizes[1],
    )


def teds(
    expected: TableInput,
    predicted: TableInput,
    *,
    structure_only: bool = False,
    source: str = "<table>",
    format: TableFormat = "html",
    headers_as_cells: bool = True,
) -> float:
    """TEDS (or TEDS-S with ``structure_only``) of one table; see :func:`score_table`."""
    want, got = _pair(expected, predicted, source, format)
    if got is None:
        return 0.0
    distance = tree_edit_distance(
        want, got, structure_only=structure_only, headers_as_cells=headers_as_cells
    )
    return _similarity(distance, want.size(), got.size())


@dataclass(frozen=True)
class TableBatch:
    """Per-table scores and their unweighted means (each table counts once)."""

    tables: tuple[TableScore, ...]
    teds: float
    teds_structure: float


def score_tables(
    pairs: Iterable[tuple[str, TableInput, TableInput]],
    *,
    format: TableFormat = "html",
) -> TableBatch:
    """Score ``(source, expected, predicted)`` triples; means are over tables.

    Raises:
        InputError: no tables, or a malformed expected table (naming its source).
    """
    scores = tuple(
        score_table(expected, predicted, source=source, format=format)
        for source, expected, predicted in pairs
    )
    if not scores:
        raise InputError("no tables to score", expected="at least one expected table")
    return TableBatch(
        tables=scores,
        teds=sum(s.teds for s in scores) / len(scores),
        teds_structure=sum(s.teds_structure for s in scores) / len(scores),
    )
