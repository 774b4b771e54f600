"""Loading a registered ground-truth dataset version: resolve ``name`` and ``version``
(or ``"latest"``) through the approval runs, download the artifacts and check them
(:mod:`.dataset_content`) before anything is used."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.records import ApprovedGroundTruth
from docevals_mlflow.tracking.approval_runs import (
    NAME_TAG,
    approval_runs,
    by_version,
    missing_store,
    refusals,
    single_run,
    tracking_client,
    version_info,
)
from docevals_mlflow.tracking.approved_cases import public_key_of
from docevals_mlflow.tracking.dataset_content import (
    DatasetIntegrityError,
    SignatureState,
    check_dataset_name,
    read_verified,
)
from docevals_mlflow.tracking.dataset_models import (
    DatasetNotFoundError,
    GroundTruthDataset,
    VersionSpec,
    parse_dataset_spec,
    some_of,
    version_number,
)
from docevals_mlflow.tracking.runs import resolve_tracking_uri
from docevals_mlflow.tracking.uris import public_uri

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.keys import PublicKey, PublicKeyLike


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
    name, wanted = _requested(name, version)
    key = public_key_of(public_key)
    uri = resolve_tracking_uri(tracking_uri)
    absent = missing_store(uri)
    if absent is not None:
        raise DatasetNotFoundError(
            f"no tracking store: {absent} does not exist",
            expected="--tracking-uri or MLFLOW_TRACKING_URI naming the store the dataset "
            "was registered in",
        )
    client, uri = tracking_client(tracking_uri)
    with refusals(uri):
        number, run = _resolve(client, name, wanted, uri)
    info = version_info(run, uri)
    cases, description, signatures = _download_verified(
        client, run, name=name, version=number, digest=info.digest, public_key=key
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


def _requested(name: str, version: VersionSpec | str) -> tuple[str, VersionSpec]:
    """The dataset name and version asked for, from ``NAME@VERSION`` or the two arguments."""
    if "@" in name:
        if version != "latest":
            raise InputError(
                f"dataset {name!r} names a version and version={version!r} is given too",
                expected="NAME@VERSION or a separate version, not both",
            )
        return parse_dataset_spec(name)
    check_dataset_name(name)
    return name, "latest" if version == "latest" else version_number(version, version)


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


def _download_verified(
    client: Any,
    run: Any,
    *,
    name: str,
    version: int,
    digest: str,
    public_key: PublicKey | None,
) -> tuple[list[ApprovedGroundTruth], str, SignatureState]:
    """The approval run's cases, description and signature state, checked against its
    digests after download."""
    from mlflow.exceptions import MlflowException

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
        return read_verified(
            folder,
            name=name,
            version=version,
            digest=digest,
            public_key=public_key,
            where=f"runs:/{run.info.run_id}",
        )
