"""Evaluating one resolved stage into an :class:`EvaluationReport`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.core.registry import OperationRegistry
from docevals_mlflow.core.reports import EvaluationReport, spec_fingerprints, summarize_reference
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.core.secrets import redact_data
from docevals_mlflow.core.verdicts import combine_verdicts, failure_context
from docevals_mlflow.evaluation.metrics import Metric, arun_metric


def stage_warnings(case: EvaluationCase, registry: OperationRegistry) -> list[str]:
    """Things a reader of the report must know before trusting the verdict."""
    warnings: list[str] = []
    if case.judge_instruction_mode == "replace":
        warnings.append(
            "the base judge prompt was replaced (judge_instruction_mode='replace'); "
            "calibrate this judge against human-labelled cases before trusting it"
        )
    if case.evaluation_spec is not None and case.evaluation_spec.status == "draft":
        warnings.append(
            f"evaluation spec {case.evaluation_spec.spec_id!r} "
            f"v{case.evaluation_spec.version} is a draft (not yet reviewed)"
        )
    spec = registry.get(case.operation)
    if spec is not None:
        if case.action_instruction is not None and spec.action_instruction not in (
            None,
            case.action_instruction,
        ):
            warnings.append(
                f"the case's action_instruction differs from operation spec {spec.spec_id!r}"
            )
        if case.evaluation_spec is not None and case.evaluation_spec != spec.evaluation_spec:
            warnings.append(
                f"the case's evaluation_spec differs from operation spec {spec.spec_id!r}"
            )
    return warnings


async def arun_stage_metrics(case: EvaluationCase, metrics: Sequence[Metric]) -> list[MetricResult]:
    """Every metric's result on ``case``, the metrics running concurrently; a raising
    metric becomes ``uncertain``."""
    return list(await asyncio.gather(*(arun_metric(metric, case) for metric in metrics)))


def build_stage_report(
    case: EvaluationCase,
    results: Sequence[MetricResult],
    upstream_verdicts: Mapping[str, Verdict],
    warnings: Sequence[str] = (),
    *,
    unknown_upstream: Sequence[str] = (),
) -> EvaluationReport:
    """Assemble the report of a resolved case from its metric results.

    ``unknown_upstream`` names ancestors whose verdicts are not known; they make the
    attribution ``indeterminate`` without appearing as verdicts they never had.
    Registered secrets (:mod:`docevals_mlflow.core.secrets`) are removed.
    """
    verdict = combine_verdicts(result.verdict for result in results)
    attribution_basis: dict[str, Verdict] = dict(upstream_verdicts)
    attribution_basis.update(dict.fromkeys(unknown_upstream, "uncertain"))
    report = EvaluationReport(
        case_id=case.case_id,
        stage_id=case.stage_id,
        operation=case.operation,
        prediction_name=case.prediction_name,
        producer=case.producer,
        depends_on=list(case.depends_on),
        action_instruction=case.action_instruction,
        evaluation_spec=case.evaluation_spec,
        rubric=case.rubric,
        judge_instruction=case.judge_instruction,
        judge_instruction_mode=case.judge_instruction_mode,
        allow_unsafe_judge_override=case.allow_unsafe_judge_override,
        metadata=dict(case.metadata),
        fingerprints=spec_fingerprints(case),
        verdict=verdict,
        upstream_verdicts=dict(upstream_verdicts),
        failure_context=failure_context(verdict, attribution_basis),
        requires_human_review=any(result.requires_human_review for result in results),
        warnings=list(warnings),
        reference_summary=[summarize_reference(reference) for reference in case.references],
        metric_results=list(results),
    )
    # The finished report is what files, checkpoints and MLflow receive: no
    # registered secret may be left in it, whether a metric or the case put it there.
    redacted: EvaluationReport = redact_data(report)
    return redacted


def reattach_upstream(
    report: EvaluationReport, upstream_verdicts: Mapping[str, Verdict]
) -> EvaluationReport:
    """A stored stage report with upstream verdicts and attribution recomputed.

    A stage's own verdict depends only on its own inputs, but its attribution depends
    on the current verdicts of its ancestors, which may have been recomputed.
    """
    return report.model_copy(
        update={
            "upstream_verdicts": dict(upstream_verdicts),
            "failure_context": failure_context(report.verdict, upstream_verdicts),
            "from_checkpoint": True,
        }
    )
