"""Markdown for the seed-shaped ground-truth reports (their ``to_markdown()``), with
the seed's headings so that text searched for in them is where seed code expects it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.reports.markdown import inline_code, table

if TYPE_CHECKING:
    from docevals_mlflow.compat.visual_evals._documents import (
        DocumentMarkdownReport,
        GroundTruthPreparationReport,
    )
    from docevals_mlflow.compat.visual_evals._generation import (
        GroundTruthAdjudicationReport,
        GroundTruthGenerationReport,
    )
    from docevals_mlflow.compat.visual_evals.usage import TokenUsage


def _review(required: bool) -> str:
    return f"Human review required: `{'yes' if required else 'no'}`"


def _usage(records: list[TokenUsage]) -> list[str]:
    if not records:
        return []
    rows = [
        (
            f"{r.provider}:{r.model}",
            r.request_count,
            r.input_tokens,
            r.output_tokens,
            r.total_tokens,
        )
        for r in records
    ]
    return [
        "",
        "## Token usage",
        "",
        *table(["Provider:model", "Requests", "Input", "Output", "Total"], rows),
    ]


def _notes(notes: list[str]) -> list[str]:
    return ["", "## Notes", "", *(f"- {note}" for note in notes)] if notes else []


def generation_markdown(report: GroundTruthGenerationReport) -> str:
    """A panel's consensus and its review queue."""
    rows = report.provisional_reference.content or []
    lines = [
        f"# Generated ground-truth consensus: {report.case_id}",
        "",
        f"Providers: {', '.join(map(inline_code, report.providers))}",
        "",
        f"Overall agreement: `{metric_text(report.overall_agreement)}`",
        "",
        _review(report.requires_human_review),
        "",
        "Reference authority: `generated` (provisional, not accuracy)",
        "",
        "## Agreed provisional claims",
        "",
        *table(["Path", "Expected value"], ((row["path"], row["expected"]) for row in rows)),
        *_usage(report.usage),
    ]
    if report.disagreements:
        lines += ["", "## Human resolution queue"]
        for number, item in enumerate(report.disagreements, start=1):
            lines += [
                "",
                f"### {number}. {inline_code(item.get('path'))}",
                "",
                f"Agreement: `{metric_text(item.get('agreement'))}`; reason: "
                f"`{item.get('disagreement_reason') or item.get('reason')}`",
                "",
            ]
            candidates: dict[str, Any] = item.get("provider_candidates") or {}
            lines += table(
                ["Provider", "Status", "Value", "Reference", "Evidence"],
                (
                    (
                        provider,
                        found.get("status", ""),
                        found.get("expected_value", ""),
                        found.get("reference_id", ""),
                        found.get("evidence", ""),
                    )
                    for provider, found in candidates.items()
                ),
            )
    return "\n".join([*lines, *_notes(report.notes)]) + "\n"


def resolution_markdown(report: GroundTruthAdjudicationReport) -> str:
    """An adjudication's or union's resolved and unresolved fields."""
    lines = [
        f"# Generated ground-truth resolution: {report.case_id}",
        "",
        f"Providers: {', '.join(map(inline_code, report.providers))}",
        "",
        _review(report.requires_human_review),
        "",
        "Reference authority: `generated` (provisional)",
        "",
        f"Resolved paths: `{len(report.resolutions)}`",
        "",
        f"Unresolved paths: `{len(report.unresolved)}`",
    ]
    if report.resolutions:
        lines += ["", "## Resolutions", ""]
        lines += table(
            ["Path", "Decision", "Expected value", "Reason"],
            (
                (item.get("path"), item.get("decision"), item.get("expected"), item.get("reason"))
                for item in report.resolutions
            ),
        )
    if report.unresolved:
        lines += ["", "## Unresolved conflicts", ""]
        lines += table(
            ["Path", "Reason"],
            (
                (item.get("path"), item.get("adjudication_reason") or item.get("reason"))
                for item in report.unresolved
            ),
        )
    return "\n".join([*lines, *_usage(report.usage), *_notes(report.notes)]) + "\n"


def documents_markdown(report: DocumentMarkdownReport) -> str:
    """Markdown derivatives, each in a fenced block."""
    lines = [
        f"# Document-to-Markdown preparation: {report.case_id}",
        "",
        _review(report.requires_human_review),
    ]
    for reference_id, output in report.conversions.items():
        fence = "````" if "```" in output.markdown else "```"
        lines += [
            "",
            f"## Document: {inline_code(reference_id)}",
            "",
            f"Confidence: `{metric_text(output.confidence)}`",
            "",
            f"Summary: {output.summary}",
            "",
            f"{fence}markdown",
            output.markdown,
            fence,
        ]
    return "\n".join([*lines, *_usage(report.usage), *_notes(report.notes)]) + "\n"


def preparation_markdown(report: GroundTruthPreparationReport) -> str:
    """The routing decision, then the nested conversion or generation."""
    lines = [
        f"# Ground-truth preparation: {report.case_id}",
        "",
        f"Strategy: `{report.strategy}`",
        "",
        _review(report.requires_human_review),
        "",
        "Sources: "
        + (", ".join(inline_code(ref.id) for ref in report.source_references) or "none"),
        *_notes(report.notes),
    ]
    nested = report.document_report or report.image_report
    if nested is not None:
        lines += ["", "---", "", nested.to_markdown().rstrip()]
    return "\n".join(lines) + "\n"
