"""The seed's ``visual_evals.evaluator``: single-case and pipeline evaluators.

Both are the package's; they also take the seed's mapping of operation specs, and the
pipeline evaluator returns the compat
:class:`~docevals_mlflow.compat.visual_evals.models.PipelineEvaluationReport` (equal
across a checkpoint resume, as the seed's was).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from docevals_mlflow.compat.visual_evals.models import PipelineEvaluationReport
from docevals_mlflow.compat.visual_evals.specs import as_registry
from docevals_mlflow.core.cases import PipelineCase
from docevals_mlflow.evaluation import evaluator as native_evaluator
from docevals_mlflow.evaluation import pipeline as native_pipeline
from docevals_mlflow.evaluation.metrics import Metric

__all__ = ["Evaluator", "PipelineEvaluator"]


class Evaluator(native_evaluator.Evaluator):
    """The package's single-case evaluator (``operation_specs`` may be a mapping)."""

    def __init__(self, metrics: Iterable[Metric], *, operation_specs: Any = ()) -> None:
        super().__init__(list(metrics), operation_specs=as_registry(operation_specs))


class PipelineEvaluator(native_pipeline.PipelineEvaluator):
    """The package's pipeline evaluator with the seed's keyword-only signature."""

    def __init__(
        self,
        *,
        default_metrics: Iterable[Metric] = (),
        stage_metrics: Mapping[str, Iterable[Metric]] | None = None,
        operation_metrics: Mapping[str, Iterable[Metric]] | None = None,
        operation_specs: Any = (),
        **options: Any,
    ) -> None:
        super().__init__(
            stage_metrics={k: list(v) for k, v in (stage_metrics or {}).items()},
            operation_metrics={k: list(v) for k, v in (operation_metrics or {}).items()},
            default_metrics=list(default_metrics),
            operation_specs=as_registry(operation_specs),
            **options,
        )

    async def aevaluate(self, pipeline: PipelineCase, **options: Any) -> PipelineEvaluationReport:
        """Evaluate as the package does (``evaluate`` and ``evaluate_batch`` run this)."""
        return PipelineEvaluationReport.of(await super().aevaluate(pipeline, **options))
