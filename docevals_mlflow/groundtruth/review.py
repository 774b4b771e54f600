"""Review files: a generation's content and disputed fields, and the reviewer's decisions.

A review file is JSON (:class:`~docevals_mlflow.groundtruth.records.ReviewFile`)
written from a generation, an adjudication or a union. The agreed rows are
``claims``; each disputed field is a ``review_items`` entry with the providers'
candidates and a ``decision``: ``unresolved`` (the default), ``set`` (use
``expected``) or ``omit`` (leave the field out of the ground truth).

Every way in validates the whole file: :func:`load_review` (messages name the file,
the entry and its field path) and :func:`apply_decisions` (which returns a new,
re-validated object rather than editing one in place). Writing is atomic and never
silently replaces a reviewer's work (:func:`write_ground_truth_review`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.datafiles import UTF8_BOM, parse_json, read_bytes_file
from docevals_mlflow.core.fingerprints import sha256_bytes
from docevals_mlflow.core.model import validate_lean
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import DocEvalsError, InputError, OutputError
from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.groundtruth.records import REVIEW_SCHEMA_VERSION, ReviewFile
from docevals_mlflow.groundtruth.review_decisions import apply_decisions as apply_decisions
from docevals_mlflow.groundtruth.review_rows import review_content as review_content
from docevals_mlflow.groundtruth.review_rows import review_digest as review_digest
from docevals_mlflow.groundtruth.review_rows import (
    review_from_generation as review_from_generation,
)
from docevals_mlflow.groundtruth.review_rows import validated_review

_ENTRY = re.compile(r"\b(claims|review_items)\[(\d+)\]")


def load_review(path: str | os.PathLike[str]) -> ReviewFile:
    """Read and validate a review file.

    Raises:
        InputFileNotFoundError: no such file.
        InputError: malformed JSON, an unknown key, a wrong type, an unknown
            decision, a ``set`` without a value, an ``approved`` status without an
            approver... The message names the file, the entry (``review_items[3]``)
            and the field path it is about.
    """
    file_path = Path(path)
    # A named pipe or a device is refused before it is opened (it would block).
    data = read_bytes_file(file_path, what="review file")
    review = _parse_review(data, str(file_path))
    review._origin_sha256 = sha256_bytes(data)
    return review


def load_ground_truth_review(path: str | os.PathLike[str]) -> ReviewFile:
    """Read and validate a review file: :func:`load_review` under the seed library's
    name, the counterpart of :func:`write_ground_truth_review`."""
    return load_review(path)


def _parse_review(data: bytes, source: str) -> ReviewFile:
    body = data.removeprefix(UTF8_BOM)
    if not body.strip():
        raise InputError("the file is empty", source=source, expected="a JSON value")
    raw = parse_json(body, source=source)
    if not isinstance(raw, dict):
        raise InputError(
            f"a review file holds a JSON object, not {type(raw).__name__}", source=source
        )
    if "record" in raw and "rows" in raw:
        raise InputError(
            "this is an approved ground-truth file, not a review file",
            source=source,
            expected="a review file (docevals review / write_ground_truth_review)",
        )
    version = raw.get("schema_version", REVIEW_SCHEMA_VERSION)
    if isinstance(version, int) and version > REVIEW_SCHEMA_VERSION:
        raise InputError(
            f"schema_version {version} was written by a newer docevals-mlflow",
            source=source,
            expected=f"schema_version {REVIEW_SCHEMA_VERSION} or lower",
        )
    try:
        return validate_lean(ReviewFile, raw)
    except InputError as exc:
        raise _locate(exc, source, raw) from None


def _locate(error: InputError, source: str, raw: Mapping[str, Any]) -> InputError:
    """The error with the file named and ``review_items[3]`` followed by its field path."""
    text = str(error)
    match = _ENTRY.search(text)
    if match:
        entries = raw.get(match.group(1))
        index = int(match.group(2))
        if isinstance(entries, list) and index < len(entries):
            entry = entries[index]
            field = entry.get("path") if isinstance(entry, Mapping) else None
            if isinstance(field, str) and field not in text:
                text = f"{text[: match.end()]} ({field}){text[match.end() :]}"
    located = type(error)(text, source=source)
    located.path = error.path
    located.expected = error.expected
    return located


def write_ground_truth_review(
    report_or_review: GenerationReport | ReviewFile,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
) -> Path:
    """Write a review file (indented JSON) atomically; returns its path.

    An existing file is replaced only when that loses nothing: it holds no human
    decisions (no decided item, approver, notes or edited claims), or the review
    being written was loaded from exactly the file's current bytes (and then edited
    with :func:`apply_decisions`), or it is equal in content. Otherwise an
    :class:`~docevals_mlflow.errors.OutputError` says what would be lost;
    ``overwrite=True`` replaces the file regardless.

    A :class:`ReviewFile` passed in afterwards remembers the written bytes, so
    load → edit → write → edit → write keeps working.
    """
    if isinstance(report_or_review, GenerationReport):
        review = review_from_generation(report_or_review)
    else:
        review = validated_review(report_or_review)
    target = Path(path)
    if not overwrite and (target.exists() or target.is_symlink()):
        _check_replaceable(target, review)
    text = review.model_dump_json(indent=2) + "\n"
    atomic_write_text(target, text)
    if isinstance(report_or_review, ReviewFile):
        report_or_review._origin_sha256 = sha256_bytes(text.encode("utf-8"))
    return target


def _check_replaceable(target: Path, review: ReviewFile) -> None:
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise OutputError(
            f"exists and cannot be read ({exc.strerror or exc}); it is left untouched",
            source=str(target),
        ) from None
    if review._origin_sha256 == sha256_bytes(data):
        return
    try:
        existing = _parse_review(data, str(target))
    except DocEvalsError as exc:
        raise OutputError(
            f"exists and is not a review file this version can read ({exc.message}); it is "
            "left untouched (pass overwrite=True, or --force, to replace it)",
            source=str(target),
        ) from None
    if review_digest(existing) == review_digest(review):
        return
    work = human_work(existing)
    if work:
        raise OutputError(
            f"holds a reviewer's work ({'; '.join(work)}) that this write would lose; it is "
            "left untouched (edit the loaded file with apply_decisions, or pass "
            "overwrite=True, or --force, to replace it)",
            source=str(target),
        )


def human_work(review: ReviewFile) -> list[str]:
    """What in a review file a person put there (empty for a freshly written file)."""
    found: list[str] = []
    decided = sum(item.decision != "unresolved" for item in review.review_items)
    if decided:
        found.append(f"{decided} decided item(s)")
    typed = sum(
        item.decision == "unresolved" and not is_empty(item.expected)
        for item in review.review_items
    )
    if typed:
        found.append(f"values typed into {typed} unresolved item(s)")
    noted = sum(bool(item.notes.strip()) for item in review.review_items)
    if noted:
        found.append(f"notes on {noted} item(s)")
    if review.status == "approved":
        found.append("status 'approved'")
    if (review.approved_by or "").strip():
        found.append("an approver")
    if review.approval_notes.strip():
        found.append("approval notes")
    if review.claims_edited:
        found.append("edited claims")
    elif review.claims_edited is None and review.claims:
        found.append("claims not written from a generation")
    return found
