from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.groundtruth.consensus import check_expected_fields, screen_claims, tally
from docevals_mlflow.groundtruth.models import (
    ConsensusRow,
    Disagreement,
    GeneratedClaim,
    ProviderGeneration,
)
from docevals_mlflow.groundtruth.votes import vote_key
from tests.groundtruth.generation_fakes import OMIT, generation

FIELDS = ["$.total", "$.currency"]


def decided(result, path):
    for item in [*result.consensus, *result.disagreements]:
        if item.path == path:
            return item
    raise AssertionError(f"{path} not decided")


def test_agreeing_numbers_in_different_forms_are_accepted_in_the_first_labels_form():
    result = tally(
        [
            generation("b", {"$.total": 12.5, "$.currency": "eur"}),
            generation("a", {"$.total": "12.50", "$.currency": "EUR"}),
        ],
        FIELDS,
        1.0,
    )
    total = decided(result, "$.total")
    assert isinstance(total, ConsensusRow)
    assert total.expected_value == "12.50"  # "a" sorts first, whatever the input order
    assert total.agreement == 1.0
    assert total.providers == ["a", "b"]
    assert decided(result, "$.currency").expected_value == "EUR"
    assert [provider.provider for provider in result.providers] == ["a", "b"]
    assert result.overall_agreement == 1.0


def test_ambiguous_comma_is_not_agreement_with_fifteen():
    result = tally(
        [generation("a", {"$.total": "1,5"}), generation("b", {"$.total": 15})],
        ["$.total"],
        0.5,
    )
    item = decided(result, "$.total")
    assert isinstance(item, Disagreement)
    assert item.reason == "tie"
    assert [candidate.value for candidate in item.candidates] == ["1,5", 15]


@pytest.mark.parametrize("minimum", [0.01, 0.5, 1.0])
def test_a_tie_is_never_accepted_whatever_the_threshold(minimum):
    result = tally(
        [generation("a", {"$.total": 1}), generation("b", {"$.total": 2})], ["$.total"], minimum
    )
    item = decided(result, "$.total")
    assert isinstance(item, Disagreement)
    assert item.reason == "tie"
    assert item.agreement == 0.5
    assert [candidate.votes for candidate in item.candidates] == [1.0, 1.0]


def test_a_value_tied_with_absence_is_not_accepted():
    result = tally(
        [generation("a", {"$.total": 1}), generation("b", {"$.total": OMIT})], ["$.total"], 0.5
    )
    item = decided(result, "$.total")
    assert isinstance(item, Disagreement)
    assert item.reason == "omitted_by_some"
    assert item.omitted_by == ["b"]
    assert item.agreement == 0.5


def test_majority_is_accepted_when_the_threshold_allows_it():
    providers = [
        generation("a", {"$.total": 7}),
        generation("b", {"$.total": "7.0"}),
        generation("c", {"$.total": 8}),
    ]
    strict = decided(tally(providers, ["$.total"], 1.0), "$.total")
    assert isinstance(strict, Disagreement)
    assert strict.reason == "conflict"
    assert [c.votes for c in strict.candidates] == [2.0, 1.0]
    majority = decided(tally(providers, ["$.total"], 0.6), "$.total")
    assert isinstance(majority, ConsensusRow)
    assert majority.expected_value == 7
    assert majority.agreement == pytest.approx(2 / 3)


def test_seven_of_ten_reach_a_threshold_of_seventy_percent():
    providers = [generation(f"p{i}", {"$.total": 1 if i < 7 else 2}) for i in range(10)]
    row = decided(tally(providers, ["$.total"], 0.7), "$.total")
    assert isinstance(row, ConsensusRow)
    assert row.agreement == pytest.approx(0.7)


def test_unanimous_omission_is_not_agreement():
    result = tally(
        [generation("a", {"$.total": None}), generation("b", {"$.total": OMIT})],
        ["$.total"],
        0.5,
    )
    item = decided(result, "$.total")
    assert isinstance(item, Disagreement)
    assert item.reason == "omitted_by_all"
    assert item.agreement == 0.0
    assert item.omitted_by == ["a", "b"]
    assert result.overall_agreement == 0.0


