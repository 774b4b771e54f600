"""A three-stage invoice pipeline (extract → calculate → classify) and where its
failures belong.

Each synthetic invoice (rendered to PDF by the quickstart's generator) goes through
a simulated pipeline: *extract* reads the line items, *calculate* adds them up,
*classify* routes the invoice to the ``approval`` queue above 2,000 or to
``auto-pay``. Two faults are built in:

* extraction misreads one unit price on every fourth invoice (from the second on):
  a decimal comma taken for a thousands separator, so 45,90 becomes 459.0;
* the calculator has a page-break bug: on invoices with more than five items it
  drops the last row.

One pipeline configuration file per invoice (``pipelines/<invoice>.yaml``) names the
stages, their recorded outputs, references and metrics: exact comparison with the
ground truth for *extract*, function metrics (``pipeline_checks.py``) that recompute
the total and re-apply the routing rule on what each stage *received*, and the
ground-truth queue for *classify*. ``docevals evaluate-pipeline`` evaluates each
file and ``docevals suite`` aggregates them into one MLflow run with
``stage/<stage>/failure/<context>`` metrics.

Every stage gets a failure context: ``current_stage`` (the fault is here),
``upstream`` (this stage did its job on a wrong input), ``upstream_or_combined``
(this stage failed, but so did one upstream: do not blame it alone) or ``none``.

Run: ``python examples/pipeline_attribution.py [--documents 8] [--output-dir DIR]
[--tracking-uri URI]``. Offline; a few seconds.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from example_support import Workspace, heading, parse_arguments, write_json
from mlflow.tracking import MlflowClient
from pipeline_checks import APPROVAL_LIMIT

from docevals_mlflow import PipelineEvaluationReport, load_report
from docevals_mlflow.quickstart import Invoice, generate_invoices, write_document_set

SEED = 7
EXPERIMENT = "pipeline-attribution"
PAGE_BREAK_ROWS = 5
"""The calculator's bug: rows after this many are dropped."""

ROUTING_SPEC = {
    "spec_id": "invoice-routing",
    "operation": "route_invoice",
    "version": "2",
    "action_instruction": f"Route invoices above {APPROVAL_LIMIT:,.0f} to 'approval', "
    "others to 'auto-pay'.",
    "evaluation_spec": {
        "spec_id": "invoice-routing-rules",
        "version": "1",
        "status": "approved",
        "objective": "Send each invoice to the queue its total requires.",
        "criteria": [
            f"Totals above {APPROVAL_LIMIT:,.0f} go to 'approval'.",
            "Other totals go to 'auto-pay'.",
        ],
        "allowed_outputs": ["approval", "auto-pay"],
    },
}


def queue_for(total: float) -> str:
    """The routing rule."""
    return "approval" if total > APPROVAL_LIMIT else "auto-pay"


def extraction_truth(invoice: Invoice) -> dict[str, Any]:
    """What a perfect extraction returns (the ground truth of the extract stage)."""
    truth = invoice.truth()
    return {
        "invoice_number": truth["invoice_number"],
        "currency": truth["currency"],
        "line_items": [
            {key: item[key] for key in ("description", "quantity", "unit_price")}
            for item in truth["line_items"]
        ],
    }


def run_pipeline(invoice: Invoice, position: int) -> dict[str, Any]:
    """The simulated pipeline: each stage's recorded output, faults included."""
    extracted = extraction_truth(invoice)
    if position % 4 == 1:
        item = extracted["line_items"][0]
        item["unit_price"] = round(item["unit_price"] * 10, 2)
    rows = extracted["line_items"]
    if len(rows) > PAGE_BREAK_ROWS:
        rows = rows[:-1]
    total = round(sum(item["quantity"] * item["unit_price"] for item in rows), 2)
    return {
        "extract": extracted,
        "calculate": {"total": total},
        "classify": {"queue": queue_for(total)},
    }


