"""Reviewers' answers and final values as MLflow ``Expectation`` assessments.

A review file written from a logged generation run carries the digest of the report
it came from (``generation_sha256``); the run's trace of that case carries the same
digest as its tag ``docevals.generation.sha256``
(:mod:`~docevals_mlflow.tracking.generation_traces`). :func:`log_review_expectations`
finds that trace and writes on it, for every answered field path:

* one ``Expectation`` per person with a current answer: named by the field path,
  source ``HUMAN`` with the person as source id, the person's current value (the
  proposed value for ``accept``, the typed one for ``set``, ``{"absent": true}`` for
  ``absent`` and ``unreadable``), metadata ``role``, ``action``, ``at``, ``previous``
  (JSON) and ``reason`` when given;
* one for the final value, source id ``final``, metadata ``status`` (``adjudicated``
  or ``agreed``) and ``reason`` (the adjudicator's), once the field is decided.

Each carries ``docevals.review.key`` (a digest of what it says) in its metadata, so
logging again adds only what is new: an answer already written is left alone, and a
person's changed answer (or a changed final value) is added as a new ``Expectation``
that overrides the earlier one (MLflow keeps it, marked not valid). On a SQL store
the new rows are inserted in one transaction (MLflow writes one assessment per
transaction); any other store gets MLflow's ``log_assessment`` per value.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.groundtruth.layer_records import LayerEntry
from docevals_mlflow.groundtruth.layer_view import ReviewLayers
from docevals_mlflow.tracking.generation_traces import GENERATION_TAG

REVIEW_KEY = "docevals.review.key"
"""Metadata key of the digest that identifies what an Expectation says."""
FINAL_SOURCE = "final"
"""Source id of the final values' Expectations."""
ABSENT = {"absent": True}
"""The value of an answer that leaves the field out (MLflow refuses a null value)."""
_SOURCE_RUN = "mlflow.sourceRun"
_MAX_NAME = 250
_MAX_TEXT = 2000
_CHUNK = 500


@dataclass(frozen=True)
class ReviewExpectation:
    """One Expectation to write on a document's trace."""

    name: str
    value: Any
    source_id: str
    metadata: dict[str, str]

    @property
    def key(self) -> str:
        """What identifies this Expectation among those already written."""
        return self.metadata[REVIEW_KEY]


@dataclass(frozen=True)
class CaseTrace:
    """The trace a review file's answers go to."""

    trace_id: str
    run_id: str | None
    experiment_id: str
    timestamp_ms: int


@dataclass(frozen=True)
class Existing:
    """An Expectation docevals wrote earlier on a trace."""

    assessment_id: str
    name: str
    source_id: str
    key: str
    valid: bool


@dataclass
class ExpectationsLogged:
    """What :func:`log_review_expectations` did."""

    reviews: int = 0
    matched: int = 0
    unmatched: list[str] = field(default_factory=list)
    """Review files whose generation has no trace in the store."""
    added: int = 0
    overridden: int = 0
    unchanged: int = 0
    runs: dict[str, list[ReviewLayers]] = field(default_factory=dict)
    """Generation run id → the reviews whose traces it holds."""


