"""Intervals of a suite's rates, with the cases as clusters.

A pipeline is one case (one document): its stages share an input and fail together,
so a rate over stages counts each pipeline's stages as one cluster
(:func:`docevals_mlflow.core.statistics.rate_intervals.rate_interval`). Single-case
reports of one case id are one case too. Nothing is drawn at random, so the intervals
need no seed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.core.reports import (
    EvaluationReport,
    MetricSummary,
    RateInterval,
    StageSummary,
)

CONFIDENCE = 0.95
STAGE_RATES = ("pass_rate", "fail_rate")
SUITE_RATES = ("case_pass_rate", "case_fail_rate", "stage_pass_rate", "human_review_rate")


def _interval(successes: Sequence[int], observations: Sequence[int]) -> RateInterval:
    from docevals_mlflow.core.statistics.rate_intervals import rate_interval

    found = rate_interval(successes, observations, confidence=CONFIDENCE)
    return RateInterval(
        low=found.low,
        high=found.high,
        cases=found.cases,
        observations=found.observations,
        confidence=found.confidence,
        method=found.method,
        reason=found.reason,
    )


def _per_case(
    cases: Sequence[Sequence[EvaluationReport]],
    select: Callable[[EvaluationReport], bool],
    success: Callable[[EvaluationReport], bool],
) -> RateInterval:
    """The interval of the share of ``success`` among the ``select``-ed stage reports,
    each case's counted together."""
    hits, totals = [], []
    for stages in cases:
        chosen = [stage for stage in stages if select(stage)]
        hits.append(sum(success(stage) for stage in chosen))
        totals.append(len(chosen))
    return _interval(hits, totals)


def _stage_rate(
    cases: Sequence[Sequence[EvaluationReport]], stage_id: str, verdict: Verdict
) -> RateInterval:
    return _per_case(
        cases, lambda stage: stage.stage_id == stage_id, lambda stage: stage.verdict == verdict
    )


def suite_intervals(
    cases: Sequence[Sequence[EvaluationReport]], case_verdicts: Sequence[Verdict]
) -> dict[str, RateInterval]:
    """``SuiteReport.ci``: the case pass and fail rates (one verdict per case) and the
    stage pass and human review rates (every stage, each case a cluster)."""
    ones = [1] * len(case_verdicts)
    return {
        "case_pass_rate": _interval([verdict == "pass" for verdict in case_verdicts], ones),
        "case_fail_rate": _interval([verdict == "fail" for verdict in case_verdicts], ones),
        "stage_pass_rate": _per_case(cases, lambda _: True, lambda stage: stage.verdict == "pass"),
        "human_review_rate": _per_case(
            cases, lambda _: True, lambda stage: stage.requires_human_review
        ),
    }


def add_stage_and_metric_intervals(
    cases: Sequence[Sequence[EvaluationReport]],
    stages: dict[str, StageSummary],
    metrics: dict[str, MetricSummary],
) -> None:
    """Fill ``ci`` of each stage (pass and fail rate) and metric (pass rate)."""
    for stage_id, summary in stages.items():
        summary.ci["pass_rate"] = _stage_rate(cases, stage_id, "pass")
        summary.ci["fail_rate"] = _stage_rate(cases, stage_id, "fail")
    hits: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    totals: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for index, group in enumerate(cases):
        for stage in group:
            for result in stage.metric_results:
                totals[result.name][index] += 1
                hits[result.name][index] += result.verdict == "pass"
    for name, metric in metrics.items():
        seen = sorted(totals[name])
        metric.ci["pass_rate"] = _interval(
            [hits[name][index] for index in seen], [totals[name][index] for index in seen]
        )
