"""The traces of a ground-truth generation run: one per generated document (case).

Each case's final report (the one its review file is written from) becomes a trace:

* inputs ``{"case_id", "sources"}`` (the sources' names), the same for a case in
  every run;
* outputs: the consensus, field path → the value the panel agreed on;
* a ``Feedback`` per field path, named by the path: the panel's agreement (the share
  of voters behind the value), with ``status`` (``agreed`` or ``disputed``),
  ``providers`` and, for a disputed field, ``reason`` and ``candidates`` in its
  metadata; and ``panel_agreement``, the report's overall agreement;
* tags ``docevals.case.id``, ``docevals.generation.stage`` and
  :data:`GENERATION_TAG` (the report's digest, which its review file carries as
  ``generation_sha256``): how ``docevals review log`` finds the trace of a review file
  (:mod:`~docevals_mlflow.tracking.review_expectations`).

Which cases get one is the run's traces policy; when a limit leaves some out, the
cases that need human review come first. This module does not import mlflow.
"""

from __future__ import annotations

from collections.abc import Sequence

from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.tracking.trace_policy import TracePolicy
from docevals_mlflow.tracking.trace_records import FeedbackRecord, TraceRecord
from docevals_mlflow.tracking.trace_spans import dumps

GENERATION_TAG = "docevals.generation.sha256"
"""The trace tag holding the digest of the generation report the trace shows."""
CASE_TAG = "docevals.case.id"
PANEL_AGREEMENT = "panel_agreement"
"""The name of a trace's overall agreement feedback."""
_MAX_TEXT = 1000
_MAX_NAME = 250


def generation_traces(
    reports: Sequence[GenerationReport], policy: TracePolicy
) -> list[TraceRecord]:
    """The traces of ``reports`` (each case's final report, in case order) that
    ``policy`` selects; reports that need human review rank first under a limit."""
    return [
        case_trace(report)
        for report in policy.select(list(reports), lambda report: report.requires_human_review)
    ]


def case_trace(report: GenerationReport) -> TraceRecord:
    """One generated document's trace (see the module docstring)."""
    feedback = [
        FeedbackRecord(
            name=_name(row.path),
            value=float(row.agreement),
            metadata={
                "status": "agreed",
                "providers": ", ".join(row.providers),
                "resolved_by": row.resolved_by,
                "value": _text(row.expected_value),
            },
        )
        for row in report.consensus
    ]
    for item in report.disagreements:
        metadata = {
            "status": "disputed",
            "reason": item.reason,
            "candidates": _text(
                [{"value": c.value, "providers": c.providers} for c in item.candidates]
            ),
        }
        if item.omitted_by:
            metadata["omitted_by"] = ", ".join(item.omitted_by)
        feedback.append(
            FeedbackRecord(
                name=_name(item.path),
                value=float(item.agreement),
                rationale=item.reason,
                metadata=metadata,
            )
        )
    feedback.append(
        FeedbackRecord(
            name=PANEL_AGREEMENT,
            value=float(report.overall_agreement),
            metadata={
                "stage": report.stage,
                "requires_human_review": str(report.requires_human_review).lower(),
            },
        )
    )
    return TraceRecord(
        name=f"case {report.case_id}"[:_MAX_NAME],
        inputs={
            "case_id": report.case_id,
            "sources": [source.name for source in report.sources],
        },
        outputs={row.path: row.expected_value for row in report.consensus},
        feedback=feedback,
        tags={
            CASE_TAG: report.case_id[:_MAX_NAME],
            "docevals.generation.stage": report.stage,
            GENERATION_TAG: report.digest,
        },
    )


def _name(path: str) -> str:
    return path if len(path) <= _MAX_NAME else path[: _MAX_NAME - 1] + "…"


def _text(value: object) -> str:
    text = value if isinstance(value, str) else dumps(value)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


__all__ = ["CASE_TAG", "GENERATION_TAG", "PANEL_AGREEMENT", "case_trace", "generation_traces"]
