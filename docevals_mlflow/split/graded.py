"""Graded packet scores: how close the grouping and the page order are.

Exact-match accuracies give no credit to a document that is one page off. These
scores do (the DocSplit paper's packet evaluation, as in ``stickler.doc_split``):

* **clustering**: sections are clusters of pages. Homogeneity, completeness and
  their harmonic mean, the V-measure; the Rand index (share of page pairs on which
  both sides agree: together or apart); the adjusted Rand index (corrected for
  chance: 0 for a random split, 1 for a perfect one, negative when worse than
  chance). A page that one side lacks is a cluster of its own on that side.
* **ordering**: per expected section, Kendall's tau-b between each page's position
  in that section and its position in the predicted section that holds it, over
  the pages the prediction has; a section with one such page scores 1, an undefined
  tau (all predicted positions tied) scores 0, a section the prediction lacks
  entirely is left out. ``kendall_tau`` is the mean over sections.
* ``clustering_score`` = ½ V-measure + ½ Rand index and ``packet_score`` =
  ½ clustering + ½ ordering, Stickler's defaults.

The clustering figures of every packet of a batch come from one sparse contingency
table (labels never span packets, so per-packet sums are ``bincount`` calls); tau-b
is vectorised over all small sections of the batch at once
(``scipy.stats.kendalltau`` for big ones). No value is defined for a packet without
pages.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from docevals_mlflow.split.alignment import ABSENT, Alignment, IntArray
from docevals_mlflow.split.scores import ReportPart, mean

FloatArray = npt.NDArray[np.float64]
_BINCOUNT_CELLS = 1 << 22
LARGE_SECTION = 128
"""Sections with more pages than this get tau-b from scipy (O(n log n)) instead of
the all-pairs pass, whose cost grows with the square of the largest section."""


class GradedFigures(ReportPart):
    """Clustering and ordering scores (``None`` where undefined)."""

    homogeneity: float | None
    completeness: float | None
    v_measure: float | None
    rand_index: float | None
    adjusted_rand_index: float | None
    kendall_tau: float | None
    clustering_score: float | None
    packet_score: float | None


FIGURES: tuple[str, ...] = tuple(GradedFigures.model_fields)
"""The names of the graded figures, in report order."""


class GradedScores(GradedFigures):
    """The graded scores of one packet (``None`` without pages)."""

    section_tau: dict[str, float | None]
    """Kendall's tau-b per expected section (``None``: the prediction lacks it)."""


# --------------------------------------------------------------------------- clustering


def _labels(section: IntArray, section_count: int) -> IntArray:
    """Cluster labels: the section, or a fresh label for each page the side lacks."""
    absent = section == ABSENT
    if not absent.any():
        return section
    labels = section.copy()
    labels[absent] = section_count + np.arange(int(absent.sum()))
    return labels


def _divide(top: FloatArray, bottom: FloatArray) -> FloatArray:
    """``top / bottom`` where ``bottom`` is not zero, else 0 (callers choose the value)."""
    out = np.zeros_like(top, dtype=np.float64)
    np.divide(top, bottom, out=out, where=bottom != 0)
    return out


def _sum_by(owner: IntArray, values: FloatArray, packets: int) -> FloatArray:
    sums: FloatArray = np.bincount(owner, weights=values, minlength=packets).astype(np.float64)
    return sums


def clustering_by_packet(
    left: IntArray, right: IntArray, owner: IntArray, packets: int
) -> dict[str, FloatArray]:
    """Homogeneity, completeness, V-measure, Rand and adjusted Rand index per packet.

    ``left`` and ``right`` label each page (non-negative integers; a label never
    spans two packets) and ``owner`` names its packet. All packets are scored at
    once from one sparse contingency table. A packet without pages gets 1s (the
    caller leaves such packets undefined).
    """
    table = _contingency(left, right, owner, packets)
    homogeneity, completeness = _entropy_scores(table, packets)
    both = homogeneity + completeness
    v_measure = _divide(2 * homogeneity * completeness, both)
    rand, adjusted = _rand_scores(table, packets)
    return {
        "homogeneity": homogeneity,
        "completeness": completeness,
        "v_measure": v_measure,
        "rand_index": rand,
        "adjusted_rand_index": adjusted,
    }


