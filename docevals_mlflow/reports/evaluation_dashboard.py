"""The offline HTML dashboard (plotly) of a case, pipeline or suite report.

One self-contained page (see :mod:`docevals_mlflow.reports.html`). A case or
pipeline report is first summarised as a suite, so every kind gets the same charts:
verdicts and failure contexts per stage, the failure cascades and the panel
disagreement budget, pass rate and mean scores per metric.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from docevals_mlflow.core.formatting import level_text, metric_text, percent_text
from docevals_mlflow.core.literals import COUNTERFACTUAL_CONTEXTS, FAILURE_CONTEXTS, VERDICTS
from docevals_mlflow.core.reports import (
    EvaluationReport,
    PipelineEvaluationReport,
    SuiteReport,
)
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.reports import diagnostics_dashboard
from docevals_mlflow.reports.dashboard_figures import (
    CONTEXT_COLOURS,
    MAX_BARS,
    VERDICT_COLOURS,
    bar_height,
    stacked_bars,
)
from docevals_mlflow.reports.html import (
    Page,
    axis_labels,
    category_axis,
    figure_layout,
    html_cards,
    html_note,
    html_table,
)

AnyEvaluationReport = EvaluationReport | PipelineEvaluationReport | SuiteReport


def _stage_table(stages: Sequence[EvaluationReport]) -> str:
    return html_table(
        ["Stage", "Operation", "Verdict", "Failure context", "Failed upstream", "Review"],
        (
            [
                stage.stage_id,
                stage.operation,
                stage.verdict,
                stage.failure_context,
                ", ".join(name for name, v in stage.upstream_verdicts.items() if v == "fail")
                or "none",
                "yes" if stage.requires_human_review else "no",
            ]
            for stage in stages
        ),
        numeric=0,
    )


def stage_verdicts_figure(suite: SuiteReport, stage_ids: Sequence[str]) -> go.Figure:
    """Stacked verdict counts per stage."""
    return stacked_bars(
        axis_labels(stage_ids),
        [
            (
                verdict,
                VERDICT_COLOURS[verdict],
                [suite.stages[stage].verdict_counts.get(verdict, 0) for stage in stage_ids],
            )
            for verdict in VERDICTS
        ],
        [html.escape(stage) for stage in stage_ids],
        title="Verdicts per stage",
        axis_title="stage evaluations",
    )


def stage_pass_rates_figure(suite: SuiteReport, stage_ids: Sequence[str]) -> go.Figure | None:
    """Pass rate per stage with its interval as error bars (the cases as clusters);
    ``None`` when no stage has an interval (one case, or a report from before
    intervals)."""
    intervals = [suite.stages[stage].ci.get("pass_rate") for stage in stage_ids]
    if not any(found is not None and found.low is not None for found in intervals):
        return None
    labels = axis_labels(stage_ids)
    rates = [suite.stages[stage].pass_rate for stage in stage_ids]
    lows = [found.low if found and found.low is not None else rate
            for found, rate in zip(intervals, rates, strict=True)]  # fmt: skip
    highs = [found.high if found and found.high is not None else rate
             for found, rate in zip(intervals, rates, strict=True)]  # fmt: skip
    figure = go.Figure(
        go.Bar(
            x=rates,
            y=labels,
            orientation="h",
            marker_color=VERDICT_COLOURS["pass"],
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [high - rate for high, rate in zip(highs, rates, strict=True)],
                "arrayminus": [rate - low for low, rate in zip(lows, rates, strict=True)],
            },
            customdata=[
                f"{html.escape(stage)}: {percent_text(rate)} [{percent_text(low)}, "
                f"{percent_text(high)}], {found.cases if found else 0} cases"
                for stage, rate, low, high, found in zip(
                    stage_ids, rates, lows, highs, intervals, strict=True
                )
            ],
            hovertemplate="%{customdata}<extra></extra>",
        )
    )
    level = level_text(next(found for found in intervals if found).confidence)
    return figure_layout(
        figure,
        title=f"Pass rate per stage ({level} interval, the cases as clusters)",
        height=bar_height(len(stage_ids)),
        xaxis={"range": [0, 1], "tickformat": ".0%", "title": "pass rate"},
        yaxis=category_axis(labels),
        showlegend=False,
    )


def stage_contexts_figure(suite: SuiteReport, stage_ids: Sequence[str]) -> go.Figure:
    """Stacked failure-context counts per stage."""
    return stacked_bars(
        axis_labels(stage_ids),
        [
            (
                context,
                CONTEXT_COLOURS[context],
                [suite.stages[stage].failure_contexts.get(context, 0) for stage in stage_ids],
            )
            for context in (
                *FAILURE_CONTEXTS,
                # Counterfactual refinements, where reruns made them.
                *(
                    context
                    for context in COUNTERFACTUAL_CONTEXTS
                    if any(suite.stages[stage].failure_contexts.get(context) for stage in stage_ids)
                ),
            )
        ],
        [html.escape(stage) for stage in stage_ids],
        title="Failure context per stage",
        axis_title="stage evaluations",
    )


def metric_verdicts_figure(suite: SuiteReport, names: Sequence[str]) -> go.Figure:
    """Stacked verdict counts per metric; the pass rate, errors and review rate are in
    the hover. Counts rather than pass-rate bars: a judge whose verdicts are all
    uncertain or failing has a pass rate of 0 everywhere, which drew as an empty chart.
    """
    summaries = [suite.metrics[name] for name in names]
    return stacked_bars(
        axis_labels(names),
        [
            (
                verdict,
                VERDICT_COLOURS[verdict],
                [summary.verdict_counts.get(verdict, 0) for summary in summaries],
            )
            for verdict in VERDICTS
        ],
        [html.escape(name) for name in names],
        title="Verdicts per metric",
        axis_title="metric results",
        details=[
            f"pass rate {percent_text(summary.pass_rate)} · errors {summary.error_count} · "
            f"review {percent_text(summary.human_review_rate)}"
            for summary in summaries
        ],
    )


def metric_scores_figure(suite: SuiteReport, names: Sequence[str]) -> go.Figure | None:
    """Grouped bars of each metric's mean scores; ``None`` when no metric has a score."""
    score_names = sorted({score for name in names for score in suite.metrics[name].score_means})
    if not score_names:
        return None
    labels = axis_labels(names)
    figure = go.Figure(
        [
            go.Bar(
                name=html.escape(score),
                # None where a metric lacks this score: no bar rather than a false 0.
                x=[suite.metrics[name].score_means.get(score) for name in names],
                y=labels,
                orientation="h",
                hovertext=[
                    f"<b>{html.escape(name)}</b><br>mean {html.escape(score)}: "
                    f"{metric_text(suite.metrics[name].score_means.get(score))}"
                    for name in names
                ],
                hoverinfo="text",
            )
            for score in score_names
        ]
    )
    return figure_layout(
        figure,
        title="Mean scores per metric",
        height=bar_height(len(names) * max(1, min(len(score_names), 4))),
        barmode="group",
        xaxis={"title": {"text": "mean score"}, "automargin": True},
        yaxis=category_axis(labels),
    )


