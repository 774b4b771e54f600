"""What a folder holds, to show that a refused command created, changed or removed
nothing: every entry's relative path with its bytes (files), its target (symlinks) or
``None`` (folders)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

Tree = dict[str, bytes | str | None]


def tree(root: Path) -> Tree:
    """Every entry under ``root`` (hidden ones too, so temporary files show up)."""
    found: Tree = {}
    for folder, names, files in os.walk(root):
        base = Path(folder)
        for name in [*names, *files]:
            path = base / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[key] = f"-> {os.readlink(path)}"
            elif path.is_dir():
                found[key] = None
            else:
                try:
                    found[key] = path.read_bytes()
                except PermissionError:  # a file the test locked on purpose
                    found[key] = "unreadable"
    return found


Entry = tuple[str, int, int, bytes | str | None]
"""An entry's kind, size, modification time (ns) and content: a file's bytes, a
symlink's target, ``None`` for anything else (a folder, a named pipe, a device)."""


def snapshot(root: Path) -> dict[str, Entry]:
    """Every entry under ``root`` and ``root`` itself, by relative path, with its kind,
    size, mtime and content; nothing but regular files is opened (a named pipe would
    block), and files this process may not read show as ``"unreadable"``."""
    found: dict[str, Entry] = {}
    for folder, names, files in os.walk(root):
        base = Path(folder)
        if base == root:
            found["."] = _entry(base)
        for name in [*names, *files]:
            path = base / name
            found[path.relative_to(root).as_posix()] = _entry(path)
    return found


def _entry(path: Path) -> Entry:
    status = path.lstat()
    content: bytes | str | None = None
    if stat.S_ISLNK(status.st_mode):
        kind, content = "symlink", os.readlink(path)
    elif stat.S_ISDIR(status.st_mode):
        kind = "folder"
    elif stat.S_ISREG(status.st_mode):
        kind = "file"
        try:
            content = path.read_bytes()
        except PermissionError:
            content = "unreadable"
    else:
        kind = "special"
    return kind, status.st_size, status.st_mtime_ns, content
