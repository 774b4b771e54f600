"""Confidence calibration: hand-computed AUROC (with ties), Brier and ECE, and
properties on synthetic confidence with a known relationship to correctness."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.diagnostics import (
    auroc,
    brier_score,
    confidence_calibration,
    expected_calibration_error,
    reliability_bins,
    rows_calibration,
)
from docevals_mlflow.errors import InputError

CONFIDENCE = [0.9, 0.8, 0.8, 0.6, 0.4]
CORRECT = [True, True, False, True, False]


def test_auroc_counts_ties_half():
    # Pairs (correct, wrong): (.9,.8) 1, (.9,.4) 1, (.8,.8) 1/2, (.8,.4) 1, (.6,.8) 0,
    # (.6,.4) 1 -> 4.5 of 6.
    assert auroc(CONFIDENCE, CORRECT) == pytest.approx(0.75)


def test_auroc_needs_both_kinds():
    assert auroc([0.2, 0.9], [True, True]) is None
    assert auroc([0.2, 0.9], [False, False]) is None
    assert auroc([0.5, 0.5], [True, False]) == 0.5


def test_brier_score():
    # .01 + .04 + .64 + .16 + .16 = 1.01 over 5.
    assert brier_score(CONFIDENCE, CORRECT) == pytest.approx(0.202)
    assert brier_score([1.5, 0.2], [True, False]) is None


def test_ece_and_reliability_bins():
    # Ten bins: [.4,.5) acc 0 conf .4; [.6,.7) acc 1 conf .6; [.8,.9) acc .5 conf .8 (2
    # items); [.9,1] acc 1 conf .9 -> (.4 + .4 + 2 * .3 + .1) / 5.
    assert expected_calibration_error(CONFIDENCE, CORRECT) == pytest.approx(0.3)
    # Two bins: [0,.5) acc 0 conf .4; [.5,1] acc .75 conf .775 -> (.4 + 4 * .025) / 5.
    assert expected_calibration_error(CONFIDENCE, CORRECT, bins=2) == pytest.approx(0.1)
    bins = reliability_bins(CONFIDENCE, CORRECT)
    assert [item.count for item in bins] == [0, 0, 0, 0, 1, 0, 1, 0, 2, 1]
    assert bins[8].accuracy == 0.5
    assert bins[8].mean_confidence == pytest.approx(0.8)
    assert bins[0].accuracy is None
    assert bins[0].mean_confidence is None


def test_edges_fall_into_the_bin_they_start_and_one_into_the_last():
    bins = reliability_bins([0.0, 0.3, 1.0], [True, True, True])
    assert [item.count for item in bins] == [1, 0, 0, 1, 0, 0, 0, 0, 0, 1]


def test_calibration_per_field_and_overall():
    calibration = confidence_calibration(
        [*CONFIDENCE, 0.7, 0.2],
        [*CORRECT, True, False],
        ["$.a"] * 5 + ["$.b", "$.b"],
    )
    assert calibration.overall.n == 7
    assert calibration.overall.errors == 3
    assert calibration.fields["$.a"].auroc == pytest.approx(0.75)
    assert calibration.fields["$.b"].auroc == 1.0
    assert calibration.fields["$.b"].brier == pytest.approx((0.09 + 0.04) / 2)
    assert calibration.review.errors == 3
    assert calibration.notes == []


def test_confidence_outside_unit_interval_keeps_auroc_only():
    calibration = confidence_calibration([90, 80, 80, 60, 40], CORRECT)
    assert calibration.overall.auroc == pytest.approx(0.75)
    assert calibration.overall.brier is None
    assert calibration.overall.ece is None
    assert "outside [0, 1]" in calibration.notes[0]


def test_rows_that_count():
    rows = [
        {"template": "$.a", "confidence": 0.9, "outcome": "TP", "expected": 1, "actual": 1},
        {"template": "$.a", "confidence": 0.3, "outcome": "FD", "expected": 1, "actual": 2},
        # Empty on both sides: says nothing about the confidence.
        {"template": "$.a", "confidence": 0.2, "outcome": "TN", "expected": None, "actual": None},
        {"template": "$.b", "confidence": None, "outcome": "FN", "expected": 1, "actual": None},
        {"template": "$.b", "confidence": True, "outcome": "TP", "expected": 1, "actual": 1},
    ]
    calibration = rows_calibration(rows)
    assert calibration is not None
    assert calibration.overall.n == 2
    assert calibration.overall.auroc == 1.0
    assert list(calibration.fields) == ["$.a"]
    assert rows_calibration(rows[3:]) is None


def test_mismatched_columns_are_refused():
    with pytest.raises(InputError):
        confidence_calibration([0.1, 0.2], [True, False], ["$.a"])


def _brute_force_auroc(scores, correct):
    pairs = [
        (1.0 if good > bad else 0.5 if good == bad else 0.0)
        for (good, right_a), (bad, right_b) in itertools.product(
            zip(scores, correct, strict=False), repeat=2
        )
        if right_a and not right_b
    ]
    return sum(pairs) / len(pairs) if pairs else None


items = st.lists(
    st.tuples(st.integers(0, 20).map(lambda value: value / 20), st.booleans()),
    min_size=1,
    max_size=30,
)


@given(items)
def test_auroc_equals_the_pairwise_definition(data):
    scores, correct = [s for s, _ in data], [c for _, c in data]
    expected = _brute_force_auroc(scores, correct)
    found = auroc(scores, correct)
    assert (found is None) == (expected is None)
    if expected is not None:
        assert found == pytest.approx(expected)


@given(items)
def test_figures_stay_in_bounds(data):
    scores, correct = [s for s, _ in data], [c for _, c in data]
    stats = confidence_calibration(scores, correct).overall
    assert 0.0 <= stats.brier <= 1.0
    assert 0.0 <= stats.ece <= 1.0
    assert stats.auroc is None or 0.0 <= stats.auroc <= 1.0
    assert sum(item.count for item in stats.bins) == len(scores)


@given(items, st.sampled_from(["cube", "logit", "shift"]))
def test_auroc_is_invariant_under_monotone_transforms(data, transform):
    scores = np.array([s for s, _ in data])
    correct = [c for _, c in data]
    moved = {
        "cube": scores**3,
        "logit": np.log((scores + 0.01) / (1.01 - scores)),
        "shift": 10 * scores - 3,
    }[transform]
    first, second = auroc(scores, correct), auroc(moved, correct)
    assert (first is None) == (second is None)
    if first is not None:
        assert second == pytest.approx(first)
        # Reversing the order mirrors it.
        assert auroc(-scores, correct) == pytest.approx(1 - first)


def test_synthetic_confidence_that_means_what_it_says():
    generator = np.random.default_rng(7)
    confidence = generator.uniform(0, 1, 20_000)
    correct = generator.uniform(0, 1, 20_000) < confidence  # P(correct) = confidence
    honest = confidence_calibration(confidence, correct)
    assert honest.overall.ece < 0.02
    # Brier of a calibrated uniform confidence: E[c(1-c)] = 1/6.
    assert honest.overall.brier == pytest.approx(1 / 6, abs=0.01)
    # AUROC of this model: P(c1 > c2 | y1=1, y2=0) = 5/6 in theory.
    assert honest.overall.auroc == pytest.approx(5 / 6, abs=0.01)
    # Least confident first catches errors far faster than random review.
    ten = honest.review.budgets[1]
    assert ten.budget == 0.1
    assert ten.error_capture > 0.15

    overconfident = confidence_calibration(np.minimum(1.0, confidence + 0.3), correct)
    assert overconfident.overall.ece > 0.2
    assert overconfident.overall.auroc == pytest.approx(honest.overall.auroc, abs=0.01)

    useless = confidence_calibration(generator.uniform(0, 1, 20_000), correct)
    assert useless.overall.auroc == pytest.approx(0.5, abs=0.02)
    assert useless.review.budgets[1].error_capture == pytest.approx(0.1, abs=0.02)
