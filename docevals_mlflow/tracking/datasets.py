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
(:mod:`.dataset_content`) before anything is used.

Version numbers are claimed as :mod:`.approval_runs` describes (safe for one person
or one CI job registering a name at a time).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import ApprovalError, InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.records import ApprovalVerification, ApprovedGroundTruth
from docevals_mlflow.tracking.approval_runs import (
    APPROVERS_TAG,
    DEFAULT_DATASET_EXPERIMENT,
    DESCRIPTION_TAG,
    GENAI_TAG,
    GENAI_WARNING_TAG,
    KEY_IDS_TAG,
    KIND_TAG,
    NAME_TAG,
    SIGNATURES_TAG,
    abandon,
    approval_runs,
    bounded,
    by_version,
    claim_version,
    missing_store,
    refusals,
    signature_tag,
    single_run,
    split_list,
    timestamp,
    tracking_client,
    usable,
    version_of,
)
from docevals_mlflow.tracking.assembly import assemble_approval
from docevals_mlflow.tracking.dataset_content import (
    DatasetIntegrityError,
    SignatureState,
    check_dataset_name,
    dataset_digest,
    read_verified,
    signature_state,
    sorted_cases,
    verify_case,
)
from docevals_mlflow.tracking.dataset_models import (
    DatasetNotFoundError,
    DatasetVersion,
    GroundTruthDataset,
    VersionSpec,
    parse_dataset_spec,
    some_of,
    version_number,
)
from docevals_mlflow.tracking.options import RunOptions
from docevals_mlflow.tracking.runs import log_bundle, resolve_tracking_uri
from docevals_mlflow.tracking.uris import experiment_artifact_location, public_uri

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.signing import PublicKey, PublicKeyLike


# --- collecting approved cases ---------------------------------------------------


def _public_key(public_key: PublicKeyLike | None) -> PublicKey | None:
    # Read once, up front: a bad key fails before any work, and is not parsed again
    # for every case.
    from docevals_mlflow.groundtruth.signing import resolve_public_key

    return resolve_public_key(public_key)


def _approved_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(
            entry
            for entry in path.iterdir()
            if entry.suffix.lower() == ".json" and not entry.name.startswith(".")
        )
        if not files:
            raise InputError(
                "folder has no .json files", source=str(path), expected="approved files"
            )
        return files
    if not path.exists():
        raise InputFileNotFoundError("approved file not found", source=str(path))
    return [path]


def collect_approved(
    approved: Iterable[ApprovedGroundTruth | str | os.PathLike[str]]
    | ApprovedGroundTruth
    | str
    | os.PathLike[str],
    *,
    public_key: PublicKeyLike | None,
    require_signature: bool,
) -> tuple[list[ApprovedGroundTruth], SignatureState]:
    """Every approved case given (objects, files, folders of files), verified and
    sorted, and what the verification established."""
    from docevals_mlflow.groundtruth.approval import load_approved_ground_truth

    items = (
        [approved] if isinstance(approved, (str, os.PathLike, ApprovedGroundTruth)) else approved
    )
    found: list[tuple[ApprovedGroundTruth, str]] = []
    verifications: list[ApprovalVerification] = []
    for position, item in enumerate(items, start=1):
        if isinstance(item, ApprovedGroundTruth):
            verifications.append(
                verify_case(
                    item, public_key=public_key, require_signature=require_signature, source=None
                )
            )
            found.append((item, f"item {position}"))
        elif isinstance(item, (str, os.PathLike)):
            for file in _approved_files(Path(item)):
                try:
                    loaded = load_approved_ground_truth(
                        file, public_key, require_signature=require_signature
                    )
                except ApprovalError as exc:
                    raise DatasetIntegrityError(
                        exc.message,
                        source=exc.source or str(file),
                        record=exc.record,
                        path=exc.path,
                        reason=exc.reason,
                    ) from None
                assert loaded.verification is not None
                verifications.append(loaded.verification)
                found.append((loaded, str(file)))
        else:
            raise InputError(
                f"cannot register a {type(item).__name__}",
                expected="ApprovedGroundTruth objects or paths to approved files or folders",
            )
    cases = sorted_cases(found)
    if not cases:
        raise InputError("nothing to register", expected="at least one approved case")
    return cases, signature_state(verifications)


# --- approval runs ----------------------------------------------------------------


