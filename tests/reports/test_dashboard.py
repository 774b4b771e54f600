"""Offline plotly dashboards: self-containment, charts, bins, caps, escaping, determinism."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from plotly.offline import get_plotlyjs

from docevals_mlflow import (
    EvaluationCase,
    Evaluator,
    ExactStructuredMetric,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
    build_suite_report,
)
from docevals_mlflow.fields.batch import DocumentPair, compare_documents
from docevals_mlflow.fields.counts import metrics_from_cells
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.reports.confidence_dashboard import (
    NO_CONFIDENCE_TEXT,
    ConfidenceBin,
    confidence_bins,
    sample_confidence_rows,
)
from docevals_mlflow.reports.dashboard import render_evaluation_dashboard, render_fields_dashboard
from docevals_mlflow.reports.dashboard_figures import MAX_BARS
from docevals_mlflow.reports.fields_dashboard import worst_fields
from tests.evaluation.conftest import VerdictMetric, stage

# The bundle's opening bytes (licence header and version) occur once per inlined copy.
PLOTLY_SIGNATURE = get_plotlyjs()[:200]
FIELD_IDS = ("fig-field-f1", "fig-field-outcomes")
CONFIDENCE_IDS = ("fig-confidence-reliability", "fig-confidence-histogram")
EVALUATION_IDS = (
    "fig-stage-verdicts",
    "fig-stage-contexts",
    "fig-metric-verdicts",
    "fig-metric-scores",
)

# --------------------------------------------------------------------------- helpers


def counts(tp: int = 0, fa: int = 0, fd: int = 0, fn: int = 0, tn: int = 0) -> dict[str, int]:
    return {"tp": tp, "fa": fa, "fd": fd, "fn": fn, "tn": tn}


def field(template: str, cells: dict[str, int], method: str = "EXACT") -> dict[str, Any]:
    return {
        "template": template,
        "method": method,
        "method_name": method.split(" ", 1)[0],
        "threshold": None,
        "discovered": False,
        "counts": cells,
        "metrics": metrics_from_cells(**cells),
    }


def row(
    outcome: str,
    confidence: float | None,
    expected: Any = "a",
    actual: Any = "a",
) -> dict[str, Any]:
    return {
        "path": "$.x",
        "template": "$.x",
        "method": "EXACT",
        "threshold": None,
        "expected": expected,
        "actual": actual,
        "score": None,
        "outcome": outcome,
        "matched": outcome in ("TP", "TN"),
        "confidence": confidence,
        "discovered": False,
        "reason": "",
    }


def fields_report(
    fields: list[dict[str, Any]],
    rows: list[dict[str, Any]] | None = None,
    *,
    class_name: str = "Invoice",
    lists: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    overall = counts(tp=5, fa=1, fd=1, fn=2, tn=3)
    document: dict[str, Any] = {
        "id": "d1",
        "class": class_name,
        "counts": overall,
        "metrics": metrics_from_cells(**overall),
    }
    if rows is not None:
        document["rows"] = rows
    return {
        "kind": "fields",
        "package_version": "9.9.9",
        "schema": {"id": "inv", "version": "1", "sha256": "0" * 64},
        "overall": {
            "documents": 1,
            "counts": overall,
            "metrics": metrics_from_cells(**overall),
            "macro_f1": 0.5,
        },
        "classes": {
            class_name: {
                "configured": True,
                "documents": 1,
                "counts": overall,
                "metrics": metrics_from_cells(**overall),
                "macro_f1": None,
                "fields": [],
            }
        },
        "fields": fields,
        "lists": lists or [],
        "documents": [document],
        "unpaired": {"expected_only": [], "predicted_only": []},
    }


def small_report(*, confidence: bool = True) -> dict[str, Any]:
    fields = [
        field("$.vendor", counts(tp=9, fd=1)),
        field("$.total", counts(tp=1, fa=1, fn=2), "NUMERIC_EXACT (tolerance: 0.01)"),
        field("$.empty", counts(tn=4)),  # only TN: F1 undefined
    ]
    rows = [
        row("TP", 0.95 if confidence else None),
        row("FD", 0.92 if confidence else None, "12", "13"),
        row("FN", 0.15 if confidence else None, "x", None),
        row("TN", 0.5 if confidence else None, None, None),  # nothing on either side
    ]
    lists = [{"template": "$.items", "method": "HUNGARIAN", "matched": 7, "missed": 2, "extra": 3}]
    return fields_report(fields, rows, lists=lists)


def many_fields_report(n: int) -> dict[str, Any]:
    fields = [field(f"$.field_{i:03d}", counts(tp=i, fd=n - i, fn=1)) for i in range(n)]
    rows = [row("TP" if i % 3 else "FD", (i % 100) / 100) for i in range(5 * n)]
    return fields_report(fields, rows)


def figure(page: str, div_id: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The traces and layout plotly is given for ``div_id``, parsed from the page."""
    match = re.search(r'Plotly\.newPlot\(\s*"' + re.escape(div_id) + r'",\s*', page)
    assert match is not None, div_id
    decoder = json.JSONDecoder()
    data, end = decoder.raw_decode(page, match.end())
    layout, _ = decoder.raw_decode(page, page.index("{", end))
    return data, layout


