"""The tables of the fields Markdown report: classes, fields, discovered attributes,
lists and unpaired documents (see :mod:`docevals_mlflow.reports.fields_markdown`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docevals_mlflow.core.formatting import defined_number
from docevals_mlflow.reports.fields_summary import cells
from docevals_mlflow.reports.markdown import CellText, inline_code, table
from docevals_mlflow.reports.ratings import rated

DISCOVERED_MARK = "🔍"
MAX_UNPAIRED_IDS = 50
"""Unpaired ids listed per side; the JSON report has all of them."""
FAR_UNDEFINED_MARK = "†"


def classes_section(report: Mapping[str, Any]) -> list[str]:
    """The per-class table (empty when the report has no classes)."""
    classes: Mapping[str, Any] = report.get("classes", {})
    if not classes:
        return []
    return [
        "## Document classes",
        "",
        *table(
            [
                "Class",
                "Configured",
                "Documents",
                "TP",
                "FA",
                "FD",
                "FN",
                "TN",
                "Precision",
                "Recall",
                "F1",
                "Macro F1",
            ],
            (
                (
                    name,
                    "yes" if entry.get("configured") else "no (inferred)",
                    entry.get("documents", 0),
                    *cells(entry["counts"]),
                    rated("precision", entry["metrics"].get("precision")),
                    rated("recall", entry["metrics"].get("recall")),
                    rated("f1", entry["metrics"].get("f1")),
                    rated("f1", entry.get("macro_f1")),
                )
                for name, entry in classes.items()
            ),
        ),
    ]


def _field_rows_table(fields: Sequence[Mapping[str, Any]]) -> list[str]:
    """The per-field table; an Unparsed column only when some field has unparsed values."""
    unparsed = any(entry.get("unparsed") for entry in fields)
    headers = ["Template", "Method", "TP", "FA", "FD", "FN", "TN", "Precision", "Recall", "F1"]
    if unparsed:
        headers.append("Unparsed")
    headers.append("Discovered")
    return table(
        headers,
        (
            (
                entry["template"],
                entry["method"],
                *cells(entry["counts"]),
                rated("precision", entry["metrics"].get("precision")),
                rated("recall", entry["metrics"].get("recall")),
                rated("f1", entry["metrics"].get("f1")),
                *([int(entry.get("unparsed") or 0)] if unparsed else []),
                DISCOVERED_MARK if entry.get("discovered") else "",
            )
            for entry in fields
        ),
    )


def fields_section(report: Mapping[str, Any]) -> list[str]:
    """The per-field table with its legends (empty without fields)."""
    fields: Sequence[Mapping[str, Any]] = report.get("fields", [])
    if not fields:
        return []
    lines = ["## Fields", "", *_field_rows_table(fields)]
    if any(entry.get("discovered") for entry in fields):
        lines += [
            "",
            f"{DISCOVERED_MARK} discovered: the field is in the data but not in the schema, "
            "so it was compared with an inferred rule.",
        ]
    if any(entry.get("unparsed") for entry in fields):
        lines += [
            "",
            "Unparsed: values of a numeric field, expected or predicted, that do not read "
            "as numbers.",
        ]
    return lines


def discovered_section(report: Mapping[str, Any]) -> list[str]:
    """Attributes in the data but not in the schema, with their own figures.

    Left out of the headline figures unless ``--discovered include``; either way the
    section says which, so nobody adds them in twice or looks for them in vain.
    """
    discovered = report.get("discovered")
    if not isinstance(discovered, Mapping) or not discovered:
        return []
    included = bool(discovered.get("included"))
    fields: Sequence[Mapping[str, Any]] = discovered.get("fields") or []
    counts = cells(discovered.get("counts") or {})
    metrics: Mapping[str, Any] = discovered.get("metrics") or {}
    if included:
        lines = [
            f"## {DISCOVERED_MARK} Discovered attributes (included in the figures above)",
            "",
            "These attributes are in the data but not in the schema; they were compared "
            "with inferred rules and, with `--discovered include`, are counted in every "
            "figure above.",
        ]
    else:
        lines = [
            f"## {DISCOVERED_MARK} Discovered attributes (not in the figures above)",
            "",
            "These attributes are in the data but not in the schema; they were compared "
            "with inferred rules and are left out of every figure above. "
            "`--discovered include` puts them back.",
        ]
    lines += [
        "",
        f"Cells: TP {counts[0]} · FA {counts[1]} · FD {counts[2]} · FN {counts[3]} "
        f"· TN {counts[4]} · precision {rated('precision', metrics.get('precision'))} "
        f"· recall {rated('recall', metrics.get('recall'))} · F1 "
        f"{rated('f1', metrics.get('f1'))}.",
    ]
    if fields:
        lines += ["", *_field_rows_table(fields)]
    return lines


def _far_cell(entry: Mapping[str, Any]) -> str:
    metrics = entry.get("metrics")
    if not isinstance(metrics, Mapping):
        return "n/a"
    far = metrics.get("far")
    if defined_number(far) is None:
        # Undefined, not zero: with no list expected empty nothing could be invented.
        return f"n/a {FAR_UNDEFINED_MARK}"
    return rated("far", far)


def lists_section(report: Mapping[str, Any]) -> list[str]:
    """The list-item table and its legend (empty without lists)."""
    lists: Sequence[Mapping[str, Any]] = report.get("lists", [])
    if not lists:
        return []
    pairing = any("pairing" in entry for entry in lists)
    headers = ["List", "Method"]
    if pairing:
        headers.append("Pairing")
    headers += ["Matched", "Weak", "Missed", "Extra", "Both empty", "F1", "FAR"]
    lines = [
        "## List items",
        "",
        *table(
            headers,
            (
                (
                    entry["template"],
                    entry["method"],
                    *([entry.get("pairing") or "n/a"] if pairing else []),
                    entry.get("matched", 0),
                    entry.get("weak", 0),
                    entry.get("missed", 0),
                    entry.get("extra", 0),
                    entry.get("empty", 0),
                    rated("f1", (entry.get("metrics") or {}).get("f1")),
                    CellText(_far_cell(entry)),
                )
                for entry in lists
            ),
        ),
        "",
        "Matched: expected items paired with a predicted item (TP) · Weak: pairs below the "
        "match threshold (FD) · Missed: expected items left unpaired (FN) · Extra: "
        "predicted items left unpaired (FA) · Both empty: documents where both lists were "
        "empty (TN). F1 is over items; FAR is the share of documents expecting the list "
        "empty where the model invented items.",
    ]
    if any(_far_cell(entry).endswith(FAR_UNDEFINED_MARK) for entry in lists):
        lines += ["", f"{FAR_UNDEFINED_MARK} FAR n/a: no document expected this list empty."]
    return lines


def _id_list(ids: Sequence[str]) -> str:
    shown = ", ".join(inline_code(doc_id) for doc_id in ids[:MAX_UNPAIRED_IDS])
    if len(ids) > MAX_UNPAIRED_IDS:
        shown += f" … and {len(ids) - MAX_UNPAIRED_IDS} more"
    return shown


def unpaired_section(report: Mapping[str, Any]) -> list[str]:
    """The documents that had no partner, by side (ids capped)."""
    unpaired = report.get("unpaired", {})
    expected_only: Sequence[str] = unpaired.get("expected_only", [])
    predicted_only: Sequence[str] = unpaired.get("predicted_only", [])
    lines = ["## Unpaired documents", ""]
    if not expected_only and not predicted_only:
        return [*lines, "Every document was paired."]
    if expected_only:
        lines.append(
            f"- **Expected only** (ground truth, no prediction; not compared): "
            f"{len(expected_only)}: {_id_list(expected_only)}"
        )
    if predicted_only:
        lines.append(
            f"- **Predicted only** (prediction, no ground truth; not compared): "
            f"{len(predicted_only)}: {_id_list(predicted_only)}"
        )
    return lines
