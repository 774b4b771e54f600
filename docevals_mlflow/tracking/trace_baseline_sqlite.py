"""Finding the default traces baseline in a local SQLite store without MLflow's client.

Importing mlflow and opening its client costs about two seconds, which a run written
straight into SQLite (:mod:`~docevals_mlflow.tracking.direct_store`) no longer pays; the
baseline of :mod:`~docevals_mlflow.tracking.trace_baseline` must not bring it back.
So, when the store is a plain ``sqlite:///`` file at the schema the direct writer was
checked against, the same search ``search_runs`` would make (finished, active runs of
the experiment, same report kind and fingerprint params, newest first, then the same
ground-truth digests) is one read-only SQL query, and the baseline's result tables are
read from its local artifact folder. Anything else (a server, another schema, an
artifact location that is not a simple local folder) raises :class:`NotDirect` and
goes through MLflow. This module does not import mlflow.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from docevals_mlflow.tracking.busy_retries import BUSY_RETRY_SECONDS
from docevals_mlflow.tracking.direct_rows import find_experiment
from docevals_mlflow.tracking.direct_schema import direct_schema_ready
from docevals_mlflow.tracking.direct_store import store_file
from docevals_mlflow.tracking.direct_values import local_artifact_folder


class NotDirect(Exception):
    """This store is MLflow's to read."""


@dataclass(frozen=True)
class LocalRun:
    """A baseline run found in the store: its id, name and local artifact folder."""

    run_id: str
    run_name: str | None
    artifacts: Path

    def fetch(self, path: str) -> Path | None:
        """The artifact ``path`` of the run, when it holds one."""
        file = self.artifacts / path
        return file if file.is_file() else None


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[sqlite3.Connection]:
    # Read-only: looking for a baseline never changes (or creates) a store.
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=BUSY_RETRY_SECONDS)
    try:
        yield connection
    finally:
        connection.close()


def latest_comparable(
    uri: str,
    *,
    experiment: str,
    project_run_id: str | None,
    report_kind: str,
    params: Mapping[str, str],
    digests: set[str],
    candidates: int = 50,
) -> LocalRun | None:
    """The newest finished run of ``experiment`` (the project run's, under ``mlflow
    run``) with tag ``docevals.report_kind`` = ``report_kind``, every param of
    ``params`` and exactly ``digests`` as its ground-truth digests; ``None`` if none.

    Raises:
        NotDirect: the store is not one this module reads.
    """
    path = store_file(uri)
    if path is None:
        raise NotDirect
    with _reading(path) as connection:
        if not direct_schema_ready(connection):
            raise NotDirect
        if project_run_id is not None:
            row = connection.execute(
                "SELECT experiment_id FROM runs WHERE run_uuid = ?", (project_run_id,)
            ).fetchone()
            if row is None:
                raise NotDirect  # MLflow says what is wrong with that run
            experiment_id = int(row[0])
        else:
            found = find_experiment(connection, experiment)
            if found is None or found.lifecycle_stage != "active":
                return None
            experiment_id = found.experiment_id
        query = [
            "SELECT r.run_uuid, r.name, r.artifact_uri FROM runs r WHERE r.experiment_id = ?",
            "AND r.status = 'FINISHED' AND r.lifecycle_stage = 'active'",
            "AND EXISTS (SELECT 1 FROM tags t WHERE t.run_uuid = r.run_uuid",
            "AND t.key = 'docevals.report_kind' AND t.value = ?)",
        ]
        values: list[object] = [experiment_id, report_kind]
        for key, value in params.items():
            query.append(
                "AND EXISTS (SELECT 1 FROM params p WHERE p.run_uuid = r.run_uuid "
                "AND p.key = ? AND p.value = ?)"
            )
            values += [key, value]
        query.append("ORDER BY r.start_time DESC, r.run_uuid LIMIT ?")
        values.append(candidates)
        for run_id, run_name, artifact_uri in connection.execute(" ".join(query), values):
            if run_id == project_run_id or _digests(connection, run_id) != digests:
                continue
            folder = local_artifact_folder(artifact_uri)
            if folder is None:
                raise NotDirect
            return LocalRun(run_id, run_name, folder)
    return None


def _digests(connection: sqlite3.Connection, run_id: str) -> set[str]:
    rows = connection.execute(
        "SELECT d.digest FROM inputs i "
        "JOIN datasets d ON d.dataset_uuid = i.source_id "
        "JOIN input_tags t ON t.input_uuid = i.input_uuid "
        "WHERE i.destination_type = 'RUN' AND i.destination_id = ? "
        "AND i.source_type = 'DATASET' "
        "AND t.name = 'mlflow.data.context' AND t.value = 'ground_truth'",
        (run_id,),
    )
    return {str(row[0]) for row in rows}


__all__ = ["LocalRun", "NotDirect", "latest_comparable"]
