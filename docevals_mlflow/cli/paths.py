"""Inputs are never outputs: the paths a command reads and writes, checked against
each other (and for being writable) before any work is done."""

from __future__ import annotations

import argparse
import errno
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from docevals_mlflow.cli.run_logging import bundle_folder, tracking_wanted
from docevals_mlflow.errors import InputError

OutputKind = Literal["file", "folder", "owned"]
NAME_MAX = 255
"""Bytes in one file name, where the file system does not say (most allow 255)."""
TEMPORARY_NAME_EXTRA = 16
"""Bytes an atomic write adds to a name for its temporary sibling (``.NAME.XXXXXXXX.tmp``)."""
_NOTHING_WRITTEN = "nothing was written"


@dataclass(frozen=True)
class Input:
    """A path the command reads; ``role`` names it in messages (``--expected``).

    An input that is a folder is read whole (every file in it may be an input), so no
    output may be written inside it.
    """

    role: str
    path: Path


@dataclass(frozen=True)
class Output:
    """A path the command writes; ``role`` names it in messages (``--markdown``).

    ``kind``:

    * ``file``: one file (written atomically);
    * ``folder``: a folder the command writes named files into (each listed as a
      ``file`` output too, so collisions between them are found);
    * ``owned``: a folder wholly the command's (checkpoints, caches, per-pipeline
      reports, a run bundle kept for ``docevals log``), whose files are named by the
      command: no input and no other output may lie inside it.
    """

    role: str
    path: Path
    kind: OutputKind = "file"

    @property
    def is_folder(self) -> bool:
        """Whether the output is a folder (of any kind)."""
        return self.kind != "file"

    @property
    def is_owned(self) -> bool:
        """Whether nothing else may lie inside it."""
        return self.kind == "owned"


@dataclass(frozen=True)
class _Place:
    """Where a path points: its resolved form and, when it exists, its file identity."""

    resolved: Path
    identity: tuple[int, int] | None
    is_dir: bool

    def same(self, other: _Place) -> bool:
        # Hard links share an inode; symlinks resolve to one path. A path that does
        # not exist yet can only be the same as another by name.
        if self.identity is not None and other.identity is not None:
            return self.identity == other.identity
        return self.resolved == other.resolved


def _shown(role: str, path: Path) -> str:
    return f"{role} {path}"


