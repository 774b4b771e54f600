"""Bundle folders on disk: reading one back (regular files and folders only),
marking it logged, and keeping it where the user can find it.

A kept bundle is never deleted or replaced before it has been logged (``logged.json``
marks one that has). This module does not import mlflow.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import time
import uuid
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.errors import InputError, InputFileNotFoundError, OutputError
from docevals_mlflow.tracking.bundle import ARTIFACTS, MANIFEST, RunBundle

LOGGED = "logged.json"
"""Written into a bundle folder once it has been logged: only then may it be replaced."""
_MAX_KEPT = 1000


def read_bundle(directory: str | os.PathLike[str]) -> tuple[RunBundle, Path]:
    """The manifest and the artifacts folder of a bundle written by :class:`BundleWriter`.

    Raises:
        InputError: the bundle holds something other than regular files and folders
            (a symbolic link, a FIFO, a device), or an input names a records table
            that is not one of its files.
    """
    root = Path(directory)
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise InputFileNotFoundError("not a docevals run bundle (no run.json)", source=str(root))
    files = bundle_files(root)
    try:
        bundle = RunBundle.model_validate(load_json_file(manifest))
    except InputError as exc:
        raise exc.located(source=str(manifest)) from None
    for dataset in bundle.inputs:
        records = PurePosixPath(dataset.records)
        if (
            records.is_absolute()
            or ".." in records.parts
            or (PurePosixPath(ARTIFACTS, records) not in files)
        ):
            raise InputError(
                f"input {dataset.name!r} names records {dataset.records!r}, "
                "which is not a file of the bundle",
                source=str(manifest),
                expected=f"a path inside {ARTIFACTS}/",
            )
    return bundle, root / ARTIFACTS


def _entry_kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def bundle_files(root: Path) -> set[PurePosixPath]:
    """Every file of a bundle (relative to ``root``), after checking that it holds only
    regular files and folders.

    A symbolic link (to anywhere, inside the bundle or out), FIFO, device or socket is
    an input error naming the entry: uploading one would send a file from outside the
    bundle, or block on a pipe. Nothing is followed, so nothing outside is read.
    """
    files: set[PurePosixPath] = set()
    pending = [PurePosixPath()]
    while pending:
        relative = pending.pop()
        try:
            entries = list(os.scandir(root / relative))
        except OSError as exc:
            raise InputError(
                f"cannot read bundle folder {relative.as_posix() or '.'}: {exc.strerror or exc}",
                source=str(root),
            ) from None
        for entry in entries:
            path = relative / entry.name
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                pending.append(path)
            elif stat.S_ISREG(mode):
                files.add(path)
            else:
                raise InputError(
                    f"bundle entry {path.as_posix()} is {_entry_kind(mode)}; nothing was logged",
                    source=str(root),
                    expected="a bundle of regular files and folders only",
                )
    return files


def is_logged(folder: Path) -> bool:
    """Whether ``folder`` is a bundle that has been logged (it holds ``logged.json``)."""
    try:
        own = os.lstat(folder)
        marker = os.lstat(folder / LOGGED)
    except OSError:
        return False
    return stat.S_ISDIR(own.st_mode) and stat.S_ISREG(marker.st_mode)


def mark_logged(folder: Path, record: Mapping[str, Any]) -> None:
    """Record in a bundle folder that it has been logged (``record``: where to).

    Best effort: a read-only bundle is still logged, it is just never replaced.
    """
    text = json.dumps({**record, "logged_at": int(time.time())}, indent=1, sort_keys=True)
    with contextlib.suppress(OutputError):
        atomic_write_text(folder / LOGGED, text + "\n")


def keep_bundle(directory: Path, destination: Path) -> Path:
    """Move a bundle from a temporary folder to where the user can find it; returns
    where it went.

    ``destination`` is used when it is free or holds a bundle that has been logged
    already; otherwise the bundle goes beside it, to ``<destination>-2``, ``-3`` ...:
    a bundle that has not been logged is never deleted or replaced.
    """
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot keep the run bundle: {exc.strerror or exc}", source=str(destination)
        ) from exc
    for number in range(1, _MAX_KEPT + 1):
        candidate = (
            destination if number == 1 else destination.with_name(f"{destination.name}-{number}")
        )
        if _claim(candidate):
            _move_into(directory, candidate)
            return candidate
    raise OutputError(
        f"cannot keep the run bundle: {_MAX_KEPT} bundles are already kept here",
        source=str(destination),
        expected="fewer un-logged bundles (log them with docevals log)",
    )


def _claim(candidate: Path) -> bool:
    # mkdir is atomic: of two processes keeping a bundle at once, one gets the folder.
    try:
        candidate.mkdir()
        return True
    except FileExistsError:
        pass
    except OSError as exc:
        raise OutputError(
            f"cannot keep the run bundle: {exc.strerror or exc}", source=str(candidate)
        ) from exc
    if not is_logged(candidate):
        return False
    # Its run is in MLflow already, so its place may be reused. Renamed away first, so
    # that a half-deleted folder is never mistaken for a bundle.
    retired = candidate.with_name(f".{candidate.name}.logged-{uuid.uuid4().hex[:8]}")
    try:
        candidate.rename(retired)
    except OSError:
        return False
    shutil.rmtree(retired, ignore_errors=True)
    try:
        candidate.mkdir()
    except OSError:
        return False
    return True


def _move_into(directory: Path, destination: Path) -> None:
    # The manifest last: a bundle without run.json is never taken for a whole one.
    try:
        names = sorted(os.listdir(directory), key=lambda name: name == MANIFEST)
        for name in names:
            shutil.move(str(directory / name), str(destination / name))
    except OSError as exc:
        raise OutputError(
            f"cannot keep the run bundle: {exc.strerror or exc}", source=str(destination)
        ) from exc
