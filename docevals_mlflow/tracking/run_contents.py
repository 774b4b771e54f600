"""What goes into an MLflow run once it exists: params, tags and metrics in store-sized
batches, the artifacts, the dataset inputs and the operations' prompts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from docevals_mlflow.tracking.bundle import METRICS_INDEX, LegalBundle, RunBundle
from docevals_mlflow.tracking.direct_rows import DatasetRow
from docevals_mlflow.tracking.keys import (
    MAX_DATASET_SOURCE_LENGTH,
    clean_segment,
    legal_dataset_name,
    legal_input_tag,
)

BATCH_PARAMS = 100
"""Params (and tags) per ``log_batch`` call."""
BATCH_METRICS = 1000
"""Metrics per ``log_batch`` call."""
_DIGEST_LENGTH = 36


def chunks(items: list[Any], size: int) -> list[list[Any]]:
    """``items`` in consecutive lists of at most ``size`` (one store batch each)."""
    return [items[start : start + size] for start in range(0, len(items), size)]


def fill_run(
    client: Any, run_id: str, experiment_id: str, legal: LegalBundle, artifacts: Path
) -> None:
    """Log a legal bundle into the run ``run_id``: params, tags and metrics in batches,
    the artifacts, dataset inputs and the operations' prompts."""
    from mlflow.entities import Metric, Param, RunTag

    bundle = legal.bundle
    now = int(time.time() * 1000)
    params = [Param(key, value) for key, value in sorted(bundle.params.items())]
    metrics = [Metric(key, value, now, 0) for key, value in sorted(bundle.metrics.items())]
    tags = [RunTag(key, value) for key, value in sorted(bundle.tags.items())]
    # One client call per kind and per store batch limit, never one per metric.
    for part in chunks(params, BATCH_PARAMS):
        client.log_batch(run_id, params=part)
    for part in chunks(tags, BATCH_PARAMS):
        client.log_batch(run_id, tags=part)
    for part in chunks(metrics, BATCH_METRICS):
        client.log_batch(run_id, metrics=part)
    if artifacts.is_dir():
        client.log_artifacts(run_id, str(artifacts))
    # Only for bundles written by hand or by an older version: what run.json could
    # not log as it was goes up beside the artifacts.
    for path, text in sorted(legal.long_params.items()):
        client.log_text(run_id, text, path)
    if legal.renamed_metrics:
        index = renamed_index(artifacts / METRICS_INDEX)
        if index is not None:
            client.log_dict(run_id, index, METRICS_INDEX)
    _log_inputs(client, run_id, bundle, artifacts)
    # Operation prompts into the prompt registry; never fails the run.
    from docevals_mlflow.tracking.prompts import register_bundle_prompts

    register_bundle_prompts(client, run_id, experiment_id, bundle, artifacts)


def renamed_index(path: Path) -> dict[str, dict[str, str]] | None:
    """The metrics index to log in place of the bundle's, when an older bundle's names
    segments differently from the run (``None``: log it as it is)."""
    # An older bundle's index names segments such as "a~2", which were logged as
    # "a_2": the index is cleaned the same way, so it names the keys in the run.
    import json

    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(index, dict):
        return None
    cleaned = {
        str(namespace): {clean_segment(str(key)): str(source) for key, source in entries.items()}
        for namespace, entries in index.items()
        if isinstance(entries, dict)
    }
    return None if cleaned == index else cleaned


def _source_json(source: str) -> str:
    import json

    text = json.dumps({"uri": source}, ensure_ascii=False)
    if len(text) <= MAX_DATASET_SOURCE_LENGTH:
        return text
    # A character is at most 6 in JSON (\u0000), so this always fits.
    return json.dumps({"uri": source[: MAX_DATASET_SOURCE_LENGTH // 6 - 20] + "…"})


def dataset_rows(bundle: RunBundle, artifacts: Path) -> list[DatasetRow]:
    """The bundle's dataset inputs as MLflow stores them (name, digest, source, schema,
    profile and input tags)."""
    if not bundle.inputs:
        return []
    import json

    rows = []
    for dataset in bundle.inputs:
        columns, count = parquet_shape(artifacts / dataset.records)
        pairs = [("mlflow.data.context", dataset.context), *dataset.tags.items()]
        rows.append(
            DatasetRow(
                name=legal_dataset_name(dataset.name),
                digest=dataset.digest[:_DIGEST_LENGTH],
                source_type="local",
                source=_source_json(dataset.source),
                schema=json.dumps({"columns": columns}),
                profile=json.dumps({"num_rows": count}),
                tags=tuple(legal_input_tag(key, value) for key, value in pairs),
            )
        )
    return rows


def parquet_shape(path: Path) -> tuple[list[str], int]:
    """The column names (as text) and row count ``pandas.read_parquet`` would give a
    Parquet file, from its footer: the rows are not read (nor pyarrow's dataset
    module imported, which the reading costs as much again)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as file:
        schema = file.schema_arrow
        # An index pandas stored as columns (not a range) comes back as the index.
        stored = (schema.pandas_metadata or {}).get("index_columns", [])
        index = {name for name in stored if isinstance(name, str)}
        columns = [name for name in schema.names if name not in index]
        return columns, file.metadata.num_rows


def _log_inputs(client: Any, run_id: str, bundle: RunBundle, artifacts: Path) -> None:
    rows = dataset_rows(bundle, artifacts)
    if not rows:
        return
    from mlflow.entities import Dataset, DatasetInput, InputTag

    entries = []
    for row in rows:
        # The entity is built directly: resolving a source from a plain name makes
        # MLflow guess (and warn) about which kind of source it is.
        entity = Dataset(
            name=row.name,
            digest=row.digest,
            source_type=row.source_type,
            source=row.source,
            schema=row.schema,
            profile=row.profile,
        )
        tags = [InputTag(key, value) for key, value in row.tags]
        entries.append(DatasetInput(dataset=entity, tags=tags))
    client.log_inputs(run_id, datasets=entries)
