"""What a helper process of :mod:`~docevals_mlflow.fields.processes` does: compare
the chunks it is sent (with comparers cached per schema) and send back each chunk's
partial batch, with rows made portable and errors carried intact."""

from __future__ import annotations

import pickle
import signal
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import DocEvalsError
from docevals_mlflow.fields.leaves import expand_row
from docevals_mlflow.fields.schema import ListPairing
from docevals_mlflow.fields.shapes import DiscoveredPolicy, ShapeMismatchPolicy
from docevals_mlflow.fields.state import Row

if TYPE_CHECKING:
    from collections.abc import Callable

    from docevals_mlflow.fields.batch import BatchComparison, DocumentPair
    from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer
    from docevals_mlflow.fields.schema import DocumentSchema

PackedPair = tuple[str, Any, Any, "str | None", Any, Any, "str | None", "str | None"]
"""``(id, expected, predicted, class, confidence, explainability_info, source, place)``."""
Outcome = tuple["BatchComparison", "list[DocumentComparison] | None"]
"""A chunk's partial batch, and its documents with rows when only a sink wants them."""


class Failure:
    """A :class:`DocEvalsError` raised while comparing a chunk, carried back intact.

    Exceptions pickle as ``cls(*args)``, which loses keyword-only context (file,
    record, field path) or fails outright for subclasses with other signatures;
    this carries the type, the message and every attribute instead.
    """

    __slots__ = ("args", "kind", "state")

    def __init__(self, error: DocEvalsError) -> None:
        self.kind = type(error)
        self.args = error.args
        self.state = dict(error.__dict__)

    def error(self) -> DocEvalsError:
        """The error, rebuilt."""
        error = self.kind.__new__(self.kind)
        error.args = self.args
        error.__dict__.update(self.state)
        return error


class HelperCrash(RuntimeError):
    """A helper failed in a way that is a bug (its traceback is the message); a helper
    that stops (killed, out of memory) raises :class:`WorkerProcessError` instead."""


