"""What registering and loading a ground-truth dataset costs on a local SQLite store.

For each size (cases, rows per case) this builds signed approved cases (signing is
timed apart: it happens at approval time, not at registration), then times, best of
``--repeat``:

  (a) ``register_ground_truth_dataset``: verify every signature, claim a version,
      log the approval run (params, tags, approved.json, records.parquet, approval
      records, the ground_truth input) and create the GenAI evaluation dataset mirror;
  (b) (a) with ``genai_dataset=False`` (no mirror);
  (c) the next version of the same name with one case changed (the mirror rewrites
      that case only);
  (d) ``load_ground_truth``: resolve the version, download the artifacts, verify
      digests and signatures (against a pinned public key) and the Parquet table;
  (e) (d) without a pinned key (signatures checked against each record's own key).

Each registration uses a new name, so every one logs a run. The store is migrated
before timing (a one-time cost per store, printed). Prints figures; asserts nothing.

    python benchmarks/ground_truth_datasets.py [--sizes 10x10,200x20,2000x20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from docevals_mlflow.groundtruth.approval import sign_record
from docevals_mlflow.groundtruth.records import ApprovalRecord, ApprovedGroundTruth, content_digest
from docevals_mlflow.groundtruth.signing import SigningKey
from docevals_mlflow.tracking.datasets import load_ground_truth, register_ground_truth_dataset


def cases(count: int, rows: int, key: SigningKey) -> list[ApprovedGroundTruth]:
    made = []
    for number in range(count):
        case_id = f"statement-{number:05d}"
        content = [{"path": "$.account", "expected": f"{number:08d}"}]
        content += [
            {"path": f"$.lines[{line}].amount", "expected": f"{number + line}.50"}
            for line in range(rows - 1)
        ]
        record = ApprovalRecord(
            case_id=case_id,
            approved_by="alice@example.com",
            approved_at="2026-01-31T09:30:00Z",
            content_sha256=content_digest(content),
        )
        made.append(
            ApprovedGroundTruth(case_id=case_id, rows=content, record=sign_record(record, key))
        )
    return made


def best(repeat: int, action: Callable[[int], Any]) -> float:
    times = []
    for attempt in range(repeat):
        start = time.perf_counter()
        action(attempt)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10x10,200x20,2000x20", help="CASESxROWS,...")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [tuple(int(part) for part in size.split("x")) for size in args.sizes.split(",")]
    key = SigningKey.generate()

    with tempfile.TemporaryDirectory(prefix="docevals-bench-") as temporary:
        os.chdir(temporary)
        uri = f"sqlite:///{Path(temporary) / 'mlflow.db'}"
        start = time.perf_counter()
        from mlflow.tracking import MlflowClient

        MlflowClient(uri).search_experiments()
        print(f"import mlflow + migrate a new SQLite store: {time.perf_counter() - start:.2f} s")
        # Warm-up: the first registration pays lazy imports (pandas/pyarrow writers).
        register_ground_truth_dataset("warm-up", cases(1, 1, key), tracking_uri=uri)

        print()
        print(
            "| cases | rows | sign (approval time) | register | register, no GenAI dataset "
            "| next version, 1 case changed | load, pinned key | load |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for count, rows in sizes:
            start = time.perf_counter()
            made = cases(count, rows, key)
            signing = time.perf_counter() - start
            register = best(
                args.repeat,
                lambda attempt, count=count, made=made: register_ground_truth_dataset(
                    f"bench-{count}-{attempt}", made, tracking_uri=uri, public_key=key.public_key
                ),
            )
            bare = best(
                args.repeat,
                lambda attempt, count=count, made=made: register_ground_truth_dataset(
                    f"bare-{count}-{attempt}",
                    made,
                    tracking_uri=uri,
                    public_key=key.public_key,
                    genai_dataset=False,
                ),
            )
            changed = [*made[:-1], cases(count + 1, rows, key)[-1]]
            following = best(
                args.repeat,
                lambda attempt, count=count, changed=changed: register_ground_truth_dataset(
                    f"bench-{count}-{attempt}", changed, tracking_uri=uri, public_key=key.public_key
                ),
            )
            load_pinned = best(
                args.repeat,
                lambda _, count=count: load_ground_truth(
                    f"bench-{count}-0", tracking_uri=uri, public_key=key.public_key
                ),
            )
            load = best(
                args.repeat,
                lambda _, count=count: load_ground_truth(f"bench-{count}-0", tracking_uri=uri),
            )
            print(
                f"| {count:,} | {count * rows:,} | {signing:.3f} s | {register:.3f} s "
                f"| {bare:.3f} s | {following:.3f} s | {load_pinned:.3f} s | {load:.3f} s |"
            )


if __name__ == "__main__":
    main()