def assert_self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>\n")
    assert '<meta charset="utf-8">' in page
    assert page.rstrip().endswith("</html>")
    assert page.count(PLOTLY_SIGNATURE) == 1
    assert page.count("plotly.js v") == 1
    # Nothing may be fetched: the MLflow iframe has no network and no same origin.
    assert re.search(r"<script[^>]*\bsrc\s*=", page) is None
    assert re.search(r"<link\b", page) is None


def pipeline_report() -> Any:
    return PipelineEvaluator(
        default_metrics=[
            VerdictMetric({"extract": "fail", "calc": "fail", "route": "pass"}),
            ExactStructuredMetric(),
        ]
    ).evaluate(
        PipelineCase(
            pipeline_id="p-1",
            stages=[
                stage("extract", truth={"total": 12}, prediction={"total": 10}),
                stage("calc", ["extract"], truth={"sum": 1}, prediction={"sum": 1}),
                stage("route", ["calc"], truth={"to": "a"}, prediction={"to": "a"}),
            ],
        )
    )


def case_report() -> Any:
    case = EvaluationCase(
        case_id="inv-1",
        stage_id="extract",
        prediction={"total": "10"},
        references=[artifact_from_value({"total": 12}, authority="ground_truth", artifact_id="gt")],
    )
    return Evaluator([ExactStructuredMetric()]).evaluate(case)


# --------------------------------------------------------------------------- fields page


def test_fields_page_is_one_self_contained_file() -> None:
    page = render_fields_dashboard(small_report())
    assert_self_contained(page)
    for div_id in FIELD_IDS + CONFIDENCE_IDS:
        assert f'id="{div_id}"' in page
    for title in (
        "F1 per field (worst first)",
        "Outcomes per field",
        "Confidence vs fraction correct",
        "Confidence of correct and wrong rows",
        "<h2>Per class</h2>",
        "<h2>List items</h2>",
    ):
        assert title in page
    assert "<title>Field evaluation dashboard</title>" in page
    # Summary cards: documents and micro / macro figures.
    assert '<div class="label">Macro F1</div><div class="value">0.5000</div>' in page
    assert '<div class="label">Documents</div><div class="value">1</div>' in page


def test_fields_page_tables() -> None:
    page = render_fields_dashboard(small_report())
    assert (
        "<tr><td>Invoice</td><td>yes</td>"
        '<td class="num">1</td><td class="num">0.7143</td><td class="num">0.7143</td>'
        '<td class="num">0.7143</td><td class="num">0.6667</td><td class="num">0.2500</td>'
        '<td class="num">0.1667</td><td class="num">n/a</td></tr>'
    ) in page
    # An older report's list entry (no weak, empty or metrics): zeros and n/a, not errors.
    assert (
        '<tr><td>$.items</td><td>HUNGARIAN</td><td class="num">7</td><td class="num">0</td>'
        '<td class="num">2</td><td class="num">3</td><td class="num">0</td>'
        '<td class="num">n/a</td><td class="num">n/a</td></tr>'
    ) in page


