"""Atomic file writes: a reader sees the old file or the new one, never half of one.

A write goes to a hidden temporary sibling, ``.<name>.<8 random characters>.tmp``,
which is renamed over the target. A process killed mid-write (``kill -9``, power
loss) leaves that file behind; the first write of a later process to the same folder
removes such files once they are older than :data:`STALE_AFTER_SECONDS`.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import threading
import time
from pathlib import Path

from docevals_mlflow.errors import OutputError

STALE_AFTER_SECONDS = 300.0
"""A temporary file this old belongs to a write that will never finish: no write of
ours takes minutes between creating its temporary file and renaming it."""
# mkstemp's names: the prefix and suffix given below around 8 characters of
# tempfile's alphabet (lower-case letters, digits, "_").
_TEMPORARY = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
_swept: set[str] = set()
_swept_lock = threading.Lock()


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> Path:
    """Write ``data`` to ``path`` via a temporary sibling, fsync and ``os.replace``.

    Parent folders are created. On any failure the previous file (if any) is left
    untouched and the temporary file is removed. ``durable=False`` skips the fsyncs:
    the write stays atomic for readers and against a crash of this process, but
    a power cut may lose it (fine for caches, which a rerun refills).
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _sweep_once(target.parent)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}", source=str(target)) from exc
    try:
        # mkstemp makes the file private; give it the mode a plain open() would.
        os.fchmod(fd, _target_mode(target))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write: {exc.strerror or exc}", source=str(target)) from exc
        raise
    if durable:
        _fsync_directory(target.parent)
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str, *, durable: bool = True) -> Path:
    """Write UTF-8 ``text`` atomically (see :func:`atomic_write_bytes`)."""
    return atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def remove_stale_temporaries(
    directory: str | os.PathLike[str], *, older_than: float = STALE_AFTER_SECONDS
) -> list[Path]:
    """Remove the temporary files killed atomic writes left in ``directory`` (only
    regular files named as this module names them, older than ``older_than``
    seconds); returns what was removed. Never raises: this is housekeeping."""
    removed: list[Path] = []
    limit = time.time() - older_than
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not _TEMPORARY.fullmatch(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            # A young one may be another process's write in progress.
            if stat.S_ISREG(info.st_mode) and info.st_mtime < limit:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _sweep_once(directory: Path) -> None:
    # Once per folder and process: a folder written thousands of times (a results
    # tree) is listed once, not once per file.
    key = os.path.abspath(directory)
    with _swept_lock:
        if key in _swept:
            return
        _swept.add(key)
    remove_stale_temporaries(directory)


def _target_mode(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable on POSIX; not possible (nor needed) everywhere.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
