"""MuPDF (pymupdf), one call at a time in the whole process.

MuPDF must not run on several threads at once, even on different documents, and
both judges (rendering PDF pages for providers) and ground-truth generation (PDF to
Markdown) use it from worker threads: every use goes through :data:`MUPDF_LOCK`.
pymupdf is imported only when a PDF or an unusual image is converted (the import is
slow); it is typed ``Any`` since it has no complete type hints.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

MUPDF_LOCK = threading.Lock()
"""Held around every MuPDF call."""


def pymupdf_module() -> Any:
    """The pymupdf module, imported on first use."""
    import pymupdf

    return pymupdf


@contextmanager
def open_pdf(data: bytes) -> Iterator[Any]:
    """A MuPDF document of a PDF's bytes, with :data:`MUPDF_LOCK` held until it is
    closed on leaving the block.

    Raises:
        ValueError: the bytes are not a readable PDF, or it is password-protected.
    """
    pymupdf = pymupdf_module()
    with MUPDF_LOCK:
        try:
            document = pymupdf.open(stream=data, filetype="pdf")
        except Exception as exc:  # pymupdf raises its own types for broken files
            raise ValueError(f"not a readable PDF ({exc})") from None
        try:
            if document.needs_pass:
                raise ValueError("the PDF is password-protected")
            yield document
        finally:
            document.close()


__all__ = ["MUPDF_LOCK", "open_pdf", "pymupdf_module"]