def test_list_table_shows_weak_pairs_both_empty_f1_and_far() -> None:
    lists = [
        {
            "template": "$.items",
            "method": "HUNGARIAN",
            "pairing": "stickler",
            "matched": 7,
            "weak": 1,
            "missed": 2,
            "extra": 3,
            "empty": 4,
            "invented": 1,
            "metrics": {"f1": 0.7, "far": 0.2},
        },
        {
            "template": "$.tags",
            "method": "HUNGARIAN",
            "matched": 1,
            "metrics": {"f1": 1.0, "far": None},
        },
    ]
    page = render_fields_dashboard(fields_report([], [], lists=lists))
    assert (
        '<tr><td>$.items</td><td>HUNGARIAN</td><td class="num">7</td><td class="num">1</td>'
        '<td class="num">2</td><td class="num">3</td><td class="num">4</td>'
        '<td class="num">0.7000</td><td class="num">0.2000</td></tr>'
    ) in page
    assert '<td class="num">1.0000</td><td class="num">n/a</td></tr>' in page


def test_fields_are_sorted_worst_first_with_undefined_f1_last() -> None:
    fields = small_report()["fields"]
    assert [entry["template"] for entry in worst_fields(fields)] == [
        "$.total",
        "$.vendor",
        "$.empty",
    ]


def test_undefined_f1_is_marked_not_drawn_as_zero() -> None:
    page = render_fields_dashboard(small_report())
    data, layout = figure(page, "fig-field-f1")
    bars, marks = data
    assert bars["y"] == ["$.total", "$.vendor", "$.empty"]
    assert bars["x"][:2] == pytest.approx([0.4, 0.9473684])
    assert bars["x"][2] is None
    assert marks["mode"] == "text"
    assert marks["y"] == ["$.empty"]
    assert marks["text"] == ["n/a: F1 undefined"]
    assert "F1: n/a: F1 undefined" in marks["hovertext"][0]
    assert layout["yaxis"]["autorange"] == "reversed"
    assert "1 field(s) have no F1" in page


def test_outcome_bars_have_fixed_colours_and_order() -> None:
    data, layout = figure(render_fields_dashboard(small_report()), "fig-field-outcomes")
    assert [(trace["name"], trace["marker"]["color"]) for trace in data] == [
        ("TP", "#2ca02c"),
        ("FA", "#ff7f0e"),
        ("FD", "#d62728"),
        ("FN", "#9467bd"),
        ("TN", "#d3d3d3"),
    ]
    assert [trace["x"] for trace in data] == [[1, 9, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0], [0, 0, 4]]
    assert layout["barmode"] == "stack"
    assert "FN: 2 of 4 (50.0%)" in data[3]["hovertext"][0]


def test_hover_shows_template_method_and_cells() -> None:
    data, _ = figure(render_fields_dashboard(small_report()), "fig-field-f1")
    assert data[0]["hovertext"][0] == (
        "<b>$.total</b><br>method: NUMERIC_EXACT (tolerance: 0.01)<br>F1: 0.4000"
        "<br>TP 1 · FA 1 · FD 0 · FN 2 · TN 0"
    )


def test_repeated_templates_get_distinct_labels() -> None:
    report = fields_report(
        [field("$.a", counts(tp=1)), field("$.a", counts(fd=1), "FUZZY (threshold: 0.8)")],
        [],
    )
    data, _ = figure(render_fields_dashboard(report), "fig-field-f1")
    assert data[0]["y"] == ["$.a · FUZZY", "$.a · EXACT"]


def test_fields_over_the_cap_keep_the_worst() -> None:
    n = MAX_BARS + 50
    page = render_fields_dashboard(many_fields_report(n))
    data, _ = figure(page, "fig-field-f1")
    assert len(data[0]["y"]) == MAX_BARS
    assert data[0]["y"][0] == "$.field_000"
    assert data[0]["y"][-1] == f"$.field_{MAX_BARS - 1:03d}"
    assert f"Showing the {MAX_BARS} worst of {n} fields." in page
    outcomes, _ = figure(page, "fig-field-outcomes")
    assert outcomes[0]["y"] == data[0]["y"]


