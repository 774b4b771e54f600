"""The offline HTML dashboard (plotly) of a split report.

One self-contained page (see :mod:`docevals_mlflow.reports.html`), laid out like the
fields and evaluation dashboards: headline cards (page and split accuracy, boundary
and section F1, class macro F1, packet score), the figures with their intervals from
resampling packets as error bars (when the report has them), precision / recall / F1 bars per page
class (worst F1 first, at most ``MAX_BARS``), the page-class confusion heatmap of
:mod:`docevals_mlflow.reports.split_plot` and, for a batch, the weakest packets.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from docevals_mlflow.core.formatting import metric_text, percent_of
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.reports.dashboard_figures import MAX_BARS, bar_height
from docevals_mlflow.reports.html import (
    Page,
    axis_labels,
    category_axis,
    figure_layout,
    html_cards,
    html_note,
)
from docevals_mlflow.reports.split_intervals import intervals_figure
from docevals_mlflow.reports.split_metrics import worst_first
from docevals_mlflow.reports.split_plot import confusion_figure
from docevals_mlflow.split.batch import summarize
from docevals_mlflow.split.classes import ClassScore
from docevals_mlflow.split.report import PacketSplitReport, SplitReport

TITLE = "Document split evaluation dashboard"
_CLASS_SERIES = (("precision", "#1f77b4"), ("recall", "#ff7f0e"), ("f1", "#2ca02c"))


def _cards(batch: SplitReport) -> str:
    pages = batch.page_level_accuracy
    unordered = batch.split_accuracy_without_order
    ordered = batch.split_accuracy_with_order
    return html_cards(
        [
            ("Packets", str(batch.packet_count)),
            ("Pages", str(pages.total_pages)),
            ("Page accuracy", metric_text(pages.accuracy)),
            ("Split accuracy (any order)", metric_text(unordered.accuracy)),
            ("Split accuracy (in order)", metric_text(ordered.accuracy)),
            ("Boundary F1", metric_text(batch.boundaries.f1)),
            ("Section F1", metric_text(batch.matching.exact.f1)),
            ("Class macro F1", metric_text(batch.classes.macro_f1)),
            ("Packet score", metric_text(batch.graded.packet_score)),
        ]
    )


def _worst_classes(classes: dict[str, ClassScore]) -> list[str]:
    """Class names by F1, lowest first; undefined F1 last, ties by name."""
    return sorted(
        classes,
        key=lambda name: (classes[name].f1 is None, classes[name].f1 or 0.0, name),
    )


def class_scores_figure(classes: dict[str, ClassScore], names: Sequence[str]) -> go.Figure:
    """Grouped precision, recall and F1 bars per page class, in the given order."""
    labels = axis_labels(names)
    figure = go.Figure(
        [
            go.Bar(
                name=html.escape("F1" if metric == "f1" else metric),
                # None leaves no bar rather than a false 0 (an undefined figure).
                x=[getattr(classes[name], metric) for name in names],
                y=labels,
                orientation="h",
                marker={"color": colour},
                hovertext=[
                    f"<b>{html.escape(name)}</b><br>{metric}: "
                    f"{metric_text(getattr(classes[name], metric))}<br>"
                    f"{classes[name].support} expected pages · "
                    f"{classes[name].predicted} predicted · {classes[name].tp} right"
                    for name in names
                ],
                hoverinfo="text",
            )
            for metric, colour in _CLASS_SERIES
        ]
    )
    return figure_layout(
        figure,
        title="Scores per page class (worst F1 first)",
        height=bar_height(len(names) * 2),
        barmode="group",
        xaxis={"title": {"text": "score"}, "range": [0, 1.05]},
        yaxis=category_axis(labels),
    )


def _packet_hover(packet: PacketSplitReport) -> str:
    pages = packet.page_level_accuracy
    sections = packet.split_accuracy_with_order
    return (
        f"<b>{html.escape(packet.id)}</b><br>pages right: {pages.correct_pages} of "
        f"{pages.total_pages} ({percent_of(pages.correct_pages, pages.total_pages)})"
        f"<br>sections in order: {sections.correct_sections} of {sections.total_sections}"
    )


def packet_accuracy_figure(packets: Sequence[PacketSplitReport]) -> go.Figure:
    """Page accuracy per packet, in the given order (the weakest first)."""
    labels = axis_labels(packet.id for packet in packets)
    figure = go.Figure(
        go.Bar(
            name="page accuracy",
            x=[packet.page_level_accuracy.accuracy for packet in packets],
            y=labels,
            orientation="h",
            marker={"color": "#1f77b4"},
            hovertext=[_packet_hover(packet) for packet in packets],
            hoverinfo="text",
            showlegend=False,
        )
    )
    return figure_layout(
        figure,
        title="Page accuracy per packet (weakest first)",
        height=bar_height(len(packets)),
        xaxis={"title": {"text": "page accuracy"}, "range": [0, 1.05], "tickformat": ".0%"},
        yaxis=category_axis(labels),
    )


def _class_section(page: Page, batch: SplitReport) -> None:
    page.section("Per page class")
    names = _worst_classes(batch.classes.classes)
    if not names:
        page.add(html_note("No page classes in this batch."))
        return
    if len(names) > MAX_BARS:
        page.add(html_note(f"Showing the {MAX_BARS} weakest of {len(names)} classes."))
    page.figure(class_scores_figure(batch.classes.classes, names[:MAX_BARS]), "split-class-scores")


def _confusion_section(page: Page, batch: SplitReport) -> None:
    page.section("Confusion matrix")
    if not batch.classes.confusion.labels:
        page.add(html_note("No pages to show."))
        return
    figure, note = confusion_figure(batch.classes.confusion)
    page.figure(figure, "split-confusion")
    if note:
        page.add(html_note(note))


def render_split_dashboard(report: SplitReport | PacketSplitReport) -> str:
    """A self-contained HTML dashboard of a split report (a batch or one packet).

    Headline cards, precision / recall / F1 bars per page class, the confusion
    heatmap and, for a batch, page accuracy per packet (weakest first, at most
    ``MAX_BARS``); equal reports give equal pages.
    """
    batch = summarize([report]) if isinstance(report, PacketSplitReport) else report
    page = Page(TITLE)
    page.add(_cards(batch))
    intervals = intervals_figure(batch)
    if intervals is not None:
        page.section("Intervals")
        page.figure(intervals, "split-intervals")
    _class_section(page, batch)
    _confusion_section(page, batch)
    if batch.packet_count > 1:
        page.section("Per packet")
        packets = worst_first(batch.packets)
        if len(packets) > MAX_BARS:
            page.add(html_note(f"Showing the {MAX_BARS} weakest of {len(packets)} packets."))
        page.figure(packet_accuracy_figure(packets[:MAX_BARS]), "split-packet-accuracy")
    if batch.warnings:
        page.section("Warnings")
        page.add("".join(html_note(warning) for warning in batch.warnings))
    # Pages are written to files and MLflow: no registered secret may be in one.
    return redact_text(page.render(f"docevals-mlflow {batch.docevals_version}"))


__all__ = ["TITLE", "class_scores_figure", "packet_accuracy_figure", "render_split_dashboard"]
