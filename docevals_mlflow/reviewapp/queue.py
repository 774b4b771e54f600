"""The review queue: documents worst-first, progress, and how many documents are
left to review for a target residual error.

The estimate reuses the review-budget statistics
(:func:`~docevals_mlflow.core.statistics.budgets.review_budget`): the documents
this person has finished are the sample (risk score → whether they corrected
anything); the least strict risk threshold that still catches enough of the errors
found there, applied to the documents not yet reviewed, gives the count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from docevals_mlflow.core.statistics.budgets import review_budget
from docevals_mlflow.reviewapp.model import DocumentView

MIN_SAMPLE = 5
"""Documents a person must finish before the estimate is given."""
DEFAULT_RESIDUAL = 0.02
"""Target share of documents left with an uncorrected error."""


@dataclass(frozen=True)
class QueueEntry:
    id: str
    case_id: str
    risk: float
    fields: int
    answered: int
    disputed: int
    problems: int


@dataclass(frozen=True)
class Estimate:
    """Documents left to review so that at most ``residual`` of all documents keep an
    error, or why there is no estimate yet (``left is None``)."""

    residual: float
    left: int | None
    error_rate: float | None
    sample: int
    note: str


@dataclass(frozen=True)
class Queue:
    entries: tuple[QueueEntry, ...]
    documents_done: int
    fields_answered: int
    fields_total: int
    estimate: Estimate

    def next_after(self, document_id: str) -> str | None:
        """The next unfinished document in queue order after ``document_id`` (wrapping)."""
        ids = [entry.id for entry in self.entries]
        start = ids.index(document_id) + 1 if document_id in ids else 0
        for entry in [*self.entries[start:], *self.entries[:start]]:
            if entry.answered < entry.fields and entry.id != document_id:
                return entry.id
        return None


def build_queue(
    documents: Sequence[DocumentView], person: str, *, residual: float = DEFAULT_RESIDUAL
) -> Queue:
    """Unfinished documents first, each group worst-first (ties by id)."""
    entries = [
        QueueEntry(
            id=document.id,
            case_id=document.case_id,
            risk=document.risk,
            fields=len(document.fields),
            answered=document.answered_by(person),
            disputed=sum(row.disputed for row in document.fields),
            problems=len(document.problems),
        )
        for document in documents
    ]
    entries.sort(key=lambda entry: (entry.answered >= entry.fields, -entry.risk, entry.id))
    return Queue(
        entries=tuple(entries),
        documents_done=sum(document.done_by(person) for document in documents),
        fields_answered=sum(entry.answered for entry in entries),
        fields_total=sum(entry.fields for entry in entries),
        estimate=estimate_left(documents, person, residual=residual),
    )


def estimate_left(
    documents: Sequence[DocumentView], person: str, *, residual: float = DEFAULT_RESIDUAL
) -> Estimate:
    """How many of the documents ``person`` has not finished should still be reviewed."""
    done = [document for document in documents if document.done_by(person)]
    waiting = [document.risk for document in documents if not document.done_by(person)]
    return documents_left(
        [document.risk for document in done],
        [document.corrected_by(person) for document in done],
        waiting,
        residual=residual,
    )


def documents_left(
    done_risks: Sequence[float],
    done_errors: Sequence[bool],
    waiting_risks: Sequence[float],
    *,
    residual: float = DEFAULT_RESIDUAL,
) -> Estimate:
    """The estimate from reviewed documents (risk, corrected?) and the waiting risks.

    The error rate found is taken to hold for the waiting documents; the errors they
    may keep are ``residual`` of all documents; the review must catch the rest, and
    :func:`review_budget` gives the least strict risk threshold that caught that
    share among the reviewed documents. The count is the waiting documents at or
    above it. The reviewed documents were picked worst-first, so the rate found
    overstates the rate left: the estimate errs on the side of reviewing more.
    """
    sample = len(done_risks)
    if sample < MIN_SAMPLE:
        return Estimate(residual, None, None, sample, f"after {MIN_SAMPLE} finished documents")
    rate = sum(bool(error) for error in done_errors) / sample
    allowed = residual * (sample + len(waiting_risks))
    expected = rate * len(waiting_risks)
    if expected <= allowed:
        return Estimate(residual, 0, rate, sample, "the errors expected are within the target")
    capture = 1.0 - allowed / expected
    budget = review_budget(
        list(done_risks),
        list(done_errors),
        signal="disagreement",
        budgets=(1.0,),
        targets=(capture,),
    )
    threshold = budget.thresholds[0].threshold
    if threshold is None or not math.isfinite(threshold):
        return Estimate(residual, len(waiting_risks), rate, sample, "")
    left = sum(risk >= threshold for risk in waiting_risks)
    return Estimate(residual, left, rate, sample, f"risk ≥ {threshold:.2f}")
