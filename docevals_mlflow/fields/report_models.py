"""The pydantic models of a field comparison's JSON report, for reading one back.

:func:`~docevals_mlflow.fields.report.build_fields_report` writes the report as plain
dicts (see its module for the layout); :class:`FieldsReport` validates a report read
from disk, so a file that was edited or written by another version says what is wrong.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from docevals_mlflow.core.diagnostics import ConfidenceCalibration
from docevals_mlflow.core.model import DocEvalsModel


class CellCounts(DocEvalsModel):
    """TP / FA / FD / FN / TN."""

    tp: int
    fa: int
    fd: int
    fn: int
    tn: int


class MetricValues(DocEvalsModel):
    """Derived metrics; ``None`` where a denominator is zero."""

    precision: float | None
    recall: float | None
    f1: float | None
    accuracy: float | None
    far: float | None
    fdr: float | None


class IntervalEntry(DocEvalsModel):
    """A figure's interval from resampling documents (``low``/``high`` None, with a
    ``reason``, when there is none)."""

    low: float | None
    high: float | None
    documents: int
    observations: int
    confidence: float
    resamples: int
    seed: int
    reason: str | None = None


Intervals = dict[str, IntervalEntry]
"""Per figure (precision, recall, F1, accuracy): its interval."""


class FieldEntry(DocEvalsModel):
    """One field template's figures."""

    template: str
    method: str
    method_name: str
    threshold: float | None
    discovered: bool
    counts: CellCounts
    metrics: MetricValues
    undecided: int = 0
    unparsed: int = 0
    ci: Intervals | None = None


class ListEntry(DocEvalsModel):
    """One list template's item counts, and the item-level cells and metrics."""

    template: str
    method: str
    pairing: Literal["stickler", "strict"] = "stickler"
    discovered: bool = False
    matched: int
    weak: int = 0
    missed: int
    extra: int
    empty: int = 0
    invented: int = 0
    counts: CellCounts | None = None
    metrics: MetricValues | None = None


class DiscoveredEntry(DocEvalsModel):
    """Fields found in the data but not in the schema, and whether they are in the
    headline figures."""

    included: bool
    counts: CellCounts
    metrics: MetricValues
    fields: list[FieldEntry]


class InvalidExample(DocEvalsModel):
    """One document whose ground truth contradicts the schema's shape."""

    id: str | None
    source: str | None = None
    line: str | None = None
    path: str
    schema_: str = Field(alias="schema")
    found: str
    places: int = 1

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class InvalidExpected(DocEvalsModel):
    """Documents left out of the figures because their ground truth has the wrong shape."""

    documents: int
    examples: list[InvalidExample]


class RowEntry(DocEvalsModel):
    """One leaf comparison."""

    path: str
    template: str
    method: str
    threshold: float | None
    expected: Any
    actual: Any
    score: float | None
    outcome: Literal["TP", "FA", "FD", "FN", "TN"]
    matched: bool
    confidence: float | None
    discovered: bool
    reason: str


class DocumentEntry(DocEvalsModel):
    """One document's figures (and rows, when kept)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str | None
    document_class: str | None = Field(alias="class")
    counts: CellCounts
    metrics: MetricValues
    undecided: int = 0
    rows: list[RowEntry] | None = None


class OverallEntry(DocEvalsModel):
    """Batch figures: micro metrics from summed cells, plus the macro mean of F1."""

    documents: int
    counts: CellCounts
    metrics: MetricValues
    macro_f1: float | None
    undecided: int = 0
    """Comparisons a provider failed to decide (inside ``counts`` as FD)."""
    undecided_reasons: list[str] = Field(default_factory=list)
    unparsed: int = 0
    """Values of numeric fields that do not read as numbers."""
    ci: Intervals | None = None


class ClassEntry(DocEvalsModel):
    """One document class's figures."""

    configured: bool
    documents: int
    counts: CellCounts
    metrics: MetricValues
    macro_f1: float | None
    undecided: int = 0
    unparsed: int = 0
    fields: list[FieldEntry]
    ci: Intervals | None = None


class MethodEntry(DocEvalsModel):
    """A plugin method that decided comparisons, and what provided it."""

    package: str | None
    version: str | None
    explanation: str


class SchemaEntry(DocEvalsModel):
    """Which schema decided the comparisons (and the plugin methods it used)."""

    id: str
    version: str
    sha256: str
    methods: dict[str, MethodEntry] | None = None


class Unpaired(DocEvalsModel):
    """Ids present on one side only."""

    expected_only: list[str]
    predicted_only: list[str]


class FieldsReport(DocEvalsModel):
    """A field comparison report, as written by ``docevals fields``."""

    kind: Literal["fields"] = "fields"
    package_version: str
    schema_: SchemaEntry = Field(alias="schema")
    settings: dict[str, str] = Field(default_factory=dict)
    overall: OverallEntry
    classes: dict[str, ClassEntry]
    fields: list[FieldEntry]
    discovered: DiscoveredEntry | None = None
    lists: list[ListEntry]
    documents: list[DocumentEntry]
    invalid_expected: InvalidExpected | None = None
    unpaired: Unpaired
    calibration: ConfidenceCalibration | None = None
    field_method_calls: list[dict[str, Any]] | None = None
    """SEMANTIC and LLM provider calls, one entry per call and document served."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
