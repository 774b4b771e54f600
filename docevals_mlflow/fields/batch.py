"""Comparing many documents in bounded memory (the batch's aggregate figures are in
:mod:`~docevals_mlflow.fields.aggregates`, importable from here)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from docevals_mlflow.core.gc import gc_paused
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.aggregates import (
    MAX_UNDECIDED_REASONS,
    BatchComparison,
    ClassAggregate,
    DocumentSummary,
    FieldAggregate,
)
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer
from docevals_mlflow.fields.methods import ProviderFactory
from docevals_mlflow.fields.schema import DocumentSchema, ListPairing
from docevals_mlflow.fields.shapes import (
    DiscoveredPolicy,
    ShapeMismatchPolicy,
    shape_mismatch_error,
)


@dataclass(slots=True)
class DocumentPair:
    """One document to compare: ids, class, both sides, and optional confidence."""

    id: str
    expected: Any
    predicted: Any
    document_class: str | None = None
    confidence: Mapping[str, float] | None = None
    explainability_info: Any = None
    source: str | None = field(default=None, compare=False)
    """The expected input the document came from, for messages (not part of what
    the pair is)."""
    place: str | None = field(default=None, compare=False)
    """Where in it (``line N``, ``row N``, a file name)."""


def as_pair(item: Any, index: int) -> DocumentPair:
    """Accept a :class:`DocumentPair`, an ``(expected, predicted)`` tuple, or a record
    ``{"id", "class"?, "expected", "predicted", "confidence"?, "explainability_info"?}``."""
    if isinstance(item, DocumentPair):
        return item
    if isinstance(item, tuple) and len(item) == 2:
        return DocumentPair(id=str(index), expected=item[0], predicted=item[1])
    if isinstance(item, Mapping) and "expected" in item and "predicted" in item:
        doc_id = item.get("id", index)
        document_class = item.get("class", item.get("document_class"))
        return DocumentPair(
            id=str(doc_id),
            expected=item["expected"],
            predicted=item["predicted"],
            document_class=None if document_class is None else str(document_class),
            confidence=item.get("confidence"),
            explainability_info=item.get("explainability_info"),
        )
    raise InputError(
        f"cannot read document {index} ({type(item).__name__})",
        record=index,
        expected="an (expected, predicted) tuple, a DocumentPair, or a mapping with "
        "'expected' and 'predicted'",
    )


RowsSink = Callable[[DocumentComparison], None]
"""Receives each document (with its rows) as it is compared, e.g. to write Parquet."""


def document_chunks(pairs: Iterable[Any], chunk_size: int) -> Iterator[list[DocumentPair]]:
    """Read ``pairs`` into lists of ``chunk_size`` documents, lazily.

    Each item is read with :func:`as_pair`; a repeated document id is an error
    naming it, raised when that item is reached.
    """
    seen: set[str] = set()
    chunk: list[DocumentPair] = []
    for index, item in enumerate(pairs):
        pair = as_pair(item, index)
        if pair.id in seen:
            raise InputError(f"duplicate document id {pair.id!r}", record=pair.id)
        seen.add(pair.id)
        chunk.append(pair)
        if len(chunk) >= chunk_size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def fold_chunk(
    comparer: FieldComparer, batch: BatchComparison, chunk: list[DocumentPair], keep_rows: bool
) -> list[DocumentComparison]:
    """Compare one chunk together (list pairing vectorised across it) and add every
    document to ``batch``; returns the documents, in order."""
    with gc_paused():
        documents = comparer.compare_many(
            [
                (
                    pair.expected,
                    pair.predicted,
                    {
                        "document_id": pair.id,
                        "document_class": pair.document_class,
                        "confidence": pair.confidence,
                        "explainability_info": pair.explainability_info,
                    },
                )
                for pair in chunk
            ]
        )
        for pair, document in zip(chunk, documents, strict=True):
            if document.invalid:
                document.source, document.place = pair.source, pair.place
            batch.add(document, keep_rows=keep_rows)
    return documents


def compare_documents(
    pairs: Iterable[Any],
    schema: DocumentSchema | None = None,
    *,
    keep_rows: bool = True,
    rows_sink: RowsSink | None = None,
    providers: Mapping[str, ProviderFactory] | None = None,
    expected_only: Iterable[str] = (),
    predicted_only: Iterable[str] = (),
    chunk_size: int = 256,
    workers: int = 1,
    list_pairing: ListPairing | None = None,
    discovered: DiscoveredPolicy = "exclude",
    shape_mismatch: ShapeMismatchPolicy = "error",
) -> BatchComparison:
    """Compare a stream of documents; memory stays bounded when rows are not kept.

    ``pairs`` may be any iterable (a generator reading files is fine) of
    ``(expected, predicted)`` tuples, :class:`DocumentPair` objects or records with
    ``id``, ``class``, ``expected`` and ``predicted``. With ``keep_rows=False`` only
    per-document cells are kept; ``rows_sink`` still sees every document's rows as
    it is compared. Duplicate document ids are an error naming them.

    Documents are compared ``chunk_size`` at a time so that list pairing is
    vectorised across documents; results are identical to one-by-one comparison.

    ``workers`` > 1 compares chunks in that many processes (``0``: one per CPU) and
    gives exactly the same batch, report and errors as ``workers=1``; see
    :mod:`docevals_mlflow.fields.parallel`. Schemas with SEMANTIC or LLM fields
    need ``workers=1`` (their provider requests already run concurrently).

    ``list_pairing``, ``discovered`` and ``shape_mismatch`` are
    :class:`~docevals_mlflow.fields.compare.FieldComparer`'s. With
    ``shape_mismatch="error"`` every document is still compared first, so that the
    :class:`~docevals_mlflow.errors.ShapeMismatchError` raised at the end says how
    many documents have ground truth of the wrong shape.
    """
    comparer = FieldComparer(
        schema if schema is not None else DocumentSchema(schema_id="inferred"),
        providers=providers,
        keep_rows=keep_rows or rows_sink is not None,
        list_pairing=list_pairing,
        discovered=discovered,
        shape_mismatch=shape_mismatch,
    )
    settings = comparison_settings(list_pairing, discovered, shape_mismatch)
    batch = BatchComparison.empty(comparer.schema, expected_only, predicted_only, settings)
    # A providers mapping from field_providers keeps its calls: this batch's go in it.
    calls = getattr(providers, "calls", None)
    first_call = len(calls.entries) if calls is not None else 0
    _compare_chunks(
        comparer, batch, document_chunks(pairs, chunk_size), workers, keep_rows, rows_sink
    )
    if calls is not None:
        batch.provider_calls = calls.entries[first_call:]
    check_shapes(batch, shape_mismatch)
    return batch


def _compare_chunks(
    comparer: FieldComparer,
    batch: BatchComparison,
    chunks: Iterator[list[DocumentPair]],
    workers: int,
    keep_rows: bool,
    rows_sink: RowsSink | None,
) -> None:
    if workers != 1:
        # Imported here: the serial path never needs multiprocessing.
        from docevals_mlflow.fields.parallel import compare_in_processes

        compare_in_processes(
            comparer, batch, chunks, workers=workers, keep_rows=keep_rows, rows_sink=rows_sink
        )
    else:
        _compare_serially(comparer, batch, chunks, keep_rows, rows_sink)


def _compare_serially(
    comparer: FieldComparer,
    batch: BatchComparison,
    chunks: Iterable[list[DocumentPair]],
    keep_rows: bool,
    rows_sink: RowsSink | None,
) -> None:
    """Fold every chunk into ``batch`` in this process."""
    # Paused for the whole run, not per chunk: the collector would otherwise scan
    # every chunk's rows again and again (the engine makes no reference cycles).
    # A sink is the caller's code and may: then the pause is per chunk.
    with gc_paused() if rows_sink is None else contextlib.nullcontext():
        for chunk in chunks:
            documents = fold_chunk(comparer, batch, chunk, keep_rows)
            if rows_sink is not None:
                for document in documents:
                    rows_sink(document)


def comparison_settings(
    list_pairing: ListPairing | None, discovered: str, shape_mismatch: str
) -> dict[str, str]:
    """The settings a report records (``list_pairing`` ``schema`` when each list keeps
    its own)."""
    return {
        "list_pairing": list_pairing or "schema",
        "discovered": discovered,
        "shape_mismatch": shape_mismatch,
    }


def check_shapes(batch: BatchComparison, shape_mismatch: str) -> None:
    """Raise for wrong-shaped ground truth found in ``batch`` unless it is counted."""
    if batch.invalid_documents and shape_mismatch == "error":
        raise shape_mismatch_error(batch.invalid_examples[0], batch.invalid_documents)


__all__ = [
    "MAX_UNDECIDED_REASONS",
    "BatchComparison",
    "ClassAggregate",
    "DocumentPair",
    "DocumentSummary",
    "FieldAggregate",
    "RowsSink",
    "as_pair",
    "check_shapes",
    "compare_documents",
    "comparison_settings",
    "document_chunks",
    "fold_chunk",
]
