"""Offline HTML dashboards (plotly) of field comparison and evaluation reports.

MLflow shows an HTML artifact in a sandboxed iframe (scripts allowed, no same
origin), so the page can load nothing: no CDN, no sibling file. Every page is
therefore one self-contained file with plotly.js inlined exactly once in ``<head>``
and each figure emitted without its own copy.

Pages are deterministic: figure div ids are fixed names, the layout template is
set explicitly (the global ``plotly.io.templates.default`` would otherwise leak
into the output), and nothing random or time-dependent is written. User text
(templates, stage ids, metric names) is HTML-escaped both in the page and inside
figures, because plotly renders labels and hover text as a small HTML dialect.

Work is bounded for big batches: bar charts show at most ``MAX_BARS`` entries
(worst first, with a note) and the confidence chart reads an evenly spaced sample
of at most ``MAX_CONFIDENCE_ROWS`` rows.
"""

from __future__ import annotations

import html
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import plotly.graph_objects as go

from docevals_mlflow._version import __version__
from docevals_mlflow.core.formatting import (
    defined_number,
    metric_text,
    percent_of,
    percent_text,
)
from docevals_mlflow.core.literals import COUNTERFACTUAL_CONTEXTS, FAILURE_CONTEXTS, VERDICTS
from docevals_mlflow.core.reports import (
    EvaluationReport,
    PipelineEvaluationReport,
    SuiteReport,
)
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.reports import diagnostics_dashboard
from docevals_mlflow.reports.html import (
    Page,
    axis_labels,
    category_axis,
    figure_layout,
    html_cards,
    html_note,
    html_table,
)

MAX_BARS = 100
"""Entries (fields, stages, metrics) per bar chart; the JSON report has all of them."""
MAX_CONFIDENCE_ROWS = 200_000
"""Rows read for the confidence charts; more are sampled down to this many."""
CONFIDENCE_BINS = 10
NO_CONFIDENCE_TEXT = "No extraction confidence in this batch"

OUTCOMES = ("TP", "FA", "FD", "FN", "TN")
OUTCOME_COLOURS = {
    "TP": "#2ca02c",
    "FA": "#ff7f0e",
    "FD": "#d62728",
    "FN": "#9467bd",
    "TN": "#d3d3d3",
}
VERDICT_COLOURS = {
    "pass": "#2ca02c",
    "fail": "#d62728",
    "uncertain": "#ffbf00",
    "not_applicable": "#bdbdbd",
}
CONTEXT_COLOURS = {
    "none": "#d3d3d3",
    "current_stage": "#d62728",
    "upstream": "#ff7f0e",
    "upstream_or_combined": "#9467bd",
    "indeterminate": "#7f7f7f",
    "caused_by_upstream": "#ffbb78",
    "independent_failure": "#8c564b",
}
# The same boundaries as the Markdown ratings (0.9 / 0.7 / 0.5), so a field's colour
# here matches its mark in fields.md.
_F1_COLOURS = ((0.9, "#2ca02c"), (0.7, "#bcbd22"), (0.5, "#ff7f0e"))
_F1_POOR = "#d62728"
_UNDEFINED_F1_TEXT = "n/a: F1 undefined"


# --------------------------------------------------------------------------- text


def _text(value: Any) -> str:
    return html.escape("" if value is None else str(value))


# --------------------------------------------------------------------------- figures


def _bar_height(count: int) -> int:
    return max(260, 26 * count + 140)


def _stacked_bars(
    labels: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[int]]],
    names: Sequence[str],
    *,
    title: str,
    axis_title: str,
) -> go.Figure:
    """Horizontal stacked count bars: one trace per ``(name, colour, counts)``.

    ``names`` are the escaped full texts of the categories, for the hover.
    """
    totals = [sum(values[i] for _, _, values in series) for i in range(len(labels))]
    figure = go.Figure()
    for name, colour, values in series:
        figure.add_trace(
            go.Bar(
                name=name,
                x=list(values),
                y=list(labels),
                orientation="h",
                marker={"color": colour},
                hovertext=[
                    f"<b>{names[i]}</b><br>{name}: {value} of {totals[i]} "
                    f"({percent_of(value, totals[i])})"
                    for i, value in enumerate(values)
                ],
                hoverinfo="text",
            )
        )
    return figure_layout(
        figure,
        title=title,
        height=_bar_height(len(labels)),
        barmode="stack",
        xaxis={"title": {"text": axis_title}, "automargin": True},
        yaxis=category_axis(labels),
    )


