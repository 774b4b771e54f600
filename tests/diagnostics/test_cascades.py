"""Failure cascades per dependency edge, with and without counterfactual reruns."""

from __future__ import annotations

import json

import pytest

from docevals_mlflow import build_suite_report
from docevals_mlflow.diagnostics import (
    Counterfactual,
    RecordedRerun,
    cascade_sankey,
    failure_cascades,
)
from tests.diagnostics.pipelines import (
    TRUE_ITEMS,
    broken_calculate,
    calculate,
    evaluator,
    invoice,
)


def batch(counterfactual: Counterfactual | None = None):
    """Four invoices: bad extraction with a good and a bad calculator, good extraction
    with a good and a bad calculator."""
    pipelines = [
        invoice("a", calculate),
        invoice("b", broken_calculate),
        invoice("c", calculate, extracted=TRUE_ITEMS),
        invoice("d", broken_calculate, extracted=TRUE_ITEMS),
    ]
    return evaluator(counterfactual).evaluate_batch(pipelines)


def test_co_occurrence_without_reruns():
    (edge,) = failure_cascades(batch()) or []
    assert (edge.upstream, edge.downstream) == ("extract", "calculate")
    assert (edge.pipelines, edge.upstream_failures, edge.downstream_failures) == (4, 2, 3)
    assert edge.co_failures == 2
    assert edge.co_failure_rate == 1.0  # both bad extractions came with a bad total
    assert edge.baseline_failure_rate == 0.5  # d: good extraction, bad calculator
    assert (edge.caused, edge.independent, edge.undecided) == (0, 0, 2)
    assert edge.caused_rate is None


def test_causation_with_reruns():
    # b's broken calculator was rerun elsewhere on the corrected extraction: 16.5.
    recorded = RecordedRerun(pipeline_id="b", stage_id="calculate", prediction={"total": 16.5})
    reports = batch(Counterfactual(actions={"calculate": calculate}, reruns=[recorded]))
    (edge,) = failure_cascades(reports) or []
    assert (edge.caused, edge.independent, edge.undecided) == (1, 1, 0)
    assert edge.caused_rate == 0.5
    per_pipeline = {
        report.pipeline_id: report.stage("calculate").failure_context for report in reports
    }
    assert per_pipeline == {
        "a": "caused_by_upstream",
        "b": "independent_failure",
        "c": "none",
        "d": "current_stage",
    }


def test_suite_reports_carry_cascades_and_single_cases_do_not():
    reports = batch()
    suite = build_suite_report(reports)
    assert suite.cascades is not None
    assert len(suite.cascades) == 1
    single = build_suite_report([reports[0].stage("extract")])
    assert single.cascades is None


def test_sankey_figure_splits_links_by_outcome():
    (edge,) = failure_cascades(batch()) or []
    edge = edge.model_copy(update={"caused": 1, "undecided": 1})
    figure = cascade_sankey([edge])
    data = json.loads(figure.to_json())["data"][0]
    assert data["type"] == "sankey"
    assert data["node"]["label"] == ["extract", "calculate"]
    assert data["link"]["value"] == [1, 1]
    assert data["node"]["customdata"] == [2, 3]


@pytest.mark.parametrize("name", ["<b>x</b>"])
def test_sankey_escapes_stage_names(name):
    (edge,) = failure_cascades(batch()) or []
    figure = cascade_sankey([edge.model_copy(update={"upstream": name})])
    assert json.loads(figure.to_json())["data"][0]["node"]["label"][0] == "&lt;b&gt;x&lt;/b&gt;"
