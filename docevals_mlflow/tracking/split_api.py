"""Logging a split evaluation from Python: one call, one MLflow run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.split.batch import summarize
from docevals_mlflow.split.report import PacketSplitReport, SplitReport
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.runs import LoggedRun, log_writer
from docevals_mlflow.tracking.split_layout import layout_split


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
    from docevals_mlflow.reports.split_markdown import render_split_markdown
    from docevals_mlflow.reports.split_plot import render_split_heatmap
    from docevals_mlflow.tracking.layout import fields_dataset

    batch = summarize([report]) if isinstance(report, PacketSplitReport) else report
    writer = BundleWriter(run_name=run_name)
    layout_split(
        writer,
        batch,
        markdown=render_split_markdown(batch),
        heatmap=render_split_heatmap(batch),
        verdict=verdict,
    )
    if ground_truth is not None:
        # The same digest rule as field comparisons: the bytes of the file, or of every
        # .json file of a folder with its name.
        writer.dataset(*fields_dataset(ground_truth))
    writer.extras(params=params, tags=tags)
    return writer


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
) -> LoggedRun:
    """Log a split evaluation (a batch or one packet's report) as an MLflow run.

    The run holds the ``split/...`` metrics (per class ``split/class/<class>/...``),
    the JSON and Markdown reports, the confusion-matrix heatmap and per-packet and
    per-page tables (see :mod:`docevals_mlflow.tracking.split_layout`).
    ``ground_truth`` (the expected file or folder) is logged as the run's
    ``ground_truth`` input with its content digest. If logging fails and
    ``keep_bundle_at`` is given, the bundle is kept there for ``docevals log`` (or
    beside it, ``<name>-2``, when a bundle not yet logged is there; the raised error's
    ``kept_bundle`` says where).
    """
    writer = split_bundle(
        report,
        ground_truth=ground_truth,
        verdict=verdict,
        run_name=run_name,
        params=params,
        tags=tags,
    )
    return log_writer(
        writer, tracking_uri=tracking_uri, experiment=experiment, keep_bundle_at=keep_bundle_at
    )


__all__ = ["log_split_report", "split_bundle"]
