"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from docevals_mlflow.errors import OutputError


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
