"""Synthetic runs with known effects, built directly as snapshots (no MLflow)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from docevals_mlflow.compare import CaseTable, DocumentTable, FieldTable, RunSnapshot, VoteTable

FIELDS = ("$.number", "$.date", "$.vendor", "$.total", "$.lines[].amount")


def simulate_cells(
    rng: np.random.Generator, documents: int, error_rates: Sequence[float], leaves: int = 2
) -> np.ndarray:
    """Per document and field, ``leaves`` leaves that are TP or, with the field's error
    rate, FD: cells shaped ``(documents, fields, 5)``."""
    rates = np.asarray(error_rates, dtype=float)
    wrong = rng.binomial(leaves, np.broadcast_to(rates, (documents, len(rates))))
    cells = np.zeros((documents, len(rates), 5), dtype=np.int64)
    cells[..., 0] = leaves - wrong
    cells[..., 2] = wrong
    return cells


def field_run(
    run_id: str,
    cells: np.ndarray,
    *,
    fields: Sequence[str] = FIELDS,
    ids: Sequence[str] | None = None,
    classes: Sequence[str] | None = None,
    params: Mapping[str, str] | None = None,
    texts: Mapping[str, str] | None = None,
    metrics: Mapping[str, float] | None = None,
) -> RunSnapshot:
    """A field comparison run from per-document, per-field cells."""
    documents = cells.shape[0]
    ids = list(ids) if ids is not None else [f"doc-{index:04d}" for index in range(documents)]
    totals = cells.sum(axis=1)
    cell_names = ("tp", "fa", "fd", "fn", "tn")
    document_table = DocumentTable(
        document_id=ids,
        document_class=list(classes) if classes is not None else ["Invoice"] * documents,
        **{name: totals[:, index].tolist() for index, name in enumerate(cell_names)},
    )
    field_table = FieldTable(
        document_id=[doc for doc in ids for _ in fields],
        field=[field for _ in ids for field in fields],
        **{name: cells[:, :, index].reshape(-1).tolist() for index, name in enumerate(cell_names)},
    )
    return RunSnapshot(
        run_id=run_id,
        run_name=run_id,
        params=dict(params or {}),
        metrics=dict(metrics or {}),
        tags={"docevals.kind": "evaluation", "docevals.report_kind": "fields"},
        documents=document_table,
        fields=field_table,
        texts=dict(texts or {}),
    )


def case_run(
    run_id: str,
    verdicts: Mapping[tuple[str, str], str],
    *,
    votes: Mapping[tuple[str, str], Mapping[str, str | None]] | None = None,
    operations: dict[str, Any] | None = None,
    panels: dict[str, Any] | None = None,
    metrics: Mapping[str, float] | None = None,
) -> RunSnapshot:
    """A case/pipeline evaluation run: a verdict per (case, stage) and panel votes."""
    keys = list(verdicts)
    records = [
        {
            "case_id": case,
            "stage_id": stage,
            "metric": "panel",
            "member": member,
            "provider": member.split("-")[0],
            "model": f"{member}-model",
            "group": None,
            "verdict": verdict,
        }
        for (case, stage), members in (votes or {}).items()
        for member, verdict in members.items()
    ]
    return RunSnapshot(
        run_id=run_id,
        run_name=run_id,
        tags={"docevals.kind": "evaluation", "docevals.report_kind": "pipeline"},
        metrics=dict(metrics or {}),
        cases=CaseTable(
            case_id=[case for case, _ in keys],
            stage_id=[stage for _, stage in keys],
            operation=[stage for _, stage in keys],
            verdict=[verdicts[key] for key in keys],
            failure_context=[None] * len(keys),
        ),
        votes=VoteTable.from_records(records) if records else None,
        operations=operations,
        panels=panels,
    )
