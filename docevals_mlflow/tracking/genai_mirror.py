"""The MLflow GenAI evaluation dataset that mirrors a registered ground-truth dataset.

The approval runs are the record (versions, digests, approvals). The GenAI dataset of
the same name exists so the dataset shows up where MLflow users look for datasets
(the experiment's *Datasets* tab) and can be passed to ``mlflow.genai.evaluate``:
one record per case, ``inputs={"case_id": ...}`` and the approved document as
``expectations`` (what
:class:`~docevals_mlflow.tracking.scorers.FieldComparisonScorer` compares by
default).

Open-source MLflow keeps no versions of these datasets, so the mirror always holds
the latest registered version, exactly: a record whose content changed is deleted and
written again, never merged (MLflow merges expectations key by key, which would keep
fields a later version removed); records of cases a version dropped are deleted;
unchanged records stay as they are. The dataset's tags say which version and digest
it holds; each record's tags carry its content digest and approver.

MLflow allows several GenAI datasets with one name. The mirror is found by name and
the ``docevals.managed`` tag; a dataset of that name that docevals did not create is
never touched (the registration records a warning instead).

Everything here needs a SQL-backed tracking store; any failure is returned as a
warning, never raised: the approval run is the registration, the mirror a view of it.
"""

from __future__ import annotations

from typing import Any

from docevals_mlflow.groundtruth.documents import rows_to_document
from docevals_mlflow.groundtruth.records import ApprovedGroundTruth

MANAGED_TAG = "docevals.managed"
CONTENT_TAG = "docevals.content_sha256"
APPROVER_TAG = "docevals.approved_by"


def expectations(approved: ApprovedGroundTruth) -> dict[str, Any]:
    """A case's ``expectations``: the approved document, or ``{"document": value}``
    when the document is not an object (MLflow expectations are named)."""
    document = rows_to_document(approved.rows, source=approved.case_id)
    if isinstance(document, dict) and document:
        return document
    return {"document": document}


def _record(approved: ApprovedGroundTruth) -> dict[str, Any]:
    record = approved.record
    return {
        "inputs": {"case_id": approved.case_id},
        "expectations": expectations(approved),
        "tags": {CONTENT_TAG: record.content_sha256, APPROVER_TAG: record.approved_by},
        "source": {
            "source_type": "HUMAN",
            "source_data": {"approved_by": record.approved_by, "approved_at": record.approved_at},
        },
    }


def _filter(name: str) -> str:
    # Dataset names are checked to hold no quotes (see check_dataset_name).
    return f"name = '{name}'"


def mirror_dataset(
    client: Any,
    *,
    name: str,
    version: int,
    digest: str,
    run_id: str,
    experiment_id: str,
    cases: list[ApprovedGroundTruth],
) -> tuple[str | None, str | None]:
    """Create or update the GenAI dataset ``name``; returns ``(dataset_id, warning)``."""
    try:
        found = managed_dataset(client, name)
        if isinstance(found, str):
            return None, found
        tags = {
            MANAGED_TAG: "true",
            "docevals.dataset.name": name,
            "docevals.dataset.version": str(version),
            "docevals.dataset.digest": digest,
            "docevals.dataset.run_id": run_id,
        }
        if found is None:
            dataset = client.create_dataset(name=name, experiment_id=[experiment_id], tags=tags)
        else:
            dataset = found
            client.set_dataset_tags(dataset.dataset_id, tags)
            # Not dataset.experiment_ids: it loads through the global tracking URI.
            if experiment_id not in _store(client).get_dataset_experiment_ids(dataset.dataset_id):
                client.add_dataset_to_experiments(dataset.dataset_id, [experiment_id])
        _sync_records(client, dataset.dataset_id, cases)
        return dataset.dataset_id, None
    except Exception as exc:  # the mirror must never cost the registration
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, f"GenAI evaluation dataset not updated ({type(exc).__name__}: {reason})"


def managed_dataset(client: Any, name: str) -> Any:
    """The docevals-managed dataset named ``name``, ``None``, or a warning text."""
    matches = [
        dataset
        for dataset in client.search_datasets(filter_string=_filter(name), max_results=50)
        if dataset.name == name
    ]
    ours = [dataset for dataset in matches if (dataset.tags or {}).get(MANAGED_TAG) == "true"]
    if ours:
        return min(ours, key=lambda dataset: (dataset.created_time or 0, dataset.dataset_id))
    if matches:
        return (
            f"a GenAI evaluation dataset named {name!r} exists that docevals did not "
            "create; it was left untouched"
        )
    return None


def _store(client: Any) -> Any:
    # EvaluationDataset.merge_records writes through the *global* tracking URI;
    # the client's own store honours the URI this registration was given.
    return client._tracking_client.store


def _sync_records(client: Any, dataset_id: str, cases: list[ApprovedGroundTruth]) -> None:
    """Make the dataset's records exactly ``cases``: a record whose case, content and
    approver are unchanged (and that nobody edited since) stays; every other record
    is deleted and written again, so nothing is merged into an old one."""
    store = _store(client)
    existing, _ = store._load_dataset_records(dataset_id, max_results=None)
    wanted = {approved.case_id: approved for approved in cases}
    kept: set[str] = set()
    stale: list[str] = []
    for record in existing:
        case_id = (record.inputs or {}).get("case_id")
        approved = wanted.get(case_id) if isinstance(case_id, str) else None
        tags = record.tags or {}
        if (
            approved is not None
            and case_id not in kept
            and tags.get(CONTENT_TAG) == approved.record.content_sha256
            and tags.get(APPROVER_TAG) == approved.record.approved_by
            and record.last_update_time == record.created_time
        ):
            kept.add(approved.case_id)
        else:
            stale.append(record.dataset_record_id)
    if stale:
        store.delete_dataset_records(dataset_id, stale)
    # One store call for all; MLflow's SQL store still queries once per record.
    fresh = [_record(approved) for case_id, approved in wanted.items() if case_id not in kept]
    if fresh:
        store.upsert_dataset_records(dataset_id=dataset_id, records=fresh)
