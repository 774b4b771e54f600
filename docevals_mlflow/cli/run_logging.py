"""Logging a command's evaluation to MLflow without ever losing it: whether to log,
the run options of a command line, and keeping the run bundle when the store cannot
be reached (``docevals log`` logs it later)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docevals_mlflow.tracking.assembly import AssembledRun
    from docevals_mlflow.tracking.options import RunOptions
    from docevals_mlflow.tracking.runs import LoggedRun

PROJECT_RUN = "MLFLOW_RUN_ID"
"""Set by ``mlflow run`` for the command it starts (a recipe)."""
NO_MLFLOW_VARIABLE = "DOCEVALS_NO_MLFLOW"
"""Set to a non-empty value to skip MLflow logging everywhere (like ``--no-mlflow``)."""


def tracking_wanted(args: argparse.Namespace) -> bool:
    """Whether this invocation logs to MLflow."""
    return not getattr(args, "no_mlflow", False) and not os.environ.get(NO_MLFLOW_VARIABLE)


def run_options(
    args: argparse.Namespace,
    *,
    default_run_name: str | None = None,
    keep_bundle_at: Path | None = None,
    **content: Any,
) -> RunOptions:
    """The :class:`~docevals_mlflow.tracking.options.RunOptions` of a command line:
    ``--run-name`` (else ``default_run_name``), ``--experiment``, ``--tracking-uri``,
    the run annotations (``--param``, ``--tag``, ``--prompt``, ``--prompt-name``), the
    registered dataset the evaluation used and where to keep the bundle; ``content``
    adds the options the command knows itself (``schema``, ``ground_truth``,
    ``engine``, ...)."""
    from docevals_mlflow.cli.annotations import annotation_options
    from docevals_mlflow.cli.datasets import used_datasets
    from docevals_mlflow.cli.options import traces_policy
    from docevals_mlflow.tracking.options import RunOptions

    options = RunOptions(
        run_name=getattr(args, "run_name", None) or default_run_name,
        experiment=getattr(args, "experiment", None),
        tracking_uri=getattr(args, "tracking_uri", None),
        keep_bundle_at=keep_bundle_at,
        datasets=used_datasets(args),
        traces=traces_policy(args),
        **annotation_options(args),
    )
    return options.merged(**content)


def log_evaluation(
    args: argparse.Namespace,
    assemble: Callable[[RunOptions], AssembledRun],
    *,
    default_run_name: str,
    anchor: Path,
    quiet: bool = False,
    named_by_content: bool = True,
    **content: Any,
) -> LoggedRun | None:
    """Log an evaluation whose reports are already written; never lose it.

    ``assemble`` is the run kind's assembly function applied to the content (see
    :mod:`~docevals_mlflow.tracking.assembly`); it gets the command line's
    :func:`run_options` with ``content`` added. When the tracking store cannot be
    reached (or refuses the run), the bundle is kept next to ``anchor``
    (``<report>.run/``), the message says how to log it later with ``docevals log``,
    and ``None`` is returned. ``quiet`` leaves printing the run to the caller.

    Under ``mlflow run`` (a recipe) a run given no ``--run-name`` is named after what
    it evaluates (:func:`content_run_name`) rather than after its report file, whose
    name the recipes fix; ``named_by_content=False`` keeps ``default_run_name``.
    """
    if not tracking_wanted(args):
        return None
    options = run_options(
        args, default_run_name=default_run_name, keep_bundle_at=bundle_folder(anchor), **content
    )
    run = assemble(options)
    if named_by_content and not getattr(args, "run_name", None) and os.environ.get(PROJECT_RUN):
        run.writer.bundle.run_name = (
            content_run_name(run.writer.bundle) or run.writer.bundle.run_name
        )
    logged = log_or_keep(run, written="the reports")
    if logged is not None and not quiet:
        print(logged.describe())
        from docevals_mlflow.tracking.trace_baseline import traces_note

        note = traces_note(run.writer.bundle.tags)
        if note is not None:
            print(note)
    return logged


def content_run_name(bundle: Any) -> str | None:
    """A run's name after what it evaluates: ``fields <schema id>``, ``pipeline <id>``,
    ``case <id>``, ``suite <id>``, ``split``, ``calibration`` (``None``: another kind)."""
    from docevals_mlflow.tracking.keys import legal_run_name

    kind = bundle.tags.get("docevals.report_kind")
    identifiers = {"fields": "schema.id", "pipeline": "pipeline.id", "case": "case.id"}
    identifiers["suite"] = "suite.id"
    if kind in identifiers:
        identifier = bundle.params.get(identifiers[kind])
        return legal_run_name(f"{kind} {identifier}" if identifier else kind)
    return kind if kind in {"split", "calibration"} else None


def log_or_keep(run: AssembledRun, *, written: str) -> LoggedRun | None:
    """Log an assembled run; when the store cannot be reached (or refuses the run),
    keep the bundle where its options say, warn that ``written`` (what the command
    already wrote) is safe and how to log the run later, and return ``None``."""
    from docevals_mlflow.tracking.assembly import log_assembled

    try:
        return log_assembled(run)
    except Exception as exc:  # tracking must never cost the user what was computed
        from docevals_mlflow.tracking.runs import kept_bundle

        # An earlier bundle not yet logged keeps its folder; this one may be beside it.
        kept = kept_bundle(exc) or run.options.keep_bundle_at
        print(
            f"docevals: warning: not logged to MLflow ({type(exc).__name__}: {exc}); "
            f"{written} are written; log this run later with: docevals log {kept}",
            file=sys.stderr,
        )
        return None


def bundle_folder(anchor: Path) -> Path:
    """Where the run bundle of the report ``anchor`` is kept when MLflow cannot be
    reached: ``reports/case.json`` → ``reports/case.run``."""
    return anchor.with_name(anchor.stem + ".run")
