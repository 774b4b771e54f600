"""The seed's ``visual_evals.conversion``: local PDF-to-Markdown conversion with
``pymupdf4llm`` (optional; no model, no key, nothing sent anywhere)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docevals_mlflow.compat.visual_evals._documents import (
    GroundTruthGenerationRequest,
    MarkdownConversionOutput,
)
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.judges.request import JudgeRequest

__all__ = ["MarkdownFunction", "PyMuPDF4LLMConverter"]

MarkdownFunction = Callable[..., str]


class PyMuPDF4LLMConverter:
    """A converter for the seed's ``DocumentMarkdownConverter``: it runs
    ``pymupdf4llm.to_markdown`` locally on the one PDF of a request.

    ``markdown_function`` replaces ``pymupdf4llm.to_markdown`` (same keyword
    arguments). The result has no confidence, so it is flagged for review.
    """

    engine = "pymupdf4llm"

    def __init__(
        self,
        *,
        use_ocr: bool = True,
        force_ocr: bool = False,
        ocr_language: str = "eng",
        table_strategy: str = "lines_strict",
        page_separators: bool = True,
        show_progress: bool = False,
        markdown_function: MarkdownFunction | None = None,
    ) -> None:
        self.use_ocr = use_ocr
        self.force_ocr = force_ocr
        self.ocr_language = ocr_language
        self.table_strategy = table_strategy
        self.page_separators = page_separators
        self.show_progress = show_progress
        self.markdown_function = markdown_function

    @staticmethod
    def _load_markdown_function() -> MarkdownFunction:
        try:
            import pymupdf4llm  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            raise ConfigurationError(
                "local PDF conversion needs the optional pymupdf4llm package: "
                "pip install pymupdf4llm"
            ) from None
        function: MarkdownFunction = pymupdf4llm.to_markdown
        return function

    def generate(self, request: GroundTruthGenerationRequest | JudgeRequest) -> Any:
        """Convert the request's one PDF.

        Raises:
            InputError: not exactly one reference, not a PDF, or no Markdown came out.
        """
        if len(request.references) != 1:
            raise InputError(
                f"PyMuPDF4LLMConverter converts exactly one PDF per request, got "
                f"{len(request.references)}"
            )
        reference = request.references[0]
        if reference.kind != "pdf":
            raise InputError(
                f"PyMuPDF4LLMConverter only converts PDFs; reference {reference.id!r} is "
                f"{reference.kind!r}",
                record=reference.id,
            )
        convert = self.markdown_function or self._load_markdown_function()
        markdown = convert(
            reference.path,
            use_ocr=self.use_ocr,
            force_ocr=self.force_ocr,
            ocr_language=self.ocr_language,
            table_strategy=self.table_strategy,
            page_separators=self.page_separators,
            show_progress=self.show_progress,
        )
        if not isinstance(markdown, str) or not markdown.strip():
            raise InputError("pymupdf4llm returned no Markdown", record=reference.id)
        return MarkdownConversionOutput(
            summary="Converted locally with PyMuPDF4LLM; no model or API was used.",
            markdown=markdown,
            confidence=None,
        )
