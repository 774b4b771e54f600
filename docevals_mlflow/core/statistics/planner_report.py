"""Reading a field report for the sample-size planner: per-document cells, overall and
per field template, and the pairing of two reports by document id."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from docevals_mlflow.core.strict_json import load_json_file
from docevals_mlflow.errors import InputError

_CELLS = ("tp", "fa", "fd", "fn", "tn")
_OUTCOMES = ("TP", "FA", "FD", "FN", "TN")


def load_fields_report(
    report: Mapping[str, Any] | str | os.PathLike[str], role: str
) -> tuple[Mapping[str, Any], str]:
    """The report's dict and a name for messages (its path, or ``role``)."""
    if isinstance(report, Mapping):
        data: Any = report
        source = role
    else:
        source = os.fspath(report)
        # The package's strict reader: the same messages as every other input (missing
        # file, FIFO, empty, malformed JSON with its line and column, repeated keys).
        data = load_json_file(Path(source), what=role)
    if not isinstance(data, Mapping) or data.get("kind") != "fields":
        raise InputError(
            f"{role} is not a field comparison report",
            source=source,
            expected='the JSON of `docevals fields` ("kind": "fields")',
        )
    if not isinstance(data.get("documents"), list) or not data["documents"]:
        raise InputError(
            f"{role} lists no documents", source=source, path="documents", expected="a list"
        )
    return data, source


def document_cells(report: Mapping[str, Any], source: str = "report") -> dict[str, Any]:
    """Per-document cells of a field report: ``{"ids", "overall", "fields", "rows"}``.

    ``overall`` is ``(documents, 5)``; ``fields`` maps each field template to its
    ``(documents, 5)`` cells summed from the document's rows (empty when the report
    was written without rows)."""
    documents = report["documents"]
    ids: list[str] = []
    overall = np.zeros((len(documents), 5), dtype=np.int64)
    per_field: dict[str, np.ndarray[Any, Any]] = {}
    has_rows = True
    for index, entry in enumerate(documents):
        counts = entry.get("counts") if isinstance(entry, Mapping) else None
        if not isinstance(counts, Mapping) or not all(
            isinstance(counts.get(cell), int) for cell in _CELLS
        ):
            raise InputError(
                "a document has no confusion counts",
                source=source,
                path=f"documents[{index}].counts",
                expected="integers tp, fa, fd, fn, tn",
            )
        ids.append(str(entry.get("id", index)))
        overall[index] = [counts[cell] for cell in _CELLS]
        rows = entry.get("rows")
        if not isinstance(rows, list):
            has_rows = False
            continue
        for row in rows:
            template, outcome = row.get("template"), row.get("outcome")
            if outcome not in _OUTCOMES or not isinstance(template, str):
                continue
            cells = per_field.get(template)
            if cells is None:
                cells = per_field[template] = np.zeros((len(documents), 5), dtype=np.int64)
            cells[index, _OUTCOMES.index(outcome)] += 1
    return {"ids": ids, "overall": overall, "fields": per_field if has_rows else {}}


def paired_order(first: dict[str, Any], second: dict[str, Any], source: str) -> list[int]:
    """Indices into ``second`` of ``first``'s documents (the paired design)."""
    positions = {doc: index for index, doc in enumerate(second["ids"])}
    missing = [doc for doc in first["ids"] if doc not in positions]
    if missing:
        raise InputError(
            f"{len(missing)} document(s) of the report are not in the other report "
            f"(first: {missing[0]!r})",
            source=source,
            expected="two reports over the same documents",
        )
    return [positions[doc] for doc in first["ids"]]
