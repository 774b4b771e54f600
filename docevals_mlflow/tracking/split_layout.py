"""The run layout of a split evaluation: which params, metrics, tags and artifacts a
:class:`~docevals_mlflow.split.report.SplitReport` becomes.

Metrics (micro over packets unless named ``macro``; undefined ones are not logged):

* the headline: ``Summary/page_accuracy``, ``Summary/accuracy_without_order``,
  ``Summary/accuracy_with_order`` (the seed's three, DESIGN §4), ``Summary/packets``
  and ``Summary/pages``; with intervals (resampling packets) the three accuracies'
  ``Summary/<figure>_ci_low`` and ``_ci_high``, and every interval of the report
  (boundary and section figures too) in the figure table ``tables/split_intervals.json``
  (rows keyed ``split/intervals/<figure>``: ``value``, ``ci_low``, ``ci_high``,
  ``packets``, ``pages``, ``observations``, ``confidence``);
* their ``split/macro_*`` means over packets;
* counts: ``split/correct_pages``,
  ``split/expected_sections``, ``split/predicted_sections``,
  ``split/correct_sections_without_order``, ``split/correct_sections_with_order``,
  ``split/unmatched_predicted_sections``, ``split/unpaired_expected``,
  ``split/unpaired_predicted``;
* ``split/class_{micro,macro}_{precision,recall,f1}`` and, per page class,
  ``split/class/<class>/{precision,recall,f1}`` (with ``support``, ``predicted``,
  ``tp``, ``fp``, ``fn`` in the figure table ``tables/split_classes.json``);
* ``split/boundary/{precision,recall,f1,tp,fp,fn,macro_f1}``;
* ``split/section/{precision,recall,f1,tp,fp,fn,ordered_precision,ordered_recall,
  ordered_f1,mean_iou,split,merged,macro_f1}`` (one-to-one section matching);
* ``split/graded/{homogeneity,completeness,v_measure,rand_index,adjusted_rand_index,
  kendall_tau,clustering_score,packet_score}`` (means over packets).

Artifacts: ``report/report.json``, ``report/report.md``, ``report/dashboard.html``
(:func:`~docevals_mlflow.reports.split_dashboard.render_split_dashboard`),
``report/confusion_matrix.html`` (offline plotly), ``tables/split_classes.json``,
``results/packets.parquet`` (one row per packet), ``results/pages.parquet`` (one row
per page) and
``metrics_index.json`` (which class each ``split/class/<key>`` stands for).

Does not import mlflow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.formatting import metric_text as figure_text
from docevals_mlflow.reports.markdown import table
from docevals_mlflow.split.graded import FIGURES
from docevals_mlflow.split.report import SplitReport
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.keys import KeyMap, legal_key
from docevals_mlflow.tracking.layout_shared import HEADLINE, figure_table, tag_evaluation

CLASS_FIGURES = ("precision", "recall", "f1", "support", "predicted", "tp", "fp", "fn")
CLASS_METRICS = ("precision", "recall", "f1")
"""Of :data:`CLASS_FIGURES`, those logged as metrics; all are in the class table."""
HEADLINE_FIGURES = (
    "page_accuracy",
    "accuracy_without_order",
    "accuracy_with_order",
    "packets",
    "pages",
)
"""A split run's headline, logged as ``Summary/<figure>``."""
CLASSES_TABLE = "tables/split_classes.json"
INTERVALS_TABLE = "tables/split_intervals.json"
DETECTION_FIGURES = ("precision", "recall", "f1", "tp", "fp", "fn")


