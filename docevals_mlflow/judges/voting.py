"""Model-balanced voting: one vote per provider/model group, never per sample.

Samples of one provider/model (repeated runs, other temperatures) form a
self-consistency group; a group votes its strict-majority answer, or ``uncertain``.
Groups then vote by the panel's rule. This keeps five samples of one model from
outvoting two other models.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

VoteRule = Literal["majority", "unanimous"]
UNSURE = frozenset({"uncertain", "not_applicable", "not_verifiable", "ambiguous", None})


def group_vote(samples: Sequence[str | None]) -> str:
    """A group's vote: the answer more than half of its samples gave, else uncertain."""
    if not samples:
        return "uncertain"
    answer, count = Counter(samples).most_common(1)[0]
    if answer is None or count * 2 <= len(samples):
        return "uncertain"
    return answer


@dataclass(frozen=True)
class Decision:
    """The panel's decision on one question (the case verdict, or one claim)."""

    answer: str
    """The winning answer, or ``uncertain`` (tie, too little agreement, unsure winner)."""
    agreement: float
    """Share of groups that voted the winning answer (of the plurality when no winner)."""
    consensus: bool
    """A winner was found under the rule."""
    dissent: bool
    """At least one group voted otherwise than the winner (or there was no winner)."""
    votes: dict[str, str]
    """Group → vote."""


def decide(
    votes: Mapping[str, str],
    *,
    rule: VoteRule = "majority",
    minimum_agreement: float | None = None,
) -> Decision:
    """The panel's answer from one vote per group.

    * ``majority``: the answer of more than half of the groups (a tie is no winner);
      with ``minimum_agreement`` (a fraction), the most common answer wins when its
      share reaches it — a unique most common answer only, ties never win;
    * ``unanimous``: every group must agree.

    A winning "unsure" answer (uncertain, not verifiable, ambiguous) is reported as
    ``uncertain``.
    """
    if not votes:
        return Decision("uncertain", 0.0, False, False, {})
    counts = Counter(votes.values()).most_common()
    top_answer, top_count = counts[0]
    tied = len(counts) > 1 and counts[1][1] == top_count
    share = top_count / len(votes)
    if rule == "unanimous":
        winner = len(counts) == 1
    elif minimum_agreement is not None:
        winner = not tied and share >= minimum_agreement
    else:
        winner = top_count * 2 > len(votes)
    answer = top_answer if winner and top_answer not in UNSURE else "uncertain"
    dissent = not winner or any(vote != top_answer for vote in votes.values())
    return Decision(answer, share, winner and answer != "uncertain", dissent, dict(votes))
