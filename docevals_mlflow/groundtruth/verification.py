"""Verifying an approval: the rows are the approved ones, and the record is signed
(by the trusted key, when one is pinned) and unchanged since."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from docevals_mlflow.errors import ApprovalError
from docevals_mlflow.groundtruth.key_loading import resolve_public_key
from docevals_mlflow.groundtruth.keys import PublicKey, PublicKeyLike
from docevals_mlflow.groundtruth.records import (
    ApprovalRecord,
    ApprovalVerification,
    content_digest,
)
from docevals_mlflow.groundtruth.signing import decode_base64, verify


def verify_approval(
    record: ApprovalRecord | Mapping[str, Any],
    content_rows: Iterable[Mapping[str, Any]],
    public_key: PublicKeyLike | None = None,
    *,
    require_signature: bool = True,
) -> ApprovalVerification:
    """Check that ``content_rows`` are what ``record`` approved, and its signature.

    Args:
        record: the approval record (re-validated here).
        content_rows: the rows as they are now.
        public_key: the trusted key (path, PEM/OpenSSH text, base64); default
            ``DOCEVALS_PUBLIC_KEY``. Without one, the signature is checked against
            the key embedded in the record and the result has ``trusted=False``.
            With one, a signature is required.
        require_signature: refuse unsigned records (default). ``False`` accepts
            them after the content check, with ``signed=False`` in the result.

    Raises:
        ApprovalError: with ``reason`` ``content_digest`` (the rows are not the
            approved ones), ``unsigned``, ``record`` (malformed signing fields),
            ``key_mismatch`` (signed by another key than the trusted one) or
            ``signature`` (the record was changed after signing, or the signature is
            someone else's).
    """
    checked = ApprovalRecord.model_validate(
        record.model_dump(mode="json") if isinstance(record, ApprovalRecord) else record
    )
    return verify_record(
        checked, list(content_rows), resolve_public_key(public_key), require_signature
    )


def verify_record(
    record: ApprovalRecord,
    rows: Sequence[Mapping[str, Any]],
    trusted: PublicKey | None,
    require_signature: bool,
) -> ApprovalVerification:
    """:func:`verify_approval` for a record already validated and a key already loaded."""
    digest = content_digest([dict(row) for row in rows])
    if digest != record.content_sha256:
        raise ApprovalError(
            f"content digest mismatch: the rows hash to {digest}, the approval record says "
            f"{record.content_sha256} (the content was changed after approval)",
            reason="content_digest",
        )
    if record.signature is None:
        if trusted is not None:
            raise ApprovalError(
                f"unsigned record: a trusted public key ({trusted.key_id}) was given, but the "
                "approval carries no signature",
                reason="unsigned",
            )
        if require_signature:
            raise ApprovalError(
                "unsigned record: the approval carries no signature (sign approvals with "
                "--signing-key or DOCEVALS_SIGNING_KEY, or accept unsigned ones explicitly)",
                reason="unsigned",
            )
        return ApprovalVerification(signed=False)
    if record.public_key is None or record.key_id is None:  # the model refuses this too
        raise ApprovalError("the signature comes without key_id or public_key", reason="record")
    embedded = PublicKey(decode_base64(record.public_key, 32, "public_key", reason="record"))
    if embedded.key_id != record.key_id:
        raise ApprovalError(
            f"record key_id {record.key_id} is not the id of its public_key "
            f"({embedded.key_id}); the record was altered",
            reason="record",
        )
    if trusted is not None and trusted.key_id != record.key_id:
        raise ApprovalError(
            f"key mismatch: signed by key {record.key_id}, but the trusted key is {trusted.key_id}",
            reason="key_mismatch",
        )
    verify(record.signed_payload(), record.signature, embedded)
    return ApprovalVerification(signed=True, key_id=record.key_id, trusted=trusted is not None)