def _stat(path: Path, role: str) -> os.stat_result | None:
    """``os.stat`` of ``path``, ``None`` when it does not exist.

    Raises:
        InputError: it cannot be looked at (permission, a name too long, a loop).
    """
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except ValueError:  # a NUL character, which no path may hold
        raise InputError(
            f"{_shown(role, path)}: the path holds a NUL character", expected="a file path"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise InputError(
                f"{_shown(role, path)}: a name in the path is too long",
                expected=f"file and folder names of at most {NAME_MAX} bytes",
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise InputError(
                f"{_shown(role, path)}: this user may not look inside a folder on the way "
                f"({exc.strerror})",
                expected="a path this user may read and write",
            ) from None
        raise InputError(
            f"{_shown(role, path)}: cannot be looked at ({exc.strerror or exc})",
            expected="a path this user may read and write",
        ) from None


def _place(path: Path, role: str, status: os.stat_result | None) -> _Place:
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise InputError(
            f"{_shown(role, path)}: the path cannot be resolved ({exc})",
            expected="a path without symlink loops",
        ) from None
    identity = None if status is None else (status.st_dev, status.st_ino)
    is_dir = status is not None and os.path.isdir(path)
    return _Place(resolved, identity, is_dir)


def _accessible(path: Path, mode: int) -> bool:
    effective = os.access in os.supports_effective_ids
    return os.access(path, mode, effective_ids=effective)


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):  # not every platform or file system says
        return NAME_MAX


def _check_output(output: Output) -> _Place:
    """The output's place, once it is known to be writable as the kind it is.

    Raises:
        InputError: a folder where a file is due (or the reverse), a name too long, a
            parent that is a file, or a folder this user may not read or write.
    """
    path, role = output.path, output.role
    status = _stat(path, role)
    place = _place(path, role, status)
    if status is not None:
        if output.is_folder and not place.is_dir:
            raise InputError(f"{_shown(role, path)} is a file", expected="a folder")
        if not output.is_folder and place.is_dir:
            raise InputError(f"{_shown(role, path)} is a folder", expected="a file path")
        if output.is_folder and not _accessible(path, os.R_OK | os.W_OK | os.X_OK):
            raise InputError(
                f"{_shown(role, path)}: this user may not read and write the folder",
                expected="a folder this user may read and write",
            )
    # The nearest folder that exists must take new entries.
    ancestor = path if status is not None and output.is_folder else path.parent
    missing: list[str] = [] if ancestor is path else [path.name]
    while True:
        found = _stat(ancestor, role)
        if found is not None:
            break
        missing.append(ancestor.name)
        if ancestor.parent == ancestor:
            break
        ancestor = ancestor.parent
    if found is not None and not os.path.isdir(ancestor):
        raise InputError(
            f"{_shown(role, path)}: {ancestor} is a file, so nothing can be created in it",
            expected="a path whose parent is a folder",
        )
    if found is not None and not _accessible(ancestor, os.W_OK | os.X_OK):
        raise InputError(
            f"{_shown(role, path)}: this user may not write in {ancestor}",
            expected="a folder this user may write",
        )
    limit = _name_max(ancestor) if found is not None else NAME_MAX
    for position, name in enumerate(missing):
        # The file itself (the first missing name) also needs room for the temporary
        # sibling an atomic write goes through.
        extra = TEMPORARY_NAME_EXTRA if position == 0 and not output.is_folder else 0
        if len(os.fsencode(name)) + extra > limit:
            raise InputError(
                f"{_shown(role, path)}: the name {_abridged(name)} is "
                f"{len(os.fsencode(name))} bytes long",
                expected=f"names of at most {limit - extra} bytes",
            )
    return place


def _abridged(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def check_paths(inputs: Iterable[Input | None], outputs: Iterable[Output | None]) -> None:
    """Refuse, before any work, outputs that would destroy an input or each other.

    Every output is resolved and compared with every input and every other output:
    the same file (through symlinks and hard links too), an output inside an input
    folder (read whole), an input or another output inside an owned output folder.
    Each output must also be writable as what it is: a file path that is a folder, a
    folder path that is a file, a parent that is a file, a folder this user may not
    write and a name too long are refused. Inputs that do not exist are left to the
    command, whose own message says so. ``None`` entries are skipped (options not
    given).

    Lookups go through indexes (file identity, resolved path, the folders along a
    path), so a batch of thousands of cases costs no more than its files.

    Raises:
        InputError: naming both paths and their roles.
    """
    placed_outputs = [(output, _check_output(output)) for output in outputs if output is not None]
    placed_inputs: list[tuple[Input, _Place]] = []
    for given in inputs:
        status = _input_status(given)
        if given is not None and status is not None:
            placed_inputs.append((given, _place(given.path, given.role, status)))
    owned = {place.resolved: item for item, place in reversed(placed_outputs) if item.is_owned}
    _refuse_outputs_over_inputs(placed_inputs, placed_outputs)
    _refuse_inputs_in_owned(placed_inputs, owned)
    _refuse_clashing_outputs(placed_outputs, owned)


def _refuse_outputs_over_inputs(
    placed_inputs: list[tuple[Input, _Place]], placed_outputs: list[tuple[Output, _Place]]
) -> None:
    """An output that is an input, or lies inside an input folder."""
    input_by_identity = {place.identity: item for item, place in reversed(placed_inputs)}
    input_by_path = {place.resolved: item for item, place in reversed(placed_inputs)}
    input_folders = {
        place.resolved: item for item, place in reversed(placed_inputs) if place.is_dir
    }
    for output, place in placed_outputs:
        what = _shown(output.role, output.path)
        source = (
            input_by_identity.get(place.identity) if place.identity is not None else None
        ) or input_by_path.get(place.resolved)
        if source is not None:
            kind = "folder" if os.path.isdir(source.path) else "file"
            raise InputError(
                f"{what} is the same {kind} as {_shown(source.role, source.path)}; writing "
                f"it would destroy the input, so {_NOTHING_WRITTEN}",
                expected="outputs apart from the inputs",
            )
        folder = _first_in(place.resolved.parents, input_folders)
        if folder is not None:
            raise InputError(
                f"{what} is inside {_shown(folder.role, folder.path)}, a folder this command "
                f"reads; {_NOTHING_WRITTEN}",
                expected="outputs outside the input folders",
            )


def _refuse_inputs_in_owned(
    placed_inputs: list[tuple[Input, _Place]], owned: dict[Path, Output]
) -> None:
    """An input inside (or equal to) a folder the command fills with its own files."""
    for source, place in placed_inputs:
        holder = _first_in([place.resolved, *place.resolved.parents], owned)
        if holder is not None:
            raise InputError(
                f"{_shown(source.role, source.path)} is inside "
                f"{_shown(holder.role, holder.path)}, which this command fills with files of "
                f"its own; {_NOTHING_WRITTEN}",
                expected=f"{holder.role} apart from the inputs",
            )


def _refuse_clashing_outputs(
    placed_outputs: list[tuple[Output, _Place]], owned: dict[Path, Output]
) -> None:
    """Two outputs at one path, or an output inside another's owned folder."""
    seen_identity: dict[tuple[int, int], Output] = {}
    seen_path: dict[Path, Output] = {}
    for output, place in placed_outputs:
        earlier = (
            seen_identity.get(place.identity) if place.identity is not None else None
        ) or seen_path.get(place.resolved)
        if earlier is not None:
            raise InputError(
                f"{_shown(earlier.role, earlier.path)} and {_shown(output.role, output.path)} "
                f"are the same path; one would overwrite the other, so {_NOTHING_WRITTEN}",
                expected="a distinct path for every output",
            )
        if place.identity is not None:
            seen_identity[place.identity] = output
        seen_path[place.resolved] = output
        holder = _first_in(place.resolved.parents, owned)
        if holder is not None:
            raise InputError(
                f"{_shown(output.role, output.path)} is inside "
                f"{_shown(holder.role, holder.path)}, which this command fills with files of "
                f"its own; {_NOTHING_WRITTEN}",
                expected="a distinct path for every output",
            )


def _first_in(paths: Iterable[Path], index: dict[Path, Any]) -> Any:
    """The entry of ``index`` for the first of ``paths`` it holds, else ``None``."""
    for path in paths:
        found = index.get(path)
        if found is not None:
            return found
    return None


def _input_status(given: Input | None) -> os.stat_result | None:
    # An input that is missing or cannot be looked at is the command's to report, in
    # its own words; it cannot be the same file as an output either way.
    if given is None:
        return None
    try:
        return os.stat(given.path)
    except (OSError, ValueError):
        return None


def existing_path(text: str) -> Path | None:
    """``text`` as a path when it names something that exists, else ``None`` (for
    arguments that may be a path or a name, such as a run reference)."""
    if not text:
        return None
    try:
        path = Path(text)
        return path if path.exists() else None
    except (OSError, ValueError):  # a name too long or holding NUL is no file
        return None


def report_outputs(args: argparse.Namespace, *, anchor: Path | None = None) -> list[Output | None]:
    """``--output``, ``--markdown``, ``--dashboard`` and, when the command logs to MLflow, the run
    bundle kept next to ``anchor`` (default ``--output``) if the store cannot be
    reached."""
    output: Path = args.output
    markdown: Path | None = getattr(args, "markdown", None)
    dashboard: Path | None = getattr(args, "dashboard", None)
    return [
        Output("--output", output),
        Output("--markdown", markdown) if markdown is not None else None,
        Output("--dashboard", dashboard) if dashboard is not None else None,
        Output("the run bundle", bundle_folder(anchor or output), "owned")
        if tracking_wanted(args)
        else None,
    ]


def inputs_of(role: str, paths: Sequence[Path] | None) -> list[Input]:
    """One :class:`Input` per path of a repeatable option."""
    return [Input(role, path) for path in paths or ()]
