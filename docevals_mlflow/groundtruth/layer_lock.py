"""The lock every writer of a reviewer's layer file takes (answers and signatures)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from docevals_mlflow.errors import OutputError


@contextlib.contextmanager
def layer_lock(file: Path) -> Iterator[None]:
    """An exclusive lock on ``<file>.lock`` for one read-modify-write of ``file``: an
    answer and a signature written at once are serialised (the answer then drops the
    signature, since it changes what was signed)."""
    lock = file.with_name(file.name + ".lock")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise OutputError(f"cannot lock: {exc.strerror or exc}", source=str(lock)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
