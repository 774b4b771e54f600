"""Markdown renderings of case and pipeline reports: verdicts, facts, metric tables,
the wrong field rows, references, fingerprints and where a pipeline went wrong."""

from __future__ import annotations

from typing import Any

from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.core.repeat_figures import judge_repeat_section
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.reports.diagnostics_markdown import counterfactual_section
from docevals_mlflow.reports.markdown import cell, inline_code, table, value_cell, verdict_text

MAX_FIELD_ROWS = 50
"""Field rows shown per metric; the JSON report always has all of them."""


def _short(digest: str | None) -> str:
    return f"`{digest[:12]}`" if digest else "n/a"


def _scores_text(result: MetricResult) -> str:
    return ", ".join(f"{name}={metric_text(value)}" for name, value in result.scores.items())


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


def _facts(report: EvaluationReport) -> list[str]:
    """The verdict line and the list of what was evaluated with what.

    Facts are ``Label: value`` lines (the seed library's wording), so a reader can
    search for ``Operation: `extract``` or ``Prediction producer: `unknown```.
    """
    fp = report.fingerprints
    lines = [
        f"**Verdict:** {verdict_text(report.verdict)} · "
        f"**Failure context:** `{report.failure_context}` · "
        f"**Human review:** {'required' if report.requires_human_review else 'not required'}"
        + (" · *(from checkpoint)*" if report.from_checkpoint else ""),
        "",
    ]
    facts: list[tuple[str, str]] = [("Operation", inline_code(report.operation))]
    if fp.operation_spec_id:
        facts.append(
            ("Operation spec", inline_code(f"{fp.operation_spec_id}@{fp.operation_spec_version}"))
        )
    if fp.evaluation_spec_id:
        facts.append(
            (
                "Evaluation spec",
                inline_code(f"{fp.evaluation_spec_id}@{fp.evaluation_spec_version}")
                + f" ({fp.evaluation_spec_status})",
            )
        )
    producer = report.producer.label if report.producer else "unknown"
    facts.append(("Prediction producer", inline_code(producer)))
    if report.depends_on:
        facts.append(("Depends on", ", ".join(inline_code(name) for name in report.depends_on)))
    if report.upstream_verdicts:
        facts.append(
            (
                "Upstream verdicts",
                ", ".join(
                    f"{inline_code(name)}: {verdict}"
                    for name, verdict in report.upstream_verdicts.items()
                ),
            )
        )
    return lines + [f"- {label}: {value}" for label, value in facts]


def _quoted(text: str) -> list[str]:
    return [f"> {line}".rstrip() for line in text.splitlines() or [""]]


def _instructions(report: EvaluationReport, h: str) -> list[str]:
    """The action instruction, the stage's judge instruction and the evaluation spec,
    as text: what the stage was asked to do and what it was judged against."""
    lines: list[str] = []
    if report.action_instruction:
        lines += ["", f"{h}# Action instruction", "", *_quoted(report.action_instruction)]
    if report.judge_instruction:
        if report.judge_instruction_mode == "replace":
            title = "Replacement judge prompt (replaces the protected base prompt)"
        else:
            title = "Stage-specific judge instruction"
        lines += ["", f"{h}# {title}", "", *_quoted(report.judge_instruction)]
    spec = report.evaluation_spec
    if spec is not None:
        lines += [
            "",
            f"{h}# Independent evaluation specification",
            "",
            f"{inline_code(f'{spec.spec_id}@{spec.version}')} ({spec.status}): {spec.objective}",
            "",
            *(f"- {criterion}" for criterion in spec.criteria),
        ]
        if spec.allowed_outputs:
            lines += ["", "Allowed outputs: " + ", ".join(map(inline_code, spec.allowed_outputs))]
    return lines


def _metric_table(report: EvaluationReport) -> list[str]:
    return table(
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


def _metric_details(result: MetricResult, h: str) -> list[str]:
    """A metric's notes and wrong field rows (capped); empty when it has neither."""
    notes = list(result.notes)
    if result.error is not None and not notes:
        notes.append(f"error {result.error.type}: {result.error.message}")
    rows = _field_rows(result)
    if not notes and not rows:
        return []
    lines = ["", f"{h}## {result.name}", ""]
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
                    value_cell(row.get("expected")),
                    value_cell(row.get("predicted")),
                    row.get("reference_id"),
                )
                for row in rows[:MAX_FIELD_ROWS]
            ),
        )
        if len(rows) > MAX_FIELD_ROWS:
            lines.append(f"\n*... and {len(rows) - MAX_FIELD_ROWS} more (see the JSON report)*")
    return lines


def _references(report: EvaluationReport) -> list[str]:
    return table(
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


def _fingerprints(report: EvaluationReport) -> list[str]:
    fp = report.fingerprints
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
    return table(["What", "SHA-256"], digests)


def _case_sections(report: EvaluationReport, level: int) -> list[str]:
    h = "#" * level
    lines = _facts(report) + _instructions(report, h)
    if report.warnings:
        lines += ["", f"{h}# Warnings", ""]
        lines += [f"- {warning}" for warning in report.warnings]
    lines += ["", f"{h}# Metrics", "", *_metric_table(report)]
    for result in report.metric_results:
        lines += _metric_details(result, h)
    queue = review_queue(report)
    if queue:
        lines += ["", f"{h}# Human review queue", "", *table(["Metric", "Reason", "Detail"], queue)]
    if report.reference_summary:
        lines += ["", f"{h}# References", "", *_references(report)]
    lines += ["", f"{h}# Fingerprints", "", *_fingerprints(report)]
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
        *judge_repeat_section(report.judge_repeats),
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
    lines += judge_repeat_section(report.judge_repeats)
    attributions = _attribution_sentences(report)
    if attributions:
        lines += ["", "## Where it went wrong", ""]
        lines += [f"- {sentence}" for sentence in attributions]
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
        lines += ["", f"## Stage: {cell(stage.stage_id)}", "", *_case_sections(stage, 2)]
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


def _review_rows(name: str, details: Any) -> list[tuple[str, str, str]]:
    if isinstance(details, dict) and isinstance(details.get("review_items"), list):
        return [
            (name, str(item.get("reason", "")), str(item.get("detail", "")))
            for item in details["review_items"]
            if isinstance(item, dict)
        ]
    if isinstance(details, list):  # the seed library's shape: typed entries
        return [
            (
                name,
                str(item.get("reason", "")),
                " ".join(
                    str(part)
                    for part in (item.get("scope"), item.get("path"), item.get("model_group_votes"))
                    if part
                ),
            )
            for item in details
            if isinstance(item, dict) and item.get("type") == "human_review_item"
        ]
    return []


def review_queue(report: EvaluationReport) -> list[tuple[str, str, str]]:
    """Why a person should look at this stage: one row per review item of each metric
    that needs review (its notes when it lists no items)."""
    rows: list[tuple[str, str, str]] = []
    for result in report.metric_results:
        if not result.requires_human_review:
            continue
        found = _review_rows(result.name, result.details)
        rows += found or [(result.name, "review", note) for note in result.notes[:5]]
    return rows
