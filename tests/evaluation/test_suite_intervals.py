"""Intervals of a suite's pass rates: a pipeline is one case (cluster), in the report,
its Markdown, the dashboard and the MLflow run."""

from __future__ import annotations

from typing import Any

from docevals_mlflow import MetricResult, PipelineCase, PipelineEvaluator, build_suite_report
from docevals_mlflow.core.reports import SuiteReport
from docevals_mlflow.core.statistics.rate_intervals import rate_interval, wilson_interval
from docevals_mlflow.reports.evaluation_dashboard import render_evaluation_dashboard
from docevals_mlflow.reports.suite_markdown import render_suite_markdown
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.evaluation_layout import layout_evaluation
from tests.evaluation.conftest import stage

# Per pipeline: the verdicts of stages a and b (a fails in 3 of 12, b in 5).
PLAN = [("pass", "pass")] * 6 + [("pass", "fail")] * 3 + [("fail", "fail")] * 2
PLAN += [("fail", "pass")]


class PlannedMetric:
    name = "planned"

    def evaluate(self, case: Any) -> MetricResult:
        return MetricResult(
            name=self.name, basis="fixed", verdict=case.metadata["verdicts"][case.stage_id]
        )


def suite() -> SuiteReport:
    reports = []
    for index, (a, b) in enumerate(PLAN):
        verdicts = {"a": a, "b": b}
        reports.append(
            PipelineEvaluator(default_metrics=[PlannedMetric()]).evaluate(
                PipelineCase(
                    pipeline_id=f"p{index}",
                    stages=[
                        stage("a", metadata={"verdicts": verdicts}),
                        stage("b", metadata={"verdicts": verdicts}),
                    ],
                )
            )
        )
    return build_suite_report(reports, suite_id="nightly")


def test_rates_get_intervals_with_pipelines_as_cases() -> None:
    report = suite()
    # Stage a: one verdict per pipeline, 9 of 12 pass: the plain Wilson interval.
    a = report.stages["a"].ci["pass_rate"]
    assert (a.low, a.high) == wilson_interval(9, 12)
    assert (a.cases, a.observations, a.method) == (12, 12, "wilson")
    # The combined verdict: 6 of 12 pipelines pass.
    case = report.ci["case_pass_rate"]
    assert (case.low, case.high) == wilson_interval(6, 12)
    # Over every stage (16 of 24 pass): each pipeline's two stages count together.
    per_pipeline = [(a == "pass") + (b == "pass") for a, b in PLAN]
    expected = rate_interval(per_pipeline, [2] * 12)
    overall = report.ci["stage_pass_rate"]
    assert (overall.low, overall.high) == (expected.low, expected.high)
    assert (overall.cases, overall.observations) == (12, 24)
    # Pipelines that fail both stages or neither: wider than 24 independent verdicts.
    assert overall.low is not None
    assert overall.high is not None
    assert overall.high - overall.low > wilson_interval(16, 24)[1] - wilson_interval(16, 24)[0]
    metric = report.metrics["planned"].ci["pass_rate"]
    assert (metric.low, metric.high) == (overall.low, overall.high)


def test_reports_from_before_intervals_still_load() -> None:
    data = suite().model_dump(mode="json")
    del data["ci"]
    for summary in (*data["stages"].values(), *data["metrics"].values()):
        del summary["ci"]
    old = SuiteReport.model_validate(data)
    assert old.ci == {}
    assert "## Intervals" not in render_suite_markdown(old)
    assert "fig-stage-pass-rates" not in render_evaluation_dashboard(old)
    again = SuiteReport.model_validate_json(suite().model_dump_json())
    assert again == suite()


def test_markdown_dashboard_and_run_show_the_intervals() -> None:
    report = suite()
    markdown = render_suite_markdown(report)
    assert "## Intervals (95%, the cases as clusters)" in markdown
    assert "| case pass rate | 50.0% [25.4%, 74.6%] | 12 | 12 |" in markdown
    assert "| stage `a` pass rate | 75.0% [46.8%, 91.1%] | 12 | 12 |" in markdown
    dashboard = render_evaluation_dashboard(report)
    assert "fig-stage-pass-rates" in dashboard
    assert "arrayminus" in dashboard
    writer = BundleWriter(run_name="suite")
    layout_evaluation(writer, report, markdown=markdown, dashboard=dashboard)
    metrics = writer.bundle.metrics
    case = report.ci["case_pass_rate"]
    assert metrics["Summary/case_pass_rate_ci_low"] == case.low
    assert metrics["Summary/case_pass_rate_ci_high"] == case.high
    assert "Summary/human_review_rate_ci_low" in metrics
    # Only headline rates get interval metrics; the rest are in report/report.json.
    assert [key for key in metrics if "ci_" in key and not key.startswith("Summary/")] == []
