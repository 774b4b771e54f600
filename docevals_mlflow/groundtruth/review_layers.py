"""Several reviewers on one review file: each person's answers in their own layer.

Beside ``X.review.json`` lives the folder ``X.review.layers/`` with one file per
person, ``<person>.json`` (:class:`~docevals_mlflow.groundtruth.layer_records.LayerFile`).
Nothing a person typed is ever overwritten: :func:`record_answer` appends an entry
under a file lock and writes the file atomically, so two browser tabs or processes of
one person never lose an answer, and different people never share a file.

:func:`load_layers` reads and validates every layer of a review file; a layer written
for another version of the review file (its ``review_sha256`` differs) is *stale*: it
is reported in :attr:`ReviewLayers.stale` and never silently counted. The combined
view (:class:`~docevals_mlflow.groundtruth.layer_view.ReviewLayers`) gives each
person's answers, the fields with the panel's evidence, the disagreements, the final
values, and a review file with decisions that :func:`approve_review` accepts.
"""

from __future__ import annotations

import datetime as _dt
import gc
import json
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.datafiles import UTF8_BOM, parse_json, read_bytes_file
from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.layer_agreement import review_agreement
from docevals_mlflow.groundtruth.layer_lock import layer_lock
from docevals_mlflow.groundtruth.layer_records import (
    Action,
    LayerEntry,
    LayerFile,
    Role,
    StaleLayer,
    check_person,
    make_entry,
    utc_now_text,
)
from docevals_mlflow.groundtruth.layer_view import NO_PROPOSAL, ReviewLayers, Targets
from docevals_mlflow.groundtruth.layer_view import current_digest as current_digest
from docevals_mlflow.groundtruth.review import load_review

__all__ = [
    "ReviewLayers",
    "StaleLayer",
    "review_agreement",
    "layer_folder",
    "layer_path",
    "load_layers",
    "load_many",
    "record_answer",
    "review_files",
]

_ACTIONS = ("accept", "set", "absent", "unreadable")
_ENTRY = re.compile(r"\bentries\[(\d+)\]")
_UNKNOWN = object()
_PATTERN_MESSAGE = re.compile(r"String should match pattern '.*?' \(got ('.*?')\)")


def layer_folder(review_path: str | os.PathLike[str]) -> Path:
    """The folder of a review file's layers: ``X.review.json`` → ``X.review.layers``."""
    path = Path(review_path)
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    return path.with_name(stem + ".layers")


def layer_path(review_path: str | os.PathLike[str], person: str) -> Path:
    """The layer file of ``person`` for a review file.

    Raises:
        InputError: ``person`` is not a valid person id.
    """
    try:
        check_person(person)
    except ValueError as exc:
        raise InputError(str(exc), source=str(review_path)) from None
    return layer_folder(review_path) / f"{person}.json"


def record_answer(
    review_path: str | os.PathLike[str],
    person: str,
    path: str,
    action: Action,
    value: Any = None,
    *,
    role: Role = "reviewer",
    reason: str | None = None,
    now: _dt.datetime | None = None,
) -> LayerEntry:
    """Append ``person``'s answer for field ``path`` to their layer; returns the entry.

    The layer is locked (``<layer>.lock``), re-read and validated, the entry appended
    and the file written atomically. An earlier signature of the layer is dropped (it
    no longer covers the content; sign again).

    Raises:
        InputError: an invalid person id, role or action; a path that is neither a
            claim nor a review item of the review; ``accept`` where the panel has no
            majority value; ``set`` without a value or a value with another action;
            an adjudicator answer without a reason; the person's layer holding
            another role, being stale (written for another version of the review
            file), malformed or tampered. Nothing is written then.
    """
    review_path = Path(review_path)
    file = layer_path(review_path, person)
    source = str(review_path)
    if role not in ("reviewer", "adjudicator"):
        raise InputError(f"role {role!r}", source=source, expected="reviewer or adjudicator")
    if action not in _ACTIONS:
        raise InputError(f"action {action!r}", source=source, expected=", ".join(_ACTIONS))
    review = load_review(review_path)
    targets = Targets(review)
    key = targets.key(path, source=source)
    _check_answer(targets, key, action, value, role, reason, source)
    with layer_lock(file):
        digest = current_digest(review)
        layer = _read_existing(file, targets, digest)
        if layer is None:
            layer = LayerFile(review_sha256=digest, person=person, role=role)
        elif layer.role != role:
            raise InputError(
                f"{person}'s layer holds {layer.role} answers; one person's layer has one role",
                source=str(file),
                expected=f"role {layer.role!r}, or another person id for the {role}",
            )
        before = _current(layer.entries, key)
        entry = make_entry(
            path=key,
            action=action,
            value=_plain(value) if action == "set" else None,
            previous=targets.effective(before) if before else targets.proposed(key),
            previous_action=before.action if before else None,
            at=_time(now, source),
            reason=reason,
        )
        updated = layer.model_copy(update={"entries": [*layer.entries, entry], "signature": None})
        atomic_write_text(file, updated.model_dump_json(indent=1, exclude_none=True) + "\n")
    return entry


