"""One-to-one section matching: a strict section score and the closest counterparts.

The seed's split accuracy asks, for each expected section, whether *some* predicted
section has its pages and class; extra predicted sections cost nothing. Here each
predicted section may stand for at most one expected section:

1. Sections are paired one-to-one by maximum total overlap (intersection over union
   of their page sets), class agreement breaking ties; pairs that share no page are
   not pairs. The assignment covers a whole batch at once: sections that overlap
   only one counterpart pair directly, and the rest is solved with
   ``scipy.optimize.linear_sum_assignment``, per connected group of overlapping
   sections when the problem is big.
2. A pair is an *exact* match when the page sets and classes are equal, *ordered*
   when the page lists are equal too.
3. Exact matches are TP, other expected sections FN, other predicted sections FP:
   precision, recall and F1 penalise over-segmentation and invented sections, which
   the seed's accuracy does not.

``mean_iou`` (over expected sections, 0 for an unpaired one) gives partial credit;
``split_sections`` counts expected sections spread over several predicted ones and
``merged_sections`` predicted sections covering several expected ones. Sections
without pages pair only with each other (overlap 1 when both are empty).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from docevals_mlflow.core.assignment import linear_sum_assignment
from docevals_mlflow.split.alignment import Alignment, IntArray, per_packet
from docevals_mlflow.split.scores import Detection, ReportPart, detection, ratio

# Class agreement only breaks ties between equal overlaps; it must stay far below any
# real difference of two IoU values.
_CLASS_BONUS = 1e-9

FloatArray = npt.NDArray[np.float64]


class SectionMatch(ReportPart):
    """An expected section and its one-to-one counterpart (if any)."""

    section_id: str
    document_class: str
    matched_section_id: str | None
    predicted_class: str | None
    overlap: int
    """Pages both sections hold."""
    iou: float
    """overlap / pages in either section; 0 without a counterpart."""
    exact: bool
    """Same page set and class."""
    ordered: bool
    """Exact, and the pages in the same order."""
    fragments: int
    """How many predicted sections hold pages of this section."""


class MatchingFigures(ReportPart):
    """The one-to-one section matching figures of a packet or of a batch."""

    expected_sections: int
    predicted_sections: int
    exact: Detection
    ordered: Detection
    mean_iou: float | None
    """Sum of paired IoU / expected sections (over all packets, for a batch)."""
    split_sections: int
    merged_sections: int


class MatchingScores(MatchingFigures):
    """The strict one-to-one section scores of one packet."""

    section_details: list[SectionMatch]
    unpaired_predicted: list[str]
    """Predicted sections without a counterpart (no shared page, or outbid)."""


def _edges(alignment: Alignment) -> tuple[IntArray, IntArray, IntArray]:
    """Overlapping (expected, predicted) section pairs and their shared page counts.

    Section indices are global, so pairs never cross packets.
    """
    both = alignment.in_both
    left = alignment.expected_section[both]
    right = alignment.predicted_section[both]
    width = max(alignment.predicted.section_count, 1)
    codes, shared = np.unique(left * width + right, return_counts=True)
    return codes // width, codes % width, shared.astype(np.int64)


def _empty_edges(alignment: Alignment) -> tuple[IntArray, IntArray]:
    """Pairs of sections without pages, within each packet."""
    left = np.flatnonzero(alignment.expected.lengths == 0)
    right = np.flatnonzero(alignment.predicted.lengths == 0)
    rows: list[int] = []
    cols: list[int] = []
    if left.size and right.size:
        by_packet: dict[int, list[int]] = {}
        for section, packet in zip(
            right.tolist(), alignment.predicted.section_packet[right].tolist(), strict=True
        ):
            by_packet.setdefault(packet, []).append(section)
        for section, packet in zip(
            left.tolist(), alignment.expected.section_packet[left].tolist(), strict=True
        ):
            for other in by_packet.get(packet, ()):
                rows.append(section)
                cols.append(other)
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def _dense(rows: IntArray, cols: IntArray, weights: FloatArray) -> IntArray:
    """Edges picked by one dense assignment over the rows and columns they touch."""
    block_rows, row_at = np.unique(rows, return_inverse=True)
    block_cols, col_at = np.unique(cols, return_inverse=True)
    block = np.zeros((block_rows.size, block_cols.size))
    block[row_at, col_at] = weights
    edge = np.full(block.shape, -1, dtype=np.int64)
    edge[row_at, col_at] = np.arange(rows.size)
    picked_rows, picked_cols = linear_sum_assignment(block, maximize=True)
    keep = block[picked_rows, picked_cols] > 0
    picked: IntArray = edge[picked_rows[keep], picked_cols[keep]]
    return picked


def assign(rows: IntArray, cols: IntArray, weights: FloatArray) -> IntArray:
    """A maximum-weight one-to-one assignment over weighted edges; returns the indices
    of the chosen edges (edges of weight 0 are never chosen).

    When no row or column has two edges, every edge is chosen. Otherwise the edges
    are split into connected groups: a group with one edge is a pair, any other is
    solved on its own dense block. A packet's result therefore does not depend on
    the other packets of the batch, even where equal overlaps leave a choice.
    """
    if not rows.size:
        return np.zeros(0, dtype=np.int64)
    if np.bincount(rows).max() == 1 and np.bincount(cols).max() == 1:
        every: IntArray = np.flatnonzero(weights > 0)
        return every
    # Imported here: scipy.sparse costs a tenth of a second to import, and packets
    # without overlapping sections (the common case) return above.
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    count_rows, count_cols = int(rows.max()) + 1, int(cols.max()) + 1
    graph = coo_matrix(
        (np.ones(rows.size), (rows, cols + count_rows)),
        shape=(count_rows + count_cols, count_rows + count_cols),
    )
    _, component = connected_components(graph, directed=False)
    edge_group = component[rows]
    sizes = np.bincount(edge_group)
    single = sizes[edge_group] == 1
    chosen = [np.flatnonzero(single & (weights > 0))]
    crowded = np.flatnonzero(~single)
    if crowded.size:
        order = crowded[np.argsort(edge_group[crowded], kind="stable")]
        cuts = np.flatnonzero(np.diff(edge_group[order])) + 1
        for part in np.split(order, cuts):
            chosen.append(part[_dense(rows[part], cols[part], weights[part])])
    picked: IntArray = np.concatenate(chosen)
    return picked


def packet_matching(alignment: Alignment) -> list[dict[str, Any]]:
    """The :class:`MatchingScores` dict of every packet of a batch."""
    pairs = _pair_sections(alignment)
    details, exact, ordered, section_iou = _section_details(alignment, pairs)
    left, right = alignment.expected, alignment.predicted
    packets = alignment.packets
    owner_left, owner_right = left.section_packet, right.section_packet
    expected_count = np.bincount(owner_left, minlength=packets).tolist()
    predicted_count = np.bincount(owner_right, minlength=packets).tolist()
    exact_count = per_packet(exact, owner_left, packets).tolist()
    ordered_count = per_packet(ordered, owner_left, packets).tolist()
    iou_total = np.bincount(owner_left, weights=section_iou, minlength=packets).tolist()
    split_count = per_packet(pairs.fragments > 1, owner_left, packets).tolist()
    merged_count = per_packet(pairs.covered > 1, owner_right, packets).tolist()
    left_start = left.section_start.tolist()
    unpaired = [
        section.section_id
        for section, taken in zip(right.sections, pairs.paired.tolist(), strict=True)
        if not taken
    ]
    unpaired_owner = owner_right[~pairs.paired]
    unpaired_cut = np.searchsorted(unpaired_owner, np.arange(packets + 1)).tolist()
    out = []
    for i in range(packets):
        total, guessed, hits = expected_count[i], predicted_count[i], exact_count[i]
        out.append(
            {
                "expected_sections": total,
                "predicted_sections": guessed,
                "exact": detection(hits, guessed - hits, total - hits),
                "ordered": detection(
                    ordered_count[i], guessed - ordered_count[i], total - ordered_count[i]
                ),
                "mean_iou": ratio(iou_total[i], total),
                "split_sections": split_count[i],
                "merged_sections": merged_count[i],
                "section_details": details[left_start[i] : left_start[i + 1]],
                "unpaired_predicted": unpaired[unpaired_cut[i] : unpaired_cut[i + 1]],
            }
        )
    return out


class _Pairs(NamedTuple):
    """The one-to-one pairing of a batch's sections, as candidate edges."""

    cols: IntArray
    shared: IntArray
    iou: FloatArray
    partner: IntArray
    """Per expected section, the index of its picked edge (-1: unpaired)."""
    paired: npt.NDArray[np.bool_]
    """Per predicted section, whether it was paired."""
    fragments: IntArray
    """Per expected section, how many predicted sections share a page with it."""
    covered: IntArray
    """Per predicted section, how many expected sections share a page with it."""