def test_fifty_field_page_is_mostly_plotly_js() -> None:
    page = render_fields_dashboard(many_fields_report(50))
    assert_self_contained(page)
    # Everything but the bundle: figures, tables, styles. Kept small on purpose.
    assert len(page.encode("utf-8")) - len(PLOTLY_SIGNATURE) < len(get_plotlyjs()) + 150_000


def test_long_labels_are_clipped_on_the_axis_but_whole_in_the_hover() -> None:
    long = "$." + "x" * 100
    data, _ = figure(
        render_fields_dashboard(fields_report([field(long, counts(tp=1))], [])), "fig-field-f1"
    )
    assert data[0]["y"] == ["$." + "x" * 57 + "…"]
    assert long in data[0]["hovertext"][0]


# --------------------------------------------------------------------------- confidence


def test_confidence_bins_exact() -> None:
    rows = [
        row("TP", 0.0),
        row("FD", 0.05),
        row("TP", 0.1),  # an edge starts its bin
        row("TN", 0.55, "", ""),  # TN with values present counts as correct
        row("FA", 0.55, None, "x"),
        row("TP", 0.95),
        row("TP", 1.0),  # 1.0 joins the last bin
        row("FN", 0.3, "x", None),
        row("TN", 0.7, None, None),  # neither side present: skipped
        row("TP", None),  # no confidence: skipped
        row("TP", 1.5),  # outside [0, 1]: skipped
        row("TP", True),  # a bool is not a confidence
    ]
    assert confidence_bins(rows) == [
        (0.0, 0.1, 2, 1),
        (0.1, 0.2, 1, 1),
        (0.2, 0.3, 0, 0),
        (0.3, 0.4, 1, 0),
        (0.4, 0.5, 0, 0),
        (0.5, 0.6, 2, 1),
        (0.6, 0.7, 0, 0),
        (0.7, 0.8, 0, 0),
        (0.8, 0.9, 0, 0),
        (0.9, 1.0, 2, 2),
    ]
    bins = confidence_bins(rows)
    assert bins[5].fraction == 0.5
    assert bins[2].fraction is None
    assert bins[0] == ConfidenceBin(low=0.0, high=0.1, total=2, correct=1)


@pytest.mark.parametrize("value", [0.2, 0.3, 0.6, 0.7, 0.8, 0.9])
def test_confidence_on_an_edge_lands_in_the_bin_starting_there(value: float) -> None:
    bins = confidence_bins([row("TP", value)])
    assert [item.low for item in bins if item.total] == [pytest.approx(value)]


def test_reliability_chart_plots_the_bin_fractions() -> None:
    page = render_fields_dashboard(small_report())
    (diagonal, points), layout = figure(page, "fig-confidence-reliability")
    assert diagonal["x"] == [0.0, 1.0]
    # TN at 0.5 has neither side present and is left out.
    assert points["x"] == pytest.approx([0.15, 0.95])
    assert points["y"] == [0.0, 0.5]
    assert "rows: 2<br>correct: 1 (50.0%)" in points["hovertext"][1]
    assert layout["xaxis"]["range"] == [0, 1]
    histogram, _ = figure(page, "fig-confidence-histogram")
    assert [trace["name"] for trace in histogram] == ["correct", "wrong"]
    # 0.15 holds the FN (wrong); 0.9-1.0 holds the TP (correct) and the FD (wrong).
    assert histogram[0]["y"] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert histogram[1]["y"] == [0, 1, 0, 0, 0, 0, 0, 0, 0, 1]
    assert "3 rows with a confidence" in page


def test_no_confidence_shows_a_sentence_instead_of_charts() -> None:
    page = render_fields_dashboard(small_report(confidence=False))
    assert NO_CONFIDENCE_TEXT in page
    for div_id in CONFIDENCE_IDS:
        assert div_id not in page
    assert 'id="fig-field-f1"' in page


def test_confidence_charts_only_when_confidence_exists() -> None:
    page = render_fields_dashboard(small_report())
    assert NO_CONFIDENCE_TEXT not in page


