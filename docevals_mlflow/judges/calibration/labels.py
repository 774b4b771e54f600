"""Human labels: :class:`HumanLabel` and :func:`load_human_labels`.

A label names a case (``pass``/``fail``) or one claim of a case (``correct``/
``incorrect`` for a prediction claim, ``matched``/``missing`` for a reference claim).
Labels are read from JSON Lines or CSV/TSV files; a label given twice for the same
case or claim is an error.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from docevals_mlflow.core.datafiles import check_file, parse_json, read_text_file
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.errors import InputError

LabelValue = Literal["pass", "fail", "correct", "incorrect", "matched", "missing"]
ClaimKind = Literal["prediction", "reference"]

CASE_LABELS: tuple[str, ...] = ("pass", "fail")
PREDICTION_CLAIM_LABELS: tuple[str, ...] = ("correct", "incorrect")
REFERENCE_CLAIM_LABELS: tuple[str, ...] = ("matched", "missing")

_LABEL_COLUMNS = ("case_id", "stage_id", "claim_id", "label", "labeler", "notes")


class HumanLabel(DocEvalsModel):
    """One human judgement of a case, or of one claim of a case.

    Without ``claim_id`` the label is the case verdict (``pass`` or ``fail``). With
    it, the label judges that claim: ``correct``/``incorrect`` for a prediction claim
    (``p00002``), ``matched``/``missing`` for a reference claim (``r00001``). Labels
    are read case-insensitively.
    """

    case_id: str = Field(min_length=1)
    stage_id: str = Field(default="output", min_length=1)
    claim_id: str | None = Field(default=None, min_length=1)
    label: LabelValue
    labeler: str | None = None
    notes: str | None = None

    @field_validator("label", mode="before")
    @classmethod
    def _normalise_label(cls, value: Any) -> Any:
        # Hand-written spreadsheets say "Pass " as often as "pass".
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _label_fits_level(self) -> HumanLabel:
        if self.claim_id is None and self.label not in CASE_LABELS:
            raise ValueError(
                f"label {self.label!r} judges a claim, but no claim_id is given "
                "(a case label is pass or fail)"
            )
        if self.claim_id is not None and self.label in CASE_LABELS:
            raise ValueError(
                f"label {self.label!r} judges a case, but claim_id {self.claim_id!r} is "
                "given (a claim label is correct, incorrect, matched or missing)"
            )
        return self

    def describe(self) -> str:
        """Where this label points, for messages: case, stage and claim."""
        text = f"case {self.case_id!r} stage {self.stage_id!r}"
        return text + (f" claim {self.claim_id!r}" if self.claim_id is not None else "")


def _label_from_fields(fields: Mapping[str, Any], *, source: str, line: int) -> HumanLabel:
    # Absent and empty values both mean "not given", so that a CSV's empty cell and a
    # JSON null fall back to the same defaults (stage "output", no claim).
    given = {key: value for key, value in fields.items() if value is not None and value != ""}
    try:
        return HumanLabel(**given)
    except InputError as exc:
        raise exc.located(source=source, record=f"line {line}") from None


def _jsonl_labels(text: str, source: str) -> list[HumanLabel]:
    labels = []
    # Split on "\n" only: str.splitlines would also break at U+2028 inside a JSON
    # string and shift every later line number.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        # The strict reader: repeated keys, NaN and runaway nesting are input errors.
        data = parse_json(
            line,
            source=source,
            record=f"line {number}",
            one_line="one JSON object per line (JSON Lines)",
        )
        if not isinstance(data, dict):
            raise InputError(
                f"expected a JSON object, got {type(data).__name__}",
                source=source,
                record=f"line {number}",
            )
        labels.append(_label_from_fields(data, source=source, line=number))
    return labels


def _csv_labels(text: str, source: str, delimiter: str) -> list[HumanLabel]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if header is None:
        return []
    columns = [name.strip().lower() for name in header]
    unknown = [name for name in columns if name not in _LABEL_COLUMNS]
    if unknown:
        raise InputError(
            f"unknown column(s) {', '.join(repr(name) for name in unknown)}",
            source=source,
            record="line 1",
            expected=f"columns among {', '.join(_LABEL_COLUMNS)}",
        )
    missing = [name for name in ("case_id", "label") if name not in columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", source=source, record="line 1")
    labels = []
    ended = reader.line_num
    for row in reader:
        # A quoted cell may span lines; the record starts right after the last one.
        start, ended = ended + 1, reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            raise InputError(
                f"{len(row)} cells in a row of {len(columns)} columns",
                source=source,
                record=f"line {start}",
            )
        fields = {name: cell.strip() for name, cell in zip(columns, row, strict=True)}
        labels.append(_label_from_fields(fields, source=source, line=start))
    return labels


def load_human_labels(path: str | os.PathLike[str]) -> list[HumanLabel]:
    """Read human labels from a JSON Lines (``.jsonl``, ``.ndjson``) or CSV/TSV file.

    JSON Lines: one object per line with the :class:`HumanLabel` fields. CSV: a
    header naming columns among ``case_id, stage_id, claim_id, label, labeler,
    notes`` (``case_id`` and ``label`` required); empty cells take the defaults.
    Blank lines are skipped. A label given twice for the same case or claim is an
    error: adjudicate disagreements between labellers before calibrating.

    Raises:
        InputFileNotFoundError: the file does not exist.
        InputError: a line is malformed; the message names the file and line.
    """
    file_path = Path(path)
    source = str(file_path)
    check_file(file_path, what="labels file")
    suffix = file_path.suffix.lower()
    text = read_text_file(file_path)
    if suffix in (".jsonl", ".ndjson"):
        labels = _jsonl_labels(text, source)
    elif suffix in (".csv", ".tsv"):
        labels = _csv_labels(text, source, "\t" if suffix == ".tsv" else ",")
    else:
        raise InputError(
            f"unknown labels format {suffix or '(no suffix)'!r}",
            source=source,
            expected=".jsonl, .ndjson, .csv or .tsv",
        )
    if not labels:
        raise InputError("the labels file holds no labels", source=source)
    _reject_repeats(labels, source=source)
    return labels


def _label_key(label: HumanLabel) -> tuple[str, str, str | None]:
    return (label.case_id, label.stage_id, label.claim_id)


def _reject_repeats(labels: Sequence[HumanLabel], *, source: str | None = None) -> None:
    # Two labels for one item would make it count twice; which one is right is a
    # decision for the labellers, not for this code.
    seen: dict[tuple[str, str, str | None], int] = {}
    for position, label in enumerate(labels, start=1):
        key = _label_key(label)
        if key in seen:
            raise InputError(
                f"{label.describe()} is labelled twice (labels {seen[key]} and {position})",
                source=source,
                expected="one label per case or claim",
            )
        seen[key] = position
