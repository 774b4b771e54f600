"""The figures of the split Markdown report: summary bars, the seed's metrics, the
metrics beyond the seed, page classes with their confusion matrix, and packets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.reports.markdown import cell
from docevals_mlflow.reports.ratings import BAR_WIDTH, EMPTY, FILLED, NOT_AVAILABLE, rated, rating
from docevals_mlflow.reports.split_cells import RawCell, seed_table
from docevals_mlflow.split.classes import MISSING_LABEL_TEXT, ClassReport
from docevals_mlflow.split.report import PacketSplitReport, SplitReport

MAX_PACKET_ROWS = 100
"""Rows of the per-packet table (worst first)."""
MAX_CONFUSION_LABELS = 30
"""Classes shown in the confusion matrix table (the most frequent ones)."""


def _icon(value: float | None) -> str:
    return rating("accuracy", value).split(" ", 1)[0]


def _counted_bar(correct: int, total: int) -> str:
    """The seed's bar and percentage, computed from the counts exactly."""
    if not total:
        return NOT_AVAILABLE
    percent = correct * 100 // total
    filled = percent // 5
    return f"[{FILLED * filled}{EMPTY * (BAR_WIDTH - filled)}] {percent}%"


def summary_section(report: SplitReport) -> list[str]:
    pages = report.page_level_accuracy
    unordered = report.split_accuracy_without_order
    ordered = report.split_accuracy_with_order
    batch = report.packet_count > 1

    def macro(value: float | None) -> str:
        return f" · macro {metric_text(value)}" if batch else ""

    return [
        "## 🎯 Split Classification Summary",
        "",
        f"- **Page Level Accuracy**: {_icon(pages.accuracy)} "
        f"{pages.correct_pages}/{pages.total_pages} pages "
        f"{_counted_bar(pages.correct_pages, pages.total_pages)}{macro(pages.macro_accuracy)}",
        f"- **Split Accuracy (Without Order)**: {_icon(unordered.accuracy)} "
        f"{unordered.correct_sections}/{unordered.total_sections} sections "
        f"{_counted_bar(unordered.correct_sections, unordered.total_sections)}"
        f"{macro(unordered.macro_accuracy)}",
        f"- **Split Accuracy (With Order)**: {_icon(ordered.accuracy)} "
        f"{ordered.correct_sections}/{ordered.total_sections} sections "
        f"{_counted_bar(ordered.correct_sections, ordered.total_sections)}"
        f"{macro(ordered.macro_accuracy)}",
    ]


def metrics_section(report: SplitReport) -> list[str]:
    pages = report.page_level_accuracy
    unordered = report.split_accuracy_without_order
    ordered = report.split_accuracy_with_order
    batch = report.packet_count > 1
    headers = ["Metric", "Accuracy", "Rating", "Correct/Total"]
    align = ["l", "c", "c", "c"]
    if batch:
        headers.append("Macro (per packet)")
        align.append("c")
    rows = []
    for label, figure, correct, total, unit in (
        ("Page Level Classification", pages, pages.correct_pages, pages.total_pages, "pages"),
        (
            "Document Split (Without Page Order)",
            unordered,
            unordered.correct_sections,
            unordered.total_sections,
            "sections",
        ),
        (
            "Document Split (With Page Order)",
            ordered,
            ordered.correct_sections,
            ordered.total_sections,
            "sections",
        ),
    ):
        row: list[Any] = [
            label,
            metric_text(figure.accuracy),
            RawCell(rating("accuracy", figure.accuracy)),
            f"{correct}/{total} {unit}",
        ]
        if batch:
            row.append(metric_text(figure.macro_accuracy))
        rows.append(row)
    return ["## 📊 Split Classification Metrics", "", *seed_table(headers, align, rows)]


def _beyond_rows(report: SplitReport) -> list[tuple[str, float | None, str]]:
    """``(label, value, detail)`` of each metric beyond the seed's."""
    boundaries, matching, graded = report.boundaries, report.matching, report.graded
    classes = report.classes
    rows: list[tuple[str, float | None, str]] = [
        (
            "Boundary F1",
            boundaries.f1,
            f"precision {metric_text(boundaries.precision)} · "
            f"recall {metric_text(boundaries.recall)} · "
            f"{boundaries.tp} found, {boundaries.fn} missed, {boundaries.fp} spurious",
        ),
        (
            "Section F1, one-to-one (exact)",
            matching.exact.f1,
            f"{matching.exact.tp} exact of {matching.expected_sections} expected / "
            f"{matching.predicted_sections} predicted sections · precision "
            f"{metric_text(matching.exact.precision)} · "
            f"recall {metric_text(matching.exact.recall)}",
        ),
        (
            "Section F1, one-to-one (with order)",
            matching.ordered.f1,
            f"{matching.ordered.tp} in order",
        ),
        (
            "Mean section overlap (IoU)",
            matching.mean_iou,
            f"expected sections split apart: {matching.split_sections} · predicted sections "
            f"merging several: {matching.merged_sections}",
        ),
        (
            "Page class macro F1",
            classes.macro_f1,
            f"micro F1 {metric_text(classes.micro_f1)} over {len(classes.classes)} classes",
        ),
        (
            "V-measure",
            graded.v_measure,
            f"homogeneity {metric_text(graded.homogeneity)} · completeness "
            f"{metric_text(graded.completeness)}",
        ),
        (
            "Adjusted Rand index",
            graded.adjusted_rand_index,
            f"Rand index {metric_text(graded.rand_index)}",
        ),
        ("Page order (Kendall τ-b)", graded.kendall_tau, "mean over expected sections"),
        (
            "Packet score",
            graded.packet_score,
            f"½ clustering ({metric_text(graded.clustering_score)}) + ½ ordering",
        ),
    ]
    if report.packet_count > 1:
        rows[0] = (*rows[0][:2], rows[0][2] + f" · macro F1 {metric_text(boundaries.macro_f1)}")
        rows[1] = (*rows[1][:2], rows[1][2] + f" · macro F1 {metric_text(matching.macro_f1)}")
    return rows


