"""Ground-truth generation throughput against a loopback provider with fixed latency.

Generates provisional ground truth for N cases with a panel of three providers (the
OpenAI Responses, Anthropic Messages and OpenAI-compatible chat adapters, all served
by the loopback fake provider), every provider of a case asked at once and several
cases in flight. Compares the wall time with one-after-another
(``cases x providers x latency``) and with the ideal under the adapters' concurrency
limit; then reruns with the on-disk cache. Prints figures; asserts nothing.

    python benchmarks/groundtruth_panel.py [--cases 100] [--latency 0.1]
        [--concurrency 16] [--cases-in-flight 32] [--image]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docevals_mlflow import (  # noqa: E402
    GroundTruthPanel,
    ReferenceArtifact,
    artifact_from_path,
    artifact_from_value,
)
from docevals_mlflow.groundtruth.cache import GenerationCache  # noqa: E402
from docevals_mlflow.judges.adapters import (  # noqa: E402
    AnthropicMessagesAdapter,
    OpenAICompatibleChatAdapter,
    OpenAIResponsesAdapter,
)
from tests.judges.provider_server import ProviderServer  # noqa: E402

FIELDS = ["$.currency", "$.amount", "$.account_name", "$.date"]


def case_sources(count: int, folder: Path, image: bool) -> dict[str, list[ReferenceArtifact]]:
    scan: ReferenceArtifact | None = None
    if image:
        import pymupdf

        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 600, 800), False)
        pixmap.clear_with(255)
        (folder / "scan.png").write_bytes(pixmap.tobytes("png"))
        scan = artifact_from_path(folder / "scan.png", authority="evidence")
    cases: dict[str, list[ReferenceArtifact]] = {}
    for index in range(count):
        text = (
            f"Statement {index}. Account holder: Customer {index % 37}. "
            f"Balance {index * 3}.50 EUR on 2025-01-{index % 28 + 1:02d}."
        )
        sources = [artifact_from_value(text, authority="evidence", artifact_id="ocr")]
        cases[f"statement-{index:04d}"] = [*([scan] if scan else []), *sources]
    return cases


def panel(
    server: ProviderServer, concurrency: int, cache: GenerationCache | None
) -> GroundTruthPanel:
    options = {"api_key": "bench", "base_url": server.base_url, "max_concurrency": concurrency}
    return GroundTruthPanel(
        {
            "openai": OpenAIResponsesAdapter(model="gpt-bench", **options),
            "claude": AnthropicMessagesAdapter(model="claude-bench", **options),
            "local": OpenAICompatibleChatAdapter(model="local-bench", **options),
        },
        "Extract currency, amount, account name and date.",
        FIELDS,
        cache=cache,
    )


def run(count: int, latency: float, concurrency: int, in_flight: int, image: bool) -> None:
    providers = 3
    with (
        ProviderServer(latency=latency) as server,
        tempfile.TemporaryDirectory() as folder,
    ):
        cases = case_sources(count, Path(folder), image)
        first = next(iter(cases.values()))
        uncached = panel(server, concurrency, None)

        async def single_case() -> tuple[float, float]:
            await uncached.agenerate("warm-up", first)  # connections opened
            server.reset()
            started = time.perf_counter()
            await uncached.agenerate("single", first)
            return time.perf_counter() - started, float(server.max_in_flight)

        single, peak = asyncio.run(single_case())
        started = time.perf_counter()
        uncached.generate("single", first)
        fresh = time.perf_counter() - started
        print(f"one case, {providers} providers, latency {latency * 1000:.0f} ms")
        print(
            f"  wall time        {single:6.3f} s   (providers one after another: "
            f"{providers * latency:.3f} s; peak in flight {peak:.0f}); "
            f"sync generate() on a fresh event loop {fresh:.3f} s"
        )

        server.reset()
        started = time.perf_counter()
        reports = uncached.generate_many(cases, max_concurrent_cases=in_flight)
        elapsed = time.perf_counter() - started
        sequential = count * providers * latency
        ideal = count * latency / min(concurrency, in_flight)
        agreed = sum(len(report.consensus) for report in reports)
        print(
            f"{count} cases x {providers} providers, adapter concurrency {concurrency}, "
            f"cases in flight {in_flight}{', with a 600x800 PNG' if image else ''}"
        )
        print(
            f"  wall time        {elapsed:6.2f} s   (one after another {sequential:.1f} s, "
            f"speed-up {sequential / elapsed:.0f}x; ideal {ideal:.2f} s, ratio "
            f"{elapsed / ideal:.2f}x)"
        )
        print(
            f"  provider calls   {len(server.requests)}   peak in flight {server.max_in_flight}"
            f"   agreed fields {agreed}/{count * len(FIELDS)}"
        )

        cache = GenerationCache(Path(folder) / "cache")
        cached_panel = panel(server, concurrency, cache)
        cached_panel.generate_many(cases, max_concurrent_cases=in_flight)
        server.reset()
        started = time.perf_counter()
        cached_panel.generate_many(cases, max_concurrent_cases=in_flight)
        rerun = time.perf_counter() - started
        print(
            f"  cached rerun     {rerun:6.2f} s   provider calls {len(server.requests)}"
            f"   (cache hits {cache.hits})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--cases-in-flight", type=int, default=32)
    parser.add_argument("--image", action="store_true")
    args = parser.parse_args()
    run(args.cases, args.latency, args.concurrency, args.cases_in_flight, args.image)


if __name__ == "__main__":
    main()
