"""Approval runs: the MLflow side of registered ground-truth datasets.

A registered version is an approval run (``docevals.kind=approval``) tagged
``docevals.dataset.name`` and ``docevals.dataset.version``. This module finds those
runs across every experiment of a store, claims version numbers, and builds the run
bundle; :mod:`~docevals_mlflow.tracking.datasets` holds the public API.

Concurrency: a version number is claimed by tagging the new run and then looking for
another run with the same number; of two, the one started later moves on to the next
number. Two registrations of one name that check at exactly the same moment can still
both keep a number; loading that version then fails and names both runs (delete one).
That is good enough for one person or a CI job registering; registrations of one name
from several machines at once should be serialised.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from docevals_mlflow._version import __version__
from docevals_mlflow.groundtruth.records import ApprovedGroundTruth
from docevals_mlflow.reports.markdown import table
from docevals_mlflow.tracking.bundle import BundleWriter, DatasetInput
from docevals_mlflow.tracking.dataset_content import (
    APPROVALS_PATH,
    APPROVED_PATH,
    RECORDS_PATH,
    SignatureState,
    approved_document,
    records_frame,
)
from docevals_mlflow.tracking.dataset_models import DatasetVersion
from docevals_mlflow.tracking.runs import TrackingError, probe, resolve_tracking_uri
from docevals_mlflow.tracking.store import open_client
from docevals_mlflow.tracking.uris import public_uri

DEFAULT_DATASET_EXPERIMENT = "docevals-ground-truth"
KIND_TAG = "docevals.kind"
NAME_TAG = "docevals.dataset.name"
VERSION_TAG = "docevals.dataset.version"
APPROVERS_TAG = "docevals.dataset.approvers"
KEY_IDS_TAG = "docevals.dataset.key_ids"
SIGNATURES_TAG = "docevals.dataset.signatures"
DESCRIPTION_TAG = "docevals.dataset.description"
GENAI_TAG = "docevals.dataset.genai_dataset_id"
GENAI_WARNING_TAG = "docevals.warning.genai_dataset"
CHAIN_PEOPLE_TAG = "docevals.dataset.chain.people"
CHAIN_KEYS_TAG = "docevals.dataset.chain.key_ids"
CHAIN_POLICIES_TAG = "docevals.dataset.chain.policies"
POLICY_TAG = "docevals.dataset.policy"
"""Fingerprint of the policy ``register-dataset --policy`` verified every chain against."""
_CHAIN_ROLES = ("preparer", "reviewer", "adjudicator", "approver")
_MAX_TAG = 5000
_CLAIM_ATTEMPTS = 20
_NOTE_CASES = 50


@contextlib.contextmanager
def refusals(uri: str) -> Iterator[None]:
    """MLflow's own errors as :class:`TrackingError`: one line, naming the store."""
    from mlflow.exceptions import MlflowException

    try:
        yield
    except MlflowException as exc:
        raise TrackingError(f"MLflow refused: {exc.message}", source=public_uri(uri)) from None


def missing_store(uri: str) -> Path | None:
    """The SQLite file ``uri`` names, when it does not exist (reading must not create
    a store, and run migrations, where a mistyped path or working directory points)."""
    if not uri.startswith("sqlite:///"):
        return None
    path = Path(unquote(uri[len("sqlite:///") :]).split("?", 1)[0])
    return None if path.name == ":memory:" or path.exists() else path


def tracking_client(tracking_uri: str | None) -> tuple[Any, str]:
    """A client for ``tracking_uri`` (resolved as every command does), and the URI."""
    uri = resolve_tracking_uri(tracking_uri)
    probe(uri)
    # A new SQLite store is created under its lock; a half-migrated one is refused.
    return open_client(uri), uri


def approval_runs(client: Any, name: str | None = None) -> list[Any]:
    """Every approval run (of ``name``), deleted ones included, in every experiment."""
    from mlflow.entities import ViewType

    ids: list[str] = []
    token = None
    while True:
        page = client.search_experiments(view_type=ViewType.ALL, page_token=token)
        ids += [experiment.experiment_id for experiment in page]
        token = page.token
        if not token:
            break
    query = f"tags.`{KIND_TAG}` = 'approval'"
    if name is not None:
        query += f" AND tags.`{NAME_TAG}` = '{name}'"
    runs: list[Any] = []
    for start in range(0, len(ids), 100):
        token = None
        while True:
            page = client.search_runs(
                ids[start : start + 100],
                query,
                run_view_type=ViewType.ALL,
                max_results=1000,
                page_token=token,
            )
            runs += list(page)
            token = page.token
            if not token:
                break
    return runs


