"""Documents the examples generate: bank statements, cover letters and packets.

Invoices come from the quickstart's generator (``docevals_mlflow.quickstart``);
this module adds synthetic bank statements (one or more pages), one-page cover
letters and *packets*, several documents bound into one PDF as a loan application
arrives, with the page ranges that are the packet's ground truth. Everything is
derived from a seed and rendered with pymupdf in the PDF base-14 fonts, so the
files are the same on every machine.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import Any

import pymupdf as _pymupdf

from docevals_mlflow.quickstart import Invoice, generate_invoices, render_pdf

# pymupdf has no type hints; typed as Any, its calls do not trip strict type checks.
pymupdf: Any = _pymupdf

PAGE_WIDTH, PAGE_HEIGHT = 595, 842  # A4 in points
LEFT, RIGHT = 50, 545
ROWS_PER_PAGE = 24
FIXED_DATE = "D:20240101000000Z"

BANKS = (
    ("Hanseatic Savings Bank", "DE", "de"),
    ("Banque du Rhône", "FR", "fr"),
    ("Northgate Building Society", "GB", "en"),
)
HOLDERS = (
    ("Marta Kowalski", "Hamburg"),
    ("Jonas Becker", "Bremen"),
    ("Amélie Laurent", "Lyon"),
    ("Oliver Hughes", "Bristol"),
    ("Sofia Romano", "Utrecht"),
)
PAYEES = (
    ("Salary ACME Logistics", 180_000, 320_000),
    ("Rent Harbour Flats", -140_000, -90_000),
    ("Card payment Fresh Market", -9_000, -1_200),
    ("Direct debit City Power", -12_000, -4_000),
    ("Card payment Rail Tickets", -8_000, -900),
    ("Transfer from savings", 20_000, 80_000),
    ("Direct debit Mobile Phone", -4_500, -1_500),
    ("Card payment Pharmacy", -3_500, -600),
    ("Standing order Insurance", -9_500, -3_000),
    ("Refund Online Store", 900, 6_500),
)


@dataclass(frozen=True, slots=True)
class Transaction:
    """One statement line; money in cents so sums are exact."""

    day: dt.date
    description: str
    amount_cents: int


@dataclass(frozen=True, slots=True)
class BankStatement:
    """A synthetic bank statement: what its pages show, and :meth:`truth`."""

    id: str
    bank: str
    number_style: str
    account_number: str
    holder_name: str
    holder_city: str
    currency: str
    period_start: dt.date
    period_end: dt.date
    opening_cents: int
    transactions: tuple[Transaction, ...]

    @property
    def closing_cents(self) -> int:
        """Opening balance plus every transaction."""
        return self.opening_cents + sum(t.amount_cents for t in self.transactions)

    @property
    def pages(self) -> int:
        """How many pages the statement takes."""
        return max(1, -(-len(self.transactions) // ROWS_PER_PAGE))

    def truth(self) -> dict[str, Any]:
        """The ground truth: plain JSON, amounts as numbers, ISO dates."""
        return {
            "bank": self.bank,
            "account_number": self.account_number,
            "account_holder": {"name": self.holder_name, "city": self.holder_city},
            "currency": self.currency,
            "period": {"start": self.period_start.isoformat(), "end": self.period_end.isoformat()},
            "opening_balance": self.opening_cents / 100,
            "closing_balance": self.closing_cents / 100,
            "transactions": [
                {
                    "date": t.day.isoformat(),
                    "description": t.description,
                    "amount": t.amount_cents / 100,
                }
                for t in self.transactions
            ],
        }


def make_statement(
    seed: int, index: int, *, min_rows: int = 8, max_rows: int = 18
) -> BankStatement:
    """The ``index``-th statement (0-based) of the set generated from ``seed``."""
    rng = random.Random(f"docevals-examples:{seed}:statement:{index}")
    bank, country, style = rng.choice(BANKS)
    holder, city = rng.choice(HOLDERS)
    month = rng.randrange(1, 13)
    start = dt.date(2024, month, 1)
    end = (start + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
    days = sorted(
        start + dt.timedelta(days=rng.randrange((end - start).days + 1))
        for _ in range(rng.randint(min_rows, max_rows))
    )
    transactions = tuple(
        Transaction(day, description, rng.randint(low, high))
        for day, (description, low, high) in zip(
            days, (rng.choice(PAYEES) for _ in days), strict=True
        )
    )
    digits = "".join(str(rng.randrange(10)) for _ in range(18))
    return BankStatement(
        id=f"statement-{index + 1:03d}",
        bank=bank,
        number_style=style,
        account_number=f"{country}{digits[:2]} "
        + " ".join(digits[start : start + 4] for start in range(2, 18, 4)),
        holder_name=holder,
        holder_city=city,
        currency="GBP" if country == "GB" else "EUR",
        period_start=start,
        period_end=end,
        opening_cents=rng.randint(50_000, 900_000),
        transactions=transactions,
    )


def generate_statements(count: int, seed: int = 7, **rows: int) -> list[BankStatement]:
    """``count`` statements, deterministic for ``seed``."""
    return [make_statement(seed, index, **rows) for index in range(count)]


_SEPARATORS = {"en": (",", "."), "de": (".", ","), "fr": (" ", ",")}


def money(cents: int, style: str) -> str:
    """An amount as the bank prints it: ``-1,234.50``, ``-1.234,50`` or ``-1 234,50``."""
    thousands, decimal = _SEPARATORS[style]
    whole, fraction = divmod(abs(cents), 100)
    return (
        f"{'-' if cents < 0 else ''}{whole:,}".replace(",", thousands) + f"{decimal}{fraction:02d}"
    )


def _text(
    shape: Any, x: float, y: float, text: str, *, size: float = 10, bold: bool = False
) -> None:
    shape.insert_text((x, y), text, fontsize=size, fontname="hebo" if bold else "helv")


def _right(
    shape: Any, right: float, y: float, text: str, *, size: float = 10, bold: bool = False
) -> None:
    font = "hebo" if bold else "helv"
    width = pymupdf.get_text_length(text, fontname=font, fontsize=size)
    shape.insert_text((right - width, y), text, fontsize=size, fontname=font)


def _finish(document: Any, title: str) -> bytes:
    # Fixed metadata and no new file id: the same document gives the same bytes.
    document.set_metadata(
        {
            "title": title,
            "creator": "docevals examples",
            "producer": "docevals examples",
            "creationDate": FIXED_DATE,
            "modDate": FIXED_DATE,
        }
    )
    data: bytes = document.tobytes(garbage=3, deflate=True, no_new_id=True)
    document.close()
    return data


def render_statement(statement: BankStatement) -> bytes:
    """The statement as a PDF: a header on every page, the transactions table, and
    the opening and closing balances."""
    document = pymupdf.open()
    style = statement.number_style
    rows = statement.transactions
    for page_number in range(statement.pages):
        page = document.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
        shape = page.new_shape()
        _text(shape, LEFT, 70, statement.bank, size=15, bold=True)
        _right(shape, RIGHT, 70, "ACCOUNT STATEMENT", size=16, bold=True)
        _text(shape, LEFT, 92, f"Account holder: {statement.holder_name}, {statement.holder_city}")
        _text(shape, LEFT, 106, f"Account number: {statement.account_number}")
        period = f"{statement.period_start:%d.%m.%Y} to {statement.period_end:%d.%m.%Y}"
        _text(shape, LEFT, 120, f"Period: {period}    Currency: {statement.currency}")
        _right(shape, RIGHT, 92, f"Page {page_number + 1} of {statement.pages}")
        y = 160
        if page_number == 0:
            _text(shape, LEFT, y, "Opening balance", bold=True)
            _right(shape, RIGHT, y, money(statement.opening_cents, style), bold=True)
            y += 24
        _text(shape, LEFT, y, "Date", bold=True)
        _text(shape, 130, y, "Description", bold=True)
        _right(shape, RIGHT, y, f"Amount ({statement.currency})", bold=True)
        shape.draw_line((LEFT, y + 6), (RIGHT, y + 6))
        shape.finish(width=0.8, color=(0, 0, 0))
        y += 6
        for row in rows[page_number * ROWS_PER_PAGE : (page_number + 1) * ROWS_PER_PAGE]:
            y += 18
            _text(shape, LEFT, y, f"{row.day:%d.%m.%Y}")
            _text(shape, 130, y, row.description)
            _right(shape, RIGHT, y, money(row.amount_cents, style))
        if page_number == statement.pages - 1:
            y += 30
            _text(shape, LEFT, y, "Closing balance", bold=True)
            _right(shape, RIGHT, y, money(statement.closing_cents, style), bold=True)
        _text(shape, LEFT, 800, "Synthetic statement generated by the docevals examples.", size=8)
        shape.commit()
    return _finish(document, f"Statement {statement.account_number}")


def render_cover_letter(applicant: str, city: str, documents: int) -> bytes:
    """A one-page cover letter that opens a packet."""
    document = pymupdf.open()
    page = document.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
    shape = page.new_shape()
    _text(shape, LEFT, 70, applicant, size=13, bold=True)
    _text(shape, LEFT, 86, city)
    _text(shape, LEFT, 150, "Re: loan application, supporting documents", bold=True)
    lines = (
        "Dear Sir or Madam,",
        "",
        f"please find enclosed {documents} supporting documents for my loan application:",
        "recent invoices of my business and statements of my accounts.",
        "",
        "Yours faithfully,",
        applicant,
    )
    for number, line in enumerate(lines):
        _text(shape, LEFT, 190 + number * 16, line)
    shape.commit()
    return _finish(document, "Cover letter")


def render_png(pdf: bytes, page: int = 0, dpi: int = 100) -> bytes:
    """One page of a PDF as a PNG image (what a scanner or a vision model sees)."""
    with pymupdf.open(stream=pdf, filetype="pdf") as document:
        data: bytes = document[page].get_pixmap(dpi=dpi).tobytes("png")
    return data


@dataclass(frozen=True, slots=True)
class PacketDocument:
    """One document bound into a packet: its class, id and pages (0-based)."""

    document_class: str
    document_id: str
    page_indices: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Packet:
    """A packet PDF and the documents it holds, in page order."""

    id: str
    pdf: bytes
    documents: tuple[PacketDocument, ...]

    @property
    def page_count(self) -> int:
        """Pages in the packet."""
        return sum(len(document.page_indices) for document in self.documents)

    def expected_sections(self) -> dict[str, Any]:
        """The ground truth in the split format (``sections``)."""
        return {
            "sections": [
                {
                    "section_id": document.document_id,
                    "document_class": document.document_class,
                    "page_indices": list(document.page_indices),
                }
                for document in self.documents
            ]
        }


def make_packet(seed: int, index: int) -> Packet:
    """The ``index``-th packet: a cover letter, then one or two invoices and one or
    two bank statements in random order (the first statement runs to two pages)."""
    rng = random.Random(f"docevals-examples:{seed}:packet:{index}")
    invoices: list[Invoice] = generate_invoices(index * 2 + 2, seed)[index * 2 :]
    statements = [
        make_statement(
            seed, 100 + index * 2, min_rows=ROWS_PER_PAGE + 4, max_rows=ROWS_PER_PAGE + 14
        ),
        make_statement(seed, 101 + index * 2),
    ]
    parts: list[tuple[str, str, bytes]] = [
        ("Invoice", invoice.id, render_pdf(invoice)) for invoice in invoices[: rng.randint(1, 2)]
    ]
    parts += [
        ("Bank Statement", statement.id, render_statement(statement))
        for statement in statements[: rng.randint(1, 2)]
    ]
    rng.shuffle(parts)
    holder, city = rng.choice(HOLDERS)
    parts.insert(0, ("Cover Letter", "cover-letter", render_cover_letter(holder, city, len(parts))))
    packet = pymupdf.open()
    documents = []
    for document_class, document_id, pdf in parts:
        first = packet.page_count
        with pymupdf.open(stream=pdf, filetype="pdf") as part:
            packet.insert_pdf(part)
        pages = tuple(range(first, packet.page_count))
        documents.append(PacketDocument(document_class, document_id, pages))
    packet_id = f"packet-{index + 1:03d}"
    return Packet(packet_id, _finish(packet, f"Loan application {packet_id}"), tuple(documents))


def generate_packets(count: int, seed: int = 7) -> list[Packet]:
    """``count`` packets, deterministic for ``seed``."""
    return [make_packet(seed, index) for index in range(count)]
