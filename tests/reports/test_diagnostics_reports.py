"""Diagnostics in Markdown and dashboards: present when there is something to show,
absent (and the pages unchanged) otherwise."""

from __future__ import annotations

from docevals_mlflow import (
    FieldsReport,
    build_suite_report,
    compare_documents,
    render_pipeline_markdown,
    render_suite_markdown,
)
from docevals_mlflow.diagnostics import Counterfactual
from docevals_mlflow.reports.dashboard import render_evaluation_dashboard, render_fields_dashboard
from docevals_mlflow.reports.fields_markdown import render_fields_markdown
from tests.diagnostics.pipelines import calculate, evaluator, invoice
from tests.diagnostics.test_disagreement import reports as panel_reports


def fields_report(with_confidence: bool) -> dict[str, object]:
    records = []
    for index in range(5):
        record: dict[str, object] = {
            "id": str(index),
            "expected": {"total": 10},
            "predicted": {"total": 10 if index else 12},
        }
        if with_confidence:
            record["confidence"] = {"total": 0.2 if index == 0 else 0.9}
        records.append(record)
    report: dict[str, object] = compare_documents(records).to_report()
    return report


def test_fields_calibration_in_json_markdown_and_dashboard():
    report = fields_report(True)
    validated = FieldsReport.model_validate(report)
    assert validated.calibration is not None
    assert validated.calibration.fields["$.total"].auroc == 1.0
    markdown = render_fields_markdown(report)
    assert "## 🎚️ Confidence calibration" in markdown
    assert "### Review budget" in markdown
    page = render_fields_dashboard(report)
    assert "Calibration and review budget" in page
    assert 'id="fig-review-budget"' in page


def test_fields_without_confidence_have_no_calibration():
    report = fields_report(False)
    assert "calibration" not in report
    assert FieldsReport.model_validate(report).calibration is None
    assert "Confidence calibration" not in render_fields_markdown(report)
    assert "Calibration and review budget" not in render_fields_dashboard(report)


def test_pipeline_and_suite_sections():
    with_reruns = evaluator(Counterfactual(actions={"calculate": calculate})).evaluate(
        invoice("inv-1", calculate)
    )
    markdown = render_pipeline_markdown(with_reruns)
    assert "## Counterfactual reruns" in markdown
    assert "rerun on corrected upstream output it passes" in markdown
    suite = build_suite_report([with_reruns])
    suite_markdown = render_suite_markdown(suite)
    assert "## Counterfactual attribution" in suite_markdown
    assert "## Failure cascades" in suite_markdown
    assert "| extract → calculate | 1 | 1 | 1 | 100.0% | n/a | 1 / 0 / 0 | 100.0% |" in (
        suite_markdown
    )
    page = render_evaluation_dashboard(suite)
    assert 'id="fig-failure-cascades"' in page
    assert "caused_by_upstream" in page


def test_plain_pipelines_show_no_diagnostics():
    plain = evaluator().evaluate(invoice("inv-1", calculate))
    assert "Counterfactual" not in render_pipeline_markdown(plain)
    suite_markdown = render_suite_markdown(build_suite_report([plain]))
    assert "Counterfactual" not in suite_markdown
    # The co-failure itself is a cascade, with nothing decided by a rerun.
    assert "| extract → calculate | 1 | 1 | 1 | 100.0% | n/a | 0 / 0 / 1 | n/a |" in suite_markdown


def test_disagreement_sections():
    suite = build_suite_report(panel_reports())
    markdown = render_suite_markdown(suite)
    assert "## Panel disagreement as a review signal" in markdown
    assert "| case | s2 | panel | 0.50 | pass | fail |" in markdown
    assert 'id="fig-disagreement-budget"' in render_evaluation_dashboard(suite)