class _Contingency(NamedTuple):
    """The non-zero cells of a batch's (expected label, predicted label) table."""

    size: FloatArray
    """Pages per packet."""
    rows: IntArray
    """Pages per expected label."""
    cols: IntArray
    """Pages per predicted label."""
    row_owner: IntArray
    col_owner: IntArray
    width: int
    present: IntArray
    """The non-zero cells, as ``row * width + col``."""
    cells: FloatArray
    """Pages in each of them."""
    cell_owner: IntArray
    used_rows: IntArray
    used_cols: IntArray


def _contingency(left: IntArray, right: IntArray, owner: IntArray, packets: int) -> _Contingency:
    size = np.bincount(owner, minlength=packets).astype(np.float64)
    rows, cols = np.bincount(left), np.bincount(right)
    row_owner = np.zeros(rows.size, dtype=np.int64)
    row_owner[left] = owner
    col_owner = np.zeros(cols.size, dtype=np.int64)
    col_owner[right] = owner
    width = cols.size
    codes = left * width + right
    if rows.size * width <= _BINCOUNT_CELLS:
        table = np.bincount(codes, minlength=rows.size * width)
        present = np.flatnonzero(table)
        cells = table[present].astype(np.float64)
    else:
        present, counts = np.unique(codes, return_counts=True)
        cells = counts.astype(np.float64)
    cell_owner = row_owner[present // width]
    used_rows, used_cols = np.flatnonzero(rows), np.flatnonzero(cols)
    return _Contingency(
        size,
        rows,
        cols,
        row_owner,
        col_owner,
        width,
        present,
        cells,
        cell_owner,
        used_rows,
        used_cols,
    )


def _entropy_scores(table: _Contingency, packets: int) -> tuple[FloatArray, FloatArray]:
    """Homogeneity and completeness per packet."""
    rows, cols, present, width = table.rows, table.cols, table.present, table.width
    cells, cell_owner, size = table.cells, table.cell_owner, table.size
    used_rows, used_cols = table.used_rows, table.used_cols
    row_owner, col_owner = table.row_owner, table.col_owner
    cell_total = size[cell_owner]
    # Mutual information over the non-zero cells: sum n_ij/N log(n_ij N / (a_i b_j)).
    expected = rows[present // width].astype(np.float64) * cols[present % width]
    information = _sum_by(
        cell_owner, cells / cell_total * np.log(cells * cell_total / expected), packets
    )
    row_share = rows[used_rows] / size[row_owner[used_rows]]
    col_share = cols[used_cols] / size[col_owner[used_cols]]
    left_entropy = _sum_by(row_owner[used_rows], -row_share * np.log(row_share), packets)
    right_entropy = _sum_by(col_owner[used_cols], -col_share * np.log(col_share), packets)
    cell_count = np.bincount(cell_owner, minlength=packets)
    row_count = np.bincount(row_owner[used_rows], minlength=packets)
    col_count = np.bincount(col_owner[used_cols], minlength=packets)
    # Homogeneity is 1 exactly when every predicted cluster lies inside one expected
    # cluster (one non-zero cell per column), completeness when every expected cluster
    # lies inside one predicted cluster; said so directly, since the logarithms would
    # give 0.9999999999999999 for a perfect split.
    homogeneity = np.where(
        (left_entropy == 0) | (cell_count == col_count),
        1.0,
        _divide(information, left_entropy),
    )
    completeness = np.where(
        (right_entropy == 0) | (cell_count == row_count),
        1.0,
        _divide(information, right_entropy),
    )
    return homogeneity, completeness


def _rand_scores(table: _Contingency, packets: int) -> tuple[FloatArray, FloatArray]:
    """Rand and adjusted Rand index per packet."""
    used_rows, used_cols = table.used_rows, table.used_cols

    def pairs(counts: FloatArray, counts_owner: IntArray) -> FloatArray:
        return _sum_by(counts_owner, counts * (counts - 1) / 2, packets)

    together = pairs(table.cells, table.cell_owner)
    left_together = pairs(table.rows[used_rows].astype(np.float64), table.row_owner[used_rows])
    right_together = pairs(table.cols[used_cols].astype(np.float64), table.col_owner[used_cols])
    pair_count = table.size * (table.size - 1) / 2
    apart = pair_count - left_together - right_together + together
    rand = np.where(pair_count == 0, 1.0, _divide(together + apart, pair_count))
    chance = _divide(left_together * right_together, pair_count)
    best = (left_together + right_together) / 2
    # The adjusted index is 0/0 only when both sides are one cluster, or both all
    # single pages: then they are identical and agree perfectly.
    trivial = (pair_count == 0) | (
        (left_together == right_together) & ((left_together == 0) | (left_together == pair_count))
    )
    adjusted = np.where(trivial, 1.0, _divide(together - chance, best - chance))
    return rand, adjusted


def clustering_scores(left: IntArray, right: IntArray) -> dict[str, float]:
    """The clustering figures of two labelings of the same (at least one) pages."""
    scores = clustering_by_packet(left, right, np.zeros(left.size, dtype=np.int64), 1)
    return {name: float(values[0]) for name, values in scores.items()}


# --------------------------------------------------------------------------- ordering


def _tau_small(groups: IntArray, x: IntArray, y: IntArray, count: int) -> FloatArray:
    """tau-b for every group at once; rows sorted by group, groups smaller than
    :data:`LARGE_SECTION`. Pairs inside a group are at most ``size - 1`` rows apart,
    so one vectorised pass per distance covers them all."""
    numerator = np.zeros(count)
    untied_x = np.zeros(count)
    untied_y = np.zeros(count)
    sizes = np.bincount(groups, minlength=count)
    for distance in range(1, int(sizes.max(initial=0))):
        same = groups[distance:] == groups[:-distance]
        if not same.any():
            continue
        owner = groups[distance:][same]
        sign_x = np.sign(x[distance:][same] - x[:-distance][same])
        sign_y = np.sign(y[distance:][same] - y[:-distance][same])
        numerator += np.bincount(owner, weights=sign_x * sign_y, minlength=count)
        untied_x += np.bincount(owner, weights=sign_x != 0, minlength=count)
        untied_y += np.bincount(owner, weights=sign_y != 0, minlength=count)
    denominator = np.sqrt(untied_x * untied_y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )


def section_taus(alignment: Alignment) -> list[float | None]:
    """Kendall's tau-b per expected section of the batch (see the module docstring)."""
    count = alignment.expected.section_count
    present = alignment.in_both
    groups = alignment.expected_section[present]
    x = alignment.expected_position[present]
    y = alignment.predicted_position[present]
    order = np.argsort(groups, kind="stable")
    groups, x, y = groups[order], x[order], y[order]
    sizes = np.bincount(groups, minlength=count)
    small = sizes[groups] <= LARGE_SECTION
    taus = _tau_small(groups[small], x[small], y[small], count)
    large = np.flatnonzero(sizes > LARGE_SECTION).tolist()
    if large:
        # scipy.stats takes a third of a second to import; most packets never need it.
        from scipy.stats import kendalltau
    for group in large:
        member = groups == group
        taus[group] = kendalltau(x[member], y[member]).statistic
    out: list[float | None] = []
    for size, tau in zip(sizes.tolist(), taus.tolist(), strict=True):
        if size == 0:
            out.append(None)
        elif size == 1:
            out.append(1.0)
        else:
            out.append(0.0 if math.isnan(tau) else tau)
    return out


# --------------------------------------------------------------------------- packet


def packet_graded(alignment: Alignment) -> list[dict[str, Any]]:
    """The :class:`GradedScores` dict of every packet of a batch."""
    packets = alignment.packets
    taus = section_taus(alignment)
    ids = [section.section_id for section in alignment.expected.sections]
    starts = alignment.expected.section_start.tolist()
    scores = clustering_by_packet(
        _labels(alignment.expected_section, alignment.expected.section_count),
        _labels(alignment.predicted_section, alignment.predicted.section_count),
        alignment.packet,
        packets,
    )
    figures = {name: values.tolist() for name, values in scores.items()}
    pages = np.diff(alignment.start).tolist()
    out: list[dict[str, Any]] = []
    for i in range(packets):
        section_tau = dict(
            zip(ids[starts[i] : starts[i + 1]], taus[starts[i] : starts[i + 1]], strict=True)
        )
        if not pages[i]:
            out.append({**dict.fromkeys(FIGURES), "section_tau": section_tau})
            continue
        entry: dict[str, Any] = {name: values[i] for name, values in figures.items()}
        ordering = mean(section_tau.values())
        clustering = 0.5 * entry["v_measure"] + 0.5 * entry["rand_index"]
        entry.update(
            kendall_tau=ordering,
            clustering_score=clustering,
            packet_score=None if ordering is None else 0.5 * clustering + 0.5 * ordering,
            section_tau=section_tau,
        )
        out.append(entry)
    return out


__all__ = [
    "FIGURES",
    "LARGE_SECTION",
    "GradedFigures",
    "GradedScores",
    "clustering_by_packet",
    "clustering_scores",
    "packet_graded",
    "section_taus",
]
