"""Reconciling what several generators read, field by field.

For each expected field every *voter* casts one vote: a normalised value (see
:mod:`~docevals_mlflow.groundtruth.votes`) or *absent* when it gave none. The rules:

* **Voters are provider groups.** Generators in one ``group`` (by default one
  provider and model) are one reader, not several: the group votes the value more
  than half of its members gave (absence included); a group split without such a
  majority still counts as a voter but backs no value, which can only lower
  agreement. A generator whose answer was unusable (error, refusal, truncation,
  malformed) is not a voter.
* **Acceptance.** A value is accepted when at least two groups voted, its vote share
  reaches ``minimum_agreement`` and it has strictly more votes than every other value
  *and* than absence. A tie for the top is therefore never accepted, whatever the
  threshold, and the result never depends on the order of the generators.
* **Absence is never agreed.** A field every voter omitted is ``omitted_by_all`` with
  agreement 0, not a unanimous agreement that it is empty.
* **What is reported.** An accepted value keeps the form the first proposing
  generator wrote (generators taken in label order); agreement is its vote share.
  Each disputed field lists every distinct value with its votes and proposers, and
  who omitted the field. Duplicate paths (the first claim is used), paths outside
  the expected fields and invalid paths are recorded on each generator and kept out
  of the vote.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from docevals_mlflow.core.paths import format_path, parse_path
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.groundtruth.models import (
    Candidate,
    ConsensusRow,
    Disagreement,
    DisagreementReason,
    GeneratedClaim,
    ProviderGeneration,
)
from docevals_mlflow.groundtruth.votes import vote_key

MINIMUM_VOTERS = 2
"""Independent groups that must vote before any value can be accepted."""

_ABSENT: Hashable = ("absent",)
# Shares are compared with a margin: 0.7 * 10 is 7.000000000000001 in floating point,
# and seven votes of ten must reach a threshold of 0.7.
_EPSILON = 1e-9


def canonical_path(text: str) -> str:
    """The one spelling of a field path (``total`` and ``$['total']`` give ``$.total``).

    Raises:
        InputError: the text is not a valid field path.
    """
    return format_path(parse_path(text))


def check_expected_fields(fields: Iterable[str]) -> list[str]:
    """The expected fields in canonical spelling, in the order given.

    Raises:
        ConfigurationError: no field, an invalid path, or one field given twice.
    """
    canonical: list[str] = []
    seen: dict[str, str] = {}
    for index, field in enumerate(fields):
        where = f"expected_fields[{index}]"
        try:
            path = canonical_path(field)
        except InputError as exc:
            raise ConfigurationError(exc.message, path=where) from None
        if path in seen:
            raise ConfigurationError(f"{field!r} is the same field as {seen[path]!r}", path=where)
        seen[path] = field
        canonical.append(path)
    if not canonical:
        raise ConfigurationError("at least one expected field is required", path="expected_fields")
    return canonical


def check_minimum_agreement(value: float) -> float:
    """``value`` when it is a share in (0, 1].

    Raises:
        ConfigurationError: otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ConfigurationError(
            f"minimum_agreement must be more than 0 and at most 1, got {value!r}",
            path="minimum_agreement",
        )
    return float(value)


def screen_claims(
    generation: ProviderGeneration, expected: Iterable[str]
) -> tuple[ProviderGeneration, dict[str, GeneratedClaim]]:
    """A generator's claims sorted into the vote and the record.

    Returns the generation with canonical claim paths and its ``duplicate_paths``,
    ``unexpected_paths`` and ``invalid_paths`` filled in (recomputed, so screening twice
    changes nothing), and the claim that votes for each expected path (the first one
    given).
    """
    wanted = set(expected)
    voting: dict[str, GeneratedClaim] = {}
    claims: list[GeneratedClaim] = []
    duplicates: list[str] = []
    unexpected: list[str] = []
    invalid: list[str] = []
    for claim in generation.claims:
        try:
            path = canonical_path(claim.path)
        except InputError:
            invalid.append(claim.path)
            claims.append(claim)
            continue
        if path != claim.path:
            claim = claim.model_copy(update={"path": path})
        claims.append(claim)
        if path not in wanted:
            if path not in unexpected:
                unexpected.append(path)
        elif path in voting:
            if path not in duplicates:
                duplicates.append(path)
        else:
            voting[path] = claim
    screened = generation.model_copy(
        update={
            "claims": claims,
            "duplicate_paths": duplicates,
            "unexpected_paths": unexpected,
            "invalid_paths": invalid,
        }
    )
    return screened, voting


@dataclass(frozen=True)
class Tally:
    """The outcome of a vote over every expected field."""

    providers: list[ProviderGeneration]
    """The generators in label order, screened (see :func:`screen_claims`)."""
    consensus: list[ConsensusRow]
    disagreements: list[Disagreement]

    @property
    def overall_agreement(self) -> float:
        """Mean agreement over the fields (disputed fields with their best share)."""
        return overall_agreement(self.consensus, self.disagreements)


def overall_agreement(
    consensus: Sequence[ConsensusRow], disagreements: Sequence[Disagreement]
) -> float:
    """Mean agreement over accepted and disputed fields (0 when there are none)."""
    shares = [row.agreement for row in consensus] + [item.agreement for item in disagreements]
    return sum(shares) / len(shares) if shares else 0.0


@dataclass(frozen=True)
class _Ballot:
    label: str
    key: Hashable
    claim: GeneratedClaim | None


