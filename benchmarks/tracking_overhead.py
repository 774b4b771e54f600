"""What MLflow logging adds to ``docevals fields``, end to end.

Times ``docevals fields`` (``docevals_mlflow.cli.main``, in this process, so imports
are paid once and each figure is the command's own work) on flat documents of ten
fields (one value in ten wrong) for 100, 1,000 and 10,000 documents:

* MLflow off (``--no-mlflow``), and off but writing the HTML dashboard a run logs
  (``--dashboard``), which tells rendering it from MLflow's own part;
* MLflow on, into a warm SQLite store (migrated, already holding runs);
* with traces, when ``docevals fields`` has a ``--traces`` option: ``--traces none``
  and ``--traces all`` beside the default (otherwise said so, and "on" is the only
  MLflow figure);
* the same against a local ``mlflow server`` on PostgreSQL, when PostgreSQL's server
  programs (``initdb``, ``pg_ctl``, ...) are installed; skipped with a message
  otherwise.

With traces and 1,000 documents among the sizes, also where the traces' time goes
(records, SQL rows, inserts and commit) and the command for 1,000 documents in a new
process. Then 347 flat receipts (four fields, the size of SROIE's test set) as a user runs
them: ``python -m docevals_mlflow fields`` in a new process, MLflow off and on (warm
store). Logging's share is (on - off) / on. Also counts the MlflowClient calls of one
run per size (batched: the count does not grow with documents or metrics). Prints
figures; asserts nothing.

    python benchmarks/tracking_overhead.py [--sizes 100,1000,10000] [--repeat 3]
        [--no-postgres]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The repository root, for tests.tracking.servers (how the tests start PostgreSQL).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from docevals_mlflow.cli import build_parser, main

FIELDS = {
    "invoice_number": {"method": "EXACT"},
    "issue_date": {"method": "DATE"},
    "due_date": {"method": "DATE"},
    "vendor": {"method": "FUZZY", "threshold": 0.85},
    "vendor_vat": {"method": "EXACT"},
    "city": {"method": "FUZZY", "threshold": 0.85},
    "currency": {"method": "NORMALIZED"},
    "net": {"method": "NUMERIC_EXACT", "threshold": 0.01},
    "tax": {"method": "NUMERIC_EXACT", "threshold": 0.01},
    "total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
}
RECEIPT_FIELDS = {
    "company": {"method": "FUZZY", "threshold": 0.85},
    "date": {"method": "DATE"},
    "address": {"method": "FUZZY", "threshold": 0.8},
    "total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
}
RECEIPTS = 347
WORDS = ["Nord", "Atelier", "Lumière", "Kedai", "Müller", "Apotheke", "Station", "Markt"]


@dataclass
class Inputs:
    schema: Path
    expected: Path
    predicted: Path


def _value(name: str, method: str, rng: random.Random) -> object:
    if method == "DATE":
        return f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    if method == "NUMERIC_EXACT":
        return round(rng.uniform(1, 5000), 2)
    if method == "NORMALIZED":
        return rng.choice(["EUR", "USD", "GBP"])
    if method == "FUZZY":
        return " ".join(rng.choice(WORDS) for _ in range(3))
    return f"{name[:3].upper()}-{rng.randrange(10**6):06d}"


def _wrong(value: object) -> object:
    return round(value + 1, 2) if isinstance(value, float) else f"{value}x"


def write_inputs(folder: Path, documents: int, fields: dict[str, dict[str, object]]) -> Inputs:
    """Schema and JSON Lines inputs as a user passes them; one value in ten is wrong."""
    rng = random.Random(documents)
    folder.mkdir(parents=True, exist_ok=True)
    schema = {"schema_id": "bench", "version": "1", "classes": [{"name": "Doc", "fields": fields}]}
    expected, predicted = [], []
    for index in range(documents):
        truth = {name: _value(name, str(rule["method"]), rng) for name, rule in fields.items()}
        guess = {k: _wrong(v) if rng.random() < 0.1 else v for k, v in truth.items()}
        expected.append({"id": f"doc-{index:05d}", "class": "Doc", "data": truth})
        predicted.append({"id": f"doc-{index:05d}", "class": "Doc", "data": guess})
    paths = Inputs(folder / "schema.json", folder / "expected.jsonl", folder / "predicted.jsonl")
    paths.schema.write_text(json.dumps(schema), encoding="utf-8")
    for path, lines in ((paths.expected, expected), (paths.predicted, predicted)):
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return paths


def traces_option() -> bool:
    """Whether this version's ``docevals fields`` has a ``--traces`` option."""
    parser = build_parser()
    fields = next(
        action.choices["fields"]
        for action in parser._actions  # argparse keeps subparsers nowhere public
        if isinstance(action, argparse._SubParsersAction)
    )
    return any("--traces" in action.option_strings for action in fields._actions)


