"""Markdown rendering of split reports, in the seed's style.

Laid out like the seed's ``generate_markdown_report()``: a summary with colour
ratings and 20-character bars, the metrics table, and the combined section analysis
table (Section Match | Page Order Match | Section ID | Expected Class | Expected
Pages | Pred Class | Pred Pages | Matched Section, then the unmatched predicted
sections). Added: the figures beyond the seed, per-class scores with the confusion
matrix, a per-packet table for batches, where boundaries went wrong, and the seed's
explanations extended to the new figures.

Percentages and bars of counted figures come from the counts (19/20 → 95%, 19
blocks), not from ``int(accuracy * 100)``, which the seed uses and which float
rounding turns into 28% for 29/100. Big batches are bounded: at most
``max_packets`` packets get a section table (worst first); the JSON report always
has everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.reports.fields_markdown import (
    BAR_WIDTH,
    EMPTY,
    FILLED,
    NOT_AVAILABLE,
    rating,
)
from docevals_mlflow.reports.markdown import cell
from docevals_mlflow.split.batch import summarize
from docevals_mlflow.split.classes import MISSING_LABEL_TEXT, ClassReport
from docevals_mlflow.split.report import PacketSplitReport, SplitReport

MAX_PACKET_ROWS = 100
"""Rows of the per-packet table (worst first)."""
MAX_SECTION_ROWS = 200
"""Rows of one packet's section analysis table."""
MAX_LISTED = 30
"""Pages or ids listed inline (missed boundaries, wrong pages, unpaired ids)."""
MAX_CONFUSION_LABELS = 30
"""Classes shown in the confusion matrix table (the most frequent ones)."""
PAGE_LIST_LIMIT = 12
"""Page lists longer than this are shown as ranges (``[0-49, 51]``)."""


# --------------------------------------------------------------------------- pieces


class _Raw(str):
    """Text already safe for a table cell (icons, italics)."""


def _row(values: Iterable[Any]) -> str:
    return (
        "| "
        + " | ".join(cell(value) if not isinstance(value, _Raw) else value for value in values)
        + " |"
    )


def _seed_table(
    headers: Sequence[str], align: Sequence[str], rows: Iterable[Sequence[Any]]
) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append(
        "| "
        + " | ".join(
            (":" + "-" * max(1, len(header) - 2) + ":")
            if mode == "c"
            else "-" * max(3, len(header))
            for header, mode in zip(headers, align, strict=True)
        )
        + " |"
    )
    lines.extend(_row(row) for row in rows)
    return lines


def _icon(value: float | None) -> str:
    return rating("accuracy", value).split(" ", 1)[0]


def _counted_bar(correct: int, total: int) -> str:
    """The seed's bar and percentage, computed from the counts exactly."""
    if not total:
        return NOT_AVAILABLE
    percent = correct * 100 // total
    filled = percent // 5
    return f"[{FILLED * filled}{EMPTY * (BAR_WIDTH - filled)}] {percent}%"


def _rated(value: float | None) -> str:
    return "n/a" if value is None else f"{_icon(value)} {metric_text(value)}"


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


def _listed(items: Sequence[Any]) -> str:
    shown = ", ".join(str(item) for item in items[:MAX_LISTED])
    if len(items) > MAX_LISTED:
        shown += f" … and {len(items) - MAX_LISTED} more"
    return shown


def _code(text: str) -> str:
    plain = cell(text)
    return f"`` {plain} ``" if "`" in plain else f"`{plain}`"


def _italic(text: str) -> _Raw:
    plain = cell(text)
    return _Raw(plain if "*" in plain or not plain else f"*{plain}*")


# --------------------------------------------------------------------------- sections


def _summary(report: SplitReport) -> list[str]:
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


def _metrics(report: SplitReport) -> list[str]:
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
            _Raw(rating("accuracy", figure.accuracy)),
            f"{correct}/{total} {unit}",
        ]
        if batch:
            row.append(metric_text(figure.macro_accuracy))
        rows.append(row)
    return ["## 📊 Split Classification Metrics", "", *_seed_table(headers, align, rows)]


def _beyond(report: SplitReport) -> list[str]:
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
    lines = ["## 🔍 Beyond the Seed", ""]
    lines += _seed_table(
        ["Metric", "Value", "Rating", "Detail"],
        ["l", "c", "c", "l"],
        (
            (label, metric_text(value), _Raw(rating("accuracy", value)), detail)
            for label, value, detail in rows
        ),
    )
    if report.packet_count > 1:
        lines += ["", f"Graded scores are means over {graded.packets} packets."]
    return lines


def _label(label: str | None) -> str:
    return MISSING_LABEL_TEXT if label is None else label


