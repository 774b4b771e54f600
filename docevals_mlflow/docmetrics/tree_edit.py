"""Tree edit distance between table trees with the TEDS cost model, vectorised with numpy.

Costs as in the TEDS reference (Zhong et al. 2020): inserting or deleting a node costs 1;
renaming costs 1 when the tags or the spans differ, else, for two cells, the normalized
Levenshtein distance of their content tokens (0 when both are empty), else 0.

The algorithm is Zhang and Shasha's (1989), exact like APTED (which the references call)
but arranged for numpy:

* every rename cost at once: a label-equality matrix and one ``rapidfuzz`` ``cdist`` over
  the distinct cell texts (tables repeat theirs), spread to the cells by index;
* a distance between a leaf and a tree has a closed form (``|T| - 1 + min rename`` since
  renaming never costs more than 1), so the many one-cell keyroots need no table;
* the forest-distance row recurrence ``d[i][j] = min(B[j], d[i][j-1] + 1)`` with unit
  insertions is a running minimum, ``j + cummin(B - j)``, so each row is a handful of
  numpy operations; one row serves every keyroot of the other tree at once (a segmented
  running minimum), and the keyroots of one height in this tree are stacked (eight at a
  time, to stay in the CPU cache), since neither depends on the others;
* identical subtrees (same labels and texts; in TEDS-S most rows of a table) have
  identical distances to everything: one keyroot of each kind is computed, its rows or
  columns copied to the others;
* a leaf on a keyroot's leftmost path needs no special row: its distances are final;
* TEDS and TEDS-S of one pair share one walk of each tree (:func:`tree_edit_distances`).

The package ``apted`` gives the same distances but takes 4-8 s on a 50 x 10 table; this
takes 29-32 ms for TEDS and about 15 ms for TEDS-S, parsing excluded, on a shared 2-core
machine (``benchmarks/docmetrics_tables.py``). Most of it is the row recurrence: about
550 rows of 1,100 columns for the root against every keyroot of the other tree, and 12
rows for each table row against the same columns.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from docevals_mlflow.docmetrics.table_html import CELL_TAGS, TableNode

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class _Flat:
    """A tree in postorder: labels, cell strings, leftmost leaves, sizes, heights, keyroots.

    ``shapes`` numbers each subtree by its labels and cell strings: two subtrees with the
    same number are identical, so their distances to anything are too.
    """

    labels: list[tuple[str, int, int]]
    texts: list[str | None]
    lml: IntArray
    size: IntArray
    height: IntArray
    keyroots: list[int]
    children: list[list[int]]
    shapes: list[int]
    skeleton: list[int]  # the shapes without cell content, for TEDS-S

    def structure(self) -> _Flat:
        """The same tree with cell content ignored."""
        return replace(self, texts=[None] * len(self.texts), shapes=self.skeleton)


def _flatten(root: TableNode, *, headers_as_cells: bool) -> _Flat:
    labels: list[tuple[str, int, int]] = []
    texts: list[str | None] = []
    lml: list[int] = []
    height: list[int] = []
    parent_first: list[bool] = []  # is the node its parent's first child (not a keyroot)
    kids: list[list[int]] = []
    shapes: list[int] = []
    skeleton: list[int] = []
    seen: dict[tuple[object, ...], int] = {}

    def visit(node: TableNode, first: bool) -> tuple[int, int]:
        start, tall, mine = len(labels), 0, []
        for index, child in enumerate(node.children if node.tag not in CELL_TAGS else ()):
            child_start, child_height = visit(child, index == 0)
            mine.append(len(labels) - 1)
            start = min(start, child_start)
            tall = max(tall, child_height + 1)
        tag = "td" if headers_as_cells and node.tag == "th" else node.tag
        label = (tag, node.colspan, node.rowspan)
        text = _token_string(node.tokens) if node.tag in CELL_TAGS else None
        shape = (label, text, *(shapes[k] for k in mine))
        bare = (label, None, *(skeleton[k] for k in mine))
        labels.append(label)
        texts.append(text)
        lml.append(start)
        height.append(tall)
        parent_first.append(first)
        kids.append(mine)
        shapes.append(seen.setdefault(shape, len(seen)))
        skeleton.append(seen.setdefault(bare, len(seen)))
        return start, tall

    visit(root, False)
    lml_array = np.asarray(lml, dtype=np.int64)
    size = np.arange(len(lml), dtype=np.int64) - lml_array + 1
    keyroots = [i for i, first in enumerate(parent_first) if not first]
    heights = np.asarray(height, np.int64)
    return _Flat(labels, texts, lml_array, size, heights, keyroots, kids, shapes, skeleton)


_TOKEN_CODES: dict[str, str] = {}


def _token_string(tokens: tuple[str, ...]) -> str:
    """Tokens as one string, one character per token, so ``cdist`` can compare them.

    Markup tokens (``<b>``) get private-use characters of plane 15, which cell text does
    not contain in practice; plain characters stand for themselves.
    """
    joined = "".join(tokens)
    if len(joined) == len(tokens) and "" not in tokens:  # one character per token
        return joined
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
    # Cells repeat their texts (empty cells, units, numbers): one Levenshtein per distinct
    # pair of texts, spread to the nodes by index. Non-cells share the text None, at
    # distance 0 from itself (a cell and a non-cell never share a label).
    unique_a: dict[str | None, int] = {None: 0}
    unique_b: dict[str | None, int] = {None: 0}
    index_a = np.asarray([unique_a.setdefault(text, len(unique_a)) for text in a.texts])
    index_b = np.asarray([unique_b.setdefault(text, len(unique_b)) for text in b.texts])
    if len(unique_a) == 1 or len(unique_b) == 1:  # no cell content (TEDS-S): labels only
        labels_only: FloatArray = (la[:, None] != lb[None, :]).astype(np.float64)
        return labels_only
    distances = np.zeros((len(unique_a), len(unique_b)))
    distances[1:, 1:] = cdist(
        list(unique_a)[1:],
        list(unique_b)[1:],
        scorer=Levenshtein.normalized_distance,
        dtype=np.float64,
    )
    spread = np.take(np.take(distances, index_a, axis=0), index_b, axis=1)
    costs: FloatArray = np.where(la[:, None] != lb[None, :], 1.0, spread)
    return costs


def _subtree_minima(node_major: FloatArray, flat: _Flat) -> None:
    """In place, each row (a node of ``flat``, postorder) becomes its subtree's minimum.

    A node one above the leaves (a table row) has its subtree in consecutive rows, so a
    slice serves; the few taller nodes take their children's minima, computed first.
    """
    for j in np.flatnonzero(flat.size > 1).tolist():
        if flat.height[j] == 1:
            node_major[j] = node_major[flat.lml[j] : j + 1].min(axis=0)
        else:
            np.minimum(node_major[j], node_major[flat.children[j]].min(axis=0), out=node_major[j])


def _leaf_distances(a: _Flat, b: _Flat, rename: FloatArray) -> FloatArray:
    """Distances wherever one side is a leaf; NaN elsewhere (filled by the keyroot pass).

    A leaf against a tree: map it onto the node it renames cheapest and insert the rest.
    One more column of zeros, never written, is what empty forest columns read (their
    values are replaced by infinity), so they never pick up a NaN of a distance the pass
    has not finished yet.
    """
    td = np.full((len(a.labels), len(b.labels) + 1), np.nan)
    td[:, -1] = 0.0
    leaves_a = np.flatnonzero(a.size == 1)
    leaves_b = np.flatnonzero(b.size == 1)
    inner_b = np.flatnonzero(b.size > 1)
    per_b = np.ascontiguousarray(rename[leaves_a].T)
    _subtree_minima(per_b, b)
    td[leaves_a, :-1] = rename[leaves_a]  # leaf against leaf: the rename
    td[leaves_a[:, None], inner_b[None, :]] = per_b[inner_b].T + (b.size[inner_b] - 1)
    inner_a = np.flatnonzero(a.size > 1)
    per_a = np.take(rename, leaves_b, axis=1)
    _subtree_minima(per_a, a)
    td[inner_a[:, None], leaves_b[None, :]] = per_a[inner_a] + (a.size[inner_a, None] - 1)
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


def _distinct(flat: _Flat, roots: list[int]) -> dict[int, list[int]]:
    """``roots`` (keyroots) grouped by subtree shape: first of each shape -> the others."""
    first: dict[int, int] = {}
    copies: dict[int, list[int]] = {}
    for k in roots:
        one = first.setdefault(flat.shapes[k], k)
        copies.setdefault(one, [])
        if one != k:
            copies[one].append(k)
    return copies


def _layout(a: _Flat, b: _Flat) -> _Layout:
    """The side-by-side columns of b's keyroots, one of each shape (copied to the others)."""
    copies = _distinct(b, [k for k in b.keyroots if b.size[k] > 1])
    roots = sorted(copies, key=lambda k: int(b.height[k]))
    nodes, seg, local, back, path = _columns(b, roots)
    big = 4.0 * (len(a.labels) + len(b.labels) + 2)
    real = local > 0
    on_path = path.astype(bool) & real
    lift = (local + seg * big).astype(np.float64)
    correction = lift[back] - lift
    correction[~real] = np.inf
    # One band per height: a keyroot reads only distances of lower keyroots, so the bands
    # of a leftmost-path row are computed in order, each finishing what the next reads.
    heights = b.height[roots]
    bands = []
    for tall in sorted(set(heights.tolist())):
        ranks = np.flatnonzero(heights == tall)
        start, stop = int(np.searchsorted(seg, ranks[0])), int(np.searchsorted(seg, ranks[-1] + 1))
        # Where the leftmost-path results go: the keyroot's columns and its copies'.
        write_pos, write_col = [], []
        for rank in ranks.tolist():
            mine = start + np.flatnonzero(on_path[start:stop] & (seg[start:stop] == rank))
            k = roots[rank]
            for other in [k, *copies[k]]:
                write_pos.append(mine)
                write_col.append(nodes[mine] + (b.lml[other] - b.lml[k]))
        bands.append((start, stop, np.concatenate(write_pos), np.concatenate(write_col)))
    return _Layout(
        cols=np.where(real, nodes, len(b.labels)),
        empty=~real,
        lift=lift,
        back=back,
        on_path=on_path,
        correction=correction,
        bands=bands,
    )


