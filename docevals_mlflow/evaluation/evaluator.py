"""Evaluating a single case."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.core.registry import OperationRegistry
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.core.specs import OperationSpec
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.evaluation.metrics import Metric
from docevals_mlflow.evaluation.stage import build_stage_report, run_stage_metrics, stage_warnings


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
        self.metrics = list(metrics)
        self.registry = as_registry(operation_specs)

    def evaluate(
        self,
        case: EvaluationCase,
        *,
        upstream_verdicts: Mapping[str, Verdict] | None = None,
    ) -> EvaluationReport:
        """Evaluate ``case`` and return its report."""
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
        results = run_stage_metrics(resolved, self.metrics)
        return build_stage_report(resolved, results, upstream, warnings, unknown_upstream=unknown)
