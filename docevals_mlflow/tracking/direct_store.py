"""Writing a run straight into a local SQLite store, without MLflow's client.

Importing mlflow and opening its client costs about two seconds, more than a small
evaluation takes. When the store is a case this module was checked against, the run
is written with ``sqlite3`` exactly as MLflow's ``SqlAlchemyStore`` would write it
(:mod:`~docevals_mlflow.tracking.direct_rows`, the traces with
:mod:`~docevals_mlflow.tracking.trace_rows`), in one transaction. Anything else goes
through MLflow as before (:func:`direct_case` says what qualifies):

* the tracking URI is ``sqlite:///<file>`` and the file exists (a new store is made
  by MLflow), at :data:`~docevals_mlflow.tracking.direct_schema.VERIFIED_REVISION`,
  which is also the installed MLflow's head, with all of its tables;
* a new run (no run id to continue, no ``mlflow run`` project run) with a name;
* the experiment (found, or created here) is active with a simple local artifact
  location;
* the bundle needs nothing only MLflow does: no prompt to register, no span MLflow's
  storage translation would change (a span found to be one while the rows are built
  rolls the write back), no trace rollups switched on, no workspaces;
* ``DOCEVALS_DIRECT_STORE`` is not ``0``.

Safety: the write runs under the store's lock
(:func:`~docevals_mlflow.tracking.store_lock.store_lock`) in one ``BEGIN IMMEDIATE``
transaction that checks the schema again first; the artifacts are copied inside it.
On any failure the transaction is rolled back and the copied artifacts removed, so
nothing is half-written.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

from docevals_mlflow.errors import DocEvalsError
from docevals_mlflow.tracking.bundle import METRICS_INDEX, LegalBundle
from docevals_mlflow.tracking.busy_retries import BUSY_RETRY_SECONDS
from docevals_mlflow.tracking.direct_rows import (
    Experiment,
    find_experiment,
    finish_run,
    insert_batch,
    insert_experiment,
    insert_inputs,
    insert_rows,
    insert_run,
    now_ms,
)
from docevals_mlflow.tracking.direct_schema import direct_schema_ready, store_file_ready
from docevals_mlflow.tracking.direct_values import append_to_location, local_artifact_folder
from docevals_mlflow.tracking.errors import TrackingError
from docevals_mlflow.tracking.layout_shared import headline_view_tags
from docevals_mlflow.tracking.run_contents import dataset_rows, renamed_index
from docevals_mlflow.tracking.store_lock import store_lock
from docevals_mlflow.tracking.trace_records import TraceRecord, redacted
from docevals_mlflow.tracking.trace_rows import SENTINEL, NotPlainSpan, may_be_plain, trace_rows
from docevals_mlflow.tracking.uris import experiment_artifact_location, public_uri

SWITCH_VARIABLE = "DOCEVALS_DIRECT_STORE"
"""``0`` (or false/no/off) sends every run through MLflow's client."""
TRACES_TAG = "docevals.traces"
TRACES_WARNING_TAG = "docevals.warning.traces"
_OFF = {"0", "false", "no", "off"}
_RUN_NAME_TAG = "mlflow.runName"
_CACHE_KIB = 64 * 1024


def store_file(uri: str) -> Path | None:
    """The existing file of a plain ``sqlite:///`` URI (no query, no escapes), else ``None``."""
    if not uri.startswith("sqlite:///"):
        return None
    name = uri.removeprefix("sqlite:///")
    if not name or any(mark in name for mark in "?#%") or name.startswith(("file:", ":memory:")):
        return None
    path = Path(name)
    path = path if path.is_absolute() else Path.cwd() / path
    return path if path.is_file() else None


