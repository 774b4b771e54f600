"""The offline HTML dashboard (plotly) of a field comparison report.

One self-contained page (see :mod:`docevals_mlflow.reports.html`): a summary, F1 and
outcome bars per field (worst first, at most ``MAX_BARS``), the confidence charts
(:mod:`docevals_mlflow.reports.confidence_dashboard`), the confidence calibration, a
per-class table and a list-item table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from docevals_mlflow._version import __version__
from docevals_mlflow.core.formatting import defined_number, level_text, metric_text
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.reports import diagnostics_dashboard
from docevals_mlflow.reports.confidence_dashboard import add_confidence
from docevals_mlflow.reports.dashboard_figures import (
    MAX_BARS,
    OUTCOME_COLOURS,
    OUTCOMES,
    bar_height,
    escaped,
    stacked_bars,
)
from docevals_mlflow.reports.html import (
    Page,
    axis_labels,
    category_axis,
    figure_layout,
    html_cards,
    html_note,
    html_table,
)
from docevals_mlflow.reports.ratings import rate_shown

# The same boundaries as the Markdown ratings (0.9 / 0.7 / 0.5), so a field's colour
# here matches its mark in fields.md.
_F1_COLOURS = ((0.9, "#2ca02c"), (0.7, "#bcbd22"), (0.5, "#ff7f0e"))
_F1_POOR = "#d62728"
_UNDEFINED_F1_TEXT = "n/a: F1 undefined"


def _counts(entry: Mapping[str, Any]) -> dict[str, int]:
    counts = entry.get("counts") or {}
    return {outcome: int(counts.get(outcome.lower(), 0)) for outcome in OUTCOMES}


def _metric(entry: Mapping[str, Any], name: str) -> float | None:
    return defined_number((entry.get("metrics") or {}).get(name))


def _f1_colour(f1: float) -> str:
    for bound, colour in _F1_COLOURS:
        if f1 >= bound:
            return colour
    return _F1_POOR


def worst_fields(fields: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Field entries by F1, lowest first; undefined F1 last (it is not a low score).

    Ties are broken by template and method so that the order never depends on the
    order of the report.
    """

    def key(entry: Mapping[str, Any]) -> tuple[bool, float, str, str]:
        f1 = _metric(entry, "f1")
        return (
            f1 is None,
            0.0 if f1 is None else f1,
            str(entry.get("template", "")),
            str(entry.get("method", "")),
        )

    return sorted(fields, key=key)


def _field_labels(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    templates = [str(entry.get("template", "")) for entry in entries]
    # A template compared by two methods would otherwise show as two equal labels.
    repeated = {template for template, n in Counter(templates).items() if n > 1}
    return axis_labels(
        f"{template} · {entry.get('method_name') or entry.get('method', '')}"
        if template in repeated
        else template
        for template, entry in zip(templates, entries, strict=True)
    )


def _field_hover(entry: Mapping[str, Any]) -> str:
    counts = _counts(entry)
    f1 = _metric(entry, "f1")
    lines = [
        f"<b>{escaped(entry.get('template'))}</b>",
        f"method: {escaped(entry.get('method'))}",
        f"F1: {metric_text(f1)}" if f1 is not None else f"F1: {_UNDEFINED_F1_TEXT}",
        *_interval_hover(entry),
        " · ".join(f"{outcome} {counts[outcome]}" for outcome in OUTCOMES),
    ]
    if entry.get("discovered"):
        lines.append("discovered (not in the schema)")
    return "<br>".join(lines)


def _f1_interval(entry: Mapping[str, Any]) -> tuple[float, float] | None:
    """F1's interval bounds from the entry's ``ci``, when it has one."""
    interval = ((entry.get("ci") or {}).get("f1")) or {}
    low, high = interval.get("low"), interval.get("high")
    return None if low is None or high is None else (float(low), float(high))


def _interval_hover(entry: Mapping[str, Any]) -> list[str]:
    interval = ((entry.get("ci") or {}).get("f1")) or {}
    bounds = _f1_interval(entry)
    if bounds is None:
        return [f"no interval: {escaped(interval['reason'])}"] if interval.get("reason") else []
    level = level_text(interval.get("confidence", 0.95))
    return [
        f"{level} interval: [{metric_text(bounds[0])}, {metric_text(bounds[1])}], "
        f"{interval.get('documents')} documents"
    ]


def _error_bars(entries: Sequence[Mapping[str, Any]], f1s: list[float | None]) -> dict[str, Any]:
    """Plotly's asymmetric error bars for the F1 bars (none when no entry has an
    interval, so older reports draw as before)."""
    bounds = [_f1_interval(entry) for entry in entries]
    if all(bound is None for bound in bounds):
        return {}
    plus = [None if b is None or f is None else b[1] - f for b, f in zip(bounds, f1s, strict=True)]
    minus = [None if b is None or f is None else f - b[0] for b, f in zip(bounds, f1s, strict=True)]
    return {
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": plus,
            "arrayminus": minus,
            "color": "#444",
            "thickness": 1.2,
        }
    }


