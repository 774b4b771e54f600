"""PPI++ mean estimation: hand-computed values, the classical special cases, and a
seeded simulation of coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from docevals_mlflow.core.statistics.ppi import clt_mean, ppi_lambda, ppi_mean, ppi_mean_at
from docevals_mlflow.errors import ConfigurationError, InputError

# Worked by hand: n=4 labelled, N=6 unlabelled.
HUMAN = [1, 0, 1, 1]
JUDGE = [1, 0, 0, 1]
UNLABELLED = [1, 1, 0, 1, 0, 1]


def test_lambda_by_hand():
    # Cov(Y, f) = 1/6, Var(f) = 1/3, 1 + n/N = 5/3  ->  (1/6) / (5/9) = 0.3
    assert ppi_lambda(HUMAN, JUDGE, UNLABELLED) == pytest.approx(0.3)


def test_estimate_and_interval_by_hand():
    result = ppi_mean(HUMAN, JUDGE, UNLABELLED)
    assert result.fallback is None
    assert result.lam == pytest.approx(0.3)
    # 0.75 + 0.3 * (4/6 - 2/4)
    assert result.corrected.estimate == pytest.approx(0.8)
    # Var(Y - 0.3 f) / 4 = 0.18 / 4; 0.3² · Var(f̃) / 6 = 0.09 · (4/15) / 6
    error = math.sqrt(0.045 + 0.004)
    assert result.corrected.std_error == pytest.approx(error)
    z = norm.ppf(0.975)
    assert result.corrected.low == pytest.approx(0.8 - z * error)
    assert result.corrected.high == pytest.approx(0.8 + z * error)
    assert (result.labelled, result.unlabelled, result.corrected.n) == (4, 6, 10)


def test_judge_only_is_the_mean_of_every_judge_score():
    result = ppi_mean(HUMAN, JUDGE, UNLABELLED)
    assert result.judge_only.estimate == pytest.approx(6 / 10)
    assert result.judge_only.n == 10


def test_lambda_zero_is_the_human_only_mean_and_interval():
    at_zero = ppi_mean_at(HUMAN, JUDGE, UNLABELLED, 0.0)
    human = clt_mean(HUMAN)
    assert at_zero.estimate == pytest.approx(0.75) == human.estimate
    assert at_zero.std_error == pytest.approx(math.sqrt(0.25 / 4))
    assert (at_zero.low, at_zero.high) == pytest.approx((human.low, human.high))


def test_interval_uses_the_normal_quantile_of_the_level():
    at_90 = clt_mean(HUMAN, confidence=0.90)
    assert at_90.high - at_90.estimate == pytest.approx(norm.ppf(0.95) * math.sqrt(0.25 / 4))


def test_a_perfect_judge_shrinks_the_interval_to_that_of_all_cases():
    rng = np.random.default_rng(3)
    truth = (rng.random(1100) < 0.7).astype(float)
    labelled, unlabelled = truth[:100], truth[100:]
    result = ppi_mean(labelled, labelled, unlabelled)
    assert result.lam == pytest.approx(1000 / 1100)
    assert result.corrected.width < 0.35 * result.human_only.width
    everything = clt_mean(truth)
    assert result.corrected.width == pytest.approx(everything.width, rel=0.05)


def test_an_anti_correlated_judge_falls_back_to_humans():
    human = [1, 1, 0, 0, 1, 0]
    result = ppi_mean(human, [1 - value for value in human], [1, 0, 1])
    assert result.lam == 0.0
    assert result.lam_estimated is not None
    assert result.lam_estimated < 0
    assert result.corrected == result.human_only
    assert "correlate" in (result.fallback or "")


def test_a_judge_no_better_than_chance_falls_back_even_with_positive_lambda():
    result = ppi_mean(HUMAN, JUDGE, UNLABELLED, kappa=0.0)
    assert result.corrected == result.human_only
    assert "chance" in (result.fallback or "")


def test_a_constant_judge_or_no_unlabelled_cases_fall_back():
    assert "undefined" in (ppi_mean(HUMAN, [1, 1, 1, 1], UNLABELLED).fallback or "")
    assert "every judged case" in (ppi_mean(HUMAN, JUDGE, []).fallback or "")


def test_bounds_clip_a_share():
    result = clt_mean([1, 1, 1, 0], bounds=(0.0, 1.0))
    assert result.high == 1.0


def test_bad_input():
    with pytest.raises(InputError, match="3 human labels for 4"):
        ppi_mean_at([1, 0, 1], JUDGE, UNLABELLED, 0.5)
    with pytest.raises(InputError, match="not a finite"):
        ppi_mean([1, float("nan")], [1, 0], [1])
    with pytest.raises(InputError, match="at least 2"):
        ppi_mean([1], [1], [1])
    with pytest.raises(ConfigurationError, match="outside"):
        clt_mean(HUMAN, confidence=95)


def test_seeded_simulation_covers_the_truth_and_beats_humans_alone():
    # A judge biased towards "pass" (it passes 15% of true failures, fails 3% of passes).
    rng = np.random.default_rng(21)
    truth_rate, n, big_n, trials = 0.7, 200, 2000, 400
    covered, ratios = 0, []
    for _ in range(trials):
        truth = rng.random(n + big_n) < truth_rate
        judge = np.where(truth, rng.random(n + big_n) < 0.97, rng.random(n + big_n) < 0.15)
        result = ppi_mean(truth[:n], judge[:n], judge[n:])
        covered += result.corrected.low <= truth_rate <= result.corrected.high
        ratios.append(result.corrected.width / result.human_only.width)
    assert covered / trials >= 0.92
    assert float(np.mean(ratios)) < 0.8
