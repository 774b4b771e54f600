"""Review budgets: hand-computed captures, ties counted pro rata, thresholds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.diagnostics import budget_key, review_budget
from docevals_mlflow.errors import ConfigurationError, InputError

# Twenty fields with confidence 0.05, 0.10, ..., 1.00; wrong at 0.05, 0.15, 0.50, 0.90.
CONFIDENCE = [index / 20 for index in range(1, 21)]
WRONG = [value in (0.05, 0.15, 0.5, 0.9) for value in CONFIDENCE]


def test_budgets_count_the_least_confident_first():
    review = review_budget(CONFIDENCE, WRONG)
    assert review.items == 20
    assert review.errors == 4
    # 5% = 1 field (0.05, wrong); 10% = 2 (0.05, 0.10); 20% = 4 (0.05 ... 0.20).
    assert [point.reviewed for point in review.budgets] == [1, 2, 4]
    assert [point.error_capture for point in review.budgets] == [0.25, 0.25, 0.5]
    assert [point.cutoff for point in review.budgets] == [0.05, 0.1, 0.2]


def test_threshold_is_the_least_strict_that_reaches_the_target():
    review = review_budget(CONFIDENCE, WRONG, targets=(0.5, 0.75, 0.8))
    half, three_quarters, most = review.thresholds
    # Two errors (0.05, 0.15): review confidence <= 0.15, i.e. 3 of 20 fields.
    assert (half.threshold, half.reviewed, half.review_rate, half.error_capture) == (
        0.15,
        3,
        0.15,
        0.5,
    )
    assert (three_quarters.threshold, three_quarters.reviewed) == (0.5, 10)
    # 80% of 4 errors needs all 4: up to 0.90, 18 fields.
    assert (most.threshold, most.reviewed, most.error_capture) == (0.9, 18, 1.0)


def test_ties_at_the_cut_off_count_pro_rata():
    # After 0.1 (right), three fields tie at 0.2 with one error among them.
    review = review_budget(
        [0.1, 0.2, 0.2, 0.2, 0.9], [False, True, False, False, True], budgets=(0.2, 0.4, 1.0)
    )
    caught = [point.errors_caught for point in review.budgets]
    assert caught == pytest.approx([0.0, 1 / 3, 2.0])
    assert [point.error_capture for point in review.budgets] == pytest.approx([0, 1 / 6, 1])
    # A threshold takes whole tie groups: 80% of 2 errors needs both, up to 0.9.
    assert (review.thresholds[0].threshold, review.thresholds[0].reviewed) == (0.9, 5)
    half = review_budget(
        [0.1, 0.2, 0.2, 0.2, 0.9], [False, True, False, False, True], targets=(0.5,)
    ).thresholds[0]
    assert (half.threshold, half.reviewed, half.error_capture) == (0.2, 4, 0.5)


def test_disagreement_ranks_the_most_disputed_first():
    review = review_budget(
        [0.0, 0.5, 0.5, 0.0, 1 / 3],
        [False, True, False, False, True],
        signal="disagreement",
        budgets=(0.2, 0.4, 0.6),
        targets=(0.5,),
    )
    assert [point.error_capture for point in review.budgets] == pytest.approx([0.25, 0.5, 1.0])
    (target,) = review.thresholds
    assert (target.threshold, target.reviewed, target.review_rate) == (0.5, 2, 0.4)


def test_no_errors_leaves_captures_undefined():
    review = review_budget([0.2, 0.9], [False, False])
    assert all(point.error_capture is None for point in review.budgets)
    assert all(point.threshold is None for point in review.thresholds)
    assert review.curve == []


def test_curve_runs_from_zero_to_everything():
    review = review_budget(CONFIDENCE, WRONG)
    assert len(review.curve) == 101
    assert review.curve[0] == 0.0
    assert review.curve[-1] == 1.0
    assert review.curve == sorted(review.curve)


def test_bad_input_is_refused():
    with pytest.raises(InputError):
        review_budget([0.1, 0.2], [True])
    with pytest.raises(InputError):
        review_budget([0.1, float("nan")], [True, False])
    with pytest.raises(ConfigurationError):
        review_budget([0.1], [True], budgets=(10,))


def test_budget_keys():
    assert [budget_key(share) for share in (0.05, 0.1, 0.2, 0.025, 1.0)] == [
        "5pct",
        "10pct",
        "20pct",
        "2.5pct",
        "100pct",
    ]


@given(
    st.lists(
        st.tuples(st.integers(0, 10).map(lambda value: value / 10), st.booleans()),
        min_size=1,
        max_size=40,
    )
)
def test_capture_is_bounded_and_grows_with_the_budget(items):
    scores = [score for score, _ in items]
    wrong = [flag for _, flag in items]
    review = review_budget(scores, wrong, budgets=(0.05, 0.1, 0.2, 0.5, 1.0))
    captures = [point.error_capture for point in review.budgets]
    if not any(wrong):
        assert captures == [None] * 5
        return
    assert all(0.0 <= value <= 1.0 + 1e-12 for value in captures)
    assert captures == sorted(captures)
    assert captures[-1] == pytest.approx(1.0)
    for target in review.thresholds:
        assert target.error_capture is not None
        assert target.error_capture >= target.target