def split_metrics(writer: BundleWriter, report: SplitReport, keys: KeyMap) -> None:
    """Add every ``split/...`` metric of a report to ``writer``."""
    pages = report.page_level_accuracy
    unordered = report.split_accuracy_without_order
    ordered = report.split_accuracy_with_order
    for name, value in (
        ("page_accuracy", pages.accuracy),
        ("accuracy_without_order", unordered.accuracy),
        ("accuracy_with_order", ordered.accuracy),
        ("macro_page_accuracy", pages.macro_accuracy),
        ("macro_accuracy_without_order", unordered.macro_accuracy),
        ("macro_accuracy_with_order", ordered.macro_accuracy),
        ("packets", report.packet_count),
        ("pages", pages.total_pages),
        ("correct_pages", pages.correct_pages),
        ("expected_sections", unordered.total_sections),
        ("predicted_sections", report.predicted_sections),
        ("correct_sections_without_order", unordered.correct_sections),
        ("correct_sections_with_order", ordered.correct_sections),
        ("unmatched_predicted_sections", report.unmatched_predicted_sections),
        ("unpaired_expected", len(report.unpaired.expected_only)),
        ("unpaired_predicted", len(report.unpaired.predicted_only)),
    ):
        writer.metric(f"{HEADLINE if name in HEADLINE_FIGURES else 'split'}/{name}", value)

    classes = report.classes
    for scope in ("micro", "macro"):
        for name in ("precision", "recall", "f1"):
            writer.metric(f"split/class_{scope}_{name}", getattr(classes, f"{scope}_{name}"))
    rows = []
    for name, score in classes.classes.items():
        prefix = legal_key(f"split/class/{keys.named('class', name)}")
        for figure in CLASS_METRICS:
            writer.metric(f"{prefix}/{figure}", getattr(score, figure))
        rows.append(
            {"key": prefix, "class": name}
            | {figure: getattr(score, figure) for figure in CLASS_FIGURES}
        )
    figure_table(writer, CLASSES_TABLE, rows)

    boundaries = report.boundaries
    for figure in DETECTION_FIGURES:
        writer.metric(f"split/boundary/{figure}", getattr(boundaries, figure))
    writer.metric("split/boundary/macro_f1", boundaries.macro_f1)

    matching = report.matching
    for figure in DETECTION_FIGURES:
        writer.metric(f"split/section/{figure}", getattr(matching.exact, figure))
    for figure in ("precision", "recall", "f1"):
        writer.metric(f"split/section/ordered_{figure}", getattr(matching.ordered, figure))
    writer.metric("split/section/mean_iou", matching.mean_iou)
    writer.metric("split/section/split", matching.split_sections)
    writer.metric("split/section/merged", matching.merged_sections)
    writer.metric("split/section/macro_f1", matching.macro_f1)

    for figure in FIGURES:
        writer.metric(f"split/graded/{figure}", getattr(report.graded, figure))
    _interval_metrics(writer, report)


def _interval_metrics(writer: BundleWriter, report: SplitReport) -> None:
    """The headline accuracies' ``Summary/<figure>_ci_{low,high}`` and the table of
    every interval (one row per figure, keyed as the figure's metric)."""
    exact = report.matching.exact
    figures: list[tuple[str, float | None, Mapping[str, Any] | None]] = [
        ("page_accuracy", report.page_level_accuracy.accuracy, report.page_level_accuracy.ci),
        *(
            (name, part.accuracy, part.ci)
            for name, part in (
                ("accuracy_without_order", report.split_accuracy_without_order),
                ("accuracy_with_order", report.split_accuracy_with_order),
            )
        ),
    ]
    for name in ("precision", "recall", "f1"):
        figures.append((f"boundary/{name}", getattr(report.boundaries, name), report.boundaries.ci))
        figures.append((f"section/{name}", getattr(exact, name), report.matching.ci))
    rows = []
    for key, value, found in figures:
        interval = (found or {}).get(key.rpartition("/")[2] if "/" in key else "accuracy")
        if interval is None:
            continue
        headline = key in HEADLINE_FIGURES
        if headline:
            writer.metric(f"{HEADLINE}/{key}_ci_low", interval.low)
            writer.metric(f"{HEADLINE}/{key}_ci_high", interval.high)
        rows.append(
            {
                "key": f"split/intervals/{key}",
                "value": value,
                "ci_low": interval.low,
                "ci_high": interval.high,
                "packets": interval.packets,
                "pages": interval.pages,
                "observations": interval.observations,
                "confidence": interval.confidence,
            }
        )
    figure_table(writer, INTERVALS_TABLE, rows)


