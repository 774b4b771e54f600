"""References as provider attachments, each labelled so a judge can cite it.

Images, PDFs and other files are turned into provider-neutral parts (:class:`TextPart`,
:class:`ImagePart`, :class:`FilePart`); each adapter maps those onto its wire format.
Every attachment is preceded by a label ``Reference <id> (<authority>, <kind>,
<file name>)`` that matches the reference inventory in the task. Text and structured
references are already in the task JSON and are not attached again.

Only file *names* leave the machine, never local paths. PDFs go as files to providers
that read them, or as PNG page images (rendered with pymupdf) to those that do not.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Literal

from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.core.pdf import MUPDF_LOCK, open_pdf, pymupdf_module
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.judges.request import ATTACHED_KINDS

PdfMode = Literal["file", "pages"]
FileMode = Literal["file", "text", "none"]

COMMON_IMAGE_TYPES: frozenset[str] = frozenset(
    {"image/png", "image/jpeg", "image/webp", "image/gif"}
)
"""Image types OpenAI and Anthropic both read; others are converted to PNG."""

DEFAULT_PDF_DPI = 150
DEFAULT_MAX_PDF_PAGES = 20


@dataclass(frozen=True)
class TextPart:
    """Text shown to the model (labels and notes)."""

    text: str


@dataclass(frozen=True)
class _InlinePart:
    """Bytes sent inline as base64, with their media type and file name."""

    media_type: str
    data: bytes
    name: str

    def base64(self) -> str:
        """The bytes as base64 text."""
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """A ``data:`` URL, as OpenAI-style image and file parts expect."""
        return f"data:{self.media_type};base64,{self.base64()}"


@dataclass(frozen=True)
class ImagePart(_InlinePart):
    """An image, sent inline as base64."""


@dataclass(frozen=True)
class FilePart(_InlinePart):
    """A document (PDF or other file), sent inline as base64 with its file name."""

    def text(self) -> str:
        """The bytes decoded as UTF-8 (undecodable bytes replaced)."""
        return self.data.decode("utf-8", errors="replace")


Part = TextPart | ImagePart | FilePart


@dataclass(frozen=True)
class AttachmentPolicy:
    """What a provider accepts and how to send the rest.

    Attributes:
        pdf_mode: ``"file"`` sends PDFs as documents; ``"pages"`` renders them to PNG
            page images.
        file_mode: for ``file`` references: ``"file"`` sends any file as a document,
            ``"text"`` only text files (``text/*``, JSON, CSV), ``"none"`` none (they
            are labelled as not attachable).
        image_media_types: image types sent as they are; others are converted to PNG.
        pdf_dpi: resolution of rendered pages.
        max_pdf_pages: pages rendered per PDF; the label says how many were omitted.
        provider_label: how the provider is named in "not attachable" notes.
    """

    pdf_mode: PdfMode = "file"
    file_mode: FileMode = "file"
    image_media_types: frozenset[str] = COMMON_IMAGE_TYPES
    pdf_dpi: int = DEFAULT_PDF_DPI
    max_pdf_pages: int = DEFAULT_MAX_PDF_PAGES
    provider_label: str = "this provider"

    def __post_init__(self) -> None:
        if self.pdf_dpi < 1:
            raise ValueError("pdf_dpi must be positive")
        if self.max_pdf_pages < 1:
            raise ValueError("max_pdf_pages must be at least 1")

    def describe(self) -> dict[str, Any]:
        """The settings that change what the model sees (for reports and caches)."""
        described: dict[str, Any] = {"pdf_mode": self.pdf_mode, "file_mode": self.file_mode}
        if self.pdf_mode == "pages":
            described["pdf_dpi"] = self.pdf_dpi
            described["max_pdf_pages"] = self.max_pdf_pages
        return described


def reference_file_name(reference: ReferenceArtifact) -> str:
    """The name a reference is shown under: its file name, or its id when inline."""
    return reference.id if reference.is_inline else PurePath(reference.path).name


def reference_label(reference: ReferenceArtifact, note: str | None = None) -> str:
    """``Reference <id> (<authority>, <kind>, <file name>)``, with an optional note."""
    label = (
        f"Reference {reference.id} ({reference.authority}, {reference.kind}, "
        f"{reference_file_name(reference)})"
    )
    return f"{label}: {note}" if note else label


def read_reference_bytes(reference: ReferenceArtifact) -> bytes:
    """The bytes of a reference's file.

    Raises:
        InputFileNotFoundError: the file is missing (named by file name and id).
        InputError: the reference has no file, or the file cannot be read.
    """
    name = reference_file_name(reference)
    if reference.is_inline:
        raise InputError(
            f"reference {reference.id!r} is an inline value, not a {reference.kind} file, "
            "and cannot be attached",
            source=name,
        )
    try:
        return Path(reference.path).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        # The error names the file by its name only: messages end up in judge results
        # and reports, which must not carry local paths either.
        raise InputFileNotFoundError(
            f"reference {reference.id!r}: attachment file {name!r} not found", source=name
        ) from None
    except OSError as exc:
        raise InputError(
            f"reference {reference.id!r}: attachment file {name!r} cannot be read "
            f"({exc.strerror or type(exc).__name__})",
            source=name,
        ) from None


@dataclass(frozen=True)
class RenderedPdf:
    """PNG images of the first pages of a PDF."""

    pages: tuple[bytes, ...]
    total_pages: int

    @property
    def omitted(self) -> int:
        """Pages not rendered because of the page limit."""
        return self.total_pages - len(self.pages)


def render_pdf(
    data: bytes, *, dpi: int = DEFAULT_PDF_DPI, max_pages: int = DEFAULT_MAX_PDF_PAGES
) -> RenderedPdf:
    """Render the first ``max_pages`` pages of a PDF to PNG at ``dpi``.

    Raises:
        ValueError: the bytes are not a readable PDF.
    """
    with open_pdf(data) as document:
        total = document.page_count
        pages = tuple(
            document[number].get_pixmap(dpi=dpi).tobytes("png")
            for number in range(min(total, max_pages))
        )
    return RenderedPdf(pages=pages, total_pages=total)


@functools.lru_cache(maxsize=8)
def _render_file(path: str, mtime_ns: int, size: int, dpi: int, max_pages: int) -> RenderedPdf:
    # A repair attempt re-sends the same request; the modification time and size in
    # the key make an edited file render again.
    del mtime_ns, size
    return render_pdf(Path(path).read_bytes(), dpi=dpi, max_pages=max_pages)


def render_reference_pdf(
    reference: ReferenceArtifact,
    *,
    dpi: int = DEFAULT_PDF_DPI,
    max_pages: int = DEFAULT_MAX_PDF_PAGES,
) -> RenderedPdf:
    """The rendered pages of a PDF reference (cached while the file is unchanged).

    Raises:
        InputFileNotFoundError: the file is missing.
        InputError: the file is not a readable PDF.
    """
    name = reference_file_name(reference)
    try:
        if reference.is_inline:
            raise FileNotFoundError(reference.path)
        stat = Path(reference.path).stat()
        return _render_file(reference.path, stat.st_mtime_ns, stat.st_size, dpi, max_pages)
    except OSError:
        # Reading again raises the error that names this reference and its file.
        read_reference_bytes(reference)
        raise
    except ValueError as exc:
        raise InputError(
            f"reference {reference.id!r}: {name!r} cannot be rendered: {exc}", source=name
        ) from None


def to_png(data: bytes) -> bytes:
    """An image (TIFF, BMP, ...) converted to PNG.

    Raises:
        ValueError: pymupdf cannot read the image.
    """
    pymupdf = pymupdf_module()
    with MUPDF_LOCK:
        try:
            pixmap = pymupdf.Pixmap(data)
        except Exception as exc:  # pymupdf raises its own types for unreadable images
            raise ValueError(f"unreadable image ({exc})") from None
        if pixmap.colorspace is not None and pixmap.colorspace.n > 3:
            # PNG has no CMYK; convert to RGB first.
            pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)
        png: bytes = pixmap.tobytes("png")
    return png


_TEXT_MEDIA_TYPES = frozenset(
    {"application/json", "application/xml", "application/x-yaml", "application/yaml"}
)


def _is_text_media_type(media_type: str) -> bool:
    return media_type.startswith("text/") or media_type in _TEXT_MEDIA_TYPES


def _image_parts(reference: ReferenceArtifact, policy: AttachmentPolicy) -> list[Part]:
    name = reference_file_name(reference)
    data = read_reference_bytes(reference)
    media_type = reference.media_type or "application/octet-stream"
    note = None
    if media_type not in policy.image_media_types:
        try:
            data = to_png(data)
        except ValueError as exc:
            raise InputError(
                f"reference {reference.id!r}: {name!r} cannot be converted to PNG: {exc}",
                source=name,
            ) from None
        note = f"converted from {media_type} to PNG"
        media_type = "image/png"
    return [TextPart(reference_label(reference, note)), ImagePart(media_type, data, name)]


def _pdf_parts(reference: ReferenceArtifact, policy: AttachmentPolicy) -> list[Part]:
    name = reference_file_name(reference)
    if policy.pdf_mode == "file":
        data = read_reference_bytes(reference)
        return [TextPart(reference_label(reference)), FilePart("application/pdf", data, name)]
    rendered = render_reference_pdf(reference, dpi=policy.pdf_dpi, max_pages=policy.max_pdf_pages)
    shown = len(rendered.pages)
    note = (
        f"PDF rendered as {shown} PNG page image{'s' if shown != 1 else ''} "
        f"(pages 1-{shown} of {rendered.total_pages}) at {policy.pdf_dpi} dpi"
    )
    if rendered.omitted:
        note += (
            f"; pages {shown + 1}-{rendered.total_pages} ({rendered.omitted}) omitted: "
            f"page limit {policy.max_pdf_pages}"
        )
    if not rendered.pages:
        note = "PDF has no pages"
    parts: list[Part] = [TextPart(reference_label(reference, note))]
    stem = PurePath(name).stem
    for number, png in enumerate(rendered.pages, start=1):
        parts.append(TextPart(f"Reference {reference.id}, page {number} of {rendered.total_pages}"))
        parts.append(ImagePart("image/png", png, f"{stem}-page-{number}.png"))
    return parts


def _file_parts(reference: ReferenceArtifact, policy: AttachmentPolicy) -> list[Part]:
    name = reference_file_name(reference)
    media_type = reference.media_type or "application/octet-stream"
    if media_type == "application/octet-stream":
        # An unknown type would make the provider reject the whole request.
        note = "not attachable: unknown file type; only its listing in the task is available"
        return [TextPart(reference_label(reference, note))]
    attachable = policy.file_mode == "file" or (
        policy.file_mode == "text" and _is_text_media_type(media_type)
    )
    if not attachable:
        # Said explicitly, so the judge knows the reference exists but was not seen
        # (the seed dropped such files silently).
        note = (
            f"not attachable: {policy.provider_label} does not accept {media_type} files; "
            "only its listing in the task is available"
        )
        return [TextPart(reference_label(reference, note))]
    data = read_reference_bytes(reference)
    return [TextPart(reference_label(reference)), FilePart(media_type, data, name)]


def attachment_parts(
    references: Iterable[ReferenceArtifact], policy: AttachmentPolicy
) -> list[Part]:
    """The labelled parts for every image, PDF and file reference, in order.

    Text and structured references are skipped: their content is in the task JSON.

    Raises:
        InputFileNotFoundError: an attached file is missing.
        InputError: an attached file cannot be read, rendered or converted.
    """
    parts: list[Part] = []
    for reference in references:
        if reference.kind not in ATTACHED_KINDS:
            continue
        if reference.kind == "image":
            parts.extend(_image_parts(reference, policy))
        elif reference.kind == "pdf":
            parts.extend(_pdf_parts(reference, policy))
        else:
            parts.extend(_file_parts(reference, policy))
    return parts
