"""Logging evaluations from Python: one call per evaluation, one MLflow run each.

Each function assembles its run with the same function the CLI uses
(:mod:`~docevals_mlflow.tracking.assembly`), so a run logged from Python holds what
the command's run holds for the same content and options.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.fields.batch import BatchComparison
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.tracking.assembly import (
    assemble_evaluation,
    assemble_fields,
    log_assembled,
)
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.dataset_use import DatasetUse
from docevals_mlflow.tracking.options import RunOptions, RunPrompt
from docevals_mlflow.tracking.runs import LoggedRun


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
    schema: DocumentSchema | None = None,
    prompt: RunPrompt | None = None,
    datasets: Sequence[DatasetUse] | None = None,
    options: RunOptions | None = None,
    traces: str | int | None = None,
) -> LoggedRun:
    """Log a field comparison (a :class:`BatchComparison` or its report dict) as a run.

    ``ground_truth`` (the expected JSONL file or folder) is logged as the run's
    ``ground_truth`` input with its content digest; ``schema`` (the one compared
    with) as ``specs/schema.json``, which ``docevals compare`` diffs. Extra
    ``params`` (say, the prompt version) and ``tags`` are added to the standard
    layout, and ``prompt`` (:class:`~docevals_mlflow.tracking.options.RunPrompt`) as
    ``--prompt`` adds it. ``options`` holds any of these settings in one value; the
    keywords given win over it. If logging fails and ``keep_bundle_at`` is given, the
    run bundle is kept there for ``docevals log`` (or beside it, ``<name>-2``, when a
    bundle not yet logged is there; the raised error's ``kept_bundle`` says where).
    ``traces`` (``all``, ``errors``, N, ``none``) picks the documents that get an
    MLflow trace linked to the run (default: every one up to 1,000, then the wrong
    ones first).

    Raises:
        InputError: ``schema`` is not the one the comparison used, or ``traces`` is
            not a policy.
    """
    chosen = (options or RunOptions()).merged(
        ground_truth=ground_truth,
        run_name=run_name,
        experiment=experiment,
        tracking_uri=tracking_uri,
        params=params,
        tags=tags,
        keep_bundle_at=keep_bundle_at,
        schema=schema,
        prompt=prompt,
        datasets=datasets,
        traces=traces,
    )
    return log_assembled(assemble_fields(comparison, chosen, verdict=verdict))


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
    datasets: Sequence[DatasetUse] | None = None,
    options: RunOptions | None = None,
    traces: str | int | None = None,
) -> LoggedRun:
    """Log a case, pipeline or suite report as a run (see
    :func:`~docevals_mlflow.tracking.evaluation_layout.layout_evaluation`).

    ``stage_reports`` are the stages behind a suite report. ``datasets`` are the
    registered ground-truth datasets the evaluation used
    (:class:`~docevals_mlflow.tracking.dataset_use.DatasetUse`, as
    ``--ground-truth-dataset`` records them). ``extend`` may add more to the bundle
    (judge panels, review queues) before it is logged. ``options`` holds the run
    settings in one value; the keywords given win over it. ``traces`` picks the cases
    that get an MLflow trace, as for :func:`log_field_comparison`.
    """
    chosen = (options or RunOptions()).merged(
        run_name=run_name,
        experiment=experiment,
        tracking_uri=tracking_uri,
        params=params,
        tags=tags,
        keep_bundle_at=keep_bundle_at,
        datasets=datasets,
        traces=traces,
    )
    return log_assembled(
        assemble_evaluation(report, chosen, stage_reports=stage_reports, extend=extend)
    )
