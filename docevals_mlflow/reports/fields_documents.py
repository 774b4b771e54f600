"""Per-document attribute tables of the fields Markdown report, worst documents and
wrong rows first, and the ground truth that contradicts the schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docevals_mlflow.core.formatting import defined_number, metric_text, score_text
from docevals_mlflow.reports.fields_summary import matched_of
from docevals_mlflow.reports.markdown import cell, inline_code, table, value_cell
from docevals_mlflow.reports.ratings import icon

MAX_INVALID_EXAMPLES = 10
"""Examples of ground truth that contradicts the schema; the JSON report has the rest."""


def confidence_text(value: Any) -> str:
    # "N/A" (not "n/a") as in the IDP report: confidence absent from the prediction.
    return "N/A" if defined_number(value) is None else score_text(value)


def invalid_expected_section(report: Mapping[str, Any]) -> list[str]:
    """Ground truth whose shape contradicts the schema (``--allow-shape-mismatch``):
    counted and left out of the figures, so it is shown before them."""
    invalid = report.get("invalid_expected")
    if not isinstance(invalid, Mapping):
        return []
    documents = int(invalid.get("documents") or 0)
    examples: Sequence[Mapping[str, Any]] = invalid.get("examples") or []
    if not documents and not examples:
        return []
    lines = [
        "## ⚠️ Ground truth that contradicts the schema",
        "",
        f"{documents} document(s) have ground truth whose shape contradicts the schema "
        "(`--allow-shape-mismatch`): they are counted here and left out of every figure "
        "below. Fix the ground truth or the schema.",
    ]
    shown = examples[:MAX_INVALID_EXAMPLES]
    if shown:
        lines += [
            "",
            *table(
                ["Document", "Source", "Line", "Path", "Schema expects", "Found"],
                (
                    (
                        example.get("id"),
                        example.get("source"),
                        example.get("line"),
                        example.get("path"),
                        example.get("schema"),
                        value_cell(example.get("found")),
                    )
                    for example in shown
                ),
            ),
        ]
    if len(examples) > len(shown):
        lines += [
            "",
            f"*{len(shown)} of {len(examples)} examples shown; the JSON report has all of them.*",
        ]
    return lines


def _row_matched(row: Mapping[str, Any]) -> bool:
    if "matched" in row:
        return bool(row["matched"])
    return row.get("outcome") in ("TP", "TN")


def _document_order(documents: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    # Worst first: lowest F1, then documents without any defined F1 (nothing to
    # compare), each group in report order (the sort is stable).
    def key(document: Mapping[str, Any]) -> tuple[int, float]:
        f1 = defined_number(document.get("metrics", {}).get("f1"))
        return (1, 0.0) if f1 is None else (0, f1)

    return sorted(documents, key=key)


def _document_section(document: Mapping[str, Any], max_rows: int) -> list[str]:
    counts = document.get("counts", {})
    matched, total = matched_of(counts)
    f1 = document.get("metrics", {}).get("f1")
    document_class = document.get("class")
    lines = [
        f"### Document {inline_code(document.get('id'))}"
        + (f" ({cell(document_class)})" if document_class is not None else ""),
        "",
        f"{icon('f1', f1)} F1 {metric_text(f1)} · {matched}/{total} attributes matched",
        "",
    ]
    rows: Sequence[Mapping[str, Any]] = document.get("rows", [])
    if not rows:
        return [*lines, "No attributes to compare."]
    # Wrong rows first so that a capped table still shows the problems; the sort is
    # stable, so each group keeps the document's order.
    ordered = sorted(rows, key=_row_matched)
    shown = ordered[: max(0, max_rows)]
    lines += table(
        ["Status", "Attribute", "Expected", "Actual", "Confidence", "Score", "Method", "Reason"],
        (
            (
                "✅" if _row_matched(row) else "❌",
                row.get("path"),
                value_cell(row.get("expected")),
                value_cell(row.get("actual")),
                confidence_text(row.get("confidence")),
                score_text(row.get("score")),
                row.get("method"),
                row.get("reason"),
            )
            for row in shown
        ),
    )
    hidden = len(ordered) - len(shown)
    if hidden:
        wrong_hidden = sum(1 for row in ordered[len(shown) :] if not _row_matched(row))
        lines += [
            "",
            f"*… and {hidden} more {'row' if hidden == 1 else 'rows'} ({wrong_hidden} "
            "wrong); the JSON report has all of them.*",
        ]
    return lines


def documents_section(
    report: Mapping[str, Any], max_rows_per_document: int, max_documents: int
) -> list[str]:
    """The "Documents" section: up to ``max_documents`` attribute tables, lowest F1
    first, each capped at ``max_rows_per_document`` rows."""
    documents: Sequence[Mapping[str, Any]] = report.get("documents", [])
    lines = ["## Documents", ""]
    if not documents:
        return [*lines, "No documents were compared."]
    if not any("rows" in document for document in documents):
        return [
            *lines,
            "Attribute rows were not kept for this report (`--no-rows`); the per-field "
            "and per-class tables above cover every document.",
        ]
    ordered = _document_order(documents)
    shown = ordered[: max(0, max_documents)]
    if len(shown) < len(ordered):
        lines += [
            f"The {len(shown)} documents with the lowest F1 of {len(ordered)}; "
            f"the JSON report has all of them.",
            "",
        ]
    for index, document in enumerate(shown):
        if index:
            lines.append("")
        lines += _document_section(document, max_rows_per_document)
    return lines
