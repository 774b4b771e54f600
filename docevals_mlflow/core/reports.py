"""Report models: one case, one pipeline, a suite. Plain data, JSON round-trippable."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from docevals_mlflow._version import __version__
from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.core.cases import EvaluationCase, Producer
from docevals_mlflow.core.diagnostics import (
    CascadeEdge,
    CounterfactualRerun,
    CounterfactualSummary,
    DisagreementBudget,
)
from docevals_mlflow.core.fingerprints import optional_sha256_json, sha256_file, sha256_json
from docevals_mlflow.core.literals import (
    ArtifactKind,
    Authority,
    ComparisonMode,
    ContentFormat,
    FailureContext,
    JudgeInstructionMode,
    SpecStatus,
    Verdict,
)
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.repeat_figures import JudgeRepeatFigures
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.core.specs import EvaluationSpec


class SpecFingerprints(DocEvalsModel):
    """Ids, versions and SHA-256 fingerprints of everything that defines a stage.

    Every hash is ``sha256(canonical_json(value))`` of the effective (resolved) value;
    ``None`` where the value is absent.
    """

    operation_spec_id: str | None = None
    operation_spec_version: str | None = None
    evaluation_spec_id: str | None = None
    evaluation_spec_version: str | None = None
    evaluation_spec_status: SpecStatus | None = None
    action_instruction_sha256: str | None = None
    evaluation_spec_sha256: str | None = None
    rubric_sha256: str
    judge_instruction_sha256: str | None = None
    operation_spec_sha256: str
    """Fingerprint of the effective operation spec: operation, spec id and version,
    action instruction and evaluation spec after resolution."""


def spec_fingerprints(case: EvaluationCase) -> SpecFingerprints:
    """Fingerprint a (resolved) case's instructions and specs."""
    spec = case.evaluation_spec
    return SpecFingerprints(
        operation_spec_id=case.operation_spec_id,
        operation_spec_version=case.operation_spec_version,
        evaluation_spec_id=spec.spec_id if spec else None,
        evaluation_spec_version=spec.version if spec else None,
        evaluation_spec_status=spec.status if spec else None,
        action_instruction_sha256=optional_sha256_json(case.action_instruction),
        evaluation_spec_sha256=optional_sha256_json(spec),
        rubric_sha256=sha256_json(case.rubric),
        judge_instruction_sha256=optional_sha256_json(case.judge_instruction),
        operation_spec_sha256=sha256_json(
            {
                "operation": case.operation,
                "operation_spec_id": case.operation_spec_id,
                "operation_spec_version": case.operation_spec_version,
                "action_instruction": case.action_instruction,
                "evaluation_spec": spec,
            }
        ),
    )


class ReferenceSummary(DocEvalsModel):
    """What a report records about one reference (not its content)."""

    id: str
    kind: ArtifactKind
    authority: Authority
    comparison_mode: ComparisonMode
    content_format: ContentFormat | None = None
    media_type: str | None = None
    path: str
    exact_comparable: bool
    sha256: str | None
    """Digest of the file's bytes, or of the inline content's canonical JSON; ``None``
    when the file could not be read."""


def reference_digest(reference: ReferenceArtifact) -> str | None:
    """SHA-256 of what a reference holds: file bytes, else canonical JSON of content."""
    if not reference.is_inline:
        try:
            return sha256_file(reference.path)
        except OSError:
            if reference.content is None:
                return None
    return sha256_json(reference.content)


def summarize_reference(reference: ReferenceArtifact) -> ReferenceSummary:
    """The report entry for one reference."""
    return ReferenceSummary(
        id=reference.id,
        kind=reference.kind,
        authority=reference.authority,
        comparison_mode=reference.comparison_mode,
        content_format=reference.content_format,
        media_type=reference.media_type,
        path=reference.path,
        exact_comparable=reference.exact_comparable,
        sha256=reference_digest(reference),
    )


def _absent(value: object) -> bool:
    """Leave an optional section out of the JSON, so reports without it stay as they were."""
    return value is None


class EvaluationReport(DocEvalsModel):
    """Everything decided about one stage of one case, and what it was decided on."""

    kind: Literal["case"] = "case"
    package_version: str = __version__
    case_id: str
    stage_id: str
    operation: str
    prediction_name: str = "prediction"
    producer: Producer | None = None
    depends_on: list[str] = Field(default_factory=list)
    action_instruction: str | None = None
    evaluation_spec: EvaluationSpec | None = None
    rubric: str
    judge_instruction: str | None = None
    judge_instruction_mode: JudgeInstructionMode = "append"
    allow_unsafe_judge_override: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    """The case's metadata."""
    fingerprints: SpecFingerprints
    verdict: Verdict
    upstream_verdicts: dict[str, Verdict] = Field(default_factory=dict)
    failure_context: FailureContext
    requires_human_review: bool = False
    warnings: list[str] = Field(default_factory=list)
    reference_summary: list[ReferenceSummary] = Field(default_factory=list)
    metric_results: list[MetricResult] = Field(default_factory=list)
    from_checkpoint: bool = False
    counterfactual: CounterfactualRerun | None = None
    """The oracle-swap rerun that refined an ``upstream_or_combined`` failure, when
    counterfactual attribution was asked for."""
    judge_repeats: JudgeRepeatFigures | None = Field(default=None, exclude_if=_absent)
    """Flip rate and pass^N of the judges asked N times (``--repeats N``); left out of
    the JSON when the judges were asked once."""

    @property
    def operation_spec_id(self) -> str | None:
        """Id of the operation spec that governed this stage (``fingerprints``)."""
        return self.fingerprints.operation_spec_id

    @property
    def operation_spec_version(self) -> str | None:
        """Version of that operation spec."""
        return self.fingerprints.operation_spec_version

    @property
    def action_instruction_hash(self) -> str | None:
        """SHA-256 of the action instruction (``fingerprints.action_instruction_sha256``:
        of its canonical JSON, not of its raw text as the seed library hashed it)."""
        return self.fingerprints.action_instruction_sha256

    @property
    def evaluation_spec_hash(self) -> str | None:
        """SHA-256 of the evaluation spec (``fingerprints.evaluation_spec_sha256``)."""
        return self.fingerprints.evaluation_spec_sha256

    def metric(self, name: str) -> MetricResult:
        """The result of the metric called ``name``."""
        for result in self.metric_results:
            if result.name == name:
                return result
        raise KeyError(name)


