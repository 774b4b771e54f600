"""The quickstart's two prompt versions, and the extractions they are simulated to make.

No model is called. Each prompt version is simulated by copying the ground truth
through a seeded *error profile* that imitates what extraction models get wrong:
misread digits, decimal separators taken for thousands separators, dates rewritten
in the US order, the customer taken for the vendor, dropped table rows. Some
changes are only formatting (``"1.234,50"`` for ``1234.5``, ``"15 March 2024"`` for
``2024-03-15``) which the schema's methods are meant to accept, so the evaluation
also shows that a different spelling is not an error.

Each prediction carries a confidence map; corrupted values get lower confidence
than faithful ones (with some overlap, as real models have), so confidence says
something about correctness.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.quickstart.invoices import (
    Invoice,
    LineItem,
    cents_value,
    format_amount,
    format_date,
    spelled_date,
)

PROMPT_V1 = """\
Extract the invoice as JSON with the keys invoice_number, issue_date,
vendor {name, city, vat_id}, currency, total and
line_items [{description, quantity, unit_price, amount}].
"""

PROMPT_V2 = """\
You read one invoice and return JSON with exactly these keys:
invoice_number, issue_date, vendor {name, city, vat_id}, currency, total,
line_items [{description, quantity, unit_price, amount}].
Rules:
- The vendor is the company that issues the invoice (top left, with its VAT ID),
  never the "Bill to" customer.
- Copy invoice_number and vat_id character by character; do not use the order number.
- issue_date is the invoice date, not the due date; dates on these invoices are
  written day first.
