"""Logging evaluations from Python: one call per evaluation, one MLflow run each."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.fields.batch import BatchComparison
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.layout import fields_dataset, layout_evaluation, layout_fields
from docevals_mlflow.tracking.runs import LoggedRun, log_writer


def log_field_comparison(
    comparison: BatchComparison | Mapping[str, Any],
    *,
    ground_truth: str | os.PathLike[str] | None = None,
    verdict: str | None = None,
    run_name: str | None = None,
    experiment: str | None = None,
    tracking_uri: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
    keep_bundle_at: str | os.PathLike[str] | None = None,
) -> LoggedRun:
    """Log a field comparison (a :class:`BatchComparison` or its report dict) as a run.

    ``ground_truth`` (the expected JSONL file or folder) is logged as the run's
    ``ground_truth`` input with its content digest. Extra ``params`` (say, the prompt
    version) and ``tags`` are added to the standard layout. If logging fails and
    ``keep_bundle_at`` is given, the run bundle is kept there for ``docevals log`` (or
    beside it, ``<name>-2``, when a bundle not yet logged is there; the raised error's
    ``kept_bundle`` says where).
    """
    from docevals_mlflow.reports.dashboard import render_fields_dashboard
    from docevals_mlflow.reports.fields_markdown import render_fields_markdown

    report = comparison.to_report() if isinstance(comparison, BatchComparison) else comparison
    writer = BundleWriter(run_name=run_name)
    layout_fields(
        writer,
        report,
        markdown=render_fields_markdown(report),
        dashboard=render_fields_dashboard(report),
        verdict=verdict,
    )
    if ground_truth is not None:
        writer.dataset(*fields_dataset(ground_truth))
    writer.extras(params=params, tags=tags)
    return log_writer(
        writer, tracking_uri=tracking_uri, experiment=experiment, keep_bundle_at=keep_bundle_at
    )


def log_evaluation_report(
    report: EvaluationReport | PipelineEvaluationReport | SuiteReport,
    *,
    stage_reports: list[EvaluationReport] | None = None,
    run_name: str | None = None,
    experiment: str | None = None,
    tracking_uri: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
    keep_bundle_at: str | os.PathLike[str] | None = None,
    extend: Callable[[BundleWriter], None] | None = None,
) -> LoggedRun:
    """Log a case, pipeline or suite report as a run (see :func:`layout_evaluation`).

    ``extend`` may add more to the bundle (judge panels, review queues) before it is
    logged.
    """
    from docevals_mlflow.reports.dashboard import render_evaluation_dashboard
    from docevals_mlflow.reports.files import render_markdown

    writer = BundleWriter(run_name=run_name)
    layout_evaluation(
        writer,
        report,
        markdown=render_markdown(report),
        dashboard=render_evaluation_dashboard(report),
        stage_reports=stage_reports,
    )
    if extend is not None:
        extend(writer)
    writer.extras(params=params, tags=tags)
    return log_writer(
        writer, tracking_uri=tracking_uri, experiment=experiment, keep_bundle_at=keep_bundle_at
    )