def _check_answer(
    targets: Targets,
    key: str,
    action: str,
    value: Any,
    role: str,
    reason: str | None,
    source: str,
) -> None:
    if action == "set" and is_empty(value):
        raise InputError(
            f"{key}: 'set' needs a value", source=source, expected="a value; or 'absent'"
        )
    if action != "set" and value is not None:
        raise InputError(f"{key}: action {action!r} takes no value (only 'set' does)")
    if action == "accept" and not targets.has_proposal(key):
        raise InputError(
            f"{key}: nothing to accept: the panel has no majority value for this field",
            source=source,
            expected="'set' with a value, 'absent' or 'unreadable'",
        )
    if role == "adjudicator" and not (reason or "").strip():
        raise InputError(f"{key}: an adjudicator's answer needs a reason", source=source)


def _plain(value: Any) -> Any:
    """``value`` as plain JSON data (refused when it is not JSON data)."""
    return json.loads(canonical_json(value))


def _time(now: _dt.datetime | None, source: str) -> str:
    try:
        return utc_now_text(now)
    except ValueError as exc:
        raise InputError(str(exc), source=source, expected="an aware datetime") from None


def _current(entries: list[LayerEntry], key: str) -> LayerEntry | None:
    for entry in reversed(entries):
        if entry.path == key:
            return entry
    return None


def _read_existing(file: Path, targets: Targets, digest: str) -> LayerFile | None:
    if not file.exists() and not file.is_symlink():
        return None
    layer = read_layer(file)
    if layer.review_sha256 != digest:
        raise InputError(
            "this layer answers another version of the review file (it changed since); "
            "its answers are kept as they are",
            source=str(file),
            expected="a new person id for answers to the current review file",
        )
    check_entries(layer, targets, str(file))
    return layer


def read_layer(file: Path) -> LayerFile:
    """Read and validate one layer file (its structure, not its paths).

    Raises:
        InputError: naming the file, the entry (``entries[3] ($.total)``) and what is wrong.
    """
    source = str(file)
    data = read_bytes_file(file, what="review layer").removeprefix(UTF8_BOM)
    if not data.strip():
        raise InputError("the file is empty", source=source, expected="a review layer (JSON)")
    raw = parse_json(data, source=source)
    if not isinstance(raw, dict):
        raise InputError(
            f"a review layer holds a JSON object, not {type(raw).__name__}", source=source
        )
    try:
        layer = LayerFile.model_validate(raw)
    except InputError as exc:
        raise _locate(exc, source, raw) from None
    if file.name != f"{layer.person}.json":
        raise InputError(
            f"the layer of {layer.person!r} is filed as {file.name!r}",
            source=source,
            expected=f"{layer.person}.json (a layer lives in its person's file)",
        )
    return layer


def _locate(error: InputError, source: str, raw: dict[str, Any]) -> InputError:
    text = error.message
    match = _ENTRY.search(text)
    entries = raw.get("entries")
    if match and isinstance(entries, list) and int(match.group(1)) < len(entries):
        entry = entries[int(match.group(1))]
        field = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(field, str) and field not in text:
            text = f"{text[: match.end()]} ({field}){text[match.end() :]}"
    # The time is checked by a pattern (fast); its message would show the regex.
    text = _PATTERN_MESSAGE.sub(r"\1 is not a UTC time such as 2026-01-31T09:30:00Z", text)
    located = InputError(text, source=source, expected=error.expected)
    located.path = error.path
    return located


