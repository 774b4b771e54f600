"""Throughput of the deterministic core: exact metric, pipelines, checkpoints.

Prints figures; asserts nothing. Run: ``python benchmarks/pipeline.py [N]``.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from docevals_mlflow import (
    EvaluationCase,
    ExactStructuredMetric,
    FunctionMetric,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
)


def statement(rng: random.Random, items: int) -> dict[str, object]:
    return {
        "account": {
            "holder": f"Holder {rng.randint(1, 999)}",
            "number": f"{rng.randint(0, 10**8):08d}",
        },
        "currency": "EUR",
        "transactions": [
            {
                "date": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                "description": rng.choice(["Rent", "Groceries", "Salary", "Fuel"]),
                "amount": round(rng.uniform(-500, 500), 2),
            }
            for _ in range(items)
        ],
    }


def pipeline(rng: random.Random, index: int, items: int) -> PipelineCase:
    truth = statement(rng, items)
    predicted = statement(random.Random(index), items) if index % 5 == 0 else truth
    total = round(sum(t["amount"] for t in predicted["transactions"]), 2)  # type: ignore[index]
    return PipelineCase(
        pipeline_id=f"doc-{index}",
        stages=[
            EvaluationCase(
                case_id=f"doc-{index}",
                stage_id="extract",
                operation="extract",
                prediction=predicted,
                references=[artifact_from_value(truth, authority="ground_truth", artifact_id="gt")],
            ),
            EvaluationCase(
                case_id=f"doc-{index}",
                stage_id="total",
                operation="total",
                input_data=predicted,
                prediction={"total": total},
                depends_on=["extract"],
            ),
        ],
    )


def total_ok(case: EvaluationCase) -> bool:
    expected = sum(t["amount"] for t in case.input_data["transactions"])
    return abs(case.prediction["total"] - expected) < 0.01


def main(count: int = 1000, items: int = 10) -> None:
    rng = random.Random(7)
    pipelines = [pipeline(rng, index, items) for index in range(count)]
    evaluator = PipelineEvaluator(
        operation_metrics={
            "extract": [ExactStructuredMetric()],
            "total": [FunctionMetric("total_ok", total_ok)],
        }
    )
    tracemalloc.start()
    start = time.perf_counter()
    reports = [evaluator.evaluate(p) for p in pipelines]
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    fails = sum(report.verdict == "fail" for report in reports)
    print(f"{count} pipelines x 2 stages, {items} transactions each ({fails} failing)")
    print(f"  in memory:        {elapsed:.2f} s  = {count / elapsed:,.0f} pipelines/s")
    print(f"  peak traced mem:  {peak / 2**20:.1f} MiB")
    with tempfile.TemporaryDirectory() as tmp:
        subset = pipelines[: max(1, count // 10)]
        start = time.perf_counter()
        for p in subset:
            evaluator.evaluate(p, checkpoint_dir=Path(tmp) / p.pipeline_id)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        for p in subset:
            evaluator.evaluate(p, checkpoint_dir=Path(tmp) / p.pipeline_id)
        warm = time.perf_counter() - start
    print(
        f"  with checkpoints: first run {len(subset) / cold:,.0f} pipelines/s, "
        f"resume {len(subset) / warm:,.0f} pipelines/s ({len(subset)} pipelines)"
    )


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
