"""Bounding boxes for highlights, from a sidecar beside the review file.

Generated claims carry evidence text but no coordinates, so an OCR or layout tool
that knows where a field sits writes ``X.review.boxes.json`` beside
``X.review.json``::

    {"$.total": [{"page": 1, "x0": 72, "y0": 90, "x1": 140, "y1": 104}],
     "$.iban": [{"page": 2, "x0": 60, "y0": 300, "x1": 320, "y1": 314, "source": "b.pdf"}]}

``page`` counts from 1; coordinates are PDF points from the page's top-left corner
(pymupdf's convention; pixels of an image source at 72 dpi); ``source`` names the
source document when a review has several (left out: every source). The page uses
these boxes for a field when there are any, else it searches the page for the value
and the evidence text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.groundtruth.records import canonical_field_path

BOXES_SUFFIX = ".boxes.json"
MAX_BOXES = 10_000
"""Boxes per sidecar; an OCR dump of every word is not what this file is for."""


class FieldBox(DocEvalsModel):
    """Where a field's value sits on a page."""

    page: int = Field(ge=1)
    x0: float = Field(ge=0)
    y0: float = Field(ge=0)
    x1: float = Field(ge=0)
    y1: float = Field(ge=0)
    source: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> FieldBox:
        if self.x1 <= self.x0 or self.y1 <= self.y0:
            raise ValueError("x1 must exceed x0 and y1 must exceed y0")
        return self


def boxes_path(review_path: Path) -> Path:
    """``X.review.boxes.json`` for ``X.review.json``."""
    return review_path.with_name(review_path.name.removesuffix(".json") + BOXES_SUFFIX)


def read_boxes(review_path: Path) -> dict[str, list[FieldBox]]:
    """The sidecar's boxes by canonical field path (empty when there is no sidecar).

    Raises:
        InputError: the sidecar is not JSON, not an object of lists of boxes, names a
            field path that does not parse, or holds too many boxes (the message
            names the file and the field path).
    """
    file = boxes_path(review_path)
    if not file.is_file():
        return {}
    data: Any = load_json_file(file, what="boxes file")
    if not isinstance(data, dict):
        raise InputError(
            "not a JSON object", source=str(file), expected='{"$.field": [{"page": 1, ...}]}'
        )
    found: dict[str, list[FieldBox]] = {}
    total = 0
    for key, rows in data.items():
        try:
            path = canonical_field_path(str(key))
        except DocEvalsError:
            raise InputError(
                f"{key!r} is not a field path", source=str(file), expected="$.field"
            ) from None
        if not isinstance(rows, list):
            raise InputError(
                "not a list of boxes", source=str(file), path=path, expected="[{page, x0, ...}]"
            )
        boxes = []
        for index, row in enumerate(rows):
            try:
                boxes.append(FieldBox.model_validate(row))
            except InputError as exc:
                raise InputError(
                    f"box {index}: {exc.message}",
                    source=str(file),
                    path=path,
                    expected="{page >= 1, x0 < x1, y0 < y1 in points, source?}",
                ) from None
        total += len(boxes)
        if total > MAX_BOXES:
            raise InputError(f"more than {MAX_BOXES} boxes", source=str(file))
        found.setdefault(path, []).extend(boxes)
    return found


def boxes_for(found: dict[str, list[FieldBox]], path: str, source: str) -> list[list[Any]]:
    """A field's sidecar boxes on ``source``, as the page draws them
    (``[page (0-based), x0, y0, x1, y1, "box"]``)."""
    return [
        [box.page - 1, box.x0, box.y0, box.x1, box.y1, "box"]
        for box in found.get(path, [])
        if box.source in (None, source)
    ]
