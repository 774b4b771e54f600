"""The seed's ``visual_evals.report``: Markdown and JSON for any report.

:func:`to_markdown` renders case, pipeline and suite reports with the package's own
renderers (which show the action instruction, the judge instruction, the evaluation
spec, ``Stage: <id>`` headings and the human review queue), the seed's suite report
here, and any other report (ground-truth generation, resolution, preparation) through
its own ``to_markdown()`` method.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from docevals_mlflow.compat.visual_evals.suite import EvaluationSuiteReport
from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.reports.files import render_markdown
from docevals_mlflow.reports.markdown import table

__all__ = ["to_markdown", "write_json_report", "write_markdown_report"]


def _suite_markdown(report: EvaluationSuiteReport) -> str:
    lines = [f"# Evaluation suite: {report.suite_id}", "", f"Cases: `{len(report.cases)}`", ""]
    lines += table(
        ["Evaluator", "Cases", "pass", "fail", "uncertain", "not_applicable", "Review rate"],
        (
            (
                name,
                rollup.evaluated_cases,
                *rollup.verdict_counts.values(),
                metric_text(rollup.human_review_rate),
            )
            for name, rollup in report.evaluator_rollups.items()
        ),
    )
    lines += ["", "## Producers", "", *table(["Producer", "Cases"], report.producer_counts.items())]
    total = getattr(report.usage_summary, "total_tokens", None)
    if total is not None:
        lines += ["", f"Total tokens: `{total}`"]
    lines += ["", *(f"- {note}" for note in report.notes)]
    return "\n".join(lines) + "\n"


def to_markdown(report: Any) -> str:
    """Markdown for any report of this API, without any registered secret.

    Raises:
        TypeError: ``report`` is none of the report types and has no ``to_markdown()``.
    """
    if isinstance(report, EvaluationReport | PipelineEvaluationReport | SuiteReport):
        return render_markdown(report)
    if isinstance(report, EvaluationSuiteReport):
        return redact_text(_suite_markdown(report))
    method = getattr(report, "to_markdown", None)
    if callable(method):
        return redact_text(str(method()))
    raise TypeError(f"to_markdown: cannot render a {type(report).__name__}")


def write_json_report(report: Any, path: str | os.PathLike[str]) -> Path:
    """Write the report as indented JSON (atomically); the path written."""
    atomic_write_text(path, redact_text(report.model_dump_json(indent=2) + "\n"))
    return Path(path)


def write_markdown_report(report: Any, path: str | os.PathLike[str]) -> Path:
    """Write :func:`to_markdown` of the report (atomically); the path written."""
    atomic_write_text(path, to_markdown(report))
    return Path(path)
