"""Dashboard layout defects of issue 18: clipped axis labels, a legend over a title, an
empty pass-rate chart, a crowded heatmap title, "Suite suite", and FAR/FDR shown
where they cannot tell anything. Each test reads the figure layout plotly is given
(the browser-level geometry check is in tests/browser)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import pytest

from docevals_mlflow import PipelineCase, PipelineEvaluator, build_suite_report
from docevals_mlflow.core.diagnostics import BudgetPoint, ReviewBudget
from docevals_mlflow.fields.counts import metrics_from_cells
from docevals_mlflow.reports.confidence_dashboard import (
    confidence_bins,
    confidence_histogram,
    reliability_figure,
)
from docevals_mlflow.reports.dashboard import render_evaluation_dashboard, render_fields_dashboard
from docevals_mlflow.reports.diagnostics_dashboard import review_curve_figure
from docevals_mlflow.reports.evaluation_dashboard import (
    metric_scores_figure,
    stage_contexts_figure,
)
from docevals_mlflow.reports.fields_markdown import render_fields_markdown
from docevals_mlflow.reports.html import figure_layout
from docevals_mlflow.reports.ratings import rate_shown
from docevals_mlflow.reports.split_plot import HEATMAP_TITLE, confusion_figure
from docevals_mlflow.split.evaluate import evaluate_split
from tests.evaluation.conftest import VerdictMetric, stage
from tests.reports.test_dashboard import (
    counts,
    field,
    fields_report,
    figure,
    pipeline_report,
    row,
)
from tests.split.test_seed_metrics import EXPECTED, PREDICTED


def review_budget() -> ReviewBudget:
    return ReviewBudget(
        signal="disagreement",
        items=10,
        errors=4,
        budgets=[
            BudgetPoint(budget=0.1, reviewed=1, errors_caught=1, error_capture=0.25, cutoff=0.9)
        ],
        thresholds=[],
        curve=[index / 100 for index in range(101)],
    )


def confidence_figures() -> list[go.Figure]:
    bins = confidence_bins([row("TP", 0.95), row("FD", 0.35, actual="b"), row("TP", 0.75)])
    return [reliability_figure(bins), confidence_histogram(bins)]


def stacked_figures() -> list[go.Figure]:
    suite = build_suite_report([pipeline_report()], suite_id="nightly")
    scores = metric_scores_figure(suite, list(suite.metrics))
    assert scores is not None
    return [stage_contexts_figure(suite, list(suite.stages)), scores]


# --------------------------------------------------------------------------- margins


@pytest.mark.parametrize("axis", ["xaxis", "yaxis"])
def test_confidence_and_review_axes_get_room_for_their_labels(axis: str) -> None:
    # With margin l=10 and no automargin, the y tick labels and the axis title of the
    # confidence plots were drawn left of the figure and clipped.
    for chart in [*confidence_figures(), review_curve_figure(review_budget(), title="t", unit="u")]:
        assert chart.layout[axis].automargin is True, chart.layout.title.text


def test_an_axis_can_still_turn_automargin_off() -> None:
    (reliability, _) = confidence_figures()
    chart = go.Figure(reliability)
    figure_layout(chart, title="t", height=100, yaxis={"automargin": False})
    assert chart.layout.yaxis.automargin is False
    assert chart.layout.xaxis.automargin is True


# --------------------------------------------------------------------------- legend and title


def test_legends_sit_beside_the_plot_and_titles_above_it() -> None:
    # The legend was a horizontal row at paper y=1.02 anchored at its bottom, in the
    # top margin where plotly also puts the title: they overlapped.
    review = review_curve_figure(review_budget(), title="Errors caught", unit="verdicts")
    for chart in [*stacked_figures(), *confidence_figures(), review]:
        title, legend = chart.layout.title, chart.layout.legend
        assert (legend.x >= 1, legend.xanchor) == (True, "left"), title.text
        assert (legend.y <= 1, legend.yanchor) == (True, "top"), title.text
        # The title is pushed above the plot area, its tick labels and axis titles.
        assert title.automargin is True
        assert (title.yref, title.y, title.yanchor) == ("paper", 1, "bottom")


def test_heatmap_title_is_short_and_alone_above_the_plot() -> None:
    chart, _ = confusion_figure(evaluate_split(EXPECTED, PREDICTED).classes.confusion)
    title = chart.layout.title
    assert title.text == HEATMAP_TITLE == "Page classes: expected vs predicted"
    assert title.automargin is True
    # The predicted classes were a top-side axis, sharing the band above the plot
    # with a long title.
    assert chart.layout.xaxis.side == "bottom"
    assert chart.layout.xaxis.title.text == "predicted class (columns)"
    assert chart.layout.yaxis.title.text == "expected class (rows)"


# --------------------------------------------------------------------------- judge page


def judge_report() -> Any:
    """A judge whose verdicts are uncertain or failing: pass rate 0 everywhere."""
    metric = VerdictMetric({"a": "uncertain", "b": "fail"}, name="judge-panel")
    return PipelineEvaluator(default_metrics=[metric]).evaluate(
        PipelineCase(pipeline_id="p", stages=[stage("a"), stage("b")])
    )


def test_judge_without_a_pass_gets_a_chart_with_bars() -> None:
    page = render_evaluation_dashboard(judge_report())
    # The old chart drew pass rates: all 0, so no bar at all.
    assert 'id="fig-metric-pass-rates"' not in page
    traces, layout = figure(page, "fig-metric-verdicts")
    assert layout["barmode"] == "stack"
    by_verdict = {trace["name"]: trace["x"] for trace in traces}
    assert by_verdict == {"pass": [0], "fail": [1], "uncertain": [1], "not_applicable": [0]}
    assert sum(sum(values) for values in by_verdict.values()) > 0
    assert "pass rate 0.0%" in traces[0]["hovertext"][0]


# --------------------------------------------------------------------------- titles


def test_suite_called_suite_is_not_titled_suite_suite() -> None:
    suite = build_suite_report([pipeline_report()], suite_id="suite")
    page = render_evaluation_dashboard(suite)
    assert "Suite suite" not in page
    assert "<title>Suite evaluation dashboard</title>" in page
    assert '<div class="label">Suite</div><div class="value">suite</div>' in page


def test_pipeline_and_case_pages_name_the_kind_and_card_the_id() -> None:
    page = render_evaluation_dashboard(pipeline_report())
    assert "<h1>Pipeline evaluation dashboard</h1>" in page
    assert '<div class="label">Pipeline</div><div class="value">p-1</div>' in page


# --------------------------------------------------------------------------- FAR and FDR


def _card_labels(page: str) -> list[str]:
    head = page[page.index('<div class="cards">') :]
    head = head[: head.index("</div></div></div>") + 18]
    return [part.split("<", 1)[0] for part in head.split('<div class="label">')[1:]]


def _report(cells: dict[str, int]) -> dict[str, Any]:
    report = fields_report([field("$.a", cells)])
    report["overall"]["counts"] = cells
    report["overall"]["metrics"] = metrics_from_cells(**cells)
    return report


def test_far_card_needs_a_leaf_that_stayed_empty() -> None:
    # TN 0 and FA 3: FAR = 3 / 3 = 1.0 whatever the extractor did, shown as a
    # red "Poor" before; now the false alarms are counted instead.
    page = render_fields_dashboard(_report(counts(tp=5, fa=3, fd=1)))
    labels = _card_labels(page)
    assert "FAR" not in labels
    assert labels.count("False alarms") == 1
    assert '<div class="label">False alarms</div><div class="value">3</div>' in page
    assert "FDR" in labels

    page = render_fields_dashboard(_report(counts(tp=5, fa=1, fd=1, tn=3)))
    labels = _card_labels(page)
    assert "FAR" in labels
    assert "False alarms" not in labels
    assert '<div class="label">FAR</div><div class="value">0.2500</div>' in page


def test_fdr_card_needs_a_prediction_where_a_value_was_due() -> None:
    labels = _card_labels(render_fields_dashboard(_report(counts(fa=2, fn=4, tn=1))))
    assert "FDR" not in labels
    assert "FAR" in labels


def test_nothing_expected_empty_shows_no_far_and_no_false_alarm_card() -> None:
    labels = _card_labels(render_fields_dashboard(_report(counts(tp=5, fd=1))))
    assert "FAR" not in labels
    assert "False alarms" not in labels


def test_markdown_summary_does_not_rate_a_far_fixed_by_construction() -> None:
    text = render_fields_markdown(_report(counts(tp=5, fa=3, fd=1)))
    (gauge,) = [line for line in text.splitlines() if "**False alarm rate (FAR)**" in line]
    assert "🔴" not in gauge
    assert "Poor" not in gauge
    assert "not rated" in gauge
    assert "3 false alarm(s)" in gauge
    (table_row,) = [line for line in text.splitlines() if line.startswith("| False alarm rate")]
    assert "Poor" not in table_row
    assert "not rated" in table_row
    rated = render_fields_markdown(_report(counts(tp=5, fa=1, fd=1, tn=9)))
    assert "- **False alarm rate (FAR)**: 🟢 0.1000" in rated


@pytest.mark.parametrize(
    ("metric", "cells", "shown"),
    [
        ("far", {"fa": 2}, False),
        ("far", {"fa": 2, "tn": 1}, True),
        ("far", {}, False),
        ("fdr", {"fa": 2, "fn": 1}, False),
        ("fdr", {"fd": 1}, True),
        ("f1", {}, True),
    ],
)
def test_rate_shown_rule(metric: str, cells: dict[str, int], shown: bool) -> None:
    assert rate_shown(metric, cells) is shown


def test_field_f1_bars_carry_the_interval_as_error_bars() -> None:
    from docevals_mlflow.reports.fields_dashboard import field_f1_figure

    def entry(template: str, tp: int, fn: int, ci: Any = None) -> dict[str, Any]:
        cells = counts(tp=tp, fn=fn)
        found = {"ci": {"f1": ci}} if ci else {}
        return {"template": template, "method": "EXACT", "counts": cells,
                "metrics": metrics_from_cells(**cells), **found}  # fmt: skip

    interval = {"low": 0.5, "high": 0.9, "documents": 30, "confidence": 0.95}
    figure = field_f1_figure([entry("$.a", 3, 1, interval), entry("$.b", 1, 1)])
    bars = figure.data[0]
    f1 = 2 * 3 / (2 * 3 + 1)
    assert bars.error_x.array == pytest.approx((0.9 - f1, None), nan_ok=True)
    assert bars.error_x.arrayminus[0] == pytest.approx(f1 - 0.5)
    assert "95% interval: [0.5000, 0.9000], 30 documents" in bars.hovertext[0]
    # Reports without intervals draw as before: no error bars at all.
    plain = field_f1_figure([entry("$.a", 3, 1), entry("$.b", 1, 1)])
    assert plain.data[0].error_x.array is None
