"""What ground-truth generation produces, shared by the panel, the adjudicator, the
union, review files and approvals.

A generation is *provisional*: its reference has ``authority="generated"``. Only an
approval (see :mod:`docevals_mlflow.groundtruth.approval`) turns reviewed content into
``authority="ground_truth"``.

Sources are described by id, kind, file *name* and SHA-256, never by a local path,
so that a generation report or review file can be shared without leaking the
machine's directory layout.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, Literal

from pydantic import Field

from docevals_mlflow.core.artifacts import ReferenceArtifact, artifact_from_value
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.literals import ArtifactKind, Authority
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.reports import reference_digest
from docevals_mlflow.judges.usage import Usage

GENERATION_SCHEMA_VERSION = 1

ProviderStatus = Literal["ok", "repaired", "malformed", "refused", "truncated", "error"]

DisagreementReason = Literal[
    "conflict",
    "tie",
    "omitted_by_some",
    "omitted_by_all",
    "too_few_voters",
    "adjudication_unresolved",
]
"""Why a field needs a decision: ``conflict`` (different values, none reached
``minimum_agreement``); ``tie`` (the best values are tied; never settled silently and
never by provider order); ``omitted_by_some`` (some gave a value, others omitted the
field); ``omitted_by_all`` (an expected field nobody gave); ``too_few_voters`` (fewer
than two independent provider groups answered usably, so nothing could be agreed);
``adjudication_unresolved`` (a second read did not settle it)."""


class SourceSummary(DocEvalsModel):
    """One source a generation read, as it is safe to share: no local path."""

    id: str
    kind: ArtifactKind
    authority: Authority
    name: str
    """The file name (or the id, for inline sources)."""
    media_type: str | None = None
    sha256: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


def summarize_source(reference: ReferenceArtifact) -> SourceSummary:
    """The shareable description of one source."""
    return SourceSummary(
        id=reference.id,
        kind=reference.kind,
        authority=reference.authority,
        name=reference.id if reference.is_inline else PurePath(reference.path).name,
        media_type=reference.media_type,
        sha256=reference_digest(reference),
        metadata=dict(reference.metadata),
    )


class GeneratedClaim(DocEvalsModel):
    """One value a provider read from the sources."""

    path: str
    """The field path in the package's notation (``$.total``, ``$.items[0].sku``)."""
    expected_value: Any = None
    evidence: str = ""
    """Where in the sources the value was read (a quote or a description)."""
    reference_id: str | None = None
    """The id of the source it was read from."""
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class ProviderGeneration(DocEvalsModel):
    """What one provider answered, and how that went."""

    provider: str
    """The panel's label for this generator (unique within a panel)."""
    model: str = ""
    group: str = ""
    """Provider/model group; providers in one group count as one independent reader."""
    status: ProviderStatus = "ok"
    error: str | None = None
    raw_text: str | None = None
    """The provider's text when it could not be used."""
    claims: list[GeneratedClaim] = Field(default_factory=list)
    duplicate_paths: list[str] = Field(default_factory=list)
    """Paths this provider gave more than once (the first value is kept)."""
    unexpected_paths: list[str] = Field(default_factory=list)
    """Paths given that were not among the expected fields (kept out of the vote)."""
    invalid_paths: list[str] = Field(default_factory=list)
    """Paths that are not valid field paths, as given (kept out of the vote)."""
    usage: Usage = Field(default_factory=Usage)
    latency_seconds: float = 0.0
    cached: bool = False
    """Whether the answer came from a generation cache (its usage is then zero)."""

    @property
    def usable(self) -> bool:
        """Whether the provider's claims take part in the vote."""
        return self.status in ("ok", "repaired")


class Candidate(DocEvalsModel):
    """One distinct (normalised) value proposed for a path, and who proposed it."""

    value: Any
    """The value as the first proposing provider (in label order) wrote it."""
    providers: list[str]
    votes: float
    """Independent votes: providers in one group share a vote."""
    evidence: list[str] = Field(default_factory=list)
    reference_ids: list[str] = Field(default_factory=list)


class ConsensusRow(DocEvalsModel):
    """A field the providers agreed on."""

    path: str
    expected_value: Any
    agreement: float
    """Share of voters (omissions included) behind the accepted value."""
    providers: list[str]
    evidence: list[str] = Field(default_factory=list)
    reference_ids: list[str] = Field(default_factory=list)
    resolved_by: Literal["panel", "adjudication", "union"] = "panel"


class Disagreement(DocEvalsModel):
    """A field that needs a human (or an adjudicator) to decide."""

    path: str
    reason: DisagreementReason
    candidates: list[Candidate] = Field(default_factory=list)
    omitted_by: list[str] = Field(default_factory=list)
    agreement: float = 0.0
    """Share of voters behind the best candidate."""


class GenerationReport(DocEvalsModel):
    """The outcome of one generation (panel, adjudication or union) for one case."""

    schema_version: int = GENERATION_SCHEMA_VERSION
    case_id: str
    stage: Literal["panel", "adjudication", "union"] = "panel"
    extraction_instruction: str = ""
    instructions_sha256: str = ""
    expected_fields: list[str] = Field(default_factory=list)
    minimum_agreement: float = 1.0
    sources: list[SourceSummary] = Field(default_factory=list)
    providers: list[ProviderGeneration] = Field(default_factory=list)
    consensus: list[ConsensusRow] = Field(default_factory=list)
    disagreements: list[Disagreement] = Field(default_factory=list)
    overall_agreement: float = 0.0
    """Mean agreement over the expected fields (unanimous omission counts as 0)."""
    parent_sha256: str | None = None
    """For adjudication and union: the digest of the generation they started from."""
    usage: Usage = Field(default_factory=Usage)

    @property
    def requires_human_review(self) -> bool:
        """True while any field is disputed or no provider produced a usable answer.

        (An adjudication with nothing to re-read asks no provider and lists none; it
        inherits an undisputed consensus and needs no review.)"""
        if self.disagreements:
            return True
        return bool(self.providers) and not any(p.usable for p in self.providers)

    @property
    def omitted_by_all(self) -> list[str]:
        """Expected fields no provider gave a value for."""
        return [d.path for d in self.disagreements if d.reason == "omitted_by_all"]

    @property
    def digest(self) -> str:
        """SHA-256 of the report's canonical JSON (what an approval points back to)."""
        return sha256_json(self.model_dump(mode="json"))

    def rows(self) -> list[dict[str, Any]]:
        """The consensus as path-table rows (``path``, ``expected``)."""
        return [{"path": row.path, "expected": row.expected_value} for row in self.consensus]

    @property
    def provisional_reference(self) -> ReferenceArtifact:
        """The consensus as a reference with ``authority="generated"``.

        Scores against it measure agreement with a provisional AI reference, not
        accuracy.
        """
        return artifact_from_value(
            self.rows(),
            authority="generated",
            artifact_id=f"{self.case_id}-generated",
            metadata={
                "generation_sha256": self.digest,
                "stage": self.stage,
                "requires_human_review": self.requires_human_review,
                "providers": [p.provider for p in self.providers],
            },
        )
