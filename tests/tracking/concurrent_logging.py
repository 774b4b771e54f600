"""Log one small bundle from each of N processes started at the same moment.

``python -m tests.tracking.concurrent_logging URI FOLDER N`` prints one JSON line per
process (``[number, "ok", run_id]`` or ``[number, "error", message]``). The processes
are forked from this one after it imported everything, so that they reach the store
together instead of one interpreter start apart; this process has no other threads,
so forking it is safe.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path
from typing import Any

# What opening a store imports, done once here rather than in every child.
import mlflow.store.tracking.sqlalchemy_store  # noqa: F401

from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.runs import log_bundle


def small_bundle(folder: Path, number: int) -> Path:
    """A bundle with a few params, 50 metrics, a tag and an artifact."""
    writer = BundleWriter(run_name=f"run-{number}")
    writer.param("docevals.version", "test")
    writer.param("number", number)
    for index in range(50):
        writer.metric(f"field/f{index}/f1", index / 50)
    writer.tag("docevals.kind", "evaluation")
    writer.text("report/report.md", f"# run {number}\n")
    return writer.write(folder / f"bundle-{number}")


def _log_one(uri: str, folder: str, number: int, go: Any, results: Any) -> None:
    go.wait(60)
    try:
        logged = log_bundle(small_bundle(Path(folder), number), tracking_uri=uri)
        results.put([number, "ok", logged.run_id])
    except BaseException as error:
        results.put([number, "error", f"{type(error).__name__}: {error}"])


def main(uri: str, folder: str, processes: int) -> None:
    """Start ``processes`` loggers, release them at once, print their outcomes."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    go = context.Event()
    workers = [
        context.Process(target=_log_one, args=(uri, folder, number, go, results))
        for number in range(processes)
    ]
    for worker in workers:
        worker.start()
    go.set()
    for _ in workers:
        print(json.dumps(results.get(timeout=300)), flush=True)
    for worker in workers:
        worker.join(timeout=60)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
