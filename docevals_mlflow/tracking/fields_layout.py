"""The layout of a field comparison run: params, metrics, tags, tables and dataset.

Does not import mlflow; :mod:`docevals_mlflow.tracking.runs` logs what this builds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.fingerprints import sha256_bytes, sha256_file
from docevals_mlflow.core.formatting import metric_text as figure_text
from docevals_mlflow.fields.counts import METRIC_NAMES
from docevals_mlflow.fields.report import REPORT_ROW_FIELDS
from docevals_mlflow.reports.markdown import table
from docevals_mlflow.tracking import diagnostics_layout
from docevals_mlflow.tracking.bundle import BundleWriter, DatasetInput
from docevals_mlflow.tracking.keys import KeyMap, legal_key
from docevals_mlflow.tracking.layout_shared import (
    CELL_NAMES,
    SCORE_NAMES,
    cell_figures,
    cell_metrics,
    figure_table,
    headline,
    tag_evaluation,
)
from docevals_mlflow.tracking.trace_fields import field_call_usage

LIST_COUNTS = ("matched", "weak", "missed", "extra", "empty", "invented")
"""A list's item counts, logged as ``list/<list>/<count>``."""


def layout_fields(
    writer: BundleWriter,
    report: Mapping[str, Any],
    *,
    markdown: str,
    dashboard: str,
    verdict: str | None = None,
    report_json: str | None = None,
) -> KeyMap:
    """Fill ``writer`` with a field comparison report (``BatchComparison.to_report()``).

    ``report_json`` is the report already serialised (as the CLI writes it), so a
    large report is not encoded twice.
    """
    keys = KeyMap()
    schema = report["schema"]
    writer.param("docevals.version", __version__)
    writer.param("schema.id", schema["id"])
    writer.param("schema.version", schema["version"])
    writer.param("schema.sha256", schema["sha256"])
    _overall_metrics(writer, keys, report)
    for name, value in (report.get("settings") or {}).items():
        writer.param(f"fields.{name}", value)
    _breakdown_metrics(writer, keys, report)

    tag_evaluation(writer, "fields", verdict=verdict, note=fields_summary(report, verdict))

    if report_json is not None:
        writer.text("report/report.json", report_json)
    else:
        writer.json("report/report.json", report)
    writer.text("report/report.md", markdown)
    writer.text("report/dashboard.html", dashboard)
    _fields_tables(writer, report)
    writer.json("metrics_index.json", keys.index())
    return keys


HEADLINE_FIGURES = ("f1", "precision", "recall", "accuracy", "documents")
"""A field comparison's headline, logged as ``Summary/<figure>``."""
OVERALL_REST = ("macro_f1", "far", "fdr", *CELL_NAMES)
"""The other figures of all fields together, logged as ``overall/<figure>``."""
INTERVAL_FIGURES = ("f1", "precision", "recall", "accuracy")
"""Figures whose interval (``ci`` in the report) is logged overall, as
``Summary/<figure>_ci_low`` and ``_ci_high``; per field only F1's
(``field/<field>/f1/ci_low``), the rest in ``tables/fields.json``."""
FIELDS_TABLE = "tables/fields.json"
LISTS_TABLE = "tables/lists.json"


def _overall_metrics(writer: BundleWriter, keys: KeyMap, report: Mapping[str, Any]) -> None:
    overall = report["overall"]
    figures = {
        **cell_figures(overall["counts"], overall["metrics"]),
        "macro_f1": overall["macro_f1"],
        "documents": overall["documents"],
    }
    headline(writer, ((name, figures[name]) for name in HEADLINE_FIGURES))
    # Beside the headline: a figure's interval (from resampling documents) reads with it.
    found = overall.get("ci") or {}
    for name in INTERVAL_FIGURES:
        low, high = _bounds(found, name)
        writer.metric(f"Summary/{name}_ci_low", low)
        writer.metric(f"Summary/{name}_ci_high", high)
    for name in OVERALL_REST:
        writer.metric(f"overall/{name}", figures[name])
    # Comparisons a provider failed to decide (inside the FD cell): logged even when
    # zero, so that a run can be told apart from one that never checked.
    writer.metric("overall/undecided", overall.get("undecided", 0))
    unpaired = report["unpaired"]
    writer.metric("unpaired/expected_only", len(unpaired["expected_only"]))
    writer.metric("unpaired/predicted_only", len(unpaired["predicted_only"]))
    if report.get("calibration"):
        diagnostics_layout.calibration_metrics(writer, keys, report["calibration"])

    # Counted even when zero, like undecided: a run that checked says so.
    writer.metric("overall/unparsed", overall.get("unparsed", 0))
    invalid = report.get("invalid_expected") or {}
    writer.metric("overall/invalid_expected", invalid.get("documents", 0))
    # What SEMANTIC and LLM fields' provider calls used: the documents' call spans add up to it.
    for name, value in field_call_usage(report).items():
        writer.metric(f"usage/{name}", value)


