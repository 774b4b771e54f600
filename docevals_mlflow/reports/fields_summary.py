"""The head of the fields Markdown report: summary dashboard, settings, warnings and
the metrics table (see :mod:`docevals_mlflow.reports.fields_markdown`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docevals_mlflow.core.formatting import defined_number, metric_text, percent_text
from docevals_mlflow.reports.markdown import cell, inline_code, table
from docevals_mlflow.reports.ratings import (
    NOT_AVAILABLE,
    far_hidden_text,
    icon,
    progress_bar,
    rate_shown,
    rating,
)

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

_NOT_RATED = "➖ not rated (see the summary)"


def matched_of(counts: Mapping[str, int]) -> tuple[int, int]:
    """``(TP + TN, all cells)``: the attributes that matched, of all compared."""
    matched = counts.get("tp", 0) + counts.get("tn", 0)
    total = sum(counts.get(key, 0) for key in ("tp", "fa", "fd", "fn", "tn"))
    return matched, total


def cells(counts: Mapping[str, int]) -> list[int]:
    """The TP, FA, FD, FN, TN counts in that order (missing ones as 0)."""
    return [counts.get(key, 0) for key in ("tp", "fa", "fd", "fn", "tn")]


def summary_section(report: Mapping[str, Any]) -> list[str]:
    """The "Summary" dashboard: match rate, gauges, settings and warnings."""
    overall = report["overall"]
    metrics = overall["metrics"]
    matched, total = matched_of(overall["counts"])
    rate = matched / total if total else None
    unpaired = report.get("unpaired", {})
    expected_only = len(unpaired.get("expected_only", ()))
    predicted_only = len(unpaired.get("predicted_only", ()))
    lines = [
        "## 🎯 Summary",
        "",
        f"- **Documents**: {overall['documents']} compared · unpaired: "
        f"{expected_only} expected only, {predicted_only} predicted only",
        f"- **Overall match rate**: {icon('accuracy', rate)} {matched}/{total} attributes"
        + (f" {progress_bar(rate)} {percent_text(rate)}" if rate is not None else ""),
    ]
    counts = overall["counts"]
    for name, label in METRIC_LABELS.items():
        lines.append(f"- **{label}**: {_gauge(name, metrics.get(name), counts)}")
    lines.append(
        f"- **Macro F1** (mean of document F1): {_gauge('f1', overall.get('macro_f1'), counts)}"
    )
    return lines + _settings(report) + _undecided(report) + _unparsed(report)


_PAIRING_TEXT = {
    "stickler": "list items paired as Stickler does (`stickler`: a pair below the match "
    "threshold stays a weak pair, counted FD)",
    "strict": "list items paired strictly (`strict`: a pair below the match threshold is "
    "broken up, its items counted missed and extra)",
    "schema": "list items paired as each list's `pairing` in the schema says (`stickler` "
    "unless set; see the list table)",
}


def _settings(report: Mapping[str, Any]) -> list[str]:
    """One line on the choices that shape the figures: how list items were paired and
    whether discovered attributes count. Empty for reports from before these existed."""
    settings = report.get("settings")
    if not isinstance(settings, Mapping) or not settings:
        return []
    parts = []
    pairing = settings.get("list_pairing")
    if pairing is not None:
        parts.append(_PAIRING_TEXT.get(str(pairing), f"list items paired {inline_code(pairing)}"))
    discovered = settings.get("discovered")
    if discovered == "include":
        parts.append("discovered attributes included in the figures")
    elif discovered == "exclude":
        parts.append(
            "discovered attributes left out of the figures (`--discovered include` puts them back)"
        )
    if settings.get("shape_mismatch") == "count":
        parts.append(
            "ground truth that contradicts the schema counted and left out "
            "(`--allow-shape-mismatch`)"
        )
    return [f"- **Settings**: {'; '.join(parts)}."] if parts else []


def _field_counts(report: Mapping[str, Any], key: str) -> list[str]:
    return [
        f"{inline_code(entry['template'])} {entry[key]}"
        for entry in report.get("fields", [])
        if entry.get(key)
    ]


def _unparsed(report: Mapping[str, Any]) -> list[str]:
    """A warning when values of numeric fields did not read as numbers, naming the
    fields: usually a ground truth or an extraction writing amounts as free text."""
    count = int(report["overall"].get("unparsed") or 0)
    if not count:
        return []
    fields = _field_counts(report, "unparsed")
    return [
        "",
        f"> ⚠️ **{count} value(s) not read as numbers**: values of numeric fields that "
        "do not parse as numbers (currency symbols and thousands separators are allowed), "
        "so they could not be compared as numbers. Check how the ground truth and the "
        "extraction write these fields" + (": " + ", ".join(fields) if fields else "") + ".",
    ]


def _undecided(report: Mapping[str, Any]) -> list[str]:
    """A warning when a provider left comparisons undecided (the metrics are then
    lower bounds), naming the fields and why."""
    overall = report["overall"]
    count = int(overall.get("undecided") or 0)
    if not count:
        return []
    fields = _field_counts(report, "undecided")
    lines = [
        "",
        f"> ⚠️ **{count} comparison(s) not decided**: a SEMANTIC or LLM provider failed. "
        "They are counted as FD (the worst case), so every metric above is a lower "
        "bound. Fields: " + ", ".join(fields) + ".",
    ]
    for reason in overall.get("undecided_reasons") or ():
        lines.append(f"> - {cell(reason)}")
    return lines


def _gauge(metric: str, value: Any, counts: Mapping[str, int]) -> str:
    if not rate_shown(metric, counts):
        # FAR without a TN is n/a or 1.0 by construction, FDR without a prediction
        # where a value was due is n/a: no rating either way (never a red "Poor").
        return far_hidden_text(counts) if metric == "far" else NOT_AVAILABLE
    number = defined_number(value)
    if number is None:
        # No bar: an empty one would read as 0, which an undefined metric is not.
        return NOT_AVAILABLE
    return f"{icon(metric, number)} {metric_text(number)} {progress_bar(number)}"


def metrics_section(report: Mapping[str, Any]) -> list[str]:
    """The "Metrics" table with ratings and definitions, then the summed cells."""
    overall = report["overall"]
    rows: list[Sequence[Any]] = [
        (
            METRIC_LABELS[name],
            metric_text(overall["metrics"].get(name)),
            rating(name, overall["metrics"].get(name))
            if rate_shown(name, overall["counts"])
            else _NOT_RATED,
            _METRIC_NOTES[name],
        )
        for name in METRIC_LABELS
    ]
    rows.append(
        (
            "Macro F1",
            metric_text(overall.get("macro_f1")),
            rating("f1", overall.get("macro_f1")),
            "mean of per-document F1",
        )
    )
    counts = cells(overall["counts"])
    return [
        "## Metrics",
        "",
        *table(["Metric", "Value", "Rating", "Definition"], rows),
        "",
        f"Cells over all compared leaves: TP {counts[0]} · FA {counts[1]} · FD {counts[2]} "
        f"· FN {counts[3]} · TN {counts[4]}.",
    ]