def fields_argv(inputs: Inputs, output: Path) -> list[str]:
    return [
        "fields",
        *("--schema", str(inputs.schema)),
        *("--expected", str(inputs.expected)),
        *("--predicted", str(inputs.predicted)),
        *("--output", str(output)),
    ]


def run_fields(argv: list[str]) -> float:
    """Seconds of one ``docevals fields`` in this process (its output swallowed)."""
    sink = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = main(argv)
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"docevals {' '.join(argv)} exited {code}:\n{sink.getvalue()[-2000:]}")
    return seconds


def best_of(repeat: int, argv: list[str]) -> float:
    return min(run_fields(argv) for _ in range(repeat))


def modes(tracking_uri: str, traces: bool, dashboard: Path) -> dict[str, list[str]]:
    """Label → the extra arguments of each way of running the command."""
    on = ["--tracking-uri", tracking_uri, "--experiment", "bench"]
    # A run logs the HTML dashboard: this row tells its rendering from MLflow's part.
    off = {"MLflow off": ["--no-mlflow"], "off, --dashboard": ["--no-mlflow", "--dashboard"]}
    off["off, --dashboard"].append(str(dashboard))
    if not traces:
        return {**off, "MLflow on": on}
    return {
        **off,
        "on, --traces none": [*on, "--traces", "none"],
        "on, default traces": on,
        "on, --traces all": [*on, "--traces", "all"],
    }


def measure(
    work: Path, sizes: list[int], repeat: int, tracking_uri: str, traces: bool
) -> dict[str, dict[int, float]]:
    """Best seconds per mode and size. The modes take turns in each round, so a busy
    machine slows them alike; an untimed round first warms imports and the store."""
    table: dict[str, dict[int, float]] = {}
    for size in sizes:
        inputs = write_inputs(work / f"inputs-{size}", size, FIELDS)
        output = work / f"report-{size}.json"
        ways = {
            label: fields_argv(inputs, output) + extra
            for label, extra in modes(tracking_uri, traces, work / "dashboard.html").items()
        }
        if size == sizes[0]:  # imports and the store's first connection, once
            for argv in ways.values():
                run_fields(argv)
        for _ in range(repeat if size <= 1000 else min(repeat, 2)):
            for label, argv in ways.items():
                seconds = run_fields(argv)
                row = table.setdefault(label, {})
                row[size] = min(seconds, row.get(size, seconds))
        for label in ways:
            print(f"  {label:<22} {size:>6,} documents: {table[label][size]:.2f} s", flush=True)
    return table


def print_table(title: str, table: dict[str, dict[int, float]]) -> None:
    off = table["MLflow off"]
    sizes = sorted(off)
    print(f"\n{title}")
    print(f"{'':<24}" + "".join(f"{size:>14,} docs" for size in sizes))
    print(f"{'MLflow off':<24}" + "".join(f"{off[size]:>17.2f} s" for size in sizes))
    for label, row in table.items():
        if label == "MLflow off":
            continue
        cells = []
        for size in sizes:
            share = 100 * (row[size] - off[size]) / row[size]
            cells.append(f"{row[size]:>8.2f} s ({share:>4.0f}%)")
        print(f"{label:<24}" + "".join(f"{cell:>19}" for cell in cells))
    print("(%: logging's share of the command's wall time, (on - off) / on)")


@contextlib.contextmanager
def counting_client(counts: Counter[str]) -> Iterator[None]:
    """Count the MlflowClient calls made from outside MlflowClient itself."""
    from mlflow.tracking import MlflowClient

    depth = [0]
    originals = {
        name: member
        for name, member in vars(MlflowClient).items()
        if not name.startswith("_") and callable(member)
    }

    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += depth[0] == 0
            depth[0] += 1
            try:
                return method(*args, **kwargs)
            finally:
                depth[0] -= 1

        return wrapper

    for name, member in originals.items():
        setattr(MlflowClient, name, wrap(name, member))
    try:
        yield
    finally:
        for name, member in originals.items():
            setattr(MlflowClient, name, member)


