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

import functools
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.datafiles import UTF8_BOM, parse_json, read_bytes_file
from docevals_mlflow.core.fingerprints import canonical_json, sha256_bytes, sha256_json
from docevals_mlflow.core.paths import parse_path
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import DocEvalsError, InputError, OutputError
from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.groundtruth.records import (
    REVIEW_SCHEMA_VERSION,
    ReviewClaim,
    ReviewFile,
    ReviewItem,
    canonical_field_path,
    content_digest,
)

_ENTRY = re.compile(r"\b(claims|review_items)\[(\d+)\]")
_segments = functools.lru_cache(maxsize=65536)(parse_path)


def review_from_generation(report: GenerationReport) -> ReviewFile:
    """The review file for a generation: agreed rows as claims, disputes as items."""
    claims = [
        ReviewClaim(
            path=row.path,
            expected=row.expected_value,
            agreement=row.agreement,
            providers=list(row.providers),
            evidence=list(row.evidence),
            reference_ids=list(row.reference_ids),
            resolved_by=row.resolved_by,
        )
        for row in report.consensus
    ]
    items = [
        ReviewItem(
            path=disagreement.path,
            reason=disagreement.reason,
            provider_candidates=list(disagreement.candidates),
            omitted_by=list(disagreement.omitted_by),
        )
        for disagreement in report.disagreements
    ]
    return ReviewFile(
        case_id=report.case_id,
        generation_sha256=report.digest,
        generation_stage=report.stage,
        providers=list(report.providers),
        overall_agreement=report.overall_agreement,
        source_references=list(report.sources),
        claims=claims,
        review_items=items,
        claims_sha256=content_digest([{"path": c.path, "expected": c.expected} for c in claims]),
    )


def review_digest(review: ReviewFile) -> str:
    """SHA-256 of a review's canonical JSON (what an approval pins; formatting-proof)."""
    return sha256_json(review.model_dump(mode="json"))


# --- files --------------------------------------------------------------------------


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
        return ReviewFile.model_validate(raw)
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


def validated_review(review: ReviewFile) -> ReviewFile:
    """A fresh copy of ``review`` after the same checks a file read from disk gets.

    Models are mutable, so an object edited in place could otherwise carry an unknown
    decision or a ``set`` without a value into a file or an approval.
    """
    fresh = ReviewFile.model_validate(review.model_dump(mode="python"))
    fresh._origin_sha256 = review._origin_sha256
    return fresh


# --- decisions ----------------------------------------------------------------------


def apply_decisions(
    review: ReviewFile,
    *,
    set: Mapping[str, Any] | None = None,
    omit: Iterable[str] = (),
    reopen: Iterable[str] = (),
    notes: str | None = None,
) -> ReviewFile:
    """A new review with decisions applied; the input is not changed.

    Args:
        set: field path → value: decide ``set`` with that value.
        omit: field paths to decide ``omit`` (left out of the ground truth).
        reopen: field paths to put back to ``unresolved``.
        notes: the reviewer's note, stored on every item decided or reopened here.

    Paths may be written in any equivalent spelling (``total``, ``$.total``,
    ``$['total']``). A review whose status was ``approved`` goes back to
    ``needs_review`` when its decisions change, since the approval no longer
    describes its content.

    Raises:
        InputError: a path names no review item (the message lists the pending
            ones), names an agreed claim, or is given twice; a ``set`` value is empty
            or not JSON data. Nothing is applied then.
    """
    current = validated_review(review)
    by_path = {canonical_field_path(item.path): i for i, item in enumerate(current.review_items)}
    claims = {canonical_field_path(claim.path) for claim in current.claims}
    changes: dict[int, dict[str, Any]] = {}
    given: dict[str, str] = {}

    def target(path: str, option: str) -> int:
        try:
            key = canonical_field_path(path)
        except InputError as exc:
            raise InputError(f"{option} {path}: {exc.message}") from None
        if key in given:
            raise InputError(f"one field given twice: {given[key]} and {option} {path}")
        given[key] = f"{option} {path}"
        if key in by_path:
            return by_path[key]
        if key in claims:
            raise InputError(
                f"{option} {path}: this field is an agreed claim, not a review item; to "
                "correct it, edit its 'expected' under 'claims' in the review file"
            )
        raise InputError(
            f"{option} {path}: no review item has this path", expected=_pending(current)
        )

    for path, value in (set or {}).items():
        index = target(path, "--set")
        if is_empty(value):
            raise InputError(f"--set {path}: the value is empty; to leave the field out use --omit")
        try:
            plain = json.loads(canonical_json(value))
        except InputError as exc:
            raise InputError(f"--set {path}: {exc.message}", expected=exc.expected) from None
        changes[index] = {"decision": "set", "expected": plain}
    for path in _paths(omit, "omit"):
        changes[target(path, "--omit")] = {"decision": "omit", "expected": None}
    for path in _paths(reopen, "reopen"):
        changes[target(path, "--reopen")] = {"decision": "unresolved", "expected": None}
    if not changes:
        return current
    data = current.model_dump(mode="python")
    for index, update in changes.items():
        if notes is not None:
            update["notes"] = notes
        data["review_items"][index].update(update)
    if data["status"] == "approved":
        data["status"] = "needs_review"
    edited = ReviewFile.model_validate(data)
    edited._origin_sha256 = review._origin_sha256
    return edited