def test_a_group_casts_one_vote():
    # Two samples of one model cannot outvote another model.
    providers = [
        generation("gpt-1", {"$.total": 1}, group="openai:gpt"),
        generation("gpt-2", {"$.total": 1}, group="openai:gpt"),
        generation("claude", {"$.total": 2}, group="anthropic:claude"),
    ]
    item = decided(tally(providers, ["$.total"], 0.5), "$.total")
    assert isinstance(item, Disagreement)
    assert item.reason == "tie"
    assert {c.value: c.votes for c in item.candidates} == {1: 1.0, 2: 1.0}
    assert {c.value: c.providers for c in item.candidates} == {
        1: ["gpt-1", "gpt-2"],
        2: ["claude"],
    }


def test_a_split_group_counts_as_a_voter_but_backs_no_value():
    providers = [
        generation("gpt-1", {"$.total": 1}, group="openai:gpt"),
        generation("gpt-2", {"$.total": 2}, group="openai:gpt"),
        generation("claude", {"$.total": 1}, group="anthropic:claude"),
    ]
    item = decided(tally(providers, ["$.total"], 1.0), "$.total")
    assert isinstance(item, Disagreement)
    assert item.reason == "conflict"
    assert item.agreement == 0.5  # one of two groups backs 1; the split group backs none
    row = decided(tally(providers, ["$.total"], 0.5), "$.total")
    assert isinstance(row, ConsensusRow)
    assert row.providers == ["claude", "gpt-1"]


def test_failed_providers_do_not_vote_and_one_voter_settles_nothing():
    providers = [
        generation("a", {"$.total": 1}),
        generation("b", {}, status="error"),
        generation("c", {"$.total": 1}),
    ]
    row = decided(tally(providers, ["$.total"], 1.0), "$.total")
    assert isinstance(row, ConsensusRow)
    assert row.agreement == 1.0
    alone = tally(providers[:2], ["$.total"], 1.0)
    item = decided(alone, "$.total")
    assert isinstance(item, Disagreement)
    assert item.reason == "too_few_voters"
    assert item.agreement == 0.0
    assert [c.providers for c in item.candidates] == [["a"]]


def test_screening_reports_duplicates_unexpected_and_invalid_paths():
    answer = ProviderGeneration(
        provider="a",
        claims=[
            GeneratedClaim(path="total", expected_value=1),
            GeneratedClaim(path="$['total']", expected_value=2),
            GeneratedClaim(path="$.total", expected_value=3),
            GeneratedClaim(path="$.extra", expected_value="x"),
            GeneratedClaim(path="$.items[x]", expected_value="?"),
        ],
    )
    screened, voting = screen_claims(answer, ["$.total"])
    assert screened.duplicate_paths == ["$.total"]
    assert screened.unexpected_paths == ["$.extra"]
    assert screened.invalid_paths == ["$.items[x]"]
    assert voting["$.total"].expected_value == 1  # the first claim is kept
    assert [claim.path for claim in screened.claims] == [
        "$.total",
        "$.total",
        "$.total",
        "$.extra",
        "$.items[x]",
    ]
    again, _ = screen_claims(screened, ["$.total"])
    assert again == screened


def test_paths_in_either_notation_vote_together():
    result = tally(
        [generation("a", {"total": 5}), generation("b", {"$.total": 5})], ["$.total"], 1.0
    )
    assert isinstance(decided(result, "$.total"), ConsensusRow)


