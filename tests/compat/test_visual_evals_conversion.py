"""The seed's local conversion (``visual_evals.visual_evals.PyMuPDF4LLMConverter``)
through the compat module: with an injected function and with pymupdf4llm itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import docevals_mlflow.compat.visual_evals as visual_evals
from docevals_mlflow.errors import InputError


def _pdf(tmp_path: Path, text: str = "Statement total 100") -> Any:
    pymupdf = pytest.importorskip("pymupdf")
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), text)
    path = tmp_path / "statement.pdf"
    document.save(path)
    return visual_evals.artifact_from_path(path, authority="evidence")


def test_an_injected_markdown_function_gets_the_seed_options(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path)
    calls: list[tuple[Any, dict[str, Any]]] = []

    def fake(path: Any, **options: Any) -> str:
        calls.append((path, options))
        return "# Local\n\nConverted text."

    converter = visual_evals.PyMuPDF4LLMConverter(
        use_ocr=False, table_strategy="text", markdown_function=fake
    )
    report = visual_evals.DocumentMarkdownConverter(converter).convert(
        case_id="local", references=[pdf]
    )

    assert report.usage == []
    assert report.conversions[pdf.id].confidence is None
    assert report.requires_human_review is True  # no confidence: a person checks it
    derived = report.provisional_references[0]
    assert derived.metadata["conversion_engine"] == "pymupdf4llm"
    assert derived.authority == "generated"
    ((path, options),) = calls
    assert path == pdf.path
    assert options == {
        "use_ocr": False,
        "force_ocr": False,
        "ocr_language": "eng",
        "table_strategy": "text",
        "page_separators": True,
        "show_progress": False,
    }


def test_pymupdf4llm_converts_a_real_pdf(tmp_path: Path) -> None:
    pytest.importorskip("pymupdf4llm")
    pdf = _pdf(tmp_path, "Invoice INV-7 total 42.50")
    converter = visual_evals.PyMuPDF4LLMConverter(use_ocr=False)
    output = converter.generate(
        visual_evals.GroundTruthGenerationRequest(instructions="", task={}, references=[pdf])
    )
    assert "INV-7" in output.markdown
    assert output.confidence is None


def test_only_one_pdf_per_request(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path)
    note = visual_evals.artifact_from_value("text", authority="evidence", artifact_id="note")
    converter = visual_evals.PyMuPDF4LLMConverter(markdown_function=lambda _path, **_o: "x")
    with pytest.raises(InputError, match="exactly one PDF"):
        converter.generate(
            visual_evals.GroundTruthGenerationRequest(
                instructions="", task={}, references=[pdf, pdf]
            )
        )
    with pytest.raises(InputError, match="only converts PDFs"):
        converter.generate(
            visual_evals.GroundTruthGenerationRequest(instructions="", task={}, references=[note])
        )
    blank = visual_evals.PyMuPDF4LLMConverter(markdown_function=lambda _path, **_o: "  ")
    with pytest.raises(InputError, match="no Markdown"):
        blank.generate(
            visual_evals.GroundTruthGenerationRequest(instructions="", task={}, references=[pdf])
        )
