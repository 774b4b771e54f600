"""A report model that is also a JSON file: written atomically, read back with the
file named in any error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Self

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.errors import InputError


class ReportFile(DocEvalsModel):
    """A report written to and read from one JSON file."""

    def to_json(self, *, indent: int | None = 1) -> str:
        """The report as JSON text (UTF-8, ending with a newline)."""
        return self.model_dump_json(indent=indent) + "\n"

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the JSON report atomically."""
        return atomic_write_text(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Read a JSON report written by :meth:`write`."""
        source = Path(path)
        try:
            return cls.model_validate(load_json_file(source))
        except InputError as exc:
            raise exc.located(source=str(source)) from None
