"""Opening the files a user names: regular files only, errors that name the file.

A named pipe, a device or a folder where a file is expected (and a file where a
folder is) is refused before it is opened, since reading a pipe blocks forever and a
device never ends. Undecodable text is an error naming the line and column.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

from docevals_mlflow.errors import InputError, InputFileNotFoundError

UTF8_BOM = b"\xef\xbb\xbf"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _cannot_read(path: Path, exc: OSError) -> InputError:
    return InputError(f"cannot read: {exc.strerror or exc}", source=str(path))


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        raise InputFileNotFoundError(f"{what} not found", source=str(path)) from None
    except OSError as exc:  # PermissionError on a folder on the way, ELOOP, ...
        raise _cannot_read(path, exc) from None


def check_file(path: Path, *, what: str = "file") -> None:
    """Refuse, before anything opens it, a ``path`` that is not a regular file (a
    symbolic link to one is fine).

    Raises:
        InputFileNotFoundError: nothing is there (``"<what> not found"``).
        InputError: a folder, named pipe, device or socket, or not accessible.
    """
    mode = _stat(path, what).st_mode
    if not stat.S_ISREG(mode):
        raise InputError(f"this is {_kind(mode)}, not a file", source=str(path))


def check_folder(path: Path, *, what: str = "folder") -> None:
    """Refuse a ``path`` that is not a folder (the counterpart of :func:`check_file`)."""
    mode = _stat(path, what).st_mode
    if not stat.S_ISDIR(mode):
        raise InputError(f"this is {_kind(mode)}, not a folder", source=str(path))


def is_folder_input(path: Path, *, what: str = "input") -> bool:
    """Whether an input that may be a file or a folder is a folder; anything but a
    regular file or a folder is refused before it is opened."""
    mode = _stat(path, what).st_mode
    if stat.S_ISDIR(mode):
        return True
    if not stat.S_ISREG(mode):
        raise InputError(f"this is {_kind(mode)}, not a file or folder", source=str(path))
    return False


# O_NONBLOCK: if the path is swapped for a named pipe between the check and the open,
# the open returns at once instead of waiting for a writer, and fstat refuses it.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_OPEN_FLAGS = os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0)


def open_file(path: Path, *, what: str = "file") -> IO[bytes]:
    """Open a regular file for reading in binary mode (see :func:`check_file`).

    Raises:
        InputFileNotFoundError: nothing is there.
        InputError: not a regular file, or it cannot be opened (permissions).
    """
    check_file(path, what=what)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise InputFileNotFoundError(f"{what} not found", source=str(path)) from None
    except OSError as exc:
        raise _cannot_read(path, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"this is {_kind(mode)}, not a file", source=str(path))
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes_file(path: Path, *, what: str = "file") -> bytes:
    """The bytes of a regular file (see :func:`open_file`)."""
    with open_file(path, what=what) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise _cannot_read(path, exc) from None


def _line_column(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a byte offset."""
    start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[start:offset].decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


def decode_text(
    data: bytes,
    *,
    source: str | None,
    record: str | None = None,
    one_line: bool = False,
    bom: bool = True,
) -> str:
    """UTF-8 text (a leading BOM is dropped unless ``bom`` is false); undecodable bytes
    are an :class:`InputError` naming the line and column (only the column for
    ``one_line``, a JSON Lines record whose line is the ``record``)."""
    skipped = len(UTF8_BOM) if bom and data.startswith(UTF8_BOM) else 0
    try:
        return data[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_column(exc.object, exc.start)
        where = f"column {column}" if one_line else f"line {line}, column {column}"
        raise InputError(
            f"not valid UTF-8 text (byte {exc.start + skipped}: {exc.reason}) at {where}",
            source=source,
            record=record,
        ) from None


def read_text_file(path: Path, *, what: str = "file") -> str:
    """Read UTF-8 text (a BOM is tolerated) from a regular file.

    Raises:
        InputFileNotFoundError: nothing is there.
        InputError: not a regular file, unreadable, or not UTF-8 (line and column).
    """
    return decode_text(read_bytes_file(path, what=what), source=str(path))


def json_files(folder: Path, *, expected: str) -> list[Path]:
    """The ``.json`` files of a folder, sorted by name; an empty folder is an error
    (``expected`` says what it should hold, such as "one <id>.json file per document").
    A ``.json`` entry that is not a regular file (a folder, a named pipe) is an error.
    """
    check_folder(folder)
    # Dot files are skipped: macOS leaves ``._name.json`` resource forks next to real
    # files on shared volumes, and they are binary. Sorted for a stable order.
    try:
        entries = sorted(
            entry
            for entry in folder.iterdir()
            if entry.suffix.lower() == ".json" and not entry.name.startswith(".")
        )
    except OSError as exc:
        raise InputError(f"cannot list folder: {exc.strerror or exc}", source=str(folder)) from None
    files = []
    for entry in entries:
        try:
            mode = entry.stat().st_mode
        except OSError as exc:
            raise InputError(
                f"cannot read {entry.name}: {exc.strerror or exc}", source=str(folder)
            ) from None
        if not stat.S_ISREG(mode):
            raise InputError(
                f"{entry.name} is {_kind(mode)}, not a file", source=str(folder), expected=expected
            )
        files.append(entry)
    if not files:
        raise InputError("folder has no .json files", source=str(folder), expected=expected)
    return files
