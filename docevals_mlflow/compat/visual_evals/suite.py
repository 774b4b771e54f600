"""The seed's ``visual_evals.suite``: evaluator-comparison reports across cases.

A suite case holds several named evaluations of one case (``{"single": report,
"panel": report}``); the suite counts verdicts and review per evaluator name, the
producers, and the token usage. It reports counts, never an aggregate accuracy.
For the package's own suite (stages, metrics, cascades) see
:func:`docevals_mlflow.build_suite_report`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, model_validator

from docevals_mlflow.compat.visual_evals.usage import TokenUsage, UsageSummary
from docevals_mlflow.core.literals import VERDICTS
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.reports import EvaluationReport

__all__ = ["EvaluationSuiteCase", "EvaluationSuiteReport", "EvaluatorRollup", "build_suite_report"]

ROLLUP_NOTE = (
    "Suite rollups are verdict and review counts, not accuracy. Call a score accuracy "
    "only when cases use authoritative ground truth."
)


class EvaluationSuiteCase(DocEvalsModel):
    """Every named evaluation of one case, with its ground-truth generation and usage."""

    case_id: str
    evaluations: dict[str, EvaluationReport]
    ground_truth_generation: Any = None
    usage: list[TokenUsage] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> EvaluationSuiteCase:
        if not self.evaluations:
            raise ValueError(f"suite case {self.case_id!r}: needs at least one named evaluation")
        other = {
            name: r.case_id for name, r in self.evaluations.items() if r.case_id != self.case_id
        }
        if other:
            raise ValueError(f"suite case {self.case_id!r}: evaluations of other cases {other}")
        generation = self.ground_truth_generation
        if generation is not None and getattr(generation, "case_id", self.case_id) != self.case_id:
            raise ValueError(
                f"suite case {self.case_id!r}: ground-truth generation of another case"
            )
        return self


class EvaluatorRollup(DocEvalsModel):
    """Verdict and review counts of one named evaluator."""

    evaluator: str
    evaluated_cases: int
    verdict_counts: dict[str, int]
    human_review_cases: int
    human_review_rate: float | None


class EvaluationSuiteReport(DocEvalsModel):
    """Evaluators compared over many cases."""

    suite_id: str
    cases: list[EvaluationSuiteCase]
    evaluator_rollups: dict[str, EvaluatorRollup]
    producer_counts: dict[str, int]
    ground_truth_review_cases: int
    usage: list[TokenUsage] = Field(default_factory=list)
    usage_summary: UsageSummary
    metadata: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


def _rollup(name: str, reports: list[EvaluationReport]) -> EvaluatorRollup:
    verdicts = Counter(report.verdict for report in reports)
    review = sum(report.requires_human_review for report in reports)
    return EvaluatorRollup(
        evaluator=name,
        evaluated_cases=len(reports),
        verdict_counts={verdict: verdicts.get(verdict, 0) for verdict in VERDICTS},
        human_review_cases=review,
        human_review_rate=review / len(reports) if reports else None,
    )


def _producer(case: EvaluationSuiteCase) -> str:
    producer = next((r.producer for r in case.evaluations.values() if r.producer), None)
    if producer is None:
        return "unknown"
    return f"{producer.provider}:{producer.model or 'model-unspecified'}"


def build_suite_report(
    *,
    suite_id: str,
    cases: Sequence[EvaluationSuiteCase],
    usage: Sequence[TokenUsage] = (),
    metadata: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
) -> EvaluationSuiteReport:
    """Count verdicts and review per evaluator name, producers and usage.

    Raises:
        ValueError: no cases, or two cases with one ``case_id``.
    """
    case_list = list(cases)
    if not case_list:
        raise ValueError(f"suite {suite_id!r}: needs at least one case")
    ids = [case.case_id for case in case_list]
    repeated = sorted({case_id for case_id in ids if ids.count(case_id) > 1})
    if repeated:
        raise ValueError(f"suite {suite_id!r}: case ids repeat: {', '.join(repeated)}")
    names = sorted({name for case in case_list for name in case.evaluations})
    records = [*usage, *(record for case in case_list for record in case.usage)]
    return EvaluationSuiteReport(
        suite_id=suite_id,
        cases=case_list,
        evaluator_rollups={
            name: _rollup(name, [c.evaluations[name] for c in case_list if name in c.evaluations])
            for name in names
        },
        producer_counts=dict(Counter(_producer(case) for case in case_list)),
        ground_truth_review_cases=sum(
            bool(getattr(case.ground_truth_generation, "requires_human_review", False))
            for case in case_list
        ),
        usage=records,
        usage_summary=UsageSummary.from_records(records),
        metadata=dict(metadata or {}),
        notes=[ROLLUP_NOTE, *notes],
    )