- Read the decimal separator from the document: "1.234,50" is 1234.50.
- Include every row of the items table, in order; currency is the ISO code.
- Give a confidence between 0 and 1 for the invoice number, dates, vendor and amounts.
"""


@dataclass(frozen=True, slots=True)
class ErrorProfile:
    """How often a simulated prompt version makes each kind of mistake (probabilities).

    ``reformat`` is not a mistake: the value is written differently (locale amounts,
    other date spellings) and the schema's methods should accept it.
    """

    amount_misread: float
    total_misread: float
    swap_quantity_price: float
    drop_item: float
    vendor_is_customer: float
    city_is_customer: float
    vendor_typo: float
    vat_misread: float
    number_misread: float
    date_us_order: float
    date_is_due_date: float
    currency_symbol: float
    description_cut: float
    reformat: float


@dataclass(frozen=True, slots=True)
class PromptVersion:
    """A prompt version of the quickstart: its run name, prompt text and error profile."""

    version: str
    text: str
    errors: ErrorProfile

    @property
    def run_name(self) -> str:
        """``prompt-v1``: the report file stem and the MLflow run name."""
        return f"prompt-{self.version}"

    @property
    def sha256(self) -> str:
        """Fingerprint of the prompt text (the package's one hash: SHA-256 of canonical JSON)."""
        return sha256_json(self.text)


PROMPTS: tuple[PromptVersion, ...] = (
    PromptVersion(
        "v1",
        PROMPT_V1,
        ErrorProfile(
            amount_misread=0.12,
            total_misread=0.12,
            swap_quantity_price=0.05,
            drop_item=0.25,
            vendor_is_customer=0.10,
            city_is_customer=0.05,
            vendor_typo=0.10,
            vat_misread=0.10,
            number_misread=0.06,
            # Wrong only when the day is 12 or less (otherwise the order is unambiguous).
            date_us_order=0.30,
            date_is_due_date=0.05,
            currency_symbol=0.06,
            description_cut=0.06,
            reformat=0.25,
        ),
    ),
    PromptVersion(
        "v2",
        PROMPT_V2,
        ErrorProfile(
            amount_misread=0.02,
            total_misread=0.02,
            swap_quantity_price=0.0,
            drop_item=0.04,
            vendor_is_customer=0.0,
            city_is_customer=0.0,
            vendor_typo=0.08,
            vat_misread=0.03,
            number_misread=0.02,
            date_us_order=0.03,
            date_is_due_date=0.0,
            currency_symbol=0.0,
            description_cut=0.01,
            reformat=0.50,
        ),
    ),
)

# Digits an OCR or vision model plausibly reads as another (30.00 read as 80.00).
_DIGIT_CONFUSIONS = {
    "0": "8",
    "1": "7",
    "2": "7",
    "3": "8",
    "4": "9",
    "5": "6",
    "6": "5",
    "7": "1",
    "8": "3",
    "9": "4",
}
_LETTER_CONFUSIONS = {"l": "1", "o": "0", "e": "c", "i": "l", "a": "o", "n": "m", "u": "v"}
_SYMBOLS = {"EUR": "€", "GBP": "£", "CHF": "Fr."}


class _Extraction:
    """One simulated extraction: the predicted data and its confidence map."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.confidence: dict[str, float] = {}

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability

    def rate(self, path: str, wrong: bool) -> None:
        # Faithful values are usually confident and wrong ones usually not, with an
        # overlap so that confidence is informative without being an oracle.
        rng = self.rng
        if wrong:
            value = rng.uniform(0.55, 0.9) if rng.random() < 0.2 else rng.uniform(0.25, 0.7)
        else:
            value = rng.uniform(0.5, 0.85) if rng.random() < 0.08 else rng.uniform(0.85, 0.995)
        self.confidence[path] = round(value, 3)


def _misread_digit(text: str, rng: random.Random) -> str:
    """``text`` with one of its digits replaced by a look-alike."""
    positions = [index for index, char in enumerate(text) if char.isdigit()]
    index = rng.choice(positions)
    return text[:index] + _DIGIT_CONFUSIONS[text[index]] + text[index + 1 :]


def _misread_cents(cents: int, rng: random.Random) -> int:
    """A wrong reading of an amount: a confused digit or a shifted decimal point."""
    roll = rng.random()
    if roll < 0.55:
        # A digit of the whole units, never of the cents: a cent off would be within
        # the schema's tolerance and not an error at all.
        whole, fraction = divmod(cents, 100)
        return int(_misread_digit(str(whole), rng)) * 100 + fraction
    if roll < 0.8 and cents >= 100_000:
        # "1.234,50" read with the dot as the decimal point: 1.2345.
        return round(cents / 1000)
    return cents * 10 if rng.random() < 0.5 else round(cents / 10)


def _amount(cents: int, invoice: Invoice, run: _Extraction, reformat: float) -> Any:
    """How an extraction writes an amount: a number, or the printed text (still correct)."""
    if not run.chance(reformat):
        return cents_value(cents)
    printed = format_amount(cents, invoice.vendor.number_style)
    return f"{invoice.vendor.currency} {printed}" if run.chance(0.3) else printed


def _typo(text: str, rng: random.Random) -> str:
    """``text`` with one letter read as a look-alike (a slip FUZZY should forgive)."""
    positions = [index for index, char in enumerate(text) if char in _LETTER_CONFUSIONS]
    if not positions:
        return text
    index = rng.choice(positions)
    return text[:index] + _LETTER_CONFUSIONS[text[index]] + text[index + 1 :]


def _date(invoice: Invoice, run: _Extraction, errors: ErrorProfile) -> tuple[str, bool]:
    day = invoice.issue_date
    if run.chance(errors.date_is_due_date):
        return invoice.due_date.isoformat(), True
    if run.chance(errors.date_us_order):
        # Month first, as a US-trained model likes it; read day first, it is another
        # date unless the day cannot be a month or equals it.
        wrong = day.day <= 12 and day.day != day.month
        return f"{day.month:02d}/{day.day:02d}/{day.year}", wrong
    if run.chance(errors.reformat):
        return run.rng.choice(
            (format_date(day, invoice.vendor.date_style), spelled_date(day))
        ), False
    return day.isoformat(), False


def _invoice_number(invoice: Invoice, run: _Extraction, errors: ErrorProfile) -> tuple[str, bool]:
    if not run.chance(errors.number_misread):
        return invoice.invoice_number, False
    if run.chance(0.4):
        return invoice.order_number, True
    return _misread_digit(invoice.invoice_number, run.rng), True


def _vat_id(invoice: Invoice, run: _Extraction, errors: ErrorProfile) -> tuple[str, bool]:
    vat_id = invoice.vendor.vat_id
    if not run.chance(errors.vat_misread):
        return vat_id, False
    if run.chance(0.3):
        return vat_id[2:], True  # the country prefix dropped
    return _misread_digit(vat_id, run.rng), True


def _line_item(
    item: LineItem, index: int, invoice: Invoice, run: _Extraction, errors: ErrorProfile
) -> dict[str, Any]:
    description = item.description
    if run.chance(errors.description_cut):
        # Only the words before the first comma or the first two words survive.
        head = description.split(",")[0]
        description = head if head != description else " ".join(description.split()[:2])
    quantity: Any = item.quantity
    unit_price = _amount(item.unit_cents, invoice, run, errors.reformat)
    if run.chance(errors.swap_quantity_price):
        quantity, unit_price = unit_price, quantity
    amount_cents = item.amount_cents
    wrong_amount = run.chance(errors.amount_misread)
    if wrong_amount:
        amount_cents = _misread_cents(amount_cents, run.rng)
    run.rate(f"$.line_items[{index}].amount", wrong_amount)
    return {
        "description": description,
        "quantity": quantity,
        "unit_price": unit_price,
        "amount": _amount(amount_cents, invoice, run, errors.reformat),
    }


def prediction_rng(seed: int, version: str, document_id: str) -> random.Random:
    """The random stream of one document's simulated extraction by one prompt version."""
    return random.Random(f"docevals-quickstart:{seed}:{version}:{document_id}")


def simulate_extraction(
    invoice: Invoice, prompt: PromptVersion, seed: int
) -> tuple[dict[str, Any], dict[str, float]]:
    """What ``prompt`` "extracts" from ``invoice``: the data and a confidence map."""
    errors = prompt.errors
    run = _Extraction(prediction_rng(seed, prompt.version, invoice.id))
    vendor = invoice.vendor

    number, wrong = _invoice_number(invoice, run, errors)
    run.rate("$.invoice_number", wrong)
    issue_date, wrong = _date(invoice, run, errors)
    run.rate("$.issue_date", wrong)

    name = vendor.name
    wrong = run.chance(errors.vendor_is_customer)
    if wrong:
        name = invoice.customer.name
    elif run.chance(errors.vendor_typo):
        name = _typo(name, run.rng)
    run.rate("$.vendor.name", wrong)
    city = invoice.customer.city if run.chance(errors.city_is_customer) else vendor.city
    vat_id, wrong = _vat_id(invoice, run, errors)
    run.rate("$.vendor.vat_id", wrong)

    currency = vendor.currency
    if run.chance(errors.currency_symbol):
        currency = _SYMBOLS.get(currency, currency)

    total_cents = invoice.total_cents
    wrong = run.chance(errors.total_misread)
    if wrong:
        total_cents = _misread_cents(total_cents, run.rng)
    run.rate("$.total", wrong)

    items = list(invoice.items)
    if len(items) > 1 and run.chance(errors.drop_item):
        # Usually the last row (a table running to the page's end), sometimes another.
        items.pop(-1 if run.chance(0.6) else run.rng.randrange(len(items)))
    data = {
        "invoice_number": number,
        "issue_date": issue_date,
        "vendor": {"name": name, "city": city, "vat_id": vat_id},
        "currency": currency,
        "total": _amount(total_cents, invoice, run, errors.reformat),
        "line_items": [
            _line_item(item, index, invoice, run, errors) for index, item in enumerate(items)
        ],
    }
    return data, run.confidence
