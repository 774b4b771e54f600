"""Document-clustered intervals: speed and coverage.

Speed: intervals of precision, recall, F1 and accuracy for every field of 100,000
documents x 50 fields, and overall (target: at most 2 s).

Coverage: documents whose leaves share a per-document accuracy (beta-binomial, so
leaves of one document are correlated with intra-document correlation ``rho``), with
a known population F1; the share of 95% intervals of the field F1 that hold it
(target: at least 94% for rho 0 to 0.5 and 20 to 2,000 documents).

Run: ``python benchmarks/statistics_intervals.py [--replicates N]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings, cell_intervals

ACCURACY = 0.85
"""Mean chance a leaf is right; a wrong leaf is FD or FN with equal chance."""
TRUE_F1 = 2 * ACCURACY / (2 * ACCURACY + (1 - ACCURACY))


def simulated_cells(
    rng: np.random.Generator, documents: int, rho: float, *, scalar: bool = False
) -> np.ndarray:
    """Per-document ``[tp, fa, fd, fn, tn]`` of one field: one leaf (``scalar``) or
    1 + Poisson(4) leaves (a list's attribute)."""
    leaves = np.ones(documents, dtype=np.int64) if scalar else 1 + rng.poisson(4, size=documents)
    if rho > 0:
        strength = 1 / rho - 1  # beta(a, b) with a + b + 1 = 1 / rho
        chance = rng.beta(ACCURACY * strength, (1 - ACCURACY) * strength, size=documents)
    else:
        chance = np.full(documents, ACCURACY)
    right = rng.binomial(leaves, chance)
    wrong = leaves - right
    fd = rng.binomial(wrong, 0.5)
    zeros = np.zeros(documents, dtype=np.int64)
    return np.stack([right, zeros, fd, wrong - fd, zeros], axis=1)


def speed(*, scalar: bool, documents: int = 100_000, fields: int = 50) -> float:
    """Seconds for every field's and the overall intervals."""
    rng = np.random.default_rng(1)
    per_field = [simulated_cells(rng, documents, 0.3, scalar=scalar) for _ in range(fields)]
    start = time.perf_counter()
    for stream, cells in enumerate(per_field):
        cell_intervals(cells, stream=stream)
    cell_intervals(np.sum(per_field, axis=0), stream=fields)
    return time.perf_counter() - start


def coverage(documents: int, rho: float, replicates: int, seed: int) -> float:
    """Share of F1 intervals holding the population F1."""
    rng = np.random.default_rng(seed)
    hits = 0
    for replicate in range(replicates):
        cells = simulated_cells(rng, documents, rho)
        settings = IntervalSettings(seed=replicate)
        interval = cell_intervals(cells, metrics=("f1",), settings=settings)["f1"]
        assert interval.low is not None
        assert interval.high is not None
        hits += interval.low <= TRUE_F1 <= interval.high
    return hits / replicates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--speed-only", action="store_true")
    args = parser.parse_args()
    for scalar, shape in ((True, "one leaf per field"), (False, "1 + Poisson(4) leaves")):
        seconds = speed(scalar=scalar)
        print(f"speed: 100,000 documents x 50 fields, {shape}: {seconds:.2f} s (target <= 2 s)")
    if args.speed_only:
        return
    print(f"coverage of 95% F1 intervals ({args.replicates} replicates; target >= 94%):")
    print("documents  rho   coverage")
    worst = 1.0
    for documents in (20, 50, 200, 2000):
        for rho in (0.0, 0.2, 0.5):
            share = coverage(documents, rho, args.replicates, seed=documents * 10 + int(rho * 10))
            worst = min(worst, share)
            print(f"{documents:>9}  {rho:.1f}  {share:7.1%}")
    print(f"lowest coverage: {worst:.1%}")


if __name__ == "__main__":
    main()
