"""Writing trace records to a store other than SQL, such as an HTTP ``mlflow server``.

MLflow 3.17's server has no call that creates many traces with their assessments: its
OTLP endpoint (``/v1/traces``, what ``log_spans`` posts to) takes the spans of many
traces at once, but a trace it creates from spans alone has no metadata (no
``mlflow.sourceRun``, so the run's Traces tab would not list it), no assessments and
previews of its own making; assessments have no batch endpoint either. So each trace
is created with its assessments by ``start_trace`` (one request, as before), several
requests at a time on the client's pooled keep-alive connections, and the spans of
:data:`CHUNK` traces follow in one ``log_spans`` request once their traces exist (spans
arriving first would create the trace without its metadata). The traces read back are
those MLflow's own calls write, one after the other, for the same records.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from typing import Any

from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.tracking.errors import TrackingError
from docevals_mlflow.tracking.trace_records import TraceRecord

CHUNK = 500
"""Traces whose spans go in one ``log_spans`` request."""
WORKERS = 8
"""``start_trace`` requests in flight at once against a tracking server (the client's
connection pool keeps 10 by default)."""


def log_traces_rest(
    store: Any,
    run_id: str,
    experiment_id: str,
    traces: list[TraceRecord],
    now: int,
    *,
    workers: int | None = None,
) -> int:
    """Write ``traces`` (already redacted) through ``store``'s ``start_trace`` and
    ``log_spans``, linked to the run ``run_id``; returns how many were written.

    ``workers``: requests in flight at once; by default :data:`WORKERS` on a
    tracking server and one call at a time on any other store.

    Raises:
        TrackingError: a call failed; the message says how many traces were written
            (with their spans) before it and why, on one line. Nothing more is sent
            once a call fails, and the traces of the chunk that failed are deleted
            (those written before stay).
    """
    from docevals_mlflow.tracking.trace_entities import trace_entities

    if workers is None:
        workers = WORKERS if _is_rest(store) else 1
    # One call at a time runs on the caller's thread (a store other than a server may
    # not expect calls from others); Ctrl-C cancels the requests not sent yet.
    pool = None
    if workers > 1:
        pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="docevals-traces")
    written = 0
    try:
        for start in range(0, len(traces), CHUNK):
            part = [
                trace_entities(record, run_id, experiment_id, now)
                for record in traces[start : start + CHUNK]
            ]
            try:
                _all_or_first_error(pool, store.start_trace, [info for info, _ in part])
                store.log_spans(experiment_id, [span for _, spans in part for span in spans])
            except Exception as exc:
                _forget(store, experiment_id, [info.trace_id for info, _ in part])
                raise TrackingError(_failure(exc, written, len(traces))) from exc
            written += len(part)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return written


def _all_or_first_error(
    pool: concurrent.futures.ThreadPoolExecutor | None, call: Any, items: list[Any]
) -> None:
    """``call`` on every item, on ``pool`` (else one after the other); the first
    failure cancels the calls not started yet and is raised once those in flight are
    done."""
    if pool is None:
        for item in items:
            call(item)
        return
    futures = [pool.submit(call, item) for item in items]
    done, _ = concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_EXCEPTION)
    error = next((e for e in (future.exception() for future in done) if e is not None), None)
    if error is None:
        return
    for future in futures:
        future.cancel()
    concurrent.futures.wait(futures)
    raise error


def _forget(store: Any, experiment_id: str, trace_ids: list[str]) -> None:
    """Delete what the failed chunk wrote, if the store lets us: a trace without its
    spans would make MLflow look for them among the artifacts, and fail to list the
    run's traces."""
    with contextlib.suppress(Exception):
        store.delete_traces(experiment_id, trace_ids=trace_ids)


def _failure(exc: Exception, written: int, total: int) -> str:
    # One line (callers show the first), and no secret of this process in it.
    reason = (str(exc).strip().splitlines() or [""])[0] or "no message"
    return redact_text(
        f"{written} of {total} traces written before the tracking store refused one "
        f"({type(exc).__name__}: {reason})"
    )


def _is_rest(store: Any) -> bool:
    from mlflow.store.tracking.rest_store import RestStore

    return isinstance(store, RestStore)


__all__ = ["CHUNK", "WORKERS", "log_traces_rest"]
