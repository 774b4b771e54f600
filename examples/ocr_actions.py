"""The extraction stage of the OCR → extraction example: invoice fields parsed from a
page's text.

:func:`extract` is the whole stage: page text in, the invoice's fields out (the
quickstart's ground-truth shape: ``invoice_number``, ``issue_date``, ``vendor``,
``currency``, ``total``, ``line_items``). The example records its output on what the
OCR read, and ``docevals evaluate-pipeline --action extract=ocr_actions:extract``
calls it again on the true page text to see whether an extraction failure was the
OCR's doing.

It reads amounts in any of the vendors' conventions (``1,234.50``, ``1.234,50``,
``1 234,50``, ``1'234.50``) and numeric dates day first (``15.03.2024``,
``15/03/2024``, ``15-03-2024``). It has a bug of its own: a date with the month
written out (``15 March 2024``) is not recognised, so the issue date comes back
empty.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_NUMBER = r"\d+(?:[.,' ]\d+)*"
_ROW = re.compile(
    rf"(?P<description>\S.*?)\s{{2,}}(?P<quantity>\d+)\s{{2,}}(?P<unit>{_NUMBER})"
    rf"\s{{2,}}(?P<amount>{_NUMBER})"
)
_TOTAL = re.compile(rf"Total \((?P<currency>[A-Z]{{3}})\)\s+(?P<amount>{_NUMBER})")
_NUMERIC_DATE = re.compile(r"(\d{1,2})[./-](\d{1,2})[./-](\d{4})")


def parse_amount(text: str) -> float | None:
    """An amount as printed, in any of the vendors' conventions: the last ``.`` or ``,``
    followed by exactly two digits is the decimal separator, any other separator
    groups thousands. ``None`` when ``text`` is not a number."""
    compact = text.replace(" ", "").replace("'", "")
    if not re.fullmatch(r"\d+(?:[.,]\d+)*", compact):
        return None
    if len(compact) > 3 and compact[-3] in ".,":
        whole, cents = compact[:-3], compact[-2:]
    else:
        whole, cents = compact, "00"
    return round(int(re.sub(r"[.,]", "", whole)) + int(cents) / 100, 2)


def parse_date(text: str) -> str | None:
    """An ISO date from a numeric day-first date; ``None`` otherwise (the bug: a
    written-out month is never recognised)."""
    match = _NUMERIC_DATE.fullmatch(text.strip())
    if match is None:
        return None
    day, month, year = (int(part) for part in match.groups())
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None


def _labelled(lines: list[str], label: str) -> str | None:
    """The value after ``label:`` on the line that starts with it."""
    for line in lines:
        if line.startswith(f"{label}:"):
            return line[len(label) + 1 :].strip() or None
    return None


def _line_items(lines: list[str]) -> list[dict[str, Any]]:
    items = []
    for line in lines:
        match = _ROW.fullmatch(line)
        if match is None:
            continue
        items.append(
            {
                "description": match["description"],
                "quantity": int(match["quantity"]),
                "unit_price": parse_amount(match["unit"]),
                "amount": parse_amount(match["amount"]),
            }
        )
    return items


def extract(text: str) -> dict[str, Any]:
    """The invoice's fields, parsed from its page text."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    vat_id = _labelled(lines, "VAT ID")
    issue_date = _labelled(lines, "Date")
    totals = [match for line in lines if (match := _TOTAL.fullmatch(line))]
    return {
        "invoice_number": _labelled(lines, "Invoice no."),
        "issue_date": parse_date(issue_date) if issue_date else None,
        "vendor": {
            "name": lines[0] if lines else None,
            "city": lines[1] if len(lines) > 1 else None,
            "vat_id": vat_id,
        },
        "currency": totals[0]["currency"] if totals else None,
        "total": parse_amount(totals[0]["amount"]) if totals else None,
        "line_items": _line_items(lines),
    }
