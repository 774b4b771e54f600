"""Evaluating many packets, and aggregating packet reports into a batch report.

*Micro* figures pool the counts of every packet (pages, sections, boundaries, the
confusion matrix), so a big packet weighs more; *macro* figures are the mean of the
packets' own figures (undefined ones left out), so every packet weighs the same.
Graded scores are macro only (see :class:`~docevals_mlflow.split.report.GradedSummary`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.gc import gc_paused
from docevals_mlflow.errors import InputError
from docevals_mlflow.split.classes import class_report, merged_cells
from docevals_mlflow.split.evaluate import evaluate_packets
from docevals_mlflow.split.graded import FIGURES
from docevals_mlflow.split.intervals import interval_settings, split_intervals
from docevals_mlflow.split.models import SplitPacket
from docevals_mlflow.split.packet_forms import packet_from_data
from docevals_mlflow.split.report import PacketSplitReport, SplitReport
from docevals_mlflow.split.scores import detection, mean, ratio

if TYPE_CHECKING:
    from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings

CHUNK_PAGES = 200_000
"""Pages (both sides) evaluated together; bigger batches are cut into chunks."""


def _default_id(data: Any, number: int) -> str | None:
    if isinstance(data, SplitPacket):
        return None
    if isinstance(data, Mapping) and data.get("id") not in (None, ""):
        return None
    return f"packet-{number}"


def evaluate_split_batch(
    pairs: Iterable[tuple[Any, Any]],
    *,
    expected_only: Sequence[str] = (),
    predicted_only: Sequence[str] = (),
    intervals: bool | IntervalSettings = True,
) -> SplitReport:
    """Evaluate ``(expected, predicted)`` packet pairs and aggregate them.

    Each side is a :class:`~docevals_mlflow.split.models.SplitPacket` or data in any
    accepted form; a packet is named by the expected side's id (a packet object's
    ``id``), else ``packet-<n>`` (1-based). ``expected_only`` and
    ``predicted_only`` are ids that had no partner; they are listed, not scored.
    ``intervals``: the micro accuracies, boundary and section figures get a ``ci``
    from resampling packets (True: default settings; an ``IntervalSettings`` picks
    resamples, confidence and seed; False: none; see
    :mod:`~docevals_mlflow.split.intervals`).

    Raises:
        InputError: a packet is invalid, or two pairs have the same id.
    """
    # The collector is paused while packets are read and scored (they allocate many
    # small acyclic dicts and lists: scanning them again and again doubled the time
    # on small packets); it runs between chunks.
    with gc_paused():
        packets = _read_pairs(pairs)
    reports: list[PacketSplitReport] = []
    # Chunks bound the batch-wide arrays; each holds about CHUNK_PAGES pages.
    chunk: list[tuple[SplitPacket, SplitPacket]] = []
    pages = 0
    for pair in packets:
        chunk.append(pair)
        pages += pair[0].page_count + pair[1].page_count
        if pages >= CHUNK_PAGES:
            with gc_paused():
                reports += evaluate_packets(chunk)
            chunk, pages = [], 0
    with gc_paused():
        if chunk:
            reports += evaluate_packets(chunk)
        return summarize(
            reports, expected_only=expected_only, predicted_only=predicted_only, intervals=intervals
        )


def _read_pairs(pairs: Iterable[tuple[Any, Any]]) -> list[tuple[SplitPacket, SplitPacket]]:
    packets: list[tuple[SplitPacket, SplitPacket]] = []
    first_seen: dict[str, int] = {}
    for number, (expected, predicted) in enumerate(pairs, start=1):
        left = packet_from_data(expected, side="expected", packet_id=_default_id(expected, number))
        right = packet_from_data(predicted, side="predicted", packet_id=left.id)
        earlier = first_seen.setdefault(left.id, number)
        if earlier != number:
            raise InputError(
                f"packet id {left.id!r} is used by pairs {earlier} and {number}",
                record=left.id,
                expected="one pair per packet id",
            )
        packets.append((left, right))
    return packets


def summarize(
    packets: Sequence[PacketSplitReport],
    *,
    expected_only: Sequence[str] = (),
    predicted_only: Sequence[str] = (),
    intervals: bool | IntervalSettings = True,
) -> SplitReport:
    """A batch report from packet reports (micro and macro figures; ``intervals`` as
    :func:`evaluate_split_batch` takes it)."""
    pages = [packet.page_level_accuracy for packet in packets]
    unordered = [packet.split_accuracy_without_order for packet in packets]
    ordered = [packet.split_accuracy_with_order for packet in packets]
    correct_pages = sum(item.correct_pages for item in pages)
    total_pages = sum(item.total_pages for item in pages)

    def sections(items: Sequence[Any]) -> dict[str, Any]:
        correct = sum(item.correct_sections for item in items)
        total = sum(item.total_sections for item in items)
        return {
            "accuracy": ratio(correct, total),
            "macro_accuracy": mean(item.accuracy for item in items),
            "correct_sections": correct,
            "total_sections": total,
        }

    report: dict[str, Any] = {
        "packet_count": len(packets),
        "page_level_accuracy": {
            "accuracy": ratio(correct_pages, total_pages),
            "macro_accuracy": mean(item.accuracy for item in pages),
            "correct_pages": correct_pages,
            "total_pages": total_pages,
        },
        "split_accuracy_without_order": sections(unordered),
        "split_accuracy_with_order": sections(ordered),
        "predicted_sections": sum(packet.predicted_sections for packet in packets),
        "unmatched_predicted_sections": sum(
            len(packet.unmatched_predicted_sections) for packet in packets
        ),
        "classes": _classes(packets),
        "boundaries": _boundaries(packets),
        "matching": _matching(packets),
        "graded": _graded(packets),
        "unpaired": {"expected_only": list(expected_only), "predicted_only": list(predicted_only)},
        "warnings": [
            f"packet {packet.id!r}: {warning}" for packet in packets for warning in packet.warnings
        ],
        "packets": packets,
    }
    settings = interval_settings(intervals)
    if settings is not None:
        for name, found in split_intervals(packets, settings).items():
            report[name]["ci"] = found
    return SplitReport.model_validate(report)


def _classes(packets: Sequence[PacketSplitReport]) -> dict[str, Any]:
    labels = sorted({label for packet in packets for label in packet.classes.classes})
    return class_report(labels, merged_cells(packet.classes.confusion for packet in packets))


def _boundaries(packets: Sequence[PacketSplitReport]) -> dict[str, Any]:
    scores = [packet.boundaries for packet in packets]
    return {
        **detection(
            sum(item.tp for item in scores),
            sum(item.fp for item in scores),
            sum(item.fn for item in scores),
        ),
        "expected": sum(item.expected for item in scores),
        "predicted": sum(item.predicted for item in scores),
        "macro_f1": mean(item.f1 for item in scores),
    }


def _matching(packets: Sequence[PacketSplitReport]) -> dict[str, Any]:
    scores = [packet.matching for packet in packets]
    expected = sum(item.expected_sections for item in scores)

    def pooled(name: str) -> dict[str, Any]:
        parts = [getattr(item, name) for item in scores]
        return detection(
            sum(part.tp for part in parts),
            sum(part.fp for part in parts),
            sum(part.fn for part in parts),
        )

    return {
        "expected_sections": expected,
        "predicted_sections": sum(item.predicted_sections for item in scores),
        "exact": pooled("exact"),
        "ordered": pooled("ordered"),
        "mean_iou": ratio(
            sum(row.iou for item in scores for row in item.section_details), expected
        ),
        "split_sections": sum(item.split_sections for item in scores),
        "merged_sections": sum(item.merged_sections for item in scores),
        "macro_f1": mean(item.exact.f1 for item in scores),
    }


def _graded(packets: Sequence[PacketSplitReport]) -> dict[str, Any]:
    scores = [packet.graded for packet in packets]
    return {
        **{name: mean(getattr(item, name) for item in scores) for name in FIGURES},
        "packets": sum(1 for item in scores if item.v_measure is not None),
    }


__all__ = ["evaluate_split_batch", "summarize"]