def _text(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _name(path: str) -> str:
    return path if len(path) <= _MAX_NAME else path[: _MAX_NAME - 1] + "…"


def _keyed(name: str, value: Any, source_id: str, metadata: dict[str, str]) -> ReviewExpectation:
    key = sha256_json({"name": name, "value": value, "source": source_id, **metadata})[:32]
    return ReviewExpectation(name, value, source_id, {**metadata, REVIEW_KEY: key})


def review_expectations(
    layers: ReviewLayers, *, required_reviewers: int = 1
) -> list[ReviewExpectation]:
    """The Expectations of one review: each person's current answer per answered
    field path, then the final value of each decided one."""
    items: list[ReviewExpectation] = []
    for person in layers.people():
        layer = layers.layers[person]
        last: dict[str, LayerEntry] = {}
        for entry in layer.entries:
            last[entry.path] = entry
        for path, entry in last.items():
            value = layers.targets.effective(entry)
            metadata = {
                "role": layer.role,
                "action": entry.action,
                "at": entry.at,
                "previous": _text(entry.previous),
            }
            if entry.reason:
                metadata["reason"] = entry.reason
            items.append(_keyed(_name(path), ABSENT if value is None else value, person, metadata))
    for path, final in layers.final_values(required_reviewers).items():
        if final.status == "unresolved":
            continue
        metadata = {"status": final.status, "action": str(final.action)}
        if final.reason:
            metadata["reason"] = final.reason
        value = ABSENT if final.absent or final.value is None else final.value
        items.append(_keyed(_name(path), value, FINAL_SOURCE, metadata))
    return items


def log_review_expectations(
    layer_sets: Sequence[ReviewLayers],
    *,
    tracking_uri: str | None = None,
    run_id: str | None = None,
    required_reviewers: int = 1,
) -> ExpectationsLogged:
    """Write the Expectations of ``layer_sets`` onto their generation traces (see the
    module docstring); ``run_id`` limits the traces to that generation run's (else a
    case logged by several runs gets them on its latest trace)."""
    from docevals_mlflow.tracking.approval_runs import refusals, tracking_client

    client, uri = tracking_client(tracking_uri)
    result = ExpectationsLogged(reviews=len(layer_sets))
    with refusals(uri):
        store = client._tracking_client.store
        wanted = {layers.review.generation_sha256 for layers in layer_sets}
        sql = _is_sql(store)
        traces = (
            _sql_traces(store, wanted, run_id) if sql else _client_traces(client, wanted, run_id)
        )
        found = [(layers, traces.get(layers.review.generation_sha256)) for layers in layer_sets]
        placed = [(layers, trace) for layers, trace in found if trace is not None]
        result.unmatched = [str(layers.review_path) for layers, trace in found if trace is None]
        result.matched = len(placed)
        for layers, trace in placed:
            result.runs.setdefault(trace.run_id or "", []).append(layers)
        result.runs.pop("", None)
        ids = [trace.trace_id for _, trace in placed]
        existing = _sql_existing(store, ids) if sql else _client_existing(client, ids)
        plan: list[tuple[CaseTrace, ReviewExpectation, str | None]] = []
        for layers, trace in placed:
            known = existing.get(trace.trace_id, [])
            keys = {item.key for item in known}
            current = {(item.name, item.source_id): item for item in known if item.valid}
            for item in review_expectations(layers, required_reviewers=required_reviewers):
                if item.key in keys:
                    result.unchanged += 1
                    continue
                keys.add(item.key)
                earlier = current.get((item.name, item.source_id))
                plan.append((trace, item, earlier.assessment_id if earlier else None))
        result.added = len(plan)
        result.overridden = sum(1 for _, _, old in plan if old is not None)
        if plan and sql:
            _sql_write(store, plan)
        elif plan:
            _client_write(client, plan)
    return result


def _is_sql(store: Any) -> bool:
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    return isinstance(store, SqlAlchemyStore)


def _chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _better(found: CaseTrace | None, candidate: CaseTrace) -> bool:
    return found is None or (candidate.timestamp_ms, candidate.trace_id) > (
        found.timestamp_ms,
        found.trace_id,
    )


def _sql_traces(store: Any, digests: set[str], run_id: str | None) -> dict[str, CaseTrace]:
    """Digest → latest trace tagged with it (of ``run_id`` when given): one query
    per 500 digests."""
    from sqlalchemy import bindparam, text

    query = text(
        "SELECT t.value, i.request_id, i.experiment_id, i.timestamp_ms, m.value "
        "FROM trace_tags t JOIN trace_info i ON i.request_id = t.request_id "
        "LEFT JOIN trace_request_metadata m ON m.request_id = t.request_id AND m.key = :run "
        "WHERE t.key = :tag AND t.value IN :digests"
    ).bindparams(bindparam("digests", expanding=True))
    found: dict[str, CaseTrace] = {}
    with store.ManagedSessionMaker() as session:
        for chunk in _chunks(sorted(digests)):
            rows = session.execute(
                query, {"run": _SOURCE_RUN, "tag": GENERATION_TAG, "digests": list(chunk)}
            )
            for digest, trace_id, experiment_id, stamp, source_run in rows:
                if run_id is not None and source_run != run_id:
                    continue
                trace = CaseTrace(trace_id, source_run, str(experiment_id), int(stamp))
                if _better(found.get(digest), trace):
                    found[digest] = trace
    return found


def _client_traces(client: Any, digests: set[str], run_id: str | None) -> dict[str, CaseTrace]:
    """As :func:`_sql_traces`, through MLflow's ``search_traces`` (any store)."""
    from mlflow.entities import ViewType

    experiments: list[str] = []
    token = None
    while True:
        page = client.search_experiments(view_type=ViewType.ACTIVE_ONLY, page_token=token)
        experiments += [experiment.experiment_id for experiment in page]
        token = page.token
        if not token:
            break
    found: dict[str, CaseTrace] = {}
    for digest in sorted(digests):
        for start in range(0, len(experiments), 100):
            token = None
            while True:
                page = client.search_traces(
                    locations=experiments[start : start + 100],
                    filter_string=f"tag.`{GENERATION_TAG}` = '{digest}'",
                    include_spans=False,
                    page_token=token,
                )
                for trace in page:
                    info = trace.info
                    source_run = info.trace_metadata.get(_SOURCE_RUN)
                    if run_id is not None and source_run != run_id:
                        continue
                    candidate = CaseTrace(
                        info.trace_id,
                        source_run,
                        str(info.experiment_id),
                        int(info.request_time),
                    )
                    if _better(found.get(digest), candidate):
                        found[digest] = candidate
                token = page.token
                if not token:
                    break
    return found


def _review_key(metadata: Any) -> str | None:
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            return None
    if isinstance(metadata, dict):
        key = metadata.get(REVIEW_KEY)
        return key if isinstance(key, str) else None
    return None


def _sql_existing(store: Any, trace_ids: list[str]) -> dict[str, list[Existing]]:
    """Trace id → the human Expectations docevals wrote on it."""
    from sqlalchemy import bindparam, text

    query = text(
        "SELECT trace_id, assessment_id, name, source_id, assessment_metadata, valid "
        "FROM assessments WHERE assessment_type = 'expectation' AND source_type = 'HUMAN' "
        "AND trace_id IN :ids"
    ).bindparams(bindparam("ids", expanding=True))
    found: dict[str, list[Existing]] = {}
    with store.ManagedSessionMaker() as session:
        for chunk in _chunks(sorted(set(trace_ids))):
            for trace_id, assessment_id, name, source, metadata, valid in session.execute(
                query, {"ids": list(chunk)}
            ):
                key = _review_key(metadata)
                if key is not None:
                    found.setdefault(trace_id, []).append(
                        Existing(assessment_id, name, source or "", key, bool(valid))
                    )
    return found


def _client_existing(client: Any, trace_ids: list[str]) -> dict[str, list[Existing]]:
    found: dict[str, list[Existing]] = {}
    for trace_id in sorted(set(trace_ids)):
        info = client.get_trace(trace_id).info
        for assessment in info.assessments:
            key = _review_key(assessment.metadata or {})
            if assessment.expectation is None or key is None:
                continue
            found.setdefault(trace_id, []).append(
                Existing(
                    assessment.assessment_id,
                    assessment.name,
                    assessment.source.source_id or "",
                    key,
                    assessment.valid is not False,
                )
            )
    return found


def _sql_write(store: Any, plan: list[tuple[CaseTrace, ReviewExpectation, str | None]]) -> None:
    """Insert the new rows and mark the overridden ones not valid, in one transaction,
    as MLflow's ``create_assessment`` writes them (one at a time)."""
    from mlflow.store.tracking.dbmodels.models import SqlAssessments
    from mlflow.store.tracking.utils.sql_trace_rollups import (
        RollupFamily,
        enqueue_rollup_rebuild_partitions,
    )
    from sqlalchemy import update

    from docevals_mlflow.tracking.direct_values import assessment_aggregate
    from docevals_mlflow.tracking.trace_rows import ASSESSMENT_COLUMNS
    from docevals_mlflow.tracking.trace_store import _execute_many

    now = int(time.time() * 1000)
    rows = []
    partitions: dict[int, set[int]] = {}
    for trace, item, old in plan:
        experiment = int(trace.experiment_id)
        partitions.setdefault(experiment, set()).add(trace.timestamp_ms)
        rows.append(
            (
                "a-" + uuid.uuid4().hex, trace.trace_id, item.name, "expectation",
                json.dumps(item.value), None, now, now, experiment, trace.timestamp_ms,
                *assessment_aggregate(item.value), "HUMAN", item.source_id, None, None, None,
                old, True, json.dumps(item.metadata),
            )
        )  # fmt: skip
    overridden = [(trace.trace_id, old) for trace, _, old in plan if old is not None]
    table = SqlAssessments.__table__
    with store.ManagedSessionMaker(read_only=False) as session:
        enqueue_rollup_rebuild_partitions(
            session,
            [
                (RollupFamily.ASSESSMENT, experiment, sorted(stamps))
                for experiment, stamps in sorted(partitions.items())
            ],
        )
        connection = session.connection()
        for chunk in _chunks(overridden):
            connection.execute(
                update(table)
                .where(table.c.assessment_id.in_([old for _, old in chunk]))
                .values(valid=False)
            )
        _execute_many(connection, table, ASSESSMENT_COLUMNS, rows)


def _client_write(client: Any, plan: list[tuple[CaseTrace, ReviewExpectation, str | None]]) -> None:
    from mlflow.entities import AssessmentSource, AssessmentSourceType, Expectation

    for trace, item, old in plan:
        expectation = Expectation(
            name=item.name,
            value=item.value,
            source=AssessmentSource(AssessmentSourceType.HUMAN, item.source_id),
            metadata=item.metadata,
        )
        expectation.overrides = old
        # MlflowClient has no assessment call of its own; its tracing client does.
        client._tracing_client.log_assessment(trace.trace_id, expectation)


__all__ = [
    "ABSENT",
    "FINAL_SOURCE",
    "REVIEW_KEY",
    "CaseTrace",
    "ExpectationsLogged",
    "ReviewExpectation",
    "log_review_expectations",
    "review_expectations",
]