# --------------------------------------------------------------------------- fields


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
        f"<b>{_text(entry.get('template'))}</b>",
        f"method: {_text(entry.get('method'))}",
        f"F1: {metric_text(f1)}" if f1 is not None else f"F1: {_UNDEFINED_F1_TEXT}",
        " · ".join(f"{outcome} {counts[outcome]}" for outcome in OUTCOMES),
    ]
    if entry.get("discovered"):
        lines.append("discovered (not in the schema)")
    return "<br>".join(lines)


def field_f1_figure(entries: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Horizontal F1 bars in the given order; undefined F1 is labelled, not drawn as 0."""
    labels = _field_labels(entries)
    f1s = [_metric(entry, "f1") for entry in entries]
    hovers = [_field_hover(entry) for entry in entries]
    figure = go.Figure(
        go.Bar(
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
        height=_bar_height(len(entries)),
        xaxis={"title": {"text": "F1"}, "range": [0, 1.05], "automargin": True},
        yaxis=category_axis(labels),
    )


def field_outcomes_figure(entries: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Stacked TP / FA / FD / FN / TN counts per field, in the given order."""
    counts = [_counts(entry) for entry in entries]
    return _stacked_bars(
        _field_labels(entries),
        [
            (outcome, OUTCOME_COLOURS[outcome], [cells[outcome] for cells in counts])
            for outcome in OUTCOMES
        ],
        [_text(entry.get("template")) for entry in entries],
        title="Outcomes per field",
        axis_title="leaves",
    )


class ConfidenceBin(NamedTuple):
    """Rows whose confidence lies in ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    total: int
    """Rows in the bin (not ``count``: that name is taken by ``tuple.count``)."""
    correct: int

    @property
    def fraction(self) -> float | None:
        """Share of correct rows; ``None`` for an empty bin."""
        return self.correct / self.total if self.total else None


def _confidence_point(row: Mapping[str, Any]) -> tuple[float, bool] | None:
    """``(confidence, correct)`` of a row the calibration charts count, else ``None``.

    Counted: a confidence in [0, 1] and an expected or a predicted value; a row with
    neither says nothing about whether the extractor was right to be confident.
    """
    confidence = defined_number(row.get("confidence"))
    if confidence is None or not 0.0 <= confidence <= 1.0:
        return None
    if row.get("expected") is None and row.get("actual") is None:
        return None
    return confidence, row.get("outcome") in ("TP", "TN")


def confidence_bins(
    rows: Iterable[Mapping[str, Any]], bins: int = CONFIDENCE_BINS
) -> list[ConfidenceBin]:
    """Counted rows (see :func:`_confidence_point`) in ``bins`` equal confidence bins.

    Every bin is returned, empty ones with ``count == 0``. A row counts as correct
    when its outcome is TP or TN.
    """
    edges = [i / bins for i in range(bins + 1)]
    counts = [0] * bins
    correct = [0] * bins
    for row in rows:
        point = _confidence_point(row)
        if point is None:
            continue
        confidence, is_correct = point
        # bisect on the same edges the bins report, so a value equal to an edge lands
        # in the bin that starts there; 1.0 joins the last bin.
        index = min(bisect_right(edges, confidence) - 1, bins - 1)
        counts[index] += 1
        correct[index] += is_correct
    return [ConfidenceBin(edges[i], edges[i + 1], counts[i], correct[i]) for i in range(bins)]


def _report_rows(report: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for document in report.get("documents") or ():
        yield from document.get("rows") or ()


def sample_confidence_rows(
    report: Mapping[str, Any], limit: int = MAX_CONFIDENCE_ROWS
) -> tuple[list[Mapping[str, Any]], int]:
    """The rows the confidence charts count, at most ``limit`` of them; and the total.

    Over the limit, rows are taken at evenly spaced positions: the sample spans every
    document (not just the first ones) and is the same on every run.
    """
    total = sum(1 for row in _report_rows(report) if _confidence_point(row) is not None)
    sample: list[Mapping[str, Any]] = []
    if total == 0:
        return sample, 0
    # Keep eligible row number floor(k * total / limit) for k = 0, 1, ...; with
    # total <= limit that is every row.
    taken = min(total, limit)
    position = 0
    target = 0
    for row in _report_rows(report):
        if _confidence_point(row) is None:
            continue
        if position == target:
            sample.append(row)
            if len(sample) == taken:
                break
            target = len(sample) * total // taken
        position += 1
    return sample, total


def confidence_figures(bins: Sequence[ConfidenceBin]) -> tuple[go.Figure, go.Figure]:
    """A reliability chart (fraction correct per confidence bin) and a histogram of
    confidence for correct versus wrong rows."""
    filled = [item for item in bins if item.total]
    reliability = go.Figure(
        [
            go.Scatter(
                name="perfect calibration",
                x=[0.0, 1.0],
                y=[0.0, 1.0],
                mode="lines",
                line={"dash": "dash", "color": "#999"},
                hoverinfo="skip",
            ),
            go.Scatter(
                name="fraction correct",
                x=[(item.low + item.high) / 2 for item in filled],
                y=[item.fraction for item in filled],
                mode="lines+markers",
                marker={"size": 9, "color": "#1f77b4"},
                hovertext=[
                    f"confidence {item.low:.1f}–{item.high:.1f}<br>rows: {item.total}<br>"
                    f"correct: {item.correct} ({percent_of(item.correct, item.total)})"
                    for item in filled
                ],
                hoverinfo="text",
            ),
        ]
    )
    figure_layout(
        reliability,
        title="Confidence vs fraction correct",
        height=420,
        xaxis={"title": {"text": "extraction confidence"}, "range": [0, 1], "dtick": 0.1},
        yaxis={"title": {"text": "fraction correct (TP or TN)"}, "range": [0, 1.05]},
    )
    labels = [f"{item.low:.1f}–{item.high:.1f}" for item in bins]
    histogram = go.Figure(
        [
            go.Bar(
                name=name,
                x=labels,
                y=values,
                marker={"color": colour},
                hovertext=[
                    f"confidence {label}<br>{name}: {value} of {item.total}"
                    for label, value, item in zip(labels, values, bins, strict=True)
                ],
                hoverinfo="text",
            )
            for name, colour, values in (
                ("correct", OUTCOME_COLOURS["TP"], [item.correct for item in bins]),
                ("wrong", OUTCOME_COLOURS["FD"], [item.total - item.correct for item in bins]),
            )
        ]
    )
    figure_layout(
        histogram,
        title="Confidence of correct and wrong rows",
        height=380,
        barmode="group",
        xaxis={"title": {"text": "extraction confidence"}, "type": "category"},
        yaxis={"title": {"text": "rows"}},
    )
    return reliability, histogram


def _fields_summary(report: Mapping[str, Any]) -> str:
    overall = report.get("overall") or {}
    metrics = overall.get("metrics") or {}
    cards = [("Documents", str(overall.get("documents", 0)))]
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
    ]
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


def render_fields_dashboard(report: Mapping[str, Any]) -> str:
    """A self-contained HTML dashboard of a field comparison report.

    ``report`` is the dict of :func:`docevals_mlflow.fields.report.build_fields_report`
    (or the same JSON read back). The page has a summary, F1 and outcome bars per
    field, confidence calibration charts (when rows carry confidence), a per-class
    table and a list-item table; equal reports give equal pages.
    """
    page = Page("Field evaluation dashboard")
    page.add(_fields_summary(report))

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

    page.section("Confidence vs correctness")
    rows, total = sample_confidence_rows(report)
    if total:
        sampled = f", a sample of {len(rows)} of them is shown" if len(rows) < total else ""
        page.add(
            html_note(
                f"{total} rows with a confidence and an expected or predicted value"
                f"{sampled}; TP and TN count as correct."
            )
        )
        reliability, histogram = confidence_figures(confidence_bins(rows))
        page.figure(reliability, "fig-confidence-reliability")
        page.figure(histogram, "fig-confidence-histogram")
    else:
        page.add(f"<p>{html.escape(NO_CONFIDENCE_TEXT)}.</p>")
    if report.get("calibration"):
        diagnostics_dashboard.add_calibration(page, report["calibration"])

    page.section("Per class")
    page.add(_class_table(report))
    page.section("List items")
    page.add(_list_table(report))
    # Pages are written to files and MLflow: no registered secret may be in one.
    return redact_text(page.render(f"docevals-mlflow {report.get('package_version', __version__)}"))


# --------------------------------------------------------------------------- evaluations


def _stage_table(stages: Sequence[EvaluationReport]) -> str:
    return html_table(
        ["Stage", "Operation", "Verdict", "Failure context", "Failed upstream", "Review"],
        (
            [
                stage.stage_id,
                stage.operation,
                stage.verdict,
                stage.failure_context,
                ", ".join(name for name, v in stage.upstream_verdicts.items() if v == "fail")
                or "none",
                "yes" if stage.requires_human_review else "no",
            ]
            for stage in stages
        ),
        numeric=0,
    )


def stage_verdicts_figure(suite: SuiteReport, stage_ids: Sequence[str]) -> go.Figure:
    """Stacked verdict counts per stage."""
    return _stacked_bars(
        axis_labels(stage_ids),
        [
            (
                verdict,
                VERDICT_COLOURS[verdict],
                [suite.stages[stage].verdict_counts.get(verdict, 0) for stage in stage_ids],
            )
            for verdict in VERDICTS
        ],
        [html.escape(stage) for stage in stage_ids],
        title="Verdicts per stage",
        axis_title="stage evaluations",
    )


def stage_contexts_figure(suite: SuiteReport, stage_ids: Sequence[str]) -> go.Figure:
    """Stacked failure-context counts per stage."""
    return _stacked_bars(
        axis_labels(stage_ids),
        [
            (
                context,
                CONTEXT_COLOURS[context],
                [suite.stages[stage].failure_contexts.get(context, 0) for stage in stage_ids],
            )
            for context in (
                *FAILURE_CONTEXTS,
                # Counterfactual refinements, where reruns made them.
                *(
                    context
                    for context in COUNTERFACTUAL_CONTEXTS
                    if any(suite.stages[stage].failure_contexts.get(context) for stage in stage_ids)
                ),
            )
        ],
        [html.escape(stage) for stage in stage_ids],
        title="Failure context per stage",
        axis_title="stage evaluations",
    )


def metric_pass_rate_figure(suite: SuiteReport, names: Sequence[str]) -> go.Figure:
    """Pass rate per metric, with counts, errors and review rate in the hover."""
    labels = axis_labels(names)
    summaries = [suite.metrics[name] for name in names]
    figure = go.Figure(
        go.Bar(
            name="pass rate",
            x=[summary.pass_rate for summary in summaries],
            y=labels,
            orientation="h",
            marker={"color": VERDICT_COLOURS["pass"]},
            hovertext=[
                f"<b>{html.escape(name)}</b><br>pass rate: {percent_text(summary.pass_rate)} "
                f"of {summary.count}<br>"
                + " · ".join(f"{v} {summary.verdict_counts.get(v, 0)}" for v in VERDICTS)
                + f"<br>errors: {summary.error_count} · review: "
                f"{percent_text(summary.human_review_rate)}"
                for name, summary in zip(names, summaries, strict=True)
            ],
            hoverinfo="text",
            showlegend=False,
        )
    )
    return figure_layout(
        figure,
        title="Pass rate per metric",
        height=_bar_height(len(names)),
        xaxis={"title": {"text": "pass rate"}, "range": [0, 1.05], "tickformat": ".0%"},
        yaxis=category_axis(labels),
    )


def metric_scores_figure(suite: SuiteReport, names: Sequence[str]) -> go.Figure | None:
    """Grouped bars of each metric's mean scores; ``None`` when no metric has a score."""
    score_names = sorted({score for name in names for score in suite.metrics[name].score_means})
    if not score_names:
        return None
    labels = axis_labels(names)
    figure = go.Figure(
        [
            go.Bar(
                name=html.escape(score),
                # None where a metric lacks this score: no bar rather than a false 0.
                x=[suite.metrics[name].score_means.get(score) for name in names],
                y=labels,
                orientation="h",
                hovertext=[
                    f"<b>{html.escape(name)}</b><br>mean {html.escape(score)}: "
                    f"{metric_text(suite.metrics[name].score_means.get(score))}"
                    for name in names
                ],
                hoverinfo="text",
            )
            for score in score_names
        ]
    )
    return figure_layout(
        figure,
        title="Mean scores per metric",
        height=_bar_height(len(names) * max(1, min(len(score_names), 4))),
        barmode="group",
        xaxis={"title": {"text": "mean score"}, "automargin": True},
        yaxis=category_axis(labels),
    )


def _capped(names: Sequence[str], what: str) -> tuple[list[str], str]:
    shown = list(names[:MAX_BARS])
    note = (
        f"Showing the first {len(shown)} of {len(names)} {what}." if len(names) > MAX_BARS else ""
    )
    return shown, note


def render_evaluation_dashboard(
    report: EvaluationReport | PipelineEvaluationReport | SuiteReport,
) -> str:
    """A self-contained HTML dashboard of a case, pipeline or suite report.

    A case or pipeline report is first summarised with
    :func:`docevals_mlflow.evaluation.suite.build_suite_report`, so every kind gets
    the same charts: verdicts and failure contexts per stage, pass rate and mean
    scores per metric. Case and pipeline pages add a stage table.
    """
    stages: list[EvaluationReport] = []
    if isinstance(report, SuiteReport):
        suite = report
        title = f"Suite {report.suite_id}"
        headline = [("Suite", report.suite_id)]
    elif isinstance(report, PipelineEvaluationReport):
        suite = build_suite_report([report], suite_id=report.pipeline_id)
        title = f"Pipeline {report.pipeline_id}"
        headline = [("Combined verdict", report.verdict)]
        stages = report.stage_reports
    else:
        suite = build_suite_report([report], suite_id=report.case_id)
        title = f"Case {report.case_id}, stage {report.stage_id}"
        headline = [("Verdict", report.verdict)]
        stages = [report]
    page = Page(title)
    page.add(
        html_cards(
            [
                *headline,
                ("Cases", str(suite.case_count)),
                ("Stages evaluated", str(suite.stage_count)),
                *((verdict, str(suite.verdict_counts.get(verdict, 0))) for verdict in VERDICTS),
                ("Human review", percent_text(suite.human_review_rate)),
            ]
        )
    )
    if stages:
        page.section("Stages")
        page.add(_stage_table(stages))

    stage_ids, note = _capped(list(suite.stages), "stages")
    page.section("Verdicts per stage")
    if note:
        page.add(html_note(note))
    page.figure(stage_verdicts_figure(suite, stage_ids), "fig-stage-verdicts")
    page.section("Failure context per stage")
    page.add(
        html_note(
            "current_stage: failed with upstream passing · upstream: passed, an upstream "
            "stage failed · upstream_or_combined: failed along with upstream · "
            "indeterminate: an uncertain or not-applicable result prevents attribution · "
            "caused_by_upstream / independent_failure: rerun on corrected upstream output, "
            "the stage passed / still failed."
        )
    )
    page.figure(stage_contexts_figure(suite, stage_ids), "fig-stage-contexts")
    diagnostics_dashboard.add_cascades(page, suite.cascades)
    diagnostics_dashboard.add_disagreement(page, suite.disagreement)

    page.section("Metrics")
    names, note = _capped(list(suite.metrics), "metrics")
    if not names:
        page.add(html_note("No metric results."))
    else:
        if note:
            page.add(html_note(note))
        page.figure(metric_pass_rate_figure(suite, names), "fig-metric-pass-rates")
        scores = metric_scores_figure(suite, names)
        if scores is None:
            page.add(html_note("No metric reported a score."))
        else:
            page.figure(scores, "fig-metric-scores")
    return redact_text(page.render(f"docevals-mlflow {report.package_version}"))
