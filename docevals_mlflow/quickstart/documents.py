"""The quickstart's document set: synthetic invoices (see
:mod:`~docevals_mlflow.quickstart.invoices`), their PDFs (see
:mod:`~docevals_mlflow.quickstart.pdf`), ground truth and schema, written to disk.

Everything is derived from a seed, so the same seed gives the same files, byte for
byte.

Files written under the output folder::

    documents/<id>.pdf      one page per invoice, rendered with pymupdf
    ground_truth.jsonl      {"id", "class": "Invoice", "data"} per invoice
    schema.yaml             the comparison rules (native schema format)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.core.atomic import atomic_write_bytes, atomic_write_text
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.quickstart.invoices import DOCUMENT_CLASS, Invoice
from docevals_mlflow.quickstart.pdf import render_pdf

SCHEMA_YAML = """\
# Comparison rules for the docevals quickstart invoices (native schema format, see
# docevals_mlflow/fields/schema.py). Each method says what counts as "the same value".
schema_id: quickstart-invoices
version: "1"
classes:
  - name: Invoice
    fields:
      # Identifiers: one wrong character points to another invoice or company.
      invoice_number: {method: EXACT}
      # Any written form of the same calendar day matches. The vendors are European,
      # so a numeric date reads day first: 03/04/2024 is 3 April.
      issue_date: {method: DATE, date_order: day_first}
      vendor:
        fields:
          # Names tolerate an OCR slip or two, but not another company's name.
          name: {method: FUZZY, threshold: 0.85}
          city: {method: FUZZY, threshold: 0.85}
          vat_id: {method: EXACT}
      # ISO codes; case and spaces do not matter.
      currency: {method: NORMALIZED}
      # Amounts match within one cent, whatever their written form
      # ("1.234,50", "EUR 1234.5" and 1234.5 are the same amount).
      total: {method: NUMERIC_EXACT, threshold: 0.01}
      # Items are paired by similarity (Hungarian matching), so their order does not
      # matter; an item the extraction dropped counts as missed on each of its fields.
      line_items:
        match_threshold: 0.5
        items:
          fields:
            description: {method: FUZZY, threshold: 0.8}
            quantity: {method: NUMERIC_EXACT, threshold: 0.01}
            unit_price: {method: NUMERIC_EXACT, threshold: 0.01}
            amount: {method: NUMERIC_EXACT, threshold: 0.01}
"""


@dataclass(frozen=True, slots=True)
class DocumentSet:
    """Where the document set was written."""

    root: Path
    invoices: tuple[Invoice, ...]
    documents: Path
    ground_truth: Path
    schema_path: Path
    schema: DocumentSchema


def jsonl(records: Iterable[Any]) -> str:
    """JSON Lines text: one compact record per line, non-ASCII kept as is."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


_PDF_NAME = re.compile(r"invoice-\d{3,}\.pdf")


def _remove_stale_pdfs(folder: Path, keep: set[str]) -> None:
    # A previous run with more documents left PDFs this ground truth does not list;
    # only files named like ours are touched, never anything the user put there.
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if _PDF_NAME.fullmatch(entry.name) and entry.name not in keep and entry.is_file():
            entry.unlink()


def write_document_set(
    root: str | Path,
    invoices: Sequence[Invoice],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> DocumentSet:
    """Write the PDFs, ``ground_truth.jsonl`` and ``schema.yaml`` under ``root``.

    ``progress(done, total)`` is called after each PDF.
    """
    folder = Path(root)
    documents = folder / "documents"
    total = len(invoices)
    for done, invoice in enumerate(invoices, start=1):
        atomic_write_bytes(documents / f"{invoice.id}.pdf", render_pdf(invoice))
        if progress is not None:
            progress(done, total)
    _remove_stale_pdfs(documents, {f"{invoice.id}.pdf" for invoice in invoices})
    ground_truth = atomic_write_text(
        folder / "ground_truth.jsonl",
        jsonl(
            {"id": invoice.id, "class": DOCUMENT_CLASS, "data": invoice.truth()}
            for invoice in invoices
        ),
    )
    schema_path = atomic_write_text(folder / "schema.yaml", SCHEMA_YAML)
    # Read back from the file written, so the quickstart evaluates with exactly what
    # a user would pass to ``docevals fields --schema``.
    schema = DocumentSchema.load(schema_path)
    return DocumentSet(folder, tuple(invoices), documents, ground_truth, schema_path, schema)
