"""Honest numbers, checked by simulation with known truth (issue 21).

Sections (this file): the sample-size planner and the non-inferiority gate. The
document-clustered intervals and the PPI judge correction have their own scripts
(benchmarks/statistics_intervals.py, benchmarks/statistics_ppi.py).

Model: a document holds ``1 + Poisson(leaves - 1)`` leaves; its extractor is right on a
leaf with probability ``p_i ~ Beta`` (mean ``accuracy``, intra-document correlation
``icc``); a wrong leaf is a false discovery. Field F1 is ``2TP / (2TP + FD)``. Two
prompt versions share per-leaf random numbers, so their results are correlated as
real paired runs are.

1. Planner: plan on a pilot report of ``--pilot`` documents, then draw ``--draws``
   samples of the planned size from the model and find the size whose 95th
   percentile of ``|F1 - true F1|`` is the wanted half-width (the error scales as
   ``1/sqrt(n)``). Target: planned / simulated within ±10%.
2. Gate: at the planner's size for a 2-point difference (power 0.9), inject a
   -2 point F1 regression and count how often ``compare --non-inferiority f1=0.02``
   fails (target ≥ 90%); an unchanged candidate should pass about 90% of the time
   (the planner's power claim); and the two-sided regression gate
   (``--fail-on-regression``) at the two-sided size should catch the regression
   about 90% of the time.

Prints figures; asserts nothing.

    python benchmarks/statistics.py [--pilot 20000] [--draws 10000] [--gate-runs 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from docevals_mlflow.compare.non_inferiority import non_inferiority_test
from docevals_mlflow.compare.statistics import paired_comparison
from docevals_mlflow.core.statistics.planner import (
    documents_for_difference,
    documents_for_half_width,
    linearised,
)


def documents(rng: np.random.Generator, n: int, accuracy: float, icc: float, leaves: float):
    """Per document: leaf count and the probability of a right leaf."""
    sizes = 1 + rng.poisson(leaves - 1, n)
    if icc <= 0:
        p = np.full(n, accuracy)
    else:
        scale = (1 - icc) / icc
        p = rng.beta(accuracy * scale, (1 - accuracy) * scale, n)
    return sizes, p


def cells(rng: np.random.Generator, sizes, p, shifts=(0.0,), redrawn: float = 0.3):
    """Cells ``(versions, documents, 5)``, one version per shift of ``p``. Versions after
    the first redraw a ``redrawn`` share of their leaves' random numbers and share the
    rest with the first (paired runs: a new prompt changes some answers, not all)."""
    total = int(sizes.sum())
    owner = np.repeat(np.arange(len(sizes)), sizes)
    first = rng.random(total)
    out = np.zeros((len(shifts), len(sizes), 5), dtype=np.int64)
    for index, shift in enumerate(shifts):
        uniform = first
        if index:
            uniform = np.where(rng.random(total) < redrawn, rng.random(total), first)
        right = uniform < np.clip(p[owner] - shift, 0, 1)
        tp = np.bincount(owner, weights=right, minlength=len(sizes)).astype(np.int64)
        out[index, :, 0] = tp
        out[index, :, 2] = sizes - tp
    return out


def f1(cell_sums) -> np.ndarray:
    tp, fd = cell_sums[..., 0], cell_sums[..., 2]
    return 2 * tp / (2 * tp + fd)


def true_f1(rng, accuracy, icc, leaves, shift=0.0, population=2_000_000) -> float:
    sizes, p = documents(rng, population, accuracy, icc, leaves)
    right = (sizes * np.clip(p - shift, 0, 1)).sum()
    return float(2 * right / (2 * right + (sizes.sum() - right)))


def shift_for(rng, accuracy, icc, leaves, drop: float) -> float:
    """The shift of ``p`` that lowers the true F1 by ``drop`` (bisection)."""
    seed = int(rng.integers(1 << 31))
    base = true_f1(np.random.default_rng(seed), accuracy, icc, leaves)
    low, high = 0.0, 0.5
    for _ in range(30):
        middle = (low + high) / 2
        value = true_f1(np.random.default_rng(seed), accuracy, icc, leaves, middle)
        low, high = (middle, high) if base - value < drop else (low, middle)
    return (low + high) / 2


def planner_case(rng, args, accuracy, icc, leaves, half_width) -> tuple[int, float]:
    sizes, p = documents(rng, args.pilot, accuracy, icc, leaves)
    _, u = linearised(cells(rng, sizes, p)[0], "f1")
    planned = documents_for_half_width(float(u.var(ddof=1)), half_width)
    truth = true_f1(rng, accuracy, icc, leaves)
    errors = []
    for start in range(0, args.draws, 200):
        batch = min(200, args.draws - start)
        sizes, p = documents(rng, batch * planned, accuracy, icc, leaves)
        sums = cells(rng, sizes, p)[0].reshape(batch, planned, 5).sum(axis=1)
        errors.append(np.abs(f1(sums) - truth))
    quantile = float(np.quantile(np.concatenate(errors), 0.95))
    # Unrounded: with ten documents a rounding alone moves the ratio by 5%.
    return planned, planned * (quantile / half_width) ** 2


def gate_case(rng, args, accuracy, icc, leaves) -> None:
    drop, margin, alpha, power = 0.02, 0.02, 0.05, 0.9
    shift = shift_for(rng, accuracy, icc, leaves, drop)
    sizes, p = documents(rng, args.pilot, accuracy, icc, leaves)
    pilot = cells(rng, sizes, p, (0.0, shift))
    _, u_a = linearised(pilot[0], "f1")
    _, u_b = linearised(pilot[1], "f1")
    variance = float((u_b - u_a).var(ddof=1))
    n_one = documents_for_difference(variance, drop, alpha=alpha, power=power, one_sided=True)
    n_two = documents_for_difference(variance, drop, alpha=alpha, power=power)
    failed = passed_equal = caught = 0
    for run in range(args.gate_runs):
        sizes, p = documents(rng, n_one, accuracy, icc, leaves)
        base, worse, same = cells(rng, sizes, p, (0.0, shift, 0.0))
        options = {"metric": "f1", "margin": margin, "alpha": alpha, "resamples": 1000}
        failed += not non_inferiority_test(base, worse, seed=run, **options).passed
        # An unchanged candidate: as good as the baseline, some answers redrawn.
        passed_equal += non_inferiority_test(base, same, seed=run, **options).passed
        sizes, p = documents(rng, n_two, accuracy, icc, leaves)
        base, worse = cells(rng, sizes, p, (0.0, shift))
        result = paired_comparison(base, worse, metric="f1", resamples=1000, seed=run)
        caught += bool(result.p_value[0] < alpha and result.delta[0] < 0)
    runs = args.gate_runs
    print(
        f"  icc {icc:.1f}, {leaves:g} leaves/doc: planner n {n_one} (one-sided) / {n_two} "
        f"(two-sided); -2pt regression fails NI gate (margin 0.02) {failed / runs:.1%}; "
        f"unchanged rerun passes {passed_equal / runs:.1%}; regression gate catches "
        f"-2pt {caught / runs:.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pilot", type=int, default=20000)
    parser.add_argument("--draws", type=int, default=10000)
    parser.add_argument("--gate-runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("1. planner: documents for a ±k 95% interval on field F1 (planned vs simulated)")
    started = time.perf_counter()
    worst = 0.0
    for icc in (0.0, 0.2, 0.5):
        for leaves in (1, 5, 20):
            for half_width in (0.03, 0.01):
                planned, simulated = planner_case(rng, args, 0.85, icc, leaves, half_width)
                ratio = planned / simulated
                worst = max(worst, abs(ratio - 1))
                print(
                    f"  icc {icc:.1f}, {leaves:>2} leaves/doc, ±{half_width}: planned "
                    f"{planned:>6}, simulated {simulated:>8.1f}, ratio {ratio:.3f}"
                )
    print(
        f"  worst |planned/simulated - 1| = {worst:.1%} (target ≤ 10%) "
        f"[{time.perf_counter() - started:.0f} s]"
    )
    print("2. non-inferiority gate at the planner's size for a 2-point difference, power 0.9")
    started = time.perf_counter()
    for icc, leaves in ((0.0, 5), (0.2, 5), (0.5, 20)):
        gate_case(rng, args, 0.85, icc, leaves)
    print(f"  [{time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()
