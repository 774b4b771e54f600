"""Logging a run bundle to MLflow: the only place that talks to a tracking store."""

from __future__ import annotations

import os
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.tracking.bundle import BundleWriter, RunBundle, keep_bundle, read_bundle
from docevals_mlflow.tracking.project_runs import (
    active_project_run_id,
    link_to_project,
    project_target,
)
from docevals_mlflow.tracking.uris import (
    experiment_artifact_location,
    public_uri,
    scrub_credentials,
)

DEFAULT_EXPERIMENT = "docevals"
_BATCH_PARAMS = 100
_BATCH_METRICS = 1000


class TrackingError(DocEvalsError, RuntimeError):
    """MLflow refused what was asked of it (for example a run whose params differ)."""


class TrackingUnavailableError(DocEvalsError, ConnectionError):
    """The tracking server could not be reached; nothing was logged."""


def resolve_tracking_uri(tracking_uri: str | None = None) -> str:
    """``tracking_uri``, else ``MLFLOW_TRACKING_URI``, else ``sqlite:///<cwd>/mlflow.db``.

    The embedded default needs no server and works offline.
    """
    if tracking_uri:
        return tracking_uri
    from_environment = os.environ.get("MLFLOW_TRACKING_URI")
    if from_environment:
        return from_environment
    return "sqlite:///" + (Path.cwd() / "mlflow.db").as_posix()


def ui_command(tracking_uri: str) -> str:
    """How to look at the runs of ``tracking_uri``."""
    if tracking_uri.startswith(("http://", "https://")):
        return f"open {tracking_uri}"
    return f"mlflow ui --backend-store-uri {tracking_uri}"


def probe(tracking_uri: str, *, timeout: float = 5.0) -> None:
    """Fail fast (no minutes of client retries) when an HTTP tracking server is down."""
    if not tracking_uri.startswith(("http://", "https://")):
        return
    url = tracking_uri.rstrip("/") + "/health"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            if response.status >= 400:
                raise TrackingUnavailableError(
                    f"tracking server answered {response.status}",
                    source=public_uri(tracking_uri),
                )
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TrackingUnavailableError(
            f"tracking server unreachable ({scrub_credentials(str(reason), tracking_uri)})",
            source=public_uri(tracking_uri),
        ) from None


@dataclass(frozen=True)
class LoggedRun:
    """Where a run went."""

    run_id: str
    experiment_id: str
    experiment_name: str
    tracking_uri: str

    def describe(self) -> str:
        """Two lines for the terminal: the run, and how to open it."""
        shown = public_uri(self.tracking_uri)
        return (
            f"MLflow run {self.run_id} in experiment {self.experiment_name!r} "
            f"({shown})\nopen it with: {ui_command(shown)}"
        )


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def log_bundle(
    directory: str | os.PathLike[str],
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    run_name: str | None = None,
    run_id: str | None = None,
) -> LoggedRun:
    """Log a bundle as one MLflow run: batched params/metrics/tags, one artifact upload,
    and the dataset inputs.

    With ``run_id`` the existing run is continued; if it already holds a param with a
    different value, nothing is logged and :class:`TrackingError` names the params.
    Without it, under ``mlflow run`` (``MLFLOW_RUN_ID`` set for this store) the
    project run is logged into, or gets the run as a child
    (:mod:`~docevals_mlflow.tracking.project_runs`); ``experiment`` is then the
    project run's.

    Raises:
        TrackingUnavailableError: an HTTP tracking server cannot be reached.
    """
    bundle, artifacts = read_bundle(directory)
    uri = resolve_tracking_uri(tracking_uri)
    probe(uri)
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    name = experiment or DEFAULT_EXPERIMENT
    project_run_id = active_project_run_id(uri)
    try:
        if run_id is not None:
            run = client.get_run(run_id)
            _check_params(run.data.params, bundle)
            experiment_id = run.info.experiment_id
            name = client.get_experiment(experiment_id).name
        elif project_run_id is not None:
            run = project_target(
                client,
                project_run_id,
                params=bundle.params,
                run_name=run_name or bundle.run_name,
            )
            run_id = run.info.run_id
            experiment_id = run.info.experiment_id
            name = client.get_experiment(experiment_id).name
        else:
            found = client.get_experiment_by_name(name)
            experiment_id = (
                found.experiment_id
                if found
                else client.create_experiment(
                    name, artifact_location=experiment_artifact_location(uri, name)
                )
            )
            run = client.create_run(experiment_id, run_name=run_name or bundle.run_name)
            run_id = run.info.run_id
        now = int(time.time() * 1000)
        params = [Param(key, value) for key, value in sorted(bundle.params.items())]
        metrics = [Metric(key, value, now, 0) for key, value in sorted(bundle.metrics.items())]
        tags = [RunTag(key, value) for key, value in sorted(bundle.tags.items())]
        # One client call per kind and per store batch limit, never one per metric.
        for part in _chunks(params, _BATCH_PARAMS):
            client.log_batch(run_id, params=part)
        for part in _chunks(tags, _BATCH_PARAMS):
            client.log_batch(run_id, tags=part)
        for part in _chunks(metrics, _BATCH_METRICS):
            client.log_batch(run_id, metrics=part)
        if artifacts.is_dir():
            client.log_artifacts(run_id, str(artifacts))
        _log_inputs(client, run_id, bundle, artifacts)
        # Operation prompts into the prompt registry; never fails the run.
        from docevals_mlflow.tracking.prompts import register_bundle_prompts

        register_bundle_prompts(client, run_id, experiment_id, bundle, artifacts)
        if project_run_id is not None:
            link_to_project(client, project_run_id, run_id)
        # `mlflow run` ends its own run, FINISHED or FAILED by the command's exit code.
        if run_id != project_run_id:
            client.set_terminated(run_id)
    except MlflowException as exc:
        raise TrackingError(
            f"MLflow refused the run: {scrub_credentials(exc.message, uri)}",
            source=public_uri(uri),
        ) from None
    return LoggedRun(run_id, experiment_id, name, uri)