class PortableNode:
    """What a report needs of a field node, for rows that cross a process boundary.

    Rows refer to their field node, whose comparator may hold functions that do not
    pickle; a portable row carries this instead, with its reason already written
    (so :func:`~docevals_mlflow.fields.leaves.expand_row` never asks it to describe).
    """

    __slots__ = ("discovered", "label", "note", "template", "threshold")

    def __init__(
        self, template: str, label: str, threshold: float | None, discovered: bool
    ) -> None:
        self.template = template
        self.label = label
        self.threshold = threshold
        self.discovered = discovered
        self.note = ""

    def __getstate__(self) -> tuple[str, str, float | None, bool]:
        return self.template, self.label, self.threshold, self.discovered

    def __setstate__(self, state: tuple[str, str, float | None, bool]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    def describe(self, expected: Any, actual: Any, score: float | None) -> str:
        raise AssertionError("a portable row carries its reason")


def portable_rows(rows: list[Row], nodes: dict[int, PortableNode]) -> list[Row]:
    """``rows`` with their nodes replaced by :class:`PortableNode` (one per node in
    ``nodes``) and their reasons written out; they expand to the same tuples."""
    out = []
    for row in rows:
        expanded = expand_row(row)
        node = nodes.get(id(row[1]))
        if node is None:
            node = nodes[id(row[1])] = PortableNode(
                expanded[1], expanded[2], expanded[3], expanded[9]
            )
        out.append((row[0], node, row[2], row[3], expanded[6], row[5], row[6], expanded[10]))
    return out


def compare_here(
    comparer: FieldComparer, keep_rows: bool, chunk: list[DocumentPair]
) -> Outcome | Failure:
    """Compare one chunk into a partial batch (and, for a rows sink that the batch
    does not keep rows for, the documents with their rows)."""
    from docevals_mlflow.fields.batch import BatchComparison, fold_chunk

    partial = BatchComparison(schema_id="", schema_version="", schema_sha256="")
    try:
        documents = fold_chunk(comparer, partial, chunk, keep_rows)
    except DocEvalsError as exc:
        return Failure(exc)
    # With keep_rows the partial batch holds the documents themselves: sent once.
    return partial, documents if comparer.keep_rows and not keep_rows else None


ComparerKey = tuple[str, bool, ListPairing | None, DiscoveredPolicy, ShapeMismatchPolicy]
"""``(schema fingerprint, rows kept, list_pairing, discovered, shape_mismatch)``: what
decides a comparer's results (see :meth:`FieldComparer.key`)."""

_COMPARERS: dict[ComparerKey, FieldComparer] = {}
"""A worker process's comparers, per key."""
MAX_COMPARERS = 8
"""Comparers a worker keeps (the oldest goes first): a long-lived worker may see
many schemas."""


def cached_comparer(key: ComparerKey, load_schema: Callable[[], DocumentSchema]) -> FieldComparer:
    """The comparer for ``key`` (a :meth:`FieldComparer.key`), compiled (from
    ``load_schema()``) only the first time this process sees it. Helpers and Spark's
    Python workers both live across many chunks."""
    comparer = _COMPARERS.get(key)
    if comparer is None:
        from docevals_mlflow.fields.compare import FieldComparer

        if len(_COMPARERS) >= MAX_COMPARERS:
            _COMPARERS.pop(next(iter(_COMPARERS)))
        _, keep_rows, list_pairing, discovered, shape_mismatch = key
        comparer = _COMPARERS[key] = FieldComparer(
            load_schema(),
            keep_rows=keep_rows,
            list_pairing=list_pairing,
            discovered=discovered,
            shape_mismatch=shape_mismatch,
        )
    return comparer


@dataclass(frozen=True)
class Job:
    """What a helper needs besides the chunk: the schema (pickled once by the parent,
    unpickled by a helper only the first time it sees it), the comparer's settings,
    and the plugin methods the schema uses
    (:func:`~docevals_mlflow.fields.registry.helper_payload`, empty without any)."""

    key: ComparerKey
    schema: bytes
    keep_rows: bool
    methods: bytes = b""

    def comparer(self) -> FieldComparer:
        """The helper's comparer for this schema, compiled on first use."""
        return cached_comparer(self.key, self._schema)

    def _schema(self) -> DocumentSchema:
        # The fork server may predate the parent's plugins (and their import path),
        # and never ran its register_field_method() calls: register them first.
        if self.methods:
            from docevals_mlflow.fields.registry import adopt_helper_payload

            adopt_helper_payload(self.methods)
        schema: DocumentSchema = pickle.loads(self.schema)
        return schema


def compare_packed(job: Job, packed: list[PackedPair]) -> Outcome | Failure:
    """In a helper: compare one chunk; rows are made portable for the way back."""
    from docevals_mlflow.fields.batch import DocumentPair
    from docevals_mlflow.fields.compare import DocumentComparison

    outcome = compare_here(job.comparer(), job.keep_rows, [DocumentPair(*item) for item in packed])
    if isinstance(outcome, Failure):
        return outcome
    partial, documents = outcome
    nodes: dict[int, PortableNode] = {}
    for document in documents if documents is not None else partial.documents:
        if isinstance(document, DocumentComparison) and document.rows is not None:
            document.rows = portable_rows(document.rows, nodes)
    return outcome


def helper_main(tasks: Connection, results: Connection) -> None:
    """A helper's life: chunks in, outcomes out, until the parent closes the pipe."""
    import docevals_mlflow.fields.batch
    import docevals_mlflow.fields.pairing  # noqa: F401  (imported before saying hello)
    from docevals_mlflow.core.gc import gc_paused

    # Ctrl-C in a terminal reaches the whole process group: the parent handles it
    # and closes the pipes, which ends this loop without a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        results.send_bytes(b"")  # ready: until then the parent compares on its own
    except (BrokenPipeError, OSError):
        return
    while True:
        try:
            data = tasks.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            # Unpickling a chunk allocates many small dicts: no collections meanwhile.
            with gc_paused():
                job, packed = pickle.loads(data)
                outcome: Any = compare_packed(job, packed)
                reply = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # a bug: reported to the parent, which raises it
            reply = pickle.dumps(HelperCrash(traceback.format_exc()))
        try:
            results.send_bytes(reply)
        except (BrokenPipeError, OSError):
            return
