"""Approval: reviewed content becomes ground truth, with a record anyone can verify.

An :class:`~docevals_mlflow.groundtruth.records.ApprovalRecord` names the approver
and the UTC time, carries the SHA-256 of the approved rows, of the generation they
came from and of the review file, lists how each disputed field was resolved, and is
signed with Ed25519 (:mod:`~docevals_mlflow.groundtruth.signing`) when a signing key
is available (``signing_key=`` or ``DOCEVALS_SIGNING_KEY``).

Verification (:func:`verify_approval`, :func:`load_approved_ground_truth`) proves
that the rows are the ones approved and that the record was not changed since it
was signed. It proves *who* signed only when the public key is pinned: passed as
``public_key=`` or set in ``DOCEVALS_PUBLIC_KEY``. Without a pinned key the
signature is checked against the key embedded in the record, and the result says so
(``ApprovedGroundTruth.trusted`` is ``False``).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docevals_mlflow.core.artifacts import (
    ReferenceArtifact,
    artifact_from_value,
)
from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.errors import ApprovalError, InputError, OutputError
from docevals_mlflow.groundtruth.key_loading import (
    load_signing_key,
    resolve_public_key,
    resolve_signing_key,
)
from docevals_mlflow.groundtruth.keys import PublicKeyLike, SigningKeyLike
from docevals_mlflow.groundtruth.records import (
    APPROVAL_SCHEMA_VERSION,
    ApprovalRecord,
    ApprovedGroundTruth,
    Resolution,
    ReviewFile,
    canonical_field_path,
    content_digest,
)
from docevals_mlflow.groundtruth.review import load_review
from docevals_mlflow.groundtruth.review_rows import (
    decided_rows,
    require_resolved,
    review_digest,
    validated_review,
)
from docevals_mlflow.groundtruth.signing import ALGORITHM
from docevals_mlflow.groundtruth.signing import sign as sign_payload
from docevals_mlflow.groundtruth.verification import verify_approval as verify_approval
from docevals_mlflow.groundtruth.verification import verify_record


def utc_timestamp(now: _dt.datetime | None = None) -> str:
    """``now`` (default: the current time) as ISO 8601 UTC with a ``Z``, to the second.

    Raises:
        InputError: ``now`` has no time zone (a naive time would be ambiguous).
    """
    moment = now if now is not None else _dt.datetime.now(_dt.UTC)
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InputError(
            "the approval time has no time zone", expected="an aware datetime, e.g. in UTC"
        )
    return moment.astimezone(_dt.UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


# --- approving ----------------------------------------------------------------------


def approve_review(
    review: ReviewFile | str | os.PathLike[str],
    approved_by: str | None = None,
    *,
    signing_key: SigningKeyLike | None = None,
    notes: str = "",
    now: _dt.datetime | None = None,
    sign: bool = True,
) -> ApprovedGroundTruth:
    """Approve a review (a :class:`ReviewFile` or its path); nothing is written.

    Args:
        review: the review, validated again here (in-memory edits get no shortcut).
        approved_by: who approves. May be left out when the file itself has
            ``status: approved`` and names ``approved_by``; when both are given
            they must agree.
        signing_key: Ed25519 private key (path, PEM text or
            :class:`~docevals_mlflow.groundtruth.signing.SigningKey`); default
            ``DOCEVALS_SIGNING_KEY``. Without one the record is unsigned (and
            :func:`load_approved_ground_truth` refuses it unless told otherwise).
        sign: ``False`` never signs, even with ``DOCEVALS_SIGNING_KEY`` set.
        notes: approval notes (default: the file's ``approval_notes``).
        now: the approval time (default: now); must be timezone-aware.

    Raises:
        InputError: no approver, approver differing from the file's, unresolved
            items (each named), or an invalid review.
    """
    source: str | None = None
    if isinstance(review, ReviewFile):
        review = validated_review(review)
    else:
        source = str(review)
        review = load_review(review)
    approver = _approver(review, approved_by, source)
    require_resolved(review, source=source)
    rows = decided_rows(review)
    record = ApprovalRecord(
        case_id=review.case_id,
        approved_by=approver,
        approved_at=utc_timestamp(now),
        approval_notes=notes or review.approval_notes,
        content_sha256=content_digest(rows),
        generation_sha256=review.generation_sha256,
        review_sha256=review_digest(review),
        resolutions=_resolutions(review),
    )
    if sign:
        record = sign_if_key_available(record, signing_key)
    elif signing_key is not None:
        raise InputError("a signing key was given with sign=False")
    return ApprovedGroundTruth(case_id=review.case_id, rows=rows, record=record)


def _resolutions(review: ReviewFile) -> list[Resolution]:
    """How each decided review item was resolved, for the approval record."""
    return [
        Resolution(
            path=canonical_field_path(item.path),
            decision=item.decision,
            expected=item.expected if item.decision == "set" else None,
            notes=item.notes,
        )
        for item in review.review_items
        if item.decision != "unresolved"
    ]


def _approver(review: ReviewFile, approved_by: str | None, source: str | None) -> str:
    given = (approved_by or "").strip()
    in_file = (review.approved_by or "").strip() if review.status == "approved" else ""
    if given and in_file and given != in_file:
        raise InputError(
            f"status mismatch: the file is approved by {in_file!r}, but the approver given "
            f"is {given!r}",
            source=source,
            path="approved_by",
            expected="the same approver, or none given (the file's is used)",
        )
    approver = given or in_file
    if not approver:
        raise InputError(
            "no approver: approved_by is empty" + (" or blank" if approved_by else ""),
            source=source,
            path="approved_by",
            expected="the approving person's name or e-mail",
        )
    return approver


def sign_if_key_available(
    record: ApprovalRecord, signing_key: SigningKeyLike | None
) -> ApprovalRecord:
    """The record signed with ``signing_key`` or ``DOCEVALS_SIGNING_KEY``; unchanged
    when neither is set."""
    key = resolve_signing_key(signing_key)
    return record if key is None else sign_record(record, key)


def sign_record(record: ApprovalRecord, key: SigningKeyLike) -> ApprovalRecord:
    """The record with ``algorithm``, ``key_id``, ``public_key`` and ``signature`` set.

    The signature covers :meth:`ApprovalRecord.signed_payload` (every field but the
    signature itself, the key fields included), as canonical JSON.
    """
    signing_key = load_signing_key(key)
    unsigned = record.model_copy(
        update={
            "algorithm": ALGORITHM,
            "key_id": signing_key.key_id,
            "public_key": signing_key.public_key.base64,
            "signature": None,
        }
    )
    signature, _, _ = sign_payload(unsigned.signed_payload(), signing_key)
    return ApprovalRecord.model_validate(
        {**unsigned.model_dump(mode="json"), "signature": signature}
    )


# --- approved files -----------------------------------------------------------------


def load_approved_ground_truth(
    path: str | os.PathLike[str],
    public_key: PublicKeyLike | None = None,
    *,
    require_signature: bool = True,
) -> ApprovedGroundTruth:
    """Read an approved ground-truth file and verify it (see :func:`verify_approval`).

    The result's :attr:`~ApprovedGroundTruth.verification` says what was checked;
    ``trusted`` is ``True`` only when the signature was checked against a key you
    supplied (``public_key=`` or ``DOCEVALS_PUBLIC_KEY``).

    Raises:
        InputFileNotFoundError: no such file.
        InputError: not an approved ground-truth file, or malformed.
        ApprovalError: it fails verification (the message names the file and what
            failed).
    """
    approved = read_approved_file(path)
    source = str(Path(path))
    try:
        trusted = resolve_public_key(public_key)
        verification = verify_record(approved.record, approved.rows, trusted, require_signature)
    except (ApprovalError, InputError) as exc:
        raise exc.located(source=source) from None
    approved._verification = verification
    return approved


def read_approved_file(path: str | os.PathLike[str]) -> ApprovedGroundTruth:
    """An approved ground-truth file, validated but NOT verified (callers verify).

    Raises:
        InputFileNotFoundError: no such file.
        InputError: not an approved ground-truth file, or malformed.
    """
    file_path = Path(path)
    data = load_json_file(file_path, what="approved ground-truth file")
    source = str(file_path)
    if isinstance(data, dict) and "review_items" in data:
        raise InputError(
            "this is a review file, not approved ground truth; approve it first "
            "(docevals approve FILE --approved-by NAME --output APPROVED.json)",
            source=source,
        )
    if isinstance(data, dict):
        version = data.get("schema_version", APPROVAL_SCHEMA_VERSION)
        if isinstance(version, int) and version > APPROVAL_SCHEMA_VERSION:
            raise InputError(
                f"schema_version {version} was written by a newer docevals-mlflow",
                source=source,
                expected=f"schema_version {APPROVAL_SCHEMA_VERSION} or lower",
            )
    try:
        return ApprovedGroundTruth.model_validate(data)
    except InputError as exc:
        raise exc.located(source=source) from None


def write_approved(
    approved: ApprovedGroundTruth, path: str | os.PathLike[str], *, overwrite: bool = False
) -> Path:
    """Write approved ground truth as indented JSON, atomically; returns the path.

    The content is checked against the record (and a signature against its embedded
    key) first, so an inconsistent file is never written. An existing file is
    replaced only with ``overwrite=True``: an approval is evidence, not a cache.

    Raises:
        ApprovalError: the rows or the signature do not match the record.
        OutputError: the file exists (without ``overwrite``) or cannot be written.
    """
    checked = ApprovedGroundTruth.model_validate(approved.model_dump(mode="json"))
    verify_record(checked.record, checked.rows, None, require_signature=False)
    target = Path(path)
    if not overwrite and (target.exists() or target.is_symlink()):
        raise OutputError(
            "exists already; an approval is never replaced silently (pass overwrite=True, "
            "or --force)",
            source=str(target),
        )
    return atomic_write_text(target, checked.model_dump_json(indent=2) + "\n")


# --- references ---------------------------------------------------------------------


def approved_reference(
    approved: ApprovedGroundTruth, *, metadata: Mapping[str, Any] | None = None
) -> ReferenceArtifact:
    """The approved rows as a path-table reference with ``authority="ground_truth"``.

    Its metadata carries ``approved_by``, ``approved_at``, ``content_sha256``,
    ``generation_sha256``, ``key_id``, ``signed`` and the whole record under
    ``approval`` (so :func:`approved_from_reference` can verify it again).
    """
    record = approved.record
    return artifact_from_value(
        approved.rows,
        authority="ground_truth",
        artifact_id=f"{approved.case_id}-ground-truth",
        metadata={
            **(metadata or {}),
            "approved_by": record.approved_by,
            "approved_at": record.approved_at,
            "content_sha256": record.content_sha256,
            "generation_sha256": record.generation_sha256,
            "key_id": record.key_id,
            "signed": record.signed,
            "approval": record.model_dump(mode="json"),
        },
    )


def approved_from_reference(
    reference: ReferenceArtifact,
    public_key: PublicKeyLike | None = None,
    *,
    require_signature: bool = True,
) -> ApprovedGroundTruth:
    """The approved ground truth behind a reference made by :func:`approved_reference`,
    verified like :func:`load_approved_ground_truth`.

    Raises:
        InputError: the reference carries no approval record.
        ApprovalError: its content or record fails verification.
    """
    approval = reference.metadata.get("approval")
    if reference.authority != "ground_truth" or not isinstance(approval, Mapping):
        raise InputError(
            "the reference carries no approval record",
            source=reference.path,
            expected="a ground_truth reference from approve_generated_reference, "
            "approved_reference or approved_reference_from_review",
        )
    try:
        record = ApprovalRecord.model_validate(dict(approval))
        approved = ApprovedGroundTruth(
            case_id=record.case_id, rows=reference.content, record=record
        )
        trusted = resolve_public_key(public_key)
        verification = verify_record(approved.record, approved.rows, trusted, require_signature)
    except (ApprovalError, InputError) as exc:
        raise exc.located(source=reference.path) from None
    approved._verification = verification
    return approved