def test_configuration_is_checked():
    assert check_expected_fields(["total", "$['a.b']"]) == ["$.total", "$['a.b']"]
    with pytest.raises(ConfigurationError, match=r"expected_fields\[1\]"):
        check_expected_fields(["total", "$.total"])
    with pytest.raises(ConfigurationError, match="column"):
        check_expected_fields(["$.items[x]"])
    with pytest.raises(ConfigurationError, match="at least one"):
        check_expected_fields([])
    for bad in (0, -0.1, 1.5, float("nan")):
        with pytest.raises(ConfigurationError, match="minimum_agreement"):
            tally([generation("a", {}), generation("b", {})], ["$.x"], bad)
    with pytest.raises(ConfigurationError, match="unique"):
        tally([generation("a", {}), generation("a", {})], ["$.x"], 1.0)


# -- properties ------------------------------------------------------------------

VALUES = st.sampled_from([OMIT, None, 1, "1.0", 15, "1,5", "x", "X ", True, "true", 2.5])
PATHS = ["$.a", "$.b"]


@st.composite
def panels(draw):
    count = draw(st.integers(min_value=2, max_value=6))
    providers = []
    for index in range(count):
        label = f"p{index}"
        group = draw(st.sampled_from(["", "g0", "g1"]))
        status = draw(st.sampled_from(["ok", "ok", "ok", "repaired", "error", "malformed"]))
        claims = []
        for path in PATHS:
            for _ in range(draw(st.integers(min_value=0, max_value=2))):
                value = draw(VALUES)
                if value is not OMIT:
                    claims.append(GeneratedClaim(path=path, expected_value=value))
        providers.append(
            ProviderGeneration(provider=label, group=group, status=status, claims=claims)
        )
    minimum = draw(st.sampled_from([0.01, 0.34, 0.5, 0.51, 2 / 3, 1.0]))
    return providers, minimum


def group_votes(providers, path):
    """An independent count of each group's vote on ``path`` (``None`` is absence)."""
    members = {}
    for provider in providers:
        if provider.status not in ("ok", "repaired"):
            continue
        first = next((c for c in provider.claims if c.path == path), None)
        key = None if first is None else vote_key(first.expected_value)
        members.setdefault(provider.group or provider.provider, []).append(key)
    votes = Counter()
    for keys in members.values():
        key, count = Counter(keys).most_common(1)[0]
        if count * 2 > len(keys):
            votes[key] += 1
    return votes, len(members)


@settings(max_examples=300, deadline=None)
@given(panels(), st.randoms())
def test_the_result_does_not_depend_on_provider_order(panel, random):
    providers, minimum = panel
    shuffled = list(providers)
    random.shuffle(shuffled)
    one = tally(providers, PATHS, minimum)
    other = tally(shuffled, PATHS, minimum)
    assert one.consensus == other.consensus
    assert one.disagreements == other.disagreements
    assert one.providers == other.providers


@settings(max_examples=300, deadline=None)
@given(panels())
def test_only_strict_winners_with_enough_votes_are_accepted(panel):
    providers, minimum = panel
    result = tally(providers, PATHS, minimum)
    assert len(result.consensus) + len(result.disagreements) == len(PATHS)
    for row in result.consensus:
        votes, voters = group_votes(providers, row.path)
        key = vote_key(row.expected_value)
        assert key is not None  # absence is never accepted
        assert voters >= 2
        assert all(votes[key] > count for other, count in votes.items() if other != key)
        assert votes[key] >= minimum * voters - 1e-9
        assert row.agreement == pytest.approx(votes[key] / voters)
    for item in result.disagreements:
        if item.reason == "tie":
            assert item.candidates[0].votes == item.candidates[1].votes


@settings(max_examples=300, deadline=None)
@given(panels())
def test_agreement_is_a_share(panel):
    providers, minimum = panel
    result = tally(providers, PATHS, minimum)
    shares = [row.agreement for row in result.consensus] + [
        item.agreement for item in result.disagreements
    ]
    assert all(0.0 <= share <= 1.0 for share in shares)
    assert 0.0 <= result.overall_agreement <= 1.0
    for item in result.disagreements:
        if item.reason in ("omitted_by_all", "too_few_voters"):
            assert item.agreement == 0.0