def version_of(run: Any) -> int | None:
    text = run.data.tags.get(VERSION_TAG, "")
    return int(text) if text.isdigit() else None


def usable(run: Any) -> bool:
    return (
        run.info.lifecycle_stage == "active"
        and run.info.status == "FINISHED"
        and version_of(run) is not None
    )


def timestamp(milliseconds: int | None) -> str:
    moment = _dt.datetime.fromtimestamp((milliseconds or 0) / 1000, tz=_dt.UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def split_list(text: str | None) -> list[str]:
    return [item for item in (text or "").split(", ") if item]


def signature_tag(value: str | None) -> SignatureState:
    if value == "trusted":
        return "trusted"
    return "unpinned" if value == "unpinned" else "unsigned"


def by_version(runs: list[Any]) -> dict[int, list[Any]]:
    by_version: dict[int, list[Any]] = {}
    for run in runs:
        if usable(run):
            by_version.setdefault(version_of(run) or 0, []).append(run)
    return by_version


def single_run(name: str, version: int, runs: list[Any]) -> Any:
    if len(runs) > 1:
        ids = ", ".join(run.info.run_id for run in runs)
        raise TrackingError(
            f"version {version} of dataset {name!r} is held by several approval runs ({ids}); "
            "two registrations raced: delete all but one of them",
        )
    return runs[0]


def claim_version(client: Any, name: str, run: Any, candidate: int) -> int:
    run_id = run.info.run_id
    me = (run.info.start_time, run_id)
    version = candidate
    for _ in range(_CLAIM_ATTEMPTS):
        client.set_tag(run_id, VERSION_TAG, str(version))
        runs = approval_runs(client, name)
        earlier = [
            other
            for other in runs
            if other.info.run_id != run_id
            and version_of(other) == version
            and (other.info.start_time, other.info.run_id) < me
        ]
        if not earlier:
            return version
        version = max(version_of(other) or 0 for other in runs) + 1
    raise TrackingError(
        f"could not claim a version of dataset {name!r} after {_CLAIM_ATTEMPTS} attempts",
        expected="registrations of one name one at a time",
    )


def bounded(text: str) -> str:
    return text if len(text) <= _MAX_TAG else text[: _MAX_TAG - 1] + "…"


def approval_note(
    name: str, version: int, digest: str, description: str, cases: list[ApprovedGroundTruth]
) -> str:
    approvers = sorted({approved.record.approved_by for approved in cases})
    rows = sum(len(approved.rows) for approved in cases)
    lines = [
        f"**docevals ground truth** `{name}` version **{version}**: {len(cases):,} cases, "
        f"{rows:,} approved rows, digest `{digest}`; approved by {', '.join(approvers)}",
        "",
    ]
    if description:
        lines += [description, ""]
    lines += table(
        ["case", "rows", "approved by", "approved at", "signed"],
        (
            (
                approved.case_id,
                len(approved.rows),
                approved.record.approved_by,
                approved.record.approved_at,
                "yes" if approved.record.signed else "no",
            )
            for approved in cases[:_NOTE_CASES]
        ),
    )
    if len(cases) > _NOTE_CASES:
        lines += ["", f"… and {len(cases) - _NOTE_CASES:,} more (see {RECORDS_PATH})"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ApprovalContent:
    """What the approval run of one dataset version records."""

    name: str
    version: int
    digest: str
    run_id: str
    """The run it is logged into (its records are addressed as ``runs:/<run_id>/...``)."""
    description: str
    signatures: SignatureState
    cases: list[ApprovedGroundTruth]


def approval_bundle(content: ApprovalContent) -> BundleWriter:
    """The bundle of an approval run: params, tags, note, records and dataset input."""
    name, version, digest = content.name, content.version, content.digest
    description, cases = content.description, content.cases
    writer = BundleWriter(kind="approval", run_name=f"{name} v{version}")
    rows = sum(len(approved.rows) for approved in cases)
    writer.param("docevals.version", __version__)
    writer.param("dataset.name", name)
    writer.param("dataset.version", str(version))
    writer.param("dataset.digest", digest)
    writer.param("dataset.cases", str(len(cases)))
    writer.param("dataset.records", str(rows))
    writer.tag(KIND_TAG, "approval")
    writer.tag(NAME_TAG, name)
    writer.tag(VERSION_TAG, str(version))
    writer.tag(APPROVERS_TAG, bounded(", ".join(sorted({a.record.approved_by for a in cases}))))
    key_ids = sorted({a.record.key_id for a in cases if a.record.key_id})
    if key_ids:
        writer.tag(KEY_IDS_TAG, bounded(", ".join(key_ids)))
    writer.tag(SIGNATURES_TAG, content.signatures)
    chain_tags(writer, cases)
    if description:
        writer.tag(DESCRIPTION_TAG, bounded(description))
    writer.tag("mlflow.note.content", approval_note(name, version, digest, description, cases))
    writer.json(
        APPROVED_PATH,
        approved_document(
            name=name, version=version, digest=digest, description=description, cases=cases
        ),
    )
    writer.json(APPROVALS_PATH, [approved.record.model_dump(mode="json") for approved in cases])
    writer.dataset(
        DatasetInput(
            name=name,
            digest=digest,
            source=f"runs:/{content.run_id}/{RECORDS_PATH}",
            records=RECORDS_PATH,
            tags={"docevals.dataset.version": str(version)},
        ),
        records_frame(cases),
    )
    return writer


def chain_tags(writer: BundleWriter, cases: list[ApprovedGroundTruth]) -> None:
    """The approval chains of ``cases`` as tags and params: who acted in which role,
    with which key fingerprint, under which policies (each tag within MLflow's limit;
    the whole chains are in the approval records artifact)."""
    chains = [approved.record.chain for approved in cases if approved.record.chain is not None]
    if not chains:
        return
    people: dict[str, set[str]] = {role: set() for role in _CHAIN_ROLES}
    keys: dict[str, set[str]] = {}
    for chain in chains:
        for act in chain.signatures:
            people[act.role].add(act.person)
            keys.setdefault(act.person, set()).add(act.key_id)
    writer.param("chain.cases", str(len(chains)))
    writer.param("chain.signatures", str(sum(len(chain.signatures) for chain in chains)))
    writer.tag(
        CHAIN_PEOPLE_TAG,
        bounded(
            "; ".join(
                f"{role}: {', '.join(sorted(people[role]))}"
                for role in _CHAIN_ROLES
                if people[role]
            )
        ),
    )
    writer.tag(
        CHAIN_KEYS_TAG,
        bounded(
            "; ".join(
                f"{person}={key_id}"
                for person, key_ids in sorted(keys.items())
                for key_id in sorted(key_ids)
            )
        ),
    )
    writer.tag(CHAIN_POLICIES_TAG, bounded(", ".join(sorted({c.policy_sha256 for c in chains}))))


def version_info(run: Any, uri: str, **extra: Any) -> DatasetVersion:
    """What an approval run says about the dataset version it registered."""
    params, tags = run.data.params, run.data.tags
    version = version_of(run)
    assert version is not None
    return DatasetVersion(
        name=tags[NAME_TAG],
        version=version,
        run_id=run.info.run_id,
        experiment_id=run.info.experiment_id,
        digest=params.get("dataset.digest", ""),
        cases=int(params.get("dataset.cases", 0)),
        records=int(params.get("dataset.records", 0)),
        approvers=split_list(tags.get(APPROVERS_TAG)),
        key_ids=split_list(tags.get(KEY_IDS_TAG)),
        signatures=signature_tag(tags.get(SIGNATURES_TAG)),
        created_at=timestamp(run.info.start_time),
        tracking_uri=public_uri(uri),
        description=tags.get(DESCRIPTION_TAG, ""),
        genai_dataset_id=tags.get(GENAI_TAG),
        warnings=[tags[GENAI_WARNING_TAG]] if GENAI_WARNING_TAG in tags else [],
        **extra,
    )


def record_approval_review(
    run_id: str,
    tracking_uri: str | None,
    *,
    policy_sha256: str | None = None,
    metrics: dict[str, float] | None = None,
) -> int:
    """Add to a registered version's approval run the policy its chains were verified
    against (:data:`POLICY_TAG`) and the reviewers' agreement metrics
    (:mod:`~docevals_mlflow.tracking.review_metrics`); returns how many metrics were
    logged (those already there with the same value are not logged again)."""
    from docevals_mlflow.tracking.review_metrics import log_agreement_metrics

    client, uri = tracking_client(tracking_uri)
    with refusals(uri):
        if policy_sha256 is not None:
            client.set_tag(run_id, POLICY_TAG, policy_sha256)
        return log_agreement_metrics(client, run_id, metrics or {}) if metrics else 0


def abandon(client: Any, run_id: str) -> None:
    """Free the version a failed registration claimed, and mark its run failed."""
    # Best effort: the error that stopped the registration is what the user must see.
    with contextlib.suppress(Exception):
        client.delete_tag(run_id, VERSION_TAG)
    with contextlib.suppress(Exception):
        client.set_terminated(run_id, "FAILED")
