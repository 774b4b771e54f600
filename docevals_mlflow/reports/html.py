"""Building blocks of the offline HTML pages (dashboards, split heatmap, comparisons).

A page is one self-contained file: plotly.js is inlined once, and only when the page
has a figure (the MLflow UI shows HTML artifacts in a sandboxed iframe that can load
nothing from another origin). Figures get fixed div ids and an explicit template, so
equal reports give equal bytes. User text is escaped here: cells, cards and notes
arrive as plain text, and plotly renders axis labels as a small HTML dialect.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterable, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

MAX_LABEL_CHARS = 60
"""Axis labels are clipped to this many characters; hover text keeps the full text."""

STYLE = """
body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       margin: 24px; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 4px; }
h2 { font-size: 1.15em; margin-top: 32px; border-bottom: 1px solid #ddd; }
.meta, .note { color: #555; font-size: 0.9em; }
.cards { display: flex; flex-wrap: wrap; gap: 8px; margin: 12px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 6px 12px; min-width: 90px; }
.card .label { color: #666; font-size: 0.8em; }
.card .value { font-size: 1.2em; font-weight: 600; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
"""


# --------------------------------------------------------------------------- text


def axis_labels(texts: Iterable[str], max_chars: int = MAX_LABEL_CHARS) -> list[str]:
    """Clipped, escaped and unique category labels.

    Plotly merges equal categories into one bar, so clipped or repeated texts get a
    numeric suffix; clipping comes before escaping so that no entity is cut in half.
    """
    used: set[str] = set()
    labels = []
    for text in texts:
        clipped = text if len(text) <= max_chars else text[: max_chars - 1] + "…"
        base = html.escape(clipped)
        label, n = base, 1
        while label in used:
            n += 1
            label = f"{base} ({n})"
        used.add(label)
        labels.append(label)
    return labels


def html_table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: int) -> str:
    """A plain HTML table; cells arrive as plain text and are escaped here.

    The last ``numeric`` columns are right-aligned figures.
    """
    first_numeric = len(headers) - numeric
    head = "".join(f"<th>{html.escape(header)}</th>" for header in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{html.escape(text)}</td>'
            if index >= first_numeric
            else f"<td>{html.escape(text)}</td>"
            for index, text in enumerate(row)
        )
        + "</tr>\n"
        for row in rows
    )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>"


def html_cards(items: Sequence[tuple[str, str]]) -> str:
    """Headline figures as a row of ``(label, value)`` cards."""
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="label">{html.escape(label)}</div>'
            f'<div class="value">{html.escape(value)}</div></div>'
            for label, value in items
        )
        + "</div>"
    )


def html_note(text: str) -> str:
    """A paragraph of small grey text."""
    return f'<p class="note">{html.escape(text)}</p>'


# --------------------------------------------------------------------------- figures


TITLE_LAYOUT: dict[str, Any] = {
    # Anchored to the plot area with automargin: plotly widens the top margin so that
    # the title sits above the plot, its tick labels and axis titles (a top-side axis
    # included) instead of at a fixed height in the margin where they would collide.
    "automargin": True,
    # Left-aligned from the figure's edge, not the plot area's: long tick labels
    # would otherwise push a long title out of a narrow figure.
    "xref": "container",
    "x": 0,
    "xanchor": "left",
    "yref": "paper",
    "y": 1,
    "yanchor": "bottom",
    "pad": {"b": 14, "l": 10},
}
LEGEND_LAYOUT: dict[str, Any] = {
    # Right of the plot area, top-aligned: never over the title, which is above it.
    "orientation": "v",
    "x": 1.02,
    "xanchor": "left",
    "y": 1,
    "yanchor": "top",
}


def title_layout(title: str) -> dict[str, Any]:
    """The layout ``title`` of a figure (escaped text, placed by :data:`TITLE_LAYOUT`)."""
    return {"text": html.escape(title), **TITLE_LAYOUT}


def figure_layout(figure: go.Figure, *, title: str, height: int, **layout: Any) -> go.Figure:
    """The shared look of a figure (``layout`` adds or overrides settings).

    Both axes get ``automargin`` unless ``layout`` says otherwise: with the narrow
    fixed margins, tick labels and axis titles would otherwise be clipped.
    """
    for name in ("xaxis", "yaxis"):
        layout[name] = {"automargin": True, **(layout.get(name) or {})}
    figure.update_layout(
        # An explicit template keeps the output independent of the process-wide
        # plotly default; "none" also keeps ~7 kB of theme JSON out of every figure.
        template="none",
        title=title_layout(title),
        height=height,
        margin={"l": 10, "r": 20, "t": 30, "b": 50},
        font={"size": 12},
        legend=LEGEND_LAYOUT,
        **layout,
    )
    return figure


def category_axis(labels: Sequence[str]) -> dict[str, Any]:
    """A category axis in the given order, first entry at the top."""
    # Horizontal bars draw bottom-up, hence the reversed range.
    return {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": list(labels),
        "autorange": "reversed",
        "automargin": True,
    }


# --------------------------------------------------------------------------- page


@functools.lru_cache(maxsize=1)
def plotly_js() -> str:
    """The plotly.js bundle (read once per process: several megabytes of package data)."""
    return str(get_plotlyjs())


class Page:
    """Sections of one HTML page; plotly.js is inlined only if a figure was added."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.parts: list[str] = []
        self.figures = 0

    def add(self, part: str) -> None:
        """Add HTML (already escaped where it holds user text)."""
        self.parts.append(part)

    def section(self, title: str) -> None:
        """Start a section with a heading."""
        self.parts.append(f"<h2>{html.escape(title)}</h2>")

    def figure(self, figure: go.Figure, div_id: str) -> None:
        """Add a figure in a div of a fixed id."""
        height = figure.layout.height
        self.parts.append(
            figure.to_html(
                full_html=False,
                include_plotlyjs=False,
                div_id=div_id,
                # No logo: it links to plotly.com, which the sandbox cannot open anyway.
                config={"displaylogo": False, "responsive": True},
                default_height=f"{height}px" if height else "100%",
            )
        )
        self.figures += 1

    def render(self, footer: str) -> str:
        """The whole page, ``footer`` last."""
        script = f'<script type="text/javascript">{plotly_js()}</script>\n' if self.figures else ""
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(self.title)}</title>\n"
            f"<style>{STYLE}</style>\n"
            f"{script}"
            "</head>\n<body>\n"
            f"<h1>{html.escape(self.title)}</h1>\n" + "\n".join(self.parts) + "\n"
            f'<p class="meta">{html.escape(footer)}</p>\n'
            "</body>\n</html>\n"
        )


__all__ = [
    "LEGEND_LAYOUT",
    "MAX_LABEL_CHARS",
    "STYLE",
    "TITLE_LAYOUT",
    "Page",
    "axis_labels",
    "category_axis",
    "figure_layout",
    "html_cards",
    "html_note",
    "html_table",
    "plotly_js",
    "title_layout",
]