def _classes(classes: ClassReport) -> list[str]:
    if not classes.classes:
        return []
    lines = ["## 🏷️ Page Classes", ""]
    lines += _seed_table(
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
                _Raw(rating("f1", score.f1)),
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
                    _Raw(f"**{counts[i][j]}**") if i == j and counts[i][j] else str(counts[i][j])
                    for j in keep
                ),
            ]
        )
    lines = ["### Confusion matrix (pages)", ""]
    lines += _seed_table(headers, ["l", *("c" for _ in keep)], rows)
    if note:
        lines += ["", note]
    return lines


def _worst_first(packets: Sequence[PacketSplitReport]) -> list[PacketSplitReport]:
    def key(packet: PacketSplitReport) -> tuple[float, float, float]:
        def value(number: float | None) -> float:
            return 2.0 if number is None else number

        return (
            value(packet.split_accuracy_with_order.accuracy),
            value(packet.page_level_accuracy.accuracy),
            value(packet.matching.exact.f1),
        )

    return sorted(packets, key=key)


def _packets(report: SplitReport) -> list[str]:
    ordered = _worst_first(report.packets)
    shown = ordered[:MAX_PACKET_ROWS]
    lines = ["## 📦 Packets", ""]
    if len(shown) < len(ordered):
        lines += [
            f"The {len(shown)} weakest of {len(ordered)} packets; the JSON report has all.",
            "",
        ]
    lines += _seed_table(
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
                _Raw(_rated(packet.page_level_accuracy.accuracy)),
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


def _section_table(packet: PacketSplitReport) -> list[str]:
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
                _Raw("✅" if set_row.matched else "❌"),
                _Raw("✅" if order_row.order_matched else "❌"),
                order_row.section_id,
                order_row.ground_truth_class,
                _pages(order_row.ground_truth_pages),
                pred_class,
                pred_pages,
                order_row.matched_section_id or "N/A",
            ]
        )
    for section in packet.unmatched_predicted_sections:
        rows.append(
            [
                _Raw("❌"),
                _Raw("❌"),
                "N/A",
                "No Match",
                "N/A",
                section.document_class,
                _pages(section.page_indices),
                section.section_id,
            ]
        )
    if not rows:
        return ["*No section data available*"]
    lines = _seed_table(
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
            f"{_listed(boundaries.missed)}"
        )
    if boundaries.spurious:
        lines.append(
            f"- **Spurious boundaries** (no document starts at page): "
            f"{_listed(boundaries.spurious)}"
        )
    wrong = [
        f"{row.page_index} ({row.ground_truth_class} → {row.predicted_class})"
        for row in packet.page_level_accuracy.page_details
        if not row.correct
    ]
    if wrong:
        lines.append(f"- **Wrong pages** (expected → predicted): {cell(_listed(wrong))}")
    return lines


def _analysis(report: SplitReport, max_packets: int) -> list[str]:
    lines = ["## 📑 Section Split Analysis", ""]
    if report.packet_count == 1:
        packet = report.packets[0]
        extra = _where_wrong(packet)
        return [*lines, *_section_table(packet), *(["", *extra] if extra else [])]
    if not report.packets:
        return [*lines, "*No packets were compared.*"]
    flawed = [packet for packet in _worst_first(report.packets) if not packet.perfect]
    if not flawed:
        return [*lines, f"All {report.packet_count} packets are split and classified perfectly."]
    shown = flawed[: max(0, max_packets)]
    lines.append(
        f"{len(flawed)} of {report.packet_count} packets have a wrong page or section"
        + (f"; the {len(shown)} weakest are shown." if len(shown) < len(flawed) else ".")
    )
    for packet in shown:
        lines += ["", f"### Packet {_code(packet.id)}", "", *_section_table(packet)]
        extra = _where_wrong(packet)
        if extra:
            lines += ["", *extra]
    return lines


def _unpaired(report: SplitReport) -> list[str]:
    unpaired = report.unpaired
    if not unpaired.expected_only and not unpaired.predicted_only:
        return []
    lines = ["## Unpaired packets", ""]
    for label, ids in (
        ("Expected only (no prediction; not compared)", unpaired.expected_only),
        ("Predicted only (no ground truth; not compared)", unpaired.predicted_only),
    ):
        if ids:
            lines.append(f"- **{label}**: {len(ids)}: {_listed([_code(i) for i in ids])}")
    return lines


def _warnings(report: SplitReport) -> list[str]:
    if not report.warnings:
        return []
    return ["## ⚠️ Warnings", "", *(f"- {cell(text)}" for text in report.warnings[:MAX_LISTED])] + (
        [f"- … and {len(report.warnings) - MAX_LISTED} more"]
        if len(report.warnings) > MAX_LISTED
        else []
    )