_CHUNK = 8  # keyroots per batch: rows of 8 tables stay in the CPU cache, 49 do not


def _keyroot_pass(a: _Flat, b: _Flat, rename: FloatArray, td: FloatArray) -> None:
    # Identical subtrees (in TEDS-S most rows are) have identical distances: one keyroot of
    # each shape is computed, its results copied to the others.
    layout = _layout(a, b)
    # Keyroots of a of one height are disjoint subtrees: their tables are computed together.
    copies_a = _distinct(a, [k for k in a.keyroots if a.size[k] > 1])
    for tall in sorted(set(a.height[list(copies_a)].tolist())):
        group = np.asarray([k for k in copies_a if a.height[k] == tall], dtype=np.int64)
        for chunk in range(0, len(group), _CHUNK):
            _forest_tables(group[chunk : chunk + _CHUNK], a.lml, layout, rename, td)
        for k in group.tolist():
            for other in copies_a[k]:
                td[a.lml[other] : other + 1] = td[a.lml[k] : k + 1]


@dataclass(frozen=True)
class _Layout:
    cols: IntArray
    empty: NDArray[np.bool_]
    lift: FloatArray
    back: IntArray
    on_path: NDArray[np.bool_]
    correction: FloatArray  # shift from a column's lml - 1 to it; inf on empty columns
    bands: list[tuple[int, int, IntArray, IntArray]]  # start, stop, write positions, columns


