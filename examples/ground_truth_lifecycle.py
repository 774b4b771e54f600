"""From documents without labels to a signed, registered ground-truth dataset, and an
evaluation against it.

The example renders synthetic invoices to PDF and walks the whole ground-truth
lifecycle with the ``docevals`` command:

1. ``generate``: three models read each PDF blind and vote field by field; agreed
   fields become a provisional reference (authority ``generated``), disputed ones
   review items;
2. ``review``: list what needs deciding, then decide (here, as a reviewer who looked
   at the PDF);
3. ``keygen`` and ``approve``: the reviewed content becomes ground truth with an
   Ed25519-signed approval record; ``verify`` checks it, and refuses a tampered copy;
4. ``register-dataset``: the approved cases become version 1 of the MLflow dataset
   ``invoices`` (an approval run plus a GenAI evaluation dataset);
5. ``evaluate-case --ground-truth-dataset invoices@1``: an extractor's output is
   evaluated against the registered, verified ground truth, and the run records
   the dataset's name, version and digest.

The three readers are served by a fake OpenAI-compatible server on 127.0.0.1
(``fake_model.py``) that "reads" each PDF from an answer book: ``reader-b`` misreads
a total on some invoices and ``reader-c`` cannot read some dates, which is what makes
review items. To use real vision models instead, name two or more on any
OpenAI-compatible server::

    python examples/ground_truth_lifecycle.py --base-url http://localhost:8000/v1 \\
        --models Qwen/Qwen2.5-VL-7B-Instruct,OpenGVLab/InternVL3-8B

Run: ``python examples/ground_truth_lifecycle.py [--documents 3] [--output-dir DIR]
[--tracking-uri URI] [--base-url URL --models A,B[,C]]``. Offline; about 10 s.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from example_support import (
    Workspace,
    add_model_options,
    heading,
    model_names,
    parse_arguments,
    read_json,
    write_json,
)
from fake_model import FakeModelServer, reader

from docevals_mlflow import load_review
from docevals_mlflow.quickstart import Invoice, generate_invoices, write_document_set

SEED = 7
DATASET = "invoices"
EXPERIMENT = "ground-truth-lifecycle"
FAKE_MODELS = ("reader-a", "reader-b", "reader-c")
FIELDS = ("$.invoice_number", "$.issue_date", "$.vendor.name", "$.currency", "$.total")
APPROVER = "reviewer@example.com"


def field_values(invoice: Invoice) -> dict[str, Any]:
    """The expected fields' true values, by path."""
    truth = invoice.truth()
    return {
        "$.invoice_number": truth["invoice_number"],
        "$.issue_date": truth["issue_date"],
        "$.vendor.name": truth["vendor"]["name"],
        "$.currency": truth["currency"],
        "$.total": truth["total"],
    }


def answer_books(invoices: Sequence[Invoice]) -> dict[str, dict[str, dict[str, Any]]]:
    """What each fake reader reads on each PDF: the truth, with its weaknesses."""
    books: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in FAKE_MODELS}
    for position, invoice in enumerate(invoices):
        name = f"{invoice.id}.pdf"
        for model in FAKE_MODELS:
            books[model][name] = field_values(invoice)
        if position % 3 == 1:
            # reader-b takes an 8 for a 3 somewhere in the total's whole units.
            total = books["reader-b"][name]["$.total"]
            books["reader-b"][name] = {**books["reader-b"][name], "$.total": total + 50}
        if position % 3 == 2:
            books["reader-c"][name] = {**books["reader-c"][name], "$.issue_date": None}
    return books


def generation_config(base_url: str, models: Sequence[str]) -> dict[str, Any]:
    """``gen.yaml``: the instruction, the fields, the generators."""
    return {
        "instruction": "Extract the invoice number, the issue date (ISO 8601), the name of "
        "the vendor (the company that issues the invoice), the ISO currency code and the "
        "invoice total as a number.",
        "expected_fields": list(FIELDS),
        "minimum_agreement": 1.0,
        "generators": [
            {"name": model, "provider": "openai-compatible", "model": model, "base_url": base_url}
            for model in models
        ],
    }


