"""Logging a split evaluation from Python: one call, one MLflow run (assembled as
``docevals split`` assembles its run, :func:`~docevals_mlflow.tracking.assembly.assemble_split`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.split.report import PacketSplitReport, SplitReport
from docevals_mlflow.tracking.assembly import assemble_split, log_assembled
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.options import RunOptions, RunPrompt
from docevals_mlflow.tracking.runs import LoggedRun


def split_bundle(
    report: SplitReport | PacketSplitReport,
    *,
    ground_truth: str | os.PathLike[str] | None = None,
    verdict: str | None = None,
    run_name: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
) -> BundleWriter:
    """The run bundle of a split evaluation (not yet written or logged)."""
    options = RunOptions(
        ground_truth=ground_truth, run_name=run_name, params=params or {}, tags=tags or {}
    )
    return assemble_split(report, options, verdict=verdict).writer


def log_split_report(
    report: SplitReport | PacketSplitReport,
    *,
    ground_truth: str | os.PathLike[str] | None = None,
    verdict: str | None = None,
    run_name: str | None = None,
    experiment: str | None = None,
    tracking_uri: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
    keep_bundle_at: str | os.PathLike[str] | None = None,
    prompt: RunPrompt | None = None,
    options: RunOptions | None = None,
) -> LoggedRun:
    """Log a split evaluation (a batch or one packet's report) as an MLflow run.

    The run holds the ``split/...`` metrics (per class ``split/class/<class>/...``),
    the JSON and Markdown reports, the confusion-matrix heatmap and per-packet and
    per-page tables (see :mod:`docevals_mlflow.tracking.split_layout`).
    ``ground_truth`` (the expected file or folder) is logged as the run's
    ``ground_truth`` input with its content digest; ``prompt``
    (:class:`~docevals_mlflow.tracking.options.RunPrompt`) as ``--prompt`` logs it.
    ``options`` holds the run settings in one value; the keywords given win over it.
    If logging fails and ``keep_bundle_at`` is given, the bundle is kept there for
    ``docevals log`` (or beside it, ``<name>-2``, when a bundle not yet logged is
    there; the raised error's ``kept_bundle`` says where).
    """
    chosen = (options or RunOptions()).merged(
        ground_truth=ground_truth,
        run_name=run_name,
        experiment=experiment,
        tracking_uri=tracking_uri,
        params=params,
        tags=tags,
        keep_bundle_at=keep_bundle_at,
        prompt=prompt,
    )
    return log_assembled(assemble_split(report, chosen, verdict=verdict))


__all__ = ["log_split_report", "split_bundle"]
