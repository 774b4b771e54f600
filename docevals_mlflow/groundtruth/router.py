"""Choosing what to do with a case's sources before ground truth is generated.

The decision is made on the complete set of sources::

    all PDF / OpenDocument documents -> keep the originals (documents route)
    all images                       -> keep the originals + image panel, if given
    document_mode="markdown"         -> add a local Markdown derivative per document
    images mixed with documents,
    or an unsupported kind           -> InputError naming the sources; prepare apart

Text and structured *evidence* may accompany either route: it is kept, and on the
image route it is sent to the panel with the images (generators read it as part of
the task). A set with no image or document is not routed: give text sources to a
:class:`~docevals_mlflow.groundtruth.panel.GroundTruthPanel` directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import PurePath
from typing import Any, Literal

from pydantic import Field

from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.reports import reference_digest
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.groundtruth.markdown import MarkdownText, convert_pdf, markdown_derivative
from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.judges.judge import run_sync

DocumentMode = Literal["preserve", "markdown"]
Route = Literal["documents", "images"]

OPENDOCUMENT_SUFFIXES = frozenset({".odt", ".odf", ".ods", ".odp", ".odg"})
_OPENDOCUMENT_TYPE = "application/vnd.oasis.opendocument."
_SUPPORTING_KINDS = frozenset({"text", "structured"})

DocumentConverter = Callable[[ReferenceArtifact], str]
"""Makes Markdown text from a document source (any kind the router routes)."""


def is_opendocument(reference: ReferenceArtifact) -> bool:
    """Whether a ``file`` source is an OpenDocument file (.odt, .odf, ...)."""
    if reference.kind != "file":
        return False
    suffix = "" if reference.is_inline else PurePath(reference.path).suffix.lower()
    media_type = reference.media_type or ""
    return suffix in OPENDOCUMENT_SUFFIXES or media_type.startswith(_OPENDOCUMENT_TYPE)


class RoutedSources(DocEvalsModel):
    """A case's sources, ready for generation and evaluation."""

    case_id: str
    route: Route
    sources: list[ReferenceArtifact]
    """Every source given, unchanged (the originals are always kept)."""
    derivatives: list[ReferenceArtifact] = Field(default_factory=list)
    """Markdown derivatives of documents (``authority="generated"``), in markdown mode."""
    image_report: GenerationReport | None = None
    """The image panel's generation, when the route is images and a panel was given."""

    @property
    def references(self) -> list[ReferenceArtifact]:
        """The sources followed by the derivatives (add
        ``image_report.provisional_reference`` yourself to evaluate against it)."""
        return [*self.sources, *self.derivatives]


def _role(reference: ReferenceArtifact) -> str:
    if reference.kind == "image":
        return "image"
    if reference.kind == "pdf" or is_opendocument(reference):
        return "document"
    return "supporting" if reference.kind in _SUPPORTING_KINDS else "unsupported"


def _describe(reference: ReferenceArtifact) -> str:
    return f"{reference.id} ({reference.kind}, {reference.media_type or 'unknown type'})"


