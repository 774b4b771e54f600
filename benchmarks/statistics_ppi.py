"""Coverage and width of the PPI++ pass rate (``docevals calibrate``'s corrected
estimate) against the human-only interval, by simulation with a known truth.

Each simulation draws ``--labelled`` human-labelled cases and ``--unlabelled`` cases
only the judge saw, with a true pass rate of 0.71 and a judge that passes every true
pass with probability ``sensitivity`` and every true failure with probability
``1 - specificity`` (a lenient judge: its own pass rate is above the truth). Per
judge it prints the judge's Cohen's kappa against the truth, the judge-only
estimate's bias, the coverage of the 95% PPI++ interval and of the human-only one,
the mean width of each, and the width ratio (target: coverage ≥ 94% and PPI++ at
least 25% narrower at 200 human labels with kappa ≥ 0.6).

A 0/1 judge cannot reach 25% at kappa 0.6: PPI++ narrows the interval by about
``1 - sqrt(1 - r²)`` (r the judge's correlation with the truth), and a pass/fail
judge at kappa 0.6 and a 0.71 pass rate has r ≤ 0.66 whatever its lenience (about
23% narrower at best). The second table is a lenient three-member panel whose
majority verdict has kappa ≈ 0.6, its members' errors partly shared (with
probability ``shared`` a case's members all make the same draw): PPI++ on the
majority verdict against PPI++ on the share of pass votes (what ``docevals
calibrate`` uses when every judged case has a panel's votes).

Prints figures; asserts nothing.

    python benchmarks/statistics_ppi.py [--labelled 200] [--unlabelled 5000] [--simulations 4000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from docevals_mlflow.core.statistics import cohen_kappa
from docevals_mlflow.core.statistics.ppi import ppi_mean

TRUTH = 0.71
JUDGES = (
    ("kappa≈0.5", 0.93, 0.55),
    ("kappa≈0.6", 0.95, 0.64),
    ("kappa≈0.7", 0.96, 0.74),
    ("kappa≈0.8", 0.97, 0.84),
    ("kappa≈0.9", 0.99, 0.90),
)

PANELS = (
    # (name, each member's sensitivity, specificity, shared-error probability)
    ("independent", 0.93, 0.54, 0.0),
    ("shared 0.3", 0.90, 0.58, 0.3),
    ("shared 0.5", 0.88, 0.63, 0.5),
)


def simulate(
    sensitivity: float, specificity: float, labelled: int, unlabelled: int, runs: int, seed: int
) -> dict[str, float]:
    """Coverage and widths over ``runs`` simulated label sets."""
    rng = np.random.default_rng(seed)
    covered = covered_human = 0
    widths, human_widths, judge_bias, kappas = [], [], [], []
    for _ in range(runs):
        truth = rng.random(labelled + unlabelled) < TRUTH
        draw = rng.random(labelled + unlabelled)
        judge = np.where(truth, draw < sensitivity, draw >= specificity)
        result = ppi_mean(truth[:labelled], judge[:labelled], judge[labelled:], bounds=(0, 1))
        covered += result.corrected.low <= TRUTH <= result.corrected.high
        covered_human += result.human_only.low <= TRUTH <= result.human_only.high
        widths.append(result.corrected.width)
        human_widths.append(result.human_only.width)
        judge_bias.append(result.judge_only.estimate - TRUTH)
        if len(kappas) < 50:
            kappas.append(cohen_kappa(truth.tolist(), judge.tolist()) or 0.0)
    return {
        "kappa": float(np.mean(kappas)),
        "judge_bias": float(np.mean(judge_bias)),
        "coverage": covered / runs,
        "coverage_human": covered_human / runs,
        "width": float(np.mean(widths)),
        "width_human": float(np.mean(human_widths)),
    }


def simulate_panel(
    sensitivity: float, specificity: float, shared: float, args: argparse.Namespace, seed: int
) -> dict[str, float]:
    """Majority verdict against pass-vote share as PPI++'s prediction, three members."""
    rng = np.random.default_rng(seed)
    size, labelled = args.labelled + args.unlabelled, args.labelled
    covered = {"verdict": 0, "share": 0}
    widths: dict[str, list[float]] = {"verdict": [], "share": [], "human": []}
    kappas: list[float] = []
    for _ in range(args.simulations):
        truth = rng.random(size) < TRUTH
        draws = np.where(rng.random((3, size)) < shared, rng.random(size), rng.random((3, size)))
        share = np.where(truth, draws < sensitivity, draws >= specificity).mean(axis=0)
        for name, score in (("verdict", (share > 0.5).astype(float)), ("share", share)):
            result = ppi_mean(truth[:labelled], score[:labelled], score[labelled:], bounds=(0, 1))
            covered[name] += result.corrected.low <= TRUTH <= result.corrected.high
            widths[name].append(result.corrected.width)
        widths["human"].append(result.human_only.width)
        if len(kappas) < 50:
            kappas.append(cohen_kappa(truth.tolist(), (share > 0.5).tolist()) or 0.0)
    human = float(np.mean(widths["human"]))
    return {
        "kappa": float(np.mean(kappas)),
        "coverage_verdict": covered["verdict"] / args.simulations,
        "coverage_share": covered["share"] / args.simulations,
        "narrower_verdict": 1.0 - float(np.mean(widths["verdict"])) / human,
        "narrower_share": 1.0 - float(np.mean(widths["share"])) / human,
    }


