"""The files of the review and approval flow: review files, approval records and
approved ground truth.

Data only; writing, editing, signing and verifying live in
:mod:`~docevals_mlflow.groundtruth.review` and
:mod:`~docevals_mlflow.groundtruth.approval`. All three are user-facing files, so
unknown keys are refused (``extra="forbid"``) with the path of the offending key.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.groundtruth.models import (
    Candidate,
    DisagreementReason,
    ProviderGeneration,
    SourceSummary,
)

REVIEW_SCHEMA_VERSION = 1
APPROVAL_SCHEMA_VERSION = 1

ReviewStatus = Literal["needs_review", "approved"]
Decision = Literal["unresolved", "set", "omit"]


class ReviewClaim(DocEvalsModel):
    """A row of the content under review (a reviewer may edit ``expected``)."""

    path: str
    expected: Any = None
    agreement: float | None = None
    providers: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    reference_ids: list[str] = Field(default_factory=list)


class ReviewItem(DocEvalsModel):
    """A disputed field, and the reviewer's decision on it."""

    path: str
    reason: DisagreementReason
    provider_candidates: list[Candidate] = Field(default_factory=list)
    omitted_by: list[str] = Field(default_factory=list)
    decision: Decision = "unresolved"
    expected: Any = None
    """The value to use when ``decision="set"``."""
    notes: str = ""


class ReviewFile(DocEvalsModel):
    """One case's generated content, waiting for (or carrying) human decisions."""

    schema_version: int = REVIEW_SCHEMA_VERSION
    case_id: str = Field(min_length=1)
    status: ReviewStatus = "needs_review"
    approved_by: str | None = None
    approval_notes: str = ""
    generation_sha256: str
    """Digest of the generation report the file was written from."""
    generation_stage: Literal["panel", "adjudication", "union"] = "panel"
    providers: list[ProviderGeneration] = Field(default_factory=list)
    overall_agreement: float = 0.0
    source_references: list[SourceSummary] = Field(default_factory=list)
    claims: list[ReviewClaim] = Field(default_factory=list)
    review_items: list[ReviewItem] = Field(default_factory=list)

    def pending(self) -> list[ReviewItem]:
        """Items still ``unresolved``."""
        return [item for item in self.review_items if item.decision == "unresolved"]


class Resolution(DocEvalsModel):
    """How one disputed field was resolved, as recorded in an approval."""

    path: str
    decision: Literal["set", "omit"]
    expected: Any = None
    notes: str = ""


class ApprovalRecord(DocEvalsModel):
    """Who approved which content, when, from which generation, and a signature.

    ``signature`` is an Ed25519 signature over the canonical JSON of every other
    field (see :meth:`signed_payload`); ``public_key`` is the signer's raw public key
    (base64) and ``key_id`` its SHA-256, so a verifier can tell which key to trust.
    """

    schema_version: int = APPROVAL_SCHEMA_VERSION
    case_id: str = Field(min_length=1)
    approved_by: str = Field(min_length=1)
    approved_at: str
    """UTC time, ISO 8601 with a ``Z`` suffix."""
    approval_notes: str = ""
    content_sha256: str
    """SHA-256 of the canonical JSON of the approved rows."""
    generation_sha256: str | None = None
    """Digest of the generation the content came from (``None`` for human-authored
    content approved directly)."""
    review_sha256: str | None = None
    resolutions: list[Resolution] = Field(default_factory=list)
    algorithm: Literal["ed25519"] | None = None
    key_id: str | None = None
    public_key: str | None = None
    signature: str | None = None

    def signed_payload(self) -> dict[str, Any]:
        """Everything the signature covers: the record without ``signature``."""
        return self.model_dump(mode="json", exclude={"signature"})

    @property
    def signed(self) -> bool:
        """Whether the record carries a signature."""
        return self.signature is not None


class ApprovedGroundTruth(DocEvalsModel):
    """An approved case: its rows and the record that vouches for them."""

    schema_version: int = APPROVAL_SCHEMA_VERSION
    case_id: str = Field(min_length=1)
    rows: list[dict[str, Any]]
    """Path-table rows: ``{"path": ..., "expected": ...}``."""
    record: ApprovalRecord

    @property
    def content_sha256(self) -> str:
        """The digest of the rows as they are now (compare with the record's)."""
        return content_digest(self.rows)


def content_digest(rows: list[dict[str, Any]]) -> str:
    """SHA-256 of approved rows: canonical JSON, so key order does not matter."""
    return sha256_json(rows)