def _group_vote(ballots: Sequence[_Ballot]) -> Hashable | None:
    """The group's value (``_ABSENT`` included), or ``None`` when the group is split."""
    key, count = Counter(ballot.key for ballot in ballots).most_common(1)[0]
    return key if count * 2 > len(ballots) else None


def _candidates(ballots: Sequence[_Ballot], group_votes: Mapping[Hashable, int]) -> list[Candidate]:
    proposals: dict[Hashable, list[_Ballot]] = {}
    for ballot in ballots:  # ballots are in label order
        if ballot.key != _ABSENT:
            proposals.setdefault(ballot.key, []).append(ballot)
    candidates: list[tuple[int, str, Candidate]] = []
    for key, backers in proposals.items():
        first = backers[0].claim
        assert first is not None
        claims = [backer.claim for backer in backers if backer.claim is not None]
        reference_ids: list[str] = []
        for claim in claims:
            if claim.reference_id and claim.reference_id not in reference_ids:
                reference_ids.append(claim.reference_id)
        votes = group_votes.get(key, 0)
        candidate = Candidate(
            value=first.expected_value,
            providers=[backer.label for backer in backers],
            votes=float(votes),
            evidence=[claim.evidence for claim in claims if claim.evidence],
            reference_ids=reference_ids,
        )
        candidates.append((votes, backers[0].label, candidate))
    # Most votes first; among equals the value whose first proposer sorts first.
    candidates.sort(key=lambda entry: (-entry[0], entry[1]))
    return [candidate for _, _, candidate in candidates]


def _decide_field(
    path: str,
    ballots_by_group: Mapping[str, Sequence[_Ballot]],
    minimum_agreement: float,
    *,
    resolved_by: Literal["panel", "adjudication", "union"] = "panel",
) -> ConsensusRow | Disagreement:
    """The decision on one field from the ballots of each voting group."""
    ballots = sorted(
        (ballot for group in ballots_by_group.values() for ballot in group),
        key=lambda ballot: ballot.label,
    )
    votes: Counter[Hashable] = Counter()
    for group_ballots in ballots_by_group.values():
        vote = _group_vote(group_ballots)
        if vote is not None:
            votes[vote] += 1
    voters = len(ballots_by_group)
    candidates = _candidates(ballots, votes)
    omitted_by = [ballot.label for ballot in ballots if ballot.key == _ABSENT]
    absent_votes = votes.get(_ABSENT, 0)
    reason: DisagreementReason
    if voters < MINIMUM_VOTERS:
        return Disagreement(
            path=path,
            reason="too_few_voters",
            candidates=candidates,
            omitted_by=omitted_by,
            agreement=0.0,
        )
    if not candidates:
        return Disagreement(path=path, reason="omitted_by_all", omitted_by=omitted_by)
    best = candidates[0]
    share = best.votes / voters
    rivals = [candidate.votes for candidate in candidates[1:]] + [float(absent_votes)]
    if best.votes > max(rivals) and best.votes >= minimum_agreement * voters - _EPSILON:
        return ConsensusRow(
            path=path,
            expected_value=best.value,
            agreement=share,
            providers=best.providers,
            evidence=best.evidence,
            reference_ids=best.reference_ids,
            resolved_by=resolved_by,
        )
    if len(candidates) > 1 and candidates[1].votes == best.votes and best.votes >= absent_votes:
        reason = "tie"
    elif len(candidates) > 1:
        reason = "conflict"
    elif omitted_by:
        reason = "omitted_by_some"
    else:  # pragma: no cover - one value nobody omitted is always accepted
        reason = "conflict"
    return Disagreement(
        path=path, reason=reason, candidates=candidates, omitted_by=omitted_by, agreement=share
    )


def tally(
    providers: Sequence[ProviderGeneration],
    expected_fields: Sequence[str],
    minimum_agreement: float,
    *,
    resolved_by: Literal["panel", "adjudication", "union"] = "panel",
) -> Tally:
    """Vote on every expected field (see the module docstring for the rules).

    ``expected_fields`` must be canonical paths (see :func:`check_expected_fields`).

    Raises:
        ConfigurationError: two generators share a label, or ``minimum_agreement`` is
            not in (0, 1].
    """
    check_minimum_agreement(minimum_agreement)
    labels = Counter(provider.provider for provider in providers)
    repeated = sorted(label for label, count in labels.items() if count > 1)
    if repeated:
        raise ConfigurationError(f"generator labels must be unique; repeated: {repeated}")
    screened: list[ProviderGeneration] = []
    votes_of: dict[str, dict[str, GeneratedClaim]] = {}
    for provider in sorted(providers, key=lambda item: item.provider):
        generation, voting = screen_claims(provider, expected_fields)
        screened.append(generation)
        votes_of[generation.provider] = voting
    consensus: list[ConsensusRow] = []
    disagreements: list[Disagreement] = []
    for path in expected_fields:
        groups: dict[str, list[_Ballot]] = {}
        for generation in screened:
            if not generation.usable:
                continue
            claim = votes_of[generation.provider].get(path)
            key = None if claim is None else vote_key(claim.expected_value)
            ballot = _Ballot(generation.provider, _ABSENT if key is None else key, claim)
            groups.setdefault(generation.group or generation.provider, []).append(ballot)
        decision = _decide_field(path, groups, minimum_agreement, resolved_by=resolved_by)
        if isinstance(decision, ConsensusRow):
            consensus.append(decision)
        else:
            disagreements.append(decision)
    return Tally(providers=screened, consensus=consensus, disagreements=disagreements)