def _forest_tables(
    group: IntArray, lml: IntArray, lay: _Layout, rename: FloatArray, td: FloatArray
) -> None:
    """Keyroots ``group`` of ``a`` against all keyroots of ``b``, row by row, side by side.

    Each table is kept shifted, ``V = D - lift - r`` (``lift`` is the column's index within
    its segment plus a large per-segment offset, ``r`` the row), which turns the insertion
    recurrence into a running minimum that never crosses into an earlier segment and the
    deletion into a plain minimum with the row above. Shorter tables are padded; their
    padding rows are computed but never written back.
    """
    back = lay.back
    bases = lml[group]
    heights = group - bases + 2
    tall = int(heights.max())
    width = len(lay.cols)
    nodes = np.minimum(bases[:, None] + np.arange(tall - 1)[None, :], group[:, None])
    lml_rows = lml[nodes] - bases[:, None]
    # Gathered once: a row off the leftmost path reads only distances already final.
    known = np.take(td[nodes.ravel()], lay.cols, axis=1).reshape(len(group), tall - 1, width)
    known += lay.correction
    # Row r reads row lml - 1 (its own index in ``lml_rows``): shifted by r - that row.
    known -= (np.arange(1, tall)[None, :] - lml_rows)[:, :, None]
    shifted = np.empty((len(group), tall, width))
    shifted[:, 0] = _first_row(lay.lift, lay.empty)
    # Rows of the leftmost path need the special pass, except a leaf's: its distances are
    # final already (closed form), so the general recurrence gives its row.
    left = (lml_rows == 0) & (np.arange(1, tall)[None, :] < heights[:, None])
    left &= lml[nodes] < nodes
    left_rows = set(np.flatnonzero(left.any(axis=0)).tolist())
    # Rows of leaves start from the row just above, in every table: no gather needed.
    previous = (lml_rows == np.arange(tall - 1)[None, :]).all(axis=0).tolist()
    every = np.arange(len(group))
    one = len(group) == 1  # the common root-against-root table: plain rows, fewer calls
    flat, known_flat, lml_flat = shifted[0], known[0], lml_rows[0].tolist()
    for r in range(1, tall):
        if one:
            step = flat[lml_flat[r - 1]][back]
            step += known_flat[r - 1]
            np.minimum(step, flat[r - 1], out=step)
            np.fmin.accumulate(step, out=flat[r])
        else:
            source = shifted[:, r - 1] if previous[r - 1] else shifted[every, lml_rows[:, r - 1]]
            many = source[:, back]
            many += known[:, r - 1]
            np.minimum(many, shifted[:, r - 1], out=many)
            np.fmin.accumulate(many, axis=1, out=shifted[:, r])
        if r - 1 in left_rows:
            on_left = np.flatnonzero(left[:, r - 1])
            _leftmost_row(r, on_left, nodes[on_left, r - 1], rename, shifted, lay, td)


