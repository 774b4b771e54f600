"""What a run's MLflow traces hold, before MLflow: :class:`TraceRecord`.

The assembly of a run (:mod:`~docevals_mlflow.tracking.assembly`) turns a report into
trace records (one per document of a field comparison, one per pipeline case); once
the run exists, :mod:`~docevals_mlflow.tracking.trace_store` writes them, linked to
it. Records are plain JSON, so a run bundle kept for ``docevals log`` carries them
(``traces.jsonl`` beside ``run.json``) and its traces are logged with it later.

This module does not import mlflow.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.secrets import redact_data, registered_secrets
from docevals_mlflow.errors import InputError

TRACES_FILE = "traces.jsonl"
"""Where a kept bundle holds its trace records (one JSON object a line)."""


@dataclass(frozen=True)
class FeedbackRecord:
    """One ``Feedback`` assessment: a named value with why and how it was reached."""

    name: str
    value: Any
    rationale: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class SpanRecord:
    """A span under the trace's root span (``parent``: index of an earlier span in
    the trace's list, ``None`` for the root). ``usage``: token counts
    (``input_tokens``, ``output_tokens``, ``total_tokens``, and
    ``cache_read_input_tokens`` when the provider read some from its prompt cache),
    as MLflow's ``mlflow.chat.tokenUsage``; ``cost_usd``: what the call cost, when
    known."""

    name: str
    span_type: str = "CHAIN"
    inputs: Any = None
    outputs: Any = None
    attributes: dict[str, Any] = field(default_factory=dict)
    parent: int | None = None
    error: str | None = None
    model: str | None = None
    provider: str | None = None
    usage: dict[str, int] | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    """How long the span lasted (a provider call's latency); ``None``: not measured."""


@dataclass(frozen=True)
class TraceRecord:
    """One trace: the root span's inputs and outputs, its assessments and its spans.

    ``expectations`` become ``Expectation`` assessments (the ground truth),
    ``feedback`` ``Feedback`` assessments; ``failed`` marks the trace's state
    ``ERROR`` (a case that failed, a document that could not be scored).
    """

    name: str
    inputs: dict[str, Any]
    outputs: Any = None
    expectations: dict[str, Any] = field(default_factory=dict)
    feedback: list[FeedbackRecord] = field(default_factory=list)
    spans: list[SpanRecord] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    failed: bool = False

    def to_json(self) -> str:
        """One line of :data:`TRACES_FILE`."""
        return json.dumps(asdict(self), ensure_ascii=False, default=str)

    @classmethod
    def from_json(cls, text: str) -> TraceRecord:
        """A record read back from one line of :data:`TRACES_FILE`."""
        return cls.from_json_data(json.loads(text))

    @classmethod
    def from_json_data(cls, data: dict[str, Any]) -> TraceRecord:
        """A record from its JSON data (``dataclasses.asdict`` of one)."""
        data = dict(data)
        data["feedback"] = [FeedbackRecord(**item) for item in data.get("feedback", [])]
        data["spans"] = [SpanRecord(**item) for item in data.get("spans", [])]
        return cls(**data)


def redacted(traces: list[TraceRecord]) -> list[TraceRecord]:
    """``traces`` with every secret this process uses replaced by ``[REDACTED]`` in
    every text (:func:`~docevals_mlflow.core.secrets.redact_data`); the records
    themselves when there is nothing to replace."""
    if not traces or not registered_secrets():
        return traces
    result = []
    for record in traces:
        data = asdict(record)
        clean = redact_data(data)
        result.append(record if clean is data else TraceRecord.from_json_data(clean))
    return result


def write_traces(folder: str | os.PathLike[str], traces: list[TraceRecord]) -> None:
    """Keep ``traces`` in a bundle folder (nothing when there are none), redacted."""
    if traces:
        lines = "".join(record.to_json() + "\n" for record in redacted(traces))
        atomic_write_text(Path(folder) / TRACES_FILE, lines)


def read_traces(folder: str | os.PathLike[str]) -> list[TraceRecord]:
    """The trace records a bundle folder keeps (none when it keeps no file).

    Raises:
        InputError: the file is not trace records.
    """
    path = Path(folder) / TRACES_FILE
    if not path.is_file():
        return []
    records = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                records.append(TraceRecord.from_json(line))
            except (ValueError, TypeError, KeyError) as exc:
                raise InputError(
                    f"line {number} is not a trace record ({type(exc).__name__})",
                    source=str(path),
                    expected="the traces.jsonl docevals wrote",
                ) from None
    return records


__all__ = [
    "TRACES_FILE",
    "FeedbackRecord",
    "SpanRecord",
    "TraceRecord",
    "read_traces",
    "redacted",
    "write_traces",
]
