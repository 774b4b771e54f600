"""Comparing documents in several processes, with exactly the serial results.

:func:`compare_in_processes` is what ``compare_documents(..., workers=N)`` runs. The
parent reads the input into the same chunks as the serial path (so every document
is compared alongside the same neighbours, and errors surface in the same order),
sends each chunk to a worker process, and folds the workers' partial batches back
in input order. Every figure is an exact sum (cells are integers, F1 values are
kept as exact fractions), so the batch, its report and its row order are identical
to ``workers=1``.

Memory stays bounded for a streamed input: at most :data:`IN_FLIGHT_PER_HELPER` chunks
per helper and :data:`AHEAD` of the calling process's own are in flight; the next
chunk is read only when there is room.

``workers=N`` means N processes in all: N - 1 helper processes
(:mod:`.processes`) and the calling process, which compares chunks itself whenever
the helpers have enough queued. Its own chunks cost no pickling, and it is already
comparing while the helpers start. Helpers start with ``forkserver`` (``spawn``
where there is no fork server), never plain ``fork``, and are kept for later calls.
As with any ``multiprocessing`` code, a script that calls this must guard its
entry point with ``if __name__ == "__main__":``.

SEMANTIC and LLM fields are refused with ``workers`` > 1 (a :class:`ConfigurationError`
naming them): their providers hold HTTP clients, keys, caches and usage counters
that belong to one process, and their requests already run concurrently there.
"""

from __future__ import annotations

import itertools
import os
import pickle
import warnings
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.gc import gc_paused
from docevals_mlflow.errors import ConfigurationError, DocEvalsWarning, InputError
from docevals_mlflow.fields.processes import (
    LOCK,
    Failure,
    Helper,
    HelperCrash,
    Job,
    Outcome,
    PackedPair,
    compare_here,
    helpers,
    stop_helpers,
    wait_any,
)
from docevals_mlflow.fields.registry import get_field_method, helper_payload

if TYPE_CHECKING:
    from docevals_mlflow.fields.batch import BatchComparison, DocumentPair, RowsSink
    from docevals_mlflow.fields.compare import FieldComparer
    from docevals_mlflow.fields.schema import DocumentSchema

IN_FLIGHT_PER_HELPER = 4
"""Chunks queued or running per helper: enough that a helper never waits for the
parent (which may be busy comparing a chunk of its own), few enough to bound memory."""
AHEAD = 8
"""Chunks compared by the calling process that may wait for an older helper chunk."""


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


WORKERS_PER_CPU = 4
"""More processes than this per CPU only queue for the same cores (and memory)."""
FILES_PER_WORKER = 8
"""Open files one helper process costs this process at its peak: two pipes (four ends
while it starts), its process sentinel and the fork server's connection, rounded up."""
RESERVED_FILES = 64
"""Open files kept for everything else: the inputs being read, the reports, MLflow."""