def print_panels(args: argparse.Namespace) -> None:
    """The panel table: PPI++ on the majority verdict and on the pass-vote share."""
    print("\nthree-member panel, PPI++ prediction: majority verdict vs share of pass votes")
    print(
        f"{'panel':<13}{'κ':>6}{'cover verdict':>15}{'cover share':>13}"
        f"{'narrower verdict':>18}{'narrower share':>16}  target met (share)"
    )
    for index, (name, sensitivity, specificity, shared) in enumerate(PANELS):
        started = time.perf_counter()
        figures = simulate_panel(sensitivity, specificity, shared, args, args.seed + 100 + index)
        met = figures["coverage_share"] >= 0.94 and figures["narrower_share"] >= 0.25
        print(
            f"{name:<13}{figures['kappa']:>6.2f}{figures['coverage_verdict']:>15.1%}"
            f"{figures['coverage_share']:>13.1%}{figures['narrower_verdict']:>18.1%}"
            f"{figures['narrower_share']:>16.1%}  "
            f"{'yes' if met else 'no' if figures['kappa'] >= 0.6 else '(κ < 0.6)'}"
            f"  [{time.perf_counter() - started:.1f} s]"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labelled", type=int, default=200)
    parser.add_argument("--unlabelled", type=int, default=5000)
    parser.add_argument("--simulations", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"true pass rate {TRUTH}, {args.labelled} human labels, {args.unlabelled} judge-only "
        f"cases, {args.simulations} simulations, 95% intervals"
    )
    print(
        f"{'judge':<11}{'κ':>6}{'judge bias':>12}{'cover PPI++':>13}{'cover human':>13}"
        f"{'width PPI++':>13}{'width human':>13}{'narrower':>10}  target met"
    )
    for index, (name, sensitivity, specificity) in enumerate(JUDGES):
        started = time.perf_counter()
        figures = simulate(
            sensitivity,
            specificity,
            args.labelled,
            args.unlabelled,
            args.simulations,
            args.seed + index,
        )
        narrower = 1.0 - figures["width"] / figures["width_human"]
        met = figures["coverage"] >= 0.94 and narrower >= 0.25
        print(
            f"{name:<11}{figures['kappa']:>6.2f}{figures['judge_bias']:>+12.3f}"
            f"{figures['coverage']:>13.1%}{figures['coverage_human']:>13.1%}"
            f"{figures['width']:>13.4f}{figures['width_human']:>13.4f}{narrower:>10.1%}"
            f"  {'yes' if met else 'no' if figures['kappa'] >= 0.6 else '(κ < 0.6)'}"
            f"  [{time.perf_counter() - started:.1f} s]"
        )
    print_panels(args)


if __name__ == "__main__":
    main()