def test_report_without_rows_or_fields_has_no_plotly() -> None:
    report = fields_report([], None)
    page = render_fields_dashboard(report)
    assert NO_CONFIDENCE_TEXT in page
    assert "No fields in this batch." in page
    assert PLOTLY_SIGNATURE not in page  # no figure, so no 4 MB bundle
    assert "No list fields in this batch." in page


def test_confidence_sample_is_even_and_bounded() -> None:
    rows = [row("TP", i / 1000) for i in range(1000)]
    report = fields_report([], rows[:400])
    report["documents"].append({**report["documents"][0], "id": "d2", "rows": rows[400:]})
    sample, total = sample_confidence_rows(report, limit=100)
    assert total == 1000
    assert len(sample) == 100
    # Every tenth eligible row, across both documents.
    assert [item["confidence"] for item in sample] == [i / 100 for i in range(100)]
    assert sample_confidence_rows(report, limit=100) == (sample, total)
    everything, _ = sample_confidence_rows(report, limit=5000)
    assert len(everything) == 1000


def test_confidence_sample_skips_rows_that_do_not_count() -> None:
    rows = [row("TP", None), row("TN", 0.5, None, None), row("TP", 0.4), row("FD", 0.6)]
    sample, total = sample_confidence_rows(fields_report([], rows), limit=1)
    assert total == 2
    assert [item["confidence"] for item in sample] == [0.4]


def test_a_real_batch_renders() -> None:
    schema = DocumentSchema.model_validate(
        {
            "schema_id": "inv",
            "classes": [
                {
                    "name": "Invoice",
                    "fields": {
                        "vendor": {"method": "FUZZY", "threshold": 0.8},
                        "tags": {"items": {"method": "FUZZY", "threshold": 0.7}},
                    },
                }
            ],
        }
    )
    batch = compare_documents(
        [
            DocumentPair(
                "1",
                {"vendor": "Acme", "tags": ["a", "b"]},
                {"vendor": "Acme", "tags": ["a"]},
                "Invoice",
                confidence={"vendor": 0.9},
            )
        ],
        schema,
    )
    page = render_fields_dashboard(batch.to_report())
    assert_self_contained(page)
    (_, points), _ = figure(page, "fig-confidence-reliability")
    assert points["x"] == pytest.approx([0.95])
    assert points["y"] == [1.0]


# --------------------------------------------------------------------------- escaping


def test_user_text_is_escaped_in_page_and_figures() -> None:
    evil = "<script>alert(1)</script>"
    report = fields_report(
        [field(evil, counts(fd=1), method=evil)],
        [row("FD", 0.5)],
        class_name=evil,
        lists=[{"template": evil, "method": evil, "matched": 0, "missed": 1, "extra": 0}],
    )
    page = render_fields_dashboard(report)
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # tables
    data, _ = figure(page, "fig-field-f1")
    # Plotly renders labels as HTML, so the text reaches it escaped and shows literally.
    assert data[0]["y"] == ["&lt;script&gt;alert(1)&lt;/script&gt;"]
    assert "method: &lt;script&gt;" in data[0]["hovertext"][0]


def test_metric_names_are_escaped_in_evaluation_page() -> None:
    report = PipelineEvaluator(
        default_metrics=[VerdictMetric({"a": "pass"}, name="<img src=x onerror=alert(1)>")]
    ).evaluate(PipelineCase(pipeline_id="<b>p</b>", stages=[stage("a")]))
    page = render_evaluation_dashboard(report)
    assert "<img" not in page
    assert "<b>p</b>" not in page
    assert "<title>Pipeline evaluation dashboard</title>" in page
    assert '<div class="value">&lt;b&gt;p&lt;/b&gt;</div>' in page
    data, _ = figure(page, "fig-metric-verdicts")
    assert data[0]["y"] == ["&lt;img src=x onerror=alert(1)&gt;"]


# --------------------------------------------------------------------------- evaluations


