"""Running the quickstart: two prompt versions "extract" the invoices (see
:mod:`~docevals_mlflow.quickstart.simulation`; no model is called), and both are
evaluated with the field engine as ``docevals fields`` would evaluate them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.jsontext import report_json_text
from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.inputs import pair_records
from docevals_mlflow.quickstart.documents import DocumentSet, jsonl, write_document_set
from docevals_mlflow.quickstart.invoices import DOCUMENT_CLASS, generate_invoices
from docevals_mlflow.quickstart.simulation import PROMPTS, PromptVersion, simulate_extraction
from docevals_mlflow.reports.fields_markdown import render_fields_markdown

Progress = Callable[[str, int, int], None]
"""``progress(step, done, total)``: called as a step advances (``done == total`` ends it)."""


@dataclass(frozen=True, slots=True)
class VersionResult:
    """One prompt version's predictions and evaluation."""

    prompt: PromptVersion
    predictions: Path
    report: dict[str, Any]
    markdown: str
    json_report: Path
    markdown_report: Path

    @property
    def metrics(self) -> dict[str, float | None]:
        """The batch's micro metrics (precision, recall, f1, ...)."""
        metrics: dict[str, float | None] = self.report["overall"]["metrics"]
        return metrics

    def weakest_fields(self, count: int = 3) -> list[tuple[str, float]]:
        """The ``count`` field templates with the lowest F1, lowest first."""
        scored = [
            (entry["template"], float(entry["metrics"]["f1"]))
            for entry in self.report["fields"]
            if entry["metrics"]["f1"] is not None
        ]
        # Ties broken by template so the list is stable from run to run.
        return sorted(scored, key=lambda pair: (pair[1], pair[0]))[:count]


@dataclass(frozen=True, slots=True)
class QuickstartResult:
    """Everything the quickstart wrote: the document set and one result per prompt."""

    documents: DocumentSet
    versions: tuple[VersionResult, ...]
    seed: int

    @property
    def reports(self) -> Path:
        """The folder of the JSON and Markdown reports."""
        return self.documents.root / "reports"


def write_predictions(
    documents: DocumentSet, prompt: PromptVersion, seed: int, *, progress: Progress | None = None
) -> Path:
    """Simulate ``prompt`` on every invoice and write ``predictions_<version>.jsonl``."""
    records = []
    total = len(documents.invoices)
    for done, invoice in enumerate(documents.invoices, start=1):
        data, confidence = simulate_extraction(invoice, prompt, seed)
        records.append(
            {"id": invoice.id, "class": DOCUMENT_CLASS, "data": data, "confidence": confidence}
        )
        if progress is not None:
            progress(f"extracting with {prompt.run_name}", done, total)
    return atomic_write_text(documents.root / f"predictions_{prompt.version}.jsonl", jsonl(records))


def evaluate_version(
    documents: DocumentSet, prompt: PromptVersion, predictions: Path
) -> VersionResult:
    """Compare a version's predictions with the ground truth; write its JSON and Markdown."""
    # The same path as ``docevals fields``: records paired by id from the files on
    # disk, so what the quickstart reports is what the command would report.
    pairs, expected_only, predicted_only = pair_records(documents.ground_truth, predictions)
    batch = compare_documents(
        pairs, documents.schema, expected_only=expected_only, predicted_only=predicted_only
    )
    report = batch.to_report()
    markdown = render_fields_markdown(report)
    folder = documents.root / "reports"
    json_report = atomic_write_text(
        folder / f"{prompt.run_name}.json",
        report_json_text(report),
    )
    markdown_report = atomic_write_text(folder / f"{prompt.run_name}.md", markdown)
    return VersionResult(prompt, predictions, report, markdown, json_report, markdown_report)


def run_quickstart(
    output_dir: str | Path,
    *,
    documents: int = 24,
    seed: int = 7,
    progress: Progress | None = None,
) -> QuickstartResult:
    """Generate the invoices, simulate both prompt versions and evaluate them.

    Writes under ``output_dir``: ``documents/*.pdf``, ``ground_truth.jsonl``,
    ``schema.yaml``, ``predictions_v1.jsonl``, ``predictions_v2.jsonl`` and
    ``reports/prompt-v1.{json,md}``, ``reports/prompt-v2.{json,md}``. MLflow is not
    touched here (see ``docevals quickstart``).
    """

    def generated(done: int, total: int) -> None:
        if progress is not None:
            progress("generating invoices", done, total)

    invoices = generate_invoices(documents, seed)
    document_set = write_document_set(output_dir, invoices, progress=generated)
    predictions = [
        (prompt, write_predictions(document_set, prompt, seed, progress=progress))
        for prompt in PROMPTS
    ]
    results = []
    for done, (prompt, path) in enumerate(predictions, start=1):
        results.append(evaluate_version(document_set, prompt, path))
        if progress is not None:
            progress("evaluating", done, len(predictions))
    return QuickstartResult(document_set, tuple(results), seed)