def _version_info(run: Any, uri: str, **extra: Any) -> DatasetVersion:
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
    return [_version_info(run, uri) for run in runs]


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
        approved, public_key=_public_key(public_key), require_signature=require_signature
    )
    digest = dataset_digest(cases)
    client, uri = tracking_client(tracking_uri)
    with refusals(uri):
        return _register(
            client,
            uri,
            name=name,
            cases=cases,
            digest=digest,
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
    digest: str,
    signatures: SignatureState,
    experiment: str | None,
    description: str,
    force: bool,
    genai_dataset: bool,
) -> DatasetVersion:
    runs = approval_runs(client, name)
    versions = by_version(runs)
    if versions and not force:
        latest = single_run(name, max(versions), versions[max(versions)])
        if latest.data.params.get("dataset.digest") == digest:
            return _version_info(latest, uri, already_registered=True)
    experiment_name = experiment or DEFAULT_DATASET_EXPERIMENT
    found = client.get_experiment_by_name(experiment_name)
    experiment_id = (
        found.experiment_id
        if found
        else client.create_experiment(
            experiment_name, artifact_location=experiment_artifact_location(uri, experiment_name)
        )
    )
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
        assembled = assemble_approval(
            name=name,
            version=version,
            digest=digest,
            run_id=run_id,
            description=description,
            signatures=signatures,
            cases=cases,
            options=RunOptions(tracking_uri=uri, experiment=experiment_name),
        )
        # Into the run made above, whose version number is claimed already.
        with tempfile.TemporaryDirectory(prefix="docevals-dataset-") as temporary:
            folder = assembled.writer.write(Path(temporary) / "bundle")
            log_bundle(folder, tracking_uri=uri, run_id=run_id)
    except BaseException:
        abandon(client, run_id)
        raise
    if genai_dataset:
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
    return _version_info(client.get_run(run_id), uri)


# --- loading ------------------------------------------------------------------------


def _resolve(client: Any, name: str, version: VersionSpec, uri: str) -> tuple[int, Any]:
    runs = approval_runs(client, name)
    versions = by_version(runs)
    if not versions:
        known = sorted({run.data.tags.get(NAME_TAG, "") for run in approval_runs(client)} - {""})
        raise DatasetNotFoundError(
            f"no ground-truth dataset named {name!r}",
            source=public_uri(uri),
            expected="one of " + some_of(known) if known else "a registered dataset name",
        )
    wanted = max(versions) if version == "latest" else version
    if wanted not in versions:
        raise DatasetNotFoundError(
            f"dataset {name!r} has no version {wanted}",
            source=public_uri(uri),
            expected="one of " + ", ".join(str(number) for number in sorted(versions)),
        )
    return wanted, single_run(name, wanted, versions[wanted])


def load_ground_truth(
    name: str,
    version: VersionSpec | str = "latest",
    *,
    tracking_uri: str | None = None,
    public_key: PublicKeyLike | None = None,
) -> GroundTruthDataset:
    """Load a registered dataset version, checked against its digests.

    ``name`` may also be a ``NAME@VERSION`` spec (then ``version`` must be left at
    ``"latest"``). With a ``public_key`` (or ``DOCEVALS_PUBLIC_KEY``) every approval
    record must be signed by it; otherwise signed records are checked against their
    embedded keys (see :attr:`GroundTruthDataset.signatures`).

    Raises:
        DatasetNotFoundError: no such dataset or version (the message lists what exists).
        DatasetIntegrityError: an artifact was changed after registration, or a
            signature does not verify.
    """
    if "@" in name:
        if version != "latest":
            raise InputError(
                f"dataset {name!r} names a version and version={version!r} is given too",
                expected="NAME@VERSION or a separate version, not both",
            )
        name, wanted = parse_dataset_spec(name)
    else:
        check_dataset_name(name)
        wanted = "latest" if version == "latest" else version_number(version, version)
    key = _public_key(public_key)
    uri = resolve_tracking_uri(tracking_uri)
    absent = missing_store(uri)
    if absent is not None:
        raise DatasetNotFoundError(
            f"no tracking store: {absent} does not exist",
            expected="--tracking-uri or MLFLOW_TRACKING_URI naming the store the dataset "
            "was registered in",
        )
    client, uri = tracking_client(tracking_uri)
    from mlflow.exceptions import MlflowException

    with refusals(uri):
        number, run = _resolve(client, name, wanted, uri)
    info = _version_info(run, uri)
    with tempfile.TemporaryDirectory(prefix="docevals-dataset-") as temporary:
        folder = Path(temporary)
        try:
            for part in ("ground_truth", "approvals"):
                client.download_artifacts(run.info.run_id, part, str(folder))
        except (MlflowException, OSError) as exc:
            reason = exc.message if isinstance(exc, MlflowException) else str(exc)
            raise DatasetIntegrityError(
                f"the approval run's artifacts cannot be read ({reason})",
                source=f"runs:/{run.info.run_id}",
                reason="record",
            ) from None
        cases, description, signatures = read_verified(
            folder,
            name=name,
            version=number,
            digest=info.digest,
            public_key=key,
            where=f"runs:/{run.info.run_id}",
        )
    return GroundTruthDataset(
        name=name,
        version=number,
        digest=info.digest,
        run_id=info.run_id,
        experiment_id=info.experiment_id,
        created_at=info.created_at,
        approvers=info.approvers,
        description=description,
        signatures=signatures,
        cases={approved.case_id: approved for approved in cases},
    )


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