def direct_case(
    uri: str,
    legal: LegalBundle,
    artifacts: Path,
    *,
    run_name: str | None,
    continued: bool,
    traces: list[TraceRecord],
) -> Path | None:
    """The store file when this run may be written directly (the checks a store's
    contents need are made again under the lock), else ``None``."""
    if os.environ.get(SWITCH_VARIABLE, "").strip().lower() in _OFF or continued:
        return None
    if _enabled("MLFLOW_SQL_TRACE_ROLLUPS_ENABLED") or _enabled("MLFLOW_ENABLE_WORKSPACES"):
        return None
    if os.environ.get("MLFLOW_WORKSPACE"):
        return None
    bundle = legal.bundle
    if not run_name or _RUN_NAME_TAG in bundle.tags or _needs_registry(legal, artifacts):
        return None
    # A provider call's span is MLflow's to store; other spans are checked as their
    # rows are built (NotPlainSpan): looking at every span's text here as well
    # encoded each one twice.
    if traces and not may_be_plain(traces):
        return None
    return store_file(uri)


def _enabled(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() in {"1", "true", "yes", "on"}


def _needs_registry(legal: LegalBundle, artifacts: Path) -> bool:
    """Whether ``register_bundle_prompts`` would register a prompt for this bundle."""
    from docevals_mlflow.tracking.prompts import action_instructions, registry_enabled

    bundle = legal.bundle
    if bundle.kind != "evaluation" or not registry_enabled():
        return False
    specs = artifacts / "specs"
    if bundle.params.get("prompt.name") and (specs / "prompt.txt").is_file():
        return True
    source = specs / "operations.json"
    if not source.is_file():
        return False
    try:
        operations = json.loads(source.read_text(encoding="utf-8"))
        return bool(action_instructions(operations))
    except Exception:  # MLflow's path turns this into a warning tag
        return True


class _NotDirect(Exception):
    """The store turned out not to be one the direct path writes."""


def write_direct(
    path: Path,
    uri: str,
    legal: LegalBundle,
    artifacts: Path,
    *,
    experiment_name: str,
    run_name: str,
    traces: list[TraceRecord],
) -> tuple[str, str] | None:
    """Write the run; its id and experiment id, or ``None`` (nothing written) when
    the store is not one the direct path writes.

    Raises:
        TrackingError: the store refused a write; nothing was logged.
    """
    # Read-only first: a store this path does not write (a damaged file included)
    # goes to MLflow's path untouched, without even a lock file beside it.
    if not store_file_ready(path):
        return None
    with store_lock(path), _connection(path) as connection:
        created: list[Path] = []
        ready = False
        try:
            connection.execute("BEGIN IMMEDIATE")
            if not direct_schema_ready(connection):
                raise _NotDirect
            ready = True
            ids = _write(
                connection, uri, legal, artifacts, experiment_name, run_name, traces, created
            )
            connection.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            for folder in reversed(created):
                shutil.rmtree(folder, ignore_errors=True)
            # A file SQLite cannot read is MLflow's path's to explain (its store check
            # names the file and the fix).
            if isinstance(exc, _NotDirect) or (
                not ready and isinstance(exc, sqlite3.DatabaseError)
            ):
                return None
            if isinstance(exc, sqlite3.Error) or (
                isinstance(exc, OSError) and not isinstance(exc, DocEvalsError)
            ):
                text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise TrackingError(
                    f"MLflow refused the run: {text} (nothing was logged)",
                    source=public_uri(uri),
                ) from None
            raise
    return ids


@contextlib.contextmanager
def _connection(path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(path, timeout=BUSY_RETRY_SECONDS, isolation_level=None)
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(BUSY_RETRY_SECONDS * 1000)}")
        connection.execute("PRAGMA foreign_keys = ON")
        # Room for every page a large batch of traces changes (13,000 assessment rows
        # touch pages of eight indexes): with SQLite's default 2 MB, pages spill to
        # the file mid-transaction, each spill syncing the journal first. Memory only
        # as used; durability unchanged (journal and synchronous as the store has them).
        connection.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
        yield connection
    finally:
        connection.close()


def _experiment(connection: sqlite3.Connection, uri: str, name: str) -> Experiment:
    found = find_experiment(connection, name)
    if found is not None:
        if found.lifecycle_stage != "active":
            raise _NotDirect  # MLflow says why a deleted experiment takes no run
        return found
    location = experiment_artifact_location(uri, name)
    if location is None or local_artifact_folder(location) is None:
        raise _NotDirect
    # A saved view of the runs list with the headline columns, as runs.py gives it.
    return insert_experiment(connection, name, location, headline_view_tags(now_ms()))


def _write(
    connection: sqlite3.Connection,
    uri: str,
    legal: LegalBundle,
    artifacts: Path,
    experiment_name: str,
    run_name: str,
    traces: list[TraceRecord],
    created: list[Path],
) -> tuple[str, str]:
    experiment = _experiment(connection, uri, experiment_name)
    location = experiment.artifact_location or ""
    root = local_artifact_folder(location)
    if root is None:
        raise _NotDirect
    bundle = legal.bundle
    run_id = uuid.uuid4().hex
    started = now_ms()
    insert_run(
        connection,
        experiment,
        run_id,
        run_name,
        append_to_location(location, run_id, "artifacts"),
        started,
    )
    insert_batch(
        connection,
        run_id,
        dict(sorted(bundle.params.items())),
        dict(sorted(bundle.tags.items())),
        dict(sorted(bundle.metrics.items())),
        started,
    )
    if not root.exists():
        created.append(_first_missing(root))
    created.append(root / run_id)
    target = root / run_id / "artifacts"
    target.mkdir(parents=True, exist_ok=True)
    if artifacts.is_dir():
        _copy_tree(artifacts, target)
    for relative, text in sorted(legal.long_params.items()):
        _write_text(target / relative, text)
    if legal.renamed_metrics:
        index = renamed_index(artifacts / METRICS_INDEX)
        if index is not None:
            _write_text(target / METRICS_INDEX, json.dumps(index, indent=2, default=str))
    insert_inputs(connection, experiment.experiment_id, run_id, dataset_rows(bundle, artifacts))
    finish_run(connection, run_id, now_ms())
    if traces:
        _insert_traces(connection, location, run_id, experiment.experiment_id, traces)
    return run_id, str(experiment.experiment_id)


def _insert_traces(
    connection: sqlite3.Connection,
    location: str,
    run_id: str,
    experiment_id: int,
    traces: list[TraceRecord],
) -> None:
    """The traces, or (as MLflow's path does) the run's warning tag when they fail:
    the run is complete without them."""
    connection.execute("SAVEPOINT traces")
    try:
        template = append_to_location(location, "traces", SENTINEL, "artifacts")
        rows = trace_rows(
            template, run_id, str(experiment_id), redacted(traces), now_ms(), plain_only=True
        )
        for table, columns, values in rows.named_tables():
            insert_rows(connection, table, columns, values)
        tag = (TRACES_TAG, str(len(traces)))
        connection.execute("RELEASE traces")
    except NotPlainSpan:
        # Rare (a text input, a "model" key): the whole run goes MLflow's way, whose
        # span translation decides that row; this transaction is rolled back.
        raise _NotDirect from None
    except Exception as exc:
        connection.execute("ROLLBACK TO traces")
        connection.execute("RELEASE traces")
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        tag = (TRACES_WARNING_TAG, f"traces not logged ({type(exc).__name__}: {reason})")
    connection.execute("INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)", (*tag, run_id))


def _first_missing(folder: Path) -> Path:
    """The outermost of ``folder`` (missing) and its parents that does not exist yet:
    what a failed write removes."""
    missing = folder
    while not missing.parent.exists() and missing.parent != missing:
        missing = missing.parent
    return missing


def _copy_tree(source: Path, target: Path) -> None:
    """``LocalArtifactRepository.log_artifacts``: the files' bytes, not their modes."""
    for folder, _, files in os.walk(source):
        here = target / Path(folder).relative_to(source)
        here.mkdir(parents=True, exist_ok=True)
        for name in files:
            shutil.copyfile(Path(folder) / name, here / name)


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


__all__ = ["SWITCH_VARIABLE", "direct_case", "store_file", "write_direct"]
