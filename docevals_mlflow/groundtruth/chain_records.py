"""The data of an approval chain: one person's signature on one act, and the chain an
approval record carries.

Data only (signing and checking live in
:mod:`~docevals_mlflow.groundtruth.approval_chain`), so reviewer-layer files can
carry an :class:`ActSignature` without importing any signing code.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Literal

from pydantic import Field, field_validator

from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.groundtruth.layer_records import check_person

Role = Literal["preparer", "reviewer", "adjudicator", "approver"]
"""A role in the chain: the preparer vouches for the review file, reviewers and the
adjudicator for their layers, the approver for the approval record."""
ROLES: tuple[Role, ...] = ("preparer", "reviewer", "adjudicator", "approver")

_SHA256 = re.compile(r"[0-9a-f]{64}")
_UTC_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z")


def _check_sha256(value: str) -> str:
    if not _SHA256.fullmatch(value):
        raise ValueError("expected a SHA-256 digest: 64 lowercase hexadecimal characters")
    return value


def _check_utc(value: str) -> str:
    try:
        ok = bool(_UTC_TIME.fullmatch(value)) and bool(_dt.datetime.fromisoformat(value))
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{value!r} is not a UTC time in ISO 8601 with a Z suffix")
    return value


class ActSignature(DocEvalsModel):
    """One person's Ed25519 signature on one act of the chain.

    What is signed is :meth:`signed_payload`: every field but ``signature``, as
    canonical JSON. ``digest`` is the SHA-256 of what the act vouches for: the review
    file (preparer), the person's layer without its signature (reviewer,
    adjudicator) or the approval record without its signatures (approver);
    ``review_sha256`` ties every act to the one review file, so a chain can be
    checked from the approval record alone.
    """

    role: Role
    person: str
    algorithm: Literal["ed25519"] = "ed25519"
    key_id: str
    """The signer's key fingerprint: hex SHA-256 of the raw public key."""
    public_key: str
    """The signer's raw public key, base64."""
    digest: str
    review_sha256: str
    at: str
    """When it was signed: UTC, ISO 8601 with a ``Z``."""
    signature: str

    @field_validator("person")
    @classmethod
    def _person(cls, value: str) -> str:
        return check_person(value)

    @field_validator("key_id", "digest", "review_sha256")
    @classmethod
    def _digest(cls, value: str) -> str:
        return _check_sha256(value)

    @field_validator("at")
    @classmethod
    def _time(cls, value: str) -> str:
        return _check_utc(value)

    def signed_payload(self) -> dict[str, Any]:
        """Everything the signature covers (the act without ``signature``)."""
        return {"docevals": "approval-chain", **self.model_dump(mode="json", exclude={"signature"})}


class ApprovalChain(DocEvalsModel):
    """The chain behind an approval: the policy it was checked against and every
    signature, preparer first and approver last."""

    policy_sha256: str
    """Fingerprint of the policy (:meth:`ChainPolicy.fingerprint`)."""
    signatures: list[ActSignature] = Field(default_factory=list)
    disputed: list[str] = Field(default_factory=list)
    """Field paths on which the reviewers disagreed (what adjudication had to settle),
    so a verifier can apply ``adjudication: on_disagreement`` without the layers."""

    @field_validator("policy_sha256")
    @classmethod
    def _digest(cls, value: str) -> str:
        return _check_sha256(value)

    def acts(self, role: Role) -> list[ActSignature]:
        """The signatures of ``role``, in chain order."""
        return [act for act in self.signatures if act.role == role]
