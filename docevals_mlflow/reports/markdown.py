"""Markdown renderings of case, pipeline and suite reports, and the table cells every
Markdown report shares.

Field values are printed exactly as given (:func:`value_cell`); metrics and rates go
through :mod:`docevals_mlflow.core.formatting` before they reach a cell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from docevals_mlflow.core.formatting import (
    count_text,
    metric_text,
    percent_text,
    value_text,
)
from docevals_mlflow.core.reports import (
    EvaluationReport,
    PipelineEvaluationReport,
    SuiteReport,
)
from docevals_mlflow.core.results import MetricResult

VERDICT_ICONS = {"pass": "✅", "fail": "❌", "uncertain": "⚠️", "not_applicable": "➖"}
MAX_FIELD_ROWS = 50
"""Field rows shown per metric; the JSON report always has all of them."""
MAX_CELL_CHARS = 500
"""Text longer than this is cut in a table cell, visibly (``… (+312 chars)``); the
JSON report has it whole. Numbers are never cut."""

_NEWLINE = re.compile(r"\r\n|\r|\n")
# Inline Markdown that would change how a value reads once rendered, and only that,
# so that ordinary values stay clean in the raw text: emphasis and code marks, an
# underscore at a word's edge (inside a word, as in INV_2024_001, it is plain text),
# "<" opening a tag, "](" or "][" closing a link, and entities ("&amp;" would render as
# "&"). A backslash before ASCII punctuation is a CommonMark escape: the rendered text
# is the value itself.
_INLINE_MARKUP = re.compile(
    r"[`*~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|<(?=[A-Za-z/!?])|\](?=[(\[])|&(?=#?[0-9A-Za-z]+;)"
)


class CellText(str):
    """Text already escaped for a table cell: :func:`cell` leaves it alone."""


def _capped(text: str) -> str:
    if len(text) <= MAX_CELL_CHARS:
        return text
    return f"{text[:MAX_CELL_CHARS]}… (+{len(text) - MAX_CELL_CHARS} chars)"


def _escaped(text: str, *, markup: bool = False) -> str:
    # Backslashes first, or the escapes added after them would be doubled.
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    if markup:
        text = _INLINE_MARKUP.sub(lambda match: "\\" + match.group(), text)
    # <br> keeps a multi-line value on its lines inside the one-line table row; it is
    # added last so that its "<" is not escaped.
    return _NEWLINE.sub("<br>", text)


def cell(value: Any) -> str:
    """Text safe inside a Markdown table cell: ``|``, backslashes and line breaks
    escaped, ``None`` as ``n/a``, text over :data:`MAX_CELL_CHARS` cut visibly.

    Anything that is not text is written exactly (see
    :func:`~docevals_mlflow.core.formatting.value_text`), so a metric must be
    formatted before it gets here.
    """
    if isinstance(value, CellText):
        return value
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return _escaped(_capped(value))
    return _escaped(value_text(value))


def value_cell(value: Any) -> CellText:
    """A field value (expected, predicted) as a table cell, exactly as given.

    Numbers keep every digit and are never cut; other values are cut only past
    :data:`MAX_CELL_CHARS`, saying how much was left out. Beyond :func:`cell`,
    the inline Markdown that would change the rendered text is escaped (emphasis,
    code, tags, links, entities), so that the rendered cell reads as the value does.
    """
    if value is None:
        return CellText("n/a")
    text = value_text(value)
    if not isinstance(value, bool | int | float):
        text = _capped(text)
    return CellText(_escaped(text, markup=True))


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A Markdown table as lines (cells through :func:`cell`)."""
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines.extend("| " + " | ".join(cell(value) for value in row) + " |" for row in rows)
    return lines


def figure_text(value: float | None) -> str:
    """A metric to four decimals, or ``n/a`` when it is undefined (the shared
    :func:`~docevals_mlflow.core.formatting.metric_text`, under the name the field and
    split layouts import)."""
    return metric_text(value)


def verdict_text(verdict: str) -> str:
    """A verdict with its icon."""
    return f"{VERDICT_ICONS.get(verdict, '')} {verdict}".strip()


def _short(digest: str | None) -> str:
    return f"`{digest[:12]}`" if digest else "n/a"


def _scores_text(result: MetricResult) -> str:
    return ", ".join(f"{name}={metric_text(value)}" for name, value in result.scores.items())


def _usage_text(name: str, value: float) -> str:
    # Tokens and requests are counts (summed as floats); a cost is money, shown to the
    # cent's hundredth as the CLI prints it, not as a metric.
    return f"{value:.4f}" if name == "cost_usd" else count_text(value)


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
                        value_cell(row.get("expected")),
                        value_cell(row.get("predicted")),
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
        f"**Human review rate:** {percent_text(report.human_review_rate)}",
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
                percent_text(summary.pass_rate),
                percent_text(summary.fail_rate),
                percent_text(summary.uncertain_rate),
                percent_text(summary.not_applicable_rate),
                ", ".join(
                    f"{context}: {count}"
                    for context, count in summary.failure_contexts.items()
                    if count and context != "none"
                )
                or "none",
                percent_text(summary.human_review_rate),
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
                percent_text(summary.pass_rate),
                percent_text(summary.human_review_rate),
                summary.error_count,
                ", ".join(
                    f"{score}={metric_text(value)}" for score, value in summary.score_means.items()
                )
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
        lines += table(
            ["What", "Total"],
            ((name, _usage_text(name, value)) for name, value in report.usage.items()),
        )
    lines += ["", f"*docevals-mlflow {report.package_version}*"]
    return "\n".join(lines) + "\n"
