"""The page-class confusion matrix of a split report as an offline plotly heatmap.

One self-contained HTML page (:mod:`docevals_mlflow.reports.html`): plotly.js is
inlined, the figure has a fixed div id and an explicit template, so equal reports
give equal bytes. Colour is the share of the expected class's pages (rows sum to 1,
so small classes stay readable); each cell shows its page count. Class names are
HTML-escaped, since plotly renders labels as a small HTML dialect.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from docevals_mlflow.core.formatting import metric_text, percent_text
from docevals_mlflow.reports.html import Page, axis_labels, html_note, title_layout
from docevals_mlflow.split.batch import summarize
from docevals_mlflow.split.classes import MISSING_LABEL_TEXT, ConfusionMatrix
from docevals_mlflow.split.report import PacketSplitReport, SplitReport

MAX_HEATMAP_LABELS = 80
"""Classes drawn (the most frequent ones); the JSON report has the full matrix."""
MAX_LABEL_CHARS = 40
HEATMAP_TITLE = "Page classes: expected vs predicted"


def _row_shares(
    confusion: ConfusionMatrix, keep: Sequence[int], cells: Sequence[Sequence[int]]
) -> list[list[float]]:
    """Each drawn cell as a share of its expected class's pages (all of them, drawn
    or not), so a row's colours do not change when classes are left out."""
    shares = []
    for i, row in zip(keep, cells, strict=True):
        total = sum(confusion.counts[i])
        shares.append([value / total if total else 0.0 for value in row])
    return shares


def _hover(
    names: Sequence[str], cells: Sequence[Sequence[int]], shares: Sequence[Sequence[float]]
) -> list[list[str]]:
    return [
        [
            f"expected {names[r]}<br>predicted {names[c]}<br>{cells[r][c]} pages"
            f" ({percent_text(shares[r][c])} of expected {names[r]})"
            for c in range(len(names))
        ]
        for r in range(len(names))
    ]


def confusion_figure(confusion: ConfusionMatrix) -> tuple[go.Figure, str]:
    """The heatmap figure, and a note when some classes were left out."""
    labels, counts = confusion.labels, confusion.counts
    keep = confusion.most_frequent(MAX_HEATMAP_LABELS)
    note = ""
    if len(keep) < len(labels):
        note = (
            f"The {MAX_HEATMAP_LABELS} most frequent of {len(labels)} classes are drawn; "
            "the JSON report has the full matrix."
        )
    shown = [labels[i] for i in keep]
    names = axis_labels(
        (MISSING_LABEL_TEXT if label is None else label for label in shown), MAX_LABEL_CHARS
    )
    cells = [[counts[i][j] for j in keep] for i in keep]
    shares = _row_shares(confusion, keep, cells)
    figure = go.Figure(
        go.Heatmap(
            z=shares,
            x=names,
            y=names,
            text=cells,
            texttemplate="%{text}",
            hovertext=_hover(names, cells, shares),
            hoverinfo="text",
            colorscale="Blues",
            zmin=0,
            zmax=1,
            colorbar={"title": {"text": "share of<br>expected pages"}},
        )
    )
    size = max(360, 38 * len(keep) + 220)
    figure.update_layout(
        template="none",
        # Short and above the plot; the predicted classes are along the bottom, as a
        # top-side axis shared the band above the plot with the title and crowded it.
        # The axis titles say which side is which.
        title=title_layout(HEATMAP_TITLE),
        height=size,
        width=size + 160,
        margin={"l": 10, "r": 20, "t": 30, "b": 10},
        xaxis={
            "title": {"text": "predicted class (columns)"},
            "side": "bottom",
            "type": "category",
            "automargin": True,
        },
        yaxis={
            "title": {"text": "expected class (rows)"},
            "type": "category",
            "autorange": "reversed",
            "automargin": True,
        },
        font={"size": 12},
    )
    return figure, note


def render_split_heatmap(report: SplitReport | PacketSplitReport) -> str:
    """A self-contained HTML page with the confusion-matrix heatmap of a split report."""
    batch = summarize([report]) if isinstance(report, PacketSplitReport) else report
    pages = batch.page_level_accuracy
    summary = (
        f"{batch.packet_count} packet{'s' if batch.packet_count != 1 else ''} · "
        f"{pages.total_pages} pages · page-level accuracy {metric_text(pages.accuracy)} "
        f"({pages.correct_pages}/{pages.total_pages}) · class macro F1 "
        + metric_text(batch.classes.macro_f1)
    )
    page = Page("Document split classification: confusion matrix")
    page.add(html_note(summary))
    if batch.classes.confusion.labels:
        figure, note = confusion_figure(batch.classes.confusion)
        page.figure(figure, "split-confusion")
        if note:
            page.add(html_note(note))
    else:
        page.add("<p>No pages to show.</p>")
    return page.render(
        f'"{MISSING_LABEL_TEXT}": the page is on the other side only. '
        f"docevals-mlflow {batch.docevals_version}"
    )


__all__ = ["HEATMAP_TITLE", "MAX_HEATMAP_LABELS", "confusion_figure", "render_split_heatmap"]
