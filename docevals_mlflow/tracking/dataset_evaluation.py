"""A ground truth as an MLflow GenAI evaluation dataset, and as the dataset input of
the runs evaluated against it (the quickstart's invoices, ``docevals fields
--evaluation-dataset``, the evaluate-fields recipe).

The ground truth is read as ``docevals fields --expected`` reads it (JSON Lines, a
folder of ``<id>.json`` files, or Parquet).

One record per document: ``inputs={"document_id": ..., "document_class": ...}`` and
the expected document as ``expectations``, tagged with its content digest. The
dataset appears on the experiment's *Datasets* page; each run gets an input of the
same name with one row per document (``document_id``, ``content_sha256``) and the
digest ``docevals fields --expected`` records for the same file or folder, so a
comparison (and the baseline of ``--traces``) sees one ground truth.

The dataset is found by name and the ``docevals.managed`` tag (a dataset of that name
docevals did not create is left alone); its records are rewritten only when the
file's digest changed. Everything here needs a SQL-backed store; a failure is
returned as a warning, never raised: the runs are logged either way.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.fingerprints import sha256_file, sha256_json
from docevals_mlflow.tracking.bundle import BundleWriter, DatasetInput
from docevals_mlflow.tracking.genai_mirror import MANAGED_TAG, managed_dataset

DIGEST_TAG = "docevals.file_digest"
CONTENT_TAG = "docevals.content_sha256"
if TYPE_CHECKING:
    from docevals_mlflow.tracking.runs import LoggedRun

RECORDS = "inputs/ground_truth.parquet"
"""Where the run's table of the dataset's records goes (the ground-truth input's place)."""


def read_ground_truth(path: Path) -> list[dict[str, Any]]:
    """The records of a ground truth (``id``, ``class``, ``data``), read as ``docevals
    fields --expected`` reads them.

    Raises:
        InputError: a record that input reader refuses, named.
    """
    from docevals_mlflow.fields.records import read_records

    return [
        {"id": record.id, "class": record.document_class, "data": record.data}
        for record in read_records(path)
    ]


def file_digest(path: Path) -> str:
    """The input's digest, as
    :func:`~docevals_mlflow.tracking.fields_layout.fields_dataset` records it (for a
    file, the first 32 hex digits of its SHA-256)."""
    if path.is_dir():
        from docevals_mlflow.tracking.fields_layout import fields_dataset

        return fields_dataset(path)[0].digest
    return sha256_file(path)[:32]


def default_name(path: Path) -> str:
    """The dataset name a ground truth gets when none is given: its file name without
    the extension (a folder's name), as its file input is named."""
    return path.stem or path.name


def use_evaluation_dataset(writer: BundleWriter, name: str, path: Path) -> None:
    """Make the evaluation dataset ``name`` (the ground truth at ``path``) the run's
    ground-truth input, in place of the input of the file itself (same digest)."""
    writer.bundle.inputs = [entry for entry in writer.bundle.inputs if entry.records != RECORDS]
    writer.files.pop(RECORDS, None)
    writer.dataset(*run_input(name, path))


def run_input(name: str, path: Path) -> tuple[DatasetInput, Any]:
    """The dataset input of a run evaluated against ``path``, and its records table."""
    import pandas as pd

    rows = [
        {"document_id": str(record["id"]), "content_sha256": sha256_json(record.get("data"))}
        for record in read_ground_truth(path)
    ]
    frame = pd.DataFrame(rows, columns=["document_id", "content_sha256"])
    dataset = DatasetInput(
        name=name,
        digest=file_digest(path),
        source=f"{path.name} (MLflow evaluation dataset {name!r})",
        records=RECORDS,
        tags={"docevals.dataset.kind": "mlflow-evaluation-dataset"},
    )
    return dataset, frame


def _records(path: Path) -> list[dict[str, Any]]:
    records = []
    for record in read_ground_truth(path):
        data = record.get("data")
        records.append(
            {
                "inputs": {
                    "document_id": str(record["id"]),
                    "document_class": str(record.get("class") or ""),
                },
                # MLflow expectations are named: a document that is not an object is
                # kept under one name.
                "expectations": data if isinstance(data, dict) and data else {"document": data},
                "tags": {CONTENT_TAG: sha256_json(data)},
                "source": {"source_type": "HUMAN", "source_data": {"file": path.name}},
            }
        )
    return records


def publish_evaluation_dataset(
    tracking_uri: str, name: str, path: Path, experiment_ids: Iterable[str]
) -> tuple[str | None, str | None]:
    """Create or update the evaluation dataset ``name`` from the ground truth at
    ``path`` and link it to the experiments; returns ``(dataset_id, warning)``."""
    from docevals_mlflow.tracking.store import open_client

    if "'" in name:
        return None, f"evaluation dataset name {name!r} holds a quote; not published"
    try:
        client = open_client(tracking_uri)
        found = managed_dataset(client, name)
        if isinstance(found, str):
            return None, found
        digest = file_digest(path)
        tags = {MANAGED_TAG: "true", DIGEST_TAG: digest, "docevals.source": path.name}
        wanted = sorted(set(experiment_ids))
        if found is None:
            dataset = client.create_dataset(name=name, experiment_id=wanted, tags=tags)
            stale = True
        else:
            dataset = found
            stale = (dataset.tags or {}).get(DIGEST_TAG) != digest
            client.set_dataset_tags(dataset.dataset_id, tags)
        # The client's own store: the dataset entity's helpers go through the
        # process-wide tracking URI, which may be another store.
        store = client._tracking_client.store
        linked = set(store.get_dataset_experiment_ids(dataset.dataset_id))
        missing = [number for number in wanted if number not in linked]
        if missing:
            client.add_dataset_to_experiments(dataset.dataset_id, missing)
        if stale:
            existing, _ = store._load_dataset_records(dataset.dataset_id, max_results=None)
            if existing:
                store.delete_dataset_records(
                    dataset.dataset_id, [record.dataset_record_id for record in existing]
                )
            store.upsert_dataset_records(dataset_id=dataset.dataset_id, records=_records(path))
        return str(dataset.dataset_id), None
    except Exception as exc:  # the dataset must never cost the user the runs
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, f"evaluation dataset {name!r} not published ({type(exc).__name__}: {reason})"


def publish_for_run(logged: LoggedRun, name: str, path: Path) -> tuple[str | None, str | None]:
    """Publish the evaluation dataset ``name`` a logged run used (linked to its
    experiment): ``(line for the terminal, warning)``, either ``None``."""
    dataset_id, warning = publish_evaluation_dataset(
        logged.tracking_uri, name, path, [logged.experiment_id]
    )
    if dataset_id is None:
        return None, warning
    count = len(read_ground_truth(path))
    return f"evaluation dataset {name!r} (Datasets tab): {count} records", warning


__all__ = [
    "default_name",
    "publish_evaluation_dataset",
    "publish_for_run",
    "read_ground_truth",
    "run_input",
    "use_evaluation_dataset",
]