def _capped(names: Sequence[str], what: str) -> tuple[list[str], str]:
    shown = list(names[:MAX_BARS])
    note = (
        f"Showing the first {len(shown)} of {len(names)} {what}." if len(names) > MAX_BARS else ""
    )
    return shown, note


def _as_suite(
    report: AnyEvaluationReport,
) -> tuple[SuiteReport, str, list[tuple[str, str]], list[EvaluationReport]]:
    """The suite summary of ``report``, its page title, headline cards and stages.

    Titles name the kind and cards the id ("Suite suite" was the title of a suite
    whose id is ``suite``).
    """
    if isinstance(report, SuiteReport):
        return report, "Suite evaluation dashboard", [("Suite", report.suite_id)], []
    if isinstance(report, PipelineEvaluationReport):
        return (
            build_suite_report([report], suite_id=report.pipeline_id),
            "Pipeline evaluation dashboard",
            [("Pipeline", report.pipeline_id), ("Combined verdict", report.verdict)],
            report.stage_reports,
        )
    return (
        build_suite_report([report], suite_id=report.case_id),
        "Case evaluation dashboard",
        [("Case", report.case_id), ("Stage", report.stage_id), ("Verdict", report.verdict)],
        [report],
    )


def _stage_sections(page: Page, suite: SuiteReport) -> None:
    """Verdict and failure-context bars per stage (capped), then the diagnostics."""
    stage_ids, note = _capped(list(suite.stages), "stages")
    page.section("Verdicts per stage")
    if note:
        page.add(html_note(note))
    page.figure(stage_verdicts_figure(suite, stage_ids), "fig-stage-verdicts")
    rates = stage_pass_rates_figure(suite, stage_ids)
    if rates is not None:
        page.figure(rates, "fig-stage-pass-rates")
    page.section("Failure context per stage")
    page.add(
        html_note(
            "current_stage: failed with upstream passing · upstream: passed, an upstream "
            "stage failed · upstream_or_combined: failed along with upstream · "
            "indeterminate: an uncertain or not-applicable result prevents attribution · "
            "caused_by_upstream / independent_failure: rerun on corrected upstream output, "
            "the stage passed / still failed."
        )
    )
    page.figure(stage_contexts_figure(suite, stage_ids), "fig-stage-contexts")
    diagnostics_dashboard.add_cascades(page, suite.cascades)
    diagnostics_dashboard.add_disagreement(page, suite.disagreement)


def _metric_sections(page: Page, suite: SuiteReport) -> None:
    """Pass rate and mean-score bars per metric (capped)."""
    page.section("Metrics")
    names, note = _capped(list(suite.metrics), "metrics")
    if not names:
        page.add(html_note("No metric results."))
        return
    if note:
        page.add(html_note(note))
    page.figure(metric_verdicts_figure(suite, names), "fig-metric-verdicts")
    scores = metric_scores_figure(suite, names)
    if scores is None:
        page.add(html_note("No metric reported a score."))
    else:
        page.figure(scores, "fig-metric-scores")


def render_evaluation_dashboard(report: AnyEvaluationReport) -> str:
    """A self-contained HTML dashboard of a case, pipeline or suite report.

    A case or pipeline report is first summarised with
    :func:`docevals_mlflow.evaluation.suite.build_suite_report`, so every kind gets
    the same charts: verdicts and failure contexts per stage, pass rate and mean
    scores per metric. Case and pipeline pages add a stage table.
    """
    suite, title, headline, stages = _as_suite(report)
    page = Page(title)
    page.add(
        html_cards(
            [
                *headline,
                ("Cases", str(suite.case_count)),
                ("Stages evaluated", str(suite.stage_count)),
                *((verdict, str(suite.verdict_counts.get(verdict, 0))) for verdict in VERDICTS),
                ("Human review", percent_text(suite.human_review_rate)),
            ]
        )
    )
    if stages:
        page.section("Stages")
        page.add(_stage_table(stages))
    _stage_sections(page, suite)
    _metric_sections(page, suite)
    # Pages are written to files and MLflow: no registered secret may be in one.
    return redact_text(page.render(f"docevals-mlflow {report.package_version}"))
