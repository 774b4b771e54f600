"""The traces of a case, pipeline or suite evaluation: one per case (see
:func:`evaluation_traces`).

A trace's inputs ``{"case_id", "stages"}`` are the same for the same case in every
run, which is how MLflow's evaluation-run comparison pairs the cases of two prompt
versions. Under its root span, each stage of the case gets a span (its inputs: the
operation, what it depends on, its references; its outputs: its verdict, failure
context and metric results), and each judge call a metric made (a judge, or each
member of a panel) an ``LLM`` span under its stage with the model, the token usage
and, when a price is known, the cost. Feedback: the case's ``verdict``, and per stage
``<stage>`` (its verdict), ``<stage>/failure_context`` and ``<stage>/<metric>`` (the
metric's verdict, its notes as rationale, its scores in the metadata).

This module does not import mlflow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from docevals_mlflow.tracking.trace_policy import TracePolicy
from docevals_mlflow.tracking.trace_records import FeedbackRecord, SpanRecord, TraceRecord

if TYPE_CHECKING:
    from docevals_mlflow.core.reports import (
        EvaluationReport,
        PipelineEvaluationReport,
        SuiteReport,
    )
    from docevals_mlflow.core.results import MetricResult

CASE_VERDICT = "verdict"
"""The name of the case-level verdict feedback."""
_WRONG = {"fail", "uncertain"}
_TOKENS = ("input_tokens", "output_tokens", "total_tokens")


def evaluation_traces(
    report: EvaluationReport | PipelineEvaluationReport | SuiteReport,
    policy: TracePolicy,
    *,
    stage_reports: Sequence[EvaluationReport] | None = None,
) -> list[TraceRecord]:
    """The traces of the cases of ``report`` that ``policy`` selects (a wrong case: one
    whose verdict is ``fail`` or ``uncertain``). A suite report's cases are its
    ``stage_reports``, grouped by case id."""
    if policy.mode == "none":
        return []
    cases = _cases(report, stage_reports)
    chosen = policy.select(cases, lambda case: case[1] in _WRONG)
    return [case_trace(case_id, verdict, stages) for case_id, verdict, stages in chosen]


def _cases(
    report: Any, stage_reports: Sequence[EvaluationReport] | None
) -> list[tuple[str, str, list[EvaluationReport]]]:
    """``(case id, verdict, stages)`` of every case, in report order."""
    kind = getattr(report, "kind", None)
    if kind == "case":
        return [(report.case_id, report.verdict, [report])]
    if kind == "pipeline":
        return [(report.pipeline_id, report.verdict, list(report.stage_reports))]
    grouped: dict[str, list[EvaluationReport]] = {}
    for stage in stage_reports or []:
        grouped.setdefault(stage.case_id, []).append(stage)
    return [(case_id, _case_verdict(stages), stages) for case_id, stages in grouped.items()]


def _case_verdict(stages: Iterable[EvaluationReport]) -> str:
    verdicts = {stage.verdict for stage in stages}
    for verdict in ("fail", "uncertain", "pass"):
        if verdict in verdicts:
            return verdict
    return "not_applicable"


def case_trace(case_id: str, verdict: str, stages: Sequence[EvaluationReport]) -> TraceRecord:
    """One case's trace: a span per stage, an LLM span per judge call, the verdicts
    as feedback."""
    spans: list[SpanRecord] = []
    feedback = [FeedbackRecord(name=CASE_VERDICT, value=verdict)]
    for stage in stages:
        stage_index = len(spans)
        spans.append(_stage_span(stage))
        for result in stage.metric_results:
            spans += _llm_spans(result, parent=stage_index)
        feedback += _stage_feedback(stage)
    failed = any(result.error for stage in stages for result in stage.metric_results)
    return TraceRecord(
        name=f"case {case_id}",
        inputs={"case_id": case_id, "stages": [stage.stage_id for stage in stages]},
        outputs={
            "verdict": verdict,
            "stages": {stage.stage_id: stage.verdict for stage in stages},
        },
        feedback=feedback,
        spans=spans,
        tags={"docevals.case.id": case_id[:250]},
        failed=failed,
    )


def _stage_span(stage: EvaluationReport) -> SpanRecord:
    errors = [f"{r.name}: {r.error.type}" for r in stage.metric_results if r.error is not None]
    return SpanRecord(
        name=f"stage {stage.stage_id}",
        inputs={
            "stage_id": stage.stage_id,
            "operation": stage.operation,
            "depends_on": list(stage.depends_on),
            "upstream_verdicts": dict(stage.upstream_verdicts),
            "references": [
                {"id": ref.id, "kind": ref.kind, "authority": ref.authority}
                for ref in stage.reference_summary
            ],
        },
        outputs={
            "verdict": stage.verdict,
            "failure_context": stage.failure_context,
            "requires_human_review": stage.requires_human_review,
            "metrics": {
                result.name: {"verdict": result.verdict, "scores": result.scores}
                for result in stage.metric_results
            },
        },
        error="; ".join(errors) or None,
    )


def _llm_spans(result: MetricResult, *, parent: int) -> list[SpanRecord]:
    """One LLM span per judge call behind ``result``: the panel's members, else the
    judge's (none for a metric that used no model)."""
    details = result.details if isinstance(result.details, Mapping) else {}
    variants = details.get("variants")
    if isinstance(variants, list) and variants:
        return [
            _llm_span(
                f"{result.name} · {variant.get('name', index)}",
                variant,
                variant.get("usage") or {},
                verdict=variant.get("verdict"),
                parent=parent,
            )
            for index, variant in enumerate(variants)
            if isinstance(variant, Mapping)
        ]
    judge = details.get("judge")
    if not isinstance(judge, Mapping) and not result.usage:
        return []
    identity = judge if isinstance(judge, Mapping) else {}
    return [_llm_span(result.name, identity, result.usage, verdict=result.verdict, parent=parent)]


