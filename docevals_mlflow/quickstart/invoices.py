"""The quickstart's synthetic invoices: vendors, customers and a catalogue to draw
from, the invoice model with its ground truth, how each vendor prints amounts and
dates, and the seeded generation.

Each invoice draws from its own random stream (seeded by the quickstart seed and the
invoice's position), so ``--documents 6`` yields the first six invoices of
``--documents 24`` and a change to one invoice's layout never shifts the others.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

DOCUMENT_CLASS = "Invoice"
MIN_ITEMS = 2
MAX_ITEMS = 8

NumberStyle = Literal["en", "de", "fr", "ch"]
DateStyle = Literal["dotted", "slashed", "dashed", "spelled"]


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
