"""A Markdown derivative of a PDF, made locally: one ``## Page N`` section a page.

pymupdf4llm (layout-aware Markdown with tables and headings) is used when it is
installed; otherwise pymupdf's plain page text. The derivative supplements the PDF,
never replaces it: it carries ``authority="generated"`` and names the PDF's id and
SHA-256.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.core.artifacts import INLINE_SCHEME, ReferenceArtifact
from docevals_mlflow.core.fingerprints import sha256_bytes
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.sources import file_name

# MuPDF must not run on several threads at once, even on different documents.
_MUPDF_LOCK = threading.Lock()


@dataclass(frozen=True)
class MarkdownText:
    """The Markdown of one document and how it was made."""

    text: str
    converter: str
    pages: int | None = None


def _pymupdf() -> Any:
    import pymupdf  # slow to import: only when a PDF is converted

    return pymupdf


def _pymupdf4llm() -> Any:
    """pymupdf4llm when it is installed (it is optional, never required), else ``None``."""
    if importlib.util.find_spec("pymupdf4llm") is None:
        return None
    import pymupdf4llm  # type: ignore[import-untyped]

    return pymupdf4llm


def _page_texts(data: bytes) -> tuple[list[str], str]:
    pymupdf = _pymupdf()
    layout = _pymupdf4llm()
    with _MUPDF_LOCK:
        try:
            document = pymupdf.open(stream=data, filetype="pdf")
        except Exception as exc:  # pymupdf raises its own types for broken files
            raise ValueError(f"not a readable PDF ({exc})") from None
        try:
            if document.needs_pass:
                raise ValueError("the PDF is password-protected")
            if layout is not None:
                chunks = layout.to_markdown(
                    document, page_chunks=True, use_ocr=False, show_progress=False
                )
                return [str(chunk.get("text", "")) for chunk in chunks], "pymupdf4llm"
            texts = [str(page.get_text("text")) for page in document]
            return texts, "pymupdf"
        finally:
            document.close()


def pdf_to_markdown(data: bytes) -> MarkdownText:
    """The Markdown of a PDF's bytes, page by page.

    Raises:
        ValueError: the bytes are not a readable PDF.
    """
    texts, converter = _page_texts(data)
    sections = [f"## Page {number}\n\n{text.strip()}" for number, text in enumerate(texts, 1)]
    return MarkdownText(text="\n\n".join(sections) + "\n", converter=converter, pages=len(texts))


def markdown_derivative(
    reference: ReferenceArtifact, markdown: MarkdownText, *, source_sha256: str
) -> ReferenceArtifact:
    """A generated text reference holding ``markdown``, naming its source."""
    derivative_id = f"{reference.id}-markdown"
    metadata: dict[str, Any] = {
        "derived_from": reference.id,
        "source_sha256": source_sha256,
        "source_name": file_name(reference),
        "converter": markdown.converter,
    }
    if markdown.pages is not None:
        metadata["pages"] = markdown.pages
    return ReferenceArtifact(
        id=derivative_id,
        path=f"{INLINE_SCHEME}{derivative_id}",
        kind="text",
        authority="generated",
        media_type="text/markdown",
        content=markdown.text,
        metadata=metadata,
    )


def read_document(reference: ReferenceArtifact) -> bytes:
    """The bytes of a document source.

    Raises:
        InputFileNotFoundError: the file is missing (named by id and file name).
    """
    try:
        return Path(reference.path).read_bytes()
    except OSError:
        raise InputFileNotFoundError(
            f"document {reference.id!r}: file {file_name(reference)!r} cannot be read"
        ) from None


def convert_pdf(reference: ReferenceArtifact) -> ReferenceArtifact:
    """The Markdown derivative of a PDF source.

    Raises:
        InputFileNotFoundError: the file is missing.
        InputError: the file is not a readable PDF.
    """
    data = read_document(reference)
    try:
        markdown = pdf_to_markdown(data)
    except ValueError as exc:
        raise InputError(
            f"document {reference.id!r} ({file_name(reference)}) cannot be converted to "
            f"Markdown: {exc}"
        ) from None
    return markdown_derivative(reference, markdown, source_sha256=sha256_bytes(data))
