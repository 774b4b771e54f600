"""Scale-out: one process vs ``workers=2`` vs Spark ``local[2]``, on the same documents.

Prints, for 20,000 small bank statements (3 transactions each):

* documents/s of one process and of ``workers=2`` (best of 3 after a warm-up call,
  as ``fields_vs_stickler.py`` measures), and the first call's time, which includes
  starting the fork server; with rows not kept (streaming) and with rows kept;
* that the reports are byte-for-byte identical;
* Spark ``local[2]``: whether its report is identical, its documents/s, and the
  per-core rates that ``docs/scaling.md`` projects to a cluster from (the slope
  between two input sizes separates per-document work from fixed job overhead).

The machine's load average is printed first: figures taken on a busy machine are
not comparable. Spark needs the ``spark`` extra (``pip install -e '.[spark]'``).

    python benchmarks/scale.py [--documents 20000] [--items 3] [--skip-spark]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from statements import SCHEMA, statements

from docevals_mlflow.fields.batch import compare_documents


def _report_text(report: dict[str, Any]) -> str:
    return json.dumps(report, ensure_ascii=False, default=repr)


def _best(call: Any, repeats: int = 3) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeats):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return best, result


def one_machine(pairs: list[tuple[Any, Any]], keep_rows: bool) -> dict[str, Any]:
    """Serial vs workers=2; returns the serial rate and the report for Spark's check."""
    count = len(pairs)
    label = "rows kept" if keep_rows else "rows not kept (streaming)"
    compare_documents(pairs[:300], SCHEMA, keep_rows=keep_rows)  # imports and caches
    start = time.perf_counter()
    compare_documents(pairs, SCHEMA, keep_rows=keep_rows, workers=2)
    first_call = time.perf_counter() - start
    serial_time, serial = _best(lambda: compare_documents(pairs, SCHEMA, keep_rows=keep_rows))
    parallel_time, parallel = _best(
        lambda: compare_documents(pairs, SCHEMA, keep_rows=keep_rows, workers=2)
    )
    serial_report = serial.to_report()
    identical = _report_text(parallel.to_report()) == _report_text(serial_report)
    print(f"{count:,} documents, {label}")
    print(f"  1 process:  {count / serial_time:9,.0f} docs/s  (best of 3: {serial_time:.2f} s)")
    print(
        f"  workers=2:  {count / parallel_time:9,.0f} docs/s  (best of 3: {parallel_time:.2f} s)"
        f"  speed-up {serial_time / parallel_time:.2f}x"
    )
    print(
        f"  first workers=2 call in this process: {first_call:.2f} s "
        f"({serial_time / first_call:.2f}x; starts the fork server and the helper)"
    )
    if keep_rows:
        # Reasons are written when a report asks for them: by the helpers for their
        # chunks, at report time for the rest, so compare + report is the fair total.
        serial_total, _ = _best(
            lambda: compare_documents(pairs, SCHEMA, keep_rows=True).to_report()
        )
        parallel_total, _ = _best(
            lambda: compare_documents(pairs, SCHEMA, keep_rows=True, workers=2).to_report()
        )
        print(
            f"  compare + report: 1 process {serial_total:.2f} s, workers=2 "
            f"{parallel_total:.2f} s (speed-up {serial_total / parallel_total:.2f}x)"
        )
    print(f"  reports identical: {identical}")
    return {"rate": count / serial_time, "report": serial_report}


def _frame(spark: Any, pairs: list[tuple[Any, Any]]) -> Any:
    # Ids as the serial path gives (expected, predicted) tuples: their position, which
    # is also the order (a repartitioned DataFrame has no order of its own).
    rows = [(i, str(i), json.dumps(e), json.dumps(p)) for i, (e, p) in enumerate(pairs)]
    frame = spark.createDataFrame(
        rows, "position bigint, id string, expected string, predicted string"
    )
    # Two slices, one per core, materialised once so that timing covers comparison only.
    return frame.repartition(2).cache()


def on_spark(pairs: list[tuple[Any, Any]], serial_report: dict[str, Any], rate: float) -> None:
    from docevals_mlflow.spark import compare_documents_spark, spark_session

    start = time.perf_counter()
    spark = spark_session("local[2]", app_name="docevals-scale")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    print(f"Spark local[2] (session started in {time.perf_counter() - start:.1f} s)")
    half = _frame(spark, pairs[: len(pairs) // 2])
    full = _frame(spark, pairs)
    for frame in (half, full):
        frame.count()

    def run(frame: Any, collect: bool) -> Any:
        result = compare_documents_spark(
            frame, SCHEMA, order_col="position", keep_rows=False, collect_documents=collect
        )
        result.unpersist()
        return result

    start = time.perf_counter()
    checked = compare_documents_spark(
        _frame(spark, pairs), SCHEMA, order_col="position", keep_rows=False
    )
    first = time.perf_counter() - start
    print(
        "  report identical to one process: "
        f"{_report_text(checked.to_report()) == _report_text(serial_report)}"
    )
    checked.unpersist()
    print(f"  first call (starts the Python workers): {first:.1f} s")
    full_time, _ = _best(lambda: run(full, True), repeats=2)
    print(
        f"  {len(pairs):,} documents, per-document summaries collected: "
        f"{len(pairs) / full_time:,.0f} docs/s ({full_time:.2f} s)"
    )
    times = {}
    for name, frame in (("half", half), ("full", full)):
        times[name], _ = _best(lambda frame=frame: run(frame, False), repeats=2)
    slope = (times["full"] - times["half"]) / (len(pairs) - len(pairs) // 2)
    fixed = times["full"] - slope * len(pairs)
    per_core = 1 / (slope * 2)
    print(
        f"  figures only (collect_documents=False): {len(pairs) / times['full']:,.0f} docs/s "
        f"({times['full']:.2f} s for {len(pairs):,}, {times['half']:.2f} s for "
        f"{len(pairs) // 2:,})"
    )
    print(
        f"  marginal cost {slope * 1e6:.0f} us/document on 2 cores -> "
        f"{per_core:,.0f} docs/s per core; fixed overhead {fixed:.1f} s per evaluation"
    )
    print(f"  one process: {rate:,.0f} docs/s per core")
    for cores in (16, 64, 256):
        for documents in (1_000_000, 100_000_000):
            seconds = fixed + documents / (per_core * cores)
            print(
                f"  projected, {cores:3d} cores, {documents:>11,} documents: "
                f"{seconds:8,.0f} s ({documents / seconds:,.0f} docs/s)"
            )
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--items", type=int, default=3)
    parser.add_argument("--skip-spark", action="store_true")
    args = parser.parse_args()
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"load average (1, 5, 15 min): {load}; CPUs: {os.cpu_count()}")
    pairs = list(statements(args.documents, args.items))
    streaming = one_machine(pairs, keep_rows=False)
    one_machine(pairs, keep_rows=True)
    if not args.skip_spark:
        on_spark(pairs, streaming["report"], streaming["rate"])
    print(f"load average after: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
