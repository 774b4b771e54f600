"""Rate intervals with cases as clusters: Wilson (plain and at an effective number of
observations), the studentized case bootstrap of a ratio, and agreement/kappa
intervals that draw a case with all its labels."""

from __future__ import annotations

import numpy as np
import pytest

from docevals_mlflow.core.statistics.cluster_intervals import (
    IntervalSettings,
    expanded_confidence,
)
from docevals_mlflow.core.statistics.rate_intervals import (
    agreement_intervals,
    rate_interval,
    studentized_ratio_interval,
    wilson_interval,
)


def test_wilson_interval_matches_hand_computed_values() -> None:
    # (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n) with z = 1.959964, worked by
    # hand: 8 of 10 gives centre 0.71674 and half-width 0.22658.
    assert wilson_interval(8, 10) == (
        pytest.approx(0.49016, abs=1e-5),
        pytest.approx(0.94332, abs=1e-5),
    )
    # 0 of 10: the lower end is exactly 0, the upper z²/(n + z²) = 3.84146/13.84146.
    assert wilson_interval(0, 10) == (0.0, pytest.approx(3.841459 / 13.841459, abs=1e-6))
    assert wilson_interval(10, 10) == (pytest.approx(1 - 3.841459 / 13.841459, abs=1e-6), 1.0)
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(11, 10)


def test_one_observation_per_case_is_the_plain_wilson_interval() -> None:
    found = rate_interval([1] * 8 + [0] * 2, [1] * 10)
    assert (found.low, found.high) == wilson_interval(8, 10)
    assert (found.cases, found.observations, found.method) == (10, 10, "wilson")
    assert found.as_dict()["cases"] == 10


def test_several_observations_per_case_use_the_effective_number() -> None:
    # Cases (2 of 3), (3 of 3), (1 of 2), (0 of 1): p = 6/9. By hand: Σ(yᵢ - p·mᵢ)² =
    # 0 + 1 + 1/9 + 4/9 = 14/9; v = 4/3 · (14/9) / 81 = 0.0256059; the effective number
    # p(1-p)/v = 8.67857 (under the 9 observations); t(3) at 97.5% = 3.182446; Wilson
    # at 5.78571 of 8.67857 with that quantile: centre 0.57691, half-width 0.35739.
    found = rate_interval([2, 3, 1, 0, 0], [3, 3, 2, 1, 0])
    assert found.low == pytest.approx(0.219517, abs=1e-6)
    assert found.high == pytest.approx(0.934305, abs=1e-6)
    # The case without observations is left out.
    assert (found.cases, found.observations) == (4, 9)


def test_cases_of_one_rate_count_as_one_trial_each() -> None:
    # Every pipeline passes all its stages: no spread, so each case is one trial
    # (with Student's t on 14 degrees of freedom, 2.144787, as for any clustered rate).
    found = rate_interval([3, 2, 4] * 5, [3, 2, 4] * 5)
    assert found.high == 1.0
    assert found.low == pytest.approx(15 / (15 + 2.1447866879**2), abs=1e-9)
    assert rate_interval([1], [2]).reason == "fewer than 2 cases (1)"


def test_expanded_percentile_below_ten_cases_matches_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(5)
    denominators = rng.integers(2, 9, size=8)
    numerators = rng.binomial(denominators, 0.7)
    level = expanded_confidence(0.95, 8)

    def ratio(top: np.ndarray, bottom: np.ndarray, axis: int = -1) -> np.ndarray:
        return top.sum(axis=axis) / bottom.sum(axis=axis)

    reference = scipy_stats.bootstrap(
        (numerators, denominators),
        ratio,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=40_000,
        confidence_level=level,
        random_state=np.random.default_rng(1),
    ).confidence_interval
    ours = studentized_ratio_interval(
        numerators, denominators, settings=IntervalSettings(resamples=40_000)
    )
    # With 8 cases the resampled ratios take few values: the quantiles agree exactly
    # or by one step of the ratio's lattice.
    assert ours.low == pytest.approx(reference.low, abs=0.02)
    assert ours.high == pytest.approx(reference.high, abs=0.02)


