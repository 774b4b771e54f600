"""Table pieces of the split Markdown report, laid out as the seed's report lays them
out: centred columns, icons and italics passed through unescaped, capped lists."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from docevals_mlflow.reports.markdown import cell

MAX_LISTED = 30
"""Pages or ids listed inline (missed boundaries, wrong pages, unpaired ids)."""


class RawCell(str):
    """Text already safe for a table cell (icons, italics)."""


def _row(values: Iterable[Any]) -> str:
    return (
        "| "
        + " | ".join(cell(value) if not isinstance(value, RawCell) else value for value in values)
        + " |"
    )


def seed_table(
    headers: Sequence[str], align: Sequence[str], rows: Iterable[Sequence[Any]]
) -> list[str]:
    """A table with the seed's alignment row (``c`` centred, ``l`` left)."""
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append(
        "| "
        + " | ".join(
            (":" + "-" * max(1, len(header) - 2) + ":")
            if mode == "c"
            else "-" * max(3, len(header))
            for header, mode in zip(headers, align, strict=True)
        )
        + " |"
    )
    lines.extend(_row(row) for row in rows)
    return lines


def listed(items: Sequence[Any]) -> str:
    """Items joined by commas, at most ``MAX_LISTED`` of them, saying how many more."""
    shown = ", ".join(str(item) for item in items[:MAX_LISTED])
    if len(items) > MAX_LISTED:
        shown += f" … and {len(items) - MAX_LISTED} more"
    return shown
