"""Markdown rendering of a suite report: verdicts, stages, metrics, diagnostics,
producers and usage."""

from __future__ import annotations

from docevals_mlflow.core.formatting import count_text, metric_text, money_text, percent_text
from docevals_mlflow.core.reports import SuiteReport
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