def client_calls(work: Path, sizes: list[int], tracking_uri: str) -> None:
    """MlflowClient calls one run makes per size: constant, however many documents.
    Counted through MLflow's client: on a local SQLite store a run is otherwise
    written straight into the file, with no client call at all."""
    print("\nMlflowClient calls of one docevals fields run, DOCEVALS_DIRECT_STORE=0 (untimed):")
    previous = os.environ.get("DOCEVALS_DIRECT_STORE")
    os.environ["DOCEVALS_DIRECT_STORE"] = "0"
    try:
        for size in sizes:
            _count_calls(work, size, tracking_uri)
    finally:
        if previous is None:
            os.environ.pop("DOCEVALS_DIRECT_STORE", None)
        else:
            os.environ["DOCEVALS_DIRECT_STORE"] = previous


def _count_calls(work: Path, size: int, tracking_uri: str) -> None:
    inputs = write_inputs(work / f"inputs-{size}", size, FIELDS)
    counts: Counter[str] = Counter()
    with counting_client(counts):
        run_fields([*fields_argv(inputs, work / "count.json"), "--tracking-uri", tracking_uri])
    detail = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
    print(f"  {size:>6,} documents: {sum(counts.values())} calls ({detail})")


def warm_sqlite(work: Path) -> str:
    """A migrated SQLite store (the migration is a one-time cost per store)."""
    from mlflow.tracking import MlflowClient

    work.mkdir(parents=True, exist_ok=True)
    uri = f"sqlite:///{work / 'mlflow.db'}"
    MlflowClient(tracking_uri=uri).search_experiments()
    return uri


@contextlib.contextmanager
def postgres_tracking(work: Path) -> Iterator[str | None]:
    """A local ``mlflow server`` on PostgreSQL (as the tests start it), or None."""
    from tests.tracking.servers import mlflow_server, postgres_bin_dir, postgres_server

    programs = postgres_bin_dir()
    if programs is None:
        print("\nPostgreSQL: skipped (initdb, pg_ctl, postgres, createdb not found)")
        yield None
        return
    with postgres_server(programs) as database, mlflow_server(database.url, work / "pg") as server:
        yield server.url


