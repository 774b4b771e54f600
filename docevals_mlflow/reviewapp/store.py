"""The app's only door to review data: reading through
:func:`~docevals_mlflow.groundtruth.review_layers.load_layers`, writing through
:func:`~docevals_mlflow.groundtruth.review_layers.record_answer`.

``record_answer`` validates the answer, takes the layer's file lock, re-reads the
layer, appends and writes atomically, so two tabs or two people never lose an
answer; this module never writes a review or layer file itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.groundtruth.records import ReviewFile, canonical_field_path
from docevals_mlflow.reviewapp.folder import ReviewFolder
from docevals_mlflow.reviewapp.model import (
    AnswerRow,
    CandidateRow,
    DocumentView,
    FieldRow,
    Reading,
    SourceRow,
)
from docevals_mlflow.reviewapp.pages import SHOWN_SUFFIXES

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.review_layers import ReviewLayers

ACTIONS = ("accept", "set", "absent", "unreadable")
ROLES = ("reviewer", "adjudicator")
FAILED_STATUSES = frozenset({"malformed", "refused", "truncated", "error"})


@dataclass(frozen=True)
class Answered:
    """What a write returns to the page: the field and the person's answer now."""

    path: str
    action: str
    value: Any
    at: str


def load_document(
    folder: ReviewFolder,
    document_id: str,
    *,
    required_reviewers: int = 2,
    known: frozenset[str] | None = None,
) -> DocumentView:
    """One review file and all its layers, as the page shows them.

    Raises:
        PathRefused: the id leaves the folder or is not a served review file.
        InputError: the review file or a layer is malformed (the message names the
            file, the entry and the field path).
    """
    from docevals_mlflow.groundtruth.review_layers import load_layers

    layers = load_layers(folder.review_path(document_id, known))
    return document_view(folder, document_id, layers, required_reviewers=required_reviewers)


def document_view(
    folder: ReviewFolder,
    document_id: str,
    layers: ReviewLayers,
    *,
    required_reviewers: int = 2,
) -> DocumentView:
    """What the page shows of a review already loaded (by ``load_layers`` or ``load_many``)."""
    review: ReviewFile = layers.review
    # Only answers that differ; "incomplete" (too few answered yet) is progress, not risk.
    disputed = {
        item.path for item in layers.disagreements(required_reviewers) if item.kind == "differ"
    }
    readings = _readings(review)
    rows = tuple(
        _field_row(view, readings.get(view.path, ()), view.path in disputed)
        for view in layers.fields(required_reviewers)
    )
    problems = tuple(
        f"layer of {stale.person} answers an older version of this review file and is not "
        "counted (its answers are kept in the file)"
        for stale in layers.stale
    )
    return DocumentView(
        id=document_id,
        case_id=review.case_id,
        fields=rows,
        sources=tuple(_sources(folder, document_id, review)),
        failed_providers=tuple(
            generation.provider
            for generation in review.providers
            if generation.status in FAILED_STATUSES
        ),
        problems=problems,
        people=tuple(sorted(layers.people())),
        signed=tuple(sorted(p for p, layer in layers.layers.items() if layer.signature)),
        roles={person: layer.role for person, layer in layers.layers.items()},
    )


def record(
    folder: ReviewFolder,
    document_id: str,
    person: str,
    path: str,
    action: str,
    value: Any = None,
    *,
    role: str = "reviewer",
    reason: str | None = None,
) -> Answered:
    """Append one answer to the person's layer (validated, locked, atomic)."""
    from docevals_mlflow.groundtruth.review_layers import record_answer

    if action not in ACTIONS:
        raise InputError(f"unknown action {action!r}", path=path, expected=" | ".join(ACTIONS))
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}", expected=" | ".join(ROLES))
    entry = record_answer(
        folder.review_path(document_id),
        person,
        path,
        action,  # type: ignore[arg-type]  # checked above against the Literal's values
        value,
        role=role,  # type: ignore[arg-type]
        reason=reason,
    )
    return Answered(entry.path, entry.action, entry.value, entry.at)


def _field_row(view: Any, readings: tuple[Reading, ...], reviewers_disagree: bool) -> FieldRow:
    return FieldRow(
        path=view.path,
        disputed=view.kind == "item",
        proposed=view.proposed,
        has_proposal=view.has_proposal,
        reason=view.reason,
        agreement=view.agreement,
        confidence=view.confidence,
        candidates=tuple(
            CandidateRow(c.value, tuple(c.providers), float(c.votes)) for c in view.candidates
        ),
        readings=readings,
        evidence=tuple(view.evidence),
        answers=tuple(
            AnswerRow(
                person=answer.person,
                role=answer.role,
                action=answer.action,
                value=answer.value,
                at=answer.at,
                reason=answer.reason,
                edits=answer.edits,
            )
            for answer in view.answers.values()
        ),
        omitted_by=tuple(view.omitted_by),
        failed_upstream=view.failed_upstream,
        reviewers_disagree=reviewers_disagree,
        final_status=view.final.status,
        final_value=view.final.value,
        final_absent=view.final.absent,
    )


def _readings(review: ReviewFile) -> dict[str, tuple[Reading, ...]]:
    """Each model's value, evidence and confidence per field path."""
    found: dict[str, list[Reading]] = {}
    for generation in review.providers:
        for claim in generation.claims:
            try:
                path = canonical_field_path(claim.path)
            except DocEvalsError:
                continue  # the generation kept it out of the vote already
            found.setdefault(path, []).append(
                Reading(generation.provider, claim.expected_value, claim.evidence, claim.confidence)
            )
    return {path: tuple(rows) for path, rows in found.items()}


def _sources(folder: ReviewFolder, document_id: str, review: ReviewFile) -> list[SourceRow]:
    rows = []
    for source in review.source_references:
        if Path(source.name).suffix.lower() not in SHOWN_SUFFIXES:
            continue  # text, JSON, inline sources: the readings show what the panel read
        try:
            path = folder.source_path(document_id, source.name)
        except DocEvalsError as exc:
            rows.append(SourceRow(source.name, False, exc.message))
            continue
        if not path.is_file():
            rows.append(
                SourceRow(source.name, False, f"{source.name} is not beside the review file")
            )
            continue
        matches = None
        if source.sha256:
            matches = _sha256(path) == source.sha256
        rows.append(
            SourceRow(
                source.name,
                True,
                "" if matches is not False else "differs from the file the panel read",
                matches,
            )
        )
    return rows


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