_EXPLANATION: tuple[str, ...] = (
    "## 📖 Metrics Explanation",
    "",
    "### Page Level Accuracy",
    "- Evaluates classification accuracy for **individual pages**",
    "- Each page index is checked: does its predicted `document_class` match ground truth?",
    "- Pages found on one side only count as wrong; page grouping into sections plays no part",
    "",
    "### Section Split Analysis Table",
    "- Combines all section-level evaluation metrics into a single comprehensive view",
    "- Shows both ground truth sections and unmatched predicted sections",
    "",
    "**Column Definitions:**",
    "",
    "- **Section Match**: ✅ if the expected section's pages (as a set) match any predicted "
    "section with the same document class, regardless of page order",
    "- **Page Order Match**: ✅ if Section Match is true AND the page order also matches exactly",
    "- **Section ID**: Ground truth section identifier (N/A for unmatched predicted sections)",
    "- **Expected Class**: Document class from ground truth",
    "- **Expected Pages**: Page indices from ground truth section",
    "- **Pred Class**: Predicted document class (*in italics*: the predicted section closest "
    "to an unmatched expected section, which is not a match)",
    "- **Pred Pages**: Predicted page indices",
    "- **Matched Section**: ID of the predicted section that matched the ground truth section",
    "",
    "**Unmatched Predicted Sections:**",
    "",
    "- Rows with N/A values represent predicted sections that don't correspond to any ground "
    "truth section",
    "- These indicate potential over-segmentation or incorrect classifications",
    "",
    "### Document Split Accuracy Metrics",
    "",
    "- **Without Page Order**: Counts sections where pages and class match (order doesn't matter)",
    "- **With Page Order**: Counts sections where pages, class, and page order all match exactly",
    "",
    "### Beyond the Seed",
    "",
    "- **Boundary F1**: in page-index order, a boundary is where a new document starts; "
    "expected and predicted boundaries are compared as sets (a page that one side lacks is "
    "a document of its own there)",
    "- **Section F1, one-to-one**: each predicted section stands for at most one expected "
    "section (paired by largest page overlap); exact pairs (same pages and class) are hits and "
    "every other predicted section is a false positive, so over-segmentation lowers precision",
    "- **Mean section overlap**: intersection over union of each expected section with its "
    "counterpart (0 without one)",
    "- **Page class F1**: per class, precision and recall of the predicted page classes; "
    "macro = mean over classes",
    "- **V-measure, (adjusted) Rand index**: how similarly the two sides group pages into "
    "documents, with partial credit; adjusted Rand is 0 for chance and 1 for a perfect split",
    "- **Page order (Kendall τ-b)**: per expected section, agreement of the predicted page "
    "order with the true one (1 in order, -1 reversed)",
    "- **Packet score**: ½ (½ V-measure + ½ Rand index) + ½ page order, as in the DocSplit paper",
    "",
    "Ratings: 🟢 Excellent ≥ 0.9 · 🟡 Good ≥ 0.7 · 🟠 Fair ≥ 0.5 · 🔴 Poor below; n/a where a "
    "figure is undefined (nothing to count).",
)


def render_split_markdown(report: SplitReport | PacketSplitReport, *, max_packets: int = 20) -> str:
    """Markdown for a split report (a batch, or one packet's report).

    At most ``max_packets`` packets with mistakes get a section table (the weakest
    first); the JSON report always has everything.
    """
    batch = summarize([report]) if isinstance(report, PacketSplitReport) else report
    pages = batch.page_level_accuracy
    lines = ["# Document Split Classification Evaluation", ""]
    if batch.packet_count != 1:
        lines += [
            f"**{batch.packet_count} packets** · {pages.total_pages} pages · "
            f"{batch.split_accuracy_without_order.total_sections} expected / "
            f"{batch.predicted_sections} predicted sections",
            "",
        ]
    else:
        lines += [f"**Packet** {_code(batch.packets[0].id)}", ""]
    lines += _summary(batch)
    lines += ["", *_metrics(batch)]
    lines += ["", *_beyond(batch)]
    for part in (_classes(batch.classes), _packets(batch) if batch.packet_count > 1 else []):
        if part:
            lines += ["", *part]
    lines += ["", *_analysis(batch, max_packets)]
    for part in (_unpaired(batch), _warnings(batch)):
        if part:
            lines += ["", *part]
    lines += ["", *_EXPLANATION, "", "---", "", f"*docevals-mlflow {batch.docevals_version}*"]
    return "\n".join(lines) + "\n"


__all__ = ["render_split_markdown"]
