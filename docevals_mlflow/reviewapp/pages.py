"""Page images of a review's source document, rendered with pymupdf and cached.

A rendered page is kept in memory (a small LRU) and on disk under the review
folder's cache directory, keyed by the document's SHA-256, the page and the zoom,
so a page seen once appears at once afterwards, also after a restart. Highlights are
rectangles in PDF points (the client scales them by the zoom): a bounding box when
the data gives one, else where pymupdf's ``search_for`` finds the value or the
evidence text on the page.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.core.atomic import atomic_write_bytes
from docevals_mlflow.core.pdf import MUPDF_LOCK, pymupdf_module
from docevals_mlflow.errors import InputError

ZOOMS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)
"""Zoom levels offered; a request for another is refused (the cache stays bounded)."""
MEMORY_PAGES = 64
_FILETYPES = {
    ".pdf": "pdf",
    ".png": "png",
    ".jpg": "jpeg",
    ".jpeg": "jpeg",
    ".tif": "tiff",
    ".tiff": "tiff",
}
SHOWN_SUFFIXES = frozenset(_FILETYPES)
"""Source documents the viewer shows as pages."""
MAX_SEARCH_TEXT = 200
"""Longer evidence is cut before searching (search_for is slow on long needles)."""


@dataclass(frozen=True)
class Box:
    """A highlight: page (0-based) and a rectangle in PDF points."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    found_by: str
    """``value`` or ``evidence`` (what ``search_for`` found)."""


@dataclass(frozen=True)
class SourceDocument:
    """A source file's bytes, type and digest (read once, kept by :class:`PageCache`)."""

    path: Path
    data: bytes
    sha256: str
    filetype: str

    @classmethod
    def read(cls, path: Path) -> SourceDocument:
        filetype = _FILETYPES.get(path.suffix.lower())
        if filetype is None:
            raise InputError(
                "cannot show this kind of source document",
                source=path.name,
                expected=f"one of {', '.join(sorted(_FILETYPES))}",
            )
        data = path.read_bytes()
        return cls(path, data, hashlib.sha256(data).hexdigest(), filetype)


@contextmanager
def _opened(source: SourceDocument) -> Iterator[Any]:
    pymupdf = pymupdf_module()
    with MUPDF_LOCK:
        try:
            document = pymupdf.open(stream=source.data, filetype=source.filetype)
        except Exception as exc:  # pymupdf raises its own types for broken files
            raise InputError(f"not a readable document ({exc})", source=source.path.name) from None
        try:
            if document.needs_pass:
                raise InputError("the document is password-protected", source=source.path.name)
            yield document
        finally:
            document.close()


class PageCache:
    """Rendered pages (PNG bytes), page counts and highlights, in memory and on disk."""

    def __init__(self, cache_dir: Path, *, memory_pages: int = MEMORY_PAGES) -> None:
        self._dir = cache_dir / "pages"
        self._memory: OrderedDict[tuple[str, int, float], bytes] = OrderedDict()
        self._limit = memory_pages
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._found: dict[tuple[str, tuple[tuple[str, str], ...]], list[Box]] = {}

    def page_count(self, source: SourceDocument) -> int:
        if source.sha256 not in self._counts:
            with _opened(source) as document:
                self._counts[source.sha256] = document.page_count
        return self._counts[source.sha256]

    def png(self, source: SourceDocument, page: int, zoom: float) -> bytes:
        """The page as PNG: from memory, else from disk, else rendered (then kept)."""
        if zoom not in ZOOMS:
            raise InputError(f"zoom {zoom:g} is not offered", expected=f"one of {ZOOMS}")
        count = self.page_count(source)
        if not 0 <= page < count:
            raise InputError(f"no page {page + 1}", source=source.path.name, expected=f"1..{count}")
        key = (source.sha256, page, zoom)
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
        file = self._dir / f"{source.sha256[:32]}-p{page}-z{int(zoom * 100)}.png"
        try:
            data = file.read_bytes()
        except OSError:
            data = self._render(source, page, zoom)
            # A read-only folder still gets its pages, only not kept on disk.
            with contextlib.suppress(OSError):
                atomic_write_bytes(file, data, durable=False)
        with self._lock:
            self._memory[key] = data
            while len(self._memory) > self._limit:
                self._memory.popitem(last=False)
        return data

    def _render(self, source: SourceDocument, page: int, zoom: float) -> bytes:
        pymupdf = pymupdf_module()
        with _opened(source) as document:
            pixmap = document[page].get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
            return bytes(pixmap.tobytes("png"))

    def page_size(self, source: SourceDocument, page: int) -> tuple[float, float]:
        with _opened(source) as document:
            rect = document[page].rect
            return float(rect.width), float(rect.height)

    def find(self, source: SourceDocument, texts: Iterable[tuple[str, str]]) -> list[Box]:
        """Where each ``(kind, text)`` appears, page by page (first kind that is found wins)."""
        wanted = [(kind, text.strip()[:MAX_SEARCH_TEXT]) for kind, text in texts if text.strip()]
        if not wanted or source.filetype != "pdf":
            return []
        key = (source.sha256, tuple(wanted))
        if key not in self._found:
            self._found[key] = self._search(source, wanted)
        return self._found[key]

    def _search(self, source: SourceDocument, wanted: list[tuple[str, str]]) -> list[Box]:
        boxes: list[Box] = []
        with _opened(source) as document:
            for kind, text in wanted:
                for number in range(document.page_count):
                    for rect in document[number].search_for(text):
                        boxes.append(Box(number, rect.x0, rect.y0, rect.x1, rect.y1, kind))
                if boxes:
                    break
        return boxes
