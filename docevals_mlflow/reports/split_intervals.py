"""The intervals of a split report (resampling packets) in Markdown and on the dashboard.

Both list the same figures, in the order of the summary: page accuracy, split
accuracy without and with order, boundary and one-to-one section precision, recall
and F1. A report without intervals (older, or ``--no-intervals``) renders nothing.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go

from docevals_mlflow.core.formatting import level_text, metric_text
from docevals_mlflow.reports.dashboard_figures import bar_height
from docevals_mlflow.reports.html import axis_labels, category_axis, figure_layout
from docevals_mlflow.reports.markdown import table
from docevals_mlflow.split.intervals import DETECTION_FIGURES, SplitInterval
from docevals_mlflow.split.report import SplitReport

_DIGITS = 3
_DETECTION_NAMES = {"precision": "precision", "recall": "recall", "f1": "F1"}

Row = tuple[str, float | None, SplitInterval]


def interval_rows(report: SplitReport) -> list[Row]:
    """``(label, figure, interval)`` for every figure with a ``ci`` entry."""
    exact = report.matching.exact
    candidates: list[tuple[str, float | None, dict[str, SplitInterval] | None, str]] = [
        ("page-level accuracy", report.page_level_accuracy.accuracy,
         report.page_level_accuracy.ci, "accuracy"),
        ("split accuracy (without order)", report.split_accuracy_without_order.accuracy,
         report.split_accuracy_without_order.ci, "accuracy"),
        ("split accuracy (with order)", report.split_accuracy_with_order.accuracy,
         report.split_accuracy_with_order.ci, "accuracy"),
        *((f"boundary {_DETECTION_NAMES[name]}", getattr(report.boundaries, name),
           report.boundaries.ci, name) for name in DETECTION_FIGURES),
        *((f"section {_DETECTION_NAMES[name]} (one-to-one)", getattr(exact, name),
           report.matching.ci, name) for name in DETECTION_FIGURES),
    ]  # fmt: skip
    rows = []
    for label, value, found, key in candidates:
        interval = (found or {}).get(key)
        if interval is not None:
            rows.append((label, value, interval))
    return rows


def interval_text(value: float | None, interval: SplitInterval) -> str:
    """``0.912 [0.887, 0.934]``, or the figure with why there is no interval."""
    figure = metric_text(value, _DIGITS)
    if interval.low is None or interval.high is None:
        return f"{figure} (no interval: {interval.reason or 'not computed'})"
    return f"{figure} [{metric_text(interval.low, _DIGITS)}, {metric_text(interval.high, _DIGITS)}]"


def intervals_section(report: SplitReport) -> list[str]:
    """The Markdown "Intervals" section (empty without intervals, or when no figure
    has one: a single packet)."""
    rows = interval_rows(report)
    if not any(interval.low is not None for _, _, interval in rows):
        return []
    first = rows[0][2]
    return [
        f"## Intervals ({level_text(first.confidence)}, resampling packets)",
        "",
        f"Each interval comes from {first.resamples} resamples of the packets (seed "
        f"{first.seed}): the pages and sections of one packet are not independent, so "
        "packets are the unit drawn. Packets and pages: those behind the figure; "
        "observations: the pages, expected sections, or found, spurious and missed "
        "boundaries or sections it counts.",
        "",
        *table(
            ["Figure", "Value [interval]", "Packets", "Pages", "Observations"],
            [
                (
                    label,
                    interval_text(value, interval),
                    interval.packets,
                    interval.pages,
                    interval.observations,
                )
                for label, value, interval in rows
            ],
        ),
    ]


def intervals_figure(report: SplitReport) -> go.Figure | None:
    """Horizontal bars of the figures with their intervals as error bars; ``None``
    when no figure has an interval."""
    rows = [row for row in interval_rows(report) if row[1] is not None]
    if not any(interval.low is not None for _, _, interval in rows):
        return None
    labels = axis_labels(label for label, _, _ in rows)
    values = [value for _, value, _ in rows]
    plus = [None if i.high is None else i.high - v for (_, v, i) in rows if v is not None]
    minus = [None if i.low is None else v - i.low for (_, v, i) in rows if v is not None]
    figure = go.Figure(
        go.Bar(
            x=values,
            y=labels,
            orientation="h",
            marker={"color": "#1f77b4"},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": plus,
                "arrayminus": minus,
                "color": "#444",
                "thickness": 1.2,
            },
            hovertext=[
                f"<b>{html.escape(label)}</b><br>{html.escape(interval_text(value, interval))}"
                f"<br>{interval.packets} packets · {interval.pages} pages · "
                f"{interval.observations} observations"
                for label, value, interval in rows
            ],
            hoverinfo="text",
            showlegend=False,
        )
    )
    level = level_text(rows[0][2].confidence)
    return figure_layout(
        figure,
        title=f"Figures with {level} intervals (resampling packets)",
        height=bar_height(len(rows)),
        xaxis={"title": {"text": "value"}, "range": [0, 1.05]},
        yaxis=category_axis(labels),
    )


__all__ = ["interval_rows", "interval_text", "intervals_figure", "intervals_section"]
