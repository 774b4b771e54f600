"""The end of ``evaluate-case``, ``evaluate-pipeline`` and ``suite``: the report
written, its line printed, the run logged, the judges' usage, and the exit code."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from docevals_mlflow.cli.common import EXIT_BELOW_THRESHOLD, EXIT_OK, FAILING
from docevals_mlflow.cli.judging import stage_reports, usage_line
from docevals_mlflow.cli.options import write_dashboard
from docevals_mlflow.cli.run_logging import log_evaluation
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport
from docevals_mlflow.reports.files import AnyReport, write_report


def summary_line(report: AnyReport) -> str:
    """The one-line result of a case, pipeline or suite evaluation."""
    if isinstance(report, EvaluationReport):
        return f"verdict: {report.verdict} (failure context: {report.failure_context})"
    if isinstance(report, PipelineEvaluationReport):
        stages = ", ".join(
            f"{s.stage_id}={s.verdict}/{s.failure_context}" for s in report.stage_reports
        )
        return f"verdict: {report.verdict} ({stages})"
    counts = ", ".join(
        f"{verdict}={count}" for verdict, count in report.case_verdict_counts.items()
    )
    return f"cases: {report.case_count} ({counts})"


def _dashboard(report: AnyReport) -> str:
    from docevals_mlflow.reports.dashboard import render_evaluation_dashboard

    return render_evaluation_dashboard(report)


def finish_report(
    args: argparse.Namespace,
    report: AnyReport,
    *,
    stages: list[EvaluationReport] | None = None,
) -> int:
    """Write ``report`` (``--output``, ``--markdown``, ``--dashboard``), print its line,
    log it, print the judges' usage; exit 1 when its verdict reaches ``--fail-on``."""
    from docevals_mlflow.cli.judge_repeats import repeat_figures_of, repeat_lines

    write_report(report, args.output, args.markdown)
    print(summary_line(report))
    repeats = repeat_figures_of(report, stages)
    for line in repeat_lines(repeats):
        print(line)
    print(f"report: {args.output}" + (f" (Markdown: {args.markdown})" if args.markdown else ""))
    dashboard = write_dashboard(args, lambda: _dashboard(report))

    def assemble(options: Any) -> Any:
        from docevals_mlflow.tracking.assembly import assemble_evaluation
        from docevals_mlflow.tracking.repeat_runs import repeat_figure_metrics

        return assemble_evaluation(
            report,
            options,
            stage_reports=stages,
            dashboard=dashboard,
            extend=None if repeats is None else repeat_figure_metrics(repeats),
        )

    log_evaluation(args, assemble, default_run_name=args.output.stem, anchor=args.output)
    # Last, so that it is the line to look at after a run that cost money.
    usage = usage_line(stage_reports(report, stages))
    if usage is not None:
        print(usage)
    verdict = getattr(report, "verdict", None)
    if verdict in FAILING.get(getattr(args, "fail_on", "never"), set()):
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK


def gate_reports(
    args: argparse.Namespace,
    reports: Sequence[EvaluationReport | PipelineEvaluationReport],
    code: int,
) -> int:
    """Exit 1 when any case's verdict reaches ``--fail-on`` (a suite has no verdict)."""
    if any(report.verdict in FAILING.get(args.fail_on, set()) for report in reports):
        return EXIT_BELOW_THRESHOLD
    return code