class GroundTruthRouter:
    """Routes a case's sources: documents are preserved, images go to a panel.

    Args:
        document_converter: ``fn(reference) -> markdown`` used in markdown mode (for
            PDFs instead of the built-in pymupdf conversion, and for OpenDocument
            files, which the built-in one cannot read).
        image_panel: a :class:`~docevals_mlflow.groundtruth.panel.GroundTruthPanel`
            (anything with ``agenerate(case_id, references)``) run on image sources.
        document_mode: ``"preserve"`` (default) keeps documents as they are;
            ``"markdown"`` adds a Markdown derivative of each, made locally, with
            ``authority="generated"``; it never replaces the document.

    Raises:
        ConfigurationError: an unknown ``document_mode``, or a converter given
            without markdown mode (where it would never be used).
    """

    def __init__(
        self,
        document_converter: DocumentConverter | None = None,
        image_panel: Any = None,
        *,
        document_mode: DocumentMode = "preserve",
    ) -> None:
        if document_mode not in ("preserve", "markdown"):
            raise ConfigurationError(
                f"document_mode must be 'preserve' or 'markdown', got {document_mode!r}",
                path="document_mode",
            )
        if document_converter is not None and not callable(document_converter):
            raise ConfigurationError(
                "document_converter must be a function fn(reference) -> markdown text",
                path="document_converter",
            )
        if document_converter is not None and document_mode != "markdown":
            raise ConfigurationError(
                "document_converter is only used with document_mode='markdown'",
                path="document_converter",
            )
        if image_panel is not None and not hasattr(image_panel, "agenerate"):
            raise ConfigurationError(
                "image_panel must be a GroundTruthPanel (or have agenerate(case_id, references))",
                path="image_panel",
            )
        self.document_converter = document_converter
        self.image_panel = image_panel
        self.document_mode: DocumentMode = document_mode

    def route(self, references: Sequence[ReferenceArtifact], *, case_id: str = "") -> Route:
        """The route for a set of sources.

        Raises:
            InputError: no sources, a source that is not evidence, an unsupported kind,
                images mixed with documents, or no image or document at all.
        """
        if not references:
            raise InputError("no sources to route", record=case_id or None)
        not_evidence = [ref for ref in references if ref.authority != "evidence"]
        if not_evidence:
            raise InputError(
                "the router prepares evidence only; not evidence: "
                + ", ".join(f"{ref.id} ({ref.authority})" for ref in not_evidence),
                record=case_id or None,
                expected='references with authority="evidence"',
            )
        roles = [(_role(ref), ref) for ref in references]
        images = [ref for role, ref in roles if role == "image"]
        documents = [ref for role, ref in roles if role == "document"]
        unsupported = [ref for role, ref in roles if role == "unsupported"]
        if unsupported:
            raise InputError(
                "unsupported sources: "
                + ", ".join(_describe(ref) for ref in unsupported)
                + "; prepare them separately",
                record=case_id or None,
                expected="images, PDFs or OpenDocument files (with optional text evidence)",
            )
        if images and documents:
            raise InputError(
                "images ("
                + ", ".join(ref.id for ref in images)
                + ") mixed with documents ("
                + ", ".join(ref.id for ref in documents)
                + "); prepare them separately",
                record=case_id or None,
            )
        if images:
            return "images"
        if documents:
            return "documents"
        raise InputError(
            "no image or document to route (only text or structured sources: "
            + ", ".join(ref.id for ref in references)
            + "); give text sources to a GroundTruthPanel directly",
            record=case_id or None,
        )

    async def aprepare(
        self, case_id: str, references: Sequence[ReferenceArtifact]
    ) -> RoutedSources:
        """Route the sources, add derivatives and run the image panel as configured.

        Raises:
            InputError: see :meth:`route`; or a document cannot be converted.
            InputFileNotFoundError: a document to convert is missing.
        """
        references = list(references)
        route = self.route(references, case_id=case_id)
        derivatives: list[ReferenceArtifact] = []
        report: GenerationReport | None = None
        if route == "documents" and self.document_mode == "markdown":
            derivatives = await asyncio.to_thread(self._derivatives, references)
        elif route == "images" and self.image_panel is not None:
            report = await self.image_panel.agenerate(case_id, references)
        return RoutedSources(
            case_id=case_id,
            route=route,
            sources=references,
            derivatives=derivatives,
            image_report=report,
        )

    def prepare(self, case_id: str, references: Sequence[ReferenceArtifact]) -> RoutedSources:
        """Synchronous :meth:`aprepare`."""
        return run_sync(self.aprepare(case_id, references))

    def _derivatives(self, references: Sequence[ReferenceArtifact]) -> list[ReferenceArtifact]:
        taken = {reference.id for reference in references}
        derivatives: list[ReferenceArtifact] = []
        for reference in references:
            if _role(reference) != "document":
                continue
            derivative = self._convert(reference)
            if derivative.id in taken:
                raise InputError(
                    f"the Markdown derivative of {reference.id!r} would be named "
                    f"{derivative.id!r}, which another source already uses"
                )
            taken.add(derivative.id)
            derivatives.append(derivative)
        return derivatives

    def _convert(self, reference: ReferenceArtifact) -> ReferenceArtifact:
        if self.document_converter is None:
            if reference.kind != "pdf":
                raise InputError(
                    f"document {_describe(reference)}: the built-in Markdown conversion "
                    "reads PDFs only; pass document_converter= for OpenDocument files"
                )
            return convert_pdf(reference)
        text = self.document_converter(reference)
        if not isinstance(text, str):
            raise InputError(
                f"document_converter returned {type(text).__name__} for {reference.id!r}",
                expected="Markdown text",
            )
        digest = reference_digest(reference)
        if digest is None:
            raise InputError(f"document {reference.id!r}: its file cannot be read")
        return markdown_derivative(
            reference, MarkdownText(text=text, converter="custom"), source_sha256=digest
        )
