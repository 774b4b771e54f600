"""Tables as trees: parsed from HTML (standard library ``html.parser``), built from a
cell grid or from a Markdown pipe table.

The tree is the one TEDS compares (Zhong et al. 2020, the PubTabNet reference):
``table`` → optional ``thead``/``tbody``/``tfoot`` → ``tr`` → ``td``/``th``. A cell is a
leaf holding its spans and its content as tokens: every character of its text, plus
``<b>``/``</b>``-style tokens for markup inside it (as the reference tokenizes cells).
A table inside a cell is such markup too: its tags are tokens of the cell (an inner
cell's trailing text dropped, as lxml-based references read it), not nodes of the tree.

Strict parsing (for expected tables) also refuses a table that is not closed and spans
that do not form a rectangular grid; lenient parsing (for predictions) closes what a
truncated output left open and scores ragged grids as they are. Either way a cell outside
a row, a stray end tag, a bad span value or no table at all is an :class:`InputError`
naming the document and the line and column.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser

from docevals_mlflow.errors import InputError

CELL_TAGS = frozenset({"td", "th"})
SECTION_TAGS = frozenset({"thead", "tbody", "tfoot"})
# Void elements have no end tag in HTML; lxml (and so the reference) still emits a closing
# token for them, so we do too.
_VOID = frozenset({"br", "hr", "img", "input", "wbr", "col", "area", "embed", "source"})
# Built once: these sets are tested on every tag of every table.
_STRUCTURE = CELL_TAGS | {"tr"} | SECTION_TAGS
_CLOSABLE = frozenset({"tr", "table"}) | SECTION_TAGS
_TABLE = frozenset({"table"})
_TABLE_OR_SECTION = _TABLE | SECTION_TAGS


@dataclass(eq=False)
class TableNode:
    """One node of a table tree; ``colspan``/``rowspan`` are 0 on non-cells."""

    tag: str
    colspan: int = 0
    rowspan: int = 0
    tokens: tuple[str, ...] = ()
    children: list[TableNode] = field(default_factory=list)

    def size(self) -> int:
        """Number of nodes in this subtree (itself included)."""
        return 1 + sum(child.size() for child in self.children)

    def rows(self) -> list[TableNode]:
        """The ``tr`` nodes in document order (across sections)."""
        found: list[TableNode] = []
        for child in self.children:
            if child.tag == "tr":
                found.append(child)
            elif child.tag in SECTION_TAGS:
                found.extend(child.rows())
        return found


def _where(position: tuple[int, int]) -> str:
    return f"line {position[0]}, column {position[1] + 1}"


class _TableParser(HTMLParser):
    """Builds one :class:`TableNode` tree; raises :class:`InputError` on what it cannot place."""

    def __init__(self, source: str, strict: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.source, self.strict = source, strict
        self.root: TableNode | None = None
        self.opened_at: tuple[int, int] = (0, 0)
        self.stack: list[TableNode] = []  # open structural nodes, table first
        self.cell: TableNode | None = None
        self.cell_tokens: list[str] = []
        self.inline: list[str] = []  # markup open inside the current cell
        self.nested_at: list[tuple[int, int]] = []  # where tables inside the cell opened
        self.tail = False  # after an inner </td>: its tail text is not content
        self.closed = False

    def fail(self, message: str, expected: str | None = None) -> InputError:
        where = _where(self.getpos())
        return InputError(message, source=self.source, path=where, expected=expected)

    def _close_cell(self) -> None:
        if self.cell is not None:
            if self.inline:
                self.cell_tokens.extend(f"</{tag}>" for tag in reversed(self.inline))
            self.cell.tokens = tuple(self.cell_tokens)
            self.cell, self.cell_tokens, self.inline = None, [], []
            self.nested_at, self.tail = [], False

    def _pop_to(self, tags: frozenset[str]) -> None:
        """Close open nodes down to (not including) the nearest one whose tag is in ``tags``."""
        self._close_cell()
        while self.stack and self.stack[-1].tag not in tags:
            self.stack.pop()

    def _span(self, attrs: dict[str, str | None], name: str) -> int:
        raw = attrs.get(name)
        if raw is None:
            return 1
        text = raw.strip()
        if not text.isdigit() or int(text) < 1:
            raise self.fail(f"{name}={raw!r} is not a positive whole number")
        return int(text)

    def _close_inline_above(self, tags: frozenset[str]) -> None:
        """Close the markup open inside the cell above the innermost of ``tags`` (as
        HTML closes an inner table's open cell when a new one starts)."""
        for index in range(len(self.inline) - 1, -1, -1):
            if self.inline[index] in tags:
                while len(self.inline) > index + 1:
                    self.cell_tokens.append(f"</{self.inline.pop()}>")
                return

    def _nested_start(self, tag: str) -> None:
        """A tag of a table inside the cell: content tokens, as the references read them."""
        if tag == "table":
            self.nested_at.append(self.getpos())
        elif tag in SECTION_TAGS:
            self._close_inline_above(_TABLE)
        elif tag == "tr":
            self._close_inline_above(_TABLE_OR_SECTION)
        elif tag in CELL_TAGS:
            self._close_inline_above(frozenset({"table", "tr"}) | SECTION_TAGS)
        self.cell_tokens.append(f"<{tag}>")
        self.inline.append(tag)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tail = False
        if self.cell is not None and (tag == "table" or self.nested_at):
            self._nested_start(tag)
            return
        if self.cell is not None and tag not in _STRUCTURE:
            self.cell_tokens.append(f"<{tag}>")
            if tag in _VOID:
                self.cell_tokens.append(f"</{tag}>")
            else:
                self.inline.append(tag)
            return
        if tag == "table":
            if self.root is not None:
                raise self.fail("a second <table>", expected="one table per document")
            self.root, self.opened_at = TableNode("table"), self.getpos()
            self.stack = [self.root]
            return
        if not self.stack:
            if tag in _STRUCTURE:
                raise self.fail(f"<{tag}> outside a <table>")
            return  # wrappers such as <html>, <body>, <div>
        if tag in SECTION_TAGS:
            self._pop_to(_TABLE)
            node = TableNode(tag)
        elif tag == "tr":
            self._pop_to(_TABLE_OR_SECTION)
            node = TableNode(tag)
        elif tag in CELL_TAGS:
            self._close_cell()
            if self.stack[-1].tag != "tr":
                raise self.fail(f"<{tag}> outside a row", expected="cells inside <tr>")
            named = dict(attrs) if attrs else {}
            cell = TableNode(tag, self._span(named, "colspan"), self._span(named, "rowspan"))
            self.stack[-1].children.append(cell)
            self.cell = cell
            return
        else:
            return  # caption, colgroup and the like carry no cells
        self.stack[-1].children.append(node)
        self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tail = False
        if self.cell is not None and self.nested_at and tag in CELL_TAGS:
            self._nested_start(tag)  # HTML ignores the slash of <td/>
            return
        if self.cell is not None and tag not in CELL_TAGS:
            self.cell_tokens += [f"<{tag}>", f"</{tag}>"]
            return
        self.handle_starttag(tag, attrs)
        if tag in CELL_TAGS:
            self._close_cell()

    def handle_endtag(self, tag: str) -> None:
        self.tail = False
        if self.cell is not None:
            if tag in self.inline:
                while self.inline:
                    inner = self.inline.pop()
                    self.cell_tokens.append(f"</{inner}>")
                    if inner == "table":
                        self.nested_at.pop()
                    if inner == tag:
                        break
                # The references drop an inner cell's tail (text after </td>).
                self.tail = tag == "td" and bool(self.nested_at)
                return
            if self.nested_at:
                if self.strict:
                    raise self.fail(
                        f"</{tag}> without an open <{tag}> in the <table> inside this cell "
                        f"(opened at {_where(self.nested_at[-1])})",
                        expected="the inner table closed before its cell ends",
                    )
                return  # an end tag the inner table has no open element for: ignored, as lxml
            if tag in CELL_TAGS:
                self._close_cell()
                return
            if tag not in _CLOSABLE:
                return  # an end tag with nothing open to close: ignored, as lxml does
            self._close_cell()
        if tag in CELL_TAGS:
            raise self.fail(f"</{tag}> without an open <{tag}>")
        if tag in _CLOSABLE:
            if not any(node.tag == tag for node in self.stack):
                raise self.fail(f"</{tag}> without an open <{tag}>")
            while self.stack[-1].tag != tag:
                self.stack.pop()
            self.stack.pop()
            if tag == "table":
                self.closed = True

    def handle_data(self, data: str) -> None:
        if self.cell is not None and not self.tail:
            self.cell_tokens.extend(data)


def parse_html_table(html: str, *, source: str = "<table>", strict: bool = True) -> TableNode:
    """The first and only ``<table>`` of ``html`` as a tree.

    ``strict`` (use it for expected tables) also requires ``</table>`` and a rectangular
    span grid (:func:`check_grid`).

    Raises:
        InputError: no table, a second table, a cell outside a row, a stray end tag, a bad
            span; naming ``source`` and the line and column.
    """
    parser = _TableParser(source, strict)
    parser.feed(html)
    parser.close()
    if strict and parser.nested_at:
        raise InputError(
            "a <table> inside a cell is never closed",
            source=source,
            path=_where(parser.nested_at[0]),
            expected="</table> before the cell holding it ends",
        )
    parser._close_cell()
    if parser.root is None:
        raise InputError("no <table> found", source=source, expected="an HTML table")
    if strict and not parser.closed:
        raise InputError("<table> is never closed", source=source, path=_where(parser.opened_at))
    if strict:
        check_grid(parser.root, source=source)
    return parser.root


def check_grid(table: TableNode, *, source: str = "<table>") -> tuple[int, int]:
    """The ``(rows, columns)`` of a table whose spans tile a rectangle.

    Raises:
        InputError: a span reaching past the last row, cells overlapping, or rows covering
            different numbers of columns (named by 1-based row and column).
    """
    rows = table.rows()
    taken: set[tuple[int, int]] = set()
    reach = [0] * len(rows)  # columns each row's cells (and spans from above) cover
    for r, row in enumerate(rows):
        column = 0
        for cell in row.children:
            while (r, column) in taken:
                column += 1
            if r + cell.rowspan > len(rows):
                raise InputError(
                    f"rowspan={cell.rowspan} reaches past the last row ({len(rows)})",
                    source=source,
                    path=f"row {r + 1}, column {column + 1}",
                )
            for dr in range(cell.rowspan):
                for dc in range(cell.colspan):
                    if (r + dr, column + dc) in taken:
                        raise InputError(
                            "cells overlap",
                            source=source,
                            path=f"row {r + dr + 1}, column {column + dc + 1}",
                        )
                    taken.add((r + dr, column + dc))
                reach[r + dr] = max(reach[r + dr], column + cell.colspan)
            column += cell.colspan
    widths = reach
    if widths and len(set(widths)) > 1:
        bad = next(i for i, w in enumerate(widths) if w != widths[0])
        raise InputError(
            f"row {bad + 1} covers {widths[bad]} columns, row 1 covers {widths[0]}",
            source=source,
            expected="spans that tile a rectangle",
        )
    return len(rows), (widths[0] if widths else 0)


def table_from_grid(rows: Sequence[Sequence[str]], *, header_rows: int = 0) -> TableNode:
    """A span-free table from a list of rows of cell texts (the first ``header_rows`` as ``th``)."""
    table = TableNode("table")
    for index, row in enumerate(rows):
        tag = "th" if index < header_rows else "td"
        cells = [TableNode(tag, 1, 1, tuple(str(text))) for text in row]
        table.children.append(TableNode("tr", children=list(cells)))
    return table


_SEPARATOR = re.compile(r"^\s*:?-+:?\s*$")


def _split_pipe_row(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells = re.split(r"(?<!\\)\|", body)
    return [cell.strip().replace("\\|", "|") for cell in cells]


def table_from_markdown(text: str, *, source: str = "<markdown>") -> TableNode:
    """A Markdown (GFM) pipe table as a tree: header cells ``th``, body cells ``td``.

    As GFM renders them, body rows shorter than the header get empty cells and longer rows
    lose their extra cells.

    Raises:
        InputError: no header and ``|---|`` separator row (naming the line).
    """
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) < 2:
        raise InputError("no pipe table found", source=source, expected="a header and a |---| row")
    header = _split_pipe_row(lines[0][1])
    separator = _split_pipe_row(lines[1][1])
    if len(separator) != len(header) or not all(_SEPARATOR.match(c) for c in separator):
        raise InputError(
            "the second row is not a separator row matching the header",
            source=source,
            path=f"line {lines[1][0]}",
            expected=f"{len(header)} cells like ---, :--- or :---:",
        )
    body = []
    for _, line in lines[2:]:
        cells = _split_pipe_row(line)[: len(header)]
        body.append(cells + [""] * (len(header) - len(cells)))
    return table_from_grid([header, *body], header_rows=1)
