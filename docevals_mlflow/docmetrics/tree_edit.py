"""Tree edit distance between table trees with the TEDS cost model, vectorised with numpy.

Costs as in the TEDS reference (Zhong et al. 2020): inserting or deleting a node costs 1;
renaming costs 1 when the tags or the spans differ, else, for two cells, the normalized
Levenshtein distance of their content tokens (0 when both are empty), else 0.

The algorithm is Zhang and Shasha's (1989), exact like APTED (which the references call)
but arranged for numpy:

* every rename cost at once: a label-equality matrix times one ``rapidfuzz`` ``cdist``
  over the cells' token strings;
* a distance between a leaf and a tree has a closed form (``|T| - 1 + min rename`` since
  renaming never costs more than 1), so the many one-cell keyroots need no table;
* the forest-distance row recurrence ``d[i][j] = min(B[j], d[i][j-1] + 1)`` with unit
  insertions is a running minimum, ``j + cummin(B - j)``, so each row is a handful of
  numpy operations; one row serves every keyroot of the other tree at once (a segmented
  running minimum), and the keyroots of one height in this tree are stacked, since
  neither depends on the others.

The package ``apted`` gives the same distances but takes 4-8 s on a 50 x 10 table; this
takes about 45 ms (``benchmarks/docmetrics_tables.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from docevals_mlflow.docmetrics.table_html import CELL_TAGS, TableNode

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class _Flat:
    """A tree in postorder: labels, cell strings, leftmost leaves, sizes, heights, keyroots."""

    labels: list[tuple[str, int, int]]
    texts: list[str | None]
    lml: IntArray
    size: IntArray
    height: IntArray
    keyroots: list[int]
    children: list[list[int]]


def _flatten(root: TableNode, *, headers_as_cells: bool, structure_only: bool) -> _Flat:
    labels: list[tuple[str, int, int]] = []
    texts: list[str | None] = []
    lml: list[int] = []
    height: list[int] = []
    parent_first: list[bool] = []  # is the node its parent's first child (not a keyroot)
    kids: list[list[int]] = []

    def visit(node: TableNode, first: bool) -> tuple[int, int]:
        start, tall, mine = len(labels), 0, []
        for index, child in enumerate(node.children if node.tag not in CELL_TAGS else ()):
            child_start, child_height = visit(child, index == 0)
            mine.append(len(labels) - 1)
            start = min(start, child_start)
            tall = max(tall, child_height + 1)
        tag = "td" if headers_as_cells and node.tag == "th" else node.tag
        labels.append((tag, node.colspan, node.rowspan))
        cell = node.tag in CELL_TAGS and not structure_only
        texts.append(_token_string(node.tokens) if cell else None)
        lml.append(start)
        height.append(tall)
        parent_first.append(first)
        kids.append(mine)
        return start, tall

    visit(root, False)
    lml_array = np.asarray(lml, dtype=np.int64)
    size = np.arange(len(lml), dtype=np.int64) - lml_array + 1
    keyroots = [i for i, first in enumerate(parent_first) if not first]
    return _Flat(labels, texts, lml_array, size, np.asarray(height, np.int64), keyroots, kids)


_TOKEN_CODES: dict[str, str] = {}


def _token_string(tokens: tuple[str, ...]) -> str:
    """Tokens as one string, one character per token, so ``cdist`` can compare them.

    Markup tokens (``<b>``) get private-use characters of plane 15, which cell text does
    not contain in practice; plain characters stand for themselves.
    """
    out = []
    for token in tokens:
        if len(token) == 1:
            out.append(token)
        else:
            code = _TOKEN_CODES.get(token)
            if code is None:
                code = _TOKEN_CODES.setdefault(token, chr(0xF0000 + len(_TOKEN_CODES)))
            out.append(code)
    return "".join(out)


def _rename_costs(a: _Flat, b: _Flat) -> FloatArray:
    codes: dict[tuple[str, int, int], int] = {}
    la = np.asarray([codes.setdefault(x, len(codes)) for x in a.labels])
    lb = np.asarray([codes.setdefault(x, len(codes)) for x in b.labels])
    costs: FloatArray = (la[:, None] != lb[None, :]).astype(np.float64)
    cells_a = [i for i, text in enumerate(a.texts) if text is not None]
    cells_b = [j for j, text in enumerate(b.texts) if text is not None]
    if cells_a and cells_b:
        distances = cdist(
            [a.texts[i] for i in cells_a],
            [b.texts[j] for j in cells_b],
            scorer=Levenshtein.normalized_distance,
            dtype=np.float64,
        )
        block = costs[np.ix_(cells_a, cells_b)]
        costs[np.ix_(cells_a, cells_b)] = np.where(block == 0.0, distances, block)
    return costs


def _subtree_minima(rename: FloatArray, flat: _Flat, axis: int) -> FloatArray:
    """Along ``axis``, the minimum rename cost over each node's subtree (bottom-up)."""
    out = rename.copy() if axis == 1 else rename.T.copy()
    for j in np.flatnonzero(flat.size > 1):
        kids = flat.children[j]
        out[:, j] = np.minimum(out[:, j], out[:, kids].min(axis=1))
    return out if axis == 1 else out.T


