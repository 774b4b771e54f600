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

from docevals_mlflow.reports.markdown import inline_code
from docevals_mlflow.reports.split_intervals import intervals_section
from docevals_mlflow.reports.split_metrics import (
    beyond_section,
    classes_section,
    metrics_section,
    packets_section,
    summary_section,
)
from docevals_mlflow.reports.split_sections import (
    analysis_section,
    unpaired_section,
    warnings_section,
)
from docevals_mlflow.split.batch import summarize
from docevals_mlflow.split.report import PacketSplitReport, SplitReport

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
        lines += [f"**Packet** {inline_code(batch.packets[0].id)}", ""]
    lines += summary_section(batch)
    lines += ["", *metrics_section(batch)]
    intervals = intervals_section(batch)
    if intervals:
        lines += ["", *intervals]
    lines += ["", *beyond_section(batch)]
    for part in (
        classes_section(batch.classes),
        packets_section(batch) if batch.packet_count > 1 else [],
    ):
        if part:
            lines += ["", *part]
    lines += ["", *analysis_section(batch, max_packets)]
    for part in (unpaired_section(batch), warnings_section(batch)):
        if part:
            lines += ["", *part]
    lines += ["", *_EXPLANATION, "", "---", "", f"*docevals-mlflow {batch.docevals_version}*"]
    return "\n".join(lines) + "\n"


__all__ = ["render_split_markdown"]