class CheckpointSummary(DocEvalsModel):
    """What a checkpointed pipeline run reused and what it recomputed."""

    directory: str
    reused: list[str] = Field(default_factory=list)
    computed: list[str] = Field(default_factory=list)
    invalidated: dict[str, str] = Field(default_factory=dict)
    """Stage id → why its checkpoint was not reused (stale, corrupt)."""


class PipelineEvaluationReport(DocEvalsModel):
    """Stage reports of one pipeline, in execution order.

    ``verdict`` combines the stage verdicts (fail > uncertain > pass >
    not_applicable); the per-stage ``failure_context`` says where a failure belongs.
    """

    kind: Literal["pipeline"] = "pipeline"
    package_version: str = __version__
    pipeline_id: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    execution_order: list[str]
    waves: list[list[str]]
    stage_reports: list[EvaluationReport]
    verdict: Verdict
    requires_human_review: bool
    checkpoint: CheckpointSummary | None = None
    judge_repeats: JudgeRepeatFigures | None = Field(default=None, exclude_if=_absent)
    """Flip rate and pass^N over the stages of the judges asked N times (``--repeats``);
    left out of the JSON when the judges were asked once."""

    def stage(self, stage_id: str) -> EvaluationReport:
        """The report of stage ``stage_id``."""
        for report in self.stage_reports:
            if report.stage_id == stage_id:
                return report
        raise KeyError(stage_id)


class RateInterval(DocEvalsModel):
    """A rate's interval from its cases (a pipeline or a single-case report is one
    case): Wilson, at the effective number of observations when a case holds several
    (docs/statistics.md, "Intervals on pass rates and judge agreement")."""

    low: float | None
    high: float | None
    cases: int
    observations: int
    confidence: float
    method: str | None = None
    reason: str | None = None
    """Why ``low`` and ``high`` are ``None`` (fewer than 2 cases)."""


class StageSummary(DocEvalsModel):
    """Verdict and attribution figures of one stage id across a suite."""

    count: int
    verdict_counts: dict[Verdict, int]
    pass_rate: float
    fail_rate: float
    uncertain_rate: float
    not_applicable_rate: float
    failure_contexts: dict[FailureContext, int]
    human_review_rate: float
    counterfactual: CounterfactualSummary | None = None
    """Rerun outcomes, when any of this stage's reports carries one."""
    ci: dict[str, RateInterval] = Field(default_factory=dict)
    """Intervals of ``pass_rate`` and ``fail_rate`` (empty in reports from before
    intervals)."""


class MetricSummary(DocEvalsModel):
    """One metric's figures across a suite."""

    count: int
    verdict_counts: dict[Verdict, int]
    pass_rate: float
    human_review_rate: float
    error_count: int
    score_means: dict[str, float] = Field(default_factory=dict)
    """Mean of each score over the cases where it had a value."""
    ci: dict[str, RateInterval] = Field(default_factory=dict)
    """The interval of ``pass_rate`` (its cases are those the metric ran on)."""


class SuiteReport(DocEvalsModel):
    """Aggregate of many case and pipeline reports."""

    kind: Literal["suite"] = "suite"
    package_version: str = __version__
    suite_id: str
    case_count: int
    """Single-case reports plus pipelines."""
    stage_count: int
    verdict_counts: dict[Verdict, int]
    """Over every stage of every case."""
    case_verdict_counts: dict[Verdict, int]
    """Over cases (a pipeline counts once, with its combined verdict)."""
    failure_contexts: dict[FailureContext, int]
    human_review_rate: float
    stages: dict[str, StageSummary]
    metrics: dict[str, MetricSummary]
    producers: dict[str, int]
    usage: dict[str, float] = Field(default_factory=dict)
    cascades: list[CascadeEdge] | None = None
    """Failure propagation per dependency edge, when the suite holds pipelines."""
    disagreement: DisagreementBudget | None = None
    """Panel disagreement as a review signal, when panels ran next to ground-truth
    metrics."""
    ci: dict[str, RateInterval] = Field(default_factory=dict)
    """Intervals of ``case_pass_rate``, ``case_fail_rate`` (one verdict per case),
    ``stage_pass_rate`` and ``human_review_rate`` (over every stage, the cases as
    clusters)."""