def system_output(invoice: Invoice, position: int) -> dict[str, Any]:
    """What the extractor under evaluation returned: on every second invoice it took
    the customer for the vendor."""
    truth = invoice.truth()
    vendor = invoice.customer.name if position % 2 == 1 else truth["vendor"]["name"]
    return {
        "invoice_number": truth["invoice_number"],
        "issue_date": truth["issue_date"],
        "vendor": {"name": vendor},
        "currency": truth["currency"],
        "total": truth["total"],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Generate, review, approve, register, evaluate; print each step."""
    args = parse_arguments(
        __doc__,
        documents=3,
        documents_help="invoices",
        extra=lambda parser: add_model_options(parser, models=",".join(FAKE_MODELS)),
        argv=argv,
    )
    models = model_names(args, FAKE_MODELS, minimum=2)
    workspace = Workspace("ground-truth", args)

    heading("1. Documents: invoices as PDF, and nothing else (no labels yet)")
    invoices = write_document_set("invoices", generate_invoices(args.documents, SEED)).invoices
    sources = Path("sources")
    sources.mkdir(exist_ok=True)
    for invoice in invoices:
        (sources / f"{invoice.id}.pdf").write_bytes(
            Path(f"invoices/documents/{invoice.id}.pdf").read_bytes()
        )
    print(f"{len(invoices)} PDFs in sources/")

    with contextlib.ExitStack() as stack:
        if args.base_url:
            base_url = args.base_url
        else:
            served = {model: reader(book) for model, book in answer_books(invoices).items()}
            base_url = stack.enter_context(FakeModelServer(served)).base_url
            print(f"fake model server at {base_url} serving {', '.join(FAKE_MODELS)}")
        Path("gen.yaml").write_text(
            yaml.safe_dump(generation_config(base_url, models), sort_keys=False), encoding="utf-8"
        )

        heading("2. Generate: the models read every PDF blind and vote")
        workspace.docevals(
            "generate",
            "--config",
            "gen.yaml",
            "--sources-dir",
            "sources",
            "--output-dir",
            "review",
            "--experiment",
            EXPERIMENT,
        )

    heading("3. Review: list the disputed fields, then decide them")
    truth = {invoice.id: field_values(invoice) for invoice in invoices}
    for invoice in invoices:
        path = f"review/{invoice.id}.review.json"
        pending = [
            item.path for item in load_review(path).review_items if item.decision == "unresolved"
        ]
        if not pending:
            continue
        workspace.docevals("review", path)
        # The reviewer opens the PDF and types what it says.
        decisions = []
        for field in pending:
            decisions += ["--set", f"{field}={json.dumps(truth[invoice.id][field])}"]
        workspace.docevals("review", path, *decisions, "--notes", "checked against the PDF")

    heading("4. Sign: a key pair, then one signed approval per invoice")
    workspace.docevals("keygen", "--out", "keys/reviewer", "--comment", APPROVER)
    for invoice in invoices:
        workspace.docevals(
            "approve",
            f"review/{invoice.id}.review.json",
            "--approved-by",
            APPROVER,
            "--signing-key",
            "keys/reviewer",
            "--output",
            f"approved/{invoice.id}.json",
        )
    workspace.docevals(
        "verify",
        *[f"approved/{invoice.id}.json" for invoice in invoices],
        "--public-key",
        "keys/reviewer.pub",
    )
    print("\nA copy with one value changed after approval is refused:")
    tampered = read_json(f"approved/{invoices[0].id}.json")
    tampered_text = json.dumps(tampered).replace(
        json.dumps(truth[invoices[0].id]["$.invoice_number"]), '"TAMPERED-1"', 1
    )
    Path("tampered.json").write_text(tampered_text, encoding="utf-8")
    code = workspace.docevals(
        "verify", "tampered.json", "--public-key", "keys/reviewer.pub", expect=2
    )
    print(f"exit code {code}: refused (the reason is on stderr)")

    heading(f"5. Register the approved cases as the dataset {DATASET!r}")
    workspace.docevals(
        "register-dataset",
        DATASET,
        "--from",
        "approved",
        "--public-key",
        "keys/reviewer.pub",
        "--description",
        "examples: generated, reviewed and signed",
    )
    workspace.docevals("datasets", DATASET)

    heading(f"6. Evaluate an extractor against {DATASET}@1")
    for position, invoice in enumerate(invoices):
        write_json(f"predictions/{invoice.id}.json", system_output(invoice, position))
    for invoice in invoices:
        workspace.docevals(
            "evaluate-case",
            "--prediction",
            f"predictions/{invoice.id}.json",
            "--ground-truth-dataset",
            f"{DATASET}@1",
            "--public-key",
            "keys/reviewer.pub",
            "--case-id",
            invoice.id,
            "--output",
            f"reports/{invoice.id}.json",
            "--experiment",
            EXPERIMENT,
            "--run-name",
            f"evaluate {invoice.id}",
            expect=(0, 1),  # 1: the verdict is 'fail'
        )

    heading("What this shows")
    print(
        "No value became ground truth without a person: agreed fields were proposed by "
        "independent\nmodels, disputed ones decided by a reviewer, and every case signed. "
        "The registered dataset is\nverified again whenever it is loaded, and each "
        "evaluation run names the dataset version\nand digest it was scored against."
    )
    workspace.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
