"""This package's generation reports in the seed's shapes (``visual_evals.ground_truth``).

The seed's reports are kept as plain data (disagreements and resolutions as dicts);
each also carries the package's own report (``generation``), which is what the
adjudicator, the union and review files work from.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from docevals_mlflow.compat.visual_evals.usage import TokenUsage
from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.groundtruth.models import (
    Disagreement,
    GeneratedClaim,
    GenerationReport,
    ProviderGeneration,
)


class GeneratedGroundTruthOutput(BaseModel):
    """A generator's answer: a summary and the values it read."""

    model_config = ConfigDict(extra="forbid")

    summary: str = ""
    claims: list[GeneratedClaim]


class GroundTruthGenerationReport(BaseModel):
    """Candidates, consensus and the review queue of one generation (seed shape)."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    providers: list[str]
    candidates: dict[str, GeneratedGroundTruthOutput]
    provisional_reference: ReferenceArtifact
    overall_agreement: float | None
    disagreements: list[dict[str, Any]]
    requires_human_review: bool
    usage: list[TokenUsage] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    generation: GenerationReport | None = None
    """This package's report, which the adjudicator, union and review files use."""

    def to_markdown(self) -> str:
        """The consensus and the human resolution queue as Markdown."""
        from docevals_mlflow.compat.visual_evals._markdown import generation_markdown

        return generation_markdown(self)


class GroundTruthAdjudicationReport(BaseModel):
    """A re-read or union of a generation's disputed fields (seed shape)."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    providers: list[str]
    targeted_generation: GroundTruthGenerationReport | None = None
    resolved_reference: ReferenceArtifact
    resolutions: list[dict[str, Any]]
    unresolved: list[dict[str, Any]]
    requires_human_review: bool
    usage: list[TokenUsage] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    generation: GenerationReport | None = None
    """This package's report (stage ``adjudication`` or ``union``)."""

    def to_markdown(self) -> str:
        """Resolved and unresolved fields as Markdown."""
        from docevals_mlflow.compat.visual_evals._markdown import resolution_markdown

        return resolution_markdown(self)


GENERATION_NOTES = [
    "The consensus reference is AI-generated and provisional, not human ground truth.",
    "Provider agreement is not accuracy; correlated model errors remain possible.",
    "Resolve every disagreement before promoting the reference to authoritative ground truth.",
]


def _source_context(report: GenerationReport) -> dict[str, dict[str, Any]]:
    """Each source by id: kind, file name, media type, digest and metadata (never a
    local path)."""
    return {
        source.id: {
            "kind": source.kind,
            "name": source.name,
            "media_type": source.media_type,
            "sha256": source.sha256,
            "metadata": dict(source.metadata),
        }
        for source in report.sources
    }


def _claim_of(provider: ProviderGeneration, path: str) -> GeneratedClaim | None:
    return next((claim for claim in provider.claims if claim.path == path), None)


def provider_candidates(report: GenerationReport, path: str) -> dict[str, dict[str, Any]]:
    """What each provider said about ``path``: ``present`` (with its claim),
    ``missing``, or ``not_voting`` (its answer was unusable)."""
    found: dict[str, dict[str, Any]] = {}
    for provider in report.providers:
        if not provider.usable:
            found[provider.provider] = {"status": "not_voting", "provider_status": provider.status}
            continue
        claim = _claim_of(provider, path)
        found[provider.provider] = (
            {"status": "missing"}
            if claim is None
            else {"status": "present", **claim.model_dump(mode="json")}
        )
    return found


def disagreement_dict(report: GenerationReport, item: Disagreement) -> dict[str, Any]:
    """One disputed field as the seed listed it, with this package's reason and
    candidates added."""
    context = _source_context(report)
    cited = sorted({ref for candidate in item.candidates for ref in candidate.reference_ids})
    return {
        "path": item.path,
        "agreement": item.agreement,
        "provider_candidates": provider_candidates(report, item.path),
        "cited_references": cited,
        "reference_context": {ref: context.get(ref, {}) for ref in cited} or context,
        "reason": "candidate_ground_truth_disagreement",
        "disagreement_reason": item.reason,
        "candidates": [candidate.model_dump(mode="json") for candidate in item.candidates],
        "omitted_by": list(item.omitted_by),
    }


def seed_reference(report: GenerationReport, **metadata: Any) -> ReferenceArtifact:
    """The report's provisional reference with the seed's metadata keys added."""
    reference = report.provisional_reference
    return reference.model_copy(
        update={
            "metadata": {
                **reference.metadata,
                "overall_agreement": report.overall_agreement,
                "source_references": _source_context(report),
                **metadata,
            }
        }
    )


def usage_list(report: GenerationReport) -> list[TokenUsage]:
    """One record per provider that made requests."""
    return [
        TokenUsage.from_usage(
            provider=(provider.group or provider.provider).split(":", 1)[0],
            model=provider.model or provider.provider,
            usage=provider.usage,
        )
        for provider in report.providers
        if provider.usage.requests
    ]


def seed_generation(report: GenerationReport) -> GroundTruthGenerationReport:
    """A panel's report in the seed's shape."""
    return GroundTruthGenerationReport(
        case_id=report.case_id,
        providers=[provider.provider for provider in report.providers],
        candidates={
            provider.provider: GeneratedGroundTruthOutput(
                summary=(
                    f"status {provider.status}" + (f": {provider.error}" if provider.error else "")
                ),
                claims=list(provider.claims),
            )
            for provider in report.providers
        },
        provisional_reference=seed_reference(report),
        overall_agreement=report.overall_agreement,
        disagreements=[disagreement_dict(report, item) for item in report.disagreements],
        requires_human_review=report.requires_human_review,
        usage=usage_list(report),
        notes=list(GENERATION_NOTES),
        generation=report,
    )


def resolutions(
    before: GenerationReport, after: GenerationReport, reason: str, **extra: Any
) -> list[dict[str, Any]]:
    """The fields ``after`` settled that ``before`` left disputed (decision ``set``)."""
    disputed = {item.path for item in before.disagreements}
    return [
        {
            "path": row.path,
            "decision": "set",
            "expected": row.expected_value,
            "evidence": list(row.evidence),
            "reason": reason,
            "supporting_providers": list(row.providers),
            **extra,
        }
        for row in after.consensus
        if row.path in disputed
    ]


def seed_resolution(
    before: GenerationReport,
    after: GenerationReport,
    *,
    reason: str,
    policy: str,
    notes: list[str],
    **extra: Any,
) -> GroundTruthAdjudicationReport:
    """An adjudication or union in the seed's shape."""
    unresolved = []
    for item in after.disagreements:
        entry = disagreement_dict(after, item)
        entry["adjudication_provider_candidates"] = entry["provider_candidates"]
        entry["adjudication_reason"] = item.reason
        unresolved.append(entry)
    settled = resolutions(before, after, reason, **extra)
    return GroundTruthAdjudicationReport(
        case_id=after.case_id,
        providers=[provider.provider for provider in after.providers],
        resolved_reference=seed_reference(
            after,
            resolution_policy=policy,
            resolution_count=len(settled),
            **{f"resolution_{key}": value for key, value in extra.items()},
        ),
        resolutions=settled,
        unresolved=unresolved,
        requires_human_review=after.requires_human_review,
        usage=usage_list(after),
        notes=notes,
        generation=after,
    )
