"""95% intervals of a batch's micro split figures, from resampling **packets**.

The pages of one packet are not independent: one bad scan, one confusing layout or
one missed boundary spoils several pages and sections together. So the unit resampled
is the packet (the cluster), as documents are for field figures, and every figure here
is a ratio of per-packet sums. Each is written as confusion cells ``[tp, fa, fd, fn,
tn]`` per packet and handed to
:func:`~docevals_mlflow.core.statistics.cluster_intervals.cell_intervals`, which gives
the studentized document bootstrap (the expanded percentile interval below 10
packets), so split and field intervals are one method:

* page accuracy: correct pages as TP, wrong pages as FD (accuracy = TP / all);
* split accuracy with and without order: matched expected sections as TP, the others
  as FD;
* boundary and one-to-one section precision, recall and F1: TP, FP (as FA), FN.

Macro figures (means over packets) and graded scores have no interval here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from docevals_mlflow.split.scores import ReportPart

if TYPE_CHECKING:
    from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings
    from docevals_mlflow.split.report import PacketSplitReport

DETECTION_FIGURES = ("precision", "recall", "f1")
"""The figures of boundaries and one-to-one section matching given an interval."""


class SplitInterval(ReportPart):
    """A micro split figure's interval from resampling packets, or why there is none."""

    low: float | None
    high: float | None
    packets: int
    """Packets resampled: those with something the figure counts."""
    pages: int
    """Pages of those packets (on either side)."""
    observations: int
    """What the figure counts over those packets: pages (page accuracy), expected
    sections (split accuracy), or found, spurious and missed boundaries or sections."""
    confidence: float
    resamples: int
    seed: int
    reason: str | None = None
    """Why ``low`` and ``high`` are ``None`` (fewer than 2 packets, an undefined figure)."""


Cells = list[tuple[int, int, int, int, int]]


def _accuracy_cells(pairs: Iterable[tuple[int, int]]) -> Cells:
    """``(correct, total)`` per packet as cells: correct as TP, the rest as FD."""
    return [(correct, 0, total - correct, 0, 0) for correct, total in pairs]


def _detection_cells(parts: Iterable[Any]) -> Cells:
    """Detection counts per packet as cells: TP, FP as FA, FN."""
    return [(part.tp, part.fp, 0, part.fn, 0) for part in parts]


def _reason(figure: str, packets: int) -> str:
    """Why a figure has no interval, in packets (cell_intervals speaks of documents)."""
    if packets < 2:
        return f"fewer than 2 packets ({packets})"
    return f"{figure} undefined: nothing to count"


def _intervals(
    cells: Cells,
    pages: Sequence[int],
    metrics: Sequence[str],
    settings: IntervalSettings,
    stream: int,
) -> dict[str, SplitInterval]:
    import numpy as np

    from docevals_mlflow.core.statistics.cluster_intervals import cell_intervals

    rows = np.asarray(cells, dtype=np.int64).reshape(-1, 5)
    # The packets cell_intervals resamples are those with a cell: their pages go beside.
    counted = int(np.asarray(pages, dtype=np.int64)[rows.any(axis=1)].sum()) if len(rows) else 0
    found = cell_intervals(rows, metrics=metrics, settings=settings, stream=stream)
    return {
        name: SplitInterval(
            low=interval.low,
            high=interval.high,
            packets=interval.documents,
            pages=counted,
            observations=interval.observations,
            confidence=interval.confidence,
            resamples=interval.resamples,
            seed=interval.seed,
            reason=None if interval.reason is None else _reason(name, interval.documents),
        )
        for name, interval in found.items()
    }


def split_intervals(
    packets: Sequence[PacketSplitReport], settings: IntervalSettings
) -> dict[str, dict[str, SplitInterval]]:
    """The ``ci`` entries of a batch: ``{"page_level_accuracy": {"accuracy": ...},
    "split_accuracy_without_order": {...}, "split_accuracy_with_order": {...},
    "boundaries": {"precision", "recall", "f1"}, "matching": {...}}`` (matching: the
    exact one-to-one figures). Each part has its own random stream of the seed."""
    pages = [packet.page_level_accuracy.total_pages for packet in packets]
    accuracy = ("accuracy",)
    parts: list[tuple[str, Cells, Sequence[str]]] = [
        (
            "page_level_accuracy",
            _accuracy_cells(
                (packet.page_level_accuracy.correct_pages, packet.page_level_accuracy.total_pages)
                for packet in packets
            ),
            accuracy,
        ),
        *(
            (
                name,
                _accuracy_cells(
                    (getattr(packet, name).correct_sections, getattr(packet, name).total_sections)
                    for packet in packets
                ),
                accuracy,
            )
            for name in ("split_accuracy_without_order", "split_accuracy_with_order")
        ),
        (
            "boundaries",
            _detection_cells(packet.boundaries for packet in packets),
            DETECTION_FIGURES,
        ),
        (
            "matching",
            _detection_cells(packet.matching.exact for packet in packets),
            DETECTION_FIGURES,
        ),
    ]
    return {
        name: _intervals(cells, pages, metrics, settings, stream)
        for stream, (name, cells, metrics) in enumerate(parts)
    }


def interval_settings(intervals: bool | IntervalSettings) -> IntervalSettings | None:
    """``True`` as the default settings, ``False`` as none."""
    if intervals is False:
        return None
    if intervals is True:
        from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings

        return IntervalSettings()
    return intervals


__all__ = ["DETECTION_FIGURES", "SplitInterval", "interval_settings", "split_intervals"]
