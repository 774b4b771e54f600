"""Loading runs as :class:`~docevals_mlflow.compare.RunSnapshot` objects for comparison.

A run can be named four ways:

* an MLflow run id (32 hexadecimal characters);
* ``experiment/run-name`` (the most recent run of that name in that experiment);
* ``run-name`` (looked up in ``experiment`` when given, else in every experiment;
  the most recent run of that name; when several experiments hold one, the current
  default experiment's (``MLFLOW_EXPERIMENT_NAME``) or a preferred experiment's, else
  an error that lists the experiments);
* a path: a run bundle folder (``run.json`` + ``artifacts/``, as kept when the
  tracking server was down) or a report JSON file written by ``docevals fields``,
  ``evaluate-case``, ``evaluate-pipeline`` or ``suite`` (compared without MLflow).

From MLflow only the artifacts a comparison needs are downloaded: the per-document
and per-case tables, the spec texts, the judge panel, the metrics index and, for
case and pipeline evaluations, the report (for the judges' individual votes).
mlflow is imported inside the functions that talk to it.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow.compare.snapshot import RunSnapshot
from docevals_mlflow.core.datafiles import check_file, load_json_file
from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking.bundle import MANIFEST, BundleWriter, RunBundle
from docevals_mlflow.tracking.bundle_folders import read_bundle
from docevals_mlflow.tracking.snapshot_tables import snapshot_from_artifacts

_RUN_ID = re.compile(r"^[0-9a-f]{32}$")
_EXPERIMENT_VARIABLES = ("MLFLOW_EXPERIMENT_NAME", "MLFLOW_EXPERIMENT_ID")


# ---------------------------------------------------------------------- local sources


def _bundle_datasets(bundle: RunBundle) -> dict[str, str]:
    return {
        dataset.name: dataset.digest
        for dataset in bundle.inputs
        if dataset.context == "ground_truth"
    }


def snapshot_from_bundle(directory: str | os.PathLike[str]) -> RunSnapshot:
    """A run bundle folder (``run.json`` + ``artifacts/``) as a snapshot."""
    bundle, artifacts = read_bundle(directory)

    def read(path: str) -> bytes | None:
        file = artifacts / path
        return file.read_bytes() if file.is_file() else None

    return snapshot_from_artifacts(
        run_id=str(directory),
        run_name=bundle.run_name or Path(directory).name,
        experiment=None,
        params=bundle.params,
        metrics=bundle.metrics,
        tags=bundle.tags,
        read=read,
        datasets=_bundle_datasets(bundle),
    )


def snapshot_from_writer(writer: BundleWriter, *, run_id: str) -> RunSnapshot:
    """A bundle still in memory (laid out but not written) as a snapshot."""
    bundle = writer.bundle
    return snapshot_from_artifacts(
        run_id=run_id,
        run_name=bundle.run_name,
        experiment=None,
        params=bundle.params,
        metrics=bundle.metrics,
        tags=bundle.tags,
        read=writer.files.get,
        datasets=_bundle_datasets(bundle),
    )


def snapshot_from_report(path: str | os.PathLike[str]) -> RunSnapshot:
    """A report JSON file as a snapshot, laid out exactly as its run would be.

    Field comparison reports (``docevals fields``, the quickstart's
    ``reports/prompt-v1.json``) and case, pipeline and suite reports are accepted.
    """
    from docevals_mlflow.reports.files import load_report
    from docevals_mlflow.tracking.evaluation_layout import layout_evaluation
    from docevals_mlflow.tracking.fields_layout import layout_fields

    file = Path(path)
    # A folder, a named pipe or a device is named as what it is, not as missing.
    check_file(file, what="report")
    writer = BundleWriter(run_name=file.stem)
    data = load_json_file(file)
    if isinstance(data, dict) and data.get("kind") == "fields":
        try:
            layout_fields(writer, data, markdown="", dashboard="")
        except (KeyError, TypeError) as exc:
            raise InputError(
                f"not a complete field comparison report (missing {exc})", source=str(file)
            ) from None
    else:
        layout_evaluation(writer, load_report(file), markdown="", dashboard="")
    return snapshot_from_writer(writer, run_id=str(file))


# --------------------------------------------------------------------------- MLflow


def _client(tracking_uri: str | None) -> Any:
    from docevals_mlflow.tracking.runs import probe, resolve_tracking_uri
    from docevals_mlflow.tracking.store import open_client

    uri = resolve_tracking_uri(tracking_uri)
    probe(uri)
    # A half-migrated SQLite store is refused in one line, never opened (and changed).
    return open_client(uri)


def _latest_named(client: Any, experiment_ids: list[str], name: str) -> list[Any]:
    from mlflow.entities import ViewType

    escaped = name.replace("\\", "\\\\").replace("'", "\\'")
    return list(
        client.search_runs(
            experiment_ids,
            filter_string=f"attributes.run_name = '{escaped}'",
            run_view_type=ViewType.ACTIVE_ONLY,
            order_by=["attributes.start_time DESC"],
            max_results=50,
        )
    )


class AmbiguousRunError(InputError):
    """A bare run name names runs in several experiments and nothing says which one.

    Attributes:
        experiments: the experiments holding a run of that name, sorted.
    """

    def __init__(self, reference: str, latest: dict[str, str]) -> None:
        self.experiments = tuple(sorted(latest))
        listing = ", ".join(f"{name} (run {latest[name]})" for name in self.experiments)
        super().__init__(
            f"runs named {reference!r} exist in several experiments: {listing}; say which "
            f"with --experiment NAME (or EXPERIMENT/{reference}) or give a run id",
            source=f"run {reference}",
        )


def _meant_experiments(prefer: Sequence[str]) -> list[str]:
    """The experiments a bare name is looked for first when several hold it: the
    current default experiment (``MLFLOW_EXPERIMENT_NAME``, ``MLFLOW_EXPERIMENT_ID``)
    then ``prefer``."""
    meant = [os.environ.get(variable, "") for variable in _EXPERIMENT_VARIABLES]
    return [entry for entry in (*meant, *prefer) if entry]


def _one_experiment(client: Any, reference: str, runs: list[Any], prefer: Sequence[str]) -> Any:
    """The most recent of ``runs`` (newest first) when they are in one experiment, or
    in the first meant experiment that holds one; else :class:`AmbiguousRunError`."""
    latest: dict[str, Any] = {}
    for run in runs:
        latest.setdefault(run.info.experiment_id, run)
    if len(latest) == 1:
        return runs[0]
    names = {number: client.get_experiment(number).name for number in latest}
    for meant in _meant_experiments(prefer):
        for number, name in names.items():
            if meant in (name, number):
                return latest[number]
    raise AmbiguousRunError(
        reference, {names[number]: run.info.run_id for number, run in latest.items()}
    )


def resolve_run(
    reference: str,
    *,
    client: Any,
    experiment: str | None = None,
    prefer: Sequence[str] = (),
) -> Any:
    """The MLflow run a reference names (see the module docstring).

    A bare run name several experiments hold resolves in the experiment the user
    means: ``experiment`` when given (only there); else the current default
    experiment (``MLFLOW_EXPERIMENT_NAME`` or ``MLFLOW_EXPERIMENT_ID``) or the first of
    ``prefer`` (experiment names, such as those of the other runs compared) holding
    one; else :class:`AmbiguousRunError` lists the experiments.
    """
    from mlflow.entities import ViewType
    from mlflow.exceptions import MlflowException

    if _RUN_ID.match(reference):
        try:
            return client.get_run(reference)
        except MlflowException:
            raise InputError(
                "no such run", source=f"run {reference}", expected="an existing MLflow run id"
            ) from None
    prefix, _, rest = reference.partition("/")
    if rest:
        found = client.get_experiment_by_name(prefix)
        if found is not None:
            runs = _latest_named(client, [found.experiment_id], rest)
            if runs:
                return runs[0]
            raise InputError(
                f"experiment {prefix!r} has no run named {rest!r}",
                source=f"run {reference}",
                expected="experiment/run-name of an existing run",
            )
    if experiment is not None:
        found = client.get_experiment_by_name(experiment)
        if found is None:
            raise InputError(f"no experiment named {experiment!r}", source=f"run {reference}")
        scopes = [found.experiment_id]
    else:
        scopes = [
            entry.experiment_id
            for entry in client.search_experiments(view_type=ViewType.ACTIVE_ONLY)
        ]
    runs = _latest_named(client, scopes, reference) if scopes else []
    if not runs:
        raise InputError(
            "no run of that id or name",
            source=f"run {reference}",
            expected="a run id, experiment/run-name, run-name, run bundle folder or report file",
        )
    return _one_experiment(client, reference, runs, prefer)


def _listed(client: Any, run_id: str) -> set[str]:
    paths: set[str] = set()
    for folder in (None, "results", "specs", "judges", "report", "tables"):
        paths.update(item.path for item in client.list_artifacts(run_id, folder) if not item.is_dir)
    return paths


def _run_datasets(run: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    inputs = getattr(run, "inputs", None)
    for entry in getattr(inputs, "dataset_inputs", None) or ():
        tags = {tag.key: tag.value for tag in entry.tags}
        if tags.get("mlflow.data.context") == "ground_truth":
            found[entry.dataset.name] = entry.dataset.digest
    return found


def snapshot_from_mlflow(run: Any, *, client: Any) -> RunSnapshot:
    """An MLflow run (a ``mlflow.entities.Run``) as a snapshot; downloads only what a
    comparison reads."""
    run_id = run.info.run_id
    available = _listed(client, run_id)
    experiment = client.get_experiment(run.info.experiment_id)
    with tempfile.TemporaryDirectory(prefix="docevals-snapshot-") as temporary:

        def read(path: str) -> bytes | None:
            if path not in available:
                return None
            local = client.download_artifacts(run_id, path, temporary)
            return Path(local).read_bytes()

        return snapshot_from_artifacts(
            run_id=run_id,
            run_name=run.info.run_name,
            experiment=experiment.name if experiment is not None else None,
            params=run.data.params,
            metrics=run.data.metrics,
            tags=dict(run.data.tags),
            read=read,
            datasets=_run_datasets(run),
        )


def load_run_snapshot(
    run: str | os.PathLike[str],
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    prefer: Sequence[str] = (),
) -> RunSnapshot:
    """Load a run for :func:`~docevals_mlflow.compare.compare_runs`.

    ``run`` is a run id, ``experiment/run-name``, a run name, a run bundle folder or
    a report JSON file (see the module docstring). ``tracking_uri`` defaults as for
    logging (``MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow.db`` in the working
    directory); ``experiment`` narrows the lookup of a bare run name; ``prefer``
    names experiments to look in first when several hold it (see :func:`resolve_run`).

    Raises:
        InputError: the run cannot be found, or its tables are not docevals tables.
        TrackingUnavailableError: an HTTP tracking server cannot be reached.
    """
    path = Path(run)
    if path.is_dir() and (path / MANIFEST).is_file():
        return snapshot_from_bundle(path)
    if path.suffix.lower() == ".json":
        # A report file: never looked up as a run name, so a typo says "not found".
        return snapshot_from_report(path)
    reference = str(run)
    from docevals_mlflow.tracking.approval_runs import missing_store
    from docevals_mlflow.tracking.runs import resolve_tracking_uri

    absent = missing_store(resolve_tracking_uri(tracking_uri))
    if absent is not None:
        # Looking a run up must not create (and migrate) a store where there is none.
        raise InputError(
            f"no run of that id or name: the tracking store {absent} does not exist",
            source=f"run {reference}",
            expected="--tracking-uri or MLFLOW_TRACKING_URI naming the store the run was "
            "logged in, a run bundle folder or a report file",
        )
    client = _client(tracking_uri)
    from mlflow.exceptions import MlflowException

    from docevals_mlflow.tracking.runs import TrackingError

    try:
        found = resolve_run(reference, client=client, experiment=experiment, prefer=prefer)
        return snapshot_from_mlflow(found, client=client)
    except MlflowException as exc:
        raise TrackingError(
            f"MLflow refused to load the run: {exc.message}", source=reference
        ) from None
