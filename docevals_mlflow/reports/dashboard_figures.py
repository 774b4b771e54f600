"""Figure helpers shared by the offline dashboards (fields and evaluations).

The page machinery (self-contained pages, fixed div ids, escaping) lives in
:mod:`docevals_mlflow.reports.html`; this module holds what the dashboards draw
alike: the colours of outcomes, verdicts and failure contexts, the bar-count cap,
stacked count bars and the reference diagonal.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from docevals_mlflow.core.formatting import percent_of
from docevals_mlflow.reports.html import category_axis, figure_layout

MAX_BARS = 100
"""Entries (fields, stages, metrics) per bar chart; the JSON report has all of them."""

OUTCOMES = ("TP", "FA", "FD", "FN", "TN")
OUTCOME_COLOURS = {
    "TP": "#2ca02c",
    "FA": "#ff7f0e",
    "FD": "#d62728",
    "FN": "#9467bd",
    "TN": "#d3d3d3",
}
VERDICT_COLOURS = {
    "pass": "#2ca02c",
    "fail": "#d62728",
    "uncertain": "#ffbf00",
    "not_applicable": "#bdbdbd",
}
CONTEXT_COLOURS = {
    "none": "#d3d3d3",
    "current_stage": "#d62728",
    "upstream": "#ff7f0e",
    "upstream_or_combined": "#9467bd",
    "indeterminate": "#7f7f7f",
    "caused_by_upstream": "#ffbb78",
    "independent_failure": "#8c564b",
}


def escaped(value: Any) -> str:
    """``value`` as HTML-escaped text; ``None`` as the empty text."""
    return html.escape("" if value is None else str(value))


def diagonal_trace(name: str) -> go.Scatter:
    """The dashed diagonal from (0, 0) to (1, 1) that a rate curve is read against
    (perfect calibration, review in random order)."""
    return go.Scatter(
        name=name,
        x=[0.0, 1.0],
        y=[0.0, 1.0],
        mode="lines",
        line={"dash": "dash", "color": "#999"},
        hoverinfo="skip",
    )


def bar_height(count: int) -> int:
    """Figure height (px) of a horizontal bar chart with ``count`` categories."""
    return max(260, 26 * count + 140)


def stacked_bars(
    labels: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[int]]],
    names: Sequence[str],
    *,
    title: str,
    axis_title: str,
    details: Sequence[str] | None = None,
) -> go.Figure:
    """Horizontal stacked count bars: one trace per ``(name, colour, counts)``.

    ``names`` are the escaped full texts of the categories, for the hover;
    ``details``, escaped too, add a last hover line per category.
    """
    extra = [f"<br>{detail}" for detail in details] if details else [""] * len(labels)
    totals = [sum(values[i] for _, _, values in series) for i in range(len(labels))]
    figure = go.Figure()
    for name, colour, values in series:
        figure.add_trace(
            go.Bar(
                name=name,
                x=list(values),
                y=list(labels),
                orientation="h",
                marker={"color": colour},
                hovertext=[
                    f"<b>{names[i]}</b><br>{name}: {value} of {totals[i]} "
                    f"({percent_of(value, totals[i])}){extra[i]}"
                    for i, value in enumerate(values)
                ],
                hoverinfo="text",
            )
        )
    return figure_layout(
        figure,
        title=title,
        height=bar_height(len(labels)),
        barmode="stack",
        xaxis={"title": {"text": axis_title}, "automargin": True},
        yaxis=category_axis(labels),
    )