def split_summary(report: SplitReport, verdict: str | None = None) -> str:
    """The Markdown run description of a split evaluation."""
    pages = report.page_level_accuracy
    unordered = report.split_accuracy_without_order
    ordered = report.split_accuracy_with_order
    head = (
        f"**docevals split evaluation**: {report.packet_count:,} packets, "
        f"{pages.total_pages:,} pages" + (f", verdict **{verdict}**" if verdict else "")
    )
    rows = [
        (
            "page-level accuracy",
            figure_text(pages.accuracy),
            f"{pages.correct_pages}/{pages.total_pages} pages",
        ),
        (
            "split accuracy (without order)",
            figure_text(unordered.accuracy),
            f"{unordered.correct_sections}/{unordered.total_sections} sections",
        ),
        (
            "split accuracy (with order)",
            figure_text(ordered.accuracy),
            f"{ordered.correct_sections}/{ordered.total_sections} sections",
        ),
        ("boundary F1", figure_text(report.boundaries.f1), ""),
        ("section F1 (one-to-one)", figure_text(report.matching.exact.f1), ""),
        ("page class macro F1", figure_text(report.classes.macro_f1), ""),
        ("packet score", figure_text(report.graded.packet_score), "mean over packets"),
    ]
    return "\n".join([head, "", *table(["metric", "value", "counts"], rows)]) + "\n"


def _tables(writer: BundleWriter, report: SplitReport) -> None:
    import pandas as pd

    packets = [
        {
            "packet_id": packet.id,
            "pages": packet.page_level_accuracy.total_pages,
            "correct_pages": packet.page_level_accuracy.correct_pages,
            "page_accuracy": packet.page_level_accuracy.accuracy,
            "expected_sections": packet.expected_sections,
            "predicted_sections": packet.predicted_sections,
            "correct_sections_without_order": packet.split_accuracy_without_order.correct_sections,
            "accuracy_without_order": packet.split_accuracy_without_order.accuracy,
            "correct_sections_with_order": packet.split_accuracy_with_order.correct_sections,
            "accuracy_with_order": packet.split_accuracy_with_order.accuracy,
            "unmatched_predicted_sections": len(packet.unmatched_predicted_sections),
            "boundary_f1": packet.boundaries.f1,
            "section_f1": packet.matching.exact.f1,
            "mean_iou": packet.matching.mean_iou,
            **{figure: getattr(packet.graded, figure) for figure in FIGURES},
        }
        for packet in report.packets
    ]
    writer.parquet("results/packets.parquet", pd.DataFrame(packets))
    rows: list[tuple[Any, ...]] = [
        (packet.id, row.page_index, row.ground_truth_class, row.predicted_class, row.correct)
        for packet in report.packets
        for row in packet.page_level_accuracy.page_details
    ]
    writer.parquet(
        "results/pages.parquet",
        pd.DataFrame.from_records(
            rows,
            columns=["packet_id", "page_index", "expected_class", "predicted_class", "correct"],
        ),
    )


def layout_split(
    writer: BundleWriter,
    report: SplitReport,
    *,
    markdown: str,
    heatmap: str,
    verdict: str | None = None,
    report_json: str | None = None,
    dashboard: str | None = None,
) -> KeyMap:
    """Fill ``writer`` with a split report (see the module docstring).

    ``report_json`` is the report already serialised (as the CLI writes it), so a
    large report is not encoded twice; ``dashboard`` likewise the HTML dashboard
    (rendered here when not given).
    """
    if dashboard is None:
        from docevals_mlflow.reports.split_dashboard import render_split_dashboard

        dashboard = render_split_dashboard(report)
    keys = KeyMap()
    writer.param("docevals.version", __version__)
    split_metrics(writer, report, keys)
    tag_evaluation(writer, "split", verdict=verdict, note=split_summary(report, verdict))
    writer.text("report/report.json", report_json if report_json is not None else report.to_json())
    writer.text("report/report.md", markdown)
    writer.text("report/dashboard.html", dashboard)
    writer.text("report/confusion_matrix.html", heatmap)
    _tables(writer, report)
    writer.json("metrics_index.json", keys.index())
    return keys


__all__ = ["layout_split", "split_metrics", "split_summary"]
