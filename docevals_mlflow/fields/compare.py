"""Comparing one document: :class:`FieldComparer` and :func:`compare_document`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import DocEvalsError
from docevals_mlflow.fields.compiler import SchemaCompiler
from docevals_mlflow.fields.confidence import confidence_map
from docevals_mlflow.fields.counts import Counts, ItemCounts
from docevals_mlflow.fields.deferred import resolve_deferred
from docevals_mlflow.fields.leaves import ScalarNode, expand_row
from docevals_mlflow.fields.lists import ArrayNode
from docevals_mlflow.fields.methods import ProviderFactory
from docevals_mlflow.fields.objects import ObjectNode
from docevals_mlflow.fields.schema import DocumentSchema, ListPairing
from docevals_mlflow.fields.shapes import (
    DiscoveredPolicy,
    ShapeMismatchPolicy,
    invalid_example,
    shape_mismatch_error,
)
from docevals_mlflow.fields.state import (
    ROW_FIELDS,
    DocumentState,
    Row,
    ShapeViolation,
    Walk,
)
from docevals_mlflow.fields.walks import run_walk, run_walks, too_deep

if TYPE_CHECKING:
    from docevals_mlflow.fields.processes import ComparerKey


@dataclass(frozen=True, slots=True)
class FieldInfo:
    """What a field template is compared with."""

    template: str
    method: str
    label: str
    threshold: float | None
    discovered: bool
    kind: str
    """``scalar`` or ``list``."""


def field_info(node: ScalarNode | ArrayNode) -> FieldInfo:
    """The description of a field node (built once per node, kept on it)."""
    info: FieldInfo | None = node.info
    if info is not None:
        return info
    if isinstance(node, ArrayNode):
        info = FieldInfo(
            node.template, "HUNGARIAN", node.label, node.match_threshold, node.discovered, "list"
        )
    else:
        info = FieldInfo(
            node.template, node.method, node.label, node.threshold, node.discovered, "scalar"
        )
    node.info = info
    return info


@dataclass(slots=True)
class DocumentComparison:
    """The comparison of one document: cells per field template, item counts per
    list, and (unless rows were not kept) one row per leaf comparison."""

    id: str | None
    document_class: str | None
    configured: bool
    """False when the document's class had no configuration and every rule was inferred."""
    cells: dict[str, list[int]]
    items: dict[str, list[int]]
    fields: dict[str, FieldInfo]
    rows: list[Row] | None = field(default=None)
    undecided: dict[str, int] = field(default_factory=dict)
    """Per template, comparisons a provider failed to decide; they are counted as FD
    (the worst case), so every metric is a lower bound until they are decided."""
    undecided_reasons: list[str] = field(default_factory=list)
    """Why they were not decided, once per distinct reason."""
    unparsed: dict[str, int] = field(default_factory=dict)
    """Per numeric template, values that do not read as numbers."""
    invalid: list[ShapeViolation] = field(default_factory=list)
    """Where the ground truth contradicts the schema's shape. Such a document is not
    scored: its cells are empty (see ``FieldComparer(shape_mismatch=...)``)."""
    include_discovered: bool = True
    """Whether cells of discovered fields (not in the schema) count in the document's
    figures; they are reported apart when not."""
    source: str | None = None
    """The expected input this document came from, when known (for messages)."""
    place: str | None = None
    """Where in it: ``line N``, ``row N`` or a file name."""

    @property
    def counts(self) -> Counts:
        """The document's cells: the sum over its field templates (discovered ones
        only when they are included)."""
        total = Counts()
        fields = self.fields
        for template, cells in self.cells.items():
            if self.include_discovered or not fields[template].discovered:
                total.add_list(cells)
        return total

    @property
    def discovered_counts(self) -> Counts:
        """The cells of the discovered fields (whether or not they are included)."""
        total = Counts()
        fields = self.fields
        for template, cells in self.cells.items():
            if fields[template].discovered:
                total.add_list(cells)
        return total

    @property
    def metrics(self) -> dict[str, float | None]:
        """precision, recall, F1, accuracy, FAR and FDR of the document."""
        return self.counts.metrics()

    def field_counts(self) -> dict[str, Counts]:
        """Cells per field template."""
        return {template: Counts.from_list(cells) for template, cells in self.cells.items()}

    def item_counts(self) -> dict[str, ItemCounts]:
        """Matched / weak / missed / extra items and empty lists per list template."""
        return {template: ItemCounts(*cells) for template, cells in self.items.items()}

    def row_dicts(self) -> list[dict[str, Any]]:
        """The rows as dicts (with ``matched``: outcome TP or TN)."""
        out = []
        for row in self.rows or ():
            record = dict(zip(ROW_FIELDS, expand_row(row), strict=True))
            record["matched"] = record["outcome"] in ("TP", "TN")
            out.append(record)
        return out

    def rows_frame(self) -> Any:
        """The rows as a pandas DataFrame (one row per leaf comparison)."""
        import pandas as pd

        frame = pd.DataFrame.from_records(
            [expand_row(row) for row in self.rows or ()], columns=list(ROW_FIELDS)
        )
        frame.insert(0, "document_id", self.id)
        frame.insert(1, "document_class", self.document_class)
        frame["matched"] = frame["outcome"].isin(["TP", "TN"])
        return frame