def _breakdown_metrics(writer: BundleWriter, keys: KeyMap, report: Mapping[str, Any]) -> None:
    """Per field, discovered field, class and list: the scores as metrics, every figure
    (cells, FAR, FDR, list item counts) in ``tables/fields.json`` and ``tables/lists.json``."""
    overall = report["overall"]
    rows: list[dict[str, Any]] = [
        _row("overall", "(all fields)", None, overall, documents=overall["documents"])
    ]
    rows += _field_metrics(writer, keys, "field", report["fields"])
    discovered = report.get("discovered")
    if discovered and not discovered["included"]:
        # Outside the headline figures: their own namespace, never mixed into field/.
        cell_metrics(
            writer, "discovered/overall", discovered["counts"], discovered["metrics"], SCORE_NAMES
        )
        rows.append(_row("discovered/overall", "(discovered fields)", None, discovered))
        rows += _field_metrics(writer, keys, "discovered", discovered["fields"])
    for name, entry in report["classes"].items():
        segment = keys.named("class", name)
        prefix = legal_key(f"class/{segment}")
        cell_metrics(writer, prefix, entry["counts"], entry["metrics"], SCORE_NAMES)
        writer.metric(f"{prefix}/macro_f1", entry["macro_f1"])
        writer.metric(f"{prefix}/documents", entry["documents"])
        rows.append(
            _row(prefix, name, None, entry, documents=entry["documents"])
            | {"macro_f1": entry["macro_f1"]}
        )
    figure_table(writer, FIELDS_TABLE, rows)
    lists = []
    for entry in report["lists"]:
        segment = keys.segment("list", entry["template"], keys.field(entry["template"]))
        prefix = legal_key(f"list/{segment}")
        row: dict[str, Any] = {"key": prefix, "name": entry["template"]}
        row |= {name: entry.get(name) for name in LIST_COUNTS}
        for name in ("f1", "far"):
            row[name] = (entry.get("metrics") or {}).get(name)
            writer.metric(f"{prefix}/{name}", row[name])
        lists.append(row)
    figure_table(writer, LISTS_TABLE, lists)


def _bounds(found: Mapping[str, Any], name: str) -> tuple[float | None, float | None]:
    """A figure's interval bounds from a report entry's ``ci`` (None when absent)."""
    interval = found.get(name) or {}
    return interval.get("low"), interval.get("high")


def _row(
    key: str, name: str, method: str | None, entry: Mapping[str, Any], **extra: Any
) -> dict[str, Any]:
    row = {
        "key": key,
        "name": name,
        "method": method,
        **cell_figures(entry["counts"], entry["metrics"]),
        **extra,
    }
    found = entry.get("ci")
    if found:
        for figure in INTERVAL_FIGURES:
            interval = found.get(figure) or {}
            row[f"{figure}_ci_low"], row[f"{figure}_ci_high"] = _bounds(found, figure)
            row[f"{figure}_ci_documents"] = interval.get("documents")
    return row


