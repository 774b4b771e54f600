"""Speed and calibration of run comparison (``docevals compare``).

Speed:
  (a) ``compare_runs`` on two synthetic field runs of ``--documents`` documents and
      ``--fields`` fields (2,000 bootstrap resamples and 2,000 sign flips per test),
      then the Markdown and HTML renderings;
  (b) the quickstart's two prompt versions on ``--documents`` invoices: loading both
      runs from a fresh SQLite store and comparing them, as ``docevals compare`` does.

Calibration (pure statistics, no MLflow), over ``--simulations`` pairs of runs drawn
with the same error rates (so every flagged change is a false positive):
  * per test: the randomisation test's rate of p < alpha, and, for contrast, how
    often the bootstrap interval alone excludes 0;
  * per comparison: how often any field is flagged after Holm's correction, how often
    the overall figure is, and how often the regression gate (any significant
    regression in any family) would fail a CI job;
  * power: how often a prompt that halves one field's error rate is found.

Prints figures; asserts nothing.

    python benchmarks/compare_runs.py [--documents 1000] [--fields 20] [--simulations 1000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from docevals_mlflow.compare import DocumentTable, FieldTable, RunSnapshot, compare_runs
from docevals_mlflow.compare.statistics import holm, paired_comparison

CELLS = ("tp", "fa", "fd", "fn", "tn")


def simulate(
    rng: np.random.Generator, documents: int, rates: np.ndarray, leaves: int = 3
) -> np.ndarray:
    wrong = rng.binomial(leaves, np.broadcast_to(rates, (documents, len(rates))))
    cells = np.zeros((documents, len(rates), 5), dtype=np.int64)
    cells[..., 0] = leaves - wrong
    cells[..., 2] = wrong
    return cells


def snapshot(name: str, cells: np.ndarray) -> RunSnapshot:
    documents, fields = cells.shape[0], cells.shape[1]
    ids = [f"doc-{index:05d}" for index in range(documents)]
    names = [f"$.field_{index:02d}" for index in range(fields)]
    totals = cells.sum(axis=1)
    return RunSnapshot(
        run_id=name,
        run_name=name,
        documents=DocumentTable(
            document_id=ids,
            document_class=["Invoice"] * documents,
            **{cell: totals[:, index].tolist() for index, cell in enumerate(CELLS)},
        ),
        fields=FieldTable(
            document_id=[doc for doc in ids for _ in names],
            field=[field for _ in ids for field in names],
            **{cell: cells[:, :, index].reshape(-1).tolist() for index, cell in enumerate(CELLS)},
        ),
    )


def timed(label: str, call, repeat: int = 3):  # type: ignore[no-untyped-def]
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - started)
    print(f"  {label}: {best:.3f} s (best of {repeat})")
    return result


def speed(documents: int, fields: int) -> None:
    print(f"speed: {documents} documents x {fields} fields, 2,000 resamples")
    rng = np.random.default_rng(0)
    rates = rng.uniform(0.01, 0.2, size=fields)
    first = simulate(rng, documents, rates)
    second = simulate(rng, documents, rates * 0.8)
    started = time.perf_counter()
    baseline, candidate = snapshot("baseline", first), snapshot("candidate", second)
    print(f"  building both snapshots: {time.perf_counter() - started:.3f} s")
    comparison = timed("compare_runs", lambda: compare_runs(baseline, candidate, resamples=2000))
    timed("to_markdown", comparison.to_markdown)
    page = timed("to_html", comparison.to_html)
    print(f"  HTML page: {len(page) / 1e6:.1f} MB (plotly.js inlined)")


def quickstart(documents: int) -> None:
    from docevals_mlflow.quickstart import run_quickstart
    from docevals_mlflow.reports.dashboard import render_fields_dashboard
    from docevals_mlflow.tracking.bundle import BundleWriter
    from docevals_mlflow.tracking.layout import layout_fields
    from docevals_mlflow.tracking.runs import log_bundle
    from docevals_mlflow.tracking.snapshots import load_run_snapshot

    print(f"quickstart: {documents} invoices, prompt v1 vs v2, SQLite store")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        result = run_quickstart(root / "qs", documents=documents)
        uri = f"sqlite:///{root / 'mlflow.db'}"
        for version in result.versions:
            writer = BundleWriter(run_name=version.prompt.run_name)
            layout_fields(
                writer,
                version.report,
                markdown=version.markdown,
                dashboard=render_fields_dashboard(version.report),
            )
            writer.text("specs/prompt.txt", version.prompt.text)
            log_bundle(
                writer.write(root / version.prompt.run_name), tracking_uri=uri, experiment="qs"
            )
        started = time.perf_counter()
        first = load_run_snapshot("qs/prompt-v1", tracking_uri=uri)
        loaded = time.perf_counter()
        second = load_run_snapshot("qs/prompt-v2", tracking_uri=uri)
        print(
            f"  loading (MLflow already started in this process): first run "
            f"{loaded - started:.2f} s, second {time.perf_counter() - loaded:.2f} s"
        )
        comparison = timed("compare_runs", lambda: compare_runs(first, second, resamples=2000), 1)
        pair = comparison.pairs[0]
        print(f"  {len(pair.improvements)} improvements, {len(pair.regressions)} regressions")


def calibration(simulations: int, alpha: float = 0.05) -> None:
    print(f"calibration: {simulations} null comparisons, alpha {alpha}")
    rng = np.random.default_rng(12345)
    for documents, rates, label in (
        (100, np.array([0.01, 0.02, 0.05, 0.1, 0.2]), "100 documents, mixed error rates"),
        (300, np.array([0.005] * 5), "300 documents, sparse errors (0.5%)"),
        (1000, np.array([0.02, 0.05, 0.1, 0.2, 0.3]), "1,000 documents"),
    ):
        tests = flagged_ci = 0
        randomisation = 0
        any_field = overall = 0
        for simulation in range(simulations):
            first, second = simulate(rng, documents, rates), simulate(rng, documents, rates)
            fields = paired_comparison(first, second, resamples=500, seed=simulation)
            defined = ~np.isnan(fields.p_value)
            tests += int(defined.sum())
            randomisation += int((fields.p_value[defined] < alpha).sum())
            flagged_ci += int(((fields.ci_low > 0) | (fields.ci_high < 0))[defined].sum())
            any_field += bool(np.any(holm(fields.p_value) < alpha))
            total = paired_comparison(
                first.sum(axis=1), second.sum(axis=1), resamples=500, seed=simulation
            )
            overall += bool(total.p_value[0] < alpha)
        print(
            f"  {label}: per test randomisation {randomisation / tests:.3f}, "
            f"bootstrap interval alone {flagged_ci / tests:.3f}; per comparison any field "
            f"(Holm) {any_field / simulations:.3f}, overall {overall / simulations:.3f}"
        )
    gate = 0
    runs = max(50, simulations // 5)
    rates = np.array([0.02, 0.05, 0.1, 0.2, 0.3])
    for simulation in range(runs):
        first, second = simulate(rng, 200, rates), simulate(rng, 200, rates)
        comparison = compare_runs(
            snapshot("a", first), snapshot("b", second), resamples=500, seed=simulation
        )
        gate += comparison.has_regression
    print(f"  regression gate (compare_runs, 200 documents, {runs} comparisons): {gate / runs:.3f}")


def power(simulations: int, alpha: float = 0.05) -> None:
    print("power: one field's error rate 10% -> 5%, four unchanged fields (Holm over five)")
    rng = np.random.default_rng(777)
    before = np.array([0.05, 0.05, 0.1, 0.05, 0.05])
    after = np.array([0.05, 0.05, 0.05, 0.05, 0.05])
    for documents in (200, 500, 1000):
        found = 0
        count = max(50, simulations // 5)
        for simulation in range(count):
            first, second = simulate(rng, documents, before), simulate(rng, documents, after)
            result = paired_comparison(first, second, resamples=1000, seed=simulation)
            found += bool(holm(result.p_value)[2] < alpha and result.delta[2] > 0)
        print(f"  {documents} documents: found in {found / count:.2f} of {count}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--fields", type=int, default=20)
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--skip-quickstart", action="store_true")
    args = parser.parse_args()
    speed(args.documents, args.fields)
    if not args.skip_quickstart:
        quickstart(args.documents)
    calibration(args.simulations)
    power(args.simulations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