def test_studentized_interval_matches_a_direct_bootstrap_t() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(8)
    cases = 60
    bottom = rng.integers(1, 7, size=cases)
    top = rng.binomial(bottom, rng.beta(4, 1.5, size=cases))
    estimate = top.sum() / bottom.sum()

    def se(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        r = a.sum(axis=-1) / b.sum(axis=-1)
        squares = ((a - r[..., None] * b) ** 2).sum(axis=-1)
        return np.sqrt(squares * cases / (cases - 1)) / b.sum(axis=-1)

    # Bootstrap-t written out: draw case indices, studentize, invert the quantiles.
    draws = np.random.default_rng(2).integers(0, cases, size=(20_000, cases))
    a, b = top[draws], bottom[draws]
    pivots = (a.sum(axis=1) / b.sum(axis=1) - estimate) / se(a, b)
    upper, lower = np.quantile(pivots, [0.975, 0.025])
    error = float(se(top, bottom))
    ours = studentized_ratio_interval(top, bottom, settings=IntervalSettings(resamples=20_000))
    assert ours.low == pytest.approx(estimate - upper * error, abs=0.006)
    assert ours.high == pytest.approx(estimate - lower * error, abs=0.006)
    # Near the percentile interval of scipy at this size, yet not the same method.
    percentile = scipy_stats.bootstrap(
        (top, bottom),
        lambda x, y, axis=-1: x.sum(axis=axis) / y.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=20_000,
        random_state=np.random.default_rng(3),
    ).confidence_interval
    assert ours.low == pytest.approx(percentile.low, abs=0.03)
    assert ours.high == pytest.approx(percentile.high, abs=0.03)


def test_kappa_resamples_a_case_with_all_its_labels() -> None:
    rng = np.random.default_rng(4)
    human = rng.integers(0, 2, size=40)
    judge = np.where(rng.random(40) < 0.8, human, 1 - human)
    cases = [f"c{index}" for index in range(40)]
    settings = IntervalSettings(resamples=3000, seed=9)
    agreement, kappa, defined = agreement_intervals(cases, human, judge, 2, settings=settings)
    assert defined == 3000
    assert agreement.low is not None
    assert kappa.low is not None
    assert kappa.high is not None
    assert (agreement.low, agreement.high) == (
        rate_interval(human == judge, np.ones(40)).low,
        rate_interval(human == judge, np.ones(40)).high,
    )
    # Each case labelled twice, identically: resampling labels one by one would narrow
    # kappa's interval by about √2; resampling cases leaves it exactly as it was.
    doubled = agreement_intervals(
        [*cases, *cases], [*human, *human], [*judge, *judge], 2, settings=settings
    )
    assert (doubled[1].low, doubled[1].high) == (kappa.low, kappa.high)
    assert (doubled[1].cases, doubled[1].observations) == (40, 80)
    assert doubled[0].high is not None
    assert agreement.high is not None
    assert doubled[0].high - doubled[0].low == pytest.approx(
        agreement.high - agreement.low, rel=0.05
    )
    # The same seed gives the same intervals; another seed another kappa interval.
    again = agreement_intervals(cases, human, judge, 2, settings=settings)
    assert again == (agreement, kappa, defined)
    other = agreement_intervals(
        cases, human, judge, 2, settings=IntervalSettings(resamples=3000, seed=10)
    )
    assert other[1] != kappa


def test_coverage_of_clustered_pass_rates() -> None:
    # 1,500 suites of 40 pipelines with 1-5 stages and intra-pipeline correlation 0.3
    # (beta-binomial pass probabilities around 0.8): the 95% interval must cover the
    # true rate in 93-98.5% of them (Monte Carlo error ±0.6 points).
    rng = np.random.default_rng(2024)
    truth, rho, suites, cases = 0.8, 0.3, 1500, 40
    shape = (1 - rho) / rho
    covered = 0
    for _ in range(suites):
        stages = rng.integers(1, 6, size=cases)
        passed = rng.binomial(stages, rng.beta(truth * shape, (1 - truth) * shape, size=cases))
        found = rate_interval(passed, stages)
        assert found.low is not None
        assert found.high is not None
        covered += found.low <= truth <= found.high
    assert 0.93 <= covered / suites <= 0.985
