"""Collecting the approved cases to register: objects, files and folders of files,
each verified against its approval record (and signature) and sorted."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from docevals_mlflow.errors import ApprovalError, InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.records import ApprovalVerification, ApprovedGroundTruth
from docevals_mlflow.tracking.dataset_content import (
    DatasetIntegrityError,
    SignatureState,
    signature_state,
    sorted_cases,
    verify_case,
)

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.keys import PublicKey, PublicKeyLike


def public_key_of(public_key: PublicKeyLike | None) -> PublicKey | None:
    """The key that must have signed every case (``DOCEVALS_PUBLIC_KEY`` when ``None``)."""
    # Read once, up front: a bad key fails before any work, and is not parsed again
    # for every case.
    from docevals_mlflow.groundtruth.signing import resolve_public_key

    return resolve_public_key(public_key)


def approved_files(path: Path) -> list[Path]:
    """The approved files at ``path``: the file itself, or a folder's ``.json`` files
    (hidden ones left out), sorted.

    Raises:
        InputError: the folder holds no ``.json`` file.
        InputFileNotFoundError: there is no such file.
    """
    if path.is_dir():
        files = sorted(
            entry
            for entry in path.iterdir()
            if entry.suffix.lower() == ".json" and not entry.name.startswith(".")
        )
        if not files:
            raise InputError(
                "folder has no .json files", source=str(path), expected="approved files"
            )
        return files
    if not path.exists():
        raise InputFileNotFoundError("approved file not found", source=str(path))
    return [path]


def collect_approved(
    approved: Iterable[ApprovedGroundTruth | str | os.PathLike[str]]
    | ApprovedGroundTruth
    | str
    | os.PathLike[str],
    *,
    public_key: PublicKeyLike | None,
    require_signature: bool,
) -> tuple[list[ApprovedGroundTruth], SignatureState]:
    """Every approved case given (objects, files, folders of files), verified and
    sorted, and what the verification established."""
    from docevals_mlflow.groundtruth.approval import load_approved_ground_truth

    items = (
        [approved] if isinstance(approved, (str, os.PathLike, ApprovedGroundTruth)) else approved
    )
    found: list[tuple[ApprovedGroundTruth, str]] = []
    verifications: list[ApprovalVerification] = []
    for position, item in enumerate(items, start=1):
        if isinstance(item, ApprovedGroundTruth):
            verifications.append(
                verify_case(
                    item, public_key=public_key, require_signature=require_signature, source=None
                )
            )
            found.append((item, f"item {position}"))
        elif isinstance(item, (str, os.PathLike)):
            for file in approved_files(Path(item)):
                try:
                    loaded = load_approved_ground_truth(
                        file, public_key, require_signature=require_signature
                    )
                except ApprovalError as exc:
                    raise DatasetIntegrityError(
                        exc.message,
                        source=exc.source or str(file),
                        record=exc.record,
                        path=exc.path,
                        reason=exc.reason,
                    ) from None
                assert loaded.verification is not None
                verifications.append(loaded.verification)
                found.append((loaded, str(file)))
        else:
            raise InputError(
                f"cannot register a {type(item).__name__}",
                expected="ApprovedGroundTruth objects or paths to approved files or folders",
            )
    cases = sorted_cases(found)
    if not cases:
        raise InputError("nothing to register", expected="at least one approved case")
    return cases, signature_state(verifications)
