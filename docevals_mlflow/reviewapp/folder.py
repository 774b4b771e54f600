"""The review folder the app serves: which review files it holds, and every path a
request names, confined to it.

A request names a document by its review file's path relative to the folder
(``invoices/a.review.json``). Anything else is refused before the file system is
touched for it: an absolute path, a ``..`` segment, a backslash or NUL, a name that
is not a review file, and a path whose real location (symlinks followed) leaves the
folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from docevals_mlflow.errors import InputError, InputFileNotFoundError

REVIEW_SUFFIX = ".review.json"
"""A review file's name ends so (``X.review.json``; its layers are ``X.review.layers/``)."""
CACHE_DIR = ".docevals-cache"
"""Rendered pages live here, inside the served folder."""
_SKIPPED_DIRS = (CACHE_DIR, ".git")
MAX_REQUEST_PATH = 1024


class PathRefused(InputError):
    """A path in a request that would leave the review folder (or is not a review file)."""


@dataclass(frozen=True)
class ReviewFolder:
    """The served folder (resolved) and, when one file was given, that file alone."""

    root: Path
    single: str | None = None
    """The relative path of the one review file served, or ``None`` for the whole folder."""

    @classmethod
    def open(cls, target: str | os.PathLike[str]) -> ReviewFolder:
        """The folder of a review file (serving that file only), or a folder."""
        path = Path(target)
        if not path.exists():
            raise InputFileNotFoundError(
                "no such review file or folder",
                source=str(path),
                expected="X.review.json or a folder",
            )
        if path.is_dir():
            return cls(path.resolve())
        if not path.name.endswith(REVIEW_SUFFIX) and path.suffix != ".json":
            raise InputError("not a review file", source=str(path), expected="X.review.json")
        resolved = path.resolve()
        return cls(resolved.parent, resolved.name)

    def review_files(self) -> list[str]:
        """Relative paths (POSIX spelling) of the review files served, sorted."""
        if self.single is not None:
            return [self.single]
        found: list[str] = []
        for directory, subdirs, files in os.walk(self.root, followlinks=False):
            subdirs[:] = sorted(
                name
                for name in subdirs
                if name not in _SKIPPED_DIRS and not name.endswith(".review.layers")
            )
            for name in sorted(files):
                if name.endswith(REVIEW_SUFFIX):
                    full = Path(directory) / name
                    # os.walk does not enter linked folders: only the file may link out.
                    if not full.is_symlink() or _inside(full.resolve(), self.root):
                        found.append(full.relative_to(self.root).as_posix())
        return sorted(found)

    def review_path(self, relative: str, known: frozenset[str] | None = None) -> Path:
        """The review file a request names, confined to the folder (``known``: the
        listing of :meth:`review_files` when the caller has it already).

        Raises:
            PathRefused: absolute, ``..``, not a served review file, or a symlink out.
        """
        checked = confined(self.root, relative)
        listed = known if known is not None else frozenset(self.review_files())
        if checked.relative_to(self.root).as_posix() not in listed:
            raise PathRefused(
                "not a review file of the served folder", source=relative, expected="X.review.json"
            )
        return self.root / PurePosixPath(relative)

    def source_path(self, review_relative: str, name: str) -> Path:
        """A review's source document, by file name, beside the review file (confined)."""
        if PurePosixPath(name).name != name or name in ("", ".", ".."):
            raise PathRefused("a source name must be a plain file name", source=name)
        parent = PurePosixPath(review_relative).parent
        relative = (parent / name).as_posix()
        return confined(self.root, relative)

    @property
    def cache_dir(self) -> Path:
        return self.root / CACHE_DIR


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def confined(root: Path, relative: str) -> Path:
    """``root / relative`` after refusing anything that could leave ``root``.

    Raises:
        PathRefused: empty, too long, absolute, a drive, ``..``, backslash or NUL, or a
            path whose resolved location (symlinks followed) is outside ``root``.
    """
    if not relative or len(relative) > MAX_REQUEST_PATH:
        raise PathRefused("empty or over-long path", source=relative[:80])
    if "\\" in relative or "\x00" in relative or ":" in relative.split("/", 1)[0]:
        raise PathRefused("backslashes, NUL and drive letters are refused", source=relative)
    pure = PurePosixPath(relative)
    if pure.is_absolute() or relative.startswith("~"):
        raise PathRefused("absolute paths are refused", source=relative)
    if any(part in ("..", "") for part in relative.split("/")):
        raise PathRefused("'..' and empty segments are refused", source=relative)
    candidate = root.joinpath(*pure.parts)
    if not _inside(candidate.resolve(), root):
        raise PathRefused("leads out of the review folder (symlink)", source=relative)
    return candidate
