"""The rows of a new run, written with ``sqlite3`` as MLflow's ``SqlAlchemyStore``
writes them (:mod:`~docevals_mlflow.tracking.direct_store`).

What ``MlflowClient`` calls write, call by call: ``create_experiment`` (the
experiment and its tags), ``create_run`` (the run, ``mlflow.runName``), ``log_batch``
(params, tags, metrics and latest metrics), ``log_inputs`` (datasets, inputs and
input tags) and ``set_terminated`` (status and end time). The caller holds the
transaction; nothing here commits.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.tracking.direct_values import metric_value

DEFAULT_WORKSPACE = "default"
RUN_NAME_TAG = "mlflow.runName"


@dataclass(frozen=True)
class Experiment:
    """An experiment row: what a run needs of it."""

    experiment_id: int
    artifact_location: str | None
    lifecycle_stage: str


@dataclass(frozen=True)
class DatasetRow:
    """A dataset input as ``log_inputs`` stores it."""

    name: str
    digest: str
    source_type: str
    source: str
    schema: str
    profile: str
    tags: tuple[tuple[str, str], ...]


def now_ms() -> int:
    """MLflow's ``get_current_time_millis``."""
    return int(time.time() * 1000)


def find_experiment(connection: sqlite3.Connection, name: str) -> Experiment | None:
    """The experiment ``get_experiment_by_name`` finds (deleted ones included)."""
    row = connection.execute(
        "SELECT experiment_id, artifact_location, lifecycle_stage FROM experiments "
        "WHERE name = ? AND workspace = ?",
        (name, DEFAULT_WORKSPACE),
    ).fetchone()
    return None if row is None else Experiment(int(row[0]), row[1], row[2])


def insert_experiment(
    connection: sqlite3.Connection, name: str, artifact_location: str, tags: Mapping[str, str]
) -> Experiment:
    """``create_experiment(name, artifact_location=..., tags=...)``."""
    created = now_ms()
    cursor = connection.execute(
        "INSERT INTO experiments (name, artifact_location, lifecycle_stage, creation_time, "
        "last_update_time, workspace) VALUES (?, ?, 'active', ?, ?, ?)",
        (name, artifact_location, created, created, DEFAULT_WORKSPACE),
    )
    experiment_id = int(cursor.lastrowid or 0)
    connection.executemany(
        "INSERT INTO experiment_tags (key, value, experiment_id) VALUES (?, ?, ?)",
        [(key, value, experiment_id) for key, value in tags.items()],
    )
    return Experiment(experiment_id, artifact_location, "active")


def insert_run(
    connection: sqlite3.Connection,
    experiment: Experiment,
    run_id: str,
    run_name: str,
    artifact_uri: str,
    start_time: int,
) -> None:
    """``create_run(experiment_id, run_name=...)`` of ``MlflowClient`` (user
    ``unknown``, no other tag than the run name)."""
    connection.execute(
        "INSERT INTO runs (run_uuid, name, source_type, source_name, entry_point_name, "
        "user_id, status, start_time, end_time, source_version, lifecycle_stage, "
        "artifact_uri, experiment_id, deleted_time) "
        "VALUES (?, ?, 'UNKNOWN', '', '', 'unknown', 'RUNNING', ?, NULL, '', 'active', ?, ?, NULL)",
        (run_id, run_name, start_time, artifact_uri, experiment.experiment_id),
    )
    connection.execute(
        "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)",
        (RUN_NAME_TAG, run_name, run_id),
    )


def insert_batch(
    connection: sqlite3.Connection,
    run_id: str,
    params: Mapping[str, str],
    tags: Mapping[str, str],
    metrics: Mapping[str, float],
    timestamp: int,
) -> None:
    """``log_batch`` of a new run's params, tags and metrics (step 0): each metric is
    also the run's latest."""
    connection.executemany(
        "INSERT INTO params (key, value, run_uuid) VALUES (?, ?, ?)",
        [(key, value, run_id) for key, value in params.items()],
    )
    connection.executemany(
        "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)",
        [(key, value, run_id) for key, value in tags.items()],
    )
    values = []
    for key, value in metrics.items():
        is_nan, stored = metric_value(value)
        values.append((key, stored, timestamp, run_id, 0, is_nan))
    connection.executemany(
        "INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        values,
    )
    connection.executemany(
        "INSERT INTO latest_metrics (key, value, timestamp, run_uuid, step, is_nan) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        values,
    )


def insert_inputs(
    connection: sqlite3.Connection,
    experiment_id: int,
    run_id: str,
    datasets: Iterable[DatasetRow],
) -> None:
    """``log_inputs`` of a new run: the first of datasets with the same name and
    digest counts; a dataset the experiment already has is reused."""
    unique: dict[tuple[str, str], DatasetRow] = {}
    for dataset in datasets:
        unique.setdefault((dataset.name, dataset.digest), dataset)
    for (name, digest), dataset in unique.items():
        found = connection.execute(
            "SELECT dataset_uuid FROM datasets WHERE experiment_id = ? AND name = ? AND digest = ?",
            (experiment_id, name, digest),
        ).fetchone()
        if found is not None:
            dataset_uuid = str(found[0])
        else:
            dataset_uuid = uuid.uuid4().hex
            connection.execute(
                "INSERT INTO datasets (dataset_uuid, experiment_id, name, digest, "
                "dataset_source_type, dataset_source, dataset_schema, dataset_profile) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    dataset_uuid,
                    experiment_id,
                    name,
                    digest,
                    dataset.source_type,
                    dataset.source,
                    dataset.schema,
                    dataset.profile,
                ),
            )
        input_uuid = uuid.uuid4().hex
        connection.execute(
            "INSERT INTO inputs (input_uuid, source_type, source_id, destination_type, "
            "destination_id, step) VALUES (?, 'DATASET', ?, 'RUN', ?, 0)",
            (input_uuid, dataset_uuid, run_id),
        )
        connection.executemany(
            "INSERT INTO input_tags (input_uuid, name, value) VALUES (?, ?, ?)",
            [(input_uuid, key, value) for key, value in dataset.tags],
        )


def finish_run(connection: sqlite3.Connection, run_id: str, end_time: int) -> None:
    """``set_terminated(run_id)``: FINISHED at ``end_time``."""
    connection.execute(
        "UPDATE runs SET status = 'FINISHED', end_time = ? WHERE run_uuid = ?", (end_time, run_id)
    )


def insert_rows(
    connection: sqlite3.Connection, table: str, columns: tuple[str, ...], rows: list[Any]
) -> None:
    """Rows of ``table`` given as value tuples in ``columns`` order."""
    if not rows:
        return
    names = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    connection.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)


__all__ = [
    "DatasetRow",
    "Experiment",
    "find_experiment",
    "finish_run",
    "insert_batch",
    "insert_experiment",
    "insert_inputs",
    "insert_rows",
    "insert_run",
    "now_ms",
]
