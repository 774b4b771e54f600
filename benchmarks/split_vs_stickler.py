"""Split metrics against Stickler's ``doc_split`` on identical 10,000-page batches.

For each batch shape (many small packets, one huge packet, ...) it prints our time
for the whole evaluation (parsing and validating the packets, the seed's three
metrics with their details, per-class scores, boundaries, one-to-one matching,
graded scores, batch aggregation and the pydantic report), Stickler's time for the
seed's three metrics alone, and whether the three metrics agree packet by packet
(details included). Target: under 1 s for ours. Needs the ``bench`` extra
(``pip install -e '.[bench]'``).

    python benchmarks/split_vs_stickler.py [--pages 10000] [--seed 7] [--skip-stickler-large]
"""

from __future__ import annotations

import argparse
import gc
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from docevals_mlflow.split.batch import evaluate_split_batch
from docevals_mlflow.split.packet_forms import packet_from_data

CLASSES = ("Invoice", "W2", "Bank Statement", "Receipt", "Paystub", "1099", "ID", "Letter")

Section = dict[str, Any]
Pair = tuple[dict[str, Any], dict[str, Any]]


def truth(rng: random.Random, pages: int, longest: int) -> list[Section]:
    """A packet of ``pages`` pages cut into documents of 1..``longest`` pages."""
    sections: list[Section] = []
    start = 0
    while start < pages:
        size = min(rng.randint(1, longest), pages - start)
        sections.append(
            {
                "section_id": f"s{len(sections)}",
                "document_class": rng.choice(CLASSES),
                "page_indices": list(range(start, start + size)),
            }
        )
        start += size
    return sections


def prediction(rng: random.Random, sections: list[Section]) -> list[Section]:
    """The truth with typical splitter mistakes (about a quarter of the sections)."""
    out: list[Section] = []
    for section in sections:
        pages = list(section["page_indices"])
        cls = section["document_class"]
        roll = rng.random()
        if roll < 0.06:
            cls = rng.choice(CLASSES)  # misclassified document
        elif roll < 0.11 and len(pages) > 1:
            cut = rng.randint(1, len(pages) - 1)  # cut in two
            out.append({"document_class": cls, "page_indices": pages[:cut]})
            pages = pages[cut:]
        elif roll < 0.16 and out:
            out[-1]["page_indices"] += pages  # run into the previous document
            continue
        elif roll < 0.20 and len(pages) > 1:
            i, j = rng.sample(range(len(pages)), 2)  # two pages swapped
            pages[i], pages[j] = pages[j], pages[i]
        elif roll < 0.23 and len(pages) > 1:
            pages.pop(rng.randrange(len(pages)))  # a page lost
        out.append({"document_class": cls, "page_indices": pages})
    for number, section in enumerate(out):
        section["section_id"] = f"p{number}"
    return out


def batch(rng: random.Random, packets: int, pages: int, longest: int) -> list[Pair]:
    pairs = []
    for number in range(packets):
        expected = truth(rng, pages, longest)
        pairs.append(
            (
                {"id": f"packet-{number}", "sections": expected},
                {"sections": prediction(rng, expected)},
            )
        )
    return pairs


def best_of(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def stickler_all(pairs: list[Pair]) -> list[dict[str, Any]]:
    from stickler.doc_split import DocSplitClassificationMetrics

    results = []
    for expected, predicted in pairs:
        calculator = DocSplitClassificationMetrics()
        calculator.load_sections(expected["sections"], predicted["sections"])
        results.append(calculator.calculate_all_metrics())
    return results


def run_shape(name: str, pairs: list[Pair], *, stickler: bool) -> None:
    pages = sum(len(s["page_indices"]) for expected, _ in pairs for s in expected["sections"])
    sections = sum(len(expected["sections"]) for expected, _ in pairs)
    evaluate_split_batch(pairs[:5])  # warm imports
    ours, report = best_of(3, lambda: evaluate_split_batch(pairs))
    parsed = [
        (
            packet_from_data(e, side="expected"),
            packet_from_data(p, side="predicted", packet_id=e["id"]),
        )
        for e, p in pairs
    ]
    metrics_only, _ = best_of(3, lambda: evaluate_split_batch(parsed))
    dump, _ = best_of(3, report.to_json)
    print(f"\n{name}: {len(pairs):,} packets, {pages:,} expected pages, {sections:,} sections")
    print(
        f"  docevals  all figures, from raw dicts   {ours * 1000:8.1f} ms  "
        f"({pages / ours:,.0f} pages/s)"
    )
    print(f"  docevals  all figures, packets parsed   {metrics_only * 1000:8.1f} ms")
    print(
        f"  docevals  JSON report ({len(report.to_json()) / 1e6:.1f} MB)       "
        f"{dump * 1000:8.1f} ms"
    )
    print(
        f"  figures: page accuracy {report.page_level_accuracy.accuracy:.4f}, split accuracy "
        f"{report.split_accuracy_without_order.accuracy:.4f} / "
        f"{report.split_accuracy_with_order.accuracy:.4f} (without / with order), boundary F1 "
        f"{report.boundaries.f1:.4f}, packet score {report.graded.packet_score:.4f}"
    )
    if not stickler:
        print("  stickler  skipped (--skip-stickler-large)")
        return
    theirs_time, theirs = best_of(1, lambda: stickler_all(pairs))
    same = sum(
        packet.seed_view() == seed for packet, seed in zip(report.packets, theirs, strict=True)
    )
    print(
        f"  stickler  seed metrics only             {theirs_time * 1000:8.1f} ms  "
        f"({theirs_time / ours:,.1f}x ours)"
    )
    print(
        f"  parity of the three seed metrics (details included): {same}/{len(pairs)} "
        "packets identical"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=10_000, help="pages per batch")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--skip-stickler-large",
        action="store_true",
        help="do not run Stickler on the one-packet batch",
    )
    args = parser.parse_args()
    # Stickler logs a line per empty section; keep the output to the figures.
    logging.disable(logging.WARNING)
    rng = random.Random(args.seed)
    try:
        import stickler  # noqa: F401

        have_stickler = True
    except ImportError:
        have_stickler = False
        print("stickler-eval is not installed: timing docevals only")
    total = args.pages
    shapes = [
        ("500 packets x 20 pages", batch(rng, total // 20, 20, 6)),
        ("2,000 packets x 5 pages", batch(rng, total // 5, 5, 3)),
        ("20 packets x 500 pages", batch(rng, 20, total // 20, 12)),
        ("1 packet x 10,000 pages", batch(rng, 1, total, 12)),
    ]
    for index, (name, pairs) in enumerate(shapes):
        large = index == len(shapes) - 1
        run_shape(name, pairs, stickler=have_stickler and not (large and args.skip_stickler_large))


if __name__ == "__main__":
    main()
