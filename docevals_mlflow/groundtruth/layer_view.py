"""The combined view of a review file's layers: answers, fields, disagreements, final
values, and the review file with decisions they give.

Built by :func:`~docevals_mlflow.groundtruth.review_layers.load_layers`, which has
validated every layer first; nothing here reads or writes files.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Hashable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.layer_records import (
    Answer,
    Disputed,
    FieldView,
    FinalValue,
    LayerEntry,
    LayerFile,
    Role,
    StaleLayer,
)
from docevals_mlflow.groundtruth.models import Candidate
from docevals_mlflow.groundtruth.records import (
    ReviewClaim,
    ReviewFile,
    ReviewItem,
    canonical_field_path,
)
from docevals_mlflow.groundtruth.votes import vote_key

_FAILED_REASONS = ("omitted_by_all", "too_few_voters", "adjudication_unresolved")
_NO_PROPOSAL = object()
NO_PROPOSAL: Any = _NO_PROPOSAL
"""The value :attr:`Targets.proposals` holds for a path with nothing to accept."""


def answer_category(answer: Answer) -> Hashable:
    """What an answer says, as a category: equal exactly when two answers agree
    (values compare as the panel's votes do: ``12.5`` and ``"12.50"`` agree)."""
    return rating_category(answer.action, answer.value)


def rating_category(action: str, value: Any) -> Hashable:
    """:func:`answer_category` of an ``(action, value)`` pair."""
    if action in ("absent", "unreadable"):
        return action
    return ("value", vote_key(value))


class Targets:
    """The field paths of a review file a person may answer, and what each proposes."""

    def __init__(self, review: ReviewFile) -> None:
        self.review = review
        self.claims: dict[str, ReviewClaim] = {}
        self.items: dict[str, ReviewItem] = {}
        self._proposal: dict[str, Any] = {}
        for claim in review.claims:
            key = canonical_field_path(claim.path)
            self.claims[key] = claim
            self._proposal[key] = claim.expected
        for item in review.review_items:
            key = canonical_field_path(item.path)
            self.items[key] = item
            self._proposal[key] = majority_value(item)

    @property
    def proposals(self) -> Mapping[str, Any]:
        """Every answerable path with its proposed value, or :data:`NO_PROPOSAL`
        (read-only; for checks that look up every entry of every layer)."""
        return MappingProxyType(self._proposal)

    def paths(self) -> list[str]:
        """Every answerable path: the claims', then the review items' (file order)."""
        return list(self._proposal)

    def known(self, path: str) -> bool:
        """Whether ``path`` (canonical spelling) is a claim or a review item."""
        return path in self._proposal

    def key(self, path: str, *, source: str | None = None) -> str:
        """``path`` in canonical spelling, refused unless the review has it."""
        try:
            key = canonical_field_path(path)
        except InputError as exc:
            raise InputError(f"{path}: {exc.message}", source=source) from None
        if key not in self._proposal:
            known = self.paths()
            shown = ", ".join(known[:12]) + (
                f" (+{len(known) - 12} more)" if len(known) > 12 else ""
            )
            raise InputError(
                f"{path}: the review file has no such field path",
                source=source,
                expected=f"a claim's or review item's path: {shown or 'none'}",
            )
        return key

    def has_proposal(self, key: str) -> bool:
        """Whether ``accept`` means something for the path."""
        return self._proposal.get(key, _NO_PROPOSAL) is not _NO_PROPOSAL

    def proposed(self, key: str) -> Any:
        """The proposed value (``None`` when there is none)."""
        value = self._proposal.get(key, _NO_PROPOSAL)
        return None if value is _NO_PROPOSAL else value

    def effective(self, entry: LayerEntry | Answer) -> Any:
        """The value an entry's answer gives."""
        if entry.action == "set":
            return entry.value
        if entry.action == "accept":
            return self.proposed(entry.path)
        return None


def majority_value(item: ReviewItem) -> Any:
    """The value more than half of a disputed item's voters gave, else a marker for
    none (omissions count as voters; a tie is never a majority)."""
    total = sum(c.votes for c in item.provider_candidates) + len(item.omitted_by)
    for candidate in item.provider_candidates:
        if candidate.votes * 2 > total:
            return candidate.value
    return _NO_PROPOSAL


def current_digest(review: ReviewFile) -> str:
    """``review_rows.review_digest`` of a review read from disk, faster: its JSON dump is
    plain JSON data already, so it is serialised canonically in one call."""
    data = review.model_dump(mode="json")
    # No cycle check: a model dump holds none (and it costs a tenth of the time).
    text = json.dumps(
        data,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        check_circular=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReviewLayers:
    """A review file with its people's current layers (see :func:`load_layers`).

    Attributes:
        review_path: the review file.
        review: the review file's content.
        review_sha256: its review digest (what each current layer answers).
        layers: person → layer, current layers only.
        stale: layers written for another version of the review file, left out.
    """

    def __init__(
        self,
        review_path: Path,
        review: ReviewFile,
        review_sha256: str | None,
        targets: Targets,
        layers: dict[str, LayerFile],
        stale: list[StaleLayer],
    ) -> None:
        self.review_path = review_path
        self.review = review
        self._review_sha256 = review_sha256
        self.targets = targets
        self.layers = layers
        self.stale = stale
        # Per path, each person's last entry, its number of entries and the role;
        # Answer objects are made when asked for (a page shows a few fields at once).
        self._last: dict[str, dict[str, tuple[LayerEntry, int, Role]]] = {
            key: {} for key in targets.paths()
        }
        for person, layer in layers.items():
            role = layer.role
            last = {entry.path: entry for entry in layer.entries}
            if len(last) == len(layer.entries):  # one answer per path (the common case)
                for key, entry in last.items():
                    self._last[key][person] = (entry, 1, role)
                continue
            edits = Counter(entry.path for entry in layer.entries)
            for key, entry in last.items():
                self._last[key][person] = (entry, edits[key], role)
        self._answers: dict[str, dict[str, Answer]] = {}

    @property
    def review_sha256(self) -> str:
        """The review file's review digest (what each current layer answers)."""
        if self._review_sha256 is None:
            self._review_sha256 = current_digest(self.review)
        return self._review_sha256

    def _all_answers(self, key: str) -> dict[str, Answer]:
        found = self._answers.get(key)
        if found is None:
            # Validated when the layer was read: no second validation per answer.
            found = {
                person: Answer.model_construct(
                    person=person,
                    role=role,
                    path=key,
                    action=entry.action,
                    value=self.targets.effective(entry),
                    at=entry.at,
                    reason=entry.reason,
                    edits=edits,
                )
                for person, (entry, edits, role) in sorted(self._last[key].items())
            }
            self._answers[key] = found
        return found

    def reviewer_ratings(self, key: str) -> dict[str, tuple[str, Any]]:
        """Reviewers' current ``(action, value)`` for a canonical path (no copies):
        what agreement statistics read for every field of every document."""
        return {
            person: (entry.action, self.targets.effective(entry))
            for person, (entry, _, role) in self._last[key].items()
            if role == "reviewer"
        }

    def current_entries(self) -> Iterator[tuple[str, Mapping[str, tuple[LayerEntry, int, Role]]]]:
        """Per answerable path (file order), each person's last entry for it, their
        number of entries and their role; read-only, no copies (what agreement
        statistics walk for every field of every document)."""
        for key, last in self._last.items():
            yield key, MappingProxyType(last)

    def people(self, role: Role | None = None) -> list[str]:
        """The people with a current layer (of ``role``, when given), sorted."""
        return sorted(p for p, layer in self.layers.items() if role in (None, layer.role))

    def answers(self, path: str, *, role: Role | None = None) -> dict[str, Answer]:
        """Each person's current answer for ``path`` (of ``role``, when given).

        Raises:
            InputError: the review file has no such path.
        """
        key = self.targets.key(path, source=str(self.review_path))
        found = self._all_answers(key)
        if role is None:
            return dict(found)
        return {p: a for p, a in found.items() if a.role == role}

    def disagreements(self, required_reviewers: int = 2) -> list[Disputed]:
        """Paths whose reviewers answer differently (``differ``), or that fewer than
        ``required_reviewers`` reviewers answered (``incomplete``)."""
        found = []
        for key in self.targets.paths():
            answers = self.answers(key, role="reviewer")
            adjudicated = any(r == "adjudicator" for _, _, r in self._last[key].values())
            kinds = {answer_category(a) for a in answers.values()}
            if len(kinds) > 1:
                found.append(
                    Disputed(path=key, kind="differ", answers=answers, adjudicated=adjudicated)
                )
            elif len(answers) < required_reviewers:
                found.append(
                    Disputed(path=key, kind="incomplete", answers=answers, adjudicated=adjudicated)
                )
        return found

    def final_values(self, required_reviewers: int = 1) -> dict[str, FinalValue]:
        """Per path: the adjudicators' value when they answered (and agree), else the
        value all reviewers agree on when at least ``required_reviewers`` answered,
        else unresolved. Of equal answers, the earliest one's spelling is kept."""
        finals = {}
        for key in self.targets.paths():
            adjudicators = self.answers(key, role="adjudicator")
            reviewers = self.answers(key, role="reviewer")
            if adjudicators:
                finals[key] = _agreed(key, adjudicators, "adjudicated", 1)
            else:
                finals[key] = _agreed(key, reviewers, "agreed", max(required_reviewers, 1))
        return finals

    def fields(self, required_reviewers: int = 1) -> list[FieldView]:
        """Every reviewable path with what a review page shows beside it."""
        confidence = _lowest_confidence(self.review)
        failed = [p.provider for p in self.review.providers if not p.usable]
        finals = self.final_values(required_reviewers)
        views = []
        for key, claim in self.targets.claims.items():
            candidate = Candidate(
                value=claim.expected,
                providers=list(claim.providers),
                votes=float(len(claim.providers)),
                evidence=list(claim.evidence),
                reference_ids=list(claim.reference_ids),
            )
            views.append(
                FieldView(
                    path=key,
                    kind="claim",
                    proposed=claim.expected,
                    has_proposal=True,
                    agreement=claim.agreement,
                    candidates=[candidate],
                    evidence=list(claim.evidence),
                    reference_ids=list(claim.reference_ids),
                    confidence=confidence.get(key),
                    failed_providers=failed,
                    failed_upstream=bool(failed),
                    answers=self.answers(key),
                    final=finals[key],
                )
            )
        for key, item in self.targets.items.items():
            total = sum(c.votes for c in item.provider_candidates) + len(item.omitted_by)
            best = max((c.votes for c in item.provider_candidates), default=0.0)
            views.append(
                FieldView(
                    path=key,
                    kind="item",
                    proposed=self.targets.proposed(key),
                    has_proposal=self.targets.has_proposal(key),
                    reason=item.reason,
                    agreement=best / total if total else 0.0,
                    candidates=list(item.provider_candidates),
                    omitted_by=list(item.omitted_by),
                    evidence=[e for c in item.provider_candidates for e in c.evidence],
                    reference_ids=sorted(
                        {r for c in item.provider_candidates for r in c.reference_ids}
                    ),
                    confidence=confidence.get(key),
                    failed_providers=failed,
                    failed_upstream=bool(failed) or item.reason in _FAILED_REASONS,
                    answers=self.answers(key),
                    final=finals[key],
                )
            )
        return views

    def to_review_file(self, required_reviewers: int = 1) -> ReviewFile:
        """The review file with the final values as decisions, for ``approve_review``.

        Review items get ``set`` (a value) or ``omit`` (absent or unreadable); a claim
        the people corrected gets the corrected value; a claim decided absent, or
        still unresolved, becomes a review item (``omit`` or ``unresolved``), so
        approving refuses while any field is unresolved.
        """
        finals = self.final_values(required_reviewers)
        data = self.review.model_dump(mode="python")
        claims, items = [], []
        for claim_data, (key, claim) in zip(
            data["claims"], self.targets.claims.items(), strict=True
        ):
            final = finals[key]
            if final.status != "unresolved" and not final.absent:
                claims.append({**claim_data, "expected": final.value})
                continue
            candidate = {
                "value": claim.expected,
                "providers": list(claim.providers),
                "votes": float(len(claim.providers)),
                "evidence": list(claim.evidence),
                "reference_ids": list(claim.reference_ids),
            }
            items.append(
                {
                    "path": claim.path,
                    "reason": "conflict",
                    "provider_candidates": [candidate],
                    **_decision(final),
                }
            )
        for item_data, key in zip(data["review_items"], self.targets.items, strict=True):
            items.append({**item_data, **_decision(finals[key])})
        data.update(claims=claims, review_items=items, status="needs_review", approved_by=None)
        return ReviewFile.model_validate(data)


def _decision(final: FinalValue) -> dict[str, Any]:
    if final.status == "unresolved":
        return {"decision": "unresolved", "expected": None, "notes": "reviewers: unresolved"}
    note = f"{final.status}" + (f": {final.reason}" if final.reason else "")
    if final.absent:
        return {"decision": "omit", "expected": None, "notes": f"{note} ({final.action})"}
    return {"decision": "set", "expected": final.value, "notes": note}


def _agreed(key: str, answers: dict[str, Answer], status: Any, required: int) -> FinalValue:
    if len(answers) < required or len({answer_category(a) for a in answers.values()}) != 1:
        return FinalValue(path=key, status="unresolved")
    first = min(answers.values(), key=lambda a: (a.at, a.person))
    reasons = [a.reason for a in answers.values() if a.reason]
    return FinalValue(
        path=key,
        status=status,
        action=first.action,
        value=None if first.absent else first.value,
        reason="; ".join(reasons) or None,
    )


def _lowest_confidence(review: ReviewFile) -> dict[str, float]:
    lowest: dict[str, float] = {}
    for provider in review.providers:
        for claim in provider.claims:
            if claim.confidence is None:
                continue
            try:
                key = canonical_field_path(claim.path)
            except InputError:
                continue
            lowest[key] = min(lowest.get(key, 1.0), claim.confidence)
    return lowest
