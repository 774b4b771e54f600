"""Registered ground-truth datasets: approved cases as versioned MLflow approval runs.

Open-source MLflow has no immutable dataset versions, so a registration is an
**approval run** (``docevals.kind=approval``) holding the approved cases, their
approval records and a ``ground_truth`` dataset input with the content digest,
tagged ``docevals.dataset.name`` and ``docevals.dataset.version``. Versions count 1,
2, 3 ... per name, across every experiment of the tracking store, and are never
reused (a deleted run keeps its number). An MLflow GenAI evaluation dataset of the
same name mirrors the latest version for the UI (:mod:`.genai_mirror`).

:func:`load_ground_truth` resolves ``name`` and ``version`` (or ``"latest"``)
through those runs, downloads the artifacts and checks them
(:mod:`.dataset_content`) before anything is used (:mod:`.dataset_loading`);
:mod:`.approved_cases` gathers and verifies what is registered.

Version numbers are claimed as :mod:`.approval_runs` describes (safe for one person
or one CI job registering a name at a time).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.groundtruth.records import ApprovedGroundTruth
from docevals_mlflow.tracking.approval_runs import (
    DEFAULT_DATASET_EXPERIMENT,
    GENAI_TAG,
    GENAI_WARNING_TAG,
    KIND_TAG,
    NAME_TAG,
    ApprovalContent,
    abandon,
    approval_runs,
    bounded,
    by_version,
    claim_version,
    missing_store,
    refusals,
    single_run,
    tracking_client,
    usable,
    version_info,
    version_of,
)
from docevals_mlflow.tracking.approved_cases import collect_approved, public_key_of
from docevals_mlflow.tracking.assembly import assemble_approval
from docevals_mlflow.tracking.dataset_content import (
    DatasetIntegrityError,
    SignatureState,
    check_dataset_name,
    dataset_digest,
)
from docevals_mlflow.tracking.dataset_loading import load_ground_truth
from docevals_mlflow.tracking.dataset_models import (
    DatasetNotFoundError,
    DatasetVersion,
    GroundTruthDataset,
    parse_dataset_spec,
)
from docevals_mlflow.tracking.options import RunOptions
from docevals_mlflow.tracking.runs import log_bundle, resolve_tracking_uri
from docevals_mlflow.tracking.uris import experiment_artifact_location

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.keys import PublicKeyLike


def list_ground_truth_datasets(
    name: str | None = None, *, tracking_uri: str | None = None
) -> list[DatasetVersion]:
    """Every registered version (of ``name``), by name then version."""
    if name is not None:
        check_dataset_name(name)
    if missing_store(resolve_tracking_uri(tracking_uri)) is not None:
        return []
    client, uri = tracking_client(tracking_uri)
    with refusals(uri):
        runs = [run for run in approval_runs(client, name) if usable(run)]
    runs.sort(key=lambda run: (run.data.tags[NAME_TAG], version_of(run), run.info.start_time))
    return [version_info(run, uri) for run in runs]


def register_ground_truth_dataset(
    name: str,
    approved: Iterable[ApprovedGroundTruth | str | os.PathLike[str]]
    | ApprovedGroundTruth
    | str
    | os.PathLike[str],
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    public_key: PublicKeyLike | None = None,
    require_signature: bool = True,
    description: str = "",
    force: bool = False,
    genai_dataset: bool = True,
) -> DatasetVersion:
    """Register approved ground truth as the next version of dataset ``name``.

    ``approved`` holds :class:`~docevals_mlflow.groundtruth.records.ApprovedGroundTruth`
    objects and/or paths of approved files or folders of them (every ``.json`` file in
    the folder), each case once. Every case is verified
    (:func:`~docevals_mlflow.groundtruth.approval.verify_approval`): its rows must
    match the approval record's digest and its signature must verify, against
    ``public_key`` (or ``DOCEVALS_PUBLIC_KEY``) when given, which must then have signed
    every record, else against the key embedded in the record. Unsigned records are
    refused unless ``require_signature=False``. What was established is the result's
    :attr:`~DatasetVersion.signatures`.

    When the content equals the latest version's (same digest) that version is
    returned with ``already_registered=True`` and nothing is logged, unless ``force``.

    The approval run goes to ``experiment`` (default ``docevals-ground-truth``); see
    the module docstring for what it holds. The GenAI evaluation dataset mirror is
    best effort: when it cannot be written (a non-SQL store, an old server) the run
    gets a ``docevals.warning.genai_dataset`` tag and the result a warning.
    ``genai_dataset=False`` leaves it alone (MLflow writes its records one query at a
    time, which is most of the cost of registering thousands of cases).

    Raises:
        InputError: a bad name, no cases, a case given twice, an unreadable file.
        DatasetIntegrityError: a case does not match its approval record or signature.
        TrackingUnavailableError: the tracking server cannot be reached.
    """
    check_dataset_name(name)
    cases, signatures = collect_approved(
        approved, public_key=public_key_of(public_key), require_signature=require_signature
    )
    client, uri = tracking_client(tracking_uri)
    with refusals(uri):
        return _register(
            client,
            uri,
            name=name,
            cases=cases,
            signatures=signatures,
            experiment=experiment,
            description=description,
            force=force,
            genai_dataset=genai_dataset,
        )


def _register(
    client: Any,
    uri: str,
    *,
    name: str,
    cases: list[ApprovedGroundTruth],
    signatures: SignatureState,
    experiment: str | None,
    description: str,
    force: bool,
    genai_dataset: bool,
) -> DatasetVersion:
    digest = dataset_digest(cases)
    runs = approval_runs(client, name)
    versions = by_version(runs)
    if versions and not force:
        latest = single_run(name, max(versions), versions[max(versions)])
        if latest.data.params.get("dataset.digest") == digest:
            return version_info(latest, uri, already_registered=True)
    experiment_name = experiment or DEFAULT_DATASET_EXPERIMENT
    experiment_id = _experiment_id(client, uri, experiment_name)
    candidate = max((version_of(run) or 0 for run in runs), default=0) + 1
    run = client.create_run(
        experiment_id,
        run_name=f"{name} v{candidate}",
        tags={KIND_TAG: "approval", NAME_TAG: name},
    )
    run_id = run.info.run_id
    try:
        version = claim_version(client, name, run, candidate)
        if version != candidate:
            client.set_tag(run_id, "mlflow.runName", f"{name} v{version}")
        content = ApprovalContent(
            name=name,
            version=version,
            digest=digest,
            run_id=run_id,
            description=description,
            signatures=signatures,
            cases=cases,
        )
        assembled = assemble_approval(
            content, RunOptions(tracking_uri=uri, experiment=experiment_name)
        )
        # Into the run made above, whose version number is claimed already.
        with tempfile.TemporaryDirectory(prefix="docevals-dataset-") as temporary:
            folder = assembled.writer.write(Path(temporary) / "bundle")
            log_bundle(folder, tracking_uri=uri, run_id=run_id)
    except BaseException:
        abandon(client, run_id)
        raise
    if genai_dataset:
        _mirror(
            client, run_id, experiment_id, name=name, version=version, digest=digest, cases=cases
        )
    return version_info(client.get_run(run_id), uri)


def _experiment_id(client: Any, uri: str, experiment_name: str) -> Any:
    found = client.get_experiment_by_name(experiment_name)
    if found:
        return found.experiment_id
    return client.create_experiment(
        experiment_name, artifact_location=experiment_artifact_location(uri, experiment_name)
    )


def _mirror(
    client: Any,
    run_id: str,
    experiment_id: str,
    *,
    name: str,
    version: int,
    digest: str,
    cases: list[ApprovedGroundTruth],
) -> None:
    """Mirror the version into an MLflow GenAI evaluation dataset (best effort: a
    failure becomes a warning tag on the run)."""
    from docevals_mlflow.tracking.genai_mirror import mirror_dataset

    dataset_id, warning = mirror_dataset(
        client,
        name=name,
        version=version,
        digest=digest,
        run_id=run_id,
        experiment_id=experiment_id,
        cases=cases,
    )
    if dataset_id is not None:
        client.set_tag(run_id, GENAI_TAG, dataset_id)
    if warning is not None:
        client.set_tag(run_id, GENAI_WARNING_TAG, bounded(warning))


__all__ = [
    "DatasetIntegrityError",
    "DatasetNotFoundError",
    "DatasetVersion",
    "GroundTruthDataset",
    "collect_approved",
    "list_ground_truth_datasets",
    "load_ground_truth",
    "parse_dataset_spec",
    "register_ground_truth_dataset",
]
