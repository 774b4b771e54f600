"""A batch's aggregate figures: cells and exact F1 sums overall, per class, per field
template, per list and per document, folded one document (or one batch) at a time."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Self

from docevals_mlflow.fields.compare import DocumentComparison, FieldInfo
from docevals_mlflow.fields.counts import Counts, ItemCounts
from docevals_mlflow.fields.shapes import MAX_INVALID_EXAMPLES, invalid_example

if TYPE_CHECKING:
    from docevals_mlflow.fields.schema import DocumentSchema

MAX_UNDECIDED_REASONS = 10
"""Distinct reasons for undecided comparisons kept for a batch."""

F1Parts = dict[int, int]
"""Per-document F1 values kept exactly: denominator ``2TP + FP + FN`` → the sum of the
numerators ``2TP`` of the documents with that denominator."""


def add_f1(parts: F1Parts, tp: int, fp: int, fn: int) -> bool:
    """Add one document's F1 (as the exact fraction ``2TP / (2TP + FP + FN)``) to
    ``parts``; False when its F1 is undefined (no TP, FP or FN)."""
    denominator = 2 * tp + fp + fn
    if not denominator:
        return False
    parts[denominator] = parts.get(denominator, 0) + 2 * tp
    return True


def merge_f1(parts: F1Parts, other: Mapping[int, int]) -> None:
    """Add ``other``'s F1 parts into ``parts``."""
    for denominator, numerator in other.items():
        parts[denominator] = parts.get(denominator, 0) + numerator


