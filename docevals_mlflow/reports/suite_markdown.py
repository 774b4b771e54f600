"""Markdown rendering of a suite report: verdicts, stages, metrics, diagnostics,
producers and usage."""

from __future__ import annotations

from docevals_mlflow.core.formatting import (
    count_text,
    level_text,
    metric_text,
    money_text,
    percent_text,
)
from docevals_mlflow.core.reports import RateInterval, SuiteReport
from docevals_mlflow.reports.diagnostics_markdown import suite_diagnostics_sections
from docevals_mlflow.reports.markdown import table


def _usage_text(name: str, value: float) -> str:
    # Tokens and requests are counts (summed as floats); a cost is money, shown to the
    # cent's hundredth as the CLI prints it, not as a metric.
    return money_text(value) if name == "cost_usd" else count_text(value)


def _stage_table(report: SuiteReport) -> list[str]:
    return table(
        ["Stage", "Count", "Pass", "Fail", "Uncertain", "N/A", "Failure contexts", "Review"],
        (
            (
                stage_id,
                summary.count,
                percent_text(summary.pass_rate),
                percent_text(summary.fail_rate),
                percent_text(summary.uncertain_rate),
                percent_text(summary.not_applicable_rate),
                ", ".join(
                    f"{context}: {count}"
                    for context, count in summary.failure_contexts.items()
                    if count and context != "none"
                )
                or "none",
                percent_text(summary.human_review_rate),
            )
            for stage_id, summary in report.stages.items()
        ),
    )


def _metric_table(report: SuiteReport) -> list[str]:
    return table(
        ["Metric", "Count", "Pass rate", "Review rate", "Errors", "Mean scores"],
        (
            (
                name,
                summary.count,
                percent_text(summary.pass_rate),
                percent_text(summary.human_review_rate),
                summary.error_count,
                ", ".join(
                    f"{score}={metric_text(value)}" for score, value in summary.score_means.items()
                )
                or "n/a",
            )
            for name, summary in report.metrics.items()
        ),
    )


_SUITE_RATES = {
    "case_pass_rate": "case pass rate",
    "case_fail_rate": "case fail rate",
    "stage_pass_rate": "stage pass rate (all stages)",
    "human_review_rate": "human review rate (all stages)",
}


def rate_interval_text(value: float, interval: RateInterval | None) -> str:
    """``80.0% [70.1%, 87.2%]``, or the value alone without an interval."""
    if interval is None or interval.low is None or interval.high is None:
        return percent_text(value)
    return f"{percent_text(value)} [{percent_text(interval.low)}, {percent_text(interval.high)}]"


def _interval_rows(report: SuiteReport) -> list[tuple[str, str, str, str]]:
    counts = report.case_verdict_counts
    cases = report.case_count or 1
    values = {
        "case_pass_rate": counts.get("pass", 0) / cases,
        "case_fail_rate": counts.get("fail", 0) / cases,
        "stage_pass_rate": report.verdict_counts.get("pass", 0) / (report.stage_count or 1),
        "human_review_rate": report.human_review_rate,
    }
    scopes = [(label, values[name], report.ci.get(name)) for name, label in _SUITE_RATES.items()]
    scopes += [
        (f"stage `{stage_id}` pass rate", summary.pass_rate, summary.ci.get("pass_rate"))
        for stage_id, summary in report.stages.items()
    ]
    scopes += [
        (f"metric `{name}` pass rate", summary.pass_rate, summary.ci.get("pass_rate"))
        for name, summary in report.metrics.items()
    ]
    return [
        (
            label,
            rate_interval_text(value, interval),
            str(interval.cases) if interval else "",
            str(interval.observations) if interval else "",
        )
        for label, value, interval in scopes
    ]


def _interval_section(report: SuiteReport) -> list[str]:
    """The rates with their intervals; nothing for reports from before intervals."""
    if not report.ci:
        return []
    level = level_text(next(iter(report.ci.values())).confidence)
    return [
        "",
        f"## Intervals ({level}, the cases as clusters)",
        "",
        "A pipeline is one case: its stages are not independent. Wilson intervals, at "
        "the effective number of observations where a case holds several.",
        "",
        *table(["Rate", "Value [interval]", "Cases", "Observations"], _interval_rows(report)),
    ]


def render_suite_markdown(report: SuiteReport) -> str:
    """Markdown for a suite report."""
    lines = [
        f"# Suite `{report.suite_id}`",
        "",
        f"**Cases:** {report.case_count} · **Stages evaluated:** {report.stage_count} · "
        f"**Human review rate:** {percent_text(report.human_review_rate)}",
        "",
        "## Verdicts",
        "",
    ]
    lines += table(
        ["", *report.verdict_counts.keys()],
        [
            ("cases", *report.case_verdict_counts.values()),
            ("stages", *report.verdict_counts.values()),
        ],
    )
    lines += ["", "## Stages", "", *_stage_table(report)]
    lines += ["", "## Metrics", "", *_metric_table(report)]
    lines += _interval_section(report)
    lines += suite_diagnostics_sections(report)
    lines += ["", "## Producers", ""]
    lines += table(["Producer", "Stages"], report.producers.items())
    if report.usage:
        lines += ["", "## Usage", ""]
        lines += table(
            ["What", "Total"],
            ((name, _usage_text(name, value)) for name, value in report.usage.items()),
        )
    lines += ["", f"*docevals-mlflow {report.package_version}*"]
    return "\n".join(lines) + "\n"
