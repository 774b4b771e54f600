"""examples/ocr_extraction.py: the OCR → extraction pipeline runs offline, and the
counterfactual attribution, the cascade and the MLflow run say exactly what the
example built in (blurred scans break fields, stamped ones do not; the extractor
cannot read written-out dates)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import PipelineEvaluationReport, SuiteReport, load_report
from docevals_mlflow.quickstart import generate_invoices
from tests.test_examples import Ran, run_example  # noqa: F401  (run_example: a fixture)

SEED = 10  # the example's
SCANS = ("good", "blurred", "good", "stamped")

# What the example builds into its first eight invoices: the scan cycles good,
# blurred, good, stamped; invoices 3 and 6 come from the vendor that writes dates
# out ("29 July 2024"), which the extractor cannot read.
EXPECTED = {
    "invoice-001": ("good", "pass", "pass", "none"),
    "invoice-002": ("blurred", "fail", "fail", "caused_by_upstream"),
    "invoice-003": ("good", "pass", "fail", "current_stage"),
    "invoice-004": ("stamped", "fail", "pass", "upstream"),
    "invoice-005": ("good", "pass", "pass", "none"),
    "invoice-006": ("blurred", "fail", "fail", "independent_failure"),
    "invoice-007": ("good", "pass", "pass", "none"),
    "invoice-008": ("stamped", "fail", "pass", "upstream"),
}


def built_in(position: int, spelled_date: bool) -> tuple[str, str, str, str]:
    """The scan, OCR verdict, extraction verdict and context the faults imply."""
    scan = SCANS[position % 4]
    ocr = "pass" if scan == "good" else "fail"
    if scan == "blurred":
        # The rerun on the true text fails only on the extractor's own date bug.
        return scan, ocr, "fail", "independent_failure" if spelled_date else "caused_by_upstream"
    if spelled_date:
        return scan, ocr, "fail", "current_stage"
    return scan, ocr, "pass", "upstream" if scan == "stamped" else "none"


def test_the_expected_table_is_what_the_faults_imply() -> None:
    invoices = generate_invoices(8, SEED)
    implied = {
        invoice.id: built_in(position, invoice.vendor.date_style == "spelled")
        for position, invoice in enumerate(invoices)
    }
    assert implied == EXPECTED
    # Every kind of outcome occurs, so the example shows each of them.
    assert {context for *_, context in EXPECTED.values()} == {
        "none",
        "upstream",
        "current_stage",
        "caused_by_upstream",
        "independent_failure",
    }


@pytest.fixture
def ran(run_example: Callable[..., Ran]) -> Ran:  # noqa: F811  (the imported fixture)
    return run_example("ocr_extraction", "--documents", "8")


def _cascade_rows(uri: str, run_id: str) -> dict[str, dict[str, object]]:
    path = MlflowClient(uri).download_artifacts(run_id, "tables/cascades.json")
    table = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
    return {str(row["key"]): row for row in rows}


def test_ocr_extraction_attributes_each_failure(ran: Ran) -> None:
    root = ran.root
    dates = {invoice.id: invoice.vendor.date_style for invoice in generate_invoices(8, SEED)}
    cers = []
    for invoice, (scan, ocr_verdict, extract_verdict, context) in EXPECTED.items():
        report = load_report(root / "reports" / "pipelines" / f"{invoice}.json")
        assert isinstance(report, PipelineEvaluationReport)
        ocr, extract = report.stage("ocr"), report.stage("extract")
        assert (ocr.verdict, extract.verdict, extract.failure_context) == (
            ocr_verdict,
            extract_verdict,
            context,
        ), invoice
        [text] = ocr.metric_results
        assert text.name == "page_text"
        cer = text.scores["cer"]
        cers.append(cer)
        # A good scan stays within the 1% bar; blurred and stamped ones do not.
        assert (cer <= 0.01) == (scan == "good"), (invoice, cer)
        printed = (
            f"{invoice:<12} {dates[invoice]:<8} {scan:<8} {cer:>7.2%}  {ocr_verdict:<5} "
            f"{extract_verdict} ({context})"
        )
        assert [line for line in ran.lines if line.startswith(printed)], printed
        page = (root / "truth" / invoice / "page.txt").read_text(encoding="utf-8")
        rerun = extract.counterfactual
        if context in ("caused_by_upstream", "independent_failure"):
            assert rerun is not None
            # The rerun read the ocr stage's ground truth, not what the OCR read.
            assert rerun.input_data == page
            assert rerun.corrected_upstream == {"ocr": "reference page-text"}
            assert rerun.source == "action"
            truth = json.loads((root / "truth" / invoice / "fields.json").read_text("utf-8"))
            if context == "caused_by_upstream":
                assert rerun.prediction == truth
            else:
                assert rerun.prediction == {**truth, "issue_date": None}
        else:
            assert rerun is None

    assert (
        "1 of 3 extraction failures were caused by the OCR; 2 are the extractor's own "
        "(1 on pages the OCR read well, 1 failing again on the true text of a misread page)"
    ) in ran.lines
    assert (
        "  invoice-006: on the true page text the extractor fails again (issue_date) "
        "→ independent_failure"
    ) in ran.lines

    suite = load_report(root / "reports" / "suite.json")
    assert isinstance(suite, SuiteReport)
    [edge] = suite.cascades or []
    assert (edge.upstream, edge.downstream, edge.pipelines) == ("ocr", "extract", 8)
    assert (edge.upstream_failures, edge.co_failures, edge.caused, edge.independent) == (4, 2, 1, 1)

    [run] = ran.runs("ocr-extraction").values()
    assert run.info.run_name == "ocr-then-extract"
    metrics = run.data.metrics
    assert metrics["stage/ocr/fail_rate"] == 0.5
    assert metrics["stage/ocr/failure/current_stage"] == 0.5
    assert metrics["stage/extract/fail_rate"] == 3 / 8
    for context, share in (
        ("caused_by_upstream", 1 / 8),
        ("independent_failure", 1 / 8),
        ("current_stage", 1 / 8),
        ("upstream", 2 / 8),
        ("none", 3 / 8),
    ):
        assert metrics[f"stage/extract/failure/{context}"] == pytest.approx(share), context
    assert metrics["stage/extract/caused_by_upstream_rate"] == 0.5
    assert metrics["stage/extract/counterfactual_coverage"] == 1.0
    assert metrics["metric/page_text/cer"] == pytest.approx(sum(cers) / len(cers))
    cascade = _cascade_rows(ran.uri, run.info.run_id)["cascade/ocr-to-extract"]
    assert cascade["co_failure_rate"] == 0.5
    assert cascade["baseline_failure_rate"] == 0.25
    assert cascade["caused_rate"] == 0.5
    assert (cascade["co_failures"], cascade["upstream_failures"]) == (2, 4)