def _leaf_distances(a: _Flat, b: _Flat, rename: FloatArray) -> FloatArray:
    """Distances wherever one side is a leaf; NaN elsewhere (filled by the keyroot pass).

    A leaf against a tree: map it onto the node it renames cheapest and insert the rest.
    """
    td = np.full((len(a.labels), len(b.labels)), np.nan)
    leaves_a = np.flatnonzero(a.size == 1)
    leaves_b = np.flatnonzero(b.size == 1)
    td[leaves_a] = b.size[None, :] - 1 + _subtree_minima(rename[leaves_a], b, axis=1)
    td[:, leaves_b] = a.size[:, None] - 1 + _subtree_minima(rename[:, leaves_b], a, axis=0)
    return td


def _columns(b: _Flat, roots: list[int]) -> tuple[IntArray, ...]:
    """Side-by-side column layout of the forest tables of ``roots`` in tree ``b``.

    Per position: node (a segment's empty column, local index 0, holds ``lml(root) - 1``),
    segment number, local index, position of the column ``lml(node) - 1`` of the same
    segment, and whether the node is on the leftmost path of the segment's root.
    """
    nodes: list[int] = []
    seg: list[int] = []
    local: list[int] = []
    back: list[int] = []
    path: list[bool] = []
    for s, k in enumerate(roots):
        start, base = len(nodes), int(b.lml[k])
        for offset, j in enumerate(range(base - 1, k + 1)):
            nodes.append(j)
            seg.append(s)
            local.append(offset)
            back.append(start + (int(b.lml[j]) - base) if j >= base else start)
            path.append(j >= base and int(b.lml[j]) == base)
    return tuple(np.asarray(x, dtype=np.int64) for x in (nodes, seg, local, back, path))


def _keyroot_pass(a: _Flat, b: _Flat, rename: FloatArray, td: FloatArray) -> None:
    roots_b = [k for k in b.keyroots if b.size[k] > 1]
    # Keyroots of b sorted by height, side by side in one table: a keyroot depends only on
    # keyroots strictly inside it (lower), which a leftmost-path row computes first by
    # repeating the row once per height (the other rows read only finished distances).
    roots_b.sort(key=lambda k: int(b.height[k]))
    passes = len(set(b.height[roots_b].tolist()))
    nodes, seg, local, back, path = _columns(b, roots_b)
    big = 4.0 * (len(a.labels) + len(b.labels) + 2)
    real = local > 0
    layout = _Layout(
        cols=np.where(real, nodes, 0),
        empty=~real,
        lift=(local + seg * big).astype(np.float64),
        back=back,
        on_path=path.astype(bool) & real,
        passes=passes,
    )
    # Keyroots of a of one height are disjoint subtrees: their tables are computed together.
    roots_a = [k for k in a.keyroots if a.size[k] > 1]
    for tall in sorted(set(a.height[roots_a].tolist())):
        group = np.asarray([k for k in roots_a if a.height[k] == tall], dtype=np.int64)
        _forest_tables(group, a.lml, layout, rename, td)


@dataclass(frozen=True)
class _Layout:
    cols: IntArray
    empty: NDArray[np.bool_]
    lift: FloatArray
    back: IntArray
    on_path: NDArray[np.bool_]
    passes: int


