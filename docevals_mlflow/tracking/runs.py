"""Logging a run bundle to MLflow: the only place that talks to a tracking store."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.tracking.bundle import (
    BundleWriter,
    LegalBundle,
    RunBundle,
    legal_bundle,
)
from docevals_mlflow.tracking.bundle_folders import keep_bundle, mark_logged, read_bundle

# Re-exported: callers have always imported the errors from here.
from docevals_mlflow.tracking.errors import TrackingError as TrackingError
from docevals_mlflow.tracking.errors import TrackingUnavailableError as TrackingUnavailableError
from docevals_mlflow.tracking.keys import (
    legal_experiment_name,
    legal_run_name,
)
from docevals_mlflow.tracking.layout_shared import headline_view_tags
from docevals_mlflow.tracking.project_runs import (
    active_project_run_id,
    link_to_project,
    project_target,
)
from docevals_mlflow.tracking.run_contents import fill_run
from docevals_mlflow.tracking.store import open_client
from docevals_mlflow.tracking.uris import (
    experiment_artifact_location,
    public_uri,
    scrub_credentials,
)

if TYPE_CHECKING:
    from docevals_mlflow.tracking.trace_records import TraceRecord

DEFAULT_EXPERIMENT = "docevals"
TRACES_TAG = "docevals.traces"
"""How many MLflow traces a run's documents or cases got."""
TRACES_WARNING_TAG = "docevals.warning.traces"
"""Why a run's traces were not (all) logged; the run itself is complete."""


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


def log_bundle(
    directory: str | os.PathLike[str],
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    run_name: str | None = None,
    run_id: str | None = None,
    traces: list[TraceRecord] | None = None,
) -> LoggedRun:
    """Log a bundle as one MLflow run: batched params/metrics/tags, one artifact upload,
    and the dataset inputs.

    With ``run_id`` the existing run is continued; if it already holds a param with a
    different value, nothing is logged and :class:`TrackingError` names the params.
    Without it, under ``mlflow run`` (``MLFLOW_RUN_ID`` set for this store) the
    project run is logged into, or gets the run as a child
    (:mod:`~docevals_mlflow.tracking.project_runs`); ``experiment`` is then the
    project run's.

    Keys, names and values are made legal for MLflow first (a bundle written by this
    version needs nothing). An SQLite store is created under a file lock and checked
    before use (:mod:`~docevals_mlflow.tracking.store`). If logging fails once the run
    exists, the run is never left ``RUNNING``: a run created here is marked ``FAILED``
    and deleted, a continued one (``run_id``) marked ``FAILED``. On success the bundle
    folder gets ``logged.json`` (so a later kept bundle may take its place).

    ``traces`` (else the bundle's ``traces.jsonl``) are then logged, linked to the
    run (:mod:`~docevals_mlflow.tracking.trace_store`).

    Raises:
        InputError: the bundle holds a symbolic link, FIFO or device, or is malformed.
        TrackingUnavailableError: an HTTP tracking server cannot be reached.
        TrackingError: MLflow refused the run, or the SQLite store is half-migrated.
    """
    original, artifacts = read_bundle(directory)
    legal = legal_bundle(original)
    bundle = legal.bundle
    uri = resolve_tracking_uri(tracking_uri)
    probe(uri)
    name = legal_experiment_name(experiment or DEFAULT_EXPERIMENT)
    project_run_id = active_project_run_id(uri)
    run_name = legal_run_name(run_name) or bundle.run_name
    continued = run_id is not None or project_run_id is not None
    direct = _log_direct(directory, uri, legal, artifacts, name, run_name, continued, traces)
    if direct is not None:
        return direct
    client = open_client(uri)
    run_id, experiment_id, name, created = _open_run(
        client, uri, bundle, run_id=run_id, project_run_id=project_run_id,
        experiment_name=name, run_name=run_name,
    )  # fmt: skip
    _fill_and_end(client, uri, run_id, experiment_id, project_run_id, created, legal, artifacts)
    _log_run_traces(client, run_id, experiment_id, traces, Path(directory))
    return _marked(Path(directory), LoggedRun(run_id, experiment_id, name, uri))