def test_pipeline_dashboard_has_every_stage_and_chart() -> None:
    report = pipeline_report()
    page = render_evaluation_dashboard(report)
    assert_self_contained(page)
    for div_id in EVALUATION_IDS:
        assert f'id="{div_id}"' in page
    for title in (
        "Verdicts per stage",
        "Failure context per stage",
        "Verdicts per metric",
        "Mean scores per metric",
    ):
        assert title in page
    for stage_id in ("extract", "calc", "route"):
        assert f"<td>{stage_id}</td>" in page
    assert (
        "<tr><td>calc</td><td>generic</td><td>fail</td><td>upstream_or_combined</td>"
        "<td>extract</td><td>no</td></tr>"
    ) in page
    verdicts, layout = figure(page, "fig-stage-verdicts")
    assert [trace["name"] for trace in verdicts] == ["pass", "fail", "uncertain", "not_applicable"]
    assert verdicts[0]["y"] == ["extract", "calc", "route"]
    assert verdicts[1]["x"] == [1, 1, 0]
    assert layout["barmode"] == "stack"
    contexts, _ = figure(page, "fig-stage-contexts")
    assert [trace["name"] for trace in contexts] == [
        "none",
        "current_stage",
        "upstream",
        "upstream_or_combined",
        "indeterminate",
    ]
    by_name = {trace["name"]: trace["x"] for trace in contexts}
    assert by_name["current_stage"] == [1, 0, 0]
    assert by_name["upstream_or_combined"] == [0, 1, 0]
    assert by_name["upstream"] == [0, 0, 1]


def test_metric_charts_show_verdicts_and_mean_scores() -> None:
    page = render_evaluation_dashboard(pipeline_report())
    verdicts, _ = figure(page, "fig-metric-verdicts")
    passes = dict(zip(verdicts[0]["y"], verdicts[0]["x"], strict=True))
    assert verdicts[0]["name"] == "pass"
    assert passes["fixed"] == 1
    index = verdicts[0]["y"].index("fixed")
    assert "pass rate 33.3%" in verdicts[0]["hovertext"][index]
    scores, layout = figure(page, "fig-metric-scores")
    assert layout["barmode"] == "group"
    assert all(trace["y"] == verdicts[0]["y"] for trace in scores)


def test_suite_dashboard_has_every_stage_id() -> None:
    first = pipeline_report()
    second = PipelineEvaluator(default_metrics=[VerdictMetric({"ocr": "uncertain"})]).evaluate(
        PipelineCase(pipeline_id="p-2", stages=[stage("ocr")])
    )
    suite = build_suite_report([first, second, case_report()], suite_id="nightly")
    page = render_evaluation_dashboard(suite)
    assert_self_contained(page)
    assert "<title>Suite evaluation dashboard</title>" in page
    assert '<div class="label">Suite</div><div class="value">nightly</div>' in page
    verdicts, _ = figure(page, "fig-stage-verdicts")
    assert verdicts[0]["y"] == ["extract", "calc", "route", "ocr"]
    assert dict(zip(verdicts[2]["y"], verdicts[2]["x"], strict=True))["ocr"] == 1
    assert "<h2>Stages</h2>" not in page  # suites summarise; stage tables are per pipeline


def test_case_dashboard_renders_the_same_charts() -> None:
    page = render_evaluation_dashboard(case_report())
    assert_self_contained(page)
    for div_id in EVALUATION_IDS:
        assert f'id="{div_id}"' in page
    assert "<title>Case evaluation dashboard</title>" in page
    assert '<div class="label">Case</div><div class="value">inv-1</div>' in page
    assert "<td>extract</td>" in page


def test_metrics_without_scores_get_a_note() -> None:
    report = PipelineEvaluator(default_metrics=[VerdictMetric({"a": "pass"})]).evaluate(
        PipelineCase(pipeline_id="p", stages=[stage("a")])
    )
    page = render_evaluation_dashboard(report)
    assert "No metric reported a score." in page
    assert "fig-metric-scores" not in page


# --------------------------------------------------------------------------- determinism


def test_rendering_is_deterministic() -> None:
    report = many_fields_report(30)
    assert render_fields_dashboard(report) == render_fields_dashboard(report)
    pipeline = pipeline_report()
    assert render_evaluation_dashboard(pipeline) == render_evaluation_dashboard(pipeline)
    suite = build_suite_report([pipeline, case_report()])
    assert render_evaluation_dashboard(suite) == render_evaluation_dashboard(suite)
