"""Helper processes that compare chunks of documents for :mod:`.parallel`.

Each helper is a process started with ``forkserver`` (``spawn`` where the platform
has no fork server), never plain ``fork``: forking a process that runs threads
(MLflow's, an HTTP client's) can deadlock the child. It reads pickled chunks from
its own pipe and writes each chunk's partial batch back on another, in order.

The parent talks to the pipes directly from its own thread: no feeder or manager
threads competing for the GIL while the parent compares chunks of its own, and the
pipes are enlarged (on Linux) so that neither side waits for the other to read.
Helpers are started on first use and kept for later calls (they hold nothing but
compiled schemas); they stop when their pipe closes or Python exits.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import traceback
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import DocEvalsError, WorkerProcessError
from docevals_mlflow.fields.leaves import expand_row
from docevals_mlflow.fields.schema import ListPairing
from docevals_mlflow.fields.shapes import DiscoveredPolicy, ShapeMismatchPolicy
from docevals_mlflow.fields.state import Row

if TYPE_CHECKING:
    from collections.abc import Callable

    from docevals_mlflow.fields.batch import BatchComparison, DocumentPair
    from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer
    from docevals_mlflow.fields.schema import DocumentSchema

PRELOAD = (
    "docevals_mlflow.fields.batch",
    "docevals_mlflow.fields.pairing",
    "docevals_mlflow.fields.processes",
    "scipy.optimize",
)
"""Modules the fork server imports once, so that helpers start warm."""
PIPE_BYTES = 1 << 20
"""Pipe capacity asked for (Linux's default ceiling for unprivileged processes)."""

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


# ---------------------------------------------------------------------------- helper side

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


def _helper_main(tasks: Connection, results: Connection) -> None:
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


# ---------------------------------------------------------------------------- parent side


MIN_PIPE_BYTES = 4096
"""What any pipe holds (POSIX's PIPE_BUF), when the real capacity is unknown."""


def _enlarge(connection: Connection) -> int:
    """Ask for a pipe of :data:`PIPE_BYTES`; returns the capacity it has."""
    try:
        import fcntl

        fcntl.fcntl(connection.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        return int(fcntl.fcntl(connection.fileno(), fcntl.F_GETPIPE_SZ))
    except (ImportError, AttributeError, OSError):  # not Linux, or not allowed
        return MIN_PIPE_BYTES


def _context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # Takes effect when the fork server starts (once per process); helpers then
        # begin with the engine imported.
        context.set_forkserver_preload(list(PRELOAD))
        return context
    return multiprocessing.get_context("spawn")


@dataclass(eq=False)
class Helper:
    """One helper process, seen from the parent: its pipes and its chunks in flight."""

    process: Any
    tasks: Connection
    results: Connection
    outstanding: int = 0
    ready: deque[Any] = field(default_factory=deque)
    """Outcomes received and not yet folded in, oldest first."""
    started: bool = False
    """Whether the helper said it is ready (it has imported the engine)."""

    launcher: threading.Thread | None = None
    launch_error: BaseException | None = None
    outbox: queue.SimpleQueue[bytes | None] = field(default_factory=queue.SimpleQueue)
    """Chunks waiting for the feeder thread to write them to the helper's pipe."""
    feeder: threading.Thread | None = None
    send_error: BaseException | None = None
    capacity: int = MIN_PIPE_BYTES
    """Bytes the task pipe holds."""
    unread: deque[int] = field(default_factory=deque)
    """Sizes of the chunks whose results have not come back: an upper bound, in
    total, of what the task pipe holds unread."""
    handed: int = 0
    """Chunks given to the feeder (counted by the caller's thread only)."""
    written: int = 0
    """Chunks the feeder has written (counted by the feeder's thread only)."""

    @classmethod
    def start(cls) -> Helper:
        """Start a helper; returns at once.

        The first start in a process also starts the fork server, which imports the
        engine (about a second) before it can fork; that happens on a thread, so the
        caller compares documents meanwhile.
        """
        context = _context()
        task_reader, task_writer = context.Pipe(duplex=False)
        result_reader, result_writer = context.Pipe(duplex=False)
        capacity = _enlarge(task_writer)
        _enlarge(result_writer)
        process = context.Process(  # type: ignore[attr-defined]
            target=_helper_main,
            args=(task_reader, result_writer),
            name="docevals-helper",
            daemon=True,
        )
        helper = cls(process, task_writer, result_reader, capacity=capacity)

        def launch() -> None:
            try:
                process.start()
            except BaseException as exc:  # reported by check_started
                helper.launch_error = exc
            finally:
                task_reader.close()
                result_writer.close()

        helper.launcher = threading.Thread(target=launch, name="docevals-helper-start")
        helper.launcher.start()
        return helper

    def alive(self) -> bool:
        """Starting or running."""
        launching = self.launcher is not None and self.launcher.is_alive()
        return launching or (self.launch_error is None and self.process.is_alive())

    def stopped(self) -> WorkerProcessError:
        """The error for a helper that went away (killed, or out of memory)."""
        self.process.join(timeout=1)
        code = self.process.exitcode
        how = (
            f"was killed by signal {-code}"
            if code is not None and code < 0
            else (f"exited with code {code}" if code is not None else "closed its pipe")
        )
        return WorkerProcessError(
            f"a worker process {how} while comparing documents",
            expected="enough memory for every worker: fewer workers (--workers), "
            "or rows not kept (--no-rows)",
        )

    def send(self, job: Job, packed: list[PackedPair]) -> None:
        """Queue one chunk (returns at once: the pipe holds it).

        Raises:
            WorkerProcessError: the helper has stopped.
        """
        if self.send_error is not None:
            raise self.stopped()
        data = pickle.dumps((job, packed), protocol=pickle.HIGHEST_PROTOCOL)
        size = len(data) + 16  # and the length header
        if self.handed == self.written and sum(self.unread) + size <= self.capacity:
            # Nothing waits for the feeder and the pipe has room for everything that
            # may be unread plus this chunk: the write cannot block, so no thread.
            try:
                self.tasks.send_bytes(data)
            except OSError:  # BrokenPipeError: the helper is gone
                raise self.stopped() from None
        else:
            if self.feeder is None:
                self.feeder = threading.Thread(
                    target=self._feed, name="docevals-helper-feeder", daemon=True
                )
                self.feeder.start()
            self.handed += 1
            self.outbox.put(data)
        self.unread.append(size)
        self.outstanding += 1

    def _feed(self) -> None:
        # Writing from the calling thread could deadlock: a chunk larger than the
        # pipe blocks the caller until the helper reads it, while the helper blocks
        # writing a large result that only the caller would read. This thread spends
        # its time blocked in write (without the GIL); the caller keeps reading.
        while True:
            data = self.outbox.get()
            if data is None:
                return
            try:
                self.tasks.send_bytes(data)
            except OSError as exc:  # BrokenPipeError: the helper is gone
                self.send_error = exc
                return
            self.written += 1

    def check_started(self) -> bool:
        """Whether the helper is ready for chunks (reads its hello if it has come)."""
        if self.launch_error is not None:
            raise WorkerProcessError(
                f"a worker process could not start: {self.launch_error}",
                expected="a platform where Python can start processes, or workers=1",
            )
        if not self.started and self.results.poll():
            try:
                self.results.recv_bytes()
            except (EOFError, OSError):
                raise self.stopped() from None
            self.started = True
        return self.started

    def collect(self, *, block: bool) -> None:
        """Receive every outcome already sent (with ``block``, at least one)."""
        while self.outstanding and (block or self.results.poll()):
            block = False
            try:
                data = self.results.recv_bytes()
            except (EOFError, OSError):
                raise self.stopped() from None
            self.outstanding -= 1
            self.unread.popleft()
            self.ready.append(pickle.loads(data))

    def stop(self) -> None:
        """Close the pipes; the helper ends (terminated if it does not)."""
        if self.launcher is not None:
            self.launcher.join()
        self.outbox.put(None)
        # Results first: a helper blocked writing one fails and exits, which unblocks
        # a feeder still writing it a chunk.
        with contextlib.suppress(OSError):
            self.results.close()
        if self.launch_error is None:
            self.process.join(timeout=1)
            if self.process.is_alive():
                self.process.terminate()
                self.process.join(timeout=1)
        if self.feeder is not None:
            self.feeder.join(timeout=5)
        with contextlib.suppress(OSError):
            self.tasks.close()


_HELPERS: list[Helper] = []
_OWNER = os.getpid()
"""The process the helpers belong to: a forked child starts its own."""
LOCK = threading.RLock()
"""Held by a comparison using the helpers: calls from several threads take turns."""


def helpers(count: int) -> list[Helper]:
    """``count`` idle helper processes, started on first use and then reused (call
    with :data:`LOCK` held)."""
    global _OWNER
    if os.getpid() != _OWNER:
        # Inherited from the parent by fork: not ours to use or to stop.
        _HELPERS.clear()
        _OWNER = os.getpid()
    if len(_HELPERS) != count or not all(helper.alive() for helper in _HELPERS):
        stop_helpers()
        _HELPERS.extend(Helper.start() for _ in range(count))
    return list(_HELPERS)


def stop_helpers() -> None:
    """Stop the helper processes now (they also stop when Python exits)."""
    with LOCK:
        if os.getpid() != _OWNER:
            _HELPERS.clear()
        while _HELPERS:
            _HELPERS.pop().stop()


def wait_any(busy: list[Helper]) -> None:
    """Block until one of ``busy`` has sent an outcome, and receive what has come."""
    wait([helper.results for helper in busy])
    for helper in busy:
        helper.collect(block=False)