def f1_total(parts: Mapping[int, int]) -> float:
    """The sum of the F1 values in ``parts``, computed exactly and rounded once.

    Exact, so it does not depend on the order documents were added in: several
    processes, or Spark, summing the same documents get the same float.
    """
    if not parts:
        return 0.0
    common = math.lcm(*parts)
    return float(Fraction(sum(numerator * (common // d) for d, numerator in parts.items()), common))


@dataclass(slots=True)
class FieldAggregate:
    """Cells of one field template across documents."""

    info: FieldInfo
    counts: Counts = field(default_factory=Counts)
    undecided: int = 0
    """Comparisons a provider failed to decide (inside ``counts`` as FD)."""
    unparsed: int = 0
    """Values of a numeric field that do not read as numbers."""


@dataclass(slots=True)
class ClassAggregate:
    """Cells of one document class, per field and in total."""

    name: str | None
    configured: bool
    documents: int = 0
    counts: Counts = field(default_factory=Counts)
    fields: dict[str, FieldAggregate] = field(default_factory=dict)
    f1_parts: F1Parts = field(default_factory=dict)
    """Exact per-document F1 values (see :data:`F1Parts`)."""
    f1_documents: int = 0
    undecided: int = 0

    @property
    def f1_sum(self) -> float:
        """The sum of the class's defined document F1 values (exact, rounded once)."""
        return f1_total(self.f1_parts)


@dataclass(slots=True)
class DocumentSummary:
    """A document's id, class and cells, kept when its rows are not."""

    id: str | None
    document_class: str | None
    counts: Counts
    undecided: dict[str, int] = field(default_factory=dict)


@dataclass
class BatchComparison:
    """Aggregate figures of a batch: overall (micro) cells and metrics, the macro mean
    of document F1, per class, per field template, per list, and per document."""

    schema_id: str
    schema_version: str
    schema_sha256: str
    counts: Counts = field(default_factory=Counts)
    fields: dict[tuple[str, str], FieldAggregate] = field(default_factory=dict)
    """Batch-wide figures per ``(template, method label)``: two classes may compare the
    same template with different methods, and their cells must not be mixed."""
    classes: dict[str | None, ClassAggregate] = field(default_factory=dict)
    lists: dict[str, ItemCounts] = field(default_factory=dict)
    list_labels: dict[str, str] = field(default_factory=dict)
    documents: list[DocumentComparison | DocumentSummary] = field(default_factory=list)
    expected_only: list[str] = field(default_factory=list)
    """Ids with ground truth but no prediction (never dropped silently)."""
    predicted_only: list[str] = field(default_factory=list)
    """Ids with a prediction but no ground truth."""
    f1_parts: F1Parts = field(default_factory=dict)
    """Exact per-document F1 values (see :data:`F1Parts`)."""
    f1_documents: int = 0
    undecided: int = 0
    """Comparisons a provider (SEMANTIC, LLM) failed to decide. They are counted as
    FD, the worst case, so every metric is a lower bound while this is above zero."""
    undecided_reasons: list[str] = field(default_factory=list)
    """Why, once per distinct reason (at most :data:`MAX_UNDECIDED_REASONS`)."""
    list_infos: dict[str, FieldInfo] = field(default_factory=dict)
    unparsed: int = 0
    """Values of numeric fields that do not read as numbers (either side)."""
    discovered_fields: dict[tuple[str, str], FieldAggregate] = field(default_factory=dict)
    """Fields found in the data but not in the schema, when they are not part of the
    headline figures (``discovered="exclude"``)."""
    discovered_counts: Counts = field(default_factory=Counts)
    invalid_documents: int = 0
    """Documents whose ground truth contradicts the schema's shape, not scored."""
    invalid_examples: list[dict[str, Any]] = field(default_factory=list)
    """The first :data:`MAX_INVALID_EXAMPLES` of them (see :func:`invalid_example`)."""
    settings: dict[str, str] = field(default_factory=dict)
    """How the comparison was run: ``list_pairing``, ``discovered``, ``shape_mismatch``."""
    provider_calls: list[dict[str, Any]] = field(default_factory=list)
    """The SEMANTIC and LLM providers' calls, one entry per call and document served
    (see :class:`~docevals_mlflow.fields.deferred.ProviderCallLog`)."""
    document_cells: array[int] = field(default_factory=lambda: array("i"))
    """Per document and headline field, flat 32-bit ints (28 bytes a document and
    field): ``document, field, tp, fa, fd, fn, tn``
    (document: its index in ``documents``; field: its index in ``cell_fields``). The
    intervals resample documents from these (:mod:`.intervals`)."""
    cell_fields: dict[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def empty(
        cls,
        schema: DocumentSchema,
        expected_only: Iterable[str],
        predicted_only: Iterable[str],
        settings: dict[str, str],
    ) -> Self:
        """The batch before any document is added: the schema's identity, the unpaired
        ids and how the comparison is run (see ``comparison_settings``)."""
        return cls(
            schema_id=schema.schema_id,
            schema_version=schema.version,
            schema_sha256=schema.sha256,
            expected_only=list(expected_only),
            predicted_only=list(predicted_only),
            settings=settings,
        )

    @property
    def metrics(self) -> dict[str, float | None]:
        """Micro metrics: computed from the batch's summed cells."""
        return self.counts.metrics()

    @property
    def f1_sum(self) -> float:
        """The sum of defined document F1 values (exact, rounded once)."""
        return f1_total(self.f1_parts)

    @property
    def macro_f1(self) -> float | None:
        """Mean of per-document F1 over documents where F1 is defined.

        The sum is exact, so the figure is the same whatever order (or how many
        processes) the documents were compared in.
        """
        return self.f1_sum / self.f1_documents if self.f1_documents else None

    @property
    def document_count(self) -> int:
        """Documents compared (unpaired ids are not compared)."""
        return len(self.documents)

    def add(self, document: DocumentComparison, *, keep_rows: bool = True) -> None:
        """Fold one document's cells into every aggregate."""
        if document.invalid:
            self.invalid_documents += 1
            if len(self.invalid_examples) < MAX_INVALID_EXAMPLES:
                self.invalid_examples.append(invalid_example(document))
            return
        aggregate = self.classes.get(document.document_class)
        if aggregate is None:
            aggregate = self.classes[document.document_class] = ClassAggregate(
                document.document_class, document.configured
            )
        doc_counts = Counts.from_list(self._add_cells(document, aggregate))
        self.counts.add(doc_counts)
        aggregate.documents += 1
        aggregate.counts.add(doc_counts)
        tp, fp, fn = doc_counts.tp, doc_counts.fa + doc_counts.fd, doc_counts.fn
        if add_f1(self.f1_parts, tp, fp, fn):
            add_f1(aggregate.f1_parts, tp, fp, fn)
            self.f1_documents += 1
            aggregate.f1_documents += 1
        if document.undecided:
            self._add_undecided(document, aggregate)
        if document.unparsed:
            self._add_unparsed(document, aggregate)
        for template, cells in document.items.items():
            entry_items = self.lists.get(template)
            if entry_items is None:
                entry_items = self.lists[template] = ItemCounts()
                info = document.fields[template]
                self.list_labels[template] = info.label
                self.list_infos[template] = info
            entry_items.add_list(cells)
        if keep_rows:
            self.documents.append(document)
        else:
            self.documents.append(
                DocumentSummary(
                    document.id, document.document_class, doc_counts, dict(document.undecided)
                )
            )

    def _add_cells(self, document: DocumentComparison, aggregate: ClassAggregate) -> list[int]:
        """Fold the document's cells per field template into the batch's and the
        class's figures (discovered fields apart when excluded); returns the
        document's total ``[tp, fa, fd, fn, tn]``."""
        total = [0, 0, 0, 0, 0]
        batch_fields, class_fields, infos = self.fields, aggregate.fields, document.fields
        include_discovered = document.include_discovered
        stored, indexes, position = self.document_cells, self.cell_fields, len(self.documents)
        for template, cells in document.cells.items():
            info = infos[template]
            if info.discovered and not include_discovered:
                self._add_discovered(info, cells)
                continue
            tp, fa, fd, fn, tn = cells
            index = indexes.setdefault((template, info.label), len(indexes))
            stored.extend((position, index, tp, fa, fd, fn, tn))
            total[0] += tp
            total[1] += fa
            total[2] += fd
            total[3] += fn
            total[4] += tn
            entry = batch_fields.get((template, info.label))
            if entry is None:
                entry = batch_fields[template, info.label] = FieldAggregate(info)
            counts = entry.counts
            counts.tp, counts.fa, counts.fd = counts.tp + tp, counts.fa + fa, counts.fd + fd
            counts.fn, counts.tn = counts.fn + fn, counts.tn + tn
            entry = class_fields.get(template)
            if entry is None:
                entry = class_fields[template] = FieldAggregate(info)
            counts = entry.counts
            counts.tp, counts.fa, counts.fd = counts.tp + tp, counts.fa + fa, counts.fd + fd
            counts.fn, counts.tn = counts.fn + fn, counts.tn + tn
        return total

    def _add_discovered(self, info: FieldInfo, cells: list[int]) -> None:
        entry = self.discovered_fields.get((info.template, info.label))
        if entry is None:
            entry = self.discovered_fields[info.template, info.label] = FieldAggregate(info)
        entry.counts.add_list(cells)
        self.discovered_counts.add_list(cells)

    def _field_entry(
        self, document: DocumentComparison, aggregate: ClassAggregate, template: str
    ) -> tuple[FieldAggregate, FieldAggregate | None]:
        """The batch's and the class's aggregate of a template of ``document``."""
        info = document.fields[template]
        if info.discovered and not document.include_discovered:
            return self.discovered_fields[template, info.label], None
        return self.fields[template, info.label], aggregate.fields[template]

    def _add_unparsed(self, document: DocumentComparison, aggregate: ClassAggregate) -> None:
        for template, count in document.unparsed.items():
            batch_entry, class_entry = self._field_entry(document, aggregate, template)
            batch_entry.unparsed += count
            if class_entry is not None:
                class_entry.unparsed += count
            self.unparsed += count

    def _add_undecided(self, document: DocumentComparison, aggregate: ClassAggregate) -> None:
        for template, count in document.undecided.items():
            batch_entry, class_entry = self._field_entry(document, aggregate, template)
            batch_entry.undecided += count
            if class_entry is not None:
                class_entry.undecided += count
                aggregate.undecided += count
            self.undecided += count
        self._add_reasons(document.undecided_reasons)

    def _add_reasons(self, reasons: Iterable[str]) -> None:
        for reason in reasons:
            if reason not in self.undecided_reasons and (
                len(self.undecided_reasons) < MAX_UNDECIDED_REASONS
            ):
                self.undecided_reasons.append(reason)

    def merge(self, other: BatchComparison) -> None:
        """Fold in the figures of ``other``, whose documents come after this batch's.

        The result is the same as adding ``other``'s documents one by one: sums of
        cells are exact, entries first seen in ``other`` are appended in its order,
        and F1 parts are exact. (Undecided reasons: ``other`` keeps at most
        :data:`MAX_UNDECIDED_REASONS`, so a merge may keep fewer distinct reasons
        than one long batch would.) ``other`` is not changed.
        """
        self.counts.add(other.counts)
        _merge_fields(self.fields, other.fields)
        for name, theirs in other.classes.items():
            mine = self.classes.get(name)
            if mine is None:
                mine = self.classes[name] = ClassAggregate(name, theirs.configured)
            mine.documents += theirs.documents
            mine.counts.add(theirs.counts)
            _merge_fields(mine.fields, theirs.fields)
            merge_f1(mine.f1_parts, theirs.f1_parts)
            mine.f1_documents += theirs.f1_documents
            mine.undecided += theirs.undecided
        for template, items in other.lists.items():
            entry_items = self.lists.get(template)
            if entry_items is None:
                entry_items = self.lists[template] = ItemCounts()
                self.list_labels[template] = other.list_labels[template]
                self.list_infos[template] = other.list_infos[template]
            entry_items.add(items)
        _merge_fields(self.discovered_fields, other.discovered_fields)
        self.discovered_counts.add(other.discovered_counts)
        self.unparsed += other.unparsed
        self.invalid_documents += other.invalid_documents
        room = MAX_INVALID_EXAMPLES - len(self.invalid_examples)
        self.invalid_examples.extend(other.invalid_examples[: max(0, room)])
        self._merge_cells(other)
        self.documents.extend(other.documents)
        merge_f1(self.f1_parts, other.f1_parts)
        self.f1_documents += other.f1_documents
        self.undecided += other.undecided
        self._add_reasons(other.undecided_reasons)
        self.provider_calls.extend(other.provider_calls)

    def _merge_cells(self, other: BatchComparison) -> None:
        """Append ``other``'s per-document cells, renumbered after this batch's."""
        if not other.document_cells:
            return
        import numpy as np

        theirs = np.frombuffer(other.document_cells, dtype=np.intc).reshape(-1, 7).copy()
        mapping = np.array(
            [self.cell_fields.setdefault(key, len(self.cell_fields)) for key in other.cell_fields],
            dtype=np.intc,
        )
        theirs[:, 0] += len(self.documents)
        theirs[:, 1] = mapping[theirs[:, 1]]
        self.document_cells.frombytes(theirs.tobytes())

    def to_report(self, *, include_rows: bool = True, intervals: Any = True) -> Any:
        """The JSON report model (see :mod:`docevals_mlflow.fields.report`);
        ``intervals``: True (defaults), False, or an ``IntervalSettings``."""
        from docevals_mlflow.fields.report import build_fields_report

        return build_fields_report(self, include_rows=include_rows, intervals=intervals)


def _merge_fields(mine: dict[Any, FieldAggregate], theirs: dict[Any, FieldAggregate]) -> None:
    for key, entry in theirs.items():
        aggregate = mine.get(key)
        if aggregate is None:
            aggregate = mine[key] = FieldAggregate(entry.info)
        aggregate.counts.add(entry.counts)
        aggregate.undecided += entry.undecided
        aggregate.unparsed += entry.unparsed
