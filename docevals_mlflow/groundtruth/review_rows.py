"""What a review holds and decides: the review made from a generation, its digest,
its re-validation, and the ground-truth rows its decisions give."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.paths import parse_path
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.groundtruth.records import (
    ReviewClaim,
    ReviewFile,
    ReviewItem,
    canonical_field_path,
    content_digest,
)

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


def validated_review(review: ReviewFile) -> ReviewFile:
    """A fresh copy of ``review`` after the same checks a file read from disk gets.

    Models are mutable, so an object edited in place could otherwise carry an unknown
    decision or a ``set`` without a value into a file or an approval.
    """
    fresh = ReviewFile.model_validate(review.model_dump(mode="python"))
    fresh._origin_sha256 = review._origin_sha256
    return fresh


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
