"""The quickstart's document set: synthetic invoices, their PDFs, ground truth and schema.

Everything is derived from a seed. Each invoice draws from its own random stream
(seeded by the quickstart seed and the invoice's position), so ``--documents 6``
yields the first six invoices of ``--documents 24`` and a change to one invoice's
layout never shifts the others. PDFs carry fixed metadata and no random file id, so
the same seed also gives the same PDF bytes.

Files written under the output folder::

    documents/<id>.pdf      one page per invoice, rendered with pymupdf
    ground_truth.jsonl      {"id", "class": "Invoice", "data"} per invoice
    schema.yaml             the comparison rules (native schema format)
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from docevals_mlflow.core.atomic import atomic_write_bytes, atomic_write_text
from docevals_mlflow.fields.schema import DocumentSchema

DOCUMENT_CLASS = "Invoice"
MIN_ITEMS = 2
MAX_ITEMS = 8

NumberStyle = Literal["en", "de", "fr", "ch"]
DateStyle = Literal["dotted", "slashed", "dashed", "spelled"]

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
class Vendor:
    """A company that issues invoices, with the conventions its documents follow."""

    name: str
    city: str
    vat_id: str
    currency: str
    number_style: NumberStyle
    date_style: DateStyle
    invoice_number: Callable[[int, int], str]
    """``(year, sequence)`` → the vendor's invoice number."""


@dataclass(frozen=True, slots=True)
class Party:
    """The customer an invoice is billed to (printed, never part of the ground truth)."""

    name: str
    city: str


VENDORS: tuple[Vendor, ...] = (
    Vendor(
        "Nordwind Logistik GmbH",
        "Hamburg",
        "DE284719350",
        "EUR",
        "de",
        "dotted",
        lambda year, n: f"NW-{year % 100:02d}-{n:05d}",
    ),
    Vendor(
        "Atelier Lumière SARL",
        "Lyon",
        "FR47829105563",
        "EUR",
        "fr",
        "slashed",
        lambda year, n: f"F{year}-{n:04d}",
    ),
    Vendor(
        "Van Dijk Kantoorartikelen B.V.",
        "Utrecht",
        "NL853092741B01",
        "EUR",
        "de",
        "dashed",
        lambda year, n: f"VD{year}{n:05d}",
    ),
    Vendor(
        "Bright Harbour Consulting Ltd",
        "Bristol",
        "GB318204977",
        "GBP",
        "en",
        "spelled",
        lambda year, n: f"BHC-{n:04d}",
    ),
    Vendor(
        "Sierra Verde Suministros S.L.",
        "Valencia",
        "ESB46291837",
        "EUR",
        "de",
        "slashed",
        lambda year, n: f"SV/{year}/{n:04d}",
    ),
    Vendor(
        "Alpenblick Software AG",
        "Zürich",
        "CHE109322547",
        "CHF",
        "ch",
        "dotted",
        lambda year, n: f"AB-{year}-{n:04d}",
    ),
)

CUSTOMERS: tuple[Party, ...] = (
    Party("Meridian Health Partners", "Amsterdam"),
    Party("Copperleaf Retail Group", "Manchester"),
    Party("Hoffmann & Söhne KG", "München"),
    Party("Blue Fjord Shipping AS", "Bergen"),
    Party("Castellana Hoteles S.A.", "Madrid"),
    Party("Kestrel Analytics Ltd", "Leeds"),
)


@dataclass(frozen=True, slots=True)
class CatalogueItem:
    """Something an invoice can bill: its description and plausible price and quantity."""

    description: str
    min_cents: int
    max_cents: int
    max_quantity: int


CATALOGUE: tuple[CatalogueItem, ...] = (
    CatalogueItem("A4 copy paper, 500 sheets", 450, 900, 40),
    CatalogueItem("Toner cartridge, black, high yield", 6900, 14900, 6),
    CatalogueItem("Senior consulting (hour)", 9500, 18000, 40),
    CatalogueItem("Freight forwarding, per pallet", 4500, 21000, 12),
    CatalogueItem("Warehouse storage, per week", 2500, 8000, 8),
    CatalogueItem("USB-C docking station", 12900, 24900, 10),
    CatalogueItem("Software licence, annual", 29900, 149900, 5),
    CatalogueItem("On-site support visit", 15000, 45000, 3),
    CatalogueItem("Ergonomic office chair", 18900, 49900, 6),
    CatalogueItem("Whiteboard markers, set of 12", 890, 1990, 20),
    CatalogueItem("Translation, per page", 2800, 5500, 60),
    CatalogueItem("Express courier, same day", 3500, 9500, 4),
    CatalogueItem("Cloud backup, 1 TB per month", 900, 2900, 12),
    CatalogueItem("Network switch, 24 ports", 18900, 42900, 4),
    CatalogueItem("Safety gloves, box of 100", 1190, 2490, 25),
    CatalogueItem("Label printer ribbons", 1500, 3900, 15),
)

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


