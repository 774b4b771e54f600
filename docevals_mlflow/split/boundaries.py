"""Where documents start: boundary precision, recall and F1.

The pages of a packet are read in page-index order (the union of both sides). A
side has a *boundary* between two neighbouring pages when they are not in the same
section of that side; a page that a side lacks is a section of its own there, so
dropping a page breaks the document around it. A boundary is named by the page
right after it (``5`` = "a new document starts at page 5").

Expected and predicted boundaries are compared as sets: TP = both, FP = predicted
only (``spurious``: a document cut in two), FN = expected only (``missed``: two
documents run together). Classes play no part here; they are scored by page-level
accuracy and the per-class figures.
"""

from __future__ import annotations

from typing import Any

from docevals_mlflow.split.alignment import (
    ABSENT,
    Alignment,
    BoolArray,
    IntArray,
    per_packet,
    split_by_packet,
)
from docevals_mlflow.split.scores import Detection, detection


class BoundaryScores(Detection):
    """Boundary detection in one packet, with where it went wrong."""

    expected: int
    """Boundaries in the expected packet."""
    predicted: int
    """Boundaries in the predicted packet."""
    missed: list[int]
    """Pages that start a document but were not predicted to (FN)."""
    spurious: list[int]
    """Pages predicted to start a document that do not (FP)."""


def _boundaries(section: IntArray, same_packet: BoolArray) -> BoolArray:
    before, after = section[:-1], section[1:]
    found: BoolArray = same_packet & ((before != after) | (before == ABSENT) | (after == ABSENT))
    return found


def packet_boundaries(alignment: Alignment) -> list[dict[str, Any]]:
    """The :class:`BoundaryScores` dict of every packet of a batch."""
    packets = alignment.packets
    owner = alignment.packet[1:]
    same_packet = owner == alignment.packet[:-1]
    expected = _boundaries(alignment.expected_section, same_packet)
    predicted = _boundaries(alignment.predicted_section, same_packet)
    starts = alignment.pages[1:]
    hits = per_packet(expected & predicted, owner, packets).tolist()
    expected_count = per_packet(expected, owner, packets).tolist()
    predicted_count = per_packet(predicted, owner, packets).tolist()
    missed_mask, spurious_mask = expected & ~predicted, predicted & ~expected
    missed = split_by_packet(starts[missed_mask].tolist(), owner[missed_mask], packets)
    spurious = split_by_packet(starts[spurious_mask].tolist(), owner[spurious_mask], packets)
    return [
        {
            **detection(hits[i], len(spurious[i]), len(missed[i])),
            "expected": expected_count[i],
            "predicted": predicted_count[i],
            "missed": missed[i],
            "spurious": spurious[i],
        }
        for i in range(packets)
    ]


__all__ = ["BoundaryScores", "packet_boundaries"]