def beyond_section(report: SplitReport) -> list[str]:
    """The "Beyond the Seed" table: boundaries, one-to-one sections, graded scores."""
    lines = ["## 🔍 Beyond the Seed", ""]
    lines += seed_table(
        ["Metric", "Value", "Rating", "Detail"],
        ["l", "c", "c", "l"],
        (
            (label, metric_text(value), RawCell(rating("accuracy", value)), detail)
            for label, value, detail in _beyond_rows(report)
        ),
    )
    if report.packet_count > 1:
        lines += ["", f"Graded scores are means over {report.graded.packets} packets."]
    return lines


def _label(label: str | None) -> str:
    return MISSING_LABEL_TEXT if label is None else label


def classes_section(classes: ClassReport) -> list[str]:
    if not classes.classes:
        return []
    lines = ["## 🏷️ Page Classes", ""]
    lines += seed_table(
        ["Class", "Support", "Predicted", "Precision", "Recall", "F1", "Rating"],
        ["l", "c", "c", "c", "c", "c", "c"],
        (
            (
                name,
                str(score.support),
                str(score.predicted),
                metric_text(score.precision),
                metric_text(score.recall),
                metric_text(score.f1),
                RawCell(rating("f1", score.f1)),
            )
            for name, score in classes.classes.items()
        ),
    )
    lines += ["", *_confusion(classes)]
    return lines


def _confusion(classes: ClassReport) -> list[str]:
    labels = classes.confusion.labels
    counts = classes.confusion.counts
    keep = classes.confusion.most_frequent(MAX_CONFUSION_LABELS)
    note = ""
    if len(keep) < len(labels):
        note = (
            f"The {MAX_CONFUSION_LABELS} most frequent of {len(labels)} classes; "
            "the JSON report and the heatmap have all of them."
        )
    headers = ["Expected ↓ / Predicted →", *(cell(_label(labels[i])) for i in keep)]
    rows = []
    for i in keep:
        rows.append(
            [
                _label(labels[i]),
                *(
                    RawCell(f"**{counts[i][j]}**") if i == j and counts[i][j] else str(counts[i][j])
                    for j in keep
                ),
            ]
        )
    lines = ["### Confusion matrix (pages)", ""]
    lines += seed_table(headers, ["l", *("c" for _ in keep)], rows)
    if note:
        lines += ["", note]
    return lines


def worst_first(packets: Sequence[PacketSplitReport]) -> list[PacketSplitReport]:
    def key(packet: PacketSplitReport) -> tuple[float, float, float]:
        def value(number: float | None) -> float:
            return 2.0 if number is None else number

        return (
            value(packet.split_accuracy_with_order.accuracy),
            value(packet.page_level_accuracy.accuracy),
            value(packet.matching.exact.f1),
        )

    return sorted(packets, key=key)


def packets_section(report: SplitReport) -> list[str]:
    ordered = worst_first(report.packets)
    shown = ordered[:MAX_PACKET_ROWS]
    lines = ["## 📦 Packets", ""]
    if len(shown) < len(ordered):
        lines += [
            f"The {len(shown)} weakest of {len(ordered)} packets; the JSON report has all.",
            "",
        ]
    lines += seed_table(
        [
            "Packet",
            "Pages",
            "Page Acc.",
            "Split (no order)",
            "Split (order)",
            "Boundary F1",
            "Section F1",
            "Packet Score",
        ],
        ["l", "c", "c", "c", "c", "c", "c", "c"],
        (
            (
                packet.id,
                str(packet.page_level_accuracy.total_pages),
                RawCell(rated("accuracy", packet.page_level_accuracy.accuracy)),
                metric_text(packet.split_accuracy_without_order.accuracy),
                metric_text(packet.split_accuracy_with_order.accuracy),
                metric_text(packet.boundaries.f1),
                metric_text(packet.matching.exact.f1),
                metric_text(packet.graded.packet_score),
            )
            for packet in shown
        ),
    )
    return lines
