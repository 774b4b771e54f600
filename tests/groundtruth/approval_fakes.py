"""Generation reports, review files, keys and approved cases for the review, approval
and dataset tests.

Reports are built directly (no panel), so these tests do not depend on generation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docevals_mlflow.groundtruth.approval import sign_record
from docevals_mlflow.groundtruth.models import (
    Candidate,
    ConsensusRow,
    Disagreement,
    GenerationReport,
    ProviderGeneration,
    SourceSummary,
)
from docevals_mlflow.groundtruth.records import ApprovalRecord, ApprovedGroundTruth, content_digest
from docevals_mlflow.groundtruth.signing import SigningKey

KEY = SigningKey.generate()
"""The approvers' key of :func:`approved` cases."""


def generation_report(case_id: str = "statement-001") -> GenerationReport:
    """Two agreed fields and three disputed ones (conflict, one-sided, nobody)."""
    return GenerationReport(
        case_id=case_id,
        extraction_instruction="Extract currency, amount, account name and IBAN.",
        expected_fields=["$.currency", "$.amount", "$.account_name", "$.iban", "$.items[0].sku"],
        sources=[
            SourceSummary(id="page-001", kind="image", authority="evidence", name="page-001.png")
        ],
        providers=[
            ProviderGeneration(provider="openai", model="gpt", group="openai"),
            ProviderGeneration(provider="claude", model="sonnet", group="anthropic"),
        ],
        consensus=[
            ConsensusRow(
                path="$.currency",
                expected_value="EUR",
                agreement=1.0,
                providers=["claude", "openai"],
                evidence=["top right: EUR"],
                reference_ids=["page-001"],
            ),
            ConsensusRow(
                path="$.items[0].sku",
                expected_value="A-1",
                agreement=1.0,
                providers=["claude", "openai"],
            ),
        ],
        disagreements=[
            Disagreement(
                path="$.amount",
                reason="conflict",
                candidates=[
                    Candidate(value="12.50", providers=["openai"], votes=1),
                    Candidate(value="12.05", providers=["claude"], votes=1),
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
            Disagreement(path="$.iban", reason="omitted_by_all", omitted_by=["claude", "openai"]),
        ],
        overall_agreement=0.5,
    )


DECISIONS: dict[str, Any] = {"$.amount": "12.50", "$.account_name": "ACME Ltd"}
"""Decisions that resolve :func:`generation_report` (with ``$.iban`` omitted)."""

APPROVED_ROWS = [
    {"path": "$.account_name", "expected": "ACME Ltd"},
    {"path": "$.amount", "expected": "12.50"},
    {"path": "$.currency", "expected": "EUR"},
    {"path": "$.items[0].sku", "expected": "A-1"},
]
"""The content those decisions approve, in canonical order."""


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def approved(
    case_id: str, rows: list[dict[str, Any]], by: str = "ann", key: SigningKey | None = KEY
) -> ApprovedGroundTruth:
    """An approved case of ``rows``, signed with ``key`` (``None``: unsigned)."""
    record = ApprovalRecord(
        case_id=case_id,
        approved_by=by,
        approved_at="2026-01-31T09:30:00Z",
        content_sha256=content_digest(rows),
    )
    return ApprovedGroundTruth(
        case_id=case_id, rows=rows, record=sign_record(record, key) if key else record
    )
