"""A run as the comparison sees it: what was logged, in plain columnar tables.

A :class:`RunSnapshot` is everything ``compare`` needs from one run: its params,
metrics and tags, the per-document confusion cells (whole documents and per field),
the per-case verdicts and judge votes of evaluations, the operation spec texts and
the judge panel definition. :mod:`docevals_mlflow.tracking.snapshots` builds one from
an MLflow run, a run bundle or a report file; tests build them directly.

Tables are columnar (one list per column) rather than one model per row: a run of
thousands of documents and dozens of fields stays cheap to validate and turns into
numpy arrays without a per-row step. Nothing here imports pandas or mlflow.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Self, get_args

from pydantic import Field, model_validator

from docevals_mlflow.core.model import FrozenModel

CELLS = ("tp", "fa", "fd", "fn", "tn")
"""The confusion cells of DESIGN §3, in the order every cell array uses."""


def _same_lengths(model: FrozenModel, columns: tuple[str, ...]) -> None:
    lengths = {name: len(getattr(model, name)) for name in columns}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name}={length}" for name, length in lengths.items())
        raise ValueError(f"columns have different lengths ({shown})")


def _unique(keys: list[tuple[str, ...]], what: str) -> None:
    seen: set[tuple[str, ...]] = set()
    for key in keys:
        if key in seen:
            raise ValueError(f"{what} {'/'.join(key)!r} appears twice")
        seen.add(key)


class ColumnTable(FrozenModel):
    """A table held as one list per column, all of the same length.

    ``key_columns`` identify a row (each combination appears once; ``row_name`` says
    what a row is in the error). :meth:`from_records` reads one dict per row: text
    columns must be present, optional ones may be missing, counts default to 0.
    """

    key_columns: ClassVar[tuple[str, ...]] = ()
    row_name: ClassVar[str] = "row"

    @model_validator(mode="after")
    def _check(self) -> Self:
        _same_lengths(self, tuple(type(self).model_fields))
        keys = zip(*(getattr(self, name) for name in self.key_columns), strict=True)
        _unique(list(keys), self.row_name)
        return self

    def __len__(self) -> int:
        return len(getattr(self, self.key_columns[0]))

    @classmethod
    def from_records(cls, records: list[dict[str, Any]]) -> Self:
        """From one dict per row, keyed by column name."""
        columns: dict[str, list[Any]] = {}
        for name, info in cls.model_fields.items():
            (kind,) = get_args(info.annotation)
            if kind is int:
                columns[name] = [int(record.get(name, 0)) for record in records]
            elif kind is str:
                columns[name] = [str(record[name]) for record in records]
            else:  # optional text
                columns[name] = [record.get(name) for record in records]
        return cls(**columns)


class DocumentTable(ColumnTable):
    """Confusion cells per document (``results/documents.parquet``)."""

    key_columns = ("document_id",)
    row_name = "document"

    document_id: list[str]
    document_class: list[str | None]
    tp: list[int]
    fa: list[int]
    fd: list[int]
    fn: list[int]
    tn: list[int]


class FieldTable(ColumnTable):
    """Confusion cells per document and field (summed over the field's leaves).

    ``field`` is the field template (``$.line_items[].amount``), or
    ``"<template> [<method>]"`` when one run compares a template with several methods.
    A document without an entry for a field had no leaf of it (all cells zero).
    """

    key_columns = ("document_id", "field")
    row_name = "document/field"

    document_id: list[str]
    field: list[str]
    tp: list[int]
    fa: list[int]
    fd: list[int]
    fn: list[int]
    tn: list[int]


class CaseTable(ColumnTable):
    """One verdict per evaluated stage of a case (``results/cases.parquet``)."""

    key_columns = ("case_id", "stage_id")
    row_name = "case/stage"

    case_id: list[str]
    stage_id: list[str]
    operation: list[str | None]
    verdict: list[str]
    failure_context: list[str | None]


class VoteTable(ColumnTable):
    """One judge's verdict on one stage of one case.

    ``metric`` is the judge or panel metric; ``member`` the panel variant (for a
    single judge, the metric name itself, as the run's ``judge/<member>/pass_rate``
    metrics name it). ``verdict`` is ``None`` when the judge failed to answer.
    """

    key_columns = ("case_id", "stage_id", "metric", "member")
    row_name = "case/stage/metric/member"

    case_id: list[str]
    stage_id: list[str]
    metric: list[str]
    member: list[str]
    provider: list[str | None]
    model: list[str | None]
    group: list[str | None]
    verdict: list[str | None]


class RunSnapshot(FrozenModel):
    """One run, loaded for comparison (see the module docstring).

    ``operations`` is the ``operations`` mapping of ``specs/operations.json`` (operation
    → ``{"variants": {sha: {action_instruction, evaluation_spec, rubric, ...}}}``);
    ``panels`` is ``judges/panel.json`` (panel metric name → definition); ``texts``
    holds other spec texts worth diffing, by artifact path (``specs/prompt.txt``,
    ``specs/schema.json``); ``metrics_index`` maps metric key segments back to the
    fields, classes and stages they stand for.
    """

    run_id: str
    run_name: str | None = None
    experiment: str | None = None
    params: dict[str, str] = Field(default_factory=dict)
    metrics: dict[str, float] = Field(default_factory=dict)
    tags: dict[str, str] = Field(default_factory=dict)
    documents: DocumentTable | None = None
    fields: FieldTable | None = None
    cases: CaseTable | None = None
    votes: VoteTable | None = None
    operations: dict[str, Any] | None = None
    panels: dict[str, Any] | None = None
    texts: dict[str, str] = Field(default_factory=dict)
    metrics_index: dict[str, dict[str, str]] = Field(default_factory=dict)
    datasets: dict[str, str] = Field(default_factory=dict)
    """The ground truth the run was evaluated against: dataset name → content digest."""

    def __repr_args__(self) -> Iterator[tuple[str, Any]]:
        # The tables can hold millions of values: show their sizes, not their contents.
        yield "run_id", self.run_id
        yield "run_name", self.run_name
        for name in ("documents", "fields", "cases", "votes"):
            table = getattr(self, name)
            if table is not None:
                yield name, f"{len(table)} rows"
        yield "params", len(self.params)
        yield "metrics", len(self.metrics)

    @property
    def label(self) -> str:
        """The run name, else the first eight characters of the run id."""
        return self.run_name or self.run_id[:8]

    @property
    def kind(self) -> str | None:
        """``docevals.kind`` (``evaluation``, ``comparison``, ...), when tagged."""
        return self.tags.get("docevals.kind")

    @property
    def report_kind(self) -> str | None:
        """``docevals.report_kind`` (``fields``, ``case``, ``pipeline``, ``suite``)."""
        return self.tags.get("docevals.report_kind")

    def source_of(self, namespace: str, segment: str) -> str:
        """What a metric key segment stands for (the segment itself when unknown)."""
        return self.metrics_index.get(namespace, {}).get(segment, segment)
