"""Dashboard parts of the diagnostics: review-budget curves, a per-field calibration
table and the failure-propagation Sankey (:mod:`docevals_mlflow.reports.dashboard`
puts them on its pages)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from docevals_mlflow.core.diagnostics import (
    CascadeEdge,
    ConfidenceCalibration,
    DisagreementBudget,
    ReviewBudget,
)
from docevals_mlflow.core.formatting import (
    count_text,
    level_text,
    metric_text,
    percent_text,
    score_text,
)
from docevals_mlflow.diagnostics.cascades import cascade_sankey
from docevals_mlflow.reports.dashboard_figures import diagonal_trace
from docevals_mlflow.reports.html import Page, figure_layout, html_cards, html_note, html_table

CURVE_COLOUR = "#1f77b4"
MAX_TABLE_ROWS = 100
"""Fields (or panel verdicts) per table; the JSON report has all of them."""


def review_curve_figure(review: ReviewBudget, *, title: str, unit: str) -> go.Figure:
    """Error capture against review budget, with random review (the diagonal) for
    reference and the reported budgets marked."""
    steps = [index / (len(review.curve) - 1) for index in range(len(review.curve))]
    order = "least confident" if review.signal == "confidence" else "most disputed"
    figure = go.Figure(
        [
            diagonal_trace("random order"),
            go.Scatter(
                name=f"{order} first",
                x=steps,
                y=review.curve,
                mode="lines",
                line={"color": CURVE_COLOUR},
                hovertemplate="review %{x:.0%} of " + unit + ": %{y:.1%} of errors<extra></extra>",
            ),
            go.Scatter(
                name="budgets",
                x=[point.budget for point in review.budgets],
                y=[point.error_capture for point in review.budgets],
                mode="markers",
                marker={"size": 10, "color": CURVE_COLOUR},
                hovertext=[
                    f"{level_text(point.budget)} budget: {point.reviewed} {unit}, "
                    f"{count_text(point.errors_caught)} of {review.errors} errors"
                    for point in review.budgets
                ],
                hoverinfo="text",
            ),
        ]
    )
    return figure_layout(
        figure,
        title=title,
        height=420,
        xaxis={
            "title": {"text": f"share of {unit} reviewed"},
            "range": [0, 1],
            "tickformat": ".0%",
        },
        yaxis={
            "title": {"text": "share of errors caught"},
            "range": [0, 1.05],
            "tickformat": ".0%",
        },
    )


def add_calibration(page: Page, calibration: ConfidenceCalibration | Mapping[str, Any]) -> None:
    """Calibration cards, the review-budget curve and the per-field table."""
    if not isinstance(calibration, ConfidenceCalibration):
        calibration = ConfidenceCalibration.model_validate(calibration)
    overall = calibration.overall
    page.section("Calibration and review budget")
    cards = [
        ("Fields with confidence", str(overall.n)),
        ("Wrong", str(overall.errors)),
        ("AUROC", metric_text(overall.auroc)),
        ("Brier", metric_text(overall.brier)),
        ("ECE", metric_text(overall.ece)),
    ]
    cards += [
        (f"Errors caught at {level_text(point.budget)}", percent_text(point.error_capture))
        for point in calibration.review.budgets
    ]
    page.add(html_cards(cards))
    page.add("".join(html_note(note) for note in calibration.notes))
    if calibration.review.curve:
        page.figure(
            review_curve_figure(
                calibration.review,
                title="Errors caught by reviewing the least confident",
                unit="fields",
            ),
            "fig-review-budget",
        )
    ranked = sorted(
        calibration.fields.items(),
        key=lambda item: (item[1].auroc is None, item[1].auroc or 0.0, item[0]),
    )[:MAX_TABLE_ROWS]
    if ranked:
        page.add(
            html_table(
                ["Field", "Fields", "Wrong", "Accuracy", "AUROC", "Brier", "ECE"],
                (
                    [
                        template,
                        str(stats.n),
                        str(stats.errors),
                        metric_text(stats.accuracy),
                        metric_text(stats.auroc),
                        metric_text(stats.brier),
                        metric_text(stats.ece),
                    ]
                    for template, stats in ranked
                ),
                numeric=6,
            )
        )


def add_cascades(page: Page, edges: Sequence[CascadeEdge] | None) -> None:
    """The failure-propagation Sankey, when some dependency carried co-failures."""
    flowing = [edge for edge in edges or () if edge.co_failures]
    if not flowing:
        return
    page.section("Failure propagation")
    page.add(
        html_note(
            "Links carry pipelines where both stages failed: red where a rerun on corrected "
            "input passed (caused upstream), purple where it still failed (independent), grey "
            "where no rerun decided it."
        )
    )
    page.figure(cascade_sankey(flowing), "fig-failure-cascades")


def add_disagreement(page: Page, budget: DisagreementBudget | None) -> None:
    """Panel disagreement as a review signal: the budget curve and the first items."""
    if budget is None:
        return
    page.section("Panel disagreement as a review signal")
    truth = "human labels" if budget.truth == "human_labels" else "ground-truth metrics"
    page.add(
        html_note(
            f"{budget.review.errors} of {budget.review.items} panel verdicts differ from the "
            f"{truth}; reviewing the most disputed first."
        )
    )
    if budget.review.curve:
        page.figure(
            review_curve_figure(
                budget.review, title="Errors caught by reviewing the most disputed", unit="verdicts"
            ),
            "fig-disagreement-budget",
        )
    page.add(
        html_table(
            ["Case", "Stage", "Panel", "Panel verdict", "Truth", "Disagreement"],
            (
                [
                    item.case_id,
                    item.stage_id,
                    item.metric,
                    item.panel_verdict,
                    item.truth,
                    score_text(item.disagreement),
                ]
                for item in budget.order[:MAX_TABLE_ROWS]
            ),
            numeric=1,
        )
    )
