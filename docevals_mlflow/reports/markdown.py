"""Markdown renderings of case, pipeline and suite reports."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from docevals_mlflow.core.reports import (
    EvaluationReport,
    PipelineEvaluationReport,
    SuiteReport,
)
from docevals_mlflow.core.results import MetricResult

VERDICT_ICONS = {"pass": "✅", "fail": "❌", "uncertain": "⚠️", "not_applicable": "➖"}
MAX_FIELD_ROWS = 50
"""Field rows shown per metric; the JSON report always has all of them."""


def cell(value: Any) -> str:
    """Text safe inside a Markdown table cell."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")
    return text if len(text) <= 120 else text[:117] + "..."


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A Markdown table as lines."""
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines.extend("| " + " | ".join(cell(value) for value in row) + " |" for row in rows)
    return lines


def figure_text(value: float | None) -> str:
    """A figure to four decimals, or ``n/a`` when it is undefined."""
    return "n/a" if value is None else f"{value:.4f}"


def verdict_text(verdict: str) -> str:
    """A verdict with its icon."""
    return f"{VERDICT_ICONS.get(verdict, '')} {verdict}".strip()


def _short(digest: str | None) -> str:
    return f"`{digest[:12]}`" if digest else "n/a"


def _scores_text(result: MetricResult) -> str:
    return ", ".join(
        f"{name}={'n/a' if value is None else f'{value:.4g}'}"
        for name, value in result.scores.items()
    )


def _counts_text(result: MetricResult) -> str:
    return ", ".join(f"{name}={value}" for name, value in result.counts.items())


def _field_rows(result: MetricResult) -> list[dict[str, Any]]:
    details = result.details
    if not isinstance(details, dict) or not isinstance(details.get("fields"), list):
        return []
    return [
        row
        for row in details["fields"]
        if isinstance(row, dict) and row.get("status") not in ("correct", None)
    ]


def _case_sections(report: EvaluationReport, level: int) -> list[str]:
    h = "#" * level
    fp = report.fingerprints
    lines = [
        f"**Verdict:** {verdict_text(report.verdict)} · "
        f"**Failure context:** `{report.failure_context}` · "
        f"**Human review:** {'required' if report.requires_human_review else 'not required'}"
        + (" · *(from checkpoint)*" if report.from_checkpoint else ""),
        "",
    ]
    facts: list[tuple[str, Any]] = [("Operation", f"`{report.operation}`")]
    if fp.operation_spec_id:
        facts.append(("Operation spec", f"{fp.operation_spec_id} v{fp.operation_spec_version}"))
    if fp.evaluation_spec_id:
        facts.append(
            (
                "Evaluation spec",
                f"{fp.evaluation_spec_id} v{fp.evaluation_spec_version} "
                f"({fp.evaluation_spec_status})",
            )
        )
    facts.append(("Producer", report.producer.label if report.producer else "unknown"))
    if report.depends_on:
        facts.append(("Depends on", ", ".join(report.depends_on)))
    if report.upstream_verdicts:
        facts.append(
            (
                "Upstream verdicts",
                ", ".join(
                    f"{name}: {verdict}" for name, verdict in report.upstream_verdicts.items()
                ),
            )
        )
    lines += table(["", ""], facts)
    if report.warnings:
        lines += ["", f"{h}# Warnings", ""]
        lines += [f"- {warning}" for warning in report.warnings]
    lines += ["", f"{h}# Metrics", ""]
    lines += table(
        ["Metric", "Verdict", "Basis", "Scores", "Counts", "Review"],
        (
            (
                result.name,
                verdict_text(result.verdict),
                result.basis,
                _scores_text(result) or "n/a",
                _counts_text(result) or "n/a",
                "yes" if result.requires_human_review else "no",
            )
            for result in report.metric_results
        ),
    )
    for result in report.metric_results:
        notes = list(result.notes)
        if result.error is not None and not notes:
            notes.append(f"error {result.error.type}: {result.error.message}")
        rows = _field_rows(result)
        if not notes and not rows:
            continue
        lines += ["", f"{h}## {result.name}", ""]
        lines += [f"- {note}" for note in notes]
        if rows:
            if notes:
                lines.append("")
            lines += table(
                ["Status", "Outcome", "Path", "Expected", "Predicted", "Reference"],
                (
                    (
                        row.get("status"),
                        row.get("outcome"),
                        row.get("path"),
                        row.get("expected"),
                        row.get("predicted"),
                        row.get("reference_id"),
                    )
                    for row in rows[:MAX_FIELD_ROWS]
                ),
            )
            if len(rows) > MAX_FIELD_ROWS:
                lines.append(f"\n*... and {len(rows) - MAX_FIELD_ROWS} more (see the JSON report)*")
    if report.reference_summary:
        lines += ["", f"{h}# References", ""]
        lines += table(
            ["Id", "Kind", "Authority", "Mode", "Exact-comparable", "SHA-256"],
            (
                (
                    ref.id,
                    ref.kind,
                    ref.authority,
                    ref.comparison_mode,
                    "yes" if ref.exact_comparable else "no",
                    _short(ref.sha256),
                )
                for ref in report.reference_summary
            ),
        )
    lines += ["", f"{h}# Fingerprints", ""]
    digests: list[tuple[str, str]] = [
        ("Action instruction", _short(fp.action_instruction_sha256)),
        ("Evaluation spec", _short(fp.evaluation_spec_sha256)),
        ("Rubric", _short(fp.rubric_sha256)),
        ("Judge instruction", _short(fp.judge_instruction_sha256)),
        ("Effective operation spec", _short(fp.operation_spec_sha256)),
    ]
    digests += [
        (f"Effective judge prompt ({', '.join(names)})", _short(digest))
        for digest, names in _judge_prompts(report).items()
    ]
    lines += table(["What", "SHA-256"], digests)
    return lines


def _judge_prompts(report: EvaluationReport) -> dict[str, list[str]]:
    """The SHA-256 of the prompt each judge or panel metric was actually sent, with
    the metrics that sent it."""
    prompts: dict[str, list[str]] = {}
    for result in report.metric_results:
        details = result.details if isinstance(result.details, dict) else {}
        digest = details.get("instructions_sha256")
        if isinstance(digest, str) and digest:
            prompts.setdefault(digest, []).append(result.name)
    return prompts


def render_case_markdown(report: EvaluationReport) -> str:
    """Markdown for one case report."""
    lines = [
        f"# Evaluation: case `{report.case_id}`, stage `{report.stage_id}`",
        "",
        *_case_sections(report, 1),
        "",
        f"*docevals-mlflow {report.package_version}*",
    ]
    return "\n".join(lines) + "\n"


def render_pipeline_markdown(report: PipelineEvaluationReport) -> str:
    """Markdown for a pipeline report: a stage table, then each stage in detail."""
    lines = [
        f"# Pipeline evaluation: `{report.pipeline_id}`",
        "",
        f"**Combined verdict:** {verdict_text(report.verdict)} · "
        f"**Stages:** {len(report.stage_reports)} · "
        f"**Human review:** {'required' if report.requires_human_review else 'not required'}",
        "",
    ]
    lines += table(
        ["Stage", "Operation", "Verdict", "Failure context", "Failed upstream", "Review"],
        (
            (
                stage.stage_id,
                stage.operation,
                verdict_text(stage.verdict),
                stage.failure_context,
                ", ".join(name for name, v in stage.upstream_verdicts.items() if v == "fail")
                or "none",
                "yes" if stage.requires_human_review else "no",
            )
            for stage in report.stage_reports
        ),
    )
    attributions = _attribution_sentences(report)
    if attributions:
        lines += ["", "## Where it went wrong", ""]
        lines += [f"- {sentence}" for sentence in attributions]
    # Imported here: that module builds its tables with this one's helpers.
    from docevals_mlflow.reports.diagnostics_markdown import counterfactual_section

    reruns = counterfactual_section(report.stage_reports)
    if reruns:
        lines += ["", *reruns]
    if report.checkpoint is not None:
        ckpt = report.checkpoint
        lines += [
            "",
            "## Checkpoints",
            "",
            f"Directory `{ckpt.directory}`: reused {len(ckpt.reused)}, "
            f"computed {len(ckpt.computed)}.",
        ]
        lines += [f"- `{stage}` recomputed: {why}" for stage, why in ckpt.invalidated.items()]
    for stage in report.stage_reports:
        lines += ["", f"## Stage `{stage.stage_id}`", "", *_case_sections(stage, 2)]
    lines += ["", f"*docevals-mlflow {report.package_version}*"]
    return "\n".join(lines) + "\n"


def _attribution_sentences(report: PipelineEvaluationReport) -> list[str]:
    sentences = []
    for stage in report.stage_reports:
        failed_upstream = [name for name, v in stage.upstream_verdicts.items() if v == "fail"]
        context = stage.failure_context
        if context == "current_stage":
            where = "with every upstream stage passing" if stage.upstream_verdicts else "itself"
            sentences.append(f"`{stage.stage_id}` failed {where}: the fault is in this stage.")
        elif context == "upstream_or_combined":
            sentences.append(
                f"`{stage.stage_id}` failed and so did {', '.join(failed_upstream)}: do not "
                "blame this stage alone; rerun it on corrected input to separate the causes."
            )
        elif context == "caused_by_upstream":
            sentences.append(
                f"`{stage.stage_id}` failed and so did {', '.join(failed_upstream)}; rerun on "
                "corrected upstream output it passes: the upstream failure caused this one."
            )
        elif context == "independent_failure":
            sentences.append(
                f"`{stage.stage_id}` failed and so did {', '.join(failed_upstream)}; rerun on "
                "corrected upstream output it still fails: this stage has a fault of its own."
            )
        elif context == "upstream":
            sentences.append(
                f"`{stage.stage_id}` passed, but upstream {', '.join(failed_upstream)} failed."
            )
        elif context == "indeterminate" and stage.verdict != "pass":
            sentences.append(
                f"`{stage.stage_id}` is {stage.verdict}; an uncertain or not-applicable "
                "result here or upstream prevents attribution."
            )
    return sentences


def render_suite_markdown(report: SuiteReport) -> str:
    """Markdown for a suite report."""
    lines = [
        f"# Suite `{report.suite_id}`",
        "",
        f"**Cases:** {report.case_count} · **Stages evaluated:** {report.stage_count} · "
        f"**Human review rate:** {report.human_review_rate:.1%}",
        "",
        "## Verdicts",
        "",
    ]
    lines += table(
        ["", *report.verdict_counts.keys()],
        [
            ("cases", *report.case_verdict_counts.values()),
            ("stages", *report.verdict_counts.values()),
        ],
    )
    lines += ["", "## Stages", ""]
    lines += table(
        ["Stage", "Count", "Pass", "Fail", "Uncertain", "N/A", "Failure contexts", "Review"],
        (
            (
                stage_id,
                summary.count,
                f"{summary.pass_rate:.1%}",
                f"{summary.fail_rate:.1%}",
                f"{summary.uncertain_rate:.1%}",
                f"{summary.not_applicable_rate:.1%}",
                ", ".join(
                    f"{context}: {count}"
                    for context, count in summary.failure_contexts.items()
                    if count and context != "none"
                )
                or "none",
                f"{summary.human_review_rate:.1%}",
            )
            for stage_id, summary in report.stages.items()
        ),
    )
    lines += ["", "## Metrics", ""]
    lines += table(
        ["Metric", "Count", "Pass rate", "Review rate", "Errors", "Mean scores"],
        (
            (
                name,
                summary.count,
                f"{summary.pass_rate:.1%}",
                f"{summary.human_review_rate:.1%}",
                summary.error_count,
                ", ".join(f"{score}={value:.4g}" for score, value in summary.score_means.items())
                or "n/a",
            )
            for name, summary in report.metrics.items()
        ),
    )
    from docevals_mlflow.reports.diagnostics_markdown import suite_diagnostics_sections

    lines += suite_diagnostics_sections(report)
    lines += ["", "## Producers", ""]
    lines += table(["Producer", "Stages"], report.producers.items())
    if report.usage:
        lines += ["", "## Usage", ""]
        lines += table(["What", "Total"], report.usage.items())
    lines += ["", f"*docevals-mlflow {report.package_version}*"]
    return "\n".join(lines) + "\n"
