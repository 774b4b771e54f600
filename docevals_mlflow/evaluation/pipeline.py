"""Evaluating a pipeline of stages with dependency-aware failure attribution."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from docevals_mlflow.core.cases import EvaluationCase, PipelineCase
from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.core.registry import OperationRegistry
from docevals_mlflow.core.reports import (
    CheckpointSummary,
    EvaluationReport,
    PipelineEvaluationReport,
)
from docevals_mlflow.core.specs import OperationSpec
from docevals_mlflow.core.verdicts import combine_verdicts
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.evaluation.checkpoints import CheckpointStore, checkpoint_fingerprint
from docevals_mlflow.evaluation.evaluator import as_registry
from docevals_mlflow.evaluation.metrics import Metric
from docevals_mlflow.evaluation.stage import (
    build_stage_report,
    reattach_upstream,
    run_stage_metrics,
    stage_warnings,
)


class PipelineEvaluator:
    """Evaluates every stage of a :class:`PipelineCase` in dependency order.

    Metrics for a stage are chosen by its stage id (``stage_metrics``), else its
    operation (``operation_metrics``), else ``default_metrics``; a stage with none is
    a configuration error raised before anything runs.

    Each stage report carries the verdicts of all its transitive ancestors and a
    ``failure_context`` saying whether a failure belongs to this stage, upstream, or
    cannot be separated.
    """

    def __init__(
        self,
        stage_metrics: Mapping[str, Sequence[Metric]] | None = None,
        operation_metrics: Mapping[str, Sequence[Metric]] | None = None,
        default_metrics: Sequence[Metric] | None = None,
        *,
        operation_specs: Iterable[OperationSpec] | OperationRegistry = (),
    ) -> None:
        self.stage_metrics = {key: list(value) for key, value in (stage_metrics or {}).items()}
        self.operation_metrics = {
            key: list(value) for key, value in (operation_metrics or {}).items()
        }
        self.default_metrics = list(default_metrics or [])
        self.registry = as_registry(operation_specs)

    def metrics_for(self, stage: EvaluationCase) -> list[Metric]:
        """The metrics chosen for ``stage`` (stage id, then operation, then defaults)."""
        for chosen in (
            self.stage_metrics.get(stage.stage_id),
            self.operation_metrics.get(stage.operation),
            self.default_metrics,
        ):
            if chosen:
                return chosen
        raise ConfigurationError(
            f"no metrics for operation {stage.operation!r}",
            stage=stage.stage_id,
            expected="stage_metrics, operation_metrics or default_metrics covering it",
        )

    def evaluate(
        self,
        pipeline: PipelineCase,
        *,
        checkpoint_dir: str | os.PathLike[str] | None = None,
        checkpoint_context: Mapping[str, Any] | None = None,
    ) -> PipelineEvaluationReport:
        """Evaluate every stage; with ``checkpoint_dir``, reuse and write checkpoints.

        A checkpoint is reused only when its fingerprint (the resolved stage, its
        metrics' configuration, ``checkpoint_context``, the package version and the
        bytes of file references) matches; stale or corrupt ones are recomputed with a
        :class:`~docevals_mlflow.errors.CheckpointWarning`.
        """
        waves = pipeline.waves()
        ordered = [self.registry.resolve(stage) for wave in waves for stage in wave]
        chosen = {stage.stage_id: self.metrics_for(stage) for stage in ordered}
        store = (
            CheckpointStore(checkpoint_dir, checkpoint_context)
            if checkpoint_dir is not None
            else None
        )
        summary = CheckpointSummary(directory=str(checkpoint_dir)) if store else None
        verdicts: dict[str, Verdict] = {}
        reports: list[EvaluationReport] = []
        for index, stage in enumerate(ordered, start=1):
            upstream = {name: verdicts[name] for name in pipeline.ancestors(stage.stage_id)}
            report = None
            if store is not None and summary is not None:
                path = store.path_for(index, stage.stage_id)
                fingerprint = checkpoint_fingerprint(
                    pipeline.pipeline_id, stage, chosen[stage.stage_id], store.context
                )
                stored, status = store.load(path, stage.stage_id, fingerprint)
                if stored is not None:
                    report = reattach_upstream(stored, upstream)
                    summary.reused.append(stage.stage_id)
                elif status != "missing":
                    summary.invalidated[stage.stage_id] = status
            if report is None:
                results = run_stage_metrics(stage, chosen[stage.stage_id])
                report = build_stage_report(
                    stage, results, upstream, stage_warnings(stage, self.registry)
                )
                if store is not None and summary is not None:
                    store.save(path, stage.stage_id, fingerprint, report)
                    summary.computed.append(stage.stage_id)
            verdicts[stage.stage_id] = report.verdict
            reports.append(report)
        return PipelineEvaluationReport(
            pipeline_id=pipeline.pipeline_id,
            metadata=dict(pipeline.metadata),
            execution_order=[stage.stage_id for stage in ordered],
            waves=[[stage.stage_id for stage in wave] for wave in waves],
            stage_reports=reports,
            verdict=combine_verdicts(report.verdict for report in reports),
            requires_human_review=any(report.requires_human_review for report in reports),
            checkpoint=summary,
        )