class FieldComparer:
    """A schema compiled once, comparing any number of documents.

    Comparators for every configured field are built up front, so a method that needs
    a provider (``SEMANTIC``, ``LLM``) fails here with the field's name, before any
    document is read. Documents of a class the schema does not configure are compared
    with inferred rules (strings FUZZY 0.85, numbers NUMERIC_EXACT 0.01, booleans
    EXACT).

    ``list_pairing`` overrides every list's ``pairing`` (``stickler`` or ``strict``).
    ``discovered``: whether fields found in the data but not in the schema count in
    the document figures (``include``) or are reported apart (``exclude``, the
    default; in a class the schema does not configure every field counts).
    ``shape_mismatch``: ground truth whose shape contradicts the schema (a list where
    a single value is declared, ...) raises
    :class:`~docevals_mlflow.errors.ShapeMismatchError` (``error``, the default) or
    leaves the document unscored, the places listed in ``DocumentComparison.invalid``
    (``count``).
    """

    def __init__(
        self,
        schema: DocumentSchema,
        *,
        providers: Mapping[str, ProviderFactory] | None = None,
        keep_rows: bool = True,
        list_pairing: ListPairing | None = None,
        discovered: DiscoveredPolicy = "exclude",
        shape_mismatch: ShapeMismatchPolicy = "error",
    ) -> None:
        self.schema = schema
        self.keep_rows = keep_rows
        self.list_pairing = list_pairing
        self.discovered = discovered
        self.shape_mismatch = shape_mismatch
        self._compiler = SchemaCompiler(providers, list_pairing=list_pairing)
        self._roots: dict[str | None, ObjectNode] = {
            schema_class.name: self._compiler.compile_class(schema_class)
            for schema_class in schema.classes
        }
        self._inferred: dict[str | None, ObjectNode] = {}

    @property
    def key(self) -> ComparerKey:
        """What decides this comparer's results: the schema's fingerprint, whether rows
        are kept, and the three settings (a helper process rebuilds it from this)."""
        return (
            self.schema.sha256,
            self.keep_rows,
            self.list_pairing,
            self.discovered,
            self.shape_mismatch,
        )

    def _root(self, document_class: str | None) -> tuple[ObjectNode, str | None, bool]:
        schema_class = self.schema.class_schema(document_class)
        if schema_class is not None:
            return self._roots[schema_class.name], schema_class.name, True
        root = self._inferred.get(document_class)
        if root is None:
            root = self._inferred[document_class] = self._compiler.compile_class(None)
        return root, document_class, False

    def compare(
        self,
        expected: Any,
        predicted: Any,
        *,
        document_id: str | None = None,
        document_class: str | None = None,
        confidence: Mapping[str, float] | None = None,
        explainability_info: Any = None,
    ) -> DocumentComparison:
        """Compare one document's predicted data with its expected data."""
        walk, state, finish = self.start(
            expected,
            predicted,
            document_id=document_id,
            document_class=document_class,
            confidence=confidence,
            explainability_info=explainability_info,
        )
        run_walk(walk)
        resolve_deferred([state])
        result = finish()
        if result.invalid and self.shape_mismatch == "error":
            raise shape_mismatch_error(invalid_example(result), 1)
        return result

    def compare_many(self, documents: Sequence[DocumentInput]) -> list[DocumentComparison]:
        """Compare several documents together, vectorising list pairing across them.

        Gives exactly the same results as calling :meth:`compare` on each, except
        that a document whose ground truth has the wrong shape is returned unscored
        (with ``invalid`` set) rather than raised: the caller decides, once it knows
        how many there are.
        """
        started = [self.start(*document[:2], **document[2]) for document in documents]
        run_walks([walk for walk, _, _ in started])
        resolve_deferred([state for _, state, _ in started])
        return [finish() for _, _, finish in started]

    def start(
        self,
        expected: Any,
        predicted: Any,
        *,
        document_id: str | None = None,
        document_class: str | None = None,
        confidence: Mapping[str, float] | None = None,
        explainability_info: Any = None,
    ) -> tuple[Walk, DocumentState, Callable[[], DocumentComparison]]:
        """The walk of one document, its state, and the function that packages its
        result (once the walk has run and deferred comparisons are resolved)."""
        root, class_name, configured = self._root(document_class)
        try:
            confidences = (
                confidence_map(explainability_info=explainability_info, confidence=confidence)
                if confidence is not None or explainability_info is not None
                else None
            )
        except DocEvalsError as exc:
            raise exc.located(record=document_id) from None
        state = DocumentState(self.keep_rows, confidences, document_id)
        walk = root.walk(expected, predicted, "$", "$" if confidences else None, state)
        if document_id is not None:
            walk = _naming_document(walk, document_id)

        def finish() -> DocumentComparison:
            return self._result(state, document_id, class_name, configured)

        return walk, state, finish

    def _result(
        self,
        state: DocumentState,
        document_id: str | None,
        class_name: str | None,
        configured: bool,
    ) -> DocumentComparison:
        if state.violations:
            # Wrong-shaped ground truth would blame the model for the data: nothing
            # of this document is scored.
            return DocumentComparison(
                id=document_id,
                document_class=class_name,
                configured=configured,
                cells={},
                items={},
                fields={},
                rows=[] if self.keep_rows else None,
                invalid=state.violations,
            )
        return DocumentComparison(
            id=document_id,
            document_class=class_name,
            configured=configured,
            cells=state.cells,
            items=state.items,
            fields={template: field_info(node) for template, node in state.nodes.items()},
            rows=state.rows if self.keep_rows else None,
            undecided=state.undecided,
            undecided_reasons=state.undecided_reasons,
            unparsed=state.unparsed,
            include_discovered=self.discovered == "include" or not configured,
        )


