"""Writing trace records into a tracking store, linked to a run, fast.

Each record becomes an MLflow trace of experiment ``experiment_id`` whose metadata
``mlflow.sourceRun`` names the run (how MLflow lists a run's traces and evaluation
results), with its assessments and spans.

On a SQL store the traces, their tags, metadata, assessments and spans are inserted
in bulk, in one transaction, with the rows MLflow's own ``start_trace`` and
``log_spans`` write for a new trace (:mod:`~docevals_mlflow.tracking.trace_rows`):
MLflow's store writes a trace at a time (about 10-40 ms each on SQLite), far too slow
for thousands of documents. Any other store (a tracking server) gets ``start_trace``
(the trace with its assessments, one call) per trace, several at once, and
``log_spans`` per chunk of traces (:mod:`~docevals_mlflow.tracking.trace_rest`).
"""

from __future__ import annotations

import time
from typing import Any

from docevals_mlflow.tracking.trace_records import TraceRecord, redacted


def log_traces(client: Any, run_id: str, experiment_id: str, traces: list[TraceRecord]) -> int:
    """Write ``traces`` linked to the run ``run_id``, redacted
    (:func:`~docevals_mlflow.tracking.trace_records.redacted`); returns how many were
    written."""
    if not traces:
        return 0
    traces = redacted(traces)
    store = client._tracking_client.store
    now = int(time.time() * 1000)
    if _is_sql(store):
        _insert_sql(store, run_id, experiment_id, traces, now)
        return len(traces)
    from docevals_mlflow.tracking.trace_rest import log_traces_rest

    return log_traces_rest(store, run_id, experiment_id, traces, now)


def _is_sql(store: Any) -> bool:
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    return isinstance(store, SqlAlchemyStore)


def _insert_sql(
    store: Any, run_id: str, experiment_id: str, traces: list[TraceRecord], now: int
) -> None:
    from docevals_mlflow.tracking.trace_rows import SENTINEL, trace_rows

    # Every trace's artifact location is the experiment's, with the trace's id.
    experiment = store.get_experiment(experiment_id)
    location = store._get_trace_artifact_location_tag(experiment, SENTINEL).value
    rows = trace_rows(location, run_id, experiment_id, traces, now)
    with store.ManagedSessionMaker(read_only=False) as session:
        rows.enqueue_rollups(session)
        connection = session.connection()
        for table, columns, values in rows.tables():
            if values:
                _execute_many(connection, table, columns, values)


def _execute_many(
    connection: Any, table: Any, columns: tuple[str, ...], values: list[tuple[Any, ...]]
) -> None:
    """One ``executemany`` of the dialect's own INSERT, the value tuples handed to the
    driver as they are (SQLAlchemy's per-row parameter processing is most of the cost
    of a bulk insert otherwise)."""
    compiled = table.insert().compile(dialect=connection.dialect, column_keys=list(columns))
    names = list(compiled.positiontup) if compiled.positional else list(compiled.binds)
    unknown = [name for name in names if name not in columns]
    if unknown:  # a dialect whose INSERT binds more than the columns given
        connection.execute(table.insert(), [dict(zip(columns, row, strict=True)) for row in values])
        return
    if compiled.positional and names == list(columns):
        parameters: list[Any] = values
    elif compiled.positional:
        order = [columns.index(name) for name in names]
        parameters = [tuple(row[index] for index in order) for row in values]
    else:
        parameters = [dict(zip(columns, row, strict=True)) for row in values]
    connection.exec_driver_sql(compiled.string, parameters)


__all__ = ["log_traces"]
