"""The ``table`` stage metric: TEDS and TEDS-S of a stage's table output (see
:mod:`docevals_mlflow.evaluation.document_metrics`)."""

from __future__ import annotations

from typing import Any

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.docmetrics.table_html import TableNode, table_from_grid
from docevals_mlflow.docmetrics.tables import as_table, score_table
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.evaluation.document_metrics import (
    DocumentMetricBase,
    TableFormat,
    threshold_problem,
    verdict_of,
)


def _grid_rows(value: list[Any], where: str) -> TableNode:
    """A list of rows (lists of cell values, or dicts as CSV rows: keys become a header
    row) as a table tree."""
    header_rows = 0
    rows: list[list[Any]] = []
    if value and all(isinstance(row, dict) for row in value):
        columns = list(value[0])
        rows = [columns, *([row.get(column) for column in columns] for row in value)]
        header_rows = 1
    else:
        for number, row in enumerate(value, 1):
            if not isinstance(row, list):
                raise InputError(
                    f"{where}: row {number} is {type(row).__name__}",
                    expected="a list of cell values per row",
                )
            rows.append(row)
    cells: list[list[str]] = []
    for number, row in enumerate(rows, 1):
        texts = []
        for column, cell in enumerate(row, 1):
            if cell is not None and not isinstance(cell, (str, int, float, bool)):
                raise InputError(
                    f"{where}: row {number}, column {column} is {type(cell).__name__}",
                    expected="cell values that are text, numbers or null",
                )
            texts.append("" if cell is None else str(cell))
        cells.append(texts)
    return table_from_grid(cells, header_rows=header_rows)


def _read_table(value: Any, where: str, *, strict: bool, format: TableFormat) -> TableNode | None:
    """``value`` (HTML, a Markdown pipe table, a list of rows) as a tree; ``None`` when
    empty. ``auto`` reads text holding ``<table`` as HTML and other text as Markdown."""
    if isinstance(value, list):
        return _grid_rows(value, where) if value else None
    if value is None or isinstance(value, str):
        chosen = format
        if format == "auto" and isinstance(value, str):
            chosen = "html" if "<table" in value.lower() else "markdown"
        return as_table(
            value,
            source=where,
            strict=strict,
            format="markdown" if chosen == "markdown" else "html",
        )
    raise InputError(
        f"{where}: expected a table (HTML or Markdown text, or a list of rows), "
        f"got {type(value).__name__}"
    )


def _cells(table: TableNode | None) -> tuple[int, int]:
    if table is None:
        return 0, 0
    rows = table.rows()
    return len(rows), sum(len(row.children) for row in rows)


_NO_TABLE = ("no <table> found", "no pipe table found")


class TableMetric(DocumentMetricBase):
    """TEDS and TEDS-S of a stage's table output (see :mod:`docevals_mlflow.docmetrics.tables`).

    Tables are HTML or Markdown text (``format``: ``auto`` reads text holding
    ``<table`` as HTML, other text as a Markdown pipe table), or lists of rows (cell
    values, or dicts such as a CSV reference's rows, whose keys become a header row);
    each side is read on its own, so an HTML reference can score a Markdown
    prediction. Both figures are reported; the verdict reads TEDS-S with
    ``structure_only`` and TEDS otherwise: it passes at ``min_score`` or above, or
    without one only at 1. An empty prediction, or one holding no table, scores 0; a
    prediction that is not a table (a number, a cell outside a row) fails with 0.
    """

    def __init__(
        self,
        name: str = "table",
        *,
        structure_only: bool = False,
        min_score: float | None = None,
        path: str | None = None,
        format: TableFormat = "auto",
    ) -> None:
        problem = threshold_problem("table", None, None, min_score)
        if problem:
            raise ConfigurationError(problem)
        if format not in ("auto", "html", "markdown"):
            raise ConfigurationError(f"format {format!r} is not one of auto, html, markdown")
        super().__init__(name, path)
        self.structure_only = structure_only
        self.min_score = min_score
        self.format: TableFormat = format

    def config(self) -> dict[str, Any]:
        """Settings that change this metric's result."""
        return {
            "structure_only": self.structure_only,
            "min_score": self.min_score,
            "path": self.path,
            "format": self.format,
        }

    def _fits(self, content: Any) -> bool:
        return isinstance(content, (str, list))

    def _wants(self) -> str:
        return "a table (HTML or Markdown text, or a list of rows)"

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Score the predicted table against the reference table."""
        reference, basis, notes = self._reference(case)
        if reference is None:
            return self._not_applicable(basis, notes)
        where = self._where(case, reference)
        want = _read_table(self._expected(case, reference), where, strict=True, format=self.format)
        if want is None:
            raise InputError(f"{where}: the reference table is empty", expected="a table")
        predicted, problem = self._predicted(case)
        got: TableNode | None = None
        if problem is None:
            try:
                got = _read_table(predicted, "the prediction", strict=False, format=self.format)
            except InputError as error:
                if error.message not in _NO_TABLE:
                    problem = str(error)
                else:
                    notes = [*notes, "the prediction holds no table: scored 0"]
        rows, cells = _cells(want)
        predicted_rows, predicted_cells = _cells(got)
        counts = {"reference_rows": rows, "reference_cells": cells}
        details = {
            "reference_id": reference.id,
            "path": self.path,
            "structure_only": self.structure_only,
        }
        if problem is not None:
            return MetricResult(
                name=self.name,
                basis=basis,
                verdict="fail",
                scores={"teds": 0.0, "teds_s": 0.0},
                counts=counts,
                details={**details, "prediction_problem": problem},
                notes=[*notes, f"not scored as a table: {problem}"],
            )
        score = score_table(want, got, source=where)
        scores = {"teds": score.teds, "teds_s": score.teds_structure}
        figure = scores["teds_s" if self.structure_only else "teds"]
        return MetricResult(
            name=self.name,
            basis=basis,
            verdict=verdict_of(figure, lower_is_better=False, bound=self.min_score),
            scores=dict(scores),
            counts={
                **counts,
                "predicted_rows": predicted_rows,
                "predicted_cells": predicted_cells,
                "reference_nodes": score.expected_nodes,
                "predicted_nodes": score.predicted_nodes,
            },
            details=details,
            notes=notes,
        )