def _leftmost_row(
    r: int,
    which: IntArray,
    nodes: IntArray,
    rename: FloatArray,
    shifted: FloatArray,
    lay: _Layout,
    td: FloatArray,
) -> None:
    """Row ``r`` of the tables ``which``, whose node is on their keyroot's leftmost path.

    Band by band (b's keyroots by height): each band finishes the distances the next,
    taller one reads from ``td`` in this same row.
    """
    # Clipped: empty columns (one past the end) are never on a path, their value unused.
    renamed = np.take(rename[nodes], lay.cols, axis=1, mode="clip")
    through = np.empty_like(renamed)
    through[:, 0] = np.inf
    through[:, 1:] = shifted[which, r - 1][:, :-1] + renamed[:, 1:]
    through[:, 1:] += lay.lift[:-1] - lay.lift[1:] - 1.0
    above = shifted[which, r - 1]
    start = shifted[which, 0][:, lay.back] + (lay.correction - r)
    flat_index = nodes[:, None] * td.shape[1] + lay.cols[None, :]
    for first, stop, write_pos, write_col in lay.bands:
        step = np.take(td, flat_index[:, first:stop]) + start[:, first:stop]
        step = np.where(lay.on_path[first:stop], through[:, first:stop], step)
        np.minimum(step, above[:, first:stop], out=step)
        row = np.fmin.accumulate(step, axis=1)
        shifted[which, r, first:stop] = row
        values = row[:, write_pos - first] + (lay.lift[write_pos] + r)
        td[nodes[:, None], write_col[None, :]] = values


def _first_row(lift: FloatArray, empty: NDArray[np.bool_]) -> FloatArray:
    """Row 0 (empty forest of ``a``) shifted: the local index minus ``lift``."""
    starts = np.maximum.accumulate(np.where(empty, np.arange(len(lift)), 0))
    local = np.arange(len(lift)) - starts
    return local - lift


def _distance(fa: _Flat, fb: _Flat) -> float:
    rename = _rename_costs(fa, fb)
    td = _leaf_distances(fa, fb, rename)
    if len(fa.labels) > 1 and len(fb.labels) > 1:  # else a leaf: all distances known
        _keyroot_pass(fa, fb, rename, td)
    return float(td[-1, -2])


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
    fa = _flatten(a, headers_as_cells=headers_as_cells)
    fb = _flatten(b, headers_as_cells=headers_as_cells)
    if structure_only:
        return _distance(fa.structure(), fb.structure())
    return _distance(fa, fb)


def tree_edit_distances(
    a: TableNode, b: TableNode, *, headers_as_cells: bool = True
) -> tuple[float, float]:
    """The distances of :func:`tree_edit_distance` with and without cell content, from one
    walk of each tree."""
    fa = _flatten(a, headers_as_cells=headers_as_cells)
    fb = _flatten(b, headers_as_cells=headers_as_cells)
    return _distance(fa, fb), _distance(fa.structure(), fb.structure())
