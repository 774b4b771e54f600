"""What ``docevals generate`` prints: a few lines per case, one for the batch, and a
warning per generator that never answered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docevals_mlflow.cli.generate_batch import CaseResult
from docevals_mlflow.cli.generate_cases import Outputs
from docevals_mlflow.cli.judging import cost_text
from docevals_mlflow.core.formatting import score_text
from docevals_mlflow.judges.usage import Usage, total_usage


def usage_text(usage: Usage) -> str:
    """``N requests, X input / Y output tokens[, $Z]``."""
    return (
        f"{usage.requests} request(s), {usage.input_tokens:,} input / "
        f"{usage.output_tokens:,} output tokens"
        + cost_text(usage.cost_usd, partial=usage.cost_is_partial)
    )


def describe_case(result: CaseResult, outputs: Outputs) -> str:
    """Fields agreed / disputed / omitted, how each provider did, usage, next step."""
    final = result.final
    omitted = len(final.omitted_by_all)
    disputed = len(final.disagreements) - omitted
    first = result.stages[0]
    providers = ", ".join(
        provider.provider
        + (" ok" if provider.usable else f" {provider.status}")
        + (" (cached)" if provider.cached else "")
        for provider in first.providers
    )
    lines = [
        f"{final.case_id}: {len(final.consensus)} agreed, {disputed} disputed, {omitted} "
        f"omitted by all (agreement {score_text(final.overall_agreement)}; {result.case.route}, "
        f"{len(result.case.references)} source(s))",
        f"  providers: {providers}",
    ]
    for provider in first.providers:
        if not provider.usable and provider.error:
            lines.append(f"    {provider.provider}: {_short(provider.error)}")
    for stage in result.stages[1:]:
        parent = result.stages[result.stages.index(stage) - 1]
        settled = len(parent.disagreements) - len(stage.disagreements)
        lines.append(f"  {stage.stage}: {settled} of {len(parent.disagreements)} settled")
    lines.append(f"  usage: {usage_text(result.usage)}")
    lines.append(f"  wrote {outputs.generation} and {outputs.review}")
    if final.requires_human_review:
        lines.append(f"  next: docevals review {outputs.review}")
    else:
        lines.append(
            f"  next: nothing disputed; docevals approve {outputs.review} --approved-by NAME "
            f"--output APPROVED.json"
        )
    return "\n".join(lines)


def describe_batch(results: Sequence[CaseResult]) -> str:
    """One line for the whole batch."""
    review = sum(result.final.requires_human_review for result in results)
    usage = total_usage(result.usage for result in results)
    return (
        f"generated {len(results)} case(s): {review} need review, "
        f"{len(results) - review} fully agreed; {usage_text(usage)}"
    )


def provider_warnings(results: Sequence[CaseResult]) -> list[str]:
    """A warning per generator that gave no usable answer in any case (a wrong key or
    model name looks like this)."""
    answers: dict[str, list[Any]] = {}
    for result in results:
        for provider in result.stages[0].providers:
            answers.setdefault(provider.provider, []).append(provider)
    lines = []
    for label, given in sorted(answers.items()):
        if not any(answer.usable for answer in given):
            last = given[-1]
            reason = f": {_short(last.error)}" if last.error else ""
            lines.append(
                f"docevals: warning: generator {label!r} gave no usable answer in any case "
                f"({last.status}{reason})"
            )
    return lines


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