def _field_metrics(
    writer: BundleWriter, keys: KeyMap, namespace: str, entries: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """``<namespace>/<field>/{precision,recall,f1,accuracy}`` for each field entry (the
    method joins the segment when two classes compare one template differently);
    ``unparsed`` when any. Returns the entries' rows of the figure table."""
    templates: dict[str, int] = {}
    for entry in entries:
        templates[entry["template"]] = templates.get(entry["template"], 0) + 1
    rows = []
    for entry in entries:
        shared = templates[entry["template"]] > 1
        segment = keys.field(entry["template"], entry["method"] if shared else None)
        prefix = legal_key(f"{namespace}/{segment}")
        cell_metrics(writer, prefix, entry["counts"], entry["metrics"], SCORE_NAMES)
        low, high = _bounds(entry.get("ci") or {}, "f1")
        writer.metric(f"{prefix}/f1/ci_low", low)
        writer.metric(f"{prefix}/f1/ci_high", high)
        if entry.get("unparsed"):
            writer.metric(f"{prefix}/unparsed", entry["unparsed"])
        rows.append(
            _row(prefix, entry["template"], entry["method"], entry, unparsed=entry.get("unparsed"))
        )
    return rows


def fields_summary(report: Mapping[str, Any], verdict: str | None) -> str:
    """The Markdown run description for a field comparison."""
    overall = report["overall"]
    metrics = overall["metrics"]
    lines = [
        f"**docevals field comparison**: {overall['documents']:,} documents, "
        f"schema `{report['schema']['id']}`" + (f", verdict **{verdict}**" if verdict else ""),
        "",
        *table(
            ["metric", "value"],
            [
                *((name, figure_text(metrics.get(name))) for name in METRIC_NAMES),
                ("macro F1", figure_text(overall["macro_f1"])),
            ],
        ),
    ]
    worst = sorted(
        (entry for entry in report["fields"] if entry["metrics"]["f1"] is not None),
        key=lambda entry: entry["metrics"]["f1"],
    )[:5]
    if worst:
        lines += ["", "Weakest fields:", ""]
        lines += table(
            ["field", "method", "F1"],
            (
                (entry["template"], entry["method"], figure_text(entry["metrics"]["f1"]))
                for entry in worst
            ),
        )
    return "\n".join(lines) + "\n"


# json.dumps with options builds a new encoder for every call; a table of 10,000 rows
# encodes up to 20,000 values, so one shared encoder (encode is stateless) is kept.
_VALUE_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)


def _text_value(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return _VALUE_ENCODER.encode(value)


_ROW_COLUMNS = ("document_id", "document_class", *REPORT_ROW_FIELDS)


def _fields_tables(writer: BundleWriter, report: Mapping[str, Any]) -> None:
    import pandas as pd

    documents = []
    rows: list[tuple[Any, ...]] = []
    for document in report["documents"]:
        documents.append(
            {
                "document_id": document["id"],
                "document_class": document["class"],
                **document["counts"],
                **document["metrics"],
            }
        )
        doc_id, doc_class = document["id"], document["class"]
        # Values are kept as text, so "0123" stays "0123" (Parquet keeps strings);
        # structured values are JSON.
        rows.extend(
            (
                doc_id,
                doc_class,
                row["path"],
                row["template"],
                row["method"],
                row["threshold"],
                _text_value(row["expected"]),
                _text_value(row["actual"]),
                row["score"],
                row["outcome"],
                row["matched"],
                row["confidence"],
                row["discovered"],
                row["reason"],
            )
            for row in document.get("rows") or ()
        )
    writer.parquet("results/documents.parquet", pd.DataFrame(documents))
    if rows:
        writer.parquet(
            "results/fields.parquet", pd.DataFrame.from_records(rows, columns=list(_ROW_COLUMNS))
        )


def fields_dataset(expected_path: str | os.PathLike[str]) -> tuple[DatasetInput, Any]:
    """The ground-truth dataset of a field comparison: the expected file or folder.

    The digest is the SHA-256 of the file's bytes (of every document file's name and
    bytes, for a folder: its ``.json`` files, or its Parquet part files), so the same
    ground truth always has the same digest.
    """
    from docevals_mlflow.fields.parquet_inputs import is_parquet, parquet_files

    path = Path(expected_path)
    if not path.is_dir():
        return files_dataset(path, None)
    files = parquet_files(path) if is_parquet(path) else sorted(path.glob("*.json"))
    return files_dataset(path, {file.name: file for file in files})


def files_dataset(path: Path, files: Mapping[str, Path] | None) -> tuple[DatasetInput, Any]:
    """The dataset input of ground truth held in one file (``files`` ``None``: the
    digest of its bytes) or in a folder's ``files`` (name → file, in order: the digest
    of every name and its bytes), with one record per file."""
    import pandas as pd

    if files is not None:
        parts = []
        records = []
        for name, file in files.items():
            data = file.read_bytes()
            parts.append(name.encode("utf-8") + b"\0" + data)
            records.append({"file": name, "sha256": sha256_bytes(data)})
        digest = sha256_bytes(b"\0".join(parts))
        frame = pd.DataFrame(records, columns=["file", "sha256"])
    else:
        # Read in blocks: the same digest as hashing the bytes, in bounded memory.
        digest = sha256_file(path)
        frame = pd.DataFrame([{"file": path.name, "sha256": digest}])
    dataset = DatasetInput(
        name=path.stem or path.name,
        digest=digest[:32],
        source=path.name,
        records="inputs/ground_truth.parquet",
    )
    return dataset, frame
