"""Both sides of many packets as columns over the union of each packet's pages.

Every split metric looks at the same few facts per page: which section holds it on
each side, that section's class, and the page's position inside it. They are
computed here once for a whole batch of packets, as numpy arrays, so that every
metric is a handful of array operations for the batch instead of a loop over pages
or packets (the 10,000-page target holds for 2,000 five-page packets as well as for
one 10,000-page packet).

Sections are numbered across the batch (a *global* section index per side); rows
are the union of each packet's pages, packet by packet, pages ascending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from docevals_mlflow.split.models import SplitPacket, SplitSection

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ABSENT = -1
"""Section, class or position of a page that one side does not have."""


@dataclass(frozen=True, slots=True)
class SideColumns:
    """One side's sections of every packet, flattened.

    ``pages[k]`` is the k-th page listed (packets, then sections, in order),
    ``section_of[k]`` its global section and ``position[k]`` its place in that
    section. ``section_start[i]:section_start[i + 1]`` are packet ``i``'s sections.
    """

    sections: list[SplitSection]
    classes: list[str]
    class_codes: IntArray
    lengths: IntArray
    section_packet: IntArray
    section_start: IntArray
    pages: IntArray
    page_packet: IntArray
    section_of: IntArray
    position: IntArray

    @property
    def section_count(self) -> int:
        """Sections of this side in the whole batch."""
        return len(self.sections)


def _side(packets: Sequence[SplitPacket], codes: dict[str, int]) -> SideColumns:
    sections = [section for packet in packets for section in packet.sections]
    counts = np.fromiter(
        (len(packet.sections) for packet in packets), dtype=np.int64, count=len(packets)
    )
    lengths = np.fromiter(
        (len(section.page_indices) for section in sections), dtype=np.int64, count=len(sections)
    )
    total = int(lengths.sum())
    pages = np.fromiter(
        chain.from_iterable(section.page_indices for section in sections),
        dtype=np.int64,
        count=total,
    )
    section_packet = np.repeat(np.arange(len(packets), dtype=np.int64), counts)
    section_of = np.repeat(np.arange(len(sections), dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    classes = [section.document_class for section in sections]
    return SideColumns(
        sections=sections,
        classes=classes,
        class_codes=np.fromiter(
            (codes[name] for name in classes), dtype=np.int64, count=len(classes)
        ),
        lengths=lengths,
        section_packet=section_packet,
        section_start=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        pages=pages,
        page_packet=section_packet[section_of],
        section_of=section_of,
        position=np.arange(total, dtype=np.int64) - np.repeat(starts, lengths),
    )


@dataclass(frozen=True, slots=True)
class Alignment:
    """Both sides of a batch over its rows: each packet's union of page indices.

    Per row: ``packet``, ``pages`` (the page index), ``*_section`` (global section
    index), ``*_class`` (index into ``labels``, the sorted class names of the batch)
    and ``*_position``; :data:`ABSENT` where a side lacks the page.
    ``start[i]:start[i + 1]`` are packet ``i``'s rows.
    """

    packets: int
    expected: SideColumns
    predicted: SideColumns
    labels: list[str]
    pages: IntArray
    packet: IntArray
    start: IntArray
    expected_section: IntArray
    predicted_section: IntArray
    expected_class: IntArray
    predicted_class: IntArray
    expected_position: IntArray
    predicted_position: IntArray

    @property
    def in_both(self) -> BoolArray:
        """Rows (pages) that both sides have."""
        both: BoolArray = (self.expected_section != ABSENT) & (self.predicted_section != ABSENT)
        return both

    def rows(self, packet: int) -> slice:
        """Packet ``packet``'s rows."""
        return slice(int(self.start[packet]), int(self.start[packet + 1]))


def _spread(
    keys: IntArray, side: SideColumns, side_keys: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    section = np.full(keys.size, ABSENT, dtype=np.int64)
    position = np.full(keys.size, ABSENT, dtype=np.int64)
    classes = np.full(keys.size, ABSENT, dtype=np.int64)
    places = np.searchsorted(keys, side_keys)
    section[places] = side.section_of
    position[places] = side.position
    classes[places] = side.class_codes[side.section_of]
    return section, classes, position


def align(pairs: Sequence[tuple[SplitPacket, SplitPacket]]) -> Alignment:
    """Columns of both sides of every ``(expected, predicted)`` packet pair."""
    expected = [pair[0] for pair in pairs]
    predicted = [pair[1] for pair in pairs]
    names = {
        section.document_class
        for packet in chain(expected, predicted)
        for section in packet.sections
    }
    labels = sorted(names)
    codes = {label: code for code, label in enumerate(labels)}
    left, right = _side(expected, codes), _side(predicted, codes)
    # One key per (packet, page); page indices are below 2**31 (checked on input), so
    # the product stays far inside int64.
    width = int(max(left.pages.max(initial=0), right.pages.max(initial=0))) + 1
    left_keys = left.page_packet * width + left.pages
    right_keys = right.page_packet * width + right.pages
    keys = np.union1d(left_keys, right_keys)
    packet = keys // width
    left_section, left_class, left_position = _spread(keys, left, left_keys)
    right_section, right_class, right_position = _spread(keys, right, right_keys)
    return Alignment(
        packets=len(pairs),
        expected=left,
        predicted=right,
        labels=labels,
        pages=keys % width,
        packet=packet,
        start=np.searchsorted(packet, np.arange(len(pairs) + 1)).astype(np.int64),
        expected_section=left_section,
        predicted_section=right_section,
        expected_class=left_class,
        predicted_class=right_class,
        expected_position=left_position,
        predicted_position=right_position,
    )


def per_packet(values: IntArray | BoolArray, owner: IntArray, packets: int) -> IntArray:
    """Sums of ``values`` per packet (``owner`` names each value's packet)."""
    return np.bincount(owner, weights=values, minlength=packets).astype(np.int64)


def split_by_packet(values: list[int], owner: IntArray, packets: int) -> list[list[int]]:
    """``values`` (sorted by owner) cut into one list per packet."""
    cuts = np.searchsorted(owner, np.arange(packets + 1)).tolist()
    return [values[cuts[i] : cuts[i + 1]] for i in range(packets)]


__all__ = [
    "ABSENT",
    "Alignment",
    "BoolArray",
    "IntArray",
    "SideColumns",
    "align",
    "per_packet",
    "split_by_packet",
]
