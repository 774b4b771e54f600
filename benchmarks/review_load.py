"""Loading the review of N documents: every review file with its reviewer layers, then
reviewer agreement with bootstrap intervals (target: 1,000 documents in 1 s or less).

Generates N review files (``--claims`` agreed fields and ``--items`` disputed ones,
with three providers' evidence and confidence), each with 2 or 3 reviewer layers that
answer every field (accept, set, absent; about 10% disagreement), written the way
``record_answer`` writes them. Then times, best of ``--repeat``: ``load_many`` (``load_layers``
of every file), and ``review_agreement`` over them. Prints figures; asserts nothing.

    python benchmarks/review_load.py [--documents 1000] [--claims 15] [--items 5]
        [--resamples 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docevals_mlflow.groundtruth.layer_records import LayerEntry, LayerFile  # noqa: E402
from docevals_mlflow.groundtruth.models import (  # noqa: E402
    Candidate,
    ConsensusRow,
    Disagreement,
    GeneratedClaim,
    GenerationReport,
    ProviderGeneration,
)
from docevals_mlflow.groundtruth.review import (  # noqa: E402
    load_review,
    write_ground_truth_review,
)
from docevals_mlflow.groundtruth.review_layers import (  # noqa: E402
    layer_path,
    load_many,
    review_agreement,
)
from docevals_mlflow.groundtruth.review_rows import review_digest  # noqa: E402

PROVIDERS = ("openai", "claude", "gemini")


def report(case: int, claims: int, items: int, rng: random.Random) -> GenerationReport:
    values = {f"$.field_{i:02d}": f"value {case}-{i}" for i in range(claims)}
    values["$.field_00"] = round(rng.uniform(1, 5000), 2)  # one numeric field
    disputed = [f"$.disputed_{i}" for i in range(items)]
    return GenerationReport(
        case_id=f"doc-{case:05d}",
        expected_fields=[*values, *disputed],
        providers=[
            ProviderGeneration(
                provider=name,
                group=name,
                claims=[
                    GeneratedClaim(path=p, expected_value=v, confidence=rng.random())
                    for p, v in values.items()
                ],
            )
            for name in PROVIDERS
        ],
        consensus=[
            ConsensusRow(
                path=p,
                expected_value=v,
                agreement=1.0,
                providers=list(PROVIDERS),
                evidence=[f"page 1: {v}"],
                reference_ids=["page-001"],
            )
            for p, v in values.items()
        ],
        disagreements=[
            Disagreement(
                path=p,
                reason="conflict",
                candidates=[
                    Candidate(value=f"a{case}", providers=["openai", "claude"], votes=2),
                    Candidate(value=f"b{case}", providers=["gemini"], votes=1),
                ],
            )
            for p in disputed
        ],
    )


def write_case(folder: Path, case: int, claims: int, items: int, rng: random.Random) -> None:
    generated = report(case, claims, items, rng)
    path = write_ground_truth_review(generated, folder / f"doc-{case:05d}.review.json")
    review = load_review(path)
    digest = review_digest(review)
    stamp = "2026-12-01T10:00:00.000000Z"
    for person in ("alice", "bob", "carol")[: rng.choice((2, 3))]:
        entries = []
        for claim in review.claims:
            if rng.random() < 0.1:
                entries.append(
                    LayerEntry(
                        path=claim.path,
                        action="set",
                        value=f"{person} typed",
                        previous=claim.expected,
                        at=stamp,
                    )
                )
            else:
                entries.append(
                    LayerEntry(path=claim.path, action="accept", previous=claim.expected, at=stamp)
                )
        for item in review.review_items:
            action = "accept" if rng.random() < 0.9 else "absent"
            majority = item.provider_candidates[0].value
            entries.append(LayerEntry(path=item.path, action=action, previous=majority, at=stamp))
        layer = LayerFile(review_sha256=digest, person=person, entries=entries)
        target = layer_path(path, person)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(layer.model_dump_json(indent=1, exclude_none=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--claims", type=int, default=15)
    parser.add_argument("--items", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for case in range(args.documents):
            write_case(folder, case, args.claims, args.items, rng)
        files = sorted(folder.glob("*.review.json"))
        layers = sum(1 for _ in folder.glob("*.review.layers/*.json"))
        print(f"{len(files)} review files, {layers} layers, {args.claims + args.items} fields each")
        best_load = best_agreement = best_reviews = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            for file in files:
                load_review(file)
            best_reviews = min(best_reviews, time.perf_counter() - start)
            start = time.perf_counter()
            loaded = load_many(files)
            middle = time.perf_counter()
            result = review_agreement(loaded, resamples=args.resamples, seed=0)
            end = time.perf_counter()
            best_load = min(best_load, middle - start)
            best_agreement = min(best_agreement, end - middle)
        overall = result.overall
        print(f"load_many, all files:            {best_load:.3f} s")
        print(f"  of which the review files alone (load_review): {best_reviews:.3f} s")
        print(f"review_agreement ({args.resamples} resamples): {best_agreement:.3f} s")
        print(
            f"total:                           {best_load + best_agreement:.3f} s (target <= 1 s)"
        )
        print(
            f"overall: {overall.units} units, Fleiss kappa {overall.fleiss_kappa.value:.3f} "
            f"[{overall.fleiss_kappa.low:.3f}, {overall.fleiss_kappa.high:.3f}], "
            f"alpha {overall.alpha_nominal.value:.3f}"
        )


if __name__ == "__main__":
    main()
