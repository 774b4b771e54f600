"""The table cells every Markdown report shares: escaping, exact values, tables.

Field values are printed exactly as given (:func:`value_cell`); metrics and rates go
through :mod:`docevals_mlflow.core.formatting` before they reach a cell. The reports
themselves live beside this module: :mod:`~docevals_mlflow.reports.case_markdown`
(cases and pipelines), :mod:`~docevals_mlflow.reports.suite_markdown`,
:mod:`~docevals_mlflow.reports.fields_markdown` and
:mod:`~docevals_mlflow.reports.split_markdown`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from docevals_mlflow.core.formatting import value_text

VERDICT_ICONS = {"pass": "✅", "fail": "❌", "uncertain": "⚠️", "not_applicable": "➖"}
MAX_CELL_CHARS = 500
"""Text longer than this is cut in a table cell, visibly (``… (+312 chars)``); the
JSON report has it whole. Numbers are never cut."""

_NEWLINE = re.compile(r"\r\n|\r|\n")
# Inline Markdown that would change how a value reads once rendered, and only that,
# so that ordinary values stay clean in the raw text: emphasis and code marks, an
# underscore at a word's edge (inside a word, as in INV_2024_001, it is plain text),
# "<" opening a tag, "](" or "][" closing a link, and entities ("&amp;" would render as
# "&"). A backslash before ASCII punctuation is a CommonMark escape: the rendered text
# is the value itself.
_INLINE_MARKUP = re.compile(
    r"[`*~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|<(?=[A-Za-z/!?])|\](?=[(\[])|&(?=#?[0-9A-Za-z]+;)"
)


class CellText(str):
    """Text already escaped for a table cell: :func:`cell` leaves it alone."""


def _capped(text: str) -> str:
    if len(text) <= MAX_CELL_CHARS:
        return text
    return f"{text[:MAX_CELL_CHARS]}… (+{len(text) - MAX_CELL_CHARS} chars)"


def _escaped(text: str, *, markup: bool = False) -> str:
    # Backslashes first, or the escapes added after them would be doubled.
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    if markup:
        text = _INLINE_MARKUP.sub(lambda match: "\\" + match.group(), text)
    # <br> keeps a multi-line value on its lines inside the one-line table row; it is
    # added last so that its "<" is not escaped.
    return _NEWLINE.sub("<br>", text)


def cell(value: Any) -> str:
    """Text safe inside a Markdown table cell: ``|``, backslashes and line breaks
    escaped, ``None`` as ``n/a``, text over :data:`MAX_CELL_CHARS` cut visibly.

    Anything that is not text is written exactly (see
    :func:`~docevals_mlflow.core.formatting.value_text`), so a metric must be
    formatted before it gets here.
    """
    if isinstance(value, CellText):
        return value
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return _escaped(_capped(value))
    return _escaped(value_text(value))


def value_cell(value: Any) -> CellText:
    """A field value (expected, predicted) as a table cell, exactly as given.

    Numbers keep every digit and are never cut; other values are cut only past
    :data:`MAX_CELL_CHARS`, saying how much was left out. Beyond :func:`cell`,
    the inline Markdown that would change the rendered text is escaped (emphasis,
    code, tags, links, entities), so that the rendered cell reads as the value does.
    """
    if value is None:
        return CellText("n/a")
    text = value_text(value)
    if not isinstance(value, bool | int | float):
        text = _capped(text)
    return CellText(_escaped(text, markup=True))


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A Markdown table as lines (cells through :func:`cell`)."""
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines.extend("| " + " | ".join(cell(value) for value in row) + " |" for row in rows)
    return lines


def verdict_text(verdict: str) -> str:
    """A verdict with its icon."""
    return f"{VERDICT_ICONS.get(verdict, '')} {verdict}".strip()


def inline_code(text: Any) -> str:
    """Inline code for an id or name, safe in headings, lists and table cells."""
    plain = cell(str(text))
    # A backtick inside would end the code span early; a double fence tolerates it.
    return f"`` {plain} ``" if "`" in plain else f"`{plain}`"
