"""Paired bootstrap intervals, randomisation tests, McNemar and Holm."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.compare.statistics import (
    direction,
    holm,
    mcnemar_exact,
    metric_from_cells,
    metric_interval,
    paired_comparison,
    paired_proportions,
    proportion_interval,
)
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.fields.counts import METRIC_NAMES, metrics_from_cells
from tests.compare.synthetic import simulate_cells

# --------------------------------------------------------------------------- by hand


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 4) == pytest.approx(2 / 16)  # both tails of 4 coin flips
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)
    assert mcnemar_exact(5, 5) == pytest.approx(1.0)
    with pytest.raises(ConfigurationError):
        mcnemar_exact(-1, 2)


def test_holm_by_hand():
    adjusted = holm([0.01, 0.04, 0.03])
    # sorted: 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> kept monotone at 0.06
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm([]).tolist() == []
    with_nan = holm([0.02, np.nan, 0.5])
    assert np.isnan(with_nan[1])
    assert with_nan[[0, 2]].tolist() == pytest.approx([0.04, 0.5])  # two tests, not three


def test_metric_from_cells_matches_the_field_engine():
    rng = np.random.default_rng(3)
    cells = rng.integers(0, 4, size=(200, 5))
    cells[:5] = 0  # undefined everything
    values = {name: metric_from_cells(cells, name) for name in METRIC_NAMES}
    for index, row in enumerate(cells):
        expected = metrics_from_cells(*(int(value) for value in row))
        for name in METRIC_NAMES:
            got = values[name][index]
            if expected[name] is None:
                assert np.isnan(got)
            else:
                assert got == pytest.approx(expected[name])


def test_four_documents_fixed_and_none_broken_is_not_significant():
    """The randomisation test behaves like the exact sign test (p = 2/16), where a
    bootstrap p-value would be about e^-4 ≈ 0.02 and call it significant."""
    baseline = np.array([[1, 0, 1, 0, 0]] * 4 + [[2, 0, 0, 0, 0]] * 96)
    candidate = np.array([[2, 0, 0, 0, 0]] * 100)
    result = paired_comparison(baseline, candidate, resamples=20_000, seed=1)
    assert result.delta[0] > 0
    assert result.p_value[0] == pytest.approx(0.125, abs=0.01)
    assert result.ci_low[0] >= 0  # the interval alone would have looked convincing


def test_identical_runs_change_nothing():
    cells = simulate_cells(np.random.default_rng(0), 50, [0.1, 0.3])
    result = paired_comparison(cells, cells, resamples=500)
    assert result.delta.tolist() == [0.0, 0.0]
    assert result.ci_low.tolist() == [0.0, 0.0]
    assert result.ci_high.tolist() == [0.0, 0.0]
    assert result.p_value.tolist() == [1.0, 1.0]


def test_undefined_metric_is_nan_not_zero():
    empty = np.zeros((10, 1, 5), dtype=np.int64)
    result = paired_comparison(empty, empty, resamples=200)
    assert np.isnan(result.baseline[0])
    assert np.isnan(result.delta[0])
    assert np.isnan(result.p_value[0])
    assert np.isnan(result.ci_low[0])


def test_same_seed_same_result_and_shapes_are_checked():
    rng = np.random.default_rng(8)
    first, second = simulate_cells(rng, 40, [0.2] * 3), simulate_cells(rng, 40, [0.1] * 3)
    one = paired_comparison(first, second, resamples=300, seed=5)
    two = paired_comparison(first, second, resamples=300, seed=5)
    assert one.p_value.tolist() == two.p_value.tolist()
    assert one.ci_low.tolist() == two.ci_low.tolist()
    with pytest.raises(ConfigurationError, match="do not pair"):
        paired_comparison(first, second[:10])
    with pytest.raises(ConfigurationError, match="unknown metric"):
        paired_comparison(first, second, metric="auc")


def test_macro_f1_is_the_mean_of_defined_document_f1():
    # Document F1: 1.0, 0.5 (tp=1, fn=2 -> 2/4), undefined (all TN).
    cells = np.array([[[2, 0, 0, 0, 0]], [[1, 0, 0, 2, 0]], [[0, 0, 0, 0, 3]]])
    value, low, high = metric_interval(cells, metric="macro_f1", resamples=500)
    assert value[0] == pytest.approx(0.75)
    assert 0.5 <= low[0] <= value[0] <= high[0] <= 1.0


def test_proportions():
    rate, low, high = proportion_interval([1, 1, 0, 0], resamples=1000)
    assert rate == 0.5
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    first, second, delta, low, high = paired_proportions([0, 0, 1], [1, 1, 1], resamples=1000)
    assert (first, second) == (pytest.approx(1 / 3), 1.0)
    assert delta == pytest.approx(2 / 3)
    assert 0.0 <= low <= delta <= high <= 1.0


def test_direction_respects_lower_is_better():
    assert direction(0.1, True) == "improvement"
    assert direction(-0.1, True) == "regression"
    assert direction(-0.1, True, lower_is_better=True) == "improvement"
    assert direction(0.1, False) == "none"
    assert direction(float("nan"), True) == "none"


# ------------------------------------------------------------------------ properties

cells_strategy = st.integers(min_value=5, max_value=60).flatmap(
    lambda documents: st.tuples(
        st.lists(
            st.lists(st.integers(0, 4), min_size=5, max_size=5),
            min_size=documents,
            max_size=documents,
        ),
        st.lists(
            st.lists(st.integers(0, 4), min_size=5, max_size=5),
            min_size=documents,
            max_size=documents,
        ),
    )
)


@settings(max_examples=40, deadline=None)
@given(cells_strategy, st.sampled_from(["f1", "precision", "recall", "macro_f1"]))
def test_swapping_the_runs_mirrors_everything(pair, metric):
    first, second = np.array(pair[0]), np.array(pair[1])
    forward = paired_comparison(first, second, metric=metric, resamples=300, seed=2)
    backward = paired_comparison(second, first, metric=metric, resamples=300, seed=2)
    np.testing.assert_allclose(backward.delta, -forward.delta, equal_nan=True)
    np.testing.assert_array_equal(backward.p_value, forward.p_value)
    np.testing.assert_allclose(backward.ci_low, -forward.ci_high, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(backward.ci_high, -forward.ci_low, atol=1e-12, equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(cells_strategy)
def test_interval_is_ordered_and_p_is_a_probability(pair):
    result = paired_comparison(np.array(pair[0]), np.array(pair[1]), resamples=400, seed=0)
    if np.isnan(result.delta[0]):
        return
    assert result.ci_low[0] <= result.ci_high[0]
    assert 1 / 401 <= result.p_value[0] <= 1.0
    # A percentile interval from 400 paired resamples of a ratio of sums holds the
    # estimate (up to the resolution of the draws).
    width = result.ci_high[0] - result.ci_low[0]
    assert result.ci_low[0] - 0.05 * width - 1e-9 <= result.delta[0]
    assert result.delta[0] <= result.ci_high[0] + 0.05 * width + 1e-9


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_is_a_symmetric_probability(broken, fixed):
    p = mcnemar_exact(broken, fixed)
    assert 0.0 <= p <= 1.0
    assert p == pytest.approx(mcnemar_exact(fixed, broken))
    if broken == fixed:
        assert p == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_never_lowers_a_p_value_and_keeps_the_order(values):
    raw = np.array(values)
    adjusted = holm(raw)
    assert np.all(adjusted >= raw - 1e-15)
    assert np.all(adjusted <= 1.0)
    order = np.argsort(raw, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= -1e-15)


# ------------------------------------------------------------- calibration and power


def test_noise_alone_is_rarely_significant():
    """200 comparisons of runs with the same error rates: the family-wise rate of
    any field flagged (Holm across 5 fields), and of the overall figure, stay near
    or below alpha (measured ~0.03; a bound of alpha + 0.03 keeps the test stable)."""
    alpha, sims = 0.05, 200
    rng = np.random.default_rng(2024)
    rates = [0.02, 0.05, 0.1, 0.2, 0.05]
    any_field = overall = 0
    for sim in range(sims):
        first = simulate_cells(rng, 80, rates)
        second = simulate_cells(rng, 80, rates)
        fields = paired_comparison(first, second, resamples=400, seed=sim)
        any_field += bool(np.any(holm(fields.p_value) < alpha))
        total = paired_comparison(first.sum(axis=1), second.sum(axis=1), resamples=400, seed=sim)
        overall += bool(total.p_value[0] < alpha)
    assert any_field / sims <= alpha + 0.03
    assert overall / sims <= alpha + 0.03


def test_a_real_fix_of_one_field_is_found():
    rng = np.random.default_rng(11)
    before = [0.05, 0.05, 0.05, 0.30, 0.05]
    after = [0.05, 0.05, 0.05, 0.02, 0.05]
    first, second = simulate_cells(rng, 150, before), simulate_cells(rng, 150, after)
    result = paired_comparison(first, second, resamples=2000, seed=0)
    adjusted = holm(result.p_value)
    assert adjusted[3] < 0.01
    assert result.ci_low[3] > 0
    assert (np.delete(adjusted, 3) >= 0.05).all()
