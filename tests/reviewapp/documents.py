"""Review folders for the app's tests: generated review files beside small PDFs made
with pymupdf (the PDF holds the values, so highlights can be found on the page)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pymupdf

from docevals_mlflow.groundtruth.models import (
    Candidate,
    ConsensusRow,
    Disagreement,
    GeneratedClaim,
    GenerationReport,
    ProviderGeneration,
    SourceSummary,
)
from docevals_mlflow.groundtruth.review import write_ground_truth_review


def make_pdf(path: Path, lines: list[str], pages: int = 1) -> Path:
    """A PDF with ``lines`` on its first page and numbered filler pages after it."""
    document = pymupdf.open()
    for number in range(pages):
        page = document.new_page()
        texts = lines if number == 0 else [f"Page {number + 1} of {pages}", "filler text"]
        for row, text in enumerate(texts):
            page.insert_text((72, 90 + 24 * row), text, fontsize=12)
    document.save(path)
    document.close()
    return path


def make_review(
    folder: Path,
    name: str,
    *,
    currency: str = "EUR",
    amounts: tuple[str, str] = ("12.50", "12.05"),
    pages: int = 1,
    pdf: bool = True,
) -> Path:
    """``<name>.review.json`` beside ``<name>.pdf``: one agreed claim ($.currency), one
    conflict ($.amount) and one field only one model gave ($.account_name)."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"{name}.pdf"
    make_pdf(
        source,
        [f"Statement {name}", f"Currency: {currency}", f"Amount due: {amounts[0]}", "ACME Ltd"],
        pages,
    )
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    if not pdf:
        source.unlink()
    report = GenerationReport(
        case_id=name,
        expected_fields=["$.currency", "$.amount", "$.account_name"],
        sources=[
            SourceSummary(
                id=name, kind="pdf", authority="evidence", name=source.name, sha256=digest
            )
        ],
        providers=[
            ProviderGeneration(
                provider="openai",
                group="openai",
                claims=[
                    GeneratedClaim(
                        path="$.currency",
                        expected_value=currency,
                        evidence=f"Currency: {currency}",
                        confidence=0.97,
                    ),
                    GeneratedClaim(path="$.amount", expected_value=amounts[0], confidence=0.6),
                    GeneratedClaim(path="$.account_name", expected_value="ACME Ltd"),
                ],
            ),
            ProviderGeneration(
                provider="claude",
                group="anthropic",
                claims=[
                    GeneratedClaim(path="$.currency", expected_value=currency, confidence=0.9),
                    GeneratedClaim(path="$.amount", expected_value=amounts[1], confidence=0.4),
                ],
            ),
        ],
        consensus=[
            ConsensusRow(
                path="$.currency",
                expected_value=currency,
                agreement=1.0,
                providers=["claude", "openai"],
                evidence=[f"Currency: {currency}"],
            )
        ],
        disagreements=[
            Disagreement(
                path="$.amount",
                reason="conflict",
                candidates=[
                    Candidate(value=amounts[0], providers=["openai"], votes=1),
                    Candidate(value=amounts[1], providers=["claude"], votes=1),
                ],
                agreement=0.5,
            ),
            Disagreement(
                path="$.account_name",
                reason="omitted_by_some",
                candidates=[Candidate(value="ACME Ltd", providers=["openai"], votes=1)],
                omitted_by=["claude"],
                agreement=0.5,
            ),
        ],
        overall_agreement=0.5,
    )
    return write_ground_truth_review(report, folder / f"{name}.review.json")