@dataclass(frozen=True, slots=True)
class LineItem:
    """One row of an invoice's items table; money in cents so sums are exact."""

    description: str
    quantity: int
    unit_cents: int

    @property
    def amount_cents(self) -> int:
        """Quantity times unit price, in cents."""
        return self.quantity * self.unit_cents


@dataclass(frozen=True, slots=True)
class Invoice:
    """A synthetic invoice: what its PDF shows, of which :meth:`truth` is the ground truth.

    The customer, due date and purchase order number are printed but not extracted;
    they are there because real extractions confuse fields with them.
    """

    id: str
    vendor: Vendor
    customer: Party
    invoice_number: str
    order_number: str
    issue_date: dt.date
    due_date: dt.date
    items: tuple[LineItem, ...]

    @property
    def total_cents(self) -> int:
        """The invoice total (the sum of its line amounts), in cents."""
        return sum(item.amount_cents for item in self.items)

    def truth(self) -> dict[str, Any]:
        """The ground-truth record data: plain JSON, amounts as numbers, ISO date."""
        return {
            "invoice_number": self.invoice_number,
            "issue_date": self.issue_date.isoformat(),
            "vendor": {
                "name": self.vendor.name,
                "city": self.vendor.city,
                "vat_id": self.vendor.vat_id,
            },
            "currency": self.vendor.currency,
            "total": cents_value(self.total_cents),
            "line_items": [
                {
                    "description": item.description,
                    "quantity": item.quantity,
                    "unit_price": cents_value(item.unit_cents),
                    "amount": cents_value(item.amount_cents),
                }
                for item in self.items
            ],
        }


# ---------------------------------------------------------------------------- formats


def cents_value(cents: int) -> float:
    """Cents as a JSON number of the currency unit (``123450`` → ``1234.5``)."""
    return round(cents / 100, 2)


_SEPARATORS: dict[str, tuple[str, str]] = {
    "en": (",", "."),
    "de": (".", ","),
    "fr": (" ", ","),
    "ch": ("'", "."),
}


def format_amount(cents: int, style: NumberStyle) -> str:
    """An amount as a vendor prints it: ``1,234.50``, ``1.234,50``, ``1 234,50``, ``1'234.50``."""
    thousands, decimal = _SEPARATORS[style]
    whole, fraction = divmod(abs(cents), 100)
    grouped = f"{whole:,}".replace(",", thousands)
    return f"{'-' if cents < 0 else ''}{grouped}{decimal}{fraction:02d}"


def format_date(day: dt.date, style: DateStyle) -> str:
    """A date as a vendor prints it; every style writes the day before the month."""
    if style == "dotted":
        return f"{day.day:02d}.{day.month:02d}.{day.year}"
    if style == "slashed":
        return f"{day.day:02d}/{day.month:02d}/{day.year}"
    if style == "dashed":
        return f"{day.day:02d}-{day.month:02d}-{day.year}"
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


def spelled_date(day: dt.date) -> str:
    """``15 March 2024``: a form every reader (and the DATE method) agrees on."""
    return format_date(day, "spelled")


# ---------------------------------------------------------------------------- generation


def invoice_rng(seed: int, index: int) -> random.Random:
    """The random stream of the ``index``-th invoice (independent of the set's size)."""
    # String seeds are hashed with SHA-512 by ``random``, so they are stable across
    # processes (unlike ``hash()``), and distinct per invoice.
    return random.Random(f"docevals-quickstart:{seed}:invoice:{index}")


def make_invoice(seed: int, index: int) -> Invoice:
    """The ``index``-th invoice (0-based) of the set generated from ``seed``."""
    rng = invoice_rng(seed, index)
    vendor = rng.choice(VENDORS)
    customer = rng.choice(CUSTOMERS)
    issue_date = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(366))
    due_date = issue_date + dt.timedelta(days=rng.choice((14, 30, 45)))
    # The position keeps numbers unique within the set; the random part keeps them
    # from looking like a counter.
    sequence = 100 + index * 37 + rng.randrange(37)
    chosen = rng.sample(CATALOGUE, rng.randint(MIN_ITEMS, MAX_ITEMS))
    items = tuple(
        LineItem(
            description=entry.description,
            quantity=rng.randint(1, entry.max_quantity),
            unit_cents=rng.randint(entry.min_cents, entry.max_cents),
        )
        for entry in chosen
    )
    return Invoice(
        id=f"invoice-{index + 1:03d}",
        vendor=vendor,
        customer=customer,
        invoice_number=vendor.invoice_number(issue_date.year, sequence),
        order_number=f"PO-{rng.randint(10000, 99999)}",
        issue_date=issue_date,
        due_date=due_date,
        items=items,
    )


def generate_invoices(count: int, seed: int = 7) -> list[Invoice]:
    """``count`` invoices, deterministic for ``seed``."""
    return [make_invoice(seed, index) for index in range(count)]


