"""Aggregating many case and pipeline reports into one suite report."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from docevals_mlflow.core.literals import (
    COUNTERFACTUAL_CONTEXTS,
    FAILURE_CONTEXTS,
    VERDICTS,
    FailureContext,
    Verdict,
)
from docevals_mlflow.core.reports import (
    EvaluationReport,
    MetricSummary,
    PipelineEvaluationReport,
    StageSummary,
    SuiteReport,
)
from docevals_mlflow.diagnostics.cascades import counterfactual_summary, failure_cascades
from docevals_mlflow.diagnostics.disagreement import disagreement_budget
from docevals_mlflow.errors import InputError


def _verdict_counts(verdicts: Iterable[Verdict]) -> dict[Verdict, int]:
    counter = Counter(verdicts)
    return {verdict: counter.get(verdict, 0) for verdict in VERDICTS}


def _context_counts(contexts: Iterable[FailureContext]) -> dict[FailureContext, int]:
    counter = Counter(contexts)
    counts = {context: counter.get(context, 0) for context in FAILURE_CONTEXTS}
    # Counterfactual refinements appear only where a rerun made them.
    counts.update(
        {context: counter[context] for context in COUNTERFACTUAL_CONTEXTS if counter[context]}
    )
    return counts


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def build_suite_report(
    reports: Iterable[EvaluationReport | PipelineEvaluationReport],
    *,
    suite_id: str = "suite",
) -> SuiteReport:
    """Verdict counts, attribution and review rates per stage and per metric.

    A pipeline counts as one case (with its combined verdict) and contributes each of
    its stages to the stage and metric figures; a single-case report is one case and
    one stage. ``usage`` sums every metric's usage figures.

    Rates get 95% intervals (``ci``) with the cases as clusters: a pipeline, or the
    reports of one case id, is one case (:mod:`.suite_intervals`).

    Diagnostics come along where the reports allow them: counterfactual outcomes per
    stage (when reruns ran), failure cascades per dependency edge (when there are
    pipelines) and panel disagreement as a review signal (when panels ran next to
    ground-truth metrics).

    Raises:
        InputError: ``reports`` is empty.
    """
    from docevals_mlflow.evaluation.suite_intervals import (
        add_stage_and_metric_intervals,
        suite_intervals,
    )

    reports = list(reports)
    stage_reports, case_verdicts, cases = _split_cases(reports)
    if not stage_reports:
        raise InputError("a suite needs at least one report")

    stages = _stage_summaries(stage_reports)
    metrics, producers, usage = _metric_summaries(stage_reports)
    add_stage_and_metric_intervals(cases, stages, metrics)

    return SuiteReport(
        suite_id=suite_id,
        case_count=len(case_verdicts),
        stage_count=len(stage_reports),
        verdict_counts=_verdict_counts(report.verdict for report in stage_reports),
        case_verdict_counts=_verdict_counts(case_verdicts),
        failure_contexts=_context_counts(report.failure_context for report in stage_reports),
        human_review_rate=_rate(
            sum(report.requires_human_review for report in stage_reports), len(stage_reports)
        ),
        stages=stages,
        metrics=metrics,
        producers=dict(sorted(producers.items())),
        usage=dict(sorted(usage.items())),
        cascades=failure_cascades(reports),
        disagreement=disagreement_budget(stage_reports),
        ci=suite_intervals(cases, case_verdicts),
    )


def _split_cases(
    reports: list[EvaluationReport | PipelineEvaluationReport],
) -> tuple[list[EvaluationReport], list[Verdict], list[list[EvaluationReport]]]:
    """Every stage report, each report's verdict, and the stages of each case (a
    pipeline, or one case id's reports): the clusters of the intervals."""
    stage_reports: list[EvaluationReport] = []
    clusters: dict[tuple[str, str], list[EvaluationReport]] = defaultdict(list)
    for report in reports:
        if isinstance(report, PipelineEvaluationReport):
            stage_reports.extend(report.stage_reports)
            clusters["pipeline", report.pipeline_id].extend(report.stage_reports)
        else:
            stage_reports.append(report)
            clusters["case", report.case_id].append(report)
    return stage_reports, [report.verdict for report in reports], list(clusters.values())


def _stage_summaries(stage_reports: list[EvaluationReport]) -> dict[str, StageSummary]:
    """Verdicts, failure contexts and review rates of each stage id."""
    by_stage: dict[str, list[EvaluationReport]] = defaultdict(list)
    for stage_report in stage_reports:
        by_stage[stage_report.stage_id].append(stage_report)
    stages: dict[str, StageSummary] = {}
    for stage_id, group in by_stage.items():
        counts = _verdict_counts(report.verdict for report in group)
        total = len(group)
        stages[stage_id] = StageSummary(
            count=total,
            verdict_counts=counts,
            pass_rate=_rate(counts["pass"], total),
            fail_rate=_rate(counts["fail"], total),
            uncertain_rate=_rate(counts["uncertain"], total),
            not_applicable_rate=_rate(counts["not_applicable"], total),
            failure_contexts=_context_counts(report.failure_context for report in group),
            human_review_rate=_rate(sum(report.requires_human_review for report in group), total),
            counterfactual=counterfactual_summary(group),
        )
    return stages


def _metric_summaries(
    stage_reports: list[EvaluationReport],
) -> tuple[dict[str, MetricSummary], Counter[str], Counter[str]]:
    """Each metric's summary, and the producer counts and usage totals of the stages."""
    metric_verdicts: dict[str, list[Verdict]] = defaultdict(list)
    metric_reviews: Counter[str] = Counter()
    metric_errors: Counter[str] = Counter()
    score_values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    usage: Counter[str] = Counter()
    producers: Counter[str] = Counter()
    for stage_report in stage_reports:
        producers[stage_report.producer.label if stage_report.producer else "unknown"] += 1
        for result in stage_report.metric_results:
            metric_verdicts[result.name].append(result.verdict)
            metric_reviews[result.name] += result.requires_human_review
            metric_errors[result.name] += result.error is not None
            for score, value in result.scores.items():
                if value is not None:
                    score_values[result.name][score].append(value)
            usage.update(result.usage)
    metrics: dict[str, MetricSummary] = {}
    for name, verdicts in metric_verdicts.items():
        counts = _verdict_counts(verdicts)
        metrics[name] = MetricSummary(
            count=len(verdicts),
            verdict_counts=counts,
            pass_rate=_rate(counts["pass"], len(verdicts)),
            human_review_rate=_rate(metric_reviews[name], len(verdicts)),
            error_count=metric_errors[name],
            score_means={
                score: sum(values) / len(values) for score, values in score_values[name].items()
            },
        )
    return metrics, producers, usage