def worker_limit() -> tuple[int, str]:
    """The most workers this machine can hold, and what sets that limit: CPUs times
    :data:`WORKERS_PER_CPU`, and the open files the process may have (helpers are
    started all at once, and running out of files midway stops the comparison with
    an error from deep inside ``multiprocessing``)."""
    limit = cpu_count() * WORKERS_PER_CPU
    reason = f"{cpu_count()} CPUs × {WORKERS_PER_CPU}"
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no such limit on this platform
        return limit, reason
    if soft != resource.RLIM_INFINITY:
        by_files = max(1, (soft - RESERVED_FILES) // FILES_PER_WORKER)
        if by_files < limit:
            limit, reason = by_files, f"the open-file limit of {soft} (ulimit -n)"
    return limit, reason


def _parse_workers(workers: int | str) -> int:
    if isinstance(workers, str):
        text = workers.strip().lower()
        if text == "auto":
            return cpu_count()
        try:
            workers = int(text)
        except ValueError:
            raise InputError(
                f"invalid worker count {workers!r}", expected="a whole number ≥ 0, or auto"
            ) from None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise InputError(
            f"invalid worker count {workers!r}", expected="a whole number ≥ 0 (0: one per CPU)"
        )
    return workers or cpu_count()


def capped_workers(workers: int | str) -> tuple[int, str | None]:
    """A worker count (``0`` or ``"auto"``: one per CPU) capped at
    :func:`worker_limit`, and what to warn when it was capped (else ``None``).

    Raises:
        InputError: a negative count, or text other than a number or ``auto``.
    """
    count = _parse_workers(workers)
    limit, reason = worker_limit()
    if count <= limit:
        return count, None
    return limit, f"{workers}: more workers than this machine can hold ({reason}); using {limit}"


def resolve_workers(workers: int | str) -> int:
    """A worker count: ``0`` or ``"auto"`` means one per CPU; more than the machine
    can hold (:func:`worker_limit`) is capped, with a :class:`DocEvalsWarning`.

    Raises:
        InputError: a negative count, or text other than a number or ``auto``.
    """
    count, capped = capped_workers(workers)
    if capped is not None:
        warnings.warn(f"workers={capped}", DocEvalsWarning, stacklevel=2)
    return count


def provider_fields(schema: DocumentSchema) -> list[str]:
    """Field templates of ``schema`` whose method needs a provider (SEMANTIC, LLM):
    the provider, which stays in one process, decides them."""
    found: list[str] = []
    for _, template, method in schema.methods_used():
        if get_field_method(method).provider and template not in found:
            found.append(template)
    return found


def check_deterministic(schema: DocumentSchema, where: str) -> None:
    """Refuse a schema with provider-decided fields outside one process.

    Raises:
        ConfigurationError: naming the SEMANTIC/LLM fields and ``where`` (say,
            ``workers=2``).
    """
    fields = provider_fields(schema)
    if fields:
        shown = ", ".join(fields[:5]) + (f" and {len(fields) - 5} more" if len(fields) > 5 else "")
        raise ConfigurationError(
            f"{where}: fields {shown} use SEMANTIC or LLM, whose provider requests run in "
            "one process (concurrently already)",
            expected="one process (workers=1, --workers 1) for a schema with SEMANTIC or "
            "LLM fields",
        )


# ---------------------------------------------------------------------------- parent


def _pack(chunk: list[DocumentPair]) -> list[PackedPair]:
    return [
        (
            pair.id,
            pair.expected,
            pair.predicted,
            pair.document_class,
            pair.confidence,
            pair.explainability_info,
            pair.source,
            pair.place,
        )
        for pair in chunk
    ]


class _ReadFailure:
    """The error the input raised, held until earlier chunks are folded in."""

    __slots__ = ("exception",)

    def __init__(self, exception: Exception) -> None:
        self.exception = exception


def _guarded(
    chunks: Iterator[list[DocumentPair]],
) -> Iterator[list[DocumentPair] | _ReadFailure]:
    try:
        yield from chunks
    except Exception as exc:  # re-raised once the chunks before it are folded in
        yield _ReadFailure(exc)


def compare_in_processes(
    comparer: FieldComparer,
    batch: BatchComparison,
    chunks: Iterator[list[DocumentPair]],
    *,
    workers: int | str,
    keep_rows: bool,
    rows_sink: RowsSink | None,
) -> None:
    """Compare ``chunks`` in ``workers`` processes into ``batch``, in input order.

    ``comparer`` is the parent's (already built, so a method without a provider
    fails exactly as in the serial path); an input that fits in one chunk is
    compared in this process, since starting helpers would cost more than it saves.

    Raises:
        ConfigurationError: SEMANTIC or LLM fields with more than one worker, or a
            registered plugin method that helper processes cannot import.
        DocEvalsError: the first error in input order, as the serial path raises it.
    """
    from docevals_mlflow.fields.batch import fold_chunk

    count = resolve_workers(workers)
    methods = b""
    if count > 1:
        check_deterministic(comparer.schema, f"workers={count}")
        # Checked before any input is read, whatever its size: a plugin method that
        # helpers could not import fails alike for a small input and a large one.
        methods = helper_payload(method for _, _, method in comparer.schema.methods_used())

    def fold_here(chunk: list[DocumentPair]) -> None:
        documents = fold_chunk(comparer, batch, chunk, keep_rows)
        if rows_sink is not None:
            for document in documents:
                rows_sink(document)

    source = _guarded(chunks)
    ahead: list[list[DocumentPair] | _ReadFailure] = []
    for item in source:
        ahead.append(item)
        if isinstance(item, _ReadFailure) or len(ahead) == 2:
            break
    if count == 1 or len(ahead) < 2 or isinstance(ahead[1], _ReadFailure):
        for item in itertools.chain(ahead, source):  # the rest only with one worker
            if isinstance(item, _ReadFailure):
                raise item.exception
            fold_here(item)
        return
    # One comparison at a time uses the helpers; another thread's call waits.
    with LOCK:
        _Run(comparer, batch, keep_rows, rows_sink, helpers(count - 1), methods).run(
            itertools.chain(ahead, source)
        )


class _Run:
    """One comparison spread over helpers and this process, folded in input order."""

    def __init__(
        self,
        comparer: FieldComparer,
        batch: BatchComparison,
        keep_rows: bool,
        rows_sink: RowsSink | None,
        team: list[Helper],
        methods: bytes = b"",
    ) -> None:
        self.comparer = comparer
        self.batch = batch
        self.keep_rows = keep_rows
        self.rows_sink = rows_sink
        self.team = team
        self.job = Job(
            comparer.key,
            pickle.dumps(comparer.schema, protocol=pickle.HIGHEST_PROTOCOL),
            keep_rows,
            methods,
        )
        self.queue: deque[Helper | Outcome | Failure] = deque()
        """Every chunk in input order: the helper comparing it, or its outcome."""
        self.failure: _ReadFailure | None = None

    def run(self, source: Iterator[list[DocumentPair] | _ReadFailure]) -> None:
        finished = False
        # The collector stays off while chunks are compared and results arrive, as in
        # the serial path: unpickling allocates many acyclic tuples, and every full
        # collection would scan all the rows kept so far.
        with gc_paused():
            try:
                self._loop(source)
                finished = True
            finally:
                if not finished:
                    # Chunks still in a helper's pipe would be read by the next call.
                    stop_helpers()
        if self.failure is not None:
            raise self.failure.exception

    def _take(self, source: Iterator[list[DocumentPair] | _ReadFailure]) -> Any:
        if self.failure is not None:
            return None
        item = next(source, None)
        if isinstance(item, _ReadFailure):
            self.failure, item = item, None
        return item

    def _loop(self, source: Iterator[list[DocumentPair] | _ReadFailure]) -> None:
        queue, most = self.queue, IN_FLIGHT_PER_HELPER * len(self.team) + AHEAD
        exhausted = False
        while True:
            for helper in self.team:  # keep every ready helper's pipe full
                if not helper.check_started():
                    continue
                # The queue bound holds for helpers too: a helper whose results
                # arrived (collected, not yet folded behind a slower chunk) must not
                # be sent more until they are folded, or reading runs ahead.
                while (
                    not exhausted
                    and helper.outstanding < IN_FLIGHT_PER_HELPER
                    and len(queue) < most
                ):
                    chunk = self._take(source)
                    if chunk is None:
                        exhausted = True
                    else:
                        helper.send(self.job, _pack(chunk))
                        queue.append(helper)
                helper.collect(block=False)
            self._fold_ready()
            if not queue and exhausted:
                return
            if not exhausted and len(queue) < most:
                chunk = self._take(source)
                if chunk is None:
                    exhausted = True
                else:
                    queue.append(compare_here(self.comparer, self.keep_rows, chunk))
                continue
            wait_any([helper for helper in self.team if helper.outstanding])

    def _fold_ready(self) -> None:
        queue = self.queue
        while queue:
            head = queue[0]
            if isinstance(head, Helper):
                if not head.ready:
                    return
                outcome = head.ready.popleft()
            else:
                outcome = head
            queue.popleft()
            if isinstance(outcome, HelperCrash):
                raise outcome
            if isinstance(outcome, Failure):
                raise outcome.error() from None
            partial, documents = outcome
            self.batch.merge(partial)
            if self.rows_sink is not None:
                for document in documents if documents is not None else partial.documents:
                    self.rows_sink(document)


__all__ = [
    "check_deterministic",
    "compare_in_processes",
    "capped_workers",
    "cpu_count",
    "provider_fields",
    "resolve_workers",
    "stop_helpers",
    "worker_limit",
]