def _pair_sections(alignment: Alignment) -> _Pairs:
    left, right = alignment.expected, alignment.predicted
    rows, cols, shared = _edges(alignment)
    fragments = np.bincount(rows, minlength=left.section_count)
    covered = np.bincount(cols, minlength=right.section_count)
    empty_rows, empty_cols = _empty_edges(alignment)
    rows = np.concatenate([rows, empty_rows])
    cols = np.concatenate([cols, empty_cols])
    shared = np.concatenate([shared, np.zeros(empty_rows.size, dtype=np.int64)])
    union = left.lengths[rows] + right.lengths[cols] - shared
    iou = np.where(union > 0, shared / np.maximum(union, 1), 1.0)
    same_class = left.class_codes[rows] == right.class_codes[cols]
    picked = assign(rows, cols, iou + _CLASS_BONUS * same_class)
    partner = np.full(left.section_count, -1, dtype=np.int64)
    partner[rows[picked]] = picked
    paired = np.zeros(right.section_count, dtype=bool)
    paired[cols[picked]] = True
    return _Pairs(cols, shared, iou, partner, paired, fragments, covered)


def _section_details(
    alignment: Alignment, pairs: _Pairs
) -> tuple[list[dict[str, Any]], npt.NDArray[np.bool_], npt.NDArray[np.bool_], FloatArray]:
    """Each expected section's :class:`SectionMatch` dict, and per expected section
    whether it matched exactly, in order, and its IoU."""
    left, right = alignment.expected, alignment.predicted
    edge_of = pairs.partner.tolist()
    cols_list, iou_list, shared_list = (
        pairs.cols.tolist(),
        pairs.iou.tolist(),
        pairs.shared.tolist(),
    )
    fragments_list = pairs.fragments.tolist()
    details: list[dict[str, Any]] = []
    exact = np.zeros(left.section_count, dtype=bool)
    ordered = np.zeros(left.section_count, dtype=bool)
    section_iou = np.zeros(left.section_count)
    for index, section in enumerate(left.sections):
        row: dict[str, Any] = {
            "section_id": section.section_id,
            "document_class": section.document_class,
            "matched_section_id": None,
            "predicted_class": None,
            "overlap": 0,
            "iou": 0.0,
            "exact": False,
            "ordered": False,
            "fragments": fragments_list[index],
        }
        edge = edge_of[index]
        if edge >= 0:
            other = right.sections[cols_list[edge]]
            pair_iou = iou_list[edge]
            is_exact = pair_iou == 1.0 and other.document_class == section.document_class
            is_ordered = is_exact and other.page_indices == section.page_indices
            row.update(
                matched_section_id=other.section_id,
                predicted_class=other.document_class,
                overlap=shared_list[edge],
                iou=pair_iou,
                exact=is_exact,
                ordered=is_ordered,
            )
            exact[index], ordered[index], section_iou[index] = is_exact, is_ordered, pair_iou
        details.append(row)
    return details, exact, ordered, section_iou


__all__ = ["MatchingFigures", "MatchingScores", "SectionMatch", "assign", "packet_matching"]
