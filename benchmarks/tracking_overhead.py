"""What logging a field comparison to MLflow adds to the evaluation itself.

Documents come from ``statements.py`` with extra simple fields (``Reference NNN``)
added to the schema and the data, so that a run has at least 500 metric keys; a
second configuration reaches at least 5,000. For each one this times

  (a) the evaluation as ``docevals fields`` runs it without MLflow: read and pair the
      JSON Lines inputs, compare, build the report, write the JSON report, render
      the Markdown report and the dashboard;
  (b) building the run bundle from those and writing it to disk;
  (c) ``log_bundle`` into a fresh SQLite store, migrated beforehand (a one-time cost
      per store, not per run): warm (best of the repeats in this process) and cold
      (in a new process, as a CLI run pays it: importing mlflow, then the first call);

and counts the MlflowClient calls (and SQL store calls) one ``log_bundle`` makes.
Prints figures; asserts nothing.

    python benchmarks/tracking_overhead.py [--documents 1000] [--items 10]
        [--large-documents 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from statements import SCHEMA, statements

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.inputs import pair_records
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.reports.dashboard import render_fields_dashboard
from docevals_mlflow.reports.fields_markdown import render_fields_markdown
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.layout import fields_dataset, layout_fields

CLASS = "Bank Statement"
# Extra fields per configuration: each adds up to 11 keys (6 metrics, 5 cells) to the
# ~140 of the statement schema. Measured key counts are printed, not assumed.
SMALL_EXTRA = 40
LARGE_EXTRA = 490
COLD_LOG = """
import sys, time
# What a CLI run has loaded when it starts logging: the evaluation's modules.
import docevals_mlflow.fields.batch, docevals_mlflow.reports.dashboard
from docevals_mlflow.tracking.runs import log_bundle
start = time.perf_counter()
import mlflow.tracking
imported = time.perf_counter()
log_bundle(sys.argv[1], tracking_uri=sys.argv[2])
print(imported - start, time.perf_counter() - imported)
"""


@dataclass
class Inputs:
    schema: DocumentSchema
    expected: Path
    predicted: Path
    schema_file: Path


@dataclass
class Evaluation:
    report: dict[str, Any]
    markdown: str
    dashboard: str


@dataclass
class Result:
    label: str
    documents: int
    metrics: int = 0
    params: int = 0
    tags: int = 0
    bundle_mib: float = 0.0
    times: dict[str, float] = field(default_factory=dict)
    client_calls: Counter[str] = field(default_factory=Counter)
    store_calls: Counter[str] = field(default_factory=Counter)


def rich_schema(extra: int) -> DocumentSchema:
    """The statement schema with ``extra`` more simple fields, alternately exact and fuzzy."""
    data = SCHEMA.model_dump(mode="json")
    (statement,) = data["classes"]
    for index in range(extra):
        method = {"method": "EXACT"} if index % 2 else {"method": "FUZZY", "threshold": 0.8}
        statement["fields"][f"Reference {index:03d}"] = method
    return DocumentSchema.model_validate(data)


def write_inputs(folder: Path, documents: int, items: int, extra: int) -> Inputs:
    """JSON Lines inputs, as a user would pass them to ``docevals fields``."""
    schema = rich_schema(extra)
    rng = random.Random(3)
    expected_lines, predicted_lines = [], []
    for index, (truth, prediction) in enumerate(statements(documents, items)):
        for number in range(extra):
            value = f"R{number}-{rng.randrange(10**6):06d}"
            truth[f"Reference {number:03d}"] = value
            # One value in ten is wrong, so every metric has something to count.
            prediction[f"Reference {number:03d}"] = value + "x" if rng.random() < 0.1 else value
        document_id = f"doc-{index:05d}"
        expected_lines.append({"id": document_id, "class": CLASS, "data": truth})
        predicted_lines.append({"id": document_id, "class": CLASS, "data": prediction})
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, lines in (("expected", expected_lines), ("predicted", predicted_lines)):
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    schema_file = folder / "schema.json"
    schema_file.write_text(schema.model_dump_json(indent=1), encoding="utf-8")
    return Inputs(schema, paths[0], paths[1], schema_file)


def evaluate(inputs: Inputs, output: Path) -> Evaluation:
    """(a): what ``docevals fields --markdown M`` does before MLflow, plus the dashboard."""
    schema = DocumentSchema.load(inputs.schema_file)
    pairs, expected_only, predicted_only = pair_records(inputs.expected, inputs.predicted)
    batch = compare_documents(
        pairs, schema, expected_only=expected_only, predicted_only=predicted_only
    )
    report = batch.to_report()
    json_text = json.dumps(report, ensure_ascii=False, indent=1, default=str) + "\n"
    markdown = render_fields_markdown(report)
    atomic_write_text(output / "report.json", json_text)
    atomic_write_text(output / "report.md", markdown)
    return Evaluation(report, markdown, render_fields_dashboard(report))


def build_bundle(inputs: Inputs, evaluation: Evaluation, folder: Path) -> BundleWriter:
    """(b): the bundle exactly as ``docevals fields`` builds it, written to ``folder``."""
    writer = BundleWriter(run_name="report")
    layout_fields(
        writer, evaluation.report, markdown=evaluation.markdown, dashboard=evaluation.dashboard
    )
    writer.text("specs/schema.json", inputs.schema.model_dump_json(indent=1))
    writer.dataset(*fields_dataset(inputs.expected))
    writer.write(folder)
    return writer


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def best_of(
    repeat: int, function: Callable[[], Any], prepare: Callable[[], None] = lambda: None
) -> tuple[float, Any]:
    """The best time of ``repeat`` runs and the last value; ``prepare`` runs untimed first."""
    best, value = float("inf"), None
    for _ in range(repeat):
        prepare()
        seconds, value = timed(function)
        best = min(best, seconds)
    return best, value


@contextmanager
def counting(cls: type, counts: Counter[str]) -> Iterator[None]:
    """Count calls to the public methods of ``cls`` made from outside the class.

    Calls a method makes to another method of the same class are not counted: the
    question is how many calls the caller issues.
    """
    depth = [0]
    originals = {
        name: member
        for name, member in vars(cls).items()
        if not name.startswith("_") and callable(member)
    }

    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if depth[0] == 0:
                counts[name] += 1
            depth[0] += 1
            try:
                return method(*args, **kwargs)
            finally:
                depth[0] -= 1

        return wrapper

    for name, member in originals.items():
        setattr(cls, name, wrap(name, member))
    try:
        yield
    finally:
        for name, member in originals.items():
            setattr(cls, name, member)


def migrated_store(folder: Path) -> Path:
    """An empty SQLite store with its schema migrated (seconds, once)."""
    from mlflow.tracking import MlflowClient

    path = folder / "template.db"
    MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()
    return path


def fresh_store(template: Path, folder: Path, name: str) -> str:
    # A copy of a migrated store is a fresh store without paying the migration again.
    path = folder / f"{name}.db"
    shutil.copy(template, path)
    return f"sqlite:///{path}"


def cold_log(bundle: Path, tracking_uri: str) -> tuple[float, float]:
    """Seconds to import mlflow, then to log, in a new process (as a CLI run)."""
    finished = subprocess.run(
        [sys.executable, "-c", COLD_LOG, str(bundle), tracking_uri],
        capture_output=True,
        text=True,
        check=True,
    )
    imported, logged = finished.stdout.split()[-2:]
    return float(imported), float(logged)


def measure(
    label: str,
    work: Path,
    *,
    documents: int,
    items: int,
    extra: int,
    repeat: int,
    template: Path,
) -> Result:
    from docevals_mlflow.tracking.runs import log_bundle

    folder = work / f"extra-{extra}"
    inputs = write_inputs(folder / "inputs", documents, items, extra)
    result = Result(label, documents)
    output = folder / "output"
    output.mkdir()
    result.times["a"], evaluation = best_of(repeat, lambda: evaluate(inputs, output))

    bundle = folder / "bundle"
    result.times["b"], writer = best_of(
        repeat,
        lambda: build_bundle(inputs, evaluation, bundle),
        # Each repeat writes into an empty folder, as the CLI's temporary one.
        prepare=lambda: shutil.rmtree(bundle, ignore_errors=True),
    )
    result.metrics = len(writer.bundle.metrics)
    result.params = len(writer.bundle.params)
    result.tags = len(writer.bundle.tags)
    result.bundle_mib = sum(f.stat().st_size for f in bundle.rglob("*") if f.is_file()) / 2**20

    stores = itertools.count()
    uri = [""]

    def new_store() -> None:
        # A new file each time (MLflow caches stores by URI); the previous runs'
        # artifact copies (./mlruns, up to hundreds of MiB) are removed, untimed.
        for old in folder.glob("store-*.db"):
            old.unlink()
        shutil.rmtree(work / "mlruns", ignore_errors=True)
        uri[0] = fresh_store(template, folder, f"store-{next(stores)}")

    def log() -> Any:
        return log_bundle(bundle, tracking_uri=uri[0])

    new_store()
    result.times["import"], result.times["c cold"] = cold_log(bundle, uri[0])
    result.times["c"], _ = best_of(repeat, log, prepare=new_store)
    # Counted in a run of its own: the wrappers must not weigh on the timings.
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.tracking import MlflowClient

    new_store()
    with counting(MlflowClient, result.client_calls), counting(SqlAlchemyStore, result.store_calls):
        log()
    return result


def print_results(results: list[Result]) -> None:
    rows = [
        ("(a) evaluation without MLflow", "a"),
        ("(b) build + write bundle", "b"),
        ("(c) log_bundle, warm", "c"),
        ("(c) log_bundle, cold (new process)", "c cold"),
        ("    + import mlflow (new process)", "import"),
    ]
    width = 40
    print()
    header = f"{'':<{width}}" + "".join(f"{r.label:>24}" for r in results)
    print(header)
    print("-" * len(header))
    described = [
        ("documents", lambda r: f"{r.documents:,}"),
        ("metric keys", lambda r: f"{r.metrics:,}"),
        ("params / tags", lambda r: f"{r.params} / {r.tags}"),
        ("bundle size", lambda r: f"{r.bundle_mib:.1f} MiB"),
    ]
    for name, shown in described:
        print(f"{name:<{width}}" + "".join(f"{shown(r):>24}" for r in results))
    for name, key in rows:
        cells = []
        for r in results:
            seconds = r.times[key]
            share = "" if key == "a" else f" ({100 * seconds / r.times['a']:.1f}%)"
            cells.append(f"{seconds:.3f} s{share}")
        print(f"{name:<{width}}" + "".join(f"{cell:>24}" for cell in cells))
    overhead = [f"{100 * (r.times['b'] + r.times['c']) / r.times['a']:.1f}%" for r in results]
    print(f"{'(b)+(c) warm as % of (a)':<{width}}" + "".join(f"{o:>24}" for o in overhead))
    # What `docevals fields` adds in practice: one process, so import and cold call.
    cli = [
        f"{100 * (r.times['b'] + r.times['import'] + r.times['c cold']) / r.times['a']:.1f}%"
        for r in results
    ]
    print(f"{'CLI: (b)+import+(c) cold as % of (a)':<{width}}" + "".join(f"{c:>24}" for c in cli))
    print()
    print("calls made by one log_bundle:")
    for kind in ("client_calls", "store_calls"):
        title = "MlflowClient" if kind == "client_calls" else "SqlAlchemyStore"
        for r in results:
            counts: Counter[str] = getattr(r, kind)
            total = sum(counts.values())
            detail = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
            print(
                f"  {title:<16} {r.label:>12}: {total:>3} calls for {r.metrics:,} metric keys "
                f"({detail})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10, help="transactions per document")
    parser.add_argument("--large-documents", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    # Offline: MLflow must not try to send usage telemetry while it is timed.
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

    with tempfile.TemporaryDirectory(prefix="docevals-bench-") as temporary:
        work = Path(temporary)
        # SQLite stores put artifacts under ./mlruns: keep them in the temporary folder.
        previous = Path.cwd()
        os.chdir(work)
        try:
            template = migrated_store(work)
            results = [
                measure(
                    f"+{extra} fields",
                    work,
                    documents=documents,
                    items=args.items,
                    extra=extra,
                    repeat=args.repeat,
                    template=template,
                )
                for documents, extra in (
                    (args.documents, SMALL_EXTRA),
                    (args.large_documents, LARGE_EXTRA),
                )
            ]
        finally:
            os.chdir(previous)
    print_results(results)


if __name__ == "__main__":
    main()