def _naming_document(walk: Walk, document_id: str) -> Walk:
    """The same walk; an error raised inside it also names the document."""
    try:
        return (yield from walk)
    except DocEvalsError as exc:
        raise exc.located(record=document_id) from None
    except RecursionError:
        raise too_deep().located(record=document_id) from None


DocumentInput = tuple[Any, Any, dict[str, Any]]
"""``(expected, predicted, keyword arguments of FieldComparer.compare)``."""

_COMPARERS: dict[int, tuple[DocumentSchema, FieldComparer]] = {}


def _comparer_for(schema: DocumentSchema) -> FieldComparer:
    cached = _COMPARERS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    if len(_COMPARERS) >= 8:
        _COMPARERS.pop(next(iter(_COMPARERS)))
    comparer = FieldComparer(schema)
    _COMPARERS[id(schema)] = (schema, comparer)
    return comparer


def compare_document(
    expected: Any,
    predicted: Any,
    schema: DocumentSchema | None = None,
    *,
    document_class: str | None = None,
    document_id: str | None = None,
    confidence: Mapping[str, float] | None = None,
    explainability_info: Any = None,
) -> DocumentComparison:
    """Compare one document field by field (see :class:`FieldComparer`).

    Without a schema, every field is compared with inferred rules.
    """
    comparer = _comparer_for(schema if schema is not None else _EMPTY_SCHEMA)
    return comparer.compare(
        expected,
        predicted,
        document_id=document_id,
        document_class=document_class,
        confidence=confidence,
        explainability_info=explainability_info,
    )


_EMPTY_SCHEMA = DocumentSchema(schema_id="inferred")
