"""Evaluating a single case."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.core.registry import OperationRegistry
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.core.specs import OperationSpec
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.evaluation.metrics import Metric, check_metric_names
from docevals_mlflow.evaluation.progress import Progress, ProgressCounter
from docevals_mlflow.evaluation.stage import arun_stage_metrics, build_stage_report, stage_warnings
from docevals_mlflow.judges.judge import run_sync


def as_registry(operation_specs: Iterable[OperationSpec] | OperationRegistry) -> OperationRegistry:
    """Accept a registry or any iterable of operation specs."""
    if isinstance(operation_specs, OperationRegistry):
        return operation_specs
    return OperationRegistry(operation_specs)


class Evaluator:
    """Runs a fixed list of metrics on single cases.

    The case is first resolved against ``operation_specs``. The report's verdict
    combines the metric verdicts (fail > uncertain > pass > not_applicable) and its
    ``failure_context`` attributes a failure: for a case with ``depends_on``, pass
    the ancestors' verdicts as ``upstream_verdicts``; ancestors left out are unknown,
    which makes attribution ``indeterminate``.
    """

    def __init__(
        self,
        metrics: Sequence[Metric],
        *,
        operation_specs: Iterable[OperationSpec] | OperationRegistry = (),
    ) -> None:
        if not metrics:
            raise ConfigurationError("an Evaluator needs at least one metric")
        check_metric_names(metrics, where="Evaluator")
        self.metrics = list(metrics)
        self.registry = as_registry(operation_specs)

    def evaluate(
        self,
        case: EvaluationCase,
        *,
        upstream_verdicts: Mapping[str, Verdict] | None = None,
    ) -> EvaluationReport:
        """Evaluate ``case`` and return its report."""
        return run_sync(self.aevaluate(case, upstream_verdicts=upstream_verdicts))

    def evaluate_batch(
        self,
        cases: Sequence[EvaluationCase],
        *,
        max_concurrency: int = 8,
        progress: Progress | None = None,
    ) -> list[EvaluationReport]:
        """Evaluate many cases concurrently (at most ``max_concurrency`` at a time),
        returning their reports in the order of ``cases``; ``progress(done, total)`` is
        called as cases finish.

        Judges wait on providers together; provider limits (concurrency, requests per
        minute) still apply underneath.
        """
        if max_concurrency < 1:
            raise ConfigurationError("max_concurrency must be at least 1")

        counter = ProgressCounter(progress, len(cases))
        counter.start()

        async def all_cases() -> list[EvaluationReport]:
            limit = asyncio.Semaphore(max_concurrency)

            async def one(case: EvaluationCase) -> EvaluationReport:
                async with limit:
                    report = await self.aevaluate(case)
                counter.advance()
                return report

            return list(await asyncio.gather(*(one(case) for case in cases)))

        return run_sync(all_cases())

    async def aevaluate(
        self,
        case: EvaluationCase,
        *,
        upstream_verdicts: Mapping[str, Verdict] | None = None,
    ) -> EvaluationReport:
        """Evaluate ``case`` (metrics run concurrently) and return its report."""
        resolved = self.registry.resolve(case)
        upstream: dict[str, Verdict] = dict(upstream_verdicts or {})
        warnings = stage_warnings(resolved, self.registry)
        unknown = [stage for stage in resolved.depends_on if stage not in upstream]
        if unknown:
            warnings.append(
                "verdicts of upstream stages "
                + ", ".join(repr(stage) for stage in unknown)
                + " were not given, so a failure cannot be attributed"
            )
        results = await arun_stage_metrics(resolved, self.metrics)
        return build_stage_report(resolved, results, upstream, warnings, unknown_upstream=unknown)
