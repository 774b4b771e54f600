"""Markdown rendering of a field comparison report (``docevals fields``).

Laid out after the IDP accelerator's evaluation report: a summary dashboard with
colour ratings and 20-character progress bars, metric tables, per-class, per-field
and per-list tables, the unpaired ids, the calibration of extraction confidence (when
rows carry it), per-document attribute tables (wrong rows first) and a short
explanation of the comparison methods used. Newer reports add a settings line (list
pairing, discovered attributes), warnings for unparsed numbers and for ground truth
that contradicts the schema, and a section for discovered attributes kept out of the
figures; each is rendered only when its key is present, so older reports still render.

Expected and predicted values are printed exactly as given (``value_cell``); every
figure goes through :mod:`docevals_mlflow.core.formatting`. The sections are built
in ``fields_summary`` (summary, settings, warnings, metrics), ``fields_tables``
(classes, fields, discovered, lists, unpaired), ``fields_documents`` (attribute
tables) and ``fields_explanations``; ratings and bars come from ``ratings``.

Ratings: 🟢 Excellent ≥ 0.9, 🟡 Good ≥ 0.7, 🟠 Fair ≥ 0.5, 🔴 Poor below. For the
false alarm and false discovery rates lower is better, so the scale is mirrored:
🟢 ≤ 0.1, 🟡 ≤ 0.3, 🟠 ≤ 0.5, 🔴 above. An undefined metric (zero denominator) is
shown as ``n/a`` with a neutral mark (``NOT_AVAILABLE``).

The input is the dict of :func:`docevals_mlflow.fields.report.build_fields_report`
(or the same JSON read back); the output depends on nothing else, so equal reports
render to equal text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.formatting import level_text, metric_text
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.reports.diagnostics_markdown import calibration_section
from docevals_mlflow.reports.fields_documents import documents_section, invalid_expected_section
from docevals_mlflow.reports.fields_explanations import METHOD_EXPLANATIONS, explanations_section
from docevals_mlflow.reports.fields_summary import metrics_section, summary_section
from docevals_mlflow.reports.fields_tables import (
    classes_section,
    discovered_section,
    fields_section,
    lists_section,
    unpaired_section,
)
from docevals_mlflow.reports.markdown import inline_code, table
from docevals_mlflow.reports.ratings import progress_bar, rating


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
        f"**Schema:** {inline_code(schema.get('id', 'n/a'))} version "
        f"{inline_code(schema.get('version', 'n/a'))} (SHA-256 "
        f"{inline_code(digest[:12]) if digest else 'n/a'})",
        "",
    ]
    invalid = invalid_expected_section(report)
    if invalid:
        lines += [*invalid, ""]
    lines += [*summary_section(report), "", *metrics_section(report)]
    intervals = intervals_section(report)
    if intervals:
        lines += ["", *intervals]
    for section in (
        classes_section,
        fields_section,
        discovered_section,
        lists_section,
        unpaired_section,
    ):
        part = section(report)
        if part:
            lines += ["", *part]
    calibration = calibration_section(report.get("calibration"))
    if calibration:
        lines += ["", *calibration]
    lines += ["", *documents_section(report, max_rows_per_document, max_documents)]
    lines += ["", *explanations_section(report)]
    lines += ["", f"*docevals-mlflow {report.get('package_version', 'n/a')}*"]
    # Written to a file and to MLflow: a registered secret (a key a model quoted in a
    # reason) must not survive into the text, whatever the report dict held.
    return redact_text("\n".join(lines) + "\n")


INTERVAL_METRICS = {
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "accuracy": "Accuracy",
}
_INTERVAL_DIGITS = 3


def interval_text(value: Any, interval: Mapping[str, Any] | None) -> str:
    """``0.912 [0.887, 0.934], 240 docs``; the figure alone with why there is no
    interval (``n/a`` figures stay ``n/a``)."""
    figure = metric_text(value, _INTERVAL_DIGITS)
    if not interval:
        return figure
    count = interval.get("documents", 0)
    documents = f"{count} doc" if count == 1 else f"{count} docs"
    if interval.get("low") is None or interval.get("high") is None:
        reason = interval.get("reason") or "no interval"
        return f"{figure} (no interval: {reason}), {documents}"
    low = metric_text(interval["low"], _INTERVAL_DIGITS)
    high = metric_text(interval["high"], _INTERVAL_DIGITS)
    return f"{figure} [{low}, {high}], {documents}"


def intervals_section(report: Mapping[str, Any]) -> list[str]:
    """Intervals from resampling documents: the overall figures, then F1 per class and
    per field. Empty for reports without intervals (older, or ``--no-intervals``)."""
    overall = report.get("overall") or {}
    found: Mapping[str, Any] = overall.get("ci") or {}
    if not found:
        return []
    first = next(iter(found.values()))
    level = level_text(first.get("confidence", 0.95))
    lines = [
        f"## Intervals ({level}, resampling documents)",
        "",
        f"Each interval comes from {first.get('resamples')} resamples of the documents "
        f"(seed {first.get('seed')}): the leaves of one document are not independent, so "
        "documents are the unit drawn. Docs: the documents behind the figure.",
        "",
        *table(
            ["Figure", "Value [interval], documents", "Observations"],
            [
                (
                    label,
                    interval_text(overall["metrics"].get(name), found.get(name)),
                    (found.get(name) or {}).get("observations", ""),
                )
                for name, label in INTERVAL_METRICS.items()
            ],
        ),
    ]
    rows = [
        (f"class {inline_code(name)}", interval_text(entry["metrics"].get("f1"), entry["ci"]["f1"]))
        for name, entry in (report.get("classes") or {}).items()
        if len(report.get("classes") or {}) > 1 and (entry.get("ci") or {}).get("f1")
    ]
    fields = [entry for entry in report.get("fields") or () if (entry.get("ci") or {}).get("f1")]
    shared = Counter(entry["template"] for entry in fields)
    rows += [
        (
            inline_code(entry["template"])
            + (f" ({entry['method']})" if shared[entry["template"]] > 1 else ""),
            interval_text(entry["metrics"].get("f1"), entry["ci"]["f1"]),
        )
        for entry in fields
    ]
    if rows:
        lines += ["", *table(["F1 of", "Value [interval], documents"], rows)]
    return lines


__all__ = [
    "METHOD_EXPLANATIONS",
    "interval_text",
    "intervals_section",
    "progress_bar",
    "rating",
    "render_fields_markdown",
]