def _marked(folder: Path, logged: LoggedRun) -> LoggedRun:
    """``logged``, once the bundle folder says where it went (``logged.json``)."""
    mark_logged(
        folder,
        {
            "run_id": logged.run_id,
            "experiment_id": logged.experiment_id,
            "tracking_uri": public_uri(logged.tracking_uri),
        },
    )
    return logged


def _log_direct(
    directory: str | os.PathLike[str],
    uri: str,
    legal: LegalBundle,
    artifacts: Path,
    name: str,
    run_name: str | None,
    continued: bool,
    traces: list[TraceRecord] | None,
) -> LoggedRun | None:
    """The run written straight into a local SQLite store, when it qualifies
    (:mod:`~docevals_mlflow.tracking.direct_store`); ``None`` sends it through MLflow."""
    from docevals_mlflow.tracking.direct_store import direct_case, write_direct

    if traces is None:
        from docevals_mlflow.tracking.trace_records import read_traces

        traces = read_traces(Path(directory))
    path = direct_case(uri, legal, artifacts, run_name=run_name, continued=continued, traces=traces)
    if path is None or run_name is None:
        return None
    written = write_direct(
        path, uri, legal, artifacts, experiment_name=name, run_name=run_name, traces=traces
    )
    if written is None:
        return None
    return _marked(Path(directory), LoggedRun(written[0], written[1], name, uri))


def _open_run(
    client: Any,
    uri: str,
    bundle: RunBundle,
    *,
    run_id: str | None,
    project_run_id: str | None,
    experiment_name: str,
    run_name: str | None,
) -> tuple[str, str, str, bool]:
    """The run to log into (``run_id``, the ``mlflow run`` project's, or a new one):
    its id, experiment id and experiment name, and whether it was created here."""
    name = experiment_name
    created = False
    try:
        if run_id is not None:
            run = client.get_run(run_id)
            _check_params(run.data.params, bundle)
            experiment_id = run.info.experiment_id
            name = client.get_experiment(experiment_id).name
        elif project_run_id is not None:
            run = project_target(client, project_run_id, params=bundle.params, run_name=run_name)
            run_id = run.info.run_id
            created = run_id != project_run_id
            experiment_id = run.info.experiment_id
            name = client.get_experiment(experiment_id).name
        else:
            experiment_id = _experiment_id(client, name, uri)
            run = client.create_run(experiment_id, run_name=run_name)
            run_id = run.info.run_id
            created = True
    except Exception as exc:
        # Nothing was logged yet; a child run made for `mlflow run` is not left open.
        fate = _abandon(client, run_id, delete=True) if created and run_id else ""
        raise _refusal(exc, uri, fate) from None
    return run_id, experiment_id, name, created


def _fill_and_end(
    client: Any,
    uri: str,
    run_id: str,
    experiment_id: str,
    project_run_id: str | None,
    created: bool,
    legal: LegalBundle,
    artifacts: Path,
) -> None:
    try:
        fill_run(client, run_id, experiment_id, legal, artifacts)
        if project_run_id is not None:
            link_to_project(client, project_run_id, run_id)
        # `mlflow run` ends its own run, FINISHED or FAILED by the command's exit code.
        if run_id != project_run_id:
            client.set_terminated(run_id)
    except BaseException as exc:
        # Ctrl-C included: whatever stopped the logging, the run must not stay RUNNING.
        fate = _abandon(client, run_id, delete=created) if run_id != project_run_id else ""
        if isinstance(exc, Exception):
            raise _refusal(exc, uri, fate) from None
        raise


def _log_run_traces(
    client: Any, run_id: str, experiment_id: str, traces: list[TraceRecord] | None, folder: Path
) -> None:
    """Log the run's traces (else those ``folder`` keeps), linked to it; the run gets
    ``docevals.traces`` (how many). A failure never costs the run, which gets the tag
    ``docevals.warning.traces`` instead."""
    if traces is None:
        from docevals_mlflow.tracking.trace_records import read_traces

        traces = read_traces(folder)
    if not traces:
        return
    from docevals_mlflow.tracking.trace_store import log_traces

    try:
        count = log_traces(client, run_id, experiment_id, traces)
        client.set_tag(run_id, TRACES_TAG, str(count))
    except Exception as exc:  # the run is complete; its traces are a view of it
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        with contextlib.suppress(Exception):
            client.set_tag(
                run_id, TRACES_WARNING_TAG, f"traces not logged ({type(exc).__name__}: {reason})"
            )


