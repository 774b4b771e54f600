"""Graded scores: clustering figures against scikit-learn, tau-b against scipy, and
hand-checked packets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from docevals_mlflow.split.evaluate import evaluate_split
from docevals_mlflow.split.graded import clustering_scores
from tests.split.test_boundaries import sections

try:
    from sklearn import metrics
except ImportError:  # pragma: no cover - scikit-learn is a test-only reference
    metrics = None

labelings = st.integers(1, 40).flatmap(
    lambda size: st.tuples(
        st.lists(st.integers(0, 6), min_size=size, max_size=size),
        st.lists(st.integers(0, 6), min_size=size, max_size=size),
    )
)


@pytest.mark.skipif(metrics is None, reason="scikit-learn is not installed")
@settings(max_examples=300, deadline=None)
@given(labelings)
def test_clustering_scores_equal_scikit_learn(pair):
    left, right = (np.array(labels, dtype=np.int64) for labels in pair)
    ours = clustering_scores(left, right)
    homogeneity, completeness, v_measure = metrics.homogeneity_completeness_v_measure(left, right)
    assert ours["homogeneity"] == pytest.approx(homogeneity, abs=1e-12)
    assert ours["completeness"] == pytest.approx(completeness, abs=1e-12)
    assert ours["v_measure"] == pytest.approx(v_measure, abs=1e-12)
    assert ours["rand_index"] == pytest.approx(metrics.rand_score(left, right), abs=1e-12)
    assert ours["adjusted_rand_index"] == pytest.approx(
        metrics.adjusted_rand_score(left, right), abs=1e-12
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 30).flatmap(lambda n: st.permutations(list(range(n)))))
def test_tau_of_one_section_equals_scipy(order):
    expected = sections(list(range(len(order))))
    predicted = sections(list(order))
    graded = evaluate_split(expected, predicted).graded
    assert graded.kendall_tau == pytest.approx(kendalltau(range(len(order)), order).statistic)


def test_perfect_split_scores_one():
    truth = sections([0, 1, 2], [3, 4], [5])
    graded = evaluate_split(truth, truth).graded
    for name in ("homogeneity", "completeness", "v_measure", "rand_index", "adjusted_rand_index"):
        assert getattr(graded, name) == 1.0
    assert graded.kendall_tau == 1.0
    assert graded.packet_score == 1.0


def test_reversed_pages_and_ties():
    graded = evaluate_split(sections([0, 1, 2], [3, 4]), sections([2, 1, 0], [3, 4])).graded
    assert graded.section_tau == {"s0": -1.0, "s1": 1.0}
    assert graded.kendall_tau == 0.0
    # Every page of s0 opens its own predicted section: all positions tie, tau is 0.
    split_apart = evaluate_split(sections([0, 1, 2]), sections([0], [1], [2])).graded
    assert split_apart.section_tau == {"s0": 0.0}


def test_a_section_the_prediction_lacks_has_no_tau():
    graded = evaluate_split(sections([0, 1], [2, 3]), sections([0, 1])).graded
    assert graded.section_tau == {"s0": 1.0, "s1": None}
    assert graded.kendall_tau == 1.0
    # The missing pages still count for clustering: each is a cluster of its own.
    assert graded.rand_index is not None
    assert graded.rand_index < 1.0


def test_no_pages_no_scores():
    graded = evaluate_split([], []).graded
    assert graded.v_measure is None
    assert graded.packet_score is None
    assert graded.section_tau == {}
