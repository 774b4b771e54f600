"""Judge throughput against a loopback provider with fixed latency.

Runs N judge calls (one per case) at a given concurrency through the real adapter,
transport and evaluator, and compares the wall time with the ideal
``calls x latency / concurrency``; then reruns with the on-disk cache and counts the
provider calls (zero expected). Prints figures; asserts nothing.

    python benchmarks/judges_concurrency.py [--calls 400] [--concurrency 16] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docevals_mlflow import (  # noqa: E402
    EvaluationCase,
    Evaluator,
    LLMJudgeMetric,
    ModelJudge,
    artifact_from_value,
)
from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter  # noqa: E402
from docevals_mlflow.judges.cache import JudgeCache  # noqa: E402
from tests.judges.provider_server import ProviderServer  # noqa: E402


def cases(count: int) -> list[EvaluationCase]:
    return [
        EvaluationCase(
            case_id=f"invoice-{index}",
            prediction={"total": index, "currency": "EUR", "vendor": f"Vendor {index % 17}"},
            references=[
                artifact_from_value(
                    {"total": index, "currency": "EUR"},
                    authority="ground_truth",
                    artifact_id="truth",
                )
            ],
        )
        for index in range(count)
    ]


def run(calls: int, concurrency: int, latency: float) -> None:
    with ProviderServer(latency=latency) as server, tempfile.TemporaryDirectory() as folder:
        adapter = OpenAICompatibleChatAdapter(
            model="bench-judge", base_url=server.base_url, max_concurrency=concurrency
        )
        cache = JudgeCache(folder)
        evaluator = Evaluator([LLMJudgeMetric(ModelJudge(adapter, cache=cache))])
        batch = cases(calls)
        evaluator.evaluate_batch(batch[:concurrency], max_concurrency=concurrency)  # warm up
        server.reset()
        cache_folder = Path(folder)
        for entry in cache_folder.rglob("*.json"):
            entry.unlink()

        started = time.perf_counter()
        reports = evaluator.evaluate_batch(batch, max_concurrency=concurrency)
        elapsed = time.perf_counter() - started
        ideal = calls * latency / concurrency
        sent = len(server.requests)
        verdicts = {report.verdict for report in reports}
        ratio = elapsed / ideal if ideal else float("nan")
        print(f"{calls} judge calls, concurrency {concurrency}, latency {latency * 1000:.0f} ms")
        print(f"  wall time        {elapsed:6.2f} s   (ideal {ideal:.2f} s, ratio {ratio:.2f}x)")
        print(f"  provider calls   {sent}   verdicts {sorted(verdicts)}")

        server.reset()
        started = time.perf_counter()
        evaluator.evaluate_batch(batch, max_concurrency=concurrency)
        cached_elapsed = time.perf_counter() - started
        print(
            f"  cached rerun     {cached_elapsed:6.2f} s   provider calls {len(server.requests)}"
            f"   (cache hits {cache.hits})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    run(args.calls, args.concurrency, args.latency)


if __name__ == "__main__":
    main()
