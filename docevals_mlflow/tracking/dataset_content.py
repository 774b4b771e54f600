"""What a registered ground-truth dataset holds, and checking it when it comes back.

A registration stores, in its approval run:

* ``ground_truth/approved.json``: every approved case (rows and approval record), the
  dataset's name, version and digest: the one file a load reads;
* ``ground_truth/records.parquet``: one row per case and path (``case_id``, ``path``,
  ``expected`` as canonical JSON text, ``approved_by``, ``approved_at``,
  ``content_sha256``, ...), for people and for the run's ``ground_truth`` input;
* ``approvals/records.json``: the approval records alone, the audit trail.

The dataset digest is the first 32 hex characters (128 bits) of the SHA-256 of the
canonical JSON of ``{case_id: content_sha256}``: it depends on the approved content
only (not on who approved it or when), and it fits MLflow's 36-character limit on
dataset digests, so the same value appears in params, inputs and evaluation runs.

Loading checks, in this order: the file is a dataset file for the requested name and
version; every case's rows still hash to its record's ``content_sha256`` and its
signature verifies (against the public key given or ``DOCEVALS_PUBLIC_KEY``, which
must then have signed every record; otherwise against the key embedded in each signed
record, which proves integrity but not identity); the cases together hash to the run's
``dataset.digest`` param (params cannot be changed once logged); and the Parquet table
and the approval records' copy are exactly what the checked cases produce. Any
difference refuses the dataset with :class:`DatasetIntegrityError`.

This module does not import mlflow.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.errors import ApprovalError, InputError
from docevals_mlflow.groundtruth.records import ApprovalVerification, ApprovedGroundTruth

if TYPE_CHECKING:
    import pandas as pd

    from docevals_mlflow.groundtruth.keys import PublicKeyLike

SignatureState = Literal["trusted", "unpinned", "unsigned"]

DATASET_FORMAT = "docevals-ground-truth/1"
APPROVED_PATH = "ground_truth/approved.json"
RECORDS_PATH = "ground_truth/records.parquet"
APPROVALS_PATH = "approvals/records.json"
DIGEST_LENGTH = 32
MAX_NAME_LENGTH = 200
RECORD_COLUMNS = (
    "case_id",
    "row",
    "path",
    "expected",
    "approved_by",
    "approved_at",
    "content_sha256",
    "key_id",
)
_NAME = re.compile(r"\w[\w.\- ]*")


class DatasetIntegrityError(ApprovalError):
    """A registered dataset (or an approved case) does not match its digests or
    signatures: it was changed after approval, and is refused.

    An :class:`~docevals_mlflow.errors.ApprovalError`: ``reason`` is
    ``content_digest`` for content that is not what was approved, ``record`` for a
    file that is not what was registered, or the reason of the failed signature check.
    """


def check_dataset_name(name: str) -> str:
    """``name`` if it can name a dataset, else an :class:`InputError`.

    Letters, digits, ``_ - .`` and inner spaces: names go into MLflow filter strings
    and ``NAME@VERSION`` specs, so quotes and ``@`` are kept out.
    """
    if (
        not isinstance(name, str)
        or len(name) > MAX_NAME_LENGTH
        or not _NAME.fullmatch(name)
        or name != name.strip()
    ):
        raise InputError(
            f"invalid dataset name {name!r}",
            expected=f"letters, digits, '_', '-', '.' and inner spaces, at most "
            f"{MAX_NAME_LENGTH} characters, starting with a letter or digit",
        )
    return name


def verify_case(
    approved: ApprovedGroundTruth,
    *,
    public_key: PublicKeyLike | None,
    require_signature: bool,
    source: str | None,
) -> ApprovalVerification:
    """Check one approved case with
    :func:`~docevals_mlflow.groundtruth.approval.verify_approval`: the rows match the
    record's digest, and the signature verifies (against ``public_key``, else
    ``DOCEVALS_PUBLIC_KEY``, else the key embedded in the record).

    Raises:
        DatasetIntegrityError: the case fails a check (``reason`` says which).
    """
    from docevals_mlflow.groundtruth.approval import verify_approval

    try:
        return verify_approval(
            approved.record, approved.rows, public_key, require_signature=require_signature
        )
    except ApprovalError as exc:
        raise DatasetIntegrityError(
            exc.message, source=source, record=approved.case_id, path=exc.path, reason=exc.reason
        ) from None


def signature_state(verifications: Iterable[ApprovalVerification]) -> SignatureState:
    """``trusted`` when every signature was checked against a supplied public key,
    ``unpinned`` when every record is signed but checked only against its own
    embedded key (integrity, not identity), else ``unsigned``."""
    checked = list(verifications)
    if checked and all(verification.trusted for verification in checked):
        return "trusted"
    if checked and all(verification.signed for verification in checked):
        return "unpinned"
    return "unsigned"


def sorted_cases(
    cases: Iterable[tuple[ApprovedGroundTruth, str]],
) -> list[ApprovedGroundTruth]:
    """Cases in ``case_id`` order; a case given twice is an error naming both sources."""
    by_id: dict[str, tuple[ApprovedGroundTruth, str]] = {}
    for approved, source in cases:
        first = by_id.get(approved.case_id)
        if first is not None:
            raise InputError(
                f"case {approved.case_id!r} is given twice (also in {first[1]})",
                source=source,
                expected="each case once per dataset version",
            )
        by_id[approved.case_id] = (approved, source)
    return [by_id[case_id][0] for case_id in sorted(by_id)]


def dataset_digest(cases: Iterable[ApprovedGroundTruth]) -> str:
    """The content digest of a set of approved cases (see the module docstring)."""
    content = {approved.case_id: approved.record.content_sha256 for approved in cases}
    return sha256_json(content)[:DIGEST_LENGTH]


def approved_document(
    *,
    name: str,
    version: int,
    digest: str,
    description: str,
    cases: list[ApprovedGroundTruth],
) -> dict[str, Any]:
    """``ground_truth/approved.json``."""
    return {
        "format": DATASET_FORMAT,
        "name": name,
        "version": version,
        "digest": digest,
        "description": description,
        "cases": [approved.model_dump(mode="json") for approved in cases],
    }


def _text(value: Any) -> str:
    # Approved values are plain JSON data (the approval validated them), so the C
    # encoder with canonical settings gives canonical_json's text several times faster.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _path_text(row: dict[str, Any]) -> str:
    for column in ("path", "field_path"):
        if column in row:
            return str(row[column])
    return ""


def _expected(row: dict[str, Any]) -> Any:
    for column in ("expected", "expected_value", "value"):
        if column in row:
            return row[column]
    return None


def records_frame(cases: Iterable[ApprovedGroundTruth]) -> pd.DataFrame:
    """``ground_truth/records.parquet``: one row per case and path.

    ``expected`` is canonical JSON text (``"0123"`` stays a string and a list stays a
    list), so the table shows exactly what was approved.
    """
    import pandas as pd

    rows = [
        (
            approved.case_id,
            position,
            _path_text(row),
            _text(_expected(row)),
            approved.record.approved_by,
            approved.record.approved_at,
            approved.record.content_sha256,
            approved.record.key_id,
        )
        for approved in cases
        for position, row in enumerate(approved.rows)
    ]
    frame = pd.DataFrame.from_records(rows, columns=list(RECORD_COLUMNS))
    return frame.astype({"row": "int64"})


def read_verified(
    folder: Path,
    *,
    name: str,
    version: int,
    digest: str,
    public_key: PublicKeyLike | None,
    where: str,
) -> tuple[list[ApprovedGroundTruth], str, SignatureState]:
    """The approved cases of a downloaded approval run, checked (see the module
    docstring); also returns the stored description.

    ``folder`` holds the run's artifacts; ``where`` names the run in messages.

    Raises:
        DatasetIntegrityError: anything differs from what was registered.
    """
    source = f"{where}/{APPROVED_PATH}"
    document = _stored_json(
        folder / APPROVED_PATH, source, "the approval run has no approved cases"
    )
    if not isinstance(document, dict) or document.get("format") != DATASET_FORMAT:
        raise DatasetIntegrityError("not a docevals ground-truth dataset file", source=source)
    for key, wanted in (("name", name), ("version", version), ("digest", digest)):
        if document.get(key) != wanted:
            raise DatasetIntegrityError(
                f"the file says {key} {document.get(key)!r}, the run says {wanted!r}",
                source=source,
            )
    cases: list[ApprovedGroundTruth] = []
    verifications: list[ApprovalVerification] = []
    for number, entry in enumerate(document.get("cases") or [], start=1):
        try:
            approved = ApprovedGroundTruth.model_validate(entry)
        except InputError as exc:
            raise DatasetIntegrityError(exc.message, source=source, record=number) from None
        # Unsigned records were accepted, explicitly, when the version was registered;
        # a pinned public key (argument or DOCEVALS_PUBLIC_KEY) still requires them.
        verifications.append(
            verify_case(approved, public_key=public_key, require_signature=False, source=source)
        )
        cases.append(approved)
    if [approved.case_id for approved in cases] != sorted({a.case_id for a in cases}):
        raise DatasetIntegrityError(
            "cases are repeated or out of order (each case once, sorted by id)", source=source
        )
    actual = dataset_digest(cases)
    if actual != digest:
        raise DatasetIntegrityError(
            f"the approved cases hash to {actual}, the run was registered with {digest}",
            source=source,
            reason="content_digest",
        )
    _check_records(folder / RECORDS_PATH, cases, f"{where}/{RECORDS_PATH}")
    _check_approvals(folder / APPROVALS_PATH, cases, f"{where}/{APPROVALS_PATH}")
    return cases, str(document.get("description") or ""), signature_state(verifications)


def _stored_json(path: Path, source: str, missing: str) -> Any:
    """A JSON file of the approval run; ``missing`` says what its absence means."""
    if not path.is_file():
        raise DatasetIntegrityError(missing, source=source)
    try:
        return load_json_file(path)
    except InputError as exc:
        raise DatasetIntegrityError(exc.message, source=source) from None


def _check_approvals(path: Path, cases: list[ApprovedGroundTruth], source: str) -> None:
    # The audit copy people read in the UI must say what the checked file says.
    stored = _stored_json(path, source, "the approval records are missing")
    if stored != [approved.record.model_dump(mode="json") for approved in cases]:
        raise DatasetIntegrityError(
            "the approval records differ from those of the approved cases", source=source
        )


def _check_records(path: Path, cases: list[ApprovedGroundTruth], source: str) -> None:
    import pandas as pd

    if not path.is_file():
        raise DatasetIntegrityError("the records table is missing", source=source)
    try:
        stored = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise DatasetIntegrityError(f"unreadable Parquet ({exc})", source=source) from None
    expected = records_frame(cases)
    if list(stored.columns) != list(expected.columns) or len(stored) != len(expected):
        raise DatasetIntegrityError(
            "the records table does not match the approved cases", source=source
        )
    differing = ~(
        (stored.astype(object) == expected.astype(object)) | (stored.isna() & expected.isna())
    ).all(axis=1)
    if bool(differing.any()):
        first = int(differing.to_numpy().argmax())
        raise DatasetIntegrityError(
            "the records table does not match the approved cases "
            f"(first difference: case {expected.at[first, 'case_id']!r}, "
            f"path {expected.at[first, 'path']!s})",
            source=source,
            record=f"row {first + 1}",
        )
