"""Helper processes that compare chunks of documents for :mod:`.parallel`, seen from
the parent (what a helper does is in :mod:`.helper_work`; its names are importable
from here).

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
import threading
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import WorkerProcessError
from docevals_mlflow.fields.helper_work import (
    ComparerKey,
    Failure,
    HelperCrash,
    Job,
    Outcome,
    PackedPair,
    PortableNode,
    cached_comparer,
    compare_here,
    helper_main,
)

if TYPE_CHECKING:
    pass

PRELOAD = (
    "docevals_mlflow.fields.batch",
    "docevals_mlflow.fields.pairing",
    "docevals_mlflow.fields.helper_work",
    "docevals_mlflow.fields.processes",
    "scipy.optimize",
)
"""Modules the fork server imports once, so that helpers start warm."""
PIPE_BYTES = 1 << 20
"""Pipe capacity asked for (Linux's default ceiling for unprivileged processes)."""


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
            target=helper_main,
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


__all__ = [
    "LOCK",
    "ComparerKey",
    "Failure",
    "Helper",
    "HelperCrash",
    "Job",
    "Outcome",
    "PackedPair",
    "PortableNode",
    "cached_comparer",
    "compare_here",
    "helpers",
    "stop_helpers",
    "wait_any",
]