def pipeline_config(invoice: Invoice) -> dict[str, Any]:
    """The configuration file of one invoice's pipeline (paths relative to it)."""
    outputs = f"../outputs/{invoice.id}"
    return {
        "pipeline_id": invoice.id,
        "operation_specs": [ROUTING_SPEC],
        "metrics": {
            "operations": {
                "extract_invoice": [{"type": "exact"}],
                "sum_line_items": [
                    {"type": "function", "callable": "pipeline_checks:total_is_recomputed"}
                ],
                "route_invoice": [
                    {"type": "function", "callable": "pipeline_checks:routed_by_rule"},
                    {"type": "exact"},
                ],
            }
        },
        "stages": [
            {
                "stage_id": "extract",
                "operation": "extract_invoice",
                "prediction_file": f"{outputs}/extract.json",
                "producer": {"provider": "example", "model": "invoice-reader-1"},
                "references": [
                    # Reference ids default to the file stem; both files are named
                    # after the invoice, so each gets an id of its own.
                    {
                        "path": f"../invoices/documents/{invoice.id}.pdf",
                        "authority": "evidence",
                        "id": "invoice-pdf",
                    },
                    {
                        "path": f"../truth/{invoice.id}.json",
                        "authority": "ground_truth",
                        "id": "extraction-truth",
                    },
                ],
            },
            {
                "stage_id": "calculate",
                "operation": "sum_line_items",
                "input_from": "extract",
                "prediction_file": f"{outputs}/calculate.json",
                "depends_on": ["extract"],
                "rubric": "The total equals the sum of quantity times unit price.",
            },
            {
                "stage_id": "classify",
                "operation": "route_invoice",
                "input_from": "calculate",
                "prediction_file": f"{outputs}/classify.json",
                "depends_on": ["calculate"],
                "references": [
                    {
                        "value": {"queue": queue_for(invoice.total_cents / 100)},
                        "id": "routing-truth",
                        "authority": "ground_truth",
                    }
                ],
            },
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Simulate the pipeline, evaluate every invoice, aggregate; print the attribution."""
    args = parse_arguments(__doc__, documents=8, documents_help="invoices", argv=argv)
    workspace = Workspace("pipeline-attribution", args)

    heading("1. Documents and the pipeline's recorded outputs")
    invoices = write_document_set("invoices", generate_invoices(args.documents, SEED)).invoices
    pipelines = Path("pipelines")
    pipelines.mkdir(exist_ok=True)
    # The configurations name their function metrics as pipeline_checks:..., which
    # docevals imports from the configuration's folder.
    shutil.copy(Path(__file__).with_name("pipeline_checks.py"), pipelines / "pipeline_checks.py")
    for position, invoice in enumerate(invoices):
        write_json(f"truth/{invoice.id}.json", extraction_truth(invoice))
        for stage, output in run_pipeline(invoice, position).items():
            write_json(f"outputs/{invoice.id}/{stage}.json", output)
        (pipelines / f"{invoice.id}.yaml").write_text(
            yaml.safe_dump(pipeline_config(invoice), sort_keys=False), encoding="utf-8"
        )
    print(
        f"{len(invoices)} invoices: PDFs in invoices/documents/, stage outputs in outputs/, "
        "one configuration each in pipelines/"
    )
    print(f"\npipelines/{invoices[0].id}.yaml (stages part):")
    stages_part = yaml.safe_dump(
        {"stages": pipeline_config(invoices[0])["stages"]}, sort_keys=False
    )
    print("  " + stages_part.rstrip().replace("\n", "\n  "))

    heading("2. Evaluate each invoice's pipeline")
    for invoice in invoices:
        workspace.docevals(
            "evaluate-pipeline",
            f"pipelines/{invoice.id}.yaml",
            "--output",
            f"reports/pipelines/{invoice.id}.json",
            "--markdown",
            f"reports/pipelines/{invoice.id}.md",
            "--no-mlflow",
            expect=(0, 1),  # 1: the pipeline's verdict is 'fail' (--fail-on)
        )

    heading("3. Aggregate the pipelines into one suite, logged as an MLflow run")
    workspace.docevals(
        "suite",
        *[f"reports/pipelines/{invoice.id}.json" for invoice in invoices],
        "--output",
        "reports/suite.json",
        "--markdown",
        "reports/suite.md",
        "--experiment",
        EXPERIMENT,
        "--run-name",
        "invoice-pipeline",
    )

    heading("4. Where each failure belongs")
    print(f"{'invoice':<12} {'extract':<28} {'calculate':<28} classify")
    for invoice in invoices:
        report = load_report(f"reports/pipelines/{invoice.id}.json")
        assert isinstance(report, PipelineEvaluationReport)
        cells = [f"{stage.verdict} ({stage.failure_context})" for stage in report.stage_reports]
        print(f"{invoice.id:<12} {cells[0]:<28} {cells[1]:<28} {cells[2]}")

    print("\nthe suite run's share of pipelines per stage and failure context:")
    client = MlflowClient(workspace.tracking_uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None
    [run] = client.search_runs(
        [experiment.experiment_id], "attributes.run_name = 'invoice-pipeline'"
    )
    for key, value in sorted(run.data.metrics.items()):
        if "/failure/" in key and value > 0:
            print(f"  {key:<45} {value:.3f}")

    heading("What this shows")
    print(
        "A misread price is charged to extract (current_stage); the calculation that added "
        "up the\nwrong prices did its job (upstream); a routing that went wrong only because "
        "of them is\nupstream_or_combined, never blamed alone. The calculator's page-break "
        "bug is its own fault\n(current_stage) and the routing after it is upstream; where "
        "both faults meet, the\ncalculation is upstream_or_combined."
    )
    workspace.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