def _paths(paths: Iterable[str], name: str) -> list[str]:
    if isinstance(paths, str):
        # A lone string would otherwise be taken one character at a time.
        raise InputError(f"{name} takes a list of field paths, not one string")
    return list(paths)


def _pending(review: ReviewFile) -> str:
    pending = [item.path for item in review.pending()]
    decided = len(review.review_items) - len(pending)
    if not pending:
        return f"a review item; none is pending ({decided} decided)"
    return f"a pending item: {', '.join(pending)}" + (f" ({decided} decided)" if decided else "")


# --- content ------------------------------------------------------------------------


def require_resolved(review: ReviewFile, *, source: str | None = None) -> None:
    """Raise unless every review item is decided; the message lists the others.

    Raises:
        InputError: naming each unresolved item (``review_items[2] $.amount``).
    """
    unresolved = [
        (index, item)
        for index, item in enumerate(review.review_items)
        if item.decision == "unresolved"
    ]
    if not unresolved:
        return
    listed = ", ".join(
        f"review_items[{index}] {item.path} ({item.reason}"
        + (
            ", has a value but decision is still 'unresolved'"
            if not is_empty(item.expected)
            else ""
        )
        + ")"
        for index, item in unresolved
    )
    raise InputError(
        f"{len(unresolved)} review item(s) unresolved: {listed}",
        source=source,
        expected="decision 'set' (with a value) or 'omit' on every item, e.g. "
        "docevals review FILE --set PATH=VALUE --omit PATH",
    )


def review_content(review: ReviewFile, *, source: str | None = None) -> list[dict[str, Any]]:
    """The content a review decides: claims plus ``set`` items (``omit`` items left out).

    Rows are ``{"path", "expected"}`` with canonical paths, sorted by path (indices
    numerically), so equal content always has the same digest.

    Raises:
        InputError: while any item is unresolved (each is named).
    """
    review = validated_review(review)
    require_resolved(review, source=source)
    return decided_rows(review)


def decided_rows(review: ReviewFile) -> list[dict[str, Any]]:
    """:func:`review_content` for a review already validated and fully decided."""
    rows = [(claim.path, claim.expected) for claim in review.claims]
    rows += [(item.path, item.expected) for item in review.review_items if item.decision == "set"]
    return canonical_rows(rows)


def canonical_rows(rows: Iterable[tuple[str, Any]]) -> list[dict[str, Any]]:
    """``(path, value)`` pairs as sorted path-table rows with canonical paths."""
    keyed = []
    for path, value in rows:
        keyed.append((_sort_key(_segments(path)), canonical_field_path(path), value))
    keyed.sort(key=lambda entry: entry[0])
    return [{"path": path, "expected": value} for _, path, value in keyed]


def _sort_key(segments: tuple[str | int, ...]) -> tuple[tuple[int, str | int], ...]:
    # Indices sort numerically ($.items[2] before $.items[10]); a key and an index
    # are never compared with each other.
    return tuple((1, s) if isinstance(s, int) else (0, s) for s in segments)
