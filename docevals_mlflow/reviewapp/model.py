"""What the pages show: one document's fields with the panel's view and people's answers.

Plain frozen dataclasses built by :mod:`~docevals_mlflow.reviewapp.store` (the one
module that talks to the reviewer layers); everything else in the app reads these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reading:
    """One model's reading of a field: its value, evidence and confidence."""

    provider: str
    value: Any
    evidence: str = ""
    confidence: float | None = None


@dataclass(frozen=True)
class CandidateRow:
    """A value the panel proposed for a disputed field, with its votes."""

    value: Any
    providers: tuple[str, ...]
    votes: float


@dataclass(frozen=True)
class AnswerRow:
    """A person's current answer on a field (the last entry of their layer for it)."""

    person: str
    role: str
    action: str
    value: Any = None
    at: str = ""
    reason: str | None = None
    edits: int = 1
    """How many entries the person wrote for the field (their history length)."""


@dataclass(frozen=True)
class FieldRow:
    """One reviewable field of a document."""

    path: str
    disputed: bool
    proposed: Any
    has_proposal: bool
    """Whether "accept" means something: an agreed claim, or a panel majority."""
    reason: str | None
    agreement: float | None
    confidence: float | None
    candidates: tuple[CandidateRow, ...] = ()
    readings: tuple[Reading, ...] = ()
    evidence: tuple[str, ...] = ()
    answers: tuple[AnswerRow, ...] = ()
    omitted_by: tuple[str, ...] = ()
    failed_upstream: bool = False
    """Nothing usable came from upstream (no provider gave it, too few voters...)."""
    reviewers_disagree: bool = False
    final_status: str = "unresolved"
    final_value: Any = None
    final_absent: bool = False

    def answer_of(self, person: str) -> AnswerRow | None:
        return next((answer for answer in self.answers if answer.person == person), None)

    @property
    def risk(self) -> float:
        """Worst first: reviewers disagreeing, a failed or disputed reading, low
        confidence, low panel agreement (each adds; ties keep file order)."""
        score = 0.0
        if self.reviewers_disagree:
            score += 4.0
        if self.failed_upstream:
            score += 3.0
        if self.disputed:
            score += 2.0
        if self.confidence is not None:
            score += 1.0 - self.confidence
        if self.agreement is not None:
            score += 1.0 - self.agreement
        return score


@dataclass(frozen=True)
class SourceRow:
    """A source document of the review, and whether it was found beside the file."""

    name: str
    found: bool
    message: str = ""
    sha256_matches: bool | None = None


@dataclass(frozen=True)
class DocumentView:
    """One review file as the app shows it."""

    id: str
    """The review file's path relative to the served folder (POSIX)."""
    case_id: str
    fields: tuple[FieldRow, ...]
    sources: tuple[SourceRow, ...] = ()
    failed_providers: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    """Stale or unreadable layers and the like: shown at the top of the page."""
    people: tuple[str, ...] = field(default_factory=tuple)
    signed: tuple[str, ...] = ()
    """People whose layer carries a signature (an answer written after it drops it)."""
    roles: dict[str, str] = field(default_factory=dict)
    """Each person's role in their layer."""

    @property
    def risk(self) -> float:
        worst = max((row.risk for row in self.fields), default=0.0)
        total = sum(row.risk for row in self.fields)
        return worst + 0.1 * total + (2.0 if self.failed_providers else 0.0)

    def answered_by(self, person: str) -> int:
        return sum(row.answer_of(person) is not None for row in self.fields)

    def done_by(self, person: str) -> bool:
        return self.answered_by(person) == len(self.fields)

    def corrected_by(self, person: str) -> bool:
        """Whether the person changed anything the panel proposed (a found error)."""
        for row in self.fields:
            answer = row.answer_of(person)
            # A field with no proposal was flagged already; only a proposal overruled
            # is an error the panel would have let through.
            if answer is not None and row.has_proposal and answer.action != "accept":
                return True
        return False

    def ordered_fields(self) -> list[FieldRow]:
        """Fields worst-first (stable: equal risk keeps file order)."""
        return sorted(self.fields, key=lambda row: -row.risk)
