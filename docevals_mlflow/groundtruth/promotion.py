"""The seed's promotion API: a generated reference, or a reviewed file, to ground truth.

``approve_generated_reference`` and ``approved_reference_from_review`` keep
``visual_evals``' names and arguments; unlike there, both produce an
:class:`~docevals_mlflow.groundtruth.records.ApprovalRecord` (signed when a key is
available) and refuse what cannot be approved with a message naming the file.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docevals_mlflow.core.artifacts import PATH_COLUMNS, VALUE_COLUMNS, ReferenceArtifact
from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.approval import (
    approve_review,
    approved_reference,
    load_approved_ground_truth,
    sign_if_key_available,
    utc_timestamp,
)
from docevals_mlflow.groundtruth.keys import PublicKeyLike, SigningKeyLike
from docevals_mlflow.groundtruth.records import (
    ApprovalRecord,
    ApprovedGroundTruth,
    Resolution,
    content_digest,
)
from docevals_mlflow.groundtruth.review import load_review
from docevals_mlflow.groundtruth.review_rows import canonical_rows


def approve_generated_reference(
    reference: ReferenceArtifact,
    approved_by: str,
    notes: str = "",
    resolved_content: list[Mapping[str, Any]] | None = None,
    signing_key: SigningKeyLike | None = None,
    *,
    now: _dt.datetime | None = None,
) -> ReferenceArtifact:
    """Promote a generated reference to ``authority="ground_truth"`` (the seed's API).

    The content is ``resolved_content`` (path-table rows: ``path``/``field_path`` and
    ``expected``/``expected_value``/``value``) when given, else the reference's own
    rows. Differences between the two are recorded as resolutions (``set`` for a
    changed or added field, ``omit`` for a dropped one). The
    :class:`ApprovalRecord` is in ``metadata["approval"]``; it is signed when a key
    is given or ``DOCEVALS_SIGNING_KEY`` is set, and otherwise recorded unsigned.

    Raises:
        InputError: the reference is not ``generated``; no approver; it requires
            human review and no ``resolved_content`` was given; rows are malformed.
    """
    source = reference.path
    _check_promotable(reference, approved_by, resolved_content)
    generated = _path_rows(reference.content, f"{source} (content)")
    chosen = (
        generated if resolved_content is None else _path_rows(resolved_content, "resolved_content")
    )
    rows = canonical_rows(chosen)
    generation = reference.metadata.get("generation_sha256")
    record = ApprovalRecord(
        case_id=str(reference.metadata.get("case_id") or _case_id(reference.id)),
        approved_by=approved_by.strip(),
        approved_at=utc_timestamp(now),
        approval_notes=notes,
        content_sha256=content_digest(rows),
        generation_sha256=generation if isinstance(generation, str) else None,
        resolutions=_resolutions(canonical_rows(generated), rows),
    )
    try:
        approved = ApprovedGroundTruth(
            case_id=record.case_id, rows=rows, record=sign_if_key_available(record, signing_key)
        )
    except InputError as exc:
        raise exc.located(source=source) from None
    return approved_reference(approved, metadata={"generated_reference_id": reference.id})


def _check_promotable(
    reference: ReferenceArtifact,
    approved_by: str,
    resolved_content: list[Mapping[str, Any]] | None,
) -> None:
    """Refuse what :func:`approve_generated_reference` cannot approve."""
    source = reference.path
    if reference.authority != "generated":
        raise InputError(
            f"only a generated reference can be approved; this one is {reference.authority!r}",
            source=source,
        )
    if not (approved_by or "").strip():
        raise InputError(
            "no approver: approved_by is empty or blank",
            source=source,
            path="approved_by",
            expected="the approving person's name or e-mail",
        )
    if resolved_content is None and reference.metadata.get("requires_human_review"):
        raise InputError(
            "the generated reference requires human review (its providers disagreed); pass "
            "resolved_content with the reviewed rows, or use the review-file flow",
            source=source,
            expected="resolved_content=[{'path': ..., 'expected': ...}, ...]",
        )


def _case_id(reference_id: str) -> str:
    return reference_id.removesuffix("-generated") or reference_id


def _path_rows(content: Any, where: str) -> list[tuple[str, Any]]:
    if not isinstance(content, list) or not all(isinstance(row, Mapping) for row in content):
        raise InputError(
            f"{where} is not path-table rows",
            expected="a list of {'path': ..., 'expected': ...} rows",
        )
    rows: list[tuple[str, Any]] = []
    for index, row in enumerate(content):
        path_key = next((key for key in PATH_COLUMNS if key in row), None)
        value_key = next((key for key in VALUE_COLUMNS if key in row), None)
        if path_key is None or value_key is None or not isinstance(row[path_key], str):
            raise InputError(
                f"{where}: row {index + 1} has keys {sorted(row)}",
                expected=f"a path ({'/'.join(PATH_COLUMNS)}) and a value "
                f"({'/'.join(VALUE_COLUMNS)})",
            )
        try:
            value = json.loads(canonical_json(row[value_key]))
        except InputError as exc:
            raise InputError(f"{where}: row {index + 1}: {exc.message}") from None
        rows.append((row[path_key], value))
    return rows


def _resolutions(
    generated: list[dict[str, Any]], approved: list[dict[str, Any]]
) -> list[Resolution]:
    before = {row["path"]: canonical_json(row["expected"]) for row in generated}
    after = {row["path"] for row in approved}
    resolutions = [
        Resolution(path=row["path"], decision="set", expected=row["expected"])
        for row in approved
        if before.get(row["path"]) != canonical_json(row["expected"])
    ]
    resolutions += [
        Resolution(path=row["path"], decision="omit")
        for row in generated
        if row["path"] not in after
    ]
    return sorted(resolutions, key=lambda resolution: resolution.path)


def approved_reference_from_review(
    path: str | os.PathLike[str],
    public_key: PublicKeyLike | None = None,
    *,
    signing_key: SigningKeyLike | None = None,
    require_signature: bool = True,
) -> ReferenceArtifact:
    """The ground-truth reference from a reviewed file (the seed's file flow).

    * A **review file** whose reviewer set ``status: "approved"`` and
      ``approved_by``: approved now (every item must be decided), with a record
      signed by ``signing_key`` / ``DOCEVALS_SIGNING_KEY`` when available.
    * An **approved ground-truth file** (``docevals approve``): loaded and verified
      with ``public_key`` / ``DOCEVALS_PUBLIC_KEY`` (see
      :func:`load_approved_ground_truth`; ``require_signature`` applies here).

    Raises:
        InputError: a review file not marked approved, without an approver, or
            with unresolved items (each named, with the file).
        ApprovalError: an approved file that fails verification.
    """
    file_path = Path(path)
    data = load_json_file(file_path)
    if isinstance(data, dict) and "record" in data and "rows" in data:
        approved = load_approved_ground_truth(
            file_path, public_key, require_signature=require_signature
        )
        return approved_reference(approved)
    review = load_review(file_path)
    if review.status != "approved":
        raise InputError(
            f"status is {review.status!r}: the reviewer has not approved this file",
            source=str(file_path),
            path="status",
            expected="status 'approved' and approved_by set in the file, or "
            "docevals approve FILE --approved-by NAME",
        )
    approved = approve_review(file_path, signing_key=signing_key)
    return approved_reference(approved)
