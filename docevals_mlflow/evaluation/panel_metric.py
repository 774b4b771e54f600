"""A metric decided by a model-balanced panel of judges."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.evaluation.judge_variant import JudgeVariant as JudgeVariant
from docevals_mlflow.evaluation.llm_metric import judge_metric_result, producer_relationship
from docevals_mlflow.judges.judge import JudgeResult, run_sync
from docevals_mlflow.judges.output import (
    JudgeOutput,
    PredictionClaim,
    ReferenceClaim,
    RubricResult,
)
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.scoring import JudgementScores, score_judgement
from docevals_mlflow.judges.usage import total_usage
from docevals_mlflow.judges.voting import Decision, VoteRule, decide, group_vote

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
        variants: Sequence[JudgeVariant] | Mapping[str, Any],
        *,
        name: str = "judge_panel",
        vote_rule: VoteRule = "majority",
        minimum_agreement: float | None = None,
        review_on_any_disagreement: bool = True,
    ) -> None:
        self._unidentified: set[str] = set()
        if isinstance(variants, Mapping):
            variants = self._from_mapping(variants)
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

    def _from_mapping(self, judges: Mapping[str, Any]) -> list[JudgeVariant]:
        variants = []
        for label, judge in judges.items():
            declared = getattr(judge, "describe", None)
            if not callable(declared) or declared().get("provider") in (None, "custom"):
                # No provider of its own: its relation to the producer is not known.
                self._unidentified.add(str(label))
            variants.append(JudgeVariant(name=str(label), judge=judge, sample_group=str(label)))
        return variants

    def _relationship(self, case: EvaluationCase, variant: JudgeVariant) -> str:
        if case.producer is None or variant.name in self._unidentified:
            return "unknown"
        return producer_relationship(case.producer, variant.identity)

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
        # The declared identity decides: a function judge reports no real provider.
        relationships = {
            variant.name: self._relationship(case, variant) for variant in self.variants
        }
        review = self._review_items(
            case, verdict, decision, group_votes, relationships, results, items
        )

        scores, counts = self._figures(panel_scores, decision, verdicts, group_votes, results)
        counts["review_items"] = len(review)
        counts.update(self._relationship_groups(relationships))
        usage = total_usage(result.usage for result in results)
        details = {
            **self._details(request, decision, group_votes, relationships, results, members),
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

    def _figures(
        self,
        panel_scores: JudgementScores,
        decision: Decision,
        verdicts: Mapping[str, str | None],
        group_votes: Mapping[str, str],
        results: list[JudgeResult],
    ) -> tuple[dict[str, float | None], dict[str, int]]:
        """The panel's scores (the consensus items' and the agreement) and counts."""
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
            }
        )
        return scores, counts

    def _relationship_groups(self, relationships: Mapping[str, str]) -> dict[str, int]:
        """Voting groups by their relation to the producer (a group is self-judging
        when any of its samples shares the producer's provider)."""
        kinds = {
            "independent_model_groups": {"independent"},
            "self_judging_model_groups": {"same_model", "same_provider"},
            "unknown_relationship_model_groups": {"unknown"},
        }
        return {
            key: len(
                {
                    variant.group
                    for variant in self.variants
                    if relationships[variant.name] in wanted
                }
            )
            for key, wanted in kinds.items()
        }

    def _details(
        self,
        request: JudgeRequest,
        decision: Decision,
        group_votes: dict[str, str],
        relationships: Mapping[str, str],
        results: list[JudgeResult],
        members: list[MetricResult],
    ) -> dict[str, Any]:
        """The panel, its votes and each variant's answer, for the result's details."""
        return {
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
        }

    def _review_items(
        self,
        case: EvaluationCase,
        verdict: str,
        decision: Decision,
        group_votes: dict[str, str],
        relationships: Mapping[str, str],
        results: list[JudgeResult],
        items: dict[str, dict[str, dict[str, Any]]],
    ) -> list[dict[str, str]]:
        """Why a person should look at this panel's result, in a fixed order."""
        review: list[dict[str, str]] = []
        if not decision.consensus and verdict != "not_applicable":
            review.append({"reason": "no consensus", "detail": _votes_text(group_votes)})
        elif decision.dissent and self.review_on_any_disagreement:
            review.append({"reason": "minority dissent", "detail": _votes_text(group_votes)})
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
        return review

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
        prediction_claims = [
            PredictionClaim(claim_id=claim_id, verdict=verdict)
            for claim_id, verdict in self._claim_votes(
                request.prediction_claim_ids(),
                {
                    name: output.prediction_claims if output else None
                    for name, output in outputs.items()
                },
                items["prediction_claims"],
                _UNSURE_PREDICTION,
            )
        ]
        reference_claims = [
            ReferenceClaim(claim_id=claim_id, verdict=verdict)
            for claim_id, verdict in self._claim_votes(
                request.reference_claim_ids(),
                {
                    name: output.reference_claims if output else None
                    for name, output in outputs.items()
                },
                items["reference_claims"],
                _UNSURE_REFERENCE,
            )
        ]
        consensus = JudgeOutput(
            summary="panel consensus",
            prediction_claims=prediction_claims,
            reference_claims=reference_claims,
            rubric_results=self._rubric_votes(outputs, items["rubric"]),
        )
        return items, consensus

    def _claim_votes(
        self,
        claim_ids: Iterable[str],
        claims: dict[str, Sequence[PredictionClaim] | Sequence[ReferenceClaim] | None],
        items: dict[str, dict[str, Any]],
        unsure: str,
    ) -> list[tuple[str, Any]]:
        """Each claim's consensus verdict (``unsure`` without one); fills ``items``."""
        verdicts: list[tuple[str, Any]] = []
        for claim_id in claim_ids:
            answers: dict[str, str | None] = {
                name: _first(given, claim_id) if given is not None else None
                for name, given in claims.items()
            }
            item = self._item(answers)
            items[claim_id] = item
            verdicts.append((claim_id, item["answer"] if item["consensus"] else unsure))
        return verdicts

    def _rubric_votes(
        self, outputs: dict[str, JudgeOutput | None], items: dict[str, dict[str, Any]]
    ) -> list[RubricResult]:
        """Each criterion's consensus verdict (criteria matched case- and
        space-insensitively, named as first written); fills ``items``."""
        criteria: dict[str, str] = {}
        for output in outputs.values():
            for result in output.rubric_results if output else ():
                criteria.setdefault(_criterion_key(result.criterion), result.criterion)
        rubric_results = []
        for key, criterion in criteria.items():
            answers: dict[str, str | None] = {
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
            items[criterion] = item
            rubric_results.append(
                RubricResult(
                    criterion=criterion,
                    verdict=item["answer"] if item["consensus"] else "uncertain",
                )
            )
        return rubric_results

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
