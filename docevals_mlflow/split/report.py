"""Split reports: one packet (:class:`PacketSplitReport`) and a batch (:class:`SplitReport`).

Both are plain pydantic data and round-trip through JSON. A packet report holds the
seed's three metrics under the seed's keys (``page_level_accuracy``,
``split_accuracy_without_order``, ``split_accuracy_with_order``, each with
``accuracy``, counts and details) and the figures beyond the seed (``classes``,
``boundaries``, ``matching``, ``graded``). A batch report holds the same keys,
aggregated over packets (``accuracy`` pools pages or sections, the *micro* figure;
``macro_accuracy`` is the mean over packets), and every packet report.
"""

from __future__ import annotations

from typing import Any, Literal

from docevals_mlflow._version import __version__
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.report_file import ReportFile
from docevals_mlflow.split.boundaries import BoundaryScores
from docevals_mlflow.split.classes import ClassReport
from docevals_mlflow.split.graded import GradedFigures, GradedScores
from docevals_mlflow.split.intervals import SplitInterval
from docevals_mlflow.split.matching import MatchingFigures, MatchingScores
from docevals_mlflow.split.scores import Detection, ReportPart
from docevals_mlflow.split.seed_metrics import (
    OrderedSplitAccuracy,
    PageLevelAccuracy,
    SplitAccuracy,
    UnmatchedSection,
    seed_view,
)


class PacketSplitReport(DocEvalsModel):
    """Every split figure of one packet."""

    id: str
    page_level_accuracy: PageLevelAccuracy
    split_accuracy_without_order: SplitAccuracy
    split_accuracy_with_order: OrderedSplitAccuracy
    unmatched_predicted_sections: list[UnmatchedSection]
    """Predicted sections no expected section matched (the seed's over-segmentation rows)."""
    expected_sections: int
    predicted_sections: int
    classes: ClassReport
    boundaries: BoundaryScores
    matching: MatchingScores
    graded: GradedScores
    warnings: list[str]

    def seed_view(self) -> dict[str, Any]:
        """The seed's ``calculate_all_metrics()`` output for this packet, figure for
        figure (equal to ``stickler.doc_split``'s)."""
        return seed_view(
            self.page_level_accuracy,
            self.split_accuracy_without_order,
            self.split_accuracy_with_order,
        )

    @property
    def perfect(self) -> bool:
        """Every page classified right and every section matched in order, none extra."""
        return (
            self.page_level_accuracy.correct_pages == self.page_level_accuracy.total_pages
            and self.split_accuracy_with_order.correct_sections
            == self.split_accuracy_with_order.total_sections
            and not self.unmatched_predicted_sections
        )


class PageAccuracySummary(ReportPart):
    """Page-level accuracy over a batch."""

    accuracy: float | None
    """Micro: correct pages / pages, over all packets."""
    macro_accuracy: float | None
    """Mean of the packets' accuracies."""
    correct_pages: int
    total_pages: int
    ci: dict[str, SplitInterval] | None = None
    """``accuracy``'s interval from resampling packets (None: not computed, or a
    report from before intervals)."""


class SectionAccuracySummary(ReportPart):
    """Split accuracy over a batch."""

    accuracy: float | None
    """Micro: matched expected sections / expected sections, over all packets."""
    macro_accuracy: float | None
    """Mean of the packets' accuracies."""
    correct_sections: int
    total_sections: int
    ci: dict[str, SplitInterval] | None = None
    """``accuracy``'s interval from resampling packets."""


class BoundarySummary(Detection):
    """Boundary detection over a batch (counts pooled; ``macro_f1`` per packet)."""

    expected: int
    predicted: int
    macro_f1: float | None
    ci: dict[str, SplitInterval] | None = None
    """Intervals of ``precision``, ``recall`` and ``f1`` from resampling packets."""


class MatchingSummary(MatchingFigures):
    """One-to-one section matching over a batch (counts pooled)."""

    macro_f1: float | None
    """Mean of the packets' exact-match F1."""
    ci: dict[str, SplitInterval] | None = None
    """Intervals of the exact figures (``exact.precision``, ``exact.recall``,
    ``exact.f1``, keyed ``precision``, ``recall``, ``f1``) from resampling packets."""


class GradedSummary(GradedFigures):
    """Graded scores over a batch: means of the packets' scores.

    They are not pooled: the Rand index of pooled pages would be dominated by the
    pairs from different packets, which are trivially apart.
    """

    packets: int
    """Packets with defined scores (with at least one page)."""


class Unpaired(ReportPart):
    """Packet ids found on one side only (not evaluated)."""

    expected_only: list[str]
    predicted_only: list[str]


class SplitReport(ReportFile):
    """A split evaluation of one or many packets."""

    kind: Literal["split"] = "split"
    docevals_version: str = __version__
    packet_count: int
    page_level_accuracy: PageAccuracySummary
    split_accuracy_without_order: SectionAccuracySummary
    split_accuracy_with_order: SectionAccuracySummary
    predicted_sections: int
    unmatched_predicted_sections: int
    classes: ClassReport
    boundaries: BoundarySummary
    matching: MatchingSummary
    graded: GradedSummary
    unpaired: Unpaired
    warnings: list[str]
    packets: list[PacketSplitReport]

    def packet(self, packet_id: str) -> PacketSplitReport:
        """The report of one packet, by id."""
        for packet in self.packets:
            if packet.id == packet_id:
                return packet
        raise KeyError(packet_id)


__all__ = [
    "BoundarySummary",
    "GradedSummary",
    "MatchingSummary",
    "PacketSplitReport",
    "PageAccuracySummary",
    "SectionAccuracySummary",
    "SplitReport",
    "Unpaired",
]
