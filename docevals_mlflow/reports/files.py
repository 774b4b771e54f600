"""Writing reports to disk (atomically) and reading them back."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.datafiles import check_file, load_json_file
from docevals_mlflow.core.model import input_error_from_validation
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.errors import DocEvalsError
from docevals_mlflow.reports.case_markdown import render_case_markdown, render_pipeline_markdown
from docevals_mlflow.reports.suite_markdown import render_suite_markdown

AnyReport = EvaluationReport | PipelineEvaluationReport | SuiteReport
_ADAPTER: TypeAdapter[AnyReport] = TypeAdapter(Annotated[AnyReport, Field(discriminator="kind")])


def report_json(report: AnyReport) -> str:
    """The report as indented JSON text, without any registered secret."""
    # Reports are redacted when they are built; this is the last guard before a
    # file or an MLflow artifact, for reports assembled or edited by hand.
    return redact_text(report.model_dump_json(indent=2) + "\n")


def render_markdown(report: AnyReport) -> str:
    """The Markdown rendering that matches the report's kind, without any registered
    secret."""
    if isinstance(report, PipelineEvaluationReport):
        text = render_pipeline_markdown(report)
    elif isinstance(report, SuiteReport):
        text = render_suite_markdown(report)
    else:
        text = render_case_markdown(report)
    return redact_text(text)


def write_report(
    report: AnyReport,
    json_path: str | os.PathLike[str],
    markdown_path: str | os.PathLike[str] | None = None,
) -> None:
    """Write the JSON report (and optionally Markdown), each atomically.

    Both texts are rendered before anything is written, so a rendering problem
    leaves the previous files untouched.
    """
    json_text = report_json(report)
    markdown_text = render_markdown(report) if markdown_path is not None else None
    atomic_write_text(json_path, json_text)
    if markdown_path is not None and markdown_text is not None:
        atomic_write_text(markdown_path, markdown_text)


def load_report(path: str | os.PathLike[str]) -> AnyReport:
    """Read a case, pipeline or suite report written by :func:`write_report`."""
    file_path = Path(path)
    # A folder, a named pipe or a device is named as what it is, not as missing.
    check_file(file_path, what="report")
    data = load_json_file(file_path)
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise input_error_from_validation(exc, title="report", source=str(file_path)) from None
    except DocEvalsError as exc:  # raised by a model's own validation
        raise exc.located(source=str(file_path)) from None
