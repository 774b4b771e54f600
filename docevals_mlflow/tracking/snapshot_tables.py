"""A run's artifacts as the columnar tables of a :class:`~docevals_mlflow.compare.RunSnapshot`.

Reads the layout of docs/mlflow-runs.md (``results/*.parquet``, ``specs/*``,
``judges/panel.json``, ``metrics_index.json`` and, for case and pipeline runs, the
judges' votes inside ``report/report.json``) from any source of artifact bytes: a
bundle folder, a bundle still in memory, or files downloaded from MLflow. Does not
import mlflow; pandas only to read Parquet.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from typing import Any

from docevals_mlflow.compare.snapshot import (
    CELLS,
    CaseTable,
    DocumentTable,
    FieldTable,
    RunSnapshot,
    VoteTable,
)
from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking.figure_tables import all_figures
from docevals_mlflow.tracking.vote_records import VOTES, read_votes, vote_records

DOCUMENTS = "results/documents.parquet"
FIELDS = "results/fields.parquet"
CASES = "results/cases.parquet"
OPERATIONS = "specs/operations.json"
PANELS = "judges/panel.json"
INDEX = "metrics_index.json"
REPORT = "report/report.json"
TEXTS = ("specs/prompt.txt", "specs/schema.json")
"""Other spec texts diffed when a run holds them."""
_VOTING_REPORTS = frozenset({"case", "pipeline"})

Reader = Callable[[str], bytes | None]
"""Returns an artifact's bytes, or ``None`` when the run does not hold it."""


# ------------------------------------------------------------------- artifacts → tables


def _frame(data: bytes, columns: list[str] | None = None) -> Any:
    import pandas as pd

    return pd.read_parquet(io.BytesIO(data), columns=columns)


def document_table(data: bytes) -> DocumentTable:
    """``results/documents.parquet`` as a :class:`DocumentTable`."""
    frame = _frame(data)
    if not len(frame):
        return DocumentTable.from_records([])
    classes = frame["document_class"] if "document_class" in frame else [None] * len(frame)
    return DocumentTable(
        document_id=[str(value) for value in frame["document_id"]],
        document_class=[
            None if value is None or value != value else str(value) for value in classes
        ],
        **{cell: frame[cell].astype("int64").tolist() for cell in CELLS},
    )


def field_table(data: bytes) -> FieldTable:
    """``results/fields.parquet`` (one row per leaf) summed per document and field.

    A field is its template; a template a run compared with several methods (two
    classes configuring it differently) becomes ``"<template> [<method>]"``.
    """
    frame = _frame(data, ["document_id", "template", "method", "outcome"])
    if not len(frame):
        return FieldTable(document_id=[], field=[], tp=[], fa=[], fd=[], fn=[], tn=[])
    methods = frame.groupby("template", sort=False)["method"].nunique()
    shared = set(methods[methods > 1].index)
    field = frame["template"].astype(str)
    if shared:
        several = frame["template"].isin(shared)
        field = field.where(~several, field + " [" + frame["method"].astype(str) + "]")
    counts = (
        frame.assign(field=field)
        .groupby(["document_id", "field", "outcome"], sort=False)
        .size()
        .unstack("outcome", fill_value=0)
    )
    return FieldTable(
        document_id=[str(doc) for doc in counts.index.get_level_values(0)],
        field=[str(name) for name in counts.index.get_level_values(1)],
        **{
            cell: (
                counts[cell.upper()].astype("int64").tolist()
                if cell.upper() in counts
                else [0] * len(counts)
            )
            for cell in CELLS
        },
    )


def case_table(data: bytes) -> CaseTable:
    """``results/cases.parquet`` as a :class:`CaseTable`."""
    frame = _frame(data, None)
    if not len(frame):
        return CaseTable.from_records([])

    def column(name: str) -> list[Any]:
        if name not in frame:
            return [None] * len(frame)
        return [None if value is None or value != value else value for value in frame[name]]

    return CaseTable(
        case_id=[str(value) for value in frame["case_id"]],
        stage_id=[str(value) for value in frame["stage_id"]],
        operation=column("operation"),
        verdict=[str(value) for value in frame["verdict"]],
        failure_context=column("failure_context"),
    )


def _stage_reports(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    kind = report.get("kind")
    if kind == "pipeline":
        return list(report.get("stage_reports") or ())
    if kind == "case":
        return [report]
    return []


def vote_table(report: Mapping[str, Any]) -> VoteTable | None:
    """Every judge's verdict per stage, from a case or pipeline report (as JSON).

    Panel members come from the panel result's ``details.variants``; a single LLM
    judge is one member named after its metric. ``None`` when no judge ran.
    """
    records = vote_records(_stage_reports(report))
    return VoteTable.from_records(records) if records else None


def _json(data: bytes | None, what: str, source: str) -> Any:
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{what} is not valid JSON ({exc})", source=source) from None


def _votes(tags: Mapping[str, str], read: Reader, source: str) -> VoteTable | None:
    """``judges/votes.parquet`` (the only place batch runs, suites of pipelines, keep
    their votes), else, for case and pipeline runs logged before it, the report's."""
    stored = read(VOTES)
    if stored is not None:
        return read_votes(stored)
    if tags.get("docevals.report_kind") not in _VOTING_REPORTS:
        return None
    report = _json(read(REPORT), REPORT, source)
    return vote_table(report) if isinstance(report, dict) else None


def snapshot_from_artifacts(
    *,
    run_id: str,
    run_name: str | None,
    experiment: str | None,
    params: Mapping[str, str],
    metrics: Mapping[str, float],
    tags: Mapping[str, str],
    read: Reader,
    datasets: Mapping[str, str] | None = None,
) -> RunSnapshot:
    """Build a snapshot from a run's params, metrics and tags and an artifact reader.

    ``datasets`` maps the run's ground-truth inputs to their content digests.
    """
    source = f"run {run_name or run_id}"
    documents = read(DOCUMENTS)
    fields = read(FIELDS)
    cases = read(CASES)
    votes = _votes(tags, read, source)
    operations = _json(read(OPERATIONS), OPERATIONS, source)
    texts = {}
    for name in TEXTS:
        data = read(name)
        if data is not None:
            texts[name] = data.decode("utf-8", errors="replace")
    logged_index = _json(read(INDEX), INDEX, source) or {}
    try:
        # Old and new runs under one naming: table figures as keys, old headline keys
        # renamed (see figure_tables).
        figures, index = all_figures(metrics, logged_index, read)
    except ValueError as exc:
        raise InputError(str(exc), source=source) from None
    try:
        return RunSnapshot(
            run_id=run_id,
            run_name=run_name,
            experiment=experiment,
            params=dict(params),
            metrics=figures,
            tags=dict(tags),
            documents=document_table(documents) if documents is not None else None,
            fields=field_table(fields) if fields is not None else None,
            cases=case_table(cases) if cases is not None else None,
            votes=votes,
            operations=(operations or {}).get("operations") if operations else None,
            panels=_json(read(PANELS), PANELS, source),
            texts=texts,
            metrics_index=index,
            datasets=dict(datasets or {}),
        )
    except (KeyError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise exc.located(source=source) from None
        raise InputError(
            f"the run's result tables are not in the expected layout ({exc})",
            source=source,
            expected="tables written by docevals (see docs/mlflow-runs.md)",
        ) from None
