"""Evaluating one packet: every split metric from one alignment of the two sides."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docevals_mlflow.split.alignment import align
from docevals_mlflow.split.boundaries import packet_boundaries
from docevals_mlflow.split.classes import packet_classes
from docevals_mlflow.split.graded import packet_graded
from docevals_mlflow.split.matching import packet_matching
from docevals_mlflow.split.models import SplitPacket
from docevals_mlflow.split.packet_forms import packet_from_data
from docevals_mlflow.split.report import PacketSplitReport
from docevals_mlflow.split.seed_metrics import page_level_details, split_details


def evaluate_packets(
    pairs: Sequence[tuple[SplitPacket, SplitPacket]],
) -> list[PacketSplitReport]:
    """Every split figure of each ``(expected, predicted)`` pair, sides already validated.

    The whole batch is aligned once and every metric is computed for all packets
    together; only the per-section seed matching and the reports themselves are
    built packet by packet. A report's id is its expected side's.
    """
    alignment = align(pairs)
    pages = page_level_details(alignment)
    classes = packet_classes(alignment)
    boundaries = packet_boundaries(alignment)
    matching = packet_matching(alignment)
    graded = packet_graded(alignment)
    reports = []
    for index, (expected, predicted) in enumerate(pairs):
        without_order, with_order, unmatched = split_details(expected, predicted)
        warnings = [f"expected: {text}" for text in expected.warnings()]
        warnings += [f"predicted: {text}" for text in predicted.warnings()]
        # Built as plain data and validated once: cheaper than a model per page.
        reports.append(
            PacketSplitReport.model_validate(
                {
                    "id": expected.id,
                    "page_level_accuracy": pages[index],
                    "split_accuracy_without_order": without_order,
                    "split_accuracy_with_order": with_order,
                    "unmatched_predicted_sections": unmatched,
                    "expected_sections": len(expected.sections),
                    "predicted_sections": len(predicted.sections),
                    "classes": classes[index],
                    "boundaries": boundaries[index],
                    "matching": matching[index],
                    "graded": graded[index],
                    "warnings": warnings,
                }
            )
        )
    return reports


def evaluate_packet(expected: SplitPacket, predicted: SplitPacket) -> PacketSplitReport:
    """Every split figure of one packet whose two sides are already validated."""
    return evaluate_packets([(expected, predicted)])[0]


def evaluate_split(
    expected: Any, predicted: Any, *, packet_id: str | None = None
) -> PacketSplitReport:
    """Compare the split and classification of one packet with its ground truth.

    Each side may be a :class:`~docevals_mlflow.split.models.SplitPacket` or data in
    any accepted form (``{"sections": [...]}``, a list of sections, ``{"pages":
    [...]}`` or a per-page list; see :mod:`docevals_mlflow.split.models`).

    >>> report = evaluate_split(
    ...     [{"section_id": "s1", "document_class": "Invoice", "page_indices": [0, 1]}],
    ...     [{"section_id": "p1", "document_class": "Invoice", "page_indices": [1, 0]}],
    ... )
    >>> report.split_accuracy_without_order.accuracy, report.split_accuracy_with_order.accuracy
    (1.0, 0.0)

    Raises:
        InputError: a side is not a valid packet (the error names the side, the
            packet and where: ``sections[2].page_indices[1]``).
    """
    left = packet_from_data(expected, side="expected", packet_id=packet_id)
    right = packet_from_data(predicted, side="predicted", packet_id=left.id)
    return evaluate_packet(left, right)


__all__ = ["evaluate_packet", "evaluate_packets", "evaluate_split"]