def _check_params(existing: dict[str, str], bundle: RunBundle) -> None:
    differing = sorted(
        key for key, value in bundle.params.items() if key in existing and existing[key] != value
    )
    if differing:
        raise TrackingError(
            "the run already has different values for params "
            + ", ".join(differing)
            + "; nothing was logged",
            expected="a new run, or the same evaluation",
        )


def _log_inputs(client: Any, run_id: str, bundle: RunBundle, artifacts: Path) -> None:
    if not bundle.inputs:
        return
    import json

    import pandas as pd
    from mlflow.entities import Dataset, DatasetInput, InputTag

    entries = []
    for dataset in bundle.inputs:
        frame = pd.read_parquet(artifacts / dataset.records)
        # The entity is built directly: resolving a source from a plain name makes
        # MLflow guess (and warn) about which kind of source it is.
        entity = Dataset(
            name=dataset.name,
            digest=dataset.digest,
            source_type="local",
            source=json.dumps({"uri": dataset.source}),
            schema=json.dumps({"columns": [str(column) for column in frame.columns]}),
            profile=json.dumps({"num_rows": len(frame)}),
        )
        tags = [InputTag(key="mlflow.data.context", value=dataset.context)]
        tags += [InputTag(key=key, value=value) for key, value in dataset.tags.items()]
        entries.append(DatasetInput(dataset=entity, tags=tags))
    client.log_inputs(run_id, datasets=entries)


def log_writer(
    writer: BundleWriter,
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    keep_bundle_at: str | os.PathLike[str] | None = None,
) -> LoggedRun:
    """Write ``writer``'s bundle to a temporary folder and log it as a new run.

    If logging fails and ``keep_bundle_at`` is given, the bundle is moved there first
    (for ``docevals log``), then the error is raised.
    """
    with tempfile.TemporaryDirectory(prefix="docevals-run-") as temporary:
        folder = writer.write(Path(temporary) / "bundle")
        try:
            return log_bundle(folder, tracking_uri=tracking_uri, experiment=experiment)
        except Exception:
            if keep_bundle_at is not None:
                keep_bundle(folder, Path(keep_bundle_at))
            raise


def require_bundle_dir(path: str | os.PathLike[str]) -> Path:
    """A folder that holds a bundle, or a clear error."""
    folder = Path(path)
    if not folder.is_dir():
        raise InputError("not a folder", source=str(folder), expected="a run bundle folder")
    return folder