def check_entries(layer: LayerFile, targets: Targets, source: str) -> None:
    """Check a current layer's entries against its review file: known paths, answers
    the review allows, and each entry's ``previous`` matching the answer before it
    (an edited or removed entry breaks that chain).

    Raises:
        InputError: ``<file>: entries[3] ($.total): <what is wrong>``.
    """
    last: dict[str, LayerEntry] = {}
    adjudicator = layer.role == "adjudicator"
    proposals = targets.proposals
    for index, entry in enumerate(layer.entries):
        path = entry.path
        proposal = proposals.get(path, _UNKNOWN)
        if proposal is _UNKNOWN:
            raise InputError(
                f"entries[{index}] ({path}): the review file has no such field path",
                source=source,
                expected="a claim's or review item's path in canonical spelling ($.a.b)",
            )
        if entry.action == "accept" and proposal is NO_PROPOSAL:
            raise InputError(
                f"entries[{index}] ({path}): 'accept' but the panel has no majority value",
                source=source,
            )
        if adjudicator and not entry.reason:
            raise InputError(
                f"entries[{index}] ({path}): an adjudicator's entry needs a reason",
                source=source,
            )
        before = last.get(path)
        if before is None:
            expected = None if proposal is NO_PROPOSAL else proposal
            expected_action = None
        else:
            expected, expected_action = targets.effective(before), before.action
        if entry.previous_action != expected_action or not _same(entry.previous, expected):
            raise InputError(
                f"entries[{index}] ({path}): 'previous' does not match the answer before it "
                "(an entry was edited, removed or reordered)",
                source=source,
                expected=f"previous {canonical_json(expected)}, as the "
                + (f"{expected_action} before it" if expected_action else "proposed value"),
            )
        last[path] = entry


def _same(first: Any, second: Any) -> bool:
    """Equal JSON data (``1`` and ``true`` differ; text compared without encoding it)."""
    kind = type(first)
    if kind is type(second):
        if kind is str or first is None or kind is int or kind is bool:
            return bool(first == second)
        if kind is float and math.isfinite(first) and math.isfinite(second):
            return repr(first) == repr(second)  # canonical_json's spelling (0.0 != -0.0)
    return canonical_json(first) == canonical_json(second)


def load_layers(review_path: str | os.PathLike[str]) -> ReviewLayers:
    """Read a review file and all its layers, validated.

    Raises:
        InputError: the review file or a layer is malformed or tampered (the message
            names the file, the entry and the field path). A stale layer is not an
            error: it is listed in :attr:`ReviewLayers.stale` and left out.
    """
    review_path = Path(review_path)
    review = load_review(review_path)
    targets = Targets(review)
    files = _layer_files(layer_folder(review_path))
    # The digest is what layers are checked against; without layers (a review not
    # begun) it is worked out only if asked for.
    digest = current_digest(review) if files else None
    current: dict[str, LayerFile] = {}
    stale: list[StaleLayer] = []
    for file in files:
        layer = read_layer(file)
        if layer.review_sha256 != digest:
            stale.append(
                StaleLayer(
                    person=layer.person,
                    file=str(file),
                    review_sha256=layer.review_sha256,
                    entries=len(layer.entries),
                )
            )
            continue
        check_entries(layer, targets, str(file))
        current[layer.person] = layer
    return ReviewLayers(review_path, review, digest, targets, current, stale)


def _layer_files(folder: Path) -> list[Path]:
    """The ``*.json`` entries of a layer folder, sorted, hidden ones left out; none
    when there is no such folder or it cannot be listed (as ``Path.glob`` would)."""
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.endswith(".json")]
    except OSError:
        return []
    return [folder / name for name in sorted(names) if not name.startswith(".")]


def load_many(paths: Iterable[str | os.PathLike[str]]) -> list[ReviewLayers]:
    """:func:`load_layers` of each review file, for a folder's worth at once.

    The cyclic garbage collector is paused meanwhile: the load creates hundreds of
    thousands of objects that all stay alive (and form no cycles), and collecting
    would walk them again and again, nearly halving the speed for 1,000 files.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return [load_layers(path) for path in paths]
    finally:
        if paused:
            gc.enable()


def review_files(path: str | os.PathLike[str]) -> list[Path]:
    """A review file, or the ``*.review.json`` files under a folder (sorted).

    Raises:
        InputError: no such file or folder, or a folder without review files.
    """
    target = Path(path)
    if target.is_dir():
        found = sorted(p for p in target.rglob("*.review.json") if not p.name.startswith("."))
        if not found:
            raise InputError("no *.review.json file in this folder", source=str(target))
        return found
    if not target.exists():
        raise InputError("no such file or folder", source=str(target))
    return [target]
