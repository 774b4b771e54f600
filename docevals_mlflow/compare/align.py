"""Pairing two runs' documents and cases by id, as arrays the statistics can use.

Documents are matched by ``document_id`` and cases by ``(case_id, stage_id)``;
what only one run holds is listed, never silently dropped or counted as a miss.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from docevals_mlflow.compare.snapshot import CELLS, DocumentTable, FieldTable, RunSnapshot

IntArray = npt.NDArray[np.int64]
UNCLASSIFIED = "unclassified"


def _cell_matrix(table: DocumentTable | FieldTable) -> IntArray:
    return np.column_stack([np.asarray(getattr(table, cell), dtype=np.int64) for cell in CELLS])


def document_cells(snapshot: RunSnapshot, ids: Sequence[str]) -> IntArray:
    """Whole-document cells of ``ids`` (in that order), shaped ``(len(ids), 5)``."""
    table = snapshot.documents
    out = np.zeros((len(ids), 5), dtype=np.int64)
    if table is None or not ids:
        return out
    position = {doc: index for index, doc in enumerate(table.document_id)}
    rows = np.array([position[doc] for doc in ids], dtype=np.int64)
    out[:] = _cell_matrix(table)[rows]
    return out


def field_cells(snapshot: RunSnapshot, ids: Sequence[str], fields: Sequence[str]) -> IntArray:
    """Per-field cells of ``ids`` x ``fields``, shaped ``(len(ids), len(fields), 5)``.

    A document with no entry for a field (no leaf of it) has zero cells there.
    """
    out = np.zeros((len(ids), len(fields), 5), dtype=np.int64)
    table = snapshot.fields
    if table is None or not ids or not fields:
        return out
    row_of = {doc: index for index, doc in enumerate(ids)}
    column_of = {field: index for index, field in enumerate(fields)}
    keep = [
        index
        for index, (doc, field) in enumerate(zip(table.document_id, table.field, strict=True))
        if doc in row_of and field in column_of
    ]
    if not keep:
        return out
    rows = np.array([row_of[table.document_id[index]] for index in keep], dtype=np.int64)
    columns = np.array([column_of[table.field[index]] for index in keep], dtype=np.int64)
    np.add.at(out, (rows, columns), _cell_matrix(table)[keep])
    return out


def class_cells(cells: IntArray, classes: Sequence[str]) -> tuple[list[str], IntArray]:
    """Cells per document class: ``(names, (documents, classes, 5))`` with zeros for the
    classes a document is not in."""
    names = sorted(set(classes))
    column_of = {name: index for index, name in enumerate(names)}
    out = np.zeros((len(classes), len(names), 5), dtype=np.int64)
    if classes:
        out[np.arange(len(classes)), [column_of[name] for name in classes]] = cells
    return names, out


def field_names(snapshots: Sequence[RunSnapshot]) -> list[str]:
    """Every field any of the runs compared, in order of first appearance."""
    names: dict[str, None] = {}
    for snapshot in snapshots:
        if snapshot.fields is not None:
            names.update(dict.fromkeys(snapshot.fields.field))
    return list(names)


def common_documents(snapshots: Sequence[RunSnapshot]) -> list[str]:
    """Ids every run holds, in the first run's order."""
    tables = [snapshot.documents for snapshot in snapshots]
    if any(table is None for table in tables):
        return []
    first, *others = [table for table in tables if table is not None]
    shared = set(first.document_id)
    for table in others:
        shared &= set(table.document_id)
    return [doc for doc in first.document_id if doc in shared]


@dataclass(frozen=True)
class AlignedDocuments:
    """Two runs' documents matched by id, and what only one of them holds."""

    ids: list[str]
    classes: list[str]
    baseline_only: list[str]
    candidate_only: list[str]
    baseline: IntArray
    """Whole-document cells, ``(documents, 5)``."""
    candidate: IntArray
    fields: list[str]
    baseline_fields: IntArray
    """Per-field cells, ``(documents, fields, 5)``."""
    candidate_fields: IntArray


def align_documents(baseline: RunSnapshot, candidate: RunSnapshot) -> AlignedDocuments | None:
    """Match the documents of two field comparison runs (``None``: either run has none)."""
    if baseline.documents is None or candidate.documents is None:
        return None
    ids = common_documents([baseline, candidate])
    matched = set(ids)
    class_of = dict(
        zip(baseline.documents.document_id, baseline.documents.document_class, strict=True)
    )
    fields = field_names([baseline, candidate])
    return AlignedDocuments(
        ids=ids,
        classes=[class_of.get(doc) or UNCLASSIFIED for doc in ids],
        baseline_only=[doc for doc in baseline.documents.document_id if doc not in matched],
        candidate_only=[doc for doc in candidate.documents.document_id if doc not in matched],
        baseline=document_cells(baseline, ids),
        candidate=document_cells(candidate, ids),
        fields=fields,
        baseline_fields=field_cells(baseline, ids, fields),
        candidate_fields=field_cells(candidate, ids, fields),
    )


@dataclass(frozen=True)
class AlignedCases:
    """Two runs' stage verdicts matched by ``(case_id, stage_id)``."""

    keys: list[tuple[str, str]]
    operations: list[str | None]
    baseline: list[str]
    candidate: list[str]
    baseline_only: list[tuple[str, str]]
    candidate_only: list[tuple[str, str]]


def align_cases(baseline: RunSnapshot, candidate: RunSnapshot) -> AlignedCases | None:
    """Match the evaluated stages of two runs (``None``: either run has none)."""
    first, second = baseline.cases, candidate.cases
    if first is None or second is None:
        return None
    first_keys = list(zip(first.case_id, first.stage_id, strict=True))
    second_keys = list(zip(second.case_id, second.stage_id, strict=True))
    second_at = {key: index for index, key in enumerate(second_keys)}
    matched = [(index, second_at[key]) for index, key in enumerate(first_keys) if key in second_at]
    matched_keys = {first_keys[index] for index, _ in matched}
    return AlignedCases(
        keys=[first_keys[index] for index, _ in matched],
        operations=[first.operation[index] or second.operation[other] for index, other in matched],
        baseline=[first.verdict[index] for index, _ in matched],
        candidate=[second.verdict[other] for _, other in matched],
        baseline_only=[key for key in first_keys if key not in matched_keys],
        candidate_only=[key for key in second_keys if key not in matched_keys],
    )
