"""Quickstart: evaluate a three-stage document pipeline, deterministically and offline.

An invoice is read (extract), its total recomputed (calculate) and the invoice routed
(classify). The recorded outputs contain one extraction mistake, so you can see where
the failure belongs: the calculation fails too, but only because its input was wrong.

Run: ``python examples/quickstart.py [OUTPUT_DIR]`` (default ``docevals-output``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from docevals_mlflow import (
    EvaluationCase,
    EvaluationSpec,
    ExactStructuredMetric,
    FunctionMetric,
    OperationSpec,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_path,
    artifact_from_value,
    build_suite_report,
    write_report,
)

GROUND_TRUTH_CSV = """path,expected
$.invoice_number,INV-2026-0042
$.currency,EUR
$.line_items[0].description,Paper A4
$.line_items[0].quantity,2
$.line_items[0].unit_price,4.25
$.line_items[1].description,Toner
$.line_items[1].quantity,1
$.line_items[1].unit_price,30.00
"""

ROUTING = OperationSpec(
    spec_id="invoice-routing",
    operation="route_invoice",
    version="2026-11-30",
    action_instruction="Route invoices above 50 EUR to 'approval', others to 'auto-pay'.",
    evaluation_spec=EvaluationSpec(
        spec_id="invoice-routing-rules",
        version="1",
        status="approved",
        objective="Send an invoice to the queue its total requires.",
        criteria=["Totals above 50.00 go to 'approval'.", "Other totals go to 'auto-pay'."],
        allowed_outputs=["approval", "auto-pay"],
    ),
)


def recomputed_total(stage: EvaluationCase) -> bool:
    """The calculation is right if it equals quantity x unit price over its input."""
    items = stage.input_data["line_items"]
    expected = sum(item["quantity"] * item["unit_price"] for item in items)
    return abs(stage.prediction["total"] - expected) < 0.005


def routed_by_rule(stage: EvaluationCase) -> bool:
    """The routing is right if it follows the approved rule on the total it received."""
    queue = "approval" if stage.input_data["total"] > 50 else "auto-pay"
    return bool(stage.prediction["queue"] == queue)


def build_pipeline(folder: Path) -> PipelineCase:
    """The recorded outputs of one pipeline run, with their references."""
    truth_file = folder / "invoice-0042-truth.csv"
    truth_file.write_text(GROUND_TRUTH_CSV, encoding="utf-8")
    extracted = {
        "invoice_number": "INV-2026-0042",
        "currency": "eur",
        "line_items": [
            {"description": "Paper A4", "quantity": 2, "unit_price": 4.25},
            # The extraction misread 30.00 as 80.00.
            {"description": "Toner", "quantity": 1, "unit_price": 80.0},
        ],
    }
    extract = EvaluationCase(
        case_id="invoice-0042",
        stage_id="extract",
        operation="extract_invoice",
        prediction=extracted,
        references=[artifact_from_path(truth_file, authority="ground_truth")],
        producer={"provider": "example", "model": "ocr-v1"},
    )
    calculate = EvaluationCase(
        case_id="invoice-0042",
        stage_id="calculate",
        operation="sum_line_items",
        input_data=extracted,
        prediction={"total": 88.5},
        depends_on=["extract"],
        rubric="The total equals the sum of quantity times unit price.",
    )
    classify = EvaluationCase(
        case_id="invoice-0042",
        stage_id="classify",
        operation="route_invoice",
        input_data={"total": 88.5},
        prediction={"queue": "approval"},
        depends_on=["calculate"],
        references=[
            artifact_from_value(
                {"queue": "auto-pay"}, authority="ground_truth", artifact_id="routing-truth"
            )
        ],
    )
    return PipelineCase(pipeline_id="invoice-0042", stages=[extract, calculate, classify])


def main(output_dir: str = "docevals-output") -> int:
    """Evaluate the example, write reports and print where they are."""
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    evaluator = PipelineEvaluator(
        operation_metrics={
            "extract_invoice": [ExactStructuredMetric()],
            "sum_line_items": [FunctionMetric("recomputed_total", recomputed_total)],
            "route_invoice": [
                FunctionMetric("routing_rule", routed_by_rule),
                ExactStructuredMetric(),
            ],
        },
        operation_specs=[ROUTING],
    )
    report = evaluator.evaluate(build_pipeline(folder), checkpoint_dir=folder / "checkpoints")
    write_report(report, folder / "pipeline-report.json", folder / "pipeline-report.md")
    suite = build_suite_report([report], suite_id="quickstart")
    write_report(suite, folder / "suite-report.json", folder / "suite-report.md")

    print(f"pipeline {report.pipeline_id}: combined verdict {report.verdict}")
    for stage in report.stage_reports:
        print(f"  {stage.stage_id:<10} {stage.verdict:<6} failure context: {stage.failure_context}")
    print(f"reports written to {folder}/ (pipeline-report.md, suite-report.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