def _forest_tables(
    group: IntArray, lml: IntArray, lay: _Layout, rename: FloatArray, td: FloatArray
) -> None:
    """Keyroots ``group`` of ``a`` against all keyroots of ``b``, row by row, side by side.

    Each table is kept shifted, ``U = D - lift`` (``lift`` is the column's index within its
    segment plus a large per-segment offset), which turns the insertion recurrence into a
    running minimum that never crosses into an earlier segment. Shorter tables are padded;
    their padding rows are computed but never written back.
    """
    cols, empty, lift, back, on_path = lay.cols, lay.empty, lay.lift, lay.back, lay.on_path
    bases = lml[group]
    heights = group - bases + 2
    tall = int(heights.max())
    nodes = np.minimum(bases[:, None] + np.arange(tall - 1)[None, :], group[:, None])
    lml_rows = lml[nodes] - bases[:, None]
    correction = lift[back] - lift
    # Gathered once: a row off the leftmost path reads only distances already final.
    known = np.take(td[nodes.ravel()], cols, axis=1).reshape(len(group), tall - 1, len(cols))
    known += correction
    known[:, :, empty] = np.inf
    shifted = np.empty((len(group), tall, len(cols)))
    shifted[:, 0] = _first_row(lift, empty)
    targets = cols[on_path]
    left = (lml_rows == 0) & (np.arange(1, tall)[None, :] < heights[:, None])
    left_rows = set(np.flatnonzero(left.any(axis=0)).tolist())
    above = np.empty((len(group), len(cols)))
    every = np.arange(len(group))
    if len(group) == 1:  # the common root-against-root table: plain rows, fewer calls
        flat, known_flat, lml_flat = shifted[0], known[0], lml_rows[0].tolist()
    for r in range(1, tall):
        if len(group) == 1:
            step = flat[lml_flat[r - 1]][back]
            step += known_flat[r - 1]
            np.add(flat[r - 1], 1.0, out=above[0])
            np.minimum(step, above[0], out=step)
            np.minimum.accumulate(step, out=flat[r])
        else:
            step2 = shifted[every, lml_rows[:, r - 1]][:, back]
            step2 += known[:, r - 1]
            np.add(shifted[:, r - 1], 1.0, out=above)
            np.minimum(step2, above, out=step2)
            np.minimum.accumulate(step2, axis=1, out=shifted[:, r])
        if r - 1 in left_rows:
            on_left = np.flatnonzero(left[:, r - 1])
            _leftmost_row(r, on_left, nodes[on_left, r - 1], rename, shifted, lay, td, targets)


def _leftmost_row(
    r: int,
    which: IntArray,
    nodes: IntArray,
    rename: FloatArray,
    shifted: FloatArray,
    lay: _Layout,
    td: FloatArray,
    targets: IntArray,
) -> None:
    """Row ``r`` of the tables ``which``, whose node is on their keyroot's leftmost path.

    Repeated once per height of b's keyroots: each pass finishes the distances the next
    (taller) segments read from ``td`` in this same row.
    """
    diagonal = np.take(rename[nodes], lay.cols[1:], axis=1) + (lay.lift[:-1] - lay.lift[1:])
    through = shifted[which, r - 1][:, :-1] + diagonal
    above = shifted[which, r - 1] + 1.0
    start = shifted[which, 0][:, lay.back]
    for _ in range(lay.passes):
        step = td[nodes[:, None], lay.cols[None, :]] + (lay.lift[lay.back] - lay.lift) + start
        step[:, lay.empty] = np.inf
        step[:, 1:] = np.where(lay.on_path[1:], through, step[:, 1:])
        np.minimum(step, above, out=step)
        row = np.minimum.accumulate(step, axis=1)
        shifted[which, r] = row
        td[nodes[:, None], targets[None, :]] = row[:, lay.on_path] + lay.lift[lay.on_path]


def _first_row(lift: FloatArray, empty: NDArray[np.bool_]) -> FloatArray:
    """Row 0 (empty forest of ``a``) shifted: the local index minus ``lift``."""
    starts = np.maximum.accumulate(np.where(empty, np.arange(len(lift)), 0))
    local = np.arange(len(lift)) - starts
    return local - lift


def tree_edit_distance(
    a: TableNode,
    b: TableNode,
    *,
    structure_only: bool = False,
    headers_as_cells: bool = True,
) -> float:
    """Edit distance between two table trees under the TEDS cost model.

    ``structure_only`` ignores cell content (TEDS-S); ``headers_as_cells`` compares ``th``
    as ``td`` (as docling-eval does; the PubTabNet code has no ``th``).
    """
    fa = _flatten(a, headers_as_cells=headers_as_cells, structure_only=structure_only)
    fb = _flatten(b, headers_as_cells=headers_as_cells, structure_only=structure_only)
    rename = _rename_costs(fa, fb)
    td = _leaf_distances(fa, fb, rename)
    _keyroot_pass(fa, fb, rename, td)
    return float(td[-1, -1])
