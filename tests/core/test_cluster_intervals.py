"""Document-clustered bootstrap intervals: exact enumeration, scipy, seeds, edge cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.core.statistics.cluster_intervals import (
    _RATIOS,
    IntervalSettings,
    _delta_se,
    _distinct_rows,
    _with_products,
    cell_intervals,
    cell_metric_values,
    expanded_confidence,
    grouped_cell_intervals,
    ratio_interval,
    resampled_sums,
)

# Three documents' [tp, fa, fd, fn, tn] of one field.
THREE = np.array([[3, 0, 1, 0, 0], [1, 0, 0, 2, 1], [0, 1, 1, 1, 0]])


def _exact_distribution() -> dict[float, float]:
    """F1 over all 27 equally likely ordered draws of three documents (by hand: each
    draw's summed cells, then 2TP / (2TP + FA + FD + FN))."""
    chances: dict[float, float] = {}
    for draw in itertools.product(range(3), repeat=3):
        tp, fa, fd, fn, _ = THREE[list(draw)].sum(axis=0)
        f1 = round(2 * tp / (2 * tp + fa + fd + fn), 12)
        chances[f1] = chances.get(f1, 0.0) + 1 / 27
    return chances


def test_resampled_f1_follows_the_exact_bootstrap_distribution() -> None:
    # Every draw of three documents is one of 27; 60,000 resamples must put each
    # distinct F1 at its exact chance within Monte Carlo error.
    exact = _exact_distribution()
    draws = 60_000
    sums = resampled_sums(THREE, draws, np.random.default_rng(5))
    f1 = np.round(cell_metric_values(sums)["f1"], 12)
    values, counts = np.unique(f1, return_counts=True)
    assert set(values.tolist()) == set(exact)
    for value, count in zip(values.tolist(), counts.tolist(), strict=True):
        chance = exact[value]
        error = 5 * (chance * (1 - chance) / draws) ** 0.5
        assert abs(count / draws - chance) <= error, value


def test_interval_matches_the_percentiles_of_the_exact_enumeration() -> None:
    exact = _exact_distribution()
    values = np.array(sorted(exact))
    cumulative = np.cumsum([exact[v] for v in values])
    level = expanded_confidence(0.95, 3)
    tail = (1 - level) / 2
    # The percentile interval of the exact distribution: the values at the tails.
    exact_low = values[np.searchsorted(cumulative, tail)]
    exact_high = values[np.searchsorted(cumulative, 1 - tail)]
    interval = cell_intervals(THREE, settings=IntervalSettings(resamples=40_000))["f1"]
    assert interval.low == pytest.approx(exact_low, abs=1e-9)
    assert interval.high == pytest.approx(exact_high, abs=1e-9)
    assert (interval.documents, interval.observations) == (3, 11)


def test_ratio_interval_agrees_with_scipy_bootstrap() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(11)
    documents = 300
    denominators = rng.integers(1, 9, size=documents)
    numerators = rng.binomial(denominators, rng.beta(6, 2, size=documents))

    def ratio(top: np.ndarray, bottom: np.ndarray, axis: int = -1) -> np.ndarray:
        return top.sum(axis=axis) / bottom.sum(axis=axis)

    reference = scipy_stats.bootstrap(
        (numerators, denominators),
        ratio,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=20_000,
        confidence_level=0.95,
        random_state=np.random.default_rng(3),
    ).confidence_interval
    ours = ratio_interval(numerators, denominators, settings=IntervalSettings(resamples=20_000))
    assert ours.low is not None
    assert ours.high is not None
    # The same percentile method (300 documents: the expanded level is ~95.02%);
    # Monte Carlo error of a 2.5% quantile at 20,000 resamples is far below 0.004.
    assert ours.low == pytest.approx(reference.low, abs=0.004)
    assert ours.high == pytest.approx(reference.high, abs=0.004)


def test_the_same_seed_gives_the_same_interval_and_another_seed_does_not() -> None:
    rng = np.random.default_rng(2)
    cells = np.column_stack([rng.integers(0, high, 200) for high in (5, 2, 2, 2, 3)])
    first = cell_intervals(cells, settings=IntervalSettings(seed=7))
    again = cell_intervals(cells, settings=IntervalSettings(seed=7))
    other = cell_intervals(cells, settings=IntervalSettings(seed=8))
    assert first == again
    assert first["f1"] != other["f1"]
    assert first["f1"].as_dict()["seed"] == 7


def test_groups_keep_their_own_stream_and_rows() -> None:
    cells = np.array([[2, 0, 0, 1, 0], [1, 1, 0, 0, 0], [0, 0, 1, 1, 0], [3, 0, 0, 0, 1]])
    groups = np.array([1, 0, 1, 0])
    grouped = grouped_cell_intervals(groups, cells, 3)
    assert grouped[0] == cell_intervals(cells[[1, 3]], stream=0)
    assert grouped[1] == cell_intervals(cells[[0, 2]], stream=1)
    assert grouped[2]["f1"].reason == "fewer than 2 documents (0)"


def test_degenerate_cases_say_why_there_is_no_interval() -> None:
    empty = cell_intervals(np.zeros((0, 5)))
    assert empty["f1"].low is None
    assert empty["f1"].reason == "fewer than 2 documents (0)"
    # A field never expected nor predicted: all TN, so F1 is undefined.
    never = cell_intervals(np.array([[0, 0, 0, 0, 1], [0, 0, 0, 0, 2]]))
    assert never["f1"].as_dict() == {
        "low": None,
        "high": None,
        "documents": 2,
        "observations": 3,
        "confidence": 0.95,
        "resamples": 2000,
        "seed": 0,
        "reason": "F1 undefined: no TP, FA, FD or FN",
    }
    assert never["accuracy"].low == never["accuracy"].high == 1.0
    assert ratio_interval([1, 0], [0, 0]).reason == "undefined: zero denominator"
    with pytest.raises(ValueError, match="resamples must be at least 1"):
        IntervalSettings(resamples=0)
    with pytest.raises(ValueError, match="documents"):
        resampled_sums(np.ones((3, 2)), 10, np.random.default_rng(0), documents=2)


def test_documents_only_in_the_count_are_drawn_as_zero_rows() -> None:
    rows = np.array([[1, 2]])
    sums = resampled_sums(rows, 20_000, np.random.default_rng(1), documents=4)
    # The one document with counts is drawn Binomial(4, 1/4) times.
    assert sums[:, 0].mean() == pytest.approx(1.0, abs=0.03)
    assert np.array_equal(sums[:, 1], 2 * sums[:, 0])


def test_expanded_level_widens_for_few_documents_only() -> None:
    assert expanded_confidence(0.95, 20) == pytest.approx(0.968, abs=0.002)
    assert expanded_confidence(0.95, 100_000) == pytest.approx(0.95, abs=1e-4)
    assert expanded_confidence(0.95, 1) == 0.95


_DOCUMENT = st.lists(st.integers(0, 6), min_size=5, max_size=5)


@settings(max_examples=60, deadline=None)
@given(st.lists(_DOCUMENT, min_size=2, max_size=30), st.integers(0, 2**31))
def test_an_interval_holds_its_figure(documents: list[list[int]], seed: int) -> None:
    cells = np.array(documents)
    found = cell_intervals(cells, settings=IntervalSettings(resamples=200, seed=seed))
    point = cell_metric_values(cells.sum(axis=0).astype(float))
    for name, interval in found.items():
        if interval.low is None:
            assert interval.reason
            continue
        assert interval.high is not None
        assert interval.low <= point[name] <= interval.high
        assert 0.0 <= interval.low <= interval.high <= 1.0


def test_delta_standard_error_from_resampled_products_matches_the_direct_sum() -> None:
    # Any weighting of the documents (a resample is one) must give, from the summed
    # cells and products alone, sum_i w_i (a_i - R b_i)^2 computed document by document.
    rng = np.random.default_rng(4)
    cells = rng.integers(0, 6, size=(15, 5))
    weights = rng.integers(0, 3, size=(4, 15)).astype(float)
    sums = weights @ _with_products(cells).astype(float)
    for name, (top, bottom) in _RATIOS.items():
        a, b = cells @ np.array(top), cells @ np.array(bottom)
        ratio = (weights @ a) / (weights @ b)
        squares = ((a[None, :] - ratio[:, None] * b[None, :]) ** 2 * weights).sum(axis=1)
        expected = np.sqrt(squares * 15 / 14) / (weights @ b)
        found_ratio, found_error = _delta_se(sums, name, 15)
        assert found_ratio == pytest.approx(ratio, rel=1e-12), name
        assert found_error == pytest.approx(expected, rel=1e-9), name


def test_studentized_interval_agrees_with_a_direct_bootstrap_t() -> None:
    # 40 documents: the bootstrap-t interval, by drawing document indices one by one.
    rng = np.random.default_rng(9)
    leaves = 1 + rng.poisson(3, size=40)
    right = rng.binomial(leaves, rng.beta(4, 1, size=40))
    cells = np.column_stack([right, 0 * right, leaves - right, 0 * right, 0 * right])
    a, b = 2 * cells[:, 0], 2 * cells[:, 0] + cells[:, 2]

    def f1_and_se(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        top, bottom = a[index].sum(axis=-1), b[index].sum(axis=-1)
        ratio = top / bottom
        squares = ((a[index] - ratio[..., None] * b[index]) ** 2).sum(axis=-1)
        return ratio, np.sqrt(squares * 40 / 39) / bottom

    estimate, error = f1_and_se(np.arange(40))
    ratios, errors = f1_and_se(np.random.default_rng(1).integers(0, 40, size=(40_000, 40)))
    upper, lower = np.quantile((ratios - estimate) / errors, [0.975, 0.025])
    interval = cell_intervals(cells, settings=IntervalSettings(resamples=40_000))["f1"]
    assert interval.low == pytest.approx(estimate - upper * error, abs=0.004)
    assert interval.high == pytest.approx(estimate - lower * error, abs=0.004)


def test_many_documents_draw_normal_sums_with_the_bootstrap_moments() -> None:
    rng = np.random.default_rng(6)
    rows = np.column_stack([rng.poisson(4, 20_000), rng.integers(0, 3, 20_000)])
    sums = resampled_sums(rows, 20_000, np.random.default_rng(2))
    again = resampled_sums(rows, 20_000, np.random.default_rng(2))
    assert np.array_equal(sums, again)
    # The exact bootstrap's mean is the totals, its covariance n times the rows'.
    assert sums.mean(axis=0) == pytest.approx(rows.sum(axis=0), rel=1e-3)
    expected = 20_000 * np.cov(rows.T, bias=True)
    assert np.cov(sums.T) == pytest.approx(expected, rel=0.05, abs=0.05 * expected.max())
    # A rare column is too skewed for the normal: its sums stay exact counts.
    rare = np.zeros((20_000, 1), dtype=np.int64)
    rare[:10] = 1
    exact = resampled_sums(rare, 500, np.random.default_rng(2))
    assert np.array_equal(exact, np.round(exact))


def test_counting_distinct_rows_agrees_with_sorting_them() -> None:
    # 500 rows over at most 3 x 2 x 4 keys take the counting path; its rows and counts
    # (in key order) must be those np.unique gives.
    rng = np.random.default_rng(8)
    rows = np.column_stack(
        [rng.integers(2, 5, 500), rng.integers(0, 2, 500), rng.integers(0, 4, 500)]
    )
    distinct, counts = _distinct_rows(rows)
    expected, expected_counts = np.unique(rows, axis=0, return_counts=True)
    assert np.array_equal(distinct, expected)
    assert np.array_equal(counts, expected_counts)
