"""What a folder holds, to show that a refused command created, changed or removed
nothing: every entry's relative path with its bytes (files), its target (symlinks) or
``None`` (folders)."""

from __future__ import annotations

import os
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
