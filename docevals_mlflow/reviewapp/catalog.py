"""The documents of the served folder, loaded once and reloaded only when a file changed.

A document is reloaded when its review file or any file in its layers folder
changed (size or modification time), so the queue of a large folder costs a few
``stat`` calls per request, and another person's answers (another process, another
machine on a shared disk) still show at the next page load.
"""

from __future__ import annotations

import gc
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from docevals_mlflow.errors import DocEvalsError
from docevals_mlflow.reviewapp.folder import ReviewFolder
from docevals_mlflow.reviewapp.model import DocumentView
from docevals_mlflow.reviewapp.store import document_view, load_document

Stamp = tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class Broken:
    """A document that could not be loaded, and why (shown in the queue and its page)."""

    id: str
    message: str


def _stamp(review_path: Path) -> Stamp:
    entries: list[tuple[str, int, int]] = []
    layers = review_path.with_name(review_path.name.removesuffix(".json") + ".layers")
    for path in (review_path, *sorted(_files(layers))):
        try:
            status = path.stat()
        except OSError:
            continue
        entries.append((path.name, status.st_size, status.st_mtime_ns))
    return tuple(entries)


def _files(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as listing:
            return [Path(entry.path) for entry in listing if entry.name.endswith(".json")]
    except OSError:
        return []


class Catalog:
    """Loaded documents by id, each with the stamp it was loaded at."""

    def __init__(self, folder: ReviewFolder, *, required_reviewers: int = 2) -> None:
        self.folder = folder
        self.required_reviewers = required_reviewers
        self._loaded: dict[str, tuple[Stamp, DocumentView | Broken]] = {}
        self._lock = threading.Lock()

    def get(self, document_id: str, known: frozenset[str] | None = None) -> DocumentView | Broken:
        """The document (reloaded if changed), or why it cannot be shown.

        Raises:
            PathRefused: the id is not a review file of the folder.
        """
        stamp = _stamp(self.folder.review_path(document_id, known))
        with self._lock:
            cached = self._loaded.get(document_id)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        return self._load(document_id, stamp)

    def _load(self, document_id: str, stamp: Stamp) -> DocumentView | Broken:
        loaded: DocumentView | Broken
        try:
            loaded = load_document(
                self.folder,
                document_id,
                required_reviewers=self.required_reviewers,
                known=frozenset((document_id,)),  # checked by the caller
            )
        except DocEvalsError as exc:
            loaded = Broken(document_id, str(exc))
        with self._lock:
            self._loaded[document_id] = (stamp, loaded)
        return loaded

    def all(self) -> list[DocumentView | Broken]:
        """Every document of the folder; the changed ones are read together by
        :func:`~docevals_mlflow.groundtruth.review_layers.load_many` (the cyclic
        garbage collector paused meanwhile)."""
        listed = self.folder.review_files()
        known = frozenset(listed)
        paths = {document_id: self.folder.review_path(document_id, known) for document_id in listed}
        stamps = {document_id: _stamp(path) for document_id, path in paths.items()}
        with self._lock:
            cached = {document_id: self._loaded.get(document_id) for document_id in listed}
        changed = [
            document_id
            for document_id, entry in cached.items()
            if entry is None or entry[0] != stamps[document_id]
        ]
        if len(changed) > 1:
            cached.update(self._load_changed(changed, paths, stamps))
        found: list[DocumentView | Broken] = []
        for document_id in listed:
            entry = cached[document_id]
            if entry is not None and entry[0] == stamps[document_id]:
                found.append(entry[1])
            else:  # one changed file, or a batch with a bad file: each alone, named
                found.append(self._load(document_id, stamps[document_id]))
        return found

    def _load_changed(
        self, changed: list[str], paths: dict[str, Path], stamps: dict[str, Stamp]
    ) -> dict[str, tuple[Stamp, DocumentView | Broken]]:
        from docevals_mlflow.groundtruth.review_layers import load_many

        paused = gc.isenabled()
        gc.disable()  # as load_many does: many objects kept alive, no cycles among them
        try:
            loaded = load_many([paths[document_id] for document_id in changed])
            views: dict[str, tuple[Stamp, DocumentView | Broken]] = {
                document_id: (
                    stamps[document_id],
                    document_view(
                        self.folder, document_id, layers, required_reviewers=self.required_reviewers
                    ),
                )
                for document_id, layers in zip(changed, loaded, strict=True)
            }
        except DocEvalsError:
            return {}  # one bad file: each is then loaded alone and the bad one named
        finally:
            if paused:
                gc.enable()
        with self._lock:
            self._loaded.update(views)
        return views