def _experiment_id(client: Any, name: str, uri: str) -> str:
    found = client.get_experiment_by_name(name)
    if found:
        return str(found.experiment_id)
    from mlflow.exceptions import MlflowException

    try:
        return str(
            client.create_experiment(
                name,
                artifact_location=experiment_artifact_location(uri, name),
                # A saved view of the runs list with the headline columns.
                tags=headline_view_tags(int(time.time() * 1000)),
            )
        )
    except MlflowException as exc:
        # Another process created it between the lookup and here: use theirs.
        if exc.error_code != "RESOURCE_ALREADY_EXISTS":
            raise
        found = client.get_experiment_by_name(name)
        if found is None:
            raise
        return str(found.experiment_id)


def _abandon(client: Any, run_id: str, *, delete: bool) -> str:
    # Best effort: when the store itself stopped answering, there is nothing to do.
    try:
        client.set_terminated(run_id, status="FAILED")
    except Exception:
        return f"run {run_id} may still show RUNNING"
    if not delete:
        return f"run {run_id} was marked FAILED"
    try:
        client.delete_run(run_id)
    except Exception:
        return f"the partial run {run_id} was marked FAILED"
    return f"the partial run {run_id} was marked FAILED and deleted"


def _refusal(error: Exception, uri: str, fate: str = "") -> Exception:
    """``error`` as the one-line error the CLI prints: MLflow's, SQLAlchemy's and the
    artifact store's own become :class:`TrackingError`; ours pass unchanged (with
    what became of the run as a note). ``fate`` says what became of the run."""
    from mlflow.exceptions import MlflowException

    if isinstance(error, MlflowException):
        text = error.message
    elif type(error).__module__.startswith("sqlalchemy") or (
        isinstance(error, OSError) and not isinstance(error, DocEvalsError)
    ):
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
    else:
        if fate:
            error.add_note(fate)
        return error
    suffix = f" ({fate})" if fate else ""
    return TrackingError(
        f"MLflow refused the run: {scrub_credentials(text, uri)}{suffix}",
        source=public_uri(uri),
    )


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


def log_writer(
    writer: BundleWriter,
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    keep_bundle_at: str | os.PathLike[str] | None = None,
    traces: list[TraceRecord] | None = None,
) -> LoggedRun:
    """Write ``writer``'s bundle to a temporary folder and log it as a new run, with
    ``traces`` linked to it (kept with the bundle, ``traces.jsonl``, when it is kept).

    If logging fails and ``keep_bundle_at`` is given, the bundle is kept for
    ``docevals log`` first, then the error is raised. It goes to ``keep_bundle_at``,
    or beside it (``<name>-2``, ...) when a bundle that has not been logged is
    already there; the error's ``kept_bundle`` attribute (and a note on it) says
    where.
    """
    with tempfile.TemporaryDirectory(prefix="docevals-run-") as temporary:
        folder = writer.write(Path(temporary) / "bundle")
        try:
            return log_bundle(
                folder, tracking_uri=tracking_uri, experiment=experiment, traces=traces or []
            )
        except Exception as error:
            if keep_bundle_at is not None:
                from docevals_mlflow.tracking.trace_records import write_traces

                write_traces(folder, traces or [])
                kept = keep_bundle(folder, Path(keep_bundle_at))
                error.kept_bundle = kept  # type: ignore[attr-defined]
                error.add_note(f"run bundle kept in {kept}; log it with: docevals log {kept}")
            raise


def kept_bundle(error: BaseException) -> Path | None:
    """Where :func:`log_writer` kept the bundle of the run ``error`` stopped, if it did."""
    kept = getattr(error, "kept_bundle", None)
    return kept if isinstance(kept, Path) else None


def require_bundle_dir(path: str | os.PathLike[str]) -> Path:
    """A folder that holds a bundle, or a clear error."""
    folder = Path(path)
    if not folder.is_dir():
        raise InputError("not a folder", source=str(folder), expected="a run bundle folder")
    return folder