def field_f1_figure(entries: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Horizontal F1 bars in the given order, with the F1 interval as error bars when
    the report has intervals; undefined F1 is labelled, not drawn as 0."""
    labels = _field_labels(entries)
    f1s = [_metric(entry, "f1") for entry in entries]
    hovers = [_field_hover(entry) for entry in entries]
    figure = go.Figure(
        go.Bar(
            **_error_bars(entries, f1s),
            name="F1",
            # None leaves the category row empty instead of drawing a zero-length bar
            # that would read as F1 = 0.
            x=f1s,
            y=labels,
            orientation="h",
            marker={"color": ["#bbbbbb" if f1 is None else _f1_colour(f1) for f1 in f1s]},
            hovertext=hovers,
            hoverinfo="text",
            showlegend=False,
        )
    )
    undefined = [i for i, f1 in enumerate(f1s) if f1 is None]
    if undefined:
        figure.add_trace(
            go.Scatter(
                name=_UNDEFINED_F1_TEXT,
                x=[0.0] * len(undefined),
                y=[labels[i] for i in undefined],
                mode="text",
                text=[_UNDEFINED_F1_TEXT] * len(undefined),
                textposition="middle right",
                textfont={"color": "#777"},
                hovertext=[hovers[i] for i in undefined],
                hoverinfo="text",
                showlegend=False,
            )
        )
    return figure_layout(
        figure,
        title="F1 per field (worst first)",
        height=bar_height(len(entries)),
        xaxis={"title": {"text": "F1"}, "range": [0, 1.05], "automargin": True},
        yaxis=category_axis(labels),
    )


def field_outcomes_figure(entries: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Stacked TP / FA / FD / FN / TN counts per field, in the given order."""
    counts = [_counts(entry) for entry in entries]
    return stacked_bars(
        _field_labels(entries),
        [
            (outcome, OUTCOME_COLOURS[outcome], [cells[outcome] for cells in counts])
            for outcome in OUTCOMES
        ],
        [escaped(entry.get("template")) for entry in entries],
        title="Outcomes per field",
        axis_title="leaves",
    )


def _fields_summary(report: Mapping[str, Any]) -> str:
    overall = report.get("overall") or {}
    metrics = overall.get("metrics") or {}
    cells = overall.get("counts") or {}
    cards = [("Documents", str(overall.get("documents", 0)))]
    # FAR and FDR only where they can tell something (ratings.rate_shown): without a
    # TN, FAR is n/a or 1.0 by construction; the false alarms are counted instead.
    cards += [
        (label, metric_text(metrics.get(name)))
        for name, label in (
            ("precision", "Precision"),
            ("recall", "Recall"),
            ("f1", "F1"),
            ("accuracy", "Accuracy"),
            ("far", "FAR"),
            ("fdr", "FDR"),
        )
        if rate_shown(name, cells)
    ]
    if not rate_shown("far", cells) and cells.get("fa"):
        cards.append(("False alarms", str(cells["fa"])))
    cards.append(("Macro F1", metric_text(overall.get("macro_f1"))))
    schema = report.get("schema") or {}
    counts = _counts(overall)
    lines = [
        f"Schema {schema.get('id', '?')} v{schema.get('version', '?')}",
        "Micro metrics from summed cells: "
        + " · ".join(f"{outcome} {counts[outcome]}" for outcome in OUTCOMES),
    ]
    unpaired = report.get("unpaired") or {}
    expected_only = len(unpaired.get("expected_only") or ())
    predicted_only = len(unpaired.get("predicted_only") or ())
    if expected_only or predicted_only:
        lines.append(
            f"Unpaired documents: {expected_only} with ground truth only, "
            f"{predicted_only} with predictions only"
        )
    return html_cards(cards) + "".join(html_note(line) for line in lines)


def _class_table(report: Mapping[str, Any]) -> str:
    classes: Mapping[str, Any] = report.get("classes") or {}
    if not classes:
        return html_note("No document classes in this batch.")
    return html_table(
        ["Class", "Configured", "Documents", "P", "R", "F1", "Accuracy", "FAR", "FDR", "Macro F1"],
        (
            [
                str(name),
                "yes" if entry.get("configured") else "no",
                str(entry.get("documents", 0)),
                *(
                    metric_text(_metric(entry, metric))
                    for metric in ("precision", "recall", "f1", "accuracy", "far", "fdr")
                ),
                metric_text(entry.get("macro_f1")),
            ]
            for name, entry in classes.items()
        ),
        numeric=8,
    )


def _list_table(report: Mapping[str, Any]) -> str:
    lists = report.get("lists") or []
    if not lists:
        return html_note("No list fields in this batch.")
    table = html_table(
        ["List", "Method", "Matched", "Weak", "Missed", "Extra", "Both empty", "F1", "FAR"],
        (
            [
                str(entry.get("template", "")),
                str(entry.get("method", "")),
                *(
                    str(entry.get(name, 0))
                    for name in ("matched", "weak", "missed", "extra", "empty")
                ),
                metric_text(_metric(entry, "f1")),
                metric_text(_metric(entry, "far")),
            ]
            for entry in lists
        ),
        numeric=7,
    )
    return table + html_note(
        "Weak: pairs below the match threshold (FD) · Both empty: documents where both "
        "lists were empty (TN) · FAR: share of documents expecting the list empty where "
        "the model invented items (n/a when no document expected it empty)."
    )


def _field_sections(page: Page, report: Mapping[str, Any]) -> None:
    """The F1 and outcome bars per field, worst first and capped at ``MAX_BARS``."""
    fields = worst_fields(report.get("fields") or [])
    shown = fields[:MAX_BARS]
    notes = []
    if len(fields) > len(shown):
        notes.append(f"Showing the {len(shown)} worst of {len(fields)} fields.")
    undefined = sum(1 for entry in fields if _metric(entry, "f1") is None)
    if undefined:
        notes.append(
            f"{undefined} field(s) have no F1 (nothing expected and nothing predicted, "
            "only TN): they are marked n/a, listed last, and not counted as 0."
        )
    page.section("F1 per field")
    if shown:
        page.add("".join(html_note(note) for note in notes))
        page.figure(field_f1_figure(shown), "fig-field-f1")
        page.section("Outcomes per field")
        page.add(
            html_note(
                "TP match · FA false alarm (nothing expected, something predicted) · "
                "FD false discovery (both present, no match) · FN miss · TN both empty."
            )
        )
        page.figure(field_outcomes_figure(shown), "fig-field-outcomes")
    else:
        page.add(html_note("No fields in this batch."))


def render_fields_dashboard(report: Mapping[str, Any]) -> str:
    """A self-contained HTML dashboard of a field comparison report.

    ``report`` is the dict of :func:`docevals_mlflow.fields.report.build_fields_report`
    (or the same JSON read back). The page has a summary, F1 and outcome bars per
    field, confidence calibration charts (when rows carry confidence), a per-class
    table and a list-item table; equal reports give equal pages.
    """
    page = Page("Field evaluation dashboard")
    page.add(_fields_summary(report))
    _field_sections(page, report)
    add_confidence(page, report)
    if report.get("calibration"):
        diagnostics_dashboard.add_calibration(page, report["calibration"])

    page.section("Per class")
    page.add(_class_table(report))
    page.section("List items")
    page.add(_list_table(report))
    # Pages are written to files and MLflow: no registered secret may be in one.
    return redact_text(page.render(f"docevals-mlflow {report.get('package_version', __version__)}"))
