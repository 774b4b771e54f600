"""The cross-process lock that serializes creating and migrating an SQLite store.

An exclusive lock on ``<file>.lock`` beside the store (``fcntl.flock``;
``msvcrt.locking`` on Windows). The holder removes the lock file as it lets go (a
waiter that then holds a removed file notices and tries again), so none is left
beside the store; on Windows, where an open file cannot be removed, it stays.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from docevals_mlflow.errors import OutputError
from docevals_mlflow.tracking.errors import TrackingError

LOCK_SUFFIX = ".lock"
LOCK_WAIT_SECONDS = 120.0
"""How long to wait for another process creating or migrating the store."""


@contextlib.contextmanager
def store_lock(path: Path) -> Iterator[None]:
    """Hold the lock beside the store at ``path`` (nothing to hold when its folder is
    read-only and the store exists: nothing can be created or migrated there)."""
    lock_path = path.with_name(path.name + LOCK_SUFFIX)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _acquire(lock_path)
    except OSError as exc:
        if path.exists():
            # A read-only folder: nothing can be created or migrated there, so there
            # is nothing to serialize; the check still runs.
            yield
            return
        raise OutputError(
            f"cannot create the store's lock file: {exc.strerror or exc}", source=str(lock_path)
        ) from exc
    try:
        yield
    finally:
        _release(fd, lock_path)


def _acquire(lock_path: Path) -> int:
    """An open descriptor of ``lock_path``, exclusively locked."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    delay = 0.002
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            if _try_lock(fd):
                if _still_named(fd, lock_path):
                    return fd
                # The holder before us removed the file as it let go; a newcomer may
                # lock a new file of that name, so this one means nothing any more.
                _unlock(fd)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        if time.monotonic() > deadline:
            raise TrackingError(
                f"another process has held the store's lock for {LOCK_WAIT_SECONDS:.0f} s "
                "(creating or migrating the store); nothing was logged",
                source=str(lock_path),
                expected="that process to finish, or to be stopped",
            )
        time.sleep(delay)
        # Short pauses: the lock is mostly held for milliseconds (a check), and a
        # waiter asleep for long would leave it free while others queue.
        delay = min(delay * 2, 0.05)


def _release(fd: int, lock_path: Path) -> None:
    try:
        if _REMOVE_WHEN_DONE:
            # Removed while still held, so that no lock file is left beside the store;
            # _acquire's name check keeps a waiter on the removed file from going on.
            with contextlib.suppress(OSError):
                os.unlink(lock_path)
        _unlock(fd)
    finally:
        os.close(fd)


def _still_named(fd: int, lock_path: Path) -> bool:
    try:
        named = os.stat(lock_path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)


if sys.platform == "win32":
    import msvcrt

    # An open file cannot be removed on Windows: the lock file stays.
    _REMOVE_WHEN_DONE = False

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    _REMOVE_WHEN_DONE = True

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
