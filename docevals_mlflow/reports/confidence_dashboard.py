"""Confidence charts of the fields dashboard: is the extractor right when it is sure?

Rows carrying an extraction confidence are put in equal confidence bins; a
reliability chart shows the fraction correct per bin and a histogram the confidence
of correct versus wrong rows. Work is bounded: over ``MAX_CONFIDENCE_ROWS`` rows, an
evenly spaced sample is read.
"""

from __future__ import annotations

import html
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import plotly.graph_objects as go

from docevals_mlflow.core.formatting import defined_number, percent_of
from docevals_mlflow.reports.dashboard_figures import OUTCOME_COLOURS, diagonal_trace
from docevals_mlflow.reports.html import Page, figure_layout, html_note

MAX_CONFIDENCE_ROWS = 200_000
"""Rows read for the confidence charts; more are sampled down to this many."""
CONFIDENCE_BINS = 10
NO_CONFIDENCE_TEXT = "No extraction confidence in this batch"


class ConfidenceBin(NamedTuple):
    """Rows whose confidence lies in ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    total: int
    """Rows in the bin (not ``count``: that name is taken by ``tuple.count``)."""
    correct: int

    @property
    def fraction(self) -> float | None:
        """Share of correct rows; ``None`` for an empty bin."""
        return self.correct / self.total if self.total else None


def _confidence_point(row: Mapping[str, Any]) -> tuple[float, bool] | None:
    """``(confidence, correct)`` of a row the calibration charts count, else ``None``.

    Counted: a confidence in [0, 1] and an expected or a predicted value; a row with
    neither says nothing about whether the extractor was right to be confident.
    """
    confidence = defined_number(row.get("confidence"))
    if confidence is None or not 0.0 <= confidence <= 1.0:
        return None
    if row.get("expected") is None and row.get("actual") is None:
        return None
    return confidence, row.get("outcome") in ("TP", "TN")


def confidence_bins(
    rows: Iterable[Mapping[str, Any]], bins: int = CONFIDENCE_BINS
) -> list[ConfidenceBin]:
    """Counted rows (see :func:`_confidence_point`) in ``bins`` equal confidence bins.

    Every bin is returned, empty ones with ``count == 0``. A row counts as correct
    when its outcome is TP or TN.
    """
    edges = [i / bins for i in range(bins + 1)]
    counts = [0] * bins
    correct = [0] * bins
    for row in rows:
        point = _confidence_point(row)
        if point is None:
            continue
        confidence, is_correct = point
        # bisect on the same edges the bins report, so a value equal to an edge lands
        # in the bin that starts there; 1.0 joins the last bin.
        index = min(bisect_right(edges, confidence) - 1, bins - 1)
        counts[index] += 1
        correct[index] += is_correct
    return [ConfidenceBin(edges[i], edges[i + 1], counts[i], correct[i]) for i in range(bins)]


def _report_rows(report: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for document in report.get("documents") or ():
        yield from document.get("rows") or ()


def sample_confidence_rows(
    report: Mapping[str, Any], limit: int = MAX_CONFIDENCE_ROWS
) -> tuple[list[Mapping[str, Any]], int]:
    """The rows the confidence charts count, at most ``limit`` of them; and the total.

    Over the limit, rows are taken at evenly spaced positions: the sample spans every
    document (not just the first ones) and is the same on every run.
    """
    total = sum(1 for row in _report_rows(report) if _confidence_point(row) is not None)
    sample: list[Mapping[str, Any]] = []
    if total == 0:
        return sample, 0
    # Keep eligible row number floor(k * total / limit) for k = 0, 1, ...; with
    # total <= limit that is every row.
    taken = min(total, limit)
    position = 0
    target = 0
    for row in _report_rows(report):
        if _confidence_point(row) is None:
            continue
        if position == target:
            sample.append(row)
            if len(sample) == taken:
                break
            target = len(sample) * total // taken
        position += 1
    return sample, total


def _bin_label(item: ConfidenceBin) -> str:
    # Bin edges are tenths by construction: one decimal names them exactly.
    return f"{item.low:.1f}–{item.high:.1f}"


def reliability_figure(bins: Sequence[ConfidenceBin]) -> go.Figure:
    """Fraction correct per (non-empty) confidence bin against perfect calibration."""
    filled = [item for item in bins if item.total]
    reliability = go.Figure(
        [
            diagonal_trace("perfect calibration"),
            go.Scatter(
                name="fraction correct",
                x=[(item.low + item.high) / 2 for item in filled],
                y=[item.fraction for item in filled],
                mode="lines+markers",
                marker={"size": 9, "color": "#1f77b4"},
                hovertext=[
                    f"confidence {_bin_label(item)}<br>rows: {item.total}<br>"
                    f"correct: {item.correct} ({percent_of(item.correct, item.total)})"
                    for item in filled
                ],
                hoverinfo="text",
            ),
        ]
    )
    return figure_layout(
        reliability,
        title="Confidence vs fraction correct",
        height=420,
        xaxis={"title": {"text": "extraction confidence"}, "range": [0, 1], "dtick": 0.1},
        yaxis={"title": {"text": "fraction correct (TP or TN)"}, "range": [0, 1.05]},
    )


def confidence_histogram(bins: Sequence[ConfidenceBin]) -> go.Figure:
    """Confidence of correct versus wrong rows, one bar pair per bin."""
    labels = [_bin_label(item) for item in bins]
    histogram = go.Figure(
        [
            go.Bar(
                name=name,
                x=labels,
                y=values,
                marker={"color": colour},
                hovertext=[
                    f"confidence {label}<br>{name}: {value} of {item.total}"
                    for label, value, item in zip(labels, values, bins, strict=True)
                ],
                hoverinfo="text",
            )
            for name, colour, values in (
                ("correct", OUTCOME_COLOURS["TP"], [item.correct for item in bins]),
                ("wrong", OUTCOME_COLOURS["FD"], [item.total - item.correct for item in bins]),
            )
        ]
    )
    return figure_layout(
        histogram,
        title="Confidence of correct and wrong rows",
        height=380,
        barmode="group",
        xaxis={"title": {"text": "extraction confidence"}, "type": "category"},
        yaxis={"title": {"text": "rows"}},
    )


def confidence_figures(bins: Sequence[ConfidenceBin]) -> tuple[go.Figure, go.Figure]:
    """A reliability chart (fraction correct per confidence bin) and a histogram of
    confidence for correct versus wrong rows."""
    return reliability_figure(bins), confidence_histogram(bins)


def add_confidence(page: Page, report: Mapping[str, Any]) -> None:
    """The "Confidence vs correctness" section of a fields report: note and charts."""
    page.section("Confidence vs correctness")
    rows, total = sample_confidence_rows(report)
    if total:
        sampled = f", a sample of {len(rows)} of them is shown" if len(rows) < total else ""
        page.add(
            html_note(
                f"{total} rows with a confidence and an expected or predicted value"
                f"{sampled}; TP and TN count as correct."
            )
        )
        reliability, histogram = confidence_figures(confidence_bins(rows))
        page.figure(reliability, "fig-confidence-reliability")
        page.figure(histogram, "fig-confidence-histogram")
    else:
        page.add(f"<p>{html.escape(NO_CONFIDENCE_TEXT)}.</p>")