def _llm_span(
    name: str,
    identity: Mapping[str, Any],
    usage: Mapping[str, float],
    *,
    verdict: Any,
    parent: int,
) -> SpanRecord:
    tokens = {key: int(usage[key]) for key in _TOKENS if key in usage}
    cost = usage.get("cost_usd")
    return SpanRecord(
        name=name,
        span_type="LLM",
        inputs={"requests": int(usage.get("requests", 0))},
        outputs={"verdict": verdict},
        parent=parent,
        model=str(identity["model"]) if identity.get("model") else None,
        provider=str(identity["provider"]) if identity.get("provider") else None,
        usage=tokens or None,
        cost_usd=float(cost) if cost is not None else None,
    )


def _stage_feedback(stage: EvaluationReport) -> list[FeedbackRecord]:
    stage_id = stage.stage_id
    upstream = ", ".join(f"{key}: {value}" for key, value in stage.upstream_verdicts.items())
    feedback = [
        FeedbackRecord(
            name=stage_id[:250],
            value=stage.verdict,
            rationale="; ".join(stage.warnings) or None,
            metadata={
                "operation": stage.operation,
                "failure_context": stage.failure_context,
                "requires_human_review": str(stage.requires_human_review).lower(),
                **({"upstream_verdicts": upstream} if upstream else {}),
            },
        ),
        FeedbackRecord(name=f"{stage_id}/failure_context"[:250], value=stage.failure_context),
    ]
    for result in stage.metric_results:
        metadata = {"basis": result.basis}
        metadata.update(
            {name: str(score) for name, score in result.scores.items() if score is not None}
        )
        feedback.append(
            FeedbackRecord(
                name=f"{stage_id}/{result.name}"[:250],
                value=result.verdict,
                rationale="; ".join(result.notes) or None,
                metadata=metadata,
                error=f"{result.error.type}: {result.error.message}" if result.error else None,
            )
        )
    return feedback


__all__ = ["CASE_VERDICT", "case_trace", "evaluation_traces"]
