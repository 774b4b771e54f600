"""The limits every JSON and YAML input is read within, and the error that locates a
value they refuse."""

from __future__ import annotations

from dataclasses import dataclass

from docevals_mlflow.core.paths import FieldPath, format_path
from docevals_mlflow.errors import InputError

MAX_NESTING = 1000
"""The deepest nesting of JSON objects and arrays (YAML mappings and sequences) read.

Far beyond any real document. Checked here rather than left to the parsers, whose
own limits depend on the Python version and on how much stack the caller already
uses (and PyYAML's recursive composer fails far earlier)."""

YAML_ALIAS_NODES = 10_000
"""How many nodes YAML aliases (``*name``, merge keys ``<<: *name``) may repeat in one
file, counted as if every alias were written out. Generous for shared defaults; a
"billion laughs" file reaches it within a few lines."""


_PATH_SHOWN = 80


@dataclass(eq=False)
class Refusal(Exception):
    """A value a limit refuses, and where it is: a 0-based character offset (JSON) or a line
    and column (YAML), and the field path."""

    problem: str
    path: FieldPath = ()
    offset: int | None = None
    line: int | None = None
    column: int | None = None
    expected: str | None = None

    def error(
        self, *, source: str | None, record: str | None, text: str | None, one_line: bool
    ) -> InputError:
        line, column = self.line, self.column
        if self.offset is not None and text is not None:
            line = text.count("\n", 0, self.offset) + 1
            column = self.offset - (text.rfind("\n", 0, self.offset) + 1) + 1
        if column is None:
            where = ""
        elif one_line or line is None:
            where = f" at column {column}"
        else:
            where = f" at line {line}, column {column}"
        shown = format_path(self.path) if self.path else None
        if shown is not None and len(shown) > _PATH_SHOWN:
            # Nesting errors sit a thousand levels down; the line and column say where.
            shown = shown[: _PATH_SHOWN - 3] + "..."
        return InputError(
            f"{self.problem}{where}",
            source=source,
            record=record,
            path=shown,
            expected=self.expected,
        )
