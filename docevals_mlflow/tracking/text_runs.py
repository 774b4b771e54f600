"""The MLflow run of ``docevals text``: text and table metrics of a reading stage.

Metrics:

* the headline ``Summary/cer``, ``Summary/wer``, ``Summary/token_f1`` (micro over
  pages), ``Summary/teds`` (mean over tables) and ``Summary/documents`` (a figure only
  when the batch has pages of its kind);
* ``text/{cer,wer,ned,token_f1}`` (micro over pages), ``text/macro/{cer,wer,ned,token_f1}``
  (means over documents), ``text/{documents,pages,missing_predictions}``;
* ``table/{teds,teds_s}`` (means over tables), ``table/macro/{teds,teds_s}`` (over
  documents), ``table/{documents,tables,missing_predictions}``;
* ``inputs/extra_predictions`` (predictions with no expected page, not scored).

Params: ``text.unicode_form``, ``text.collapse_whitespace``, ``text.casefold``,
``text.remove_punctuation`` (the normalization), ``text.input_form`` and
``text.worst``. Artifacts: ``report/report.json``, ``report/report.md`` and
``tables/worst_pages.json`` (the worst pages by CER and tables by TEDS, as MLflow's
``log_table`` writes a table).

:func:`assemble_text` is the one assembly of this run kind (as
:mod:`~docevals_mlflow.tracking.assembly` has one per kind); :func:`log_text_report`
logs one from Python. Does not import mlflow.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.formatting import count_text, metric_text
from docevals_mlflow.docmetrics.inputs import folder_documents
from docevals_mlflow.docmetrics.report import TextMetricsReport
from docevals_mlflow.reports.markdown import table
from docevals_mlflow.tracking.assembly import AssembledRun, log_assembled
from docevals_mlflow.tracking.bundle import BundleWriter, DatasetInput
from docevals_mlflow.tracking.fields_layout import files_dataset
from docevals_mlflow.tracking.layout_shared import figure_table, headline, tag_evaluation
from docevals_mlflow.tracking.options import RunOptions, apply_options
from docevals_mlflow.tracking.runs import LoggedRun

WORST_PAGES_TABLE = "tables/worst_pages.json"
DEFAULT_RUN_NAME = "text"
TEXT_FIGURES = ("cer", "wer", "ned", "token_f1")
TABLE_FIGURES = ("teds", "teds_s")


def text_metrics(writer: BundleWriter, report: TextMetricsReport) -> None:
    """Every metric of a report (see the module docstring)."""
    text, tables = report.text, report.table
    headline(
        writer,
        [
            ("cer", text.cer if text else None),
            ("wer", text.wer if text else None),
            ("token_f1", text.token_f1 if text else None),
            ("teds", tables.teds if tables else None),
            ("documents", report.documents),
        ],
    )
    if text is not None:
        for name in TEXT_FIGURES:
            writer.metric(f"text/{name}", getattr(text, name))
            writer.metric(f"text/macro/{name}", getattr(text, f"macro_{name}"))
        for name in ("documents", "pages", "missing_predictions"):
            writer.metric(f"text/{name}", getattr(text, name))
    if tables is not None:
        for name in TABLE_FIGURES:
            writer.metric(f"table/{name}", getattr(tables, name))
            writer.metric(f"table/macro/{name}", getattr(tables, f"macro_{name}"))
        for name in ("documents", "tables", "missing_predictions"):
            writer.metric(f"table/{name}", getattr(tables, name))
    writer.metric("inputs/extra_predictions", len(report.extra_predictions))


SHOWN_DIGITS = 4
"""Figures in the worst-pages table are rounded: MLflow's UI shows every digit it is
given, and 17-digit floats push the later columns off the screen. The exact figures
are in ``report/report.json``."""


def _shown(value: float) -> float:
    return round(value, SHOWN_DIGITS)


def worst_page_rows(report: TextMetricsReport, worst: int) -> list[dict[str, Any]]:
    """The worst text pages by CER, then the worst tables by TEDS, one row each
    (figures rounded to :data:`SHOWN_DIGITS` decimals; the two headline figures first,
    so MLflow's table shows both without scrolling)."""
    rows: list[dict[str, Any]] = [
        {
            "kind": "text",
            "page": page.name,
            "cer": _shown(page.cer),
            "teds": None,
            "wer": _shown(page.wer),
            "token_f1": _shown(page.token_f1),
            "teds_s": None,
            "ned": _shown(page.ned),
            "missing_prediction": page.missing_prediction,
            "document": page.document,
        }
        for page in report.worst_text(worst)
    ]
    rows += [
        {
            "kind": "table",
            "page": page.name,
            "cer": None,
            "teds": _shown(page.teds),
            "wer": None,
            "token_f1": None,
            "teds_s": _shown(page.teds_s),
            "ned": None,
            "missing_prediction": page.missing_prediction,
            "document": page.document,
        }
        for page in report.worst_tables(worst)
    ]
    return rows


def text_summary(report: TextMetricsReport, verdict: str | None = None) -> str:
    """The Markdown run description."""
    head = f"**docevals text evaluation**: {count_text(report.documents)} documents" + (
        f", verdict **{verdict}**" if verdict else ""
    )
    rows = []
    if report.text is not None:
        text = report.text
        pages = f"{count_text(text.pages)} pages"
        rows += [
            ("CER", metric_text(text.cer), metric_text(text.macro_cer), pages),
            ("WER", metric_text(text.wer), metric_text(text.macro_wer), pages),
            ("token F1", metric_text(text.token_f1), metric_text(text.macro_token_f1), pages),
        ]
    if report.table is not None:
        tables = f"{count_text(report.table.tables)} tables"
        rows += [
            ("TEDS", metric_text(report.table.teds), metric_text(report.table.macro_teds), tables),
            (
                "TEDS-S",
                metric_text(report.table.teds_s),
                metric_text(report.table.macro_teds_s),
                tables,
            ),
        ]
    lines = table(["metric", "over pages", "over documents", "counts"], rows)
    return "\n".join([head, "", *lines]) + "\n"


def layout_text(
    writer: BundleWriter,
    report: TextMetricsReport,
    *,
    markdown: str,
    worst: int = 10,
    verdict: str | None = None,
    report_json: str | None = None,
) -> None:
    """Fill ``writer`` with a text-metrics report (see the module docstring)."""
    writer.param("docevals.version", __version__)
    for name, value in report.normalization.model_dump().items():
        writer.param(f"text.{name}", value)
    writer.param("text.input_form", report.input_form)
    writer.param("text.worst", worst)
    text_metrics(writer, report)
    tag_evaluation(writer, "text", verdict=verdict, note=text_summary(report, verdict))
    writer.text("report/report.json", report_json if report_json is not None else report.to_json())
    writer.text("report/report.md", markdown)
    figure_table(writer, WORST_PAGES_TABLE, worst_page_rows(report, worst))


def text_dataset(expected: str | os.PathLike[str]) -> tuple[DatasetInput, Any]:
    """The ground-truth input of a run: the expected JSON Lines file or file (digest of
    its bytes), or folder (digest of every document file's relative path and bytes)."""
    path = Path(expected)
    return files_dataset(path, folder_documents(path) if path.is_dir() else None)


def assemble_text(
    report: TextMetricsReport,
    options: RunOptions | None = None,
    *,
    worst: int = 10,
    verdict: str | None = None,
    markdown: str | None = None,
    report_json: str | None = None,
) -> AssembledRun:
    """A text-metrics run, default name ``text``; ``markdown`` and ``report_json`` are
    the texts already rendered (rendered here when not given). The options'
    ``ground_truth`` is the run's input with a digest of the documents' files."""
    if markdown is None:
        from docevals_mlflow.reports.text_markdown import render_text_markdown

        markdown = render_text_markdown(report, worst=worst)
    resolved = (options or RunOptions()).with_defaults(run_name=DEFAULT_RUN_NAME)
    writer = BundleWriter(kind="evaluation", run_name=resolved.run_name)
    layout_text(
        writer, report, markdown=markdown, worst=worst, verdict=verdict, report_json=report_json
    )
    if resolved.ground_truth is not None:
        # Not apply_options' digest: that one reads a folder's .json files only.
        writer.dataset(*text_dataset(resolved.ground_truth))
    apply_options(writer, dataclasses.replace(resolved, ground_truth=None))
    return AssembledRun(writer, resolved)


def log_text_report(
    report: TextMetricsReport,
    *,
    worst: int = 10,
    ground_truth: str | os.PathLike[str] | None = None,
    verdict: str | None = None,
    run_name: str | None = None,
    experiment: str | None = None,
    tracking_uri: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
    options: RunOptions | None = None,
) -> LoggedRun:
    """Log a ``docevals text`` report as an MLflow run (as the command logs it).

    ``ground_truth`` (the expected folder or file) becomes the run's ``ground_truth``
    input with its content digest; the keywords given win over ``options``.
    """
    chosen = (options or RunOptions()).merged(
        ground_truth=ground_truth,
        run_name=run_name,
        experiment=experiment,
        tracking_uri=tracking_uri,
        params=params,
        tags=tags,
    )
    return log_assembled(assemble_text(report, chosen, worst=worst, verdict=verdict))


__all__ = [
    "WORST_PAGES_TABLE",
    "assemble_text",
    "layout_text",
    "log_text_report",
    "text_dataset",
    "text_metrics",
    "text_summary",
    "worst_page_rows",
]
