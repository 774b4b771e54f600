"""A JSON Lines ground truth as an MLflow GenAI evaluation dataset, and as the
dataset input of the runs evaluated against it (the quickstart's invoices).

One record per document: ``inputs={"document_id": ..., "document_class": ...}`` and
the expected document as ``expectations``, tagged with its content digest. The
dataset appears on the experiment's *Datasets* page; each run gets an input of the
same name with one row per document (``document_id``, ``content_sha256``) and the
SHA-256 of the file as its digest, the digest ``docevals fields --expected`` records
for the same file, so a comparison sees one ground truth.

The dataset is found by name and the ``docevals.managed`` tag (a dataset of that name
docevals did not create is left alone); its records are rewritten only when the
file's digest changed. Everything here needs a SQL-backed store; a failure is
returned as a warning, never raised: the runs are logged either way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docevals_mlflow.core.fingerprints import sha256_file, sha256_json
from docevals_mlflow.tracking.bundle import DatasetInput

MANAGED_TAG = "docevals.managed"
DIGEST_TAG = "docevals.file_digest"
CONTENT_TAG = "docevals.content_sha256"
RECORDS = "inputs/ground_truth.parquet"
"""Where the run's table of the dataset's records goes (the ground-truth input's place)."""


def read_ground_truth(path: Path) -> list[dict[str, Any]]:
    """The JSON Lines records of a ground-truth file (``id``, ``class``, ``data``)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def file_digest(path: Path) -> str:
    """The input's digest: the first 32 hex digits of the file's SHA-256, as
    :func:`~docevals_mlflow.tracking.fields_layout.fields_dataset` records it."""
    return sha256_file(path)[:32]


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


def _managed(client: Any, name: str) -> Any:
    """The docevals-managed dataset ``name``, ``None``, or a warning text."""
    found = [
        dataset
        for dataset in client.search_datasets(filter_string=f"name = '{name}'", max_results=50)
        if dataset.name == name
    ]
    ours = [dataset for dataset in found if (dataset.tags or {}).get(MANAGED_TAG) == "true"]
    if ours:
        return min(ours, key=lambda dataset: (dataset.created_time or 0, dataset.dataset_id))
    if found:
        return (
            f"a GenAI evaluation dataset named {name!r} exists that docevals did not "
            "create; it was left untouched"
        )
    return None


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
        found = _managed(client, name)
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


__all__ = ["publish_evaluation_dataset", "read_ground_truth", "run_input"]
