"""Trace records as MLflow entities (``TraceInfo`` with its assessments, and its
``Span`` list), for stores other than SQL (a tracking server): written with MLflow's
own ``start_trace`` and ``log_spans`` by :mod:`~docevals_mlflow.tracking.trace_rest`.
"""

from __future__ import annotations

from typing import Any

from docevals_mlflow.tracking.trace_records import TraceRecord
from docevals_mlflow.tracking.trace_spans import (
    TraceIds,
    duration_ms,
    previews,
    span_dicts,
    trace_metadata,
    trace_tags,
)

SOURCE_ID = "docevals"
"""The source of every feedback (``CODE``)."""
GROUND_TRUTH = "ground truth"
"""The source of every expectation (``HUMAN``)."""


def trace_entities(
    record: TraceRecord, run_id: str, experiment_id: str, now: int
) -> tuple[Any, list[Any]]:
    """``(TraceInfo, [Span])`` for one record, linked to the run ``run_id``."""
    from mlflow.entities import (
        AssessmentSource,
        Expectation,
        Feedback,
        TraceInfo,
        TraceLocation,
        TraceState,
    )
    from mlflow.entities.span import Span

    ids = TraceIds.new(len(record.spans) + 1)
    spans = [Span.from_dict(entry) for entry in span_dicts(record, ids, now)]
    root_span_id = spans[0].span_id
    code = AssessmentSource(source_type="CODE", source_id=SOURCE_ID)
    human = AssessmentSource(source_type="HUMAN", source_id=GROUND_TRUTH)
    assessments: list[Any] = [
        Expectation(name=name, value=value, source=human, span_id=root_span_id)
        for name, value in record.expectations.items()
        if value is not None
    ]
    assessments += [
        Feedback(
            name=item.name,
            value=item.value,
            error=item.error,
            source=code,
            rationale=item.rationale,
            metadata={**item.metadata, "mlflow.assessment.sourceRunId": run_id},
            span_id=root_span_id,
        )
        for item in record.feedback
    ]
    request, response = previews(record)
    info = TraceInfo(
        trace_id=ids.trace_id,
        trace_location=TraceLocation.from_experiment_id(experiment_id),
        request_time=now,
        state=TraceState.ERROR if record.failed else TraceState.OK,
        request_preview=request,
        response_preview=response,
        execution_duration=duration_ms(record),
        trace_metadata=trace_metadata(record, run_id),
        tags=trace_tags(record),
        assessments=assessments,
    )
    return info, spans


__all__ = ["GROUND_TRUTH", "SOURCE_ID", "trace_entities"]