def cli_seconds(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    """Best wall time of ``python -m docevals_mlflow`` in a new process, as a user runs it
    (``env``: extra environment variables)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "docevals_mlflow", *argv],
            capture_output=True,
            check=True,
            env={**os.environ, **(env or {})},
        )
        best = min(best, time.perf_counter() - start)
    return best


def receipts(work: Path, tracking_uri: str, repeat: int) -> None:
    inputs = write_inputs(work / "receipts", RECEIPTS, RECEIPT_FIELDS)
    argv = fields_argv(inputs, work / "receipts.json")
    on = [*argv, "--tracking-uri", tracking_uri, "--experiment", "receipts"]
    cli_seconds(on, 1)  # the store is warm: migrated, a run already in the experiment
    off_s, on_s = cli_seconds([*argv, "--no-mlflow"], repeat), cli_seconds(on, repeat)
    inside_off = best_of(repeat, [*argv, "--no-mlflow"])
    inside_on = best_of(repeat, on)
    print(f"\n{RECEIPTS} flat receipts (4 fields), warm SQLite store:")
    print(f"  new process (docevals fields): MLflow off {off_s:.2f} s, on {on_s:.2f} s")
    # The same run written through MLflow's client instead of straight into SQLite.
    through = cli_seconds(on, repeat, {"DOCEVALS_DIRECT_STORE": "0"})
    print(f"  new process, through MLflow's client (DOCEVALS_DIRECT_STORE=0): {through:.2f} s")
    print(f"  in process (imports paid):     MLflow off {inside_off:.2f} s, on {inside_on:.2f} s")
    print(f"  logging's share in process: {100 * (inside_on - inside_off) / inside_on:.0f}%")


def trace_steps(work: Path, tracking_uri: str, size: int, repeat: int) -> None:
    """Where the time of ``size`` documents' traces goes, in process: their records,
    their SQL rows, and inserting the rows (commit included) into a copy of the store
    with the direct path's connection settings. After :func:`new_processes`, whose
    report it reads."""
    import shutil
    import sqlite3

    from docevals_mlflow.tracking import direct_store
    from docevals_mlflow.tracking.direct_rows import insert_rows
    from docevals_mlflow.tracking.trace_fields import field_traces
    from docevals_mlflow.tracking.trace_policy import parse_trace_policy
    from docevals_mlflow.tracking.trace_rows import SENTINEL, trace_rows

    report = json.loads((work / f"process-{size}.json").read_text(encoding="utf-8"))
    store = Path(tracking_uri.removeprefix("sqlite:///"))
    with sqlite3.connect(store) as connection:
        experiment = connection.execute(
            "SELECT experiment_id FROM experiments WHERE name = 'bench'"
        ).fetchone()[0]
    location = f"file://{work}/traces/{SENTINEL}/artifacts"
    best: dict[str, float] = {}
    for _ in range(repeat):
        start = time.perf_counter()
        records = field_traces(report, parse_trace_policy("all"), source="expected.jsonl")
        built = time.perf_counter()
        rows = trace_rows(location, "0" * 32, str(experiment), records, 0, plain_only=True)
        done = time.perf_counter()
        copy = work / "steps.db"
        shutil.copyfile(store, copy)
        # The direct path's own connection (its pragmas), as write_direct opens it.
        with direct_store._connection(copy) as connection:
            inserting = time.perf_counter()
            connection.execute("BEGIN IMMEDIATE")
            for table, columns, values in rows.named_tables():
                insert_rows(connection, table, columns, values)
            connection.execute("COMMIT")
            inserted = time.perf_counter()
        copy.unlink()
        for label, seconds in (
            ("trace records", built - start),
            ("SQL rows", done - built),
            ("inserts and commit", inserted - inserting),
        ):
            best[label] = min(seconds, best.get(label, seconds))
    shown = ", ".join(f"{label} {1000 * seconds:.0f} ms" for label, seconds in best.items())
    print(
        f"\ntraces of {size:,} documents in process ({len(records):,} traces, "
        f"{len(rows.assessments):,} assessments): {shown}"
    )


def new_processes(work: Path, tracking_uri: str, size: int, repeat: int) -> None:
    """``docevals fields`` for ``size`` documents in a new process: off, ``--traces
    none`` and default traces (imports included, as a user waits for them)."""
    inputs = write_inputs(work / f"inputs-{size}", size, FIELDS)
    argv = fields_argv(inputs, work / f"process-{size}.json")
    on = [*argv, "--tracking-uri", tracking_uri, "--experiment", "bench"]
    ways = {"off": [*argv, "--no-mlflow"], "--traces none": [*on, "--traces", "none"]}
    ways["default traces"] = on
    cli_seconds(ways["default traces"], 1)  # the experiment and a run in it: a warm store
    shown = ", ".join(f"{label} {cli_seconds(way, repeat):.2f} s" for label, way in ways.items())
    print(f"\n{size:,} documents, new process (docevals fields): {shown}")


def main_benchmark() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000,10000", help="document counts")
    parser.add_argument("--repeat", type=int, default=3, help="best of (at most 2 above 1,000)")
    parser.add_argument("--no-postgres", action="store_true", help="skip the server part")
    args = parser.parse_args()
    # Stopped with SIGTERM, the servers' context managers still stop them.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # Offline: MLflow must not try to send usage telemetry while it is timed.
    os.environ.update({"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"})
    os.environ.pop("DOCEVALS_NO_MLFLOW", None)
    sizes = [int(size) for size in args.sizes.split(",")]
    traces = traces_option()
    if not traces:
        print("docevals fields has no --traces option here: MLflow on is measured without it")
    with tempfile.TemporaryDirectory(prefix="docevals-bench-") as temporary:
        work = Path(temporary)
        previous = Path.cwd()
        # SQLite stores put artifacts under ./mlruns: keep them in the temporary folder.
        os.chdir(work)
        try:
            uri = warm_sqlite(work)
            print("SQLite store:")
            table = measure(work, sizes, args.repeat, uri, traces)
            print_table("docevals fields, 10 fields a document, warm SQLite store:", table)
            client_calls(work, sizes, uri)
            if traces and 1000 in sizes:
                # A store of their own: the one above holds the largest sizes' traces
                # by now, which would make these figures depend on --sizes.
                steps = warm_sqlite(work / "steps")
                new_processes(work, steps, 1000, args.repeat)
                trace_steps(work, steps, 1000, args.repeat)
            receipts(work, uri, args.repeat)
            if not args.no_postgres:
                with postgres_tracking(work) as server:
                    if server is not None:
                        print(f"\nmlflow server on PostgreSQL ({server}):")
                        remote = measure(work, sizes, args.repeat, server, traces)
                        print_table("docevals fields, mlflow server on PostgreSQL:", remote)
        finally:
            os.chdir(previous)


if __name__ == "__main__":
    main_benchmark()
