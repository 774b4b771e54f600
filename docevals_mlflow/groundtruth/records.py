"""The files of the review and approval flow: review files, approval records and
approved ground truth.

Data only; writing, editing, signing and verifying live in
:mod:`~docevals_mlflow.groundtruth.review` and
:mod:`~docevals_mlflow.groundtruth.approval`. All three are user-facing files, so
unknown keys are refused (``extra="forbid"``) with the path of the offending key.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import re
from typing import Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from docevals_mlflow.core.fingerprints import canonical_json, sha256_json
from docevals_mlflow.core.model import DocEvalsModel, FrozenModel
from docevals_mlflow.core.paths import format_path, parse_path
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.chain_records import ApprovalChain
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

_SHA256 = re.compile(r"[0-9a-f]{64}")
_UTC_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z")


@functools.lru_cache(maxsize=65536)
def canonical_field_path(text: str) -> str:
    """A field path in its one canonical spelling (``total`` and ``$['total']`` give
    ``$.total``), so that two spellings of one field are recognised as the same."""
    return format_path(parse_path(text))


def _check_sha256(value: str | None) -> str | None:
    if value is not None and not _SHA256.fullmatch(value):
        raise ValueError("expected a SHA-256 digest: 64 lowercase hexadecimal characters")
    return value


def _plain_scalar(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    return kind is float and math.isfinite(value)


def _check_entries(kind: str, entries: list[Any], seen: dict[str, str]) -> None:
    for index, entry in enumerate(entries):
        where = f"{kind}[{index}]"
        try:
            key = canonical_field_path(entry.path)
        except InputError as exc:
            raise InputError(exc.message, path=f"{where}.path") from None
        if key in seen:
            raise InputError(
                f"field {entry.path!r} also appears at {seen[key]}",
                path=f"{where}.path",
                expected="each field path once, in claims or in review_items",
            )
        seen[key] = where
    values = [entry.expected for entry in entries]
    if all(_plain_scalar(value) for value in values):
        return  # what canonical_json accepts, seen without writing it out
    try:
        # One pass over all values; only a failure is worth locating entry by entry.
        canonical_json(values)
    except InputError:
        for index, entry in enumerate(entries):
            try:
                canonical_json(entry.expected)
            except InputError as exc:
                raise InputError(
                    f"{entry.path}: {exc.message}",
                    path=f"{kind}[{index}].expected",
                    expected=exc.expected,
                ) from None
        raise


class ReviewClaim(DocEvalsModel):
    """A row of the content under review (a reviewer may edit ``expected``)."""

    path: str
    expected: Any = None
    agreement: float | None = None
    providers: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    reference_ids: list[str] = Field(default_factory=list)
    resolved_by: Literal["panel", "adjudication", "union"] | None = None
    """Which step accepted the claim (``union`` claims are one-sided: worth a look)."""


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
    claims_sha256: str | None = None
    """Digest of the claims (``path`` and ``expected``) as they were generated, so a
    reviewer's edits of agreed claims can be told apart from the generation's
    (``None`` for files not written from a generation)."""

    _origin_sha256: str | None = PrivateAttr(default=None)
    # SHA-256 of the file bytes this review was loaded from (carried through edits),
    # so rewriting that file is allowed only while nobody else has changed it.

    @field_validator("generation_sha256", "claims_sha256")
    @classmethod
    def _digest(cls, value: str | None) -> str | None:
        return _check_sha256(value)

    @model_validator(mode="after")
    def _consistent(self) -> ReviewFile:
        seen: dict[str, str] = {}
        _check_entries("claims", self.claims, seen)
        _check_entries("review_items", self.review_items, seen)
        for index, item in enumerate(self.review_items):
            where = f"review_items[{index}].expected"
            if item.decision == "set" and is_empty(item.expected):
                raise InputError(
                    f"{item.path}: decision 'set' needs a value in 'expected' "
                    "(to leave the field out, use decision 'omit')",
                    path=where,
                )
            if item.decision == "omit" and not is_empty(item.expected):
                raise InputError(
                    f"{item.path}: decision 'omit' but 'expected' holds a value "
                    "(use decision 'set' to keep the value, or remove it)",
                    path=where,
                )
        if self.status == "approved" and not (self.approved_by or "").strip():
            raise InputError(
                "status is 'approved' but no approver is named",
                path="approved_by",
                expected="the approver's name or e-mail",
            )
        return self

    def __eq__(self, other: object) -> bool:
        # Equal content is equal, wherever it was read from (the private origin
        # digest would otherwise take part in pydantic's comparison).
        if not isinstance(other, ReviewFile):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    def pending(self) -> list[ReviewItem]:
        """Items still ``unresolved``."""
        return [item for item in self.review_items if item.decision == "unresolved"]

    def claim_rows(self) -> list[dict[str, Any]]:
        """The claims as path-table rows, in file order (what ``claims_sha256`` covers)."""
        return [{"path": claim.path, "expected": claim.expected} for claim in self.claims]

    @property
    def claims_edited(self) -> bool | None:
        """Whether the claims differ from the generated ones (``None``: unknown)."""
        if self.claims_sha256 is None:
            return None
        return content_digest(self.claim_rows()) != self.claims_sha256


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
    chain: ApprovalChain | None = None
    """The signed chain behind the approval (preparer, reviewers, adjudicator,
    approver), when it was approved under a policy; ``None`` for a single-signature
    approval, whose files and signed payload then stay exactly as they were."""

    @field_validator("approved_by")
    @classmethod
    def _approver(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must name the approver (it is blank)")
        return value

    @field_validator("approved_at")
    @classmethod
    def _utc_time(cls, value: str) -> str:
        try:
            ok = bool(_UTC_TIME.fullmatch(value)) and bool(_dt.datetime.fromisoformat(value))
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"{value!r} is not a UTC time in ISO 8601 with a Z suffix "
                "(such as 2026-01-31T09:30:00Z)"
            )
        return value

    @field_validator("content_sha256", "generation_sha256", "review_sha256", "key_id")
    @classmethod
    def _digest(cls, value: str | None) -> str | None:
        return _check_sha256(value)

    @model_validator(mode="after")
    def _signing_fields(self) -> ApprovalRecord:
        if self.signature is not None:
            missing = [
                name
                for name in ("algorithm", "key_id", "public_key")
                if getattr(self, name) is None
            ]
            if missing:
                raise ValueError(f"a signature needs {', '.join(missing)} as well")
        return self

    @model_serializer(mode="wrap")
    def _without_empty_chain(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A record without a chain serialises (and so is signed) exactly as before
        # chains existed: old signatures keep verifying, old files keep their bytes.
        data: dict[str, Any] = handler(self)
        if self.chain is None:
            data.pop("chain", None)
        return data

    def signed_payload(self) -> dict[str, Any]:
        """Everything the signature covers: the record without ``signature`` (and,
        in a chain, without the approver's own entry, which repeats that signature)."""
        data = self.model_dump(mode="json", exclude={"signature"})
        if self.chain is not None:
            data["chain"]["signatures"] = [
                act for act in data["chain"]["signatures"] if act["role"] != "approver"
            ]
        return data

    @property
    def signed(self) -> bool:
        """Whether the record carries a signature."""
        return self.signature is not None


class ApprovalVerification(FrozenModel):
    """What was checked when approved ground truth was loaded or verified."""

    signed: bool
    """The record carries a signature, and it matched the record and the content."""
    key_id: str | None = None
    """The signing key's id (SHA-256 of its raw public key), when signed."""
    trusted: bool = False
    """The signature was checked against a public key the caller supplied (argument
    or ``DOCEVALS_PUBLIC_KEY``). ``False`` means it was checked only against the key
    embedded in the record, which proves integrity but not who signed."""


class ApprovedGroundTruth(DocEvalsModel):
    """An approved case: its rows and the record that vouches for them."""

    schema_version: int = APPROVAL_SCHEMA_VERSION
    case_id: str = Field(min_length=1)
    rows: list[dict[str, Any]]
    """Path-table rows: ``{"path": ..., "expected": ...}``."""
    record: ApprovalRecord

    _verification: ApprovalVerification | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> ApprovedGroundTruth:
        if self.case_id != self.record.case_id:
            raise InputError(
                f"case_id {self.case_id!r} differs from the approval record's "
                f"{self.record.case_id!r}",
                path="case_id",
            )
        seen: dict[str, int] = {}
        for index, row in enumerate(self.rows):
            if set(row) != {"path", "expected"} or not isinstance(row["path"], str):
                raise InputError(
                    f"keys {sorted(row)}",
                    path=f"rows[{index}]",
                    expected='{"path": <field path text>, "expected": <value>}',
                )
            try:
                key = canonical_field_path(row["path"])
            except InputError as exc:
                raise InputError(exc.message, path=f"rows[{index}].path") from None
            if key in seen:
                raise InputError(
                    f"field {row['path']!r} also appears at rows[{seen[key]}]",
                    path=f"rows[{index}].path",
                )
            seen[key] = index
        return self

    def __eq__(self, other: object) -> bool:
        # Equal content is equal, verified or not.
        if not isinstance(other, ApprovedGroundTruth):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    @property
    def content_sha256(self) -> str:
        """The digest of the rows as they are now (compare with the record's)."""
        return content_digest(self.rows)

    @property
    def verification(self) -> ApprovalVerification | None:
        """What loading checked (``None`` for an object that was never verified)."""
        return self._verification

    @property
    def trusted(self) -> bool:
        """Verified against a public key the caller supplied (see
        :class:`ApprovalVerification`)."""
        return self._verification is not None and self._verification.trusted


def content_digest(rows: list[dict[str, Any]]) -> str:
    """SHA-256 of approved rows: canonical JSON, so key order does not matter."""
    return sha256_json(rows)
