"""``docevals quickstart``: a self-contained tour of field evaluation and MLflow tracking.

It generates a small set of synthetic invoices (PDFs, ground truth and a schema),
simulates two versions of an extraction prompt with realistic, seeded errors,
evaluates both with the field engine and (from the command) logs each as an MLflow
run, so that the two prompt versions can be compared side by side.
"""

from __future__ import annotations

from docevals_mlflow.quickstart.documents import SCHEMA_YAML, DocumentSet, write_document_set
from docevals_mlflow.quickstart.invoices import Invoice, generate_invoices
from docevals_mlflow.quickstart.pdf import render_pdf
from docevals_mlflow.quickstart.run import QuickstartResult, VersionResult, run_quickstart
from docevals_mlflow.quickstart.simulation import PROMPTS, PromptVersion, simulate_extraction

__all__ = [
    "PROMPTS",
    "SCHEMA_YAML",
    "DocumentSet",
    "Invoice",
    "PromptVersion",
    "QuickstartResult",
    "VersionResult",
    "generate_invoices",
    "render_pdf",
    "run_quickstart",
    "simulate_extraction",
    "write_document_set",
]
