"""Intervals of pass rates and judge agreement with cases as clusters: coverage.

Pass rates: suites of pipelines with 1-5 stages whose stages share a per-pipeline pass
chance (beta, intra-pipeline correlation ``rho``), true pass rate 0.8 or 0.95; the
share of 95% intervals of the pass rate over every stage that hold the true rate, for
the interval docevals uses (:func:`rate_interval`, Wilson at the effective number of
observations) and for the studentized case bootstrap
(:func:`studentized_ratio_interval`), with their mean widths.

Agreement and kappa: cases with 1-5 labelled claims, a judge right with a per-case
chance (beta, mean 0.85, ``rho``), human labels ``correct`` with chance 0.7; coverage
of the true agreement and kappa (computed from the simulation's population) by the
intervals of :func:`agreement_intervals`.

Run: ``python benchmarks/statistics_rates.py [--replicates N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings
from docevals_mlflow.core.statistics.rate_intervals import (
    agreement_intervals,
    rate_interval,
    studentized_ratio_interval,
)

SIZES = (20, 200, 2000)
RHOS = (0.0, 0.2, 0.5)
HUMAN_CORRECT = 0.7
JUDGE_RIGHT = 0.85


def _chances(rng: np.random.Generator, mean: float, rho: float, cases: int) -> np.ndarray:
    if rho == 0:
        return np.full(cases, mean)
    strength = 1 / rho - 1
    return rng.beta(mean * strength, (1 - mean) * strength, size=cases)


def pass_rate_cell(
    rng: np.random.Generator, cases: int, truth: float, rho: float, replicates: int
) -> tuple[float, float, float, float]:
    """Coverage and mean width of the Wilson (effective n) and bootstrap-t intervals."""
    hits = np.zeros(2)
    widths = np.zeros(2)
    settings = IntervalSettings(resamples=1000)
    for _ in range(replicates):
        stages = rng.integers(1, 6, size=cases)
        passed = rng.binomial(stages, _chances(rng, truth, rho, cases))
        for column, found in enumerate(
            (
                rate_interval(passed, stages),
                studentized_ratio_interval(passed, stages, settings=settings),
            )
        ):
            low, high = found.low or 0.0, found.high if found.high is not None else 1.0
            hits[column] += low <= truth <= high
            widths[column] += high - low
    cover, width = hits / replicates, widths / replicates
    return float(cover[0]), float(cover[1]), float(width[0]), float(width[1])


def true_kappa() -> float:
    """Kappa of the population: the judge says ``correct`` when right on a correct
    claim or wrong on an incorrect one."""
    agree = JUDGE_RIGHT
    judge_correct = HUMAN_CORRECT * JUDGE_RIGHT + (1 - HUMAN_CORRECT) * (1 - JUDGE_RIGHT)
    chance = HUMAN_CORRECT * judge_correct + (1 - HUMAN_CORRECT) * (1 - judge_correct)
    return (agree - chance) / (1 - chance)


def agreement_cell(
    rng: np.random.Generator, cases: int, rho: float, replicates: int
) -> tuple[float, float]:
    """Coverage of the true agreement and kappa."""
    hits = np.zeros(2)
    kappa = true_kappa()
    settings = IntervalSettings(resamples=1000)
    for _ in range(replicates):
        claims = rng.integers(1, 6, size=cases)
        clusters = np.repeat(np.arange(cases), claims)
        right = rng.random(clusters.size) < _chances(rng, JUDGE_RIGHT, rho, cases)[clusters]
        human = (rng.random(clusters.size) < HUMAN_CORRECT).astype(np.int64)
        judge = np.where(right, human, 1 - human)
        agreement, kappas, _ = agreement_intervals(clusters, human, judge, 2, settings=settings)
        for column, (found, truth) in enumerate(((agreement, JUDGE_RIGHT), (kappas, kappa))):
            if found.low is not None and found.high is not None:
                hits[column] += found.low <= truth <= found.high
    return hits[0] / replicates, hits[1] / replicates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("pass rate over every stage (pipelines of 1-5 stages), 95% intervals")
    print("cases  truth  rho   wilson-eff cover  width   bootstrap-t cover  width")
    for cases in SIZES:
        for truth in (0.8, 0.95):
            for rho in RHOS:
                started = time.perf_counter()
                rng = np.random.default_rng([args.seed, cases, int(truth * 100), int(rho * 10)])
                wilson, boot, wilson_width, boot_width = pass_rate_cell(
                    rng, cases, truth, rho, args.replicates
                )
                print(
                    f"{cases:5d}  {truth:.2f}  {rho:.1f}   {wilson:6.1%}  {wilson_width:.3f}"
                    f"        {boot:6.1%}  {boot_width:.3f}"
                    f"   ({time.perf_counter() - started:.1f} s)",
                    flush=True,
                )
    print(f"\njudge agreement ({JUDGE_RIGHT}) and kappa ({true_kappa():.3f}), claims of 1-5 a case")
    print("cases  rho   agreement cover  kappa cover")
    for cases in SIZES:
        for rho in RHOS:
            rng = np.random.default_rng([args.seed, cases, int(rho * 10), 1])
            agreement, kappa = agreement_cell(rng, cases, rho, args.replicates)
            print(f"{cases:5d}  {rho:.1f}   {agreement:6.1%}           {kappa:6.1%}", flush=True)


if __name__ == "__main__":
    main()
