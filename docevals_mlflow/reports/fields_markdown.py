"""Markdown rendering of a field comparison report (``docevals fields``).

Laid out after the IDP accelerator's evaluation report: a summary dashboard with
colour ratings and 20-character progress bars, metric tables, per-class, per-field
and per-list tables, the unpaired ids, the calibration of extraction confidence (when
rows carry it), per-document attribute tables (wrong rows first) and a short
explanation of the comparison methods used.

Ratings: 🟢 Excellent ≥ 0.9, 🟡 Good ≥ 0.7, 🟠 Fair ≥ 0.5, 🔴 Poor below. For the
false alarm and false discovery rates lower is better, so the scale is mirrored:
🟢 ≤ 0.1, 🟡 ≤ 0.3, 🟠 ≤ 0.5, 🔴 above. An undefined metric (zero denominator) is
shown as ``n/a`` with a neutral mark (``NOT_AVAILABLE``).

The input is the dict of :func:`docevals_mlflow.fields.report.build_fields_report`
(or the same JSON read back); the output depends on nothing else, so equal reports
render to equal text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from docevals_mlflow.fields.counts import LOWER_IS_BETTER
from docevals_mlflow.reports.diagnostics_markdown import calibration_section
from docevals_mlflow.reports.markdown import cell, table

BAR_WIDTH = 20
FILLED = "█"
EMPTY = "░"
NOT_AVAILABLE = "➖ n/a"
DISCOVERED_MARK = "🔍"
MAX_UNPAIRED_IDS = 50
"""Unpaired ids listed per side; the JSON report has all of them."""

_RATINGS = ((0.9, "🟢", "Excellent"), (0.7, "🟡", "Good"), (0.5, "🟠", "Fair"))
_POOR = ("🔴", "Poor")
# Lower-is-better metrics mirror the scale; compared on the value itself (not on
# 1 - value) so that 0.1, 0.3 and 0.5 land exactly on their boundaries.
_LOW_RATINGS = ((0.1, "🟢", "Excellent"), (0.3, "🟡", "Good"), (0.5, "🟠", "Fair"))

METRIC_LABELS: dict[str, str] = {
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1 score",
    "accuracy": "Accuracy",
    "far": "False alarm rate (FAR)",
    "fdr": "False discovery rate (FDR)",
}
_METRIC_NOTES: dict[str, str] = {
    "precision": "TP / (TP + FA + FD)",
    "recall": "TP / (TP + FN)",
    "f1": "2TP / (2TP + FA + FD + FN)",
    "accuracy": "(TP + TN) / all",
    "far": "FA / (FA + TN), lower is better",
    "fdr": "FD / (FD + TP), lower is better",
}

# Shown only for methods that occur in the report, in this order.
METHOD_EXPLANATIONS: dict[str, str] = {
    "EXACT": "the values are identical as text (case-sensitive unless the label says "
    "otherwise); score 1 or 0.",
    "NORMALIZED": "equal after Unicode normalisation, case folding and removing "
    "punctuation and extra whitespace; score 1 or 0.",
    "NUMERIC_EXACT": "both values read as numbers (currency symbols and thousands "
    "separators removed) and equal within the tolerance shown.",
    "FUZZY": "similarity from 0 to 1 of the trimmed, lower-cased texts (rapidfuzz); a "
    "match when the score reaches the threshold shown (inclusive).",
    "LEVENSHTEIN": "1 − edit distance / length of the longer lower-cased text; a match "
    "when the score reaches the threshold.",
    "DATE": "both values read as calendar dates (in any format) and the same day.",
    "SEMANTIC": "cosine similarity of text embeddings; a match when it reaches the threshold.",
    "LLM": "an LLM judges whether the values mean the same; its reason is shown.",
    "HUNGARIAN": "list items are paired one-to-one by optimal assignment on their "
    "similarity; items below the match threshold stay unpaired and count as missed "
    "(FN) or extra (FA), and the fields of paired items are compared with their own "
    "methods.",
}
_OUTCOME_TEXT = (
    "Outcomes: **TP** match · **FA** false alarm (nothing expected, something "
    "predicted) · **FD** false discovery (both present, no match) · **FN** miss "
    "(expected, nothing predicted) · **TN** both empty."
)


# ---------------------------------------------------------------------------- pieces


def _defined(value: Any) -> float | None:
    # NaN never comes out of the report builder, but a report edited by hand might
    # carry one; it is as undefined as None.
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def rating(metric: str, value: float | None) -> str:
    """``🟢 Excellent`` .. ``🔴 Poor`` for a metric value (mirrored for FAR/FDR)."""
    number = _defined(value)
    if number is None:
        return NOT_AVAILABLE
    if metric in LOWER_IS_BETTER:
        for limit, icon, word in _LOW_RATINGS:
            if number <= limit:
                return f"{icon} {word}"
        return " ".join(_POOR)
    for limit, icon, word in _RATINGS:
        if number >= limit:
            return f"{icon} {word}"
    return " ".join(_POOR)


def _icon(metric: str, value: float | None) -> str:
    return rating(metric, value).split(" ", 1)[0]


def progress_bar(value: float | None) -> str:
    """A 20-character bar, e.g. ``[████████████████░░░░]`` for 0.8.

    Filled blocks are rounded *down* so that a full bar always means exactly 1.0
    (0.99 shows 19 blocks); the small epsilon keeps a value that float arithmetic
    left a hair below a block boundary (say, a mean of document scores) from losing
    a block.
    """
    number = _defined(value)
    if number is None:
        return "[" + EMPTY * BAR_WIDTH + "]"
    filled = min(BAR_WIDTH, max(0, math.floor(number * BAR_WIDTH + 1e-9)))
    return "[" + FILLED * filled + EMPTY * (BAR_WIDTH - filled) + "]"


def _number(value: Any) -> str:
    number = _defined(value)
    return "n/a" if number is None else f"{number:.4f}"


def _rated(metric: str, value: Any) -> str:
    number = _defined(value)
    return "n/a" if number is None else f"{_icon(metric, number)} {number:.4f}"


def _percent(value: float | None) -> str:
    number = _defined(value)
    return "n/a" if number is None else f"{number:.1%}"


def _code(text: Any) -> str:
    """Inline code for an id or name, safe in headings and lists."""
    plain = cell(str(text))
    # A backtick inside would end the code span early; a double fence tolerates it.
    return f"`` {plain} ``" if "`" in plain else f"`{plain}`"


def _two(value: Any) -> str:
    number = _defined(value)
    return "n/a" if number is None else f"{number:.2f}"


def _confidence(value: Any) -> str:
    number = _defined(value)
    # "N/A" (not "n/a") as in the IDP report: confidence absent from the prediction.
    return "N/A" if number is None else f"{number:.2f}"


def _matched_of(counts: Mapping[str, int]) -> tuple[int, int]:
    matched = counts.get("tp", 0) + counts.get("tn", 0)
    total = sum(counts.get(key, 0) for key in ("tp", "fa", "fd", "fn", "tn"))
    return matched, total


def _cells(counts: Mapping[str, int]) -> list[int]:
    return [counts.get(key, 0) for key in ("tp", "fa", "fd", "fn", "tn")]


# ---------------------------------------------------------------------------- sections


def _dashboard(report: Mapping[str, Any]) -> list[str]:
    overall = report["overall"]
    metrics = overall["metrics"]
    matched, total = _matched_of(overall["counts"])
    rate = matched / total if total else None
    unpaired = report.get("unpaired", {})
    expected_only = len(unpaired.get("expected_only", ()))
    predicted_only = len(unpaired.get("predicted_only", ()))
    lines = [
        "## 🎯 Summary",
        "",
        f"- **Documents**: {overall['documents']} compared · unpaired: "
        f"{expected_only} expected only, {predicted_only} predicted only",
        f"- **Overall match rate**: {_icon('accuracy', rate)} {matched}/{total} attributes"
        + (f" {progress_bar(rate)} {_percent(rate)}" if rate is not None else ""),
    ]
    for name, label in METRIC_LABELS.items():
        lines.append(f"- **{label}**: {_gauge(name, metrics.get(name))}")
    lines.append(f"- **Macro F1** (mean of document F1): {_gauge('f1', overall.get('macro_f1'))}")
    return lines + _undecided(report)


def _undecided(report: Mapping[str, Any]) -> list[str]:
    """A warning when a provider left comparisons undecided (the metrics are then
    lower bounds), naming the fields and why."""
    overall = report["overall"]
    count = int(overall.get("undecided") or 0)
    if not count:
        return []
    fields = [
        f"{_code(entry['template'])} {entry['undecided']}"
        for entry in report.get("fields", [])
        if entry.get("undecided")
    ]
    lines = [
        "",
        f"> ⚠️ **{count} comparison(s) not decided**: a SEMANTIC or LLM provider failed. "
        "They are counted as FD (the worst case), so every metric above is a lower "
        "bound. Fields: " + ", ".join(fields) + ".",
    ]
    for reason in overall.get("undecided_reasons") or ():
        lines.append(f"> - {cell(reason)}")
    return lines


def _gauge(metric: str, value: Any) -> str:
    number = _defined(value)
    if number is None:
        # No bar: an empty one would read as 0, which an undefined metric is not.
        return NOT_AVAILABLE
    return f"{_icon(metric, number)} {number:.4f} {progress_bar(number)}"


def _metrics_table(report: Mapping[str, Any]) -> list[str]:
    overall = report["overall"]
    rows: list[Sequence[Any]] = [
        (
            METRIC_LABELS[name],
            _number(overall["metrics"].get(name)),
            rating(name, overall["metrics"].get(name)),
            _METRIC_NOTES[name],
        )
        for name in METRIC_LABELS
    ]
    rows.append(
        (
            "Macro F1",
            _number(overall.get("macro_f1")),
            rating("f1", overall.get("macro_f1")),
            "mean of per-document F1",
        )
    )
    counts = _cells(overall["counts"])
    return [
        "## Metrics",
        "",
        *table(["Metric", "Value", "Rating", "Definition"], rows),
        "",
        f"Cells over all compared leaves: TP {counts[0]} · FA {counts[1]} · FD {counts[2]} "
        f"· FN {counts[3]} · TN {counts[4]}.",
    ]


def _classes_table(report: Mapping[str, Any]) -> list[str]:
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
                    *_cells(entry["counts"]),
                    _rated("precision", entry["metrics"].get("precision")),
                    _rated("recall", entry["metrics"].get("recall")),
                    _rated("f1", entry["metrics"].get("f1")),
                    _rated("f1", entry.get("macro_f1")),
                )
                for name, entry in classes.items()
            ),
        ),
    ]


def _fields_table(report: Mapping[str, Any]) -> list[str]:
    fields: Sequence[Mapping[str, Any]] = report.get("fields", [])
    if not fields:
        return []
    lines = [
        "## Fields",
        "",
        *table(
            [
                "Template",
                "Method",
                "TP",
                "FA",
                "FD",
                "FN",
                "TN",
                "Precision",
                "Recall",
                "F1",
                "Discovered",
            ],
            (
                (
                    entry["template"],
                    entry["method"],
                    *_cells(entry["counts"]),
                    _rated("precision", entry["metrics"].get("precision")),
                    _rated("recall", entry["metrics"].get("recall")),
                    _rated("f1", entry["metrics"].get("f1")),
                    DISCOVERED_MARK if entry.get("discovered") else "",
                )
                for entry in fields
            ),
        ),
    ]
    if any(entry.get("discovered") for entry in fields):
        lines += [
            "",
            f"{DISCOVERED_MARK} discovered: the field is in the data but not in the schema, "
            "so it was compared with an inferred rule.",
        ]
    return lines


def _lists_table(report: Mapping[str, Any]) -> list[str]:
    lists: Sequence[Mapping[str, Any]] = report.get("lists", [])
    if not lists:
        return []
    return [
        "## List items",
        "",
        *table(
            ["List", "Method", "Matched", "Missed", "Extra"],
            (
                (
                    entry["template"],
                    entry["method"],
                    entry.get("matched", 0),
                    entry.get("missed", 0),
                    entry.get("extra", 0),
                )
                for entry in lists
            ),
        ),
        "",
        "Matched: expected items paired with a predicted item · Missed: expected items "
        "left unpaired · Extra: predicted items left unpaired.",
    ]


def _id_list(ids: Sequence[str]) -> str:
    shown = ", ".join(_code(doc_id) for doc_id in ids[:MAX_UNPAIRED_IDS])
    if len(ids) > MAX_UNPAIRED_IDS:
        shown += f" … and {len(ids) - MAX_UNPAIRED_IDS} more"
    return shown


def _unpaired(report: Mapping[str, Any]) -> list[str]:
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


def _row_matched(row: Mapping[str, Any]) -> bool:
    if "matched" in row:
        return bool(row["matched"])
    return row.get("outcome") in ("TP", "TN")


def _document_order(documents: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    # Worst first: lowest F1, then documents without any defined F1 (nothing to
    # compare), each group in report order (the sort is stable).
    def key(document: Mapping[str, Any]) -> tuple[int, float]:
        f1 = _defined(document.get("metrics", {}).get("f1"))
        return (1, 0.0) if f1 is None else (0, f1)

    return sorted(documents, key=key)


def _document_section(document: Mapping[str, Any], max_rows: int) -> list[str]:
    counts = document.get("counts", {})
    matched, total = _matched_of(counts)
    f1 = document.get("metrics", {}).get("f1")
    document_class = document.get("class")
    lines = [
        f"### Document {_code(document.get('id'))}"
        + (f" ({cell(document_class)})" if document_class is not None else ""),
        "",
        f"{_icon('f1', f1)} F1 {_number(f1)} · {matched}/{total} attributes matched",
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
                row.get("expected"),
                row.get("actual"),
                _confidence(row.get("confidence")),
                _two(row.get("score")),
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


def _documents(
    report: Mapping[str, Any], max_rows_per_document: int, max_documents: int
) -> list[str]:
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


def _method_names(report: Mapping[str, Any]) -> list[str]:
    used: set[str] = set()
    for entry in report.get("fields", []):
        name = entry.get("method_name")
        if isinstance(name, str):
            used.add(name)
        if str(entry.get("method", "")).startswith("HUNGARIAN"):
            used.add("HUNGARIAN")
    if report.get("lists"):
        used.add("HUNGARIAN")
    return [name for name in METHOD_EXPLANATIONS if name in used]


def _explanations(report: Mapping[str, Any]) -> list[str]:
    lines = ["## Method explanations", ""]
    lines += [f"- **{name}**: {METHOD_EXPLANATIONS[name]}" for name in _method_names(report)]
    if any(entry.get("discovered") for entry in report.get("fields", [])):
        lines.append(
            f"- {DISCOVERED_MARK} **Discovered** fields are not in the schema; they are "
            "compared with inferred rules (strings FUZZY 0.85, numbers NUMERIC_EXACT 0.01, "
            "booleans EXACT) and their reason starts with `[Discovered: ...]`."
        )
    lines += [
        "",
        _OUTCOME_TEXT,
        "",
        "Ratings: 🟢 Excellent ≥ 0.9 · 🟡 Good ≥ 0.7 · 🟠 Fair ≥ 0.5 · 🔴 Poor below; "
        "for FAR and FDR (lower is better) 🟢 ≤ 0.1 · 🟡 ≤ 0.3 · 🟠 ≤ 0.5 · 🔴 above. "
        "Confidence is the extraction's own confidence (N/A when the prediction has none); "
        "score is the method's similarity.",
    ]
    return lines


# ---------------------------------------------------------------------------- entry point


def render_fields_markdown(
    report: Mapping[str, Any],
    *,
    max_rows_per_document: int = 50,
    max_documents: int = 20,
) -> str:
    """Markdown for a field comparison report (the dict of ``BatchComparison.to_report()``).

    At most ``max_documents`` documents get an attribute table (those with the
    lowest F1), each with at most ``max_rows_per_document`` rows (wrong rows first);
    the JSON report always has everything.
    """
    schema = report.get("schema", {})
    digest = schema.get("sha256")
    lines = [
        "# Field evaluation report",
        "",
        f"**Schema:** {_code(schema.get('id', 'n/a'))} version "
        f"{_code(schema.get('version', 'n/a'))} (SHA-256 "
        f"{_code(digest[:12]) if digest else 'n/a'})",
        "",
        *_dashboard(report),
        "",
        *_metrics_table(report),
    ]
    for section in (_classes_table, _fields_table, _lists_table, _unpaired):
        part = section(report)
        if part:
            lines += ["", *part]
    calibration = calibration_section(report.get("calibration"))
    if calibration:
        lines += ["", *calibration]
    lines += ["", *_documents(report, max_rows_per_document, max_documents)]
    lines += ["", *_explanations(report)]
    lines += ["", f"*docevals-mlflow {report.get('package_version', 'n/a')}*"]
    return "\n".join(lines) + "\n"


__all__ = ["progress_bar", "rating", "render_fields_markdown"]
