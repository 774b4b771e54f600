"""The seed's ``visual_evals.metrics``: the metric protocol and the built-in metrics.

The seed's ``Metric`` protocol asks only for ``evaluate(case)``; a metric without a
``name`` is accepted natively. The metrics are the package's with the seed's
signatures and result shapes: :class:`ExactStructuredMetric` has the seed's counts,
basis names and notes; :class:`FunctionMetric` the seed's ``function`` and ``basis``;
:class:`LLMJudgeMetric` and :class:`JudgePanelMetric` judge the seed-shaped request
(:func:`~docevals_mlflow.compat.visual_evals.judge.build_judge_request`) and score
against it; the panel's ``details`` is the seed's list of ``panel_vote``,
``provider_result`` and ``human_review_item`` entries (the package's own details stay
under the ``panel_vote`` entry's ``panel`` key), and the seed's score and count names
are added beside the package's.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.compat.visual_evals._exact import ExactStructuredMetric
from docevals_mlflow.compat.visual_evals.judge import ModelJudge, build_judge_request
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.errors import DocEvalsWarning
from docevals_mlflow.evaluation import judge_variant as native_variant
from docevals_mlflow.evaluation import llm_metric as native_llm
from docevals_mlflow.evaluation import metrics as native_metrics
from docevals_mlflow.evaluation import panel_metric as native_panel
from docevals_mlflow.evaluation.metrics import Metric
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.voting import VoteRule

__all__ = [
    "ExactStructuredMetric",
    "FunctionMetric",
    "JudgePanelMetric",
    "JudgeVariant",
    "LLMJudgeMetric",
    "Metric",
]

_REASONS = {
    "no consensus": "no_model_group_consensus",
    "minority dissent": "minority_judge_disagreement",
    "no independent judge": "no_independent_judge",
    "self-judging": "self_judging",
    "judge failed": "judge_failed",
}


class FunctionMetric(native_metrics.FunctionMetric):
    """The package's function metric with the seed's signature: the function is
    ``function`` and results have ``basis="user_defined"`` unless ``basis`` says
    otherwise. ``threshold`` (the package's) turns a number into pass/fail."""

    def __init__(
        self,
        name: str,
        function: Callable[[EvaluationCase], Any],
        *,
        score_name: str = "score",
        basis: str = "user_defined",
        threshold: float | None = None,
    ) -> None:
        super().__init__(name, function, score_name, threshold=threshold, basis=basis)

    @property
    def function(self) -> Callable[[EvaluationCase], Any]:
        """The function (the seed's attribute name)."""
        return self.fn


@dataclass
class JudgeVariant(native_variant.JudgeVariant):
    """The package's :class:`~docevals_mlflow.evaluation.JudgeVariant`, accepting the
    seed's ``temperature`` on a judge that cannot take one (a plain function).

    The package refuses that combination; here it is kept as a label, recorded as
    not sent (``temperature_sent: False`` in the panel details) and warned about,
    because the seed recorded a temperature it never sent.
    """

    temperature_sent: bool = True

    def __post_init__(self) -> None:
        requested = self.temperature
        try:
            super().__post_init__()
        except Exception:
            if requested is None:
                raise
            self.temperature = None
            super().__post_init__()
            self.temperature = requested
            self.temperature_sent = False
            warnings.warn(
                f"judge variant {self.name!r}: temperature={requested:g} is a label only "
                "(this judge takes no temperature)",
                DocEvalsWarning,
                stacklevel=3,
            )

    def spec(self) -> dict[str, Any]:
        """Identity and sampling settings, saying whether the temperature was sent."""
        return {**super().spec(), "temperature_sent": self.temperature_sent}


class LLMJudgeMetric(native_llm.LLMJudgeMetric):
    """The package's single-judge metric; a plain function or seed adapter becomes
    the seed-shaped :class:`~docevals_mlflow.compat.visual_evals.judge.ModelJudge`,
    and the request is the seed-shaped one (which is what gets scored)."""

    def __init__(self, judge: Any, *, name: str = "llm_judge") -> None:
        super().__init__(judge if hasattr(judge, "ajudge") else ModelJudge(judge), name=name)

    async def aevaluate(self, case: EvaluationCase) -> MetricResult:
        """Judge the case and score the answer against the request that was sent."""
        request = build_judge_request(case)
        result = await self.judge.ajudge(request)
        return native_llm.judge_metric_result(self.name, request, result, case.producer)


class JudgePanelMetric(native_panel.JudgePanelMetric):
    """The package's panel (a list of variants or a mapping of labels to judges)
    with the seed's ``details`` list and score and count names."""

    def __init__(
        self,
        judges: Mapping[str, Any] | Sequence[native_variant.JudgeVariant],
        *,
        name: str = "judge_panel",
        vote_rule: VoteRule = "majority",
        minimum_agreement: float | None = None,
        review_on_any_disagreement: bool = True,
    ) -> None:
        super().__init__(
            judges,
            name=name,
            vote_rule=vote_rule,
            minimum_agreement=minimum_agreement,
            review_on_any_disagreement=review_on_any_disagreement,
        )

    async def aevaluate(self, case: EvaluationCase) -> MetricResult:
        """Vote as the package does on the seed-shaped request, then shape the
        result as the seed did."""
        request = build_judge_request(case)
        results = await asyncio.gather(
            *(variant.judge.ajudge(request) for variant in self.variants)
        )
        result = self._combine(case, request, list(results))
        return seed_shaped(result, case, request, self.variants)


def _panel_vote(result: MetricResult, native: dict[str, Any]) -> dict[str, Any]:
    """The seed's ``panel_vote`` entry (the package's details under ``panel``)."""
    decision = native.get("decision", {})
    members = native.get("variants", [])
    return {
        "type": "panel_vote",
        "vote_rule": native.get("panel", {}).get("vote_rule"),
        "minimum_agreement": native.get("panel", {}).get("minimum_agreement"),
        "winner": decision.get("answer") if decision.get("consensus") else None,
        "model_group_votes": native.get("group_votes", {}),
        "model_group_agreement": decision.get("agreement"),
        "raw_sample_agreement": result.scores.get("sample_agreement"),
        "producer_relationships": {m["name"]: m["producer_relationship"] for m in members},
        "panel": native,
    }


def _provider_results(
    native: dict[str, Any], variants: list[native_variant.JudgeVariant]
) -> list[dict[str, Any]]:
    """One seed ``provider_result`` entry per variant."""
    members = {member["name"]: member for member in native.get("variants", [])}
    entries = []
    for variant in variants:
        member = members.get(variant.name, {})
        entries.append(
            {
                "type": "provider_result",
                "provider": variant.name,
                "provider_family": variant.provider,
                "model": variant.model,
                "temperature": variant.temperature,
                "voting_group": variant.group,
                "producer_relationship": member.get("producer_relationship"),
                "verdict": member.get("verdict"),
                "scores": member.get("scores", {}),
            }
        )
    return entries


def _stage_reviews(native: dict[str, Any], references: dict[str, Any]) -> list[dict[str, Any]]:
    """The seed's ``overall_stage`` review entries (claim-level ones come apart)."""
    decision = native.get("decision", {})
    return [
        {
            "type": "human_review_item",
            "scope": "overall_stage",
            "reason": _REASONS.get(item["reason"], item["reason"].replace(" ", "_")),
            "detail": item["detail"],
            "model_group_votes": native.get("group_votes", {}),
            "vote_winner": decision.get("answer") if decision.get("consensus") else None,
            "agreement": decision.get("agreement"),
            "reference_context": references,
        }
        for item in native.get("review_items", [])
        if item["reason"] != "items without consensus"
    ]


def seed_shaped(
    result: MetricResult,
    case: EvaluationCase,
    request: JudgeRequest,
    variants: list[native_variant.JudgeVariant],
) -> MetricResult:
    """A panel result with the seed's details entries and figure names added."""
    native = result.details if isinstance(result.details, dict) else {}
    references = {
        reference.id: {"kind": reference.kind, "metadata": reference.metadata}
        for reference in case.references
    }
    review = _stage_reviews(native, references)
    claims = _claim_reviews(request, native, references)
    details = [_panel_vote(result, native), *_provider_results(native, variants), *review, *claims]
    agreement = native.get("decision", {}).get("agreement")
    scores = {
        **result.scores,
        "model_group_verdict_agreement": agreement,
        "raw_sample_verdict_agreement": result.scores.get("sample_agreement"),
    }
    counts = {
        **result.counts,
        "judge_variants": len(variants),
        "model_voting_groups": len({variant.group for variant in variants}),
        "distinct_providers": len({variant.provider for variant in variants}),
        "distinct_models": len({(variant.provider, variant.model) for variant in variants}),
        "claim_disagreements": len(claims),
        "human_review_items": len(review) + len(claims),
    }
    return result.model_copy(update={"details": details, "scores": scores, "counts": counts})


def _claim_reviews(
    request: JudgeRequest, native: dict[str, Any], references: dict[str, Any]
) -> list[dict[str, Any]]:
    """One review entry per prediction claim the groups did not agree on."""
    items = native.get("items", {}).get("prediction_claims", {})
    paths = {
        claim["claim_id"]: claim.get("path") for claim in request.task.get("prediction_claims", [])
    }
    reviews = []
    for claim_id, item in items.items():
        votes = set(item["group_votes"].values())
        if item["consensus"] and len(votes) == 1:
            continue
        reviews.append(
            {
                "type": "human_review_item",
                "scope": "prediction_claim",
                "claim_id": claim_id,
                "path": paths.get(claim_id, ""),
                "agreement": item["agreement"],
                "vote_winner": item["answer"] if item["consensus"] else None,
                "model_group_votes": item["group_votes"],
                "reason": "minority_judge_disagreement"
                if item["consensus"]
                else "no_model_group_consensus",
                "reference_context": references,
            }
        )
    return reviews