# ---------------------------------------------------------------------------- rendering

_PAGE_WIDTH, _PAGE_HEIGHT = 595, 842  # A4 in points
_LEFT, _RIGHT = 50, 545
_REGULAR, _BOLD = "helv", "hebo"  # PDF base-14 fonts: nothing to embed, nothing to find
# Right edges of the numeric columns of the items table.
_QTY_RIGHT, _PRICE_RIGHT, _AMOUNT_RIGHT = 360, 455, _RIGHT
_FIXED_DATE = "D:20240101000000Z"


def _pymupdf() -> Any:
    """The pymupdf module, imported when a PDF is made and typed as ``Any``.

    Importing it loads a layout model (most of a second), which listing or testing
    the generator does not need; and it has no type hints, so strict mypy would
    flag every call.
    """
    import pymupdf

    return pymupdf


def _text(
    shape: Any, x: float, y: float, text: str, *, size: float = 10, bold: bool = False
) -> None:
    shape.insert_text((x, y), text, fontsize=size, fontname=_BOLD if bold else _REGULAR)


def _right(
    shape: Any, right: float, y: float, text: str, *, size: float = 10, bold: bool = False
) -> None:
    font = _BOLD if bold else _REGULAR
    width = _pymupdf().get_text_length(text, fontname=font, fontsize=size)
    shape.insert_text((right - width, y), text, fontsize=size, fontname=font)


def _rule(shape: Any, y: float) -> None:
    shape.draw_line((_LEFT, y), (_RIGHT, y))
    shape.finish(width=0.8, color=(0, 0, 0))


def render_pdf(invoice: Invoice) -> bytes:
    """A one-page PDF of the invoice: header, vendor and customer, items table, total."""
    vendor = invoice.vendor
    style = vendor.number_style
    document = _pymupdf().open()
    page = document.new_page(width=_PAGE_WIDTH, height=_PAGE_HEIGHT)
    # One shape for the whole page, committed once: page.insert_text builds and
    # commits a shape per call, which made rendering ten times slower.
    shape = page.new_shape()

    _text(shape, _LEFT, 70, vendor.name, size=15, bold=True)
    _text(shape, _LEFT, 88, vendor.city)
    _text(shape, _LEFT, 102, f"VAT ID: {vendor.vat_id}")
    _right(shape, _RIGHT, 70, "INVOICE", size=22, bold=True)
    header = (
        ("Invoice no.", invoice.invoice_number),
        ("Date", format_date(invoice.issue_date, vendor.date_style)),
        ("Due date", format_date(invoice.due_date, vendor.date_style)),
        ("Your order", invoice.order_number),
    )
    for row, (label, value) in enumerate(header):
        y = 92 + row * 14
        _text(shape, 360, y, f"{label}:")
        _right(shape, _RIGHT, y, value, bold=row == 0)

    _text(shape, _LEFT, 160, "Bill to", bold=True)
    _text(shape, _LEFT, 174, invoice.customer.name)
    _text(shape, _LEFT, 188, invoice.customer.city)

    top = 230
    _text(shape, _LEFT, top, "Description", bold=True)
    _right(shape, _QTY_RIGHT, top, "Qty", bold=True)
    _right(shape, _PRICE_RIGHT, top, f"Unit price ({vendor.currency})", bold=True)
    _right(shape, _AMOUNT_RIGHT, top, f"Amount ({vendor.currency})", bold=True)
    _rule(shape, top + 6)
    y = top + 6
    for item in invoice.items:
        y += 18
        _text(shape, _LEFT, y, item.description)
        _right(shape, _QTY_RIGHT, y, str(item.quantity))
        _right(shape, _PRICE_RIGHT, y, format_amount(item.unit_cents, style))
        _right(shape, _AMOUNT_RIGHT, y, format_amount(item.amount_cents, style))
    _rule(shape, y + 8)
    y += 28
    _text(shape, 360, y, f"Total ({vendor.currency})", size=12, bold=True)
    _right(shape, _AMOUNT_RIGHT, y, format_amount(invoice.total_cents, style), size=12, bold=True)

    _text(shape, _LEFT, 780, f"Payment due by {format_date(invoice.due_date, vendor.date_style)}.")
    _text(shape, _LEFT, 794, "Synthetic invoice generated by docevals quickstart.", size=8)
    shape.commit()

    # Fixed metadata and no new file id: otherwise every run would change the bytes.
    document.set_metadata(
        {
            "title": f"Invoice {invoice.invoice_number}",
            "author": vendor.name,
            "creator": "docevals quickstart",
            "producer": "docevals quickstart",
            "creationDate": _FIXED_DATE,
            "modDate": _FIXED_DATE,
        }
    )
    data: bytes = document.tobytes(garbage=3, deflate=True, no_new_id=True)
    document.close()
    return data


# ---------------------------------------------------------------------------- files


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
