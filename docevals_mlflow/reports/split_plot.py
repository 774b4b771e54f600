"""The page-class confusion matrix of a split report as an offline plotly heatmap.

One self-contained HTML file: plotly.js is inlined (MLflow shows HTML artifacts in a
sandboxed iframe that can load nothing), the figure has a fixed div id and an
explicit template, so equal reports give equal bytes. Colour is the share of the
expected class's pages (rows sum to 1, so small classes stay readable); each cell
shows its page count. Class names are HTML-escaped, since plotly renders labels as
a small HTML dialect.
"""

from __future__ import annotations

import functools
import html

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from docevals_mlflow.split.batch import summarize
from docevals_mlflow.split.classes import MISSING_LABEL_TEXT, ConfusionMatrix
from docevals_mlflow.split.report import PacketSplitReport, SplitReport

MAX_HEATMAP_LABELS = 80
"""Classes drawn (the most frequent ones); the JSON report has the full matrix."""
MAX_LABEL_CHARS = 40
_STYLE = (
    'body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; '
    "margin: 24px; color: #222; } h1 { font-size: 1.4em; } .note { color: #555; "
    "font-size: 0.9em; }"
)


@functools.lru_cache(maxsize=1)
def _plotly_js() -> str:
    # Several megabytes of package data: read once per process.
    return str(get_plotlyjs())


def _label(label: str | None) -> str:
    text = MISSING_LABEL_TEXT if label is None else label
    clipped = text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"
    return html.escape(clipped)


def _unique(labels: list[str]) -> list[str]:
    # Plotly merges equal category names; clipping can make two names equal.
    seen: set[str] = set()
    out = []
    for label in labels:
        candidate, number = label, 1
        while candidate in seen:
            number += 1
            candidate = f"{label} ({number})"
        seen.add(candidate)
        out.append(candidate)
    return out


def confusion_figure(confusion: ConfusionMatrix) -> tuple[go.Figure, str]:
    """The heatmap figure, and a note when some classes were left out."""
    labels, counts = confusion.labels, confusion.counts
    keep = list(range(len(labels)))
    note = ""
    if len(keep) > MAX_HEATMAP_LABELS:
        weight = [sum(counts[i]) + sum(row[i] for row in counts) for i in keep]
        keep = sorted(sorted(keep, key=lambda i: -weight[i])[:MAX_HEATMAP_LABELS])
        note = (
            f"The {MAX_HEATMAP_LABELS} most frequent of {len(labels)} classes are drawn; "
            "the JSON report has the full matrix."
        )
    names = _unique([_label(labels[i]) for i in keep])
    cells = [[counts[i][j] for j in keep] for i in keep]
    shares = []
    for i, row in zip(keep, cells, strict=True):
        total = sum(counts[i])
        shares.append([value / total if total else 0.0 for value in row])
    hover = [
        [
            f"expected {names[r]}<br>predicted {names[c]}<br>{cells[r][c]} pages"
            f" ({shares[r][c]:.1%} of expected {names[r]})"
            for c in range(len(keep))
        ]
        for r in range(len(keep))
    ]
    figure = go.Figure(
        go.Heatmap(
            z=shares,
            x=names,
            y=names,
            text=cells,
            texttemplate="%{text}",
            hovertext=hover,
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
        title={"text": "Page classes: expected (rows) vs predicted (columns)"},
        height=size,
        width=size + 160,
        margin={"l": 10, "r": 20, "t": 60, "b": 10},
        xaxis={
            "title": {"text": "predicted class"},
            "side": "top",
            "type": "category",
            "automargin": True,
        },
        yaxis={
            "title": {"text": "expected class"},
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
    accuracy = "n/a" if pages.accuracy is None else f"{pages.accuracy:.4f}"
    summary = (
        f"{batch.packet_count} packet{'s' if batch.packet_count != 1 else ''} · "
        f"{pages.total_pages} pages · page-level accuracy {accuracy} "
        f"({pages.correct_pages}/{pages.total_pages}) · class macro F1 "
        + ("n/a" if batch.classes.macro_f1 is None else f"{batch.classes.macro_f1:.4f}")
    )
    title = "Document split classification: confusion matrix"
    if batch.classes.confusion.labels:
        figure, note = confusion_figure(batch.classes.confusion)
        body = figure.to_html(
            full_html=False,
            include_plotlyjs=False,
            div_id="split-confusion",
            config={"displaylogo": False, "responsive": True},
        )
        script = f'<script type="text/javascript">{_plotly_js()}</script>\n'
    else:
        body, note, script = "<p>No pages to show.</p>", "", ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n{script}"
        "</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n"
        f'<p class="note">{html.escape(summary)}</p>\n'
        f"{body}\n"
        + (f'<p class="note">{html.escape(note)}</p>\n' if note else "")
        + f'<p class="note">"{MISSING_LABEL_TEXT}": the page is on the other side only. '
        f"docevals-mlflow {html.escape(batch.docevals_version)}</p>\n"
        "</body>\n</html>\n"
    )


__all__ = ["MAX_HEATMAP_LABELS", "confusion_figure", "render_split_heatmap"]
