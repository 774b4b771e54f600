"""Runs started by ``mlflow run``: the project run is the docevals run.

``mlflow run`` creates a run before it starts an entry point's command and hands
its id down in ``MLFLOW_RUN_ID`` (and its store in ``MLFLOW_TRACKING_URI``). A
docevals command started that way logs into that run rather than creating a
second one, so the run ``mlflow run`` reports is the one holding the metrics.

Where the project run cannot be the docevals run, the docevals run becomes its
child (``mlflow.parentRunId``, same experiment): when the project run already holds
a docevals run, when one of its params would change, or when the command logs
several runs side by side (:func:`several_runs`, as the quickstart's two prompt
versions). A run logged into an explicit run id elsewhere (a dataset version's
approval run) is linked instead. Either way the project run lists every other
docevals run it led to in the ``docevals.runs`` tag, and those runs name it in
``docevals.project_run_id``.

This module does not import mlflow; the functions take an ``MlflowClient``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from docevals_mlflow.errors import ConfigurationError

RUN_ID_VARIABLE = "MLFLOW_RUN_ID"
"""Set by ``mlflow run`` (and honoured by ``mlflow.start_run``) for the command's run."""
TRACKING_URI_VARIABLE = "MLFLOW_TRACKING_URI"
KIND_TAG = "docevals.kind"
PARENT_TAG = "mlflow.parentRunId"
PROJECT_RUN_TAG = "docevals.project_run_id"
LINKED_RUNS_TAG = "docevals.runs"
_MAX_TAG_LENGTH = 8000

_several_runs: ContextVar[bool] = ContextVar("docevals_several_runs", default=False)


def active_project_run_id(tracking_uri: str) -> str | None:
    """The run ``mlflow run`` started this process for, if its store is ``tracking_uri``.

    A run id from another store (``--tracking-uri`` pointing elsewhere) is ignored:
    the id would mean nothing there.
    """
    run_id = os.environ.get(RUN_ID_VARIABLE, "").strip()
    if not run_id:
        return None
    project_uri = os.environ.get(TRACKING_URI_VARIABLE)
    if project_uri and project_uri != tracking_uri:
        return None
    return run_id


@contextmanager
def several_runs() -> Iterator[None]:
    """Runs logged inside this block are siblings: under ``mlflow run`` each becomes
    a child run of the project run instead of the first one taking it over."""
    token = _several_runs.set(True)
    try:
        yield
    finally:
        _several_runs.reset(token)


def project_target(
    client: Any,
    project_run_id: str,
    *,
    params: dict[str, str],
    run_name: str | None,
) -> Any:
    """The run to log into under ``mlflow run``: the project run itself, or a new
    child run of it."""
    from mlflow.exceptions import MlflowException

    try:
        project = client.get_run(project_run_id)
    except MlflowException:
        raise ConfigurationError(
            f"{RUN_ID_VARIABLE} names run {project_run_id!r}, which the tracking store "
            "does not hold",
            expected=f"unset {RUN_ID_VARIABLE}, or the tracking URI `mlflow run` used",
        ) from None
    existing = project.data.params
    changes = any(key in existing and existing[key] != value for key, value in params.items())
    if not _several_runs.get() and KIND_TAG not in project.data.tags and not changes:
        name_project_run(client, project, run_name)
        return project
    child = client.create_run(
        project.info.experiment_id, run_name=run_name, tags={PARENT_TAG: project_run_id}
    )
    return child


def name_project_run(client: Any, project: Any, run_name: str | None) -> None:
    """Give the project run ``run_name`` when MLflow made its name up (``mlflow run``
    without ``--run-name``), so a recipe run reads ``fields invoice``, not
    ``sincere-calf-7``. A name the user gave is kept."""
    from mlflow.utils.name_utils import _GENERATOR_NOUNS, _GENERATOR_PREDICATES

    predicate, _, rest = (project.info.run_name or "").partition("-")
    noun, _, number = rest.partition("-")
    generated = predicate in _GENERATOR_PREDICATES and noun in _GENERATOR_NOUNS and number.isdigit()
    if run_name and generated:
        client.set_tag(project.info.run_id, "mlflow.runName", run_name)


def link_to_project(client: Any, project_run_id: str, run_id: str) -> None:
    """Record that ``run_id`` was logged under the project run (both directions)."""
    if run_id == project_run_id:
        return
    client.set_tag(run_id, PROJECT_RUN_TAG, project_run_id)
    listed = client.get_run(project_run_id).data.tags.get(LINKED_RUNS_TAG, "")
    ids = [entry for entry in listed.split(",") if entry]
    if run_id in ids:
        return
    value = ",".join([*ids, run_id])
    # Past the tag limit the children stay findable through mlflow.parentRunId and
    # every linked run through its docevals.project_run_id tag.
    if len(value) <= _MAX_TAG_LENGTH:
        client.set_tag(project_run_id, LINKED_RUNS_TAG, value)
