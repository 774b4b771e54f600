"""The section split analysis of the split Markdown report: per packet, each expected
section against its match (or its closest predicted section), unmatched predicted
sections, and where the split went wrong; then unpaired packets and warnings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docevals_mlflow.reports.markdown import cell, inline_code
from docevals_mlflow.reports.split_cells import MAX_LISTED, RawCell, listed, seed_table
from docevals_mlflow.reports.split_metrics import worst_first
from docevals_mlflow.split.report import PacketSplitReport, SplitReport

MAX_SECTION_ROWS = 200
"""Rows of one packet's section analysis table."""
PAGE_LIST_LIMIT = 12
"""Page lists longer than this are shown as ranges (``[0-49, 51]``)."""


def _pages(pages: Sequence[int]) -> str:
    """``[0, 1, 2]`` as the seed shows it; long lists as ranges (``[0-49, 51]``)."""
    if len(pages) <= PAGE_LIST_LIMIT:
        return str(list(pages))
    parts: list[str] = []
    start = previous = pages[0]
    for page in [*pages[1:], None]:
        if page is not None and page == previous + 1:
            previous = page
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if page is not None:
            start = previous = page
    return "[" + ", ".join(parts) + f"] ({len(pages)} pages)"


def _italic(text: str) -> RawCell:
    plain = cell(text)
    return RawCell(plain if "*" in plain or not plain else f"*{plain}*")


def _expected_rows(packet: PacketSplitReport) -> list[list[Any]]:
    """One row per expected section: its match, or (in italics) its closest section."""
    unordered = packet.split_accuracy_without_order.section_details
    ordered = packet.split_accuracy_with_order.section_details
    closest = packet.matching.section_details
    # The closest counterpart of an unmatched expected section shares no page with a
    # matched one, so it is among the unmatched predicted sections.
    unmatched_pages = {
        section.section_id: section.page_indices for section in packet.unmatched_predicted_sections
    }
    rows: list[list[Any]] = []
    for set_row, order_row, near in zip(unordered, ordered, closest, strict=True):
        pred_class: Any = order_row.predicted_class
        pred_pages: Any = _pages(order_row.predicted_pages) if order_row.predicted_pages else "N/A"
        if order_row.matched_section_id is None and near.matched_section_id is not None:
            # As in the seed's documentation, an unmatched section shows the predicted
            # section closest to it, in italics since it is no match.
            pred_class = _italic(near.predicted_class or "")
            pred_pages = _italic(_pages(unmatched_pages.get(near.matched_section_id, [])))
        rows.append(
            [
                RawCell("✅" if set_row.matched else "❌"),
                RawCell("✅" if order_row.order_matched else "❌"),
                order_row.section_id,
                order_row.ground_truth_class,
                _pages(order_row.ground_truth_pages),
                pred_class,
                pred_pages,
                order_row.matched_section_id or "N/A",
            ]
        )
    return rows


def _unmatched_rows(packet: PacketSplitReport) -> list[list[Any]]:
    """The rows of predicted sections that match no expected section."""
    return [
        [
            RawCell("❌"),
            RawCell("❌"),
            "N/A",
            "No Match",
            "N/A",
            section.document_class,
            _pages(section.page_indices),
            section.section_id,
        ]
        for section in packet.unmatched_predicted_sections
    ]


def _section_table(packet: PacketSplitReport) -> list[str]:
    rows = _expected_rows(packet) + _unmatched_rows(packet)
    if not rows:
        return ["*No section data available*"]
    lines = seed_table(
        [
            "Section Match",
            "Page Order Match",
            "Section ID",
            "Expected Class",
            "Expected Pages",
            "Pred Class",
            "Pred Pages",
            "Matched Section",
        ],
        ["c", "c", "l", "l", "l", "l", "l", "l"],
        rows[:MAX_SECTION_ROWS],
    )
    hidden = len(rows) - MAX_SECTION_ROWS
    if hidden > 0:
        lines += ["", f"*… and {hidden} more rows; the JSON report has all of them.*"]
    return lines


def _where_wrong(packet: PacketSplitReport) -> list[str]:
    lines: list[str] = []
    boundaries = packet.boundaries
    if boundaries.missed:
        lines.append(
            f"- **Missed boundaries** (a document should start at page): "
            f"{listed(boundaries.missed)}"
        )
    if boundaries.spurious:
        lines.append(
            f"- **Spurious boundaries** (no document starts at page): {listed(boundaries.spurious)}"
        )
    wrong = [
        f"{row.page_index} ({row.ground_truth_class} → {row.predicted_class})"
        for row in packet.page_level_accuracy.page_details
        if not row.correct
    ]
    if wrong:
        lines.append(f"- **Wrong pages** (expected → predicted): {cell(listed(wrong))}")
    return lines


def analysis_section(report: SplitReport, max_packets: int) -> list[str]:
    lines = ["## 📑 Section Split Analysis", ""]
    if report.packet_count == 1:
        packet = report.packets[0]
        extra = _where_wrong(packet)
        return [*lines, *_section_table(packet), *(["", *extra] if extra else [])]
    if not report.packets:
        return [*lines, "*No packets were compared.*"]
    flawed = [packet for packet in worst_first(report.packets) if not packet.perfect]
    if not flawed:
        return [*lines, f"All {report.packet_count} packets are split and classified perfectly."]
    shown = flawed[: max(0, max_packets)]
    lines.append(
        f"{len(flawed)} of {report.packet_count} packets have a wrong page or section"
        + (f"; the {len(shown)} weakest are shown." if len(shown) < len(flawed) else ".")
    )
    for packet in shown:
        lines += ["", f"### Packet {inline_code(packet.id)}", "", *_section_table(packet)]
        extra = _where_wrong(packet)
        if extra:
            lines += ["", *extra]
    return lines


def unpaired_section(report: SplitReport) -> list[str]:
    unpaired = report.unpaired
    if not unpaired.expected_only and not unpaired.predicted_only:
        return []
    lines = ["## Unpaired packets", ""]
    for label, ids in (
        ("Expected only (no prediction; not compared)", unpaired.expected_only),
        ("Predicted only (no ground truth; not compared)", unpaired.predicted_only),
    ):
        if ids:
            lines.append(f"- **{label}**: {len(ids)}: {listed([inline_code(i) for i in ids])}")
    return lines


def warnings_section(report: SplitReport) -> list[str]:
    if not report.warnings:
        return []
    return ["## ⚠️ Warnings", "", *(f"- {cell(text)}" for text in report.warnings[:MAX_LISTED])] + (
        [f"- … and {len(report.warnings) - MAX_LISTED} more"]
        if len(report.warnings) > MAX_LISTED
        else []
    )
