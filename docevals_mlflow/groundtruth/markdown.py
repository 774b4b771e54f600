"""A Markdown derivative of a PDF, made locally: one ``## Page N`` section a page.

pymupdf4llm (layout-aware Markdown with tables and headings) is used when it is
installed; otherwise pymupdf's plain page text. The derivative supplements the PDF,
never replaces it: it carries ``authority="generated"`` and names the PDF's id and
SHA-256.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.core.artifacts import INLINE_SCHEME, ReferenceArtifact
from docevals_mlflow.core.fingerprints import sha256_bytes
from docevals_mlflow.core.pdf import open_pdf
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.sources import file_name


@dataclass(frozen=True)
class MarkdownText:
    """The Markdown of one document and how it was made."""

    text: str
    converter: str
    pages: int | None = None


def _pymupdf4llm() -> Any:
    """pymupdf4llm when it is installed (it is optional, never required), else ``None``."""
    if importlib.util.find_spec("pymupdf4llm") is None:
        return None
    import pymupdf4llm  # type: ignore[import-untyped]

    return pymupdf4llm


def _page_texts(data: bytes) -> tuple[list[str], str]:
    layout = _pymupdf4llm()
    with open_pdf(data) as document:
        if layout is not None:
            chunks = layout.to_markdown(
                document, page_chunks=True, use_ocr=False, show_progress=False
            )
            return [str(chunk.get("text", "")) for chunk in chunks], "pymupdf4llm"
        return [str(page.get_text("text")) for page in document], "pymupdf"


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
