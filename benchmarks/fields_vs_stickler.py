"""The field engine against Stickler (``stickler-eval``), on identical inputs, in one run.

Prints documents/s for both engines and the ratio (1,000 documents x 10 transactions),
the time of one document with 1,000 transactions, and peak memory of 100,000
documents streamed. Needs the ``bench`` extra (``pip install -e '.[bench]'``).

    python benchmarks/fields_vs_stickler.py [--documents 1000] [--items 10]
        [--large-items 1000] [--stream 100000] [--skip-stickler-large]
"""

from __future__ import annotations

import argparse
import gc
import resource
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from statements import SCHEMA, statements, stickler_json_schema

from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.compare import FieldComparer


def _stickler_model() -> Any:
    from stickler.structured_object_evaluator.models.structured_model import StructuredModel

    return StructuredModel.from_json_schema(stickler_json_schema())


def _stickler_rate(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[float, float]:
    model = _stickler_model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        for expected, predicted in pairs:
            model(**expected).compare_with(model(**predicted), include_confusion_matrix=True)
        elapsed = time.perf_counter() - start
    return len(pairs) / elapsed, elapsed


def _ours_rate(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[float, float, int]:
    compare_documents(pairs[:50], SCHEMA)  # warm caches and imports, as Stickler's model is
    best = float("inf")
    for _ in range(3):
        gc.collect()
        start = time.perf_counter()
        batch = compare_documents(pairs, SCHEMA)
        best = min(best, time.perf_counter() - start)
    rows = sum(len(document.rows or ()) for document in batch.documents)  # type: ignore[union-attr]
    return len(pairs) / best, best, rows


def _peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stream(count: int, items: int) -> None:
    """Compare ``count`` streamed documents without keeping rows; print peak RSS."""
    start = time.perf_counter()
    batch = compare_documents(statements(count, items, seed=11), SCHEMA, keep_rows=False)
    elapsed = time.perf_counter() - start
    print(
        f"  streamed {count:,} documents in {elapsed:.1f} s "
        f"({count / elapsed:,.0f} docs/s, micro F1 {batch.metrics['f1']:.4f}); "
        f"peak RSS {_peak_rss_mib():,.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--large-items", type=int, default=1000)
    parser.add_argument("--stream", type=int, default=100_000)
    parser.add_argument("--skip-stickler-large", action="store_true")
    parser.add_argument("--stream-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stream_only:
        stream(args.stream, args.items)
        return

    pairs = list(statements(args.documents, args.items))
    print(f"{args.documents:,} bank statements x {args.items} transactions (same inputs)")
    ours, ours_time, rows = _ours_rate(pairs)
    tracemalloc.start()
    compare_documents(pairs, SCHEMA)
    ours_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(
        f"  docevals-mlflow: {ours:10,.0f} docs/s  (best of 3: {ours_time:.2f} s, "
        f"{rows:,} rows kept, peak traced {ours_peak:.0f} MiB)"
    )
    try:
        theirs, theirs_time = _stickler_rate(pairs)
    except ImportError:
        print("  stickler-eval not installed: pip install -e '.[bench]'")
        theirs = 0.0
    else:
        print(f"  stickler-eval:   {theirs:10,.0f} docs/s  ({theirs_time:.2f} s)")
        print(f"  ratio:           {ours / theirs:10.1f}x")

    large = list(statements(1, args.large_items, seed=3))
    comparer = FieldComparer(SCHEMA)
    start = time.perf_counter()
    document = comparer.compare(*large[0])
    large_time = time.perf_counter() - start
    print(f"one statement x {args.large_items:,} transactions")
    print(f"  docevals-mlflow: {large_time:.3f} s ({len(document.rows or ()):,} rows)")
    if theirs and not args.skip_stickler_large:
        _, stickler_large = _stickler_rate(large)
        ratio = stickler_large / large_time
        print(f"  stickler-eval:   {stickler_large:.3f} s  (ratio {ratio:,.0f}x)")

    print(f"{args.stream:,} documents streamed (rows not kept), in a fresh process")
    subprocess.run(
        [
            sys.executable,
            __file__,
            "--stream-only",
            "--stream",
            str(args.stream),
            "--items",
            str(args.items),
        ],
        check=True,
    )


if __name__ == "__main__":
    main()
