"""A metric decided by a model-balanced panel of judges."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.evaluation.llm_metric import judge_metric_result, producer_relationship
from docevals_mlflow.judges.judge import CallableAdapter, JudgeResult, ModelJudge, run_sync
from docevals_mlflow.judges.output import (
    JudgeOutput,
    PredictionClaim,
    ReferenceClaim,
    RubricResult,
)
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.scoring import score_judgement
from docevals_mlflow.judges.usage import total_usage
from docevals_mlflow.judges.voting import Decision, VoteRule, decide, group_vote


@dataclass
class JudgeVariant:
    """One member of a panel: a judge and who it is.

    ``provider`` and ``model`` declare who the judge is; when given they win over what
    the judge reports, for grouping and for the producer relationship, and a plain
    function judge takes them as its identity. When omitted they come from the judge's
    ``describe()``.

    ``temperature`` is sent: a judge whose adapter has a different temperature is
    rebuilt on a copy of the adapter with this one. A judge that cannot take a
    temperature (a plain function, a custom judge) is refused with a
    :class:`~docevals_mlflow.errors.ConfigurationError` rather than labelled with a
    temperature it never used.

    Variants with the same ``sample_group`` (by default ``provider:model``) are samples
    of one model and cast one vote together.
    """

    name: str
    judge: Any
    provider: str | None = None
    model: str | None = None
    temperature: float | None = None
    sample_group: str | None = None

    def __post_init__(self) -> None:
        if not hasattr(self.judge, "ajudge"):
            adapter = self.judge
            if not hasattr(adapter, "agenerate"):
                # A bare function has no identity of its own: it takes the declared one.
                adapter = CallableAdapter(
                    adapter, provider=self.provider or "custom", model=self.model
                )
            self.judge = ModelJudge(adapter, name=self.name)
        if self.temperature is not None:
            self.judge = _with_temperature(self.name, self.judge, self.temperature)
        described = self.judge.describe() if hasattr(self.judge, "describe") else {}
        self.provider = self.provider or str(described.get("provider", "custom"))
        self.model = self.model or str(described.get("model", self.name))
        if self.temperature is None and described.get("temperature") is not None:
            self.temperature = float(described["temperature"])

    @property
    def identity(self) -> dict[str, Any]:
        """The declared provider and model (what producer relationships use)."""
        return {"provider": self.provider, "model": self.model}

    @property
    def group(self) -> str:
        """The self-consistency group this variant votes in."""
        return self.sample_group or f"{self.provider}:{self.model}"

    def spec(self) -> dict[str, Any]:
        """Identity and sampling settings (for fingerprints and panel reports)."""
        return {
            "name": self.name,
            "provider": self.provider,
            "model": self.model,
            "temperature": self.temperature,
            "group": self.group,
        }


def _with_temperature(name: str, judge: Any, temperature: float) -> Any:
    """``judge`` sampling at ``temperature``: itself when it already does, else a
    judge on a copy of its adapter with that temperature."""
    describe = getattr(judge, "describe", None)
    current = describe().get("temperature") if callable(describe) else None
    if current is not None and float(current) == float(temperature):
        return judge
    adapter = getattr(judge, "adapter", None) if isinstance(judge, ModelJudge) else None
    copier = getattr(adapter, "with_settings", None)
    if not callable(copier) or not hasattr(adapter, "temperature"):
        raise ConfigurationError(
            f"judge variant {name!r}: temperature={temperature:g} cannot be sent to this "
            f"judge ({type(adapter if adapter is not None else judge).__name__} takes no "
            "temperature)",
            path="temperature",
            expected="an HTTP adapter (whose temperature is then set), or no temperature "
            "for a function judge",
        )
    assert isinstance(judge, ModelJudge)
    return ModelJudge(copier(temperature=temperature), name=judge.name, cache=judge.cache)


_UNSURE_PREDICTION = "ambiguous"
_UNSURE_REFERENCE = "ambiguous"


class JudgePanelMetric:
    """Several judges, one model-balanced verdict, and a review queue.

    Every variant judges the same request concurrently. Samples of one provider/model
    form a group that votes its strict-majority verdict (else ``uncertain``); groups
    vote by ``vote_rule`` (``majority``, optionally ``minimum_agreement``, or
    ``unanimous``); ties and unsure winners are ``uncertain``. The same voting runs
    per prediction claim, per reference claim and per rubric criterion, and the
    panel's scores come from those consensus items.

    The review queue gets an item when there is no consensus, when any group dissents
    (``review_on_any_disagreement``), when a known producer faces no independent
    judge, when a judge is the producing model, and when a judge failed.
    """

    def __init__(
        self,
        variants: Sequence[JudgeVariant],
        *,
        name: str = "judge_panel",
        vote_rule: VoteRule = "majority",
        minimum_agreement: float | None = None,
        review_on_any_disagreement: bool = True,
    ) -> None:
        if not variants:
            raise ConfigurationError("a judge panel needs at least one variant")
        names = [variant.name for variant in variants]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ConfigurationError(f"judge variant names repeat: {', '.join(repeated)}")
        if vote_rule not in ("majority", "unanimous"):
            raise ConfigurationError(
                f"unknown vote rule {vote_rule!r}", expected="majority or unanimous"
            )
        if minimum_agreement is not None and not 0 < minimum_agreement <= 1:
            raise ConfigurationError(f"minimum_agreement {minimum_agreement} is outside (0, 1]")
        self.variants = list(variants)
        self.name = name
        self.vote_rule = vote_rule
        self.minimum_agreement = minimum_agreement
        self.review_on_any_disagreement = review_on_any_disagreement

    def panel_spec(self) -> dict[str, Any]:
        """The panel's definition: members, vote rule, threshold."""
        return {
            "variants": [variant.spec() for variant in self.variants],
            "vote_rule": self.vote_rule,
            "minimum_agreement": self.minimum_agreement,
            "review_on_any_disagreement": self.review_on_any_disagreement,
        }

    @property
    def panel_sha256(self) -> str:
        """Fingerprint of :meth:`panel_spec`."""
        return sha256_json(self.panel_spec())

    def config(self) -> dict[str, Any]:
        """Settings that change this metric's result (for checkpoints)."""
        return {"panel": self.panel_spec()}

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Synchronous :meth:`aevaluate`."""
        return run_sync(self.aevaluate(case))

    async def aevaluate(self, case: EvaluationCase) -> MetricResult:
        """Ask every variant concurrently, then vote."""
        request = build_judge_request(case)
        results = await asyncio.gather(
            *(variant.judge.ajudge(request) for variant in self.variants)
        )
        return self._combine(case, request, list(results))

    def _decide(self, votes: dict[str, str]) -> Decision:
        return decide(votes, rule=self.vote_rule, minimum_agreement=self.minimum_agreement)

    def _group_votes(self, answers: dict[str, str | None]) -> dict[str, str]:
        grouped: dict[str, list[str | None]] = {}
        for variant in self.variants:
            grouped.setdefault(variant.group, []).append(answers.get(variant.name))
        return {group: group_vote(samples) for group, samples in grouped.items()}

    def _combine(
        self, case: EvaluationCase, request: JudgeRequest, results: list[JudgeResult]
    ) -> MetricResult:
        members = [
            judge_metric_result(
                variant.name, request, result, case.producer, identity=variant.identity
            )
            for variant, result in zip(self.variants, results, strict=True)
        ]
        verdicts: dict[str, str | None] = {
            variant.name: member.verdict
            for variant, member in zip(self.variants, members, strict=True)
        }
        group_votes = self._group_votes(verdicts)
        decision = self._decide(group_votes)
        items, consensus = self._vote_items(request, results)
        panel_scores = score_judgement(request, consensus)
        verdict = decision.answer if decision.answer in ("pass", "fail") else "uncertain"
        if all(member.verdict == "not_applicable" for member in members):
            verdict = "not_applicable"

        review: list[dict[str, str]] = []
        if not decision.consensus and verdict != "not_applicable":
            review.append({"reason": "no consensus", "detail": _votes_text(group_votes)})
        elif decision.dissent and self.review_on_any_disagreement:
            review.append({"reason": "minority dissent", "detail": _votes_text(group_votes)})
        # The declared identity decides: a function judge reports no real provider.
        relationships = {
            variant.name: producer_relationship(case.producer, variant.identity)
            for variant in self.variants
        }
        if case.producer is not None and "independent" not in relationships.values():
            review.append(
                {
                    "reason": "no independent judge",
                    "detail": f"every judge shares the producer {case.producer.label}",
                }
            )
        for variant_name, relationship in relationships.items():
            if relationship == "same_model":
                review.append({"reason": "self-judging", "detail": variant_name})
        for variant, result in zip(self.variants, results, strict=True):
            if result.output is None:
                review.append(
                    {"reason": "judge failed", "detail": f"{variant.name}: {result.error}"}
                )
        undecided = [
            f"{kind} {key}"
            for kind, decisions in items.items()
            for key, item in decisions.items()
            if not item["consensus"]
        ]
        if undecided:
            review.append(
                {"reason": "items without consensus", "detail": ", ".join(undecided[:20])}
            )

        scores: dict[str, float | None] = dict(panel_scores.scores)
        scores["group_agreement"] = decision.agreement
        samples = [value for value in verdicts.values() if value is not None]
        scores["sample_agreement"] = (
            sum(value == decision.answer for value in samples) / len(samples) if samples else None
        )
        counts = dict(panel_scores.counts)
        counts.update(
            {
                "variants": len(self.variants),
                "groups": len(group_votes),
                "failed_variants": sum(result.output is None for result in results),
                "review_items": len(review),
            }
        )
        usage = total_usage(result.usage for result in results)
        details = {
            "panel": self.panel_spec(),
            "panel_sha256": self.panel_sha256,
            "instructions_sha256": request.instructions_sha256,
            "instructions": request.instructions,
            "group_votes": group_votes,
            "decision": {
                "answer": decision.answer,
                "consensus": decision.consensus,
                "dissent": decision.dissent,
                "agreement": decision.agreement,
            },
            "variants": [
                {
                    **variant.spec(),
                    "status": result.status,
                    "verdict": member.verdict,
                    "scores": member.scores,
                    "producer_relationship": relationships[variant.name],
                    "usage": result.usage.as_metrics(),
                    "notes": member.notes,
                }
                for variant, result, member in zip(self.variants, results, members, strict=True)
            ],
            "items": items,
            "consensus": consensus.model_dump(mode="json"),
            "review_items": review,
        }
        return MetricResult(
            name=self.name,
            basis="judge_panel",
            verdict=verdict,
            scores=scores,
            counts=counts,
            details=details,
            notes=[f"{item['reason']}: {item['detail']}" for item in review],
            requires_human_review=bool(review),
            usage=usage.as_metrics(),
        )

    def _vote_items(
        self, request: JudgeRequest, results: list[JudgeResult]
    ) -> tuple[dict[str, dict[str, dict[str, Any]]], JudgeOutput]:
        """Per-claim and per-criterion votes, and the consensus answer they give."""
        outputs = {
            variant.name: result.output
            for variant, result in zip(self.variants, results, strict=True)
        }
        items: dict[str, dict[str, dict[str, Any]]] = {
            "prediction_claims": {},
            "reference_claims": {},
            "rubric": {},
        }
        prediction_claims = []
        for claim_id in request.prediction_claim_ids():
            answers = {
                name: _first(output.prediction_claims, claim_id) if output else None
                for name, output in outputs.items()
            }
            item = self._item(answers)
            items["prediction_claims"][claim_id] = item
            prediction_claims.append(
                PredictionClaim(
                    claim_id=claim_id,
                    verdict=item["answer"] if item["consensus"] else _UNSURE_PREDICTION,
                )
            )
        reference_claims = []
        for claim_id in request.reference_claim_ids():
            answers = {
                name: _first(output.reference_claims, claim_id) if output else None
                for name, output in outputs.items()
            }
            item = self._item(answers)
            items["reference_claims"][claim_id] = item
            reference_claims.append(
                ReferenceClaim(
                    claim_id=claim_id,
                    verdict=item["answer"] if item["consensus"] else _UNSURE_REFERENCE,
                )
            )
        criteria: dict[str, str] = {}
        for output in outputs.values():
            for result in output.rubric_results if output else ():
                criteria.setdefault(_criterion_key(result.criterion), result.criterion)
        rubric_results = []
        for key, criterion in criteria.items():
            answers = {
                name: next(
                    (
                        result.verdict
                        for result in output.rubric_results
                        if _criterion_key(result.criterion) == key
                    ),
                    None,
                )
                if output
                else None
                for name, output in outputs.items()
            }
            item = self._item(answers)
            items["rubric"][criterion] = item
            rubric_results.append(
                RubricResult(
                    criterion=criterion,
                    verdict=item["answer"] if item["consensus"] else "uncertain",
                )
            )
        consensus = JudgeOutput(
            summary="panel consensus",
            prediction_claims=prediction_claims,
            reference_claims=reference_claims,
            rubric_results=rubric_results,
        )
        return items, consensus

    def _item(self, answers: dict[str, str | None]) -> dict[str, Any]:
        group_votes = self._group_votes(answers)
        decision = self._decide(group_votes)
        return {
            "answer": decision.answer,
            "consensus": decision.consensus,
            "agreement": decision.agreement,
            "group_votes": group_votes,
            "samples": answers,
        }


def _first(
    claims: Sequence[PredictionClaim] | Sequence[ReferenceClaim], claim_id: str
) -> str | None:
    for claim in claims:
        if claim.claim_id == claim_id:
            return claim.verdict
    return None


def _criterion_key(text: str) -> str:
    return " ".join(text.casefold().split())


def _votes_text(votes: dict[str, str]) -> str:
    return ", ".join(f"{group}={vote}" for group, vote in votes.items())
